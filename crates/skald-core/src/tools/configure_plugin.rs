//! configure_plugin: configure one of the plugins Skald ships and turn it on or off; the
//! plugin checks the configuration before it is applied.

use super::{AnyObject, ToolCx};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use skald_api::tool_args;
use skald_api::{Tool, ToolCategory, ToolError, ToolResult, tool_names as tn};

pub struct ConfigurePlugin;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Args {
    id: String,
    config: Option<AnyObject>,
    enabled: Option<bool>,
}

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
        tool_args::schema_for::<Args>()
    }

    fn category(&self) -> ToolCategory {
        ToolCategory::Config
    }

    fn execute(&self, cx: &ToolCx<'a>, args: Value) -> ToolResult {
        let call = cx.call()?;
        let args: Args = tool_args::parse(args)?;
        let config = args.config.map(|c| Value::Object(c.0));
        call.engine_or("plugins are not available in this run")?
            .plugins
            .configure(call.store, args.id.trim(), config.as_ref(), args.enabled)
            .map_err(ToolError::Failed)
    }
}
