//! toggle_item: turn an MCP server, a plugin or a scheduled job on or off. A server is
//! connected or disconnected at once in a run with an engine.

use super::ToolCx;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Number, Value};
use skald_api::tool_args;
use skald_api::{Tool, ToolCategory, ToolError, ToolResult, tool_names as tn};

pub struct ToggleItem;

// The arguments' doc comments are the descriptions the model reads.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Args {
    kind: ItemKind,
    /// The server's or plugin's name, or the job's id.
    id: Id,
    enabled: bool,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum ItemKind {
    Mcp,
    Plugin,
    Cron,
}

/// A name or a job's number. Its schema is `{"type": ["string", "integer"]}`, as the
/// definition offered always said (an untagged enum would derive an `anyOf`).
#[derive(Deserialize)]
#[serde(untagged)]
enum Id {
    Text(String),
    Number(Number),
}

impl JsonSchema for Id {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Id".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": ["string", "integer"]})
    }
}

impl ToggleItem {
    pub const NAME: &'static str = tn::TOGGLE_ITEM;
}

impl<'a> Tool<ToolCx<'a>> for ToggleItem {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn description(&self) -> &str {
        "Turn an MCP server, a plugin or a scheduled job on or off."
    }

    fn parameters_schema(&self) -> Value {
        tool_args::schema_for::<Args>()
    }

    fn category(&self) -> ToolCategory {
        ToolCategory::Config
    }

    fn execute(&self, cx: &ToolCx<'a>, args: Value) -> ToolResult {
        let call = cx.call()?;
        let args: Args = tool_args::parse(args)?;
        let enabled = args.enabled;
        let id = match args.id {
            Id::Text(s) => s,
            Id::Number(n) => n.to_string(),
        };
        match args.kind {
            ItemKind::Cron => {
                let job_id: i64 = id
                    .trim()
                    .parse()
                    .map_err(|_| ToolError::failed(format!("a job id is a number, not `{id}`")))?;
                let job = crate::tasks::cron::set_enabled(call.store, job_id, enabled)
                    .map_err(|e| ToolError::failed(e.to_string()))?;
                Ok(if enabled {
                    format!(
                        "Scheduled job {job_id} ({}) is on; next run {}.",
                        job.name,
                        job.next_run_at
                            .map_or_else(|| "never".to_string(), crate::tasks::cron::format_time)
                    )
                } else {
                    format!("Scheduled job {job_id} ({}) is off.", job.name)
                })
            }
            ItemKind::Mcp => {
                let unknown =
                    |_| ToolError::failed(format!("no MCP server named `{id}` is registered"));
                match call.engine {
                    Some(engine) => {
                        engine
                            .mcp
                            .set_enabled(call.store, &id, enabled)
                            .map_err(unknown)?;
                    }
                    None => call.store.set_mcp_enabled(&id, enabled).map_err(unknown)?,
                }
                Ok(if enabled {
                    format!("MCP server `{id}` is on; it is connecting.")
                } else {
                    format!("MCP server `{id}` is off and disconnected.")
                })
            }
            ItemKind::Plugin => call
                .engine_or("plugins are not available in this run")?
                .plugins
                .configure(call.store, &id, None, Some(enabled))
                .map_err(ToolError::Failed),
        }
    }
}
