//! read_agent_result: whether a background task this chat started is still running. Its
//! result is delivered as a `task_completed` message when it ends, so a running task
//! answers `not_ready`.

use super::ToolCx;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use skald_api::tool_args;
use skald_api::{Audience, Tool, ToolCategory, ToolError, ToolResult, tool_names as tn};

pub struct ReadAgentResult;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Args {
    task_id: i64,
}

impl ReadAgentResult {
    pub const NAME: &'static str = tn::READ_AGENT_RESULT;
}

impl<'a> Tool<ToolCx<'a>> for ReadAgentResult {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn description(&self) -> &str {
        "Check on a background task started with execute_task mode=async. Its result arrives \
         by itself as a task_completed message when it ends; this only says whether it is \
         still running."
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

    /// Results arrive at the root of an interactive chat, so only it asks about them.
    fn offered_to(&self, who: &Audience) -> bool {
        who.depth == 0 && !who.background
    }

    fn execute(&self, cx: &ToolCx<'a>, args: Value) -> ToolResult {
        let call = cx.call()?;
        let id = tool_args::parse::<Args>(args)?.task_id;
        let task = call
            .store
            .get_task(id)
            .ok()
            .filter(|t| t.parent_session_id == call.session_id)
            .ok_or_else(|| ToolError::failed(format!("this chat started no task {id}")))?;
        let v = match task.status {
            skald_store::TaskStatus::Running => json!({
                "task_id": id,
                "status": "not_ready",
                "note": "The task is still running; its result will arrive as a task_completed \
                         message. Do not poll."
            }),
            status => json!({
                "task_id": id,
                "status": status.as_str(),
                "note": "The task has ended; its result was delivered to this chat as a \
                         task_completed message."
            }),
        };
        Ok(v.to_string())
    }
}
