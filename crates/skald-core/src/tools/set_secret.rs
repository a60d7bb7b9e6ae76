//! set_secret: store a secret under a name. The value is used once, for the call, and
//! kept nowhere else: not in the stored arguments, the events or the logs.

use super::ToolCx;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use skald_api::tool_args;
use skald_api::{Tool, ToolCategory, ToolError, ToolResult, tool_names as tn};

/// What a `set_secret` value is stored and shown as.
pub const HIDDEN_VALUE: &str = "[hidden: secret values are not kept]";

pub struct SetSecret;

// The arguments' doc comments are the descriptions the model reads.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Args {
    /// Letters, digits, _ - and .
    key: String,
    value: String,
}

impl SetSecret {
    pub const NAME: &'static str = tn::SET_SECRET;
}

impl<'a> Tool<ToolCx<'a>> for SetSecret {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn description(&self) -> &str {
        "Store a secret (a token, a password) under a name; an empty value deletes it. Refer \
         to it as ${secret:NAME} in an MCP server's env or api_key. The value is never shown \
         again, to you or in logs."
    }

    fn parameters_schema(&self) -> Value {
        tool_args::schema_for::<Args>()
    }

    fn category(&self) -> ToolCategory {
        ToolCategory::Config
    }

    /// The value hidden; arguments that are not even an object (unreadable JSON, kept for
    /// the model to see its mistake) are hidden whole, since they may hold it too.
    fn redacted_args(&self, mut args: Value) -> Value {
        if args.is_string() {
            return Value::String(HIDDEN_VALUE.to_string());
        }
        if let Some(v) = args.get_mut("value")
            && !v.as_str().is_some_and(str::is_empty)
        {
            *v = Value::String(HIDDEN_VALUE.to_string());
        }
        args
    }

    fn execute(&self, cx: &ToolCx<'a>, args: Value) -> ToolResult {
        let (engine, secrets) = cx.call()?.secrets()?;
        let args: Args = tool_args::parse(args)?;
        let key = args.key.trim();
        let value = args.value.as_str();
        if crate::mcp::is_login_secret(key) {
            return Err(ToolError::failed(format!(
                "`{key}` holds an MCP server's login, which only `skald mcp login` writes"
            )));
        }
        if value == HIDDEN_VALUE {
            return Err(ToolError::failed(
                "the value was not kept when Skald stopped; ask the user to give it again (or \
                 to run `skald secrets set` in a terminal)",
            ));
        }
        let stored = secrets
            .set(key, value)
            .map_err(|e| ToolError::failed(e.to_string()))?;
        engine.refresh_redactor();
        Ok(match stored {
            None => format!("Secret `{key}` removed."),
            Some(_) => format!(
                "Secret `{key}` stored. Refer to it as ${{secret:{key}}} (an MCP server's env \
                 or api_key); its value is never shown."
            ),
        })
    }
}
