//! list_secrets: the names of the stored secrets, never their values.

use super::ToolCx;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use skald_api::tool_args;
use skald_api::{Tool, ToolCategory, ToolError, ToolResult, tool_names as tn};

pub struct ListSecrets;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Args {
    pattern: Option<String>,
}

impl ListSecrets {
    pub const NAME: &'static str = tn::LIST_SECRETS;
}

impl<'a> Tool<ToolCx<'a>> for ListSecrets {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn description(&self) -> &str {
        "List the names of stored secrets (never their values); `pattern` filters by a \
         substring or a `prefix*`."
    }

    fn parameters_schema(&self) -> Value {
        tool_args::schema_for::<Args>()
    }

    fn category(&self) -> ToolCategory {
        ToolCategory::Config
    }

    /// It changes nothing in the chat's folder or Skald's settings.
    fn in_plan_mode(&self) -> bool {
        true
    }

    fn execute(&self, cx: &ToolCx<'a>, args: Value) -> ToolResult {
        let (_, secrets) = cx.call()?.secrets()?;
        let args: Args = tool_args::parse(args)?;
        // Logins are not the agent's to refer to or change.
        let names: Vec<String> = secrets
            .list(args.pattern.as_deref())
            .map_err(|e| ToolError::failed(e.to_string()))?
            .into_iter()
            .filter(|n| !crate::mcp::is_login_secret(n))
            .collect();
        Ok(json!({ "names": names }).to_string())
    }
}
