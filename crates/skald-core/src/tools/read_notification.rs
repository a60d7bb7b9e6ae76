//! read_notification: the notifications background agents delivered to this chat,
//! newest first.

use super::{ToolCx, store_err};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use skald_api::tool_args;
use skald_api::{Audience, Tool, ToolCategory, ToolResult, tool_names as tn};

pub struct ReadNotification;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Args {
    #[schemars(range(min = 1, max = 100))]
    limit: Option<u64>,
}

impl ReadNotification {
    pub const NAME: &'static str = tn::READ_NOTIFICATION;
}

impl<'a> Tool<ToolCx<'a>> for ReadNotification {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn description(&self) -> &str {
        "Read the latest notifications background agents sent to this chat."
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

    /// Notifications arrive at the root of an interactive chat.
    fn offered_to(&self, who: &Audience) -> bool {
        who.depth == 0 && !who.background
    }

    fn execute(&self, cx: &ToolCx<'a>, args: Value) -> ToolResult {
        let call = cx.call()?;
        let args: Args = tool_args::parse(args)?;
        let limit = args.limit.map_or(20, |l| l.clamp(1, 100));
        let limit = usize::try_from(limit).unwrap_or(20);
        let mut notes = Vec::new();
        for delivered in call
            .store
            .list_tool_calls(call.session_id)
            .map_err(store_err)?
            .into_iter()
            .rev()
            // Only the deliveries themselves, not the model's own earlier reads of them.
            .filter(|c| {
                c.name == skald_store::NOTIFICATION_TOOL
                    && c.tool_call_id.starts_with("notification_")
            })
        {
            let batch: Value = serde_json::from_str(delivered.result.as_deref().unwrap_or("{}"))
                .unwrap_or(Value::Null);
            if let Some(list) = batch["notifications"].as_array() {
                notes.extend(list.iter().rev().cloned());
            }
            if notes.len() >= limit {
                break;
            }
        }
        notes.truncate(limit);
        Ok(json!({ "notifications": notes }).to_string())
    }
}
