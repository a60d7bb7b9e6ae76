//! execute_task: the root agent of a chat delegates to a task agent — `sync` waits for its
//! answer, `async` runs it in the background and reports back, `cron` schedules it.

use super::{Cooperative, ToolCx, delegate};
use serde_json::{Value, json};
use skald_api::{
    Audience, Tool, ToolCategory, ToolDescriptionLength, ToolExecution, tool_names as tn,
};

pub struct ExecuteTask;

impl ExecuteTask {
    pub const NAME: &'static str = tn::EXECUTE_TASK;
}

impl<'a> Tool<ToolCx<'a>> for ExecuteTask {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn description(&self) -> &str {
        "Delegate work to a task agent: `sync` waits for its answer, `async` runs it in the \
         background and reports back when done, `cron` schedules it."
    }

    fn parameters_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "mode": {"type": "string", "enum": ["sync", "async", "cron"]},
                "title": {"type": "string", "description": "Short title shown to the user."},
                "description": {"type": "string", "description": "One line on what the task does."},
                "prompt": {"type": "string", "description": "Full instructions for the task agent."},
                "agent_id": {"type": "string", "description": "A task agent's id."},
                "cron": {"type": "string", "description": "Cron expression with seconds, for mode=cron."}
            },
            "required": ["mode", "title", "prompt", "agent_id"],
            "additionalProperties": false
        })
    }

    fn describe(&self, args: &Value, _length: ToolDescriptionLength) -> String {
        crate::engine::registry::delegation_label(tn::EXECUTE_TASK, args)
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

    /// The root of an interactive chat delegates with this; everyone else with
    /// execute_subtask.
    fn offered_to(&self, who: &Audience) -> bool {
        who.delegation && who.depth == 0 && !who.background
    }

    /// The sub-agent watches the turn's stop token and closes its own calls.
    fn run<'s>(&'s self, cx: &'s ToolCx<'a>, args: Value) -> Box<dyn ToolExecution + 's> {
        Box::new(Cooperative::new(async move {
            delegate::run(cx, tn::EXECUTE_TASK, &args).await
        }))
    }
}
