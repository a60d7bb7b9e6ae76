//! list_items: what is configured — agents, scheduled jobs, MCP servers or plugins.
//! Introspection, so it stays in every list; only the mutating config tools are lazy.

use super::{ToolCx, store_err};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use skald_api::tool_args;
use skald_api::{Tool, ToolCategory, ToolError, ToolResult, tool_names as tn};

pub struct ListItems;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Args {
    #[serde(rename = "type")]
    kind: ItemKind,
}

// In the order the schema offers them.
#[derive(Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum ItemKind {
    Mcp,
    Plugins,
    Cron,
    Agents,
}

impl ItemKind {
    fn as_str(self) -> &'static str {
        match self {
            ItemKind::Mcp => "mcp",
            ItemKind::Plugins => "plugins",
            ItemKind::Cron => "cron",
            ItemKind::Agents => "agents",
        }
    }
}

impl ListItems {
    pub const NAME: &'static str = tn::LIST_ITEMS;
}

impl<'a> Tool<ToolCx<'a>> for ListItems {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn description(&self) -> &str {
        "List what is configured: `agents` (id, name, description, instructions), `cron` \
         (scheduled jobs), `mcp` (MCP servers) or `plugins`."
    }

    fn parameters_schema(&self) -> Value {
        tool_args::schema_for::<Args>()
    }

    fn category(&self) -> ToolCategory {
        ToolCategory::Introspection
    }

    /// It changes nothing in the chat's folder or Skald's settings.
    fn in_plan_mode(&self) -> bool {
        true
    }

    fn execute(&self, cx: &ToolCx<'a>, args: Value) -> ToolResult {
        let call = cx.call()?;
        let kind = tool_args::parse::<Args>(args)?.kind;
        let items: Vec<Value> = match kind {
            ItemKind::Agents => {
                let library = call
                    .library
                    .ok_or_else(|| ToolError::failed("no agents are loaded in this run"))?;
                library.agents().map(agent_item).collect()
            }
            ItemKind::Cron => call
                .store
                .list_jobs()
                .map_err(store_err)?
                .into_iter()
                .map(|j| {
                    json!({
                        "id": j.id,
                        "name": j.name,
                        "description": j.description,
                        "agent_id": j.agent_id,
                        "cron": j.cron,
                        "timezone": j.timezone,
                        "enabled": j.enabled,
                        "next_run": j.next_run_at.map(crate::tasks::cron::format_time),
                    })
                })
                .collect(),
            ItemKind::Plugins => match call.engine {
                Some(engine) => engine
                    .plugins
                    .describe(call.store)
                    .into_iter()
                    .filter_map(|p| serde_json::to_value(p).ok())
                    .collect(),
                None => Vec::new(),
            },
            ItemKind::Mcp => call
                .store
                .list_mcp_servers()
                .map_err(store_err)?
                .into_iter()
                .map(|r| {
                    let status = call
                        .engine
                        .and_then(|e| e.mcp.manager.status(&r.name))
                        .map_or_else(|| "not started".to_string(), |s| s.describe());
                    json!({
                        "name": r.name,
                        "transport": r.transport,
                        "description": r.description,
                        "enabled": r.enabled,
                        "status": status,
                    })
                })
                .collect(),
        };
        Ok(json!({ "type": kind.as_str(), "items": items }).to_string())
    }
}

fn agent_item(a: &crate::agents::Agent) -> Value {
    let mut v = json!({
        "id": a.id,
        "name": a.meta.name,
        "description": a.meta.description,
        "type": a.meta.kind,
    });
    if let Some(i) = &a.meta.instructions {
        v["instructions"] = Value::String(i.clone());
    }
    if let Some(m) = &a.meta.model {
        v["client"] = Value::String(m.clone());
    }
    v
}
