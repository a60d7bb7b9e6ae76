//! execute_task: the root agent of a chat delegates to a task agent — `sync` waits for its
//! answer, `async` runs it in the background and reports back, `cron` schedules it.

use super::{Cooperative, ToolCx, delegate};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use skald_api::tool_args;
use skald_api::{
    Audience, ExecutionOutcome, Tool, ToolCategory, ToolDescriptionLength, ToolExecution,
    tool_names as tn,
};

pub struct ExecuteTask;

// The schema and the check of a call's arguments; the delegation reads them as sent (a
// task stores them so, and a cron job keeps them for its runs).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Args {
    mode: Mode,
    /// Short title shown to the user.
    title: String,
    /// One line on what the task does.
    description: Option<String>,
    /// Full instructions for the task agent.
    prompt: String,
    /// A task agent's id.
    agent_id: String,
    /// Cron expression with seconds, for mode=cron.
    cron: Option<String>,
    /// For async and cron: work in a worktree of its own (a copy of the folder), so
    /// nothing it changes reaches the folder until the user reviews and applies it.
    worktree: Option<bool>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Mode {
    Sync,
    Async,
    Cron,
}

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
        tool_args::schema_for::<Args>()
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

    /// A sync task agent plans with its chat (it inherits the run); an async or scheduled
    /// one would run on its own, acting, after this turn.
    fn refused_while_planning(&self, args: &Value) -> Option<&'static str> {
        match args.get("mode").and_then(Value::as_str) {
            Some("sync") => None,
            _ => Some(
                "only a sync task (which plans with you) can be delegated until then; an \
                 async or scheduled one would act on its own",
            ),
        }
    }

    /// The root of an interactive chat delegates with this; everyone else with
    /// execute_subtask.
    fn offered_to(&self, who: &Audience) -> bool {
        who.delegation && who.depth == 0 && !who.background
    }

    /// The sub-agent watches the turn's stop token and closes its own calls.
    fn run<'s>(&'s self, cx: &'s ToolCx<'a>, args: Value) -> Box<dyn ToolExecution + 's> {
        Box::new(Cooperative::new(async move {
            match tool_args::parse::<Args>(args.clone()) {
                Err(e) => return ExecutionOutcome::Failed(e.to_string()),
                Ok(Args {
                    mode: Mode::Sync,
                    worktree: Some(true),
                    ..
                }) => {
                    return ExecutionOutcome::Failed(
                        "`worktree` is for async and cron tasks: a sync task works in its \
                         chat's folder"
                            .into(),
                    );
                }
                Ok(_) => {}
            }
            delegate::run(cx, tn::EXECUTE_TASK, &args).await
        }))
    }
}
