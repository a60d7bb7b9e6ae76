//! exit_plan_mode: the agent of a chat in plan mode presents its plan; once the person
//! approves it (the call needs approval like any tool no rule allows), the chat acts from
//! the next step of the same turn (docs/agent-loop.md, "Plan mode").

use super::{ToolCx, store_err};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use skald_api::records::ChatMode;
use skald_api::tool_args;
use skald_api::{
    Audience, Tool, ToolCategory, ToolDescriptionLength, ToolError, ToolKind, ToolResult,
    tool_names as tn,
};

pub struct ExitPlanMode;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Args {
    /// The plan, in Markdown: the steps, the files to change and how to check the result.
    plan: String,
}

impl ExitPlanMode {
    pub const NAME: &'static str = tn::EXIT_PLAN_MODE;
}

impl<'a> Tool<ToolCx<'a>> for ExitPlanMode {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn description(&self) -> &str {
        "This chat is in plan mode: you may read, search and ask, but change nothing. When \
         your plan is ready, call this with it; the user is asked to approve it. Once \
         approved, you can change files and run commands as usual, and carry it out. If it \
         is not approved, revise the plan with what the user said."
    }

    fn parameters_schema(&self) -> Value {
        tool_args::schema_for::<Args>()
    }

    fn describe(&self, args: &Value, length: ToolDescriptionLength) -> String {
        let plan = args.get("plan").and_then(Value::as_str).unwrap_or("");
        let first = plan
            .lines()
            .map(|l| l.trim_start_matches(['#', ' ']))
            .find(|l| !l.is_empty())
            .unwrap_or("the plan");
        match length {
            ToolDescriptionLength::Short => format!("Plan: {first}"),
            ToolDescriptionLength::Full => format!("Approve the plan and start acting: {first}"),
        }
    }

    fn category(&self) -> ToolCategory {
        ToolCategory::Session
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Think
    }

    /// Only to the chat's own agent, and only while it plans.
    fn offered_to(&self, who: &Audience) -> bool {
        who.plan && who.depth == 0 && !who.background
    }

    fn in_plan_mode(&self) -> bool {
        true
    }

    fn execute(&self, cx: &ToolCx<'a>, args: Value) -> ToolResult {
        let call = cx.call()?;
        let args: Args = tool_args::parse(args)?;
        if args.plan.trim().is_empty() {
            return Err(ToolError::invalid("plan", "must not be empty"));
        }
        let session = call.store.get_session(call.session_id).map_err(store_err)?;
        if session.mode != ChatMode::Plan {
            return Err(ToolError::failed(
                "this chat is not in plan mode; carry on with the work",
            ));
        }
        call.store
            .set_session_mode(call.session_id, ChatMode::Act)
            .map_err(store_err)?;
        Ok("The user approved the plan. This chat now acts: you may change files and run \
            commands as the rules allow. Carry out the plan, step by step."
            .to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::test_support::{call, run};
    use serde_json::json;
    use skald_api::CancellationToken;
    use skald_store::Store;

    #[test]
    fn an_approved_plan_makes_the_chat_act_and_only_a_planning_chat_has_one() {
        let store = Store::open_in_memory().unwrap();
        let s = store
            .create_session(&skald_store::NewSession::default())
            .unwrap();
        let cancel = CancellationToken::new();
        let ctx = call(&store, s.id, &cancel, &|_| {});
        let plan = json!({"plan": "# Fix the bug\n1. Edit a.rs"});
        let e = run(ctx, tn::EXIT_PLAN_MODE, &plan).unwrap_err();
        assert!(e.to_string().contains("not in plan mode"), "{e}");
        store.set_session_mode(s.id, ChatMode::Plan).unwrap();
        assert!(run(ctx, tn::EXIT_PLAN_MODE, &json!({"plan": " "})).is_err());
        assert_eq!(store.get_session(s.id).unwrap().mode, ChatMode::Plan);
        let out = run(ctx, tn::EXIT_PLAN_MODE, &plan).unwrap();
        assert!(out.starts_with("The user approved the plan."), "{out}");
        assert_eq!(store.get_session(s.id).unwrap().mode, ChatMode::Act);
        assert_eq!(
            Tool::<ToolCx>::describe(&ExitPlanMode, &plan, ToolDescriptionLength::Short),
            "Plan: Fix the bug"
        );
    }
}
