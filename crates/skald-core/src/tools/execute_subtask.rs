//! execute_subtask: a task agent, or the root of a background session, runs another task
//! agent synchronously and gets its final answer.

use super::{Cooperative, ToolCx, delegate};
use crate::turn::MAX_DEPTH;
use serde_json::{Value, json};
use skald_api::{
    Audience, Tool, ToolCategory, ToolDescriptionLength, ToolExecution, tool_names as tn,
};

pub struct ExecuteSubtask;

impl ExecuteSubtask {
    pub const NAME: &'static str = tn::EXECUTE_SUBTASK;
}

impl<'a> Tool<ToolCx<'a>> for ExecuteSubtask {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn description(&self) -> &str {
        "Run a task agent synchronously and return its final answer."
    }

    fn parameters_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "agent_id": {"type": "string"},
                "prompt": {"type": "string"},
                "title": {"type": "string"},
                "description": {"type": "string"}
            },
            "required": ["agent_id", "prompt"],
            "additionalProperties": false
        })
    }

    fn describe(&self, args: &Value, _length: ToolDescriptionLength) -> String {
        crate::engine::registry::delegation_label(tn::EXECUTE_SUBTASK, args)
    }

    fn category(&self) -> ToolCategory {
        ToolCategory::Subagent
    }

    fn kind(&self) -> skald_api::ToolKind {
        skald_api::ToolKind::Think
    }

    fn hook_alias(&self) -> Option<&'static str> {
        Some("Task")
    }

    /// Everyone but the root of an interactive chat, while delegation may go deeper.
    fn offered_to(&self, who: &Audience) -> bool {
        let chat_root = who.depth == 0 && !who.background;
        who.delegation && !chat_root && who.depth < MAX_DEPTH
    }

    /// The sub-agent watches the turn's stop token and closes its own calls.
    fn run<'s>(&'s self, cx: &'s ToolCx<'a>, args: Value) -> Box<dyn ToolExecution + 's> {
        Box::new(Cooperative::new(async move {
            delegate::run(cx, tn::EXECUTE_SUBTASK, &args).await
        }))
    }
}
