//! delete_mcp: unregister an MCP server and disconnect it. Destructive, so it is its own
//! tool rather than a mode of toggle_item.

use super::{ToolCx, store_err};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use skald_api::tool_args;
use skald_api::{Tool, ToolCategory, ToolResult, tool_names as tn};

pub struct DeleteMcp;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Args {
    name: String,
}

impl DeleteMcp {
    pub const NAME: &'static str = tn::DELETE_MCP;
}

impl<'a> Tool<ToolCx<'a>> for DeleteMcp {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn description(&self) -> &str {
        "Unregister an MCP server and disconnect it."
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
        let name = args.name.trim();
        call.store.delete_mcp_server(name).map_err(store_err)?;
        if let Some(engine) = call.engine {
            engine.mcp.manager.stop(name);
            // Its OAuth login goes with it: a later server of the same name starts signed
            // out.
            if let Some(secrets) = engine.secrets()
                && let Err(e) = secrets.delete(&crate::mcp::login_secret(name))
            {
                tracing::warn!(
                    server = name,
                    "the server's login could not be removed: {e}"
                );
            }
        }
        Ok(format!(
            "Unregistered MCP server `{name}` and disconnected it."
        ))
    }
}
