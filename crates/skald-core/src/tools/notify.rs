//! notify: a background agent's structured notification to the user's home chat. Only
//! background agents get it: in a chat, the agent just says it.

use super::ToolCx;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use skald_api::tool_args;
use skald_api::{Audience, Tool, ToolCategory, ToolError, ToolResult, tool_names as tn};

pub struct Notify;

// The arguments' doc comments are the descriptions the model reads. They are read only to
// be checked: the notification is stored as the model sent it (`Background::notify`).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Args {
    source: String,
    event_type: String,
    summary: String,
    /// RFC 3339 time of the event.
    event_time: Option<String>,
    refs: Option<Vec<String>>,
}

impl Notify {
    pub const NAME: &'static str = tn::NOTIFY;
}

impl<'a> Tool<ToolCx<'a>> for Notify {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn description(&self) -> &str {
        "Send a notification to the user's home chat."
    }

    fn parameters_schema(&self) -> Value {
        tool_args::schema_for::<Args>()
    }

    fn category(&self) -> ToolCategory {
        ToolCategory::Session
    }

    fn offered_to(&self, who: &Audience) -> bool {
        who.background
    }

    fn execute(&self, cx: &ToolCx<'a>, args: Value) -> ToolResult {
        let call = cx.call()?;
        tool_args::parse::<Args>(args.clone())?;
        call.engine_or("notifications cannot be sent from this run")?
            .notify(call.session_id, &args)
            .map_err(ToolError::Failed)
    }
}
