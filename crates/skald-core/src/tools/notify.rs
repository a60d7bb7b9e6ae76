//! notify: a background agent's structured notification to the user's home chat. Only
//! background agents get it: in a chat, the agent just says it.

use super::ToolCx;
use serde_json::{Value, json};
use skald_api::{Audience, Tool, ToolCategory, ToolError, ToolResult, tool_names as tn};

pub struct Notify;

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
        json!({
            "type": "object",
            "properties": {
                "source": {"type": "string"},
                "event_type": {"type": "string"},
                "summary": {"type": "string"},
                "event_time": {"type": "string", "description": "RFC 3339 time of the event."},
                "refs": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["source", "event_type", "summary"],
            "additionalProperties": false
        })
    }

    fn category(&self) -> ToolCategory {
        ToolCategory::Session
    }

    fn offered_to(&self, who: &Audience) -> bool {
        who.background
    }

    fn execute(&self, cx: &ToolCx<'a>, args: Value) -> ToolResult {
        let call = cx.call()?;
        call.engine_or("notifications cannot be sent from this run")?
            .notify(call.session_id, &args)
            .map_err(ToolError::Failed)
    }
}
