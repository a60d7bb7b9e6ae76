//! execute_subtask: a task agent, or the root of a background session, runs another task
//! agent synchronously and gets its final answer.

use super::{Cooperative, ToolCx, delegate};
use crate::turn::MAX_DEPTH;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use skald_api::tool_args;
use skald_api::{
    Audience, ExecutionOutcome, Tool, ToolCategory, ToolDescriptionLength, ToolExecution,
    tool_names as tn,
};

pub struct ExecuteSubtask;

// The schema and the check of a call's arguments; the delegation reads them as sent.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Args {
    agent_id: String,
    prompt: String,
    title: Option<String>,
    description: Option<String>,
}

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
        tool_args::schema_for::<Args>()
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
            if let Err(e) = tool_args::parse::<Args>(args.clone()) {
                return ExecutionOutcome::Failed(e.to_string());
            }
            delegate::run(cx, tn::EXECUTE_SUBTASK, &args).await
        }))
    }
}
