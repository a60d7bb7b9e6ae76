//! ask_user_clarification: ask the user a question through the Agent Inbox and wait for
//! the answer. The call's row is `pending` meanwhile; after a restart it finds its question
//! again. Runs without an Inbox cannot ask, and say so.

use super::{Call, Cooperative, ToolCx};
use crate::inbox::Outcome;
use crate::turn::{ApprovalMode, TurnEnv, TurnError};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use skald_api::tool_args;
use skald_api::events::Event;
use skald_api::inbox::{InboxRequest, QuestionRequest};
use skald_api::{
    Audience, ExecutionOutcome, Tool, ToolCallStatus, ToolCategory, ToolExecution, tool_names as tn,
};

pub struct AskUserClarification;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Args {
    title: Option<String>,
    question: String,
    suggested_answers: Option<Vec<String>>,
}

impl AskUserClarification {
    pub const NAME: &'static str = tn::ASK_USER_CLARIFICATION;
}

impl<'a> Tool<ToolCx<'a>> for AskUserClarification {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn description(&self) -> &str {
        "Ask the user a question and wait for the answer."
    }

    fn parameters_schema(&self) -> Value {
        tool_args::schema_for::<Args>()
    }

    fn category(&self) -> ToolCategory {
        ToolCategory::Session
    }

    /// It changes nothing in the chat's folder or Skald's settings.
    fn in_plan_mode(&self) -> bool {
        true
    }

    fn for_small_models(&self) -> bool {
        true
    }

    /// System agents work unattended and never ask.
    fn offered_to(&self, who: &Audience) -> bool {
        !who.system
    }

    /// The wait watches the turn's stop token and closes the Inbox item itself.
    fn run<'s>(&'s self, cx: &'s ToolCx<'a>, args: Value) -> Box<dyn ToolExecution + 's> {
        Box::new(Cooperative::new(async move {
            let call = match cx.call() {
                Ok(call) => call,
                Err(e) => return ExecutionOutcome::Failed(e.to_string()),
            };
            let args: Args = match tool_args::parse(args) {
                Ok(args) => args,
                Err(e) => return ExecutionOutcome::Failed(e.to_string()),
            };
            let answer = match call.turn {
                Some(env) => ask(env, call, args).await,
                None => Ok(Outcome::Rejected(NO_ONE.to_string())),
            };
            match answer {
                Ok(Outcome::Answered(text)) if !text.trim().is_empty() => {
                    ExecutionOutcome::Completed(format!("The user answered: {text}"))
                }
                // Declined, or no one there to answer: the person's no, stored as for a
                // call they did not approve.
                Ok(Outcome::Rejected(note)) if !note.trim().is_empty() => {
                    ExecutionOutcome::Rejected(format!("The user declined to answer: {note}"))
                }
                Ok(Outcome::Rejected(_)) => {
                    ExecutionOutcome::Rejected("The user gave no answer.".to_string())
                }
                Ok(Outcome::Cancelled) => ExecutionOutcome::Cancelled,
                Ok(_) => ExecutionOutcome::Failed("The user gave no answer.".to_string()),
                Err(e) => cx.fatal(e),
            }
        }))
    }
}

const NO_ONE: &str = "no one can answer questions in this run; decide yourself, or end your \
                      answer with the question for the user";

async fn ask(env: &TurnEnv<'_>, call: &Call<'_>, args: Args) -> Result<Outcome, TurnError> {
    let (store, session_id) = (call.store, call.session_id);
    let inbox = match (env.cfg.approval, env.inbox) {
        (ApprovalMode::Inbox, Some(inbox)) => inbox,
        _ => return Ok(Outcome::Rejected(NO_ONE.to_string())),
    };
    let question = QuestionRequest {
        question: args.question,
        suggested_answers: args.suggested_answers.unwrap_or_default(),
        title: args.title.filter(|t| !t.trim().is_empty()),
    };
    let item = match store.inbox_item_for_call(
        session_id,
        call.call_id,
        skald_store::InboxKind::Question,
    )? {
        Some(existing) => existing,
        None => {
            store.set_tool_call_status(session_id, call.call_id, ToolCallStatus::Pending, None)?;
            let title = question.title.clone().unwrap_or(question.question.clone());
            inbox.request(
                store,
                &skald_store::NewInboxItem {
                    session_id,
                    kind: skald_store::InboxKind::Question,
                    tool_call_id: Some(call.call_id.to_string()),
                    agent_id: env.cfg.run.agent_id.clone(),
                    depth: i64::try_from(env.frame.depth).unwrap_or(i64::MAX),
                    title,
                    payload: InboxRequest::Question(question.clone()).payload(),
                },
                call.emit,
            )?
        }
    };
    (call.emit)(Event::AgentQuestion {
        tool_call_id: call.call_id.to_string(),
        inbox_id: item.id,
        question: question.question,
        suggested_answers: question.suggested_answers,
    });
    Ok(inbox.wait(store, item.id, call.cancel).await?)
}
