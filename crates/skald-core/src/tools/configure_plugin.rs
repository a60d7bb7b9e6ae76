//! configure_plugin: configure one of the plugins Skald ships and turn it on or off; the
//! plugin checks the configuration before it is applied.

use super::{ToolCx, text};
use serde_json::{Value, json};
use skald_api::{Tool, ToolCategory, ToolError, ToolResult, tool_names as tn};

pub struct ConfigurePlugin;

impl ConfigurePlugin {
    pub const NAME: &'static str = tn::CONFIGURE_PLUGIN;
}

impl<'a> Tool<ToolCx<'a>> for ConfigurePlugin {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn description(&self) -> &str {
        "Configure a plugin (see list_items type=plugins for each one's schema) and turn it on \
         or off; the configuration is checked before it is applied."
    }

    fn parameters_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "id": {"type": "string"},
                "config": {"type": "object"},
                "enabled": {"type": "boolean"}
            },
            "required": ["id"],
            "additionalProperties": false
        })
    }

    fn category(&self) -> ToolCategory {
        ToolCategory::Config
    }

    fn execute(&self, cx: &ToolCx<'a>, args: Value) -> ToolResult {
        let call = cx.call()?;
        call.engine_or("plugins are not available in this run")?
            .plugins
            .configure(
                call.store,
                text(&args, "id").trim(),
                args.get("config"),
                args.get("enabled").and_then(Value::as_bool),
            )
            .map_err(ToolError::Failed)
    }
}
