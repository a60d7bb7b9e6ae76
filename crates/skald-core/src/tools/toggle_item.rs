//! toggle_item: turn an MCP server, a plugin or a scheduled job on or off. A server is
//! connected or disconnected at once in a run with an engine.

use super::{ToolCx, text};
use serde_json::{Value, json};
use skald_api::{Tool, ToolCategory, ToolError, ToolResult, tool_names as tn};

pub struct ToggleItem;

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
        json!({
            "type": "object",
            "properties": {
                "kind": {"type": "string", "enum": ["mcp", "plugin", "cron"]},
                "id": {"type": ["string", "integer"], "description": "The server's or plugin's name, or the job's id."},
                "enabled": {"type": "boolean"}
            },
            "required": ["kind", "id", "enabled"],
            "additionalProperties": false
        })
    }

    fn category(&self) -> ToolCategory {
        ToolCategory::Config
    }

    fn execute(&self, cx: &ToolCx<'a>, args: Value) -> ToolResult {
        let call = cx.call()?;
        let enabled = args
            .get("enabled")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let id = match &args["id"] {
            Value::String(s) => s.clone(),
            v => v.to_string(),
        };
        match text(&args, "kind") {
            "cron" => {
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
            "mcp" => {
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
            "plugin" => call
                .engine_or("plugins are not available in this run")?
                .plugins
                .configure(call.store, &id, None, Some(enabled))
                .map_err(ToolError::Failed),
            other => Err(ToolError::failed(format!(
                "unknown kind `{other}`: use mcp, plugin or cron"
            ))),
        }
    }
}
