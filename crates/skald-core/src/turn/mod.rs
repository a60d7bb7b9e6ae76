//! One agent turn (docs/agent-loop.md, "A round"): rebuild the conversation from
//! the store, stream the model's answer (persisting it before showing it), run the tool
//! calls it makes, and go round again until a final answer, a stop, or the round limit.
//!
//! This is the headless core that `skald exec` drives. The approval gate, sub-agents,
//! queued messages and resume after a restart build on it.

mod answer;
mod budget;
mod calls;
pub mod compact;
pub mod context_usage;
mod conversation;
mod hook_points;
mod offer;
#[cfg(test)]
mod tests;

use answer::answer;
use budget::Budget;
pub(crate) use calls::run_call;
use calls::{parse_args, refuse_unoffered, run_calls};
use conversation::conversation;
pub use conversation::scratchpad_message;
pub(crate) use hook_points::fire_hooks;
use hook_points::{Opening, add_hook_context, opening_hooks, prompt_hooks, stop_hooks};
pub use offer::fit_to_model;
use offer::{ToolsKey, tools_key_now, turn_tools};

pub use crate::engine::context::{
    ApprovalMode, Ask, AskRequest, Emit, Frame, MAX_DEPTH, Prompt, TurnConfig, TurnEnv, TurnError,
};

use crate::approval;
use serde_json::Value;
use skald_api::events::{Event, TurnOutcome};
use skald_api::{CancellationToken, ToolCallStatus};
use skald_llm::{ToolCall, ToolChoice, ToolSpec};
use skald_store::{NewMessage, NewToolCall, Role, RuleAction, Store};

/// Runs one turn for `prompt` in a session; with no prompt, the turn continues the
/// conversation as it stands (after a restart finished what a session left). Store calls
/// happen on the turn's task: they are short indexed statements on a WAL database, cheaper
/// than a hop to the blocking pool.
///
/// The steps: expand the prompt's MCP references, run the hooks a turn starts with, store
/// the prompt, then rounds until the model answers without calling a tool (and no Stop
/// hook sends it back), the turn is stopped, or the round limit is reached.
pub async fn run_turn(
    env: &TurnEnv<'_>,
    session_id: i64,
    prompt: Option<&Prompt>,
    cancel: &CancellationToken,
    emit: Emit<'_>,
) -> Result<TurnOutcome, TurnError> {
    // The board reads how a chat's turns go from the store (docs/board.md); a sub-agent's
    // turn is its chat's. Not being able to say so never stops the turn.
    let root = env.frame.stack_id.is_none();
    if root && let Err(e) = env.store.turn_started(session_id) {
        tracing::warn!(session_id, "cannot record the turn's start: {e}");
    }
    let result = rounds(env, session_id, prompt, cancel, emit).await;
    if root {
        let outcome = match &result {
            Ok(outcome) => *outcome,
            Err(_) => TurnOutcome::Failed,
        };
        if let Err(e) = env.store.turn_ended(session_id, outcome) {
            tracing::warn!(session_id, "cannot record the turn's end: {e}");
        }
    }
    result
}

/// The turn itself: what `run_turn` records the start and end of.
async fn rounds(
    env: &TurnEnv<'_>,
    session_id: i64,
    prompt: Option<&Prompt>,
    cancel: &CancellationToken,
    emit: Emit<'_>,
) -> Result<TurnOutcome, TurnError> {
    // What the turn's calls used and cost is said just before it ends (a sub-agent's are
    // its delegating turn's).
    let started = skald_store::now_ms();
    let with_usage = |event: Event| {
        if matches!(event, Event::Done { .. }) && env.frame.stack_id.is_none() {
            match crate::usage::turn_usage(env.store, session_id, started) {
                Ok(usage) => emit(usage),
                Err(e) => tracing::warn!("cannot read the turn's usage: {e}"),
            }
        }
        emit(event);
    };
    let emit: Emit<'_> = &with_usage;
    let expanded = match expand_prompt(env, prompt.map(|p| p.text.as_str()), cancel).await {
        Ok(expanded) => expanded,
        Err(message) => {
            emit(Event::TurnRunning { session_id });
            emit(Event::Error { message });
            return finish(emit, session_id, TurnOutcome::Failed, "");
        }
    };
    let expanded = expanded.zip(prompt).map(|(text, p)| Prompt {
        text,
        images: p.images.clone(),
    });
    let prompt = expanded.as_ref().or(prompt);
    let Some(opening) =
        opening_hooks(env, session_id, prompt.map(|p| p.text.as_str()), emit).await?
    else {
        return finish(emit, session_id, TurnOutcome::Cancelled, "");
    };
    store_prompt(env, session_id, prompt, opening, emit)?;
    let mut offer = Offer::default();
    let mut stop_continues = 0;
    // The configuration for the chat's mode when it changed during the turn (a plan
    // approved, plan mode chosen from the header).
    let mut switched: Option<TurnConfig> = None;
    // A "Run it" past the daily budget holds until the chat's turn ends.
    let _passing = match (env.engine, env.frame.stack_id) {
        (Some(engine), None) => Some(engine.limits.turn_of(session_id)),
        _ => None,
    };
    let outer = env;
    for round in 0..outer.cfg.max_rounds {
        if cancel.is_cancelled() {
            return finish(emit, session_id, TurnOutcome::Cancelled, "");
        }
        let current = match &switched {
            Some(cfg) => TurnEnv { cfg, ..*outer },
            None => *outer,
        };
        if let Some(cfg) = in_mode_now(&current, session_id)? {
            switched = Some(cfg);
        }
        let env = &match &switched {
            Some(cfg) => TurnEnv { cfg, ..*outer },
            None => *outer,
        };
        inject_queued(env, session_id, emit).await?;
        take_deliveries(env, session_id, emit)?;
        offer.refresh(env, session_id)?;
        // Held until the round's answer is recorded.
        let in_flight = match budget::check(env, session_id, cancel, emit).await? {
            Budget::Go(reservation) => reservation,
            Budget::Cancelled => return finish(emit, session_id, TurnOutcome::Cancelled, ""),
            Budget::Declined => {
                emit(Event::Error {
                    message: "Stopped: you chose not to pass today's budget.".to_string(),
                });
                return finish(emit, session_id, TurnOutcome::Cancelled, "");
            }
            Budget::Over(message) => {
                emit(Event::Error { message });
                return finish(emit, session_id, TurnOutcome::Failed, "");
            }
        };
        let choice = if round == 0 {
            env.cfg.first_tool_choice
        } else {
            ToolChoice::Auto
        };
        let answered = answer(env, session_id, &offer.tools, choice, cancel, emit).await?;
        // Recorded now (or failed): no longer in flight.
        drop(in_flight);
        let (msg_id, text, mut calls) = match answered {
            Ok(a) => a,
            Err(outcome) => return finish(emit, session_id, outcome, ""),
        };
        unique_call_ids(env.store, session_id, &mut calls)?;
        if calls.is_empty() {
            if go_on_after_answer(env, session_id, &mut stop_continues, emit).await? {
                continue;
            }
            return finish(emit, session_id, TurnOutcome::Final, &text);
        }
        store_calls(env, session_id, msg_id, &calls)?;
        let calls = refuse_unoffered_calls(env, session_id, calls, &offer.tools, emit)?;
        if run_calls(env, session_id, &calls, cancel, emit).await? {
            return finish(emit, session_id, TurnOutcome::Cancelled, "");
        }
    }
    finish(emit, session_id, TurnOutcome::Exhausted, "")
}

/// The turn's configuration for the chat's mode, when the chat's mode is no longer the one
/// the turn runs in (docs/agent-loop.md, "Plan mode"): a plan approved during the turn
/// lets the next round act; plan mode chosen meanwhile makes it plan. Sub-agents keep
/// their delegating agent's.
fn in_mode_now(env: &TurnEnv<'_>, session_id: i64) -> Result<Option<TurnConfig>, TurnError> {
    if env.frame.stack_id.is_some() {
        return Ok(None);
    }
    let Some(session) = env.store.find_session(session_id)? else {
        return Ok(None);
    };
    let planning = session.mode == skald_api::records::ChatMode::Plan;
    if planning == env.cfg.run.is_planning() {
        return Ok(None);
    }
    let mut cfg = env.cfg.clone();
    cfg.run = cfg.run.in_mode(session.mode);
    Ok(Some(cfg))
}

/// `/server:prompt` and `@server:uri` (docs/mcp.md) in the prompt, expanded: once, in a
/// message a person sent — never in a background session's prompt, which an agent wrote —
/// before the hooks see it, and redacted like a tool result (a resource may hold a secret).
/// `None` when there is nothing to expand; `Err` says why the expansion failed.
async fn expand_prompt(
    env: &TurnEnv<'_>,
    prompt: Option<&str>,
    cancel: &CancellationToken,
) -> Result<Option<String>, String> {
    let root = env.frame.stack_id.is_none();
    match (prompt, env.engine) {
        (Some(p), Some(engine)) if root && !env.cfg.background => {
            Ok(
                crate::mcp::expand::expand(&engine.mcp, env.store, p, cancel)
                    .await?
                    .map(|text| engine.redact(&text)),
            )
        }
        _ => Ok(None),
    }
}

/// Stores the prompt as the user's message and announces the turn: running, the message,
/// what the hooks added, and the folder's instructions and skills if it has any.
fn store_prompt(
    env: &TurnEnv<'_>,
    session_id: i64,
    prompt: Option<&Prompt>,
    opening: Opening,
    emit: Emit<'_>,
) -> Result<(), TurnError> {
    let user = match prompt {
        Some(p) => Some((append_prompt(env, session_id, p)?, p)),
        None => None,
    };
    if !opening.running {
        emit(Event::TurnRunning { session_id });
    }
    if let Some((user, p)) = user {
        emit(Event::UserMessage {
            session_id,
            message_id: user.id,
            text: user.content,
            images: match p.images.is_empty() {
                true => Vec::new(),
                false => crate::images::shown_by(
                    env.store,
                    session_id,
                    &skald_store::ImageOwner::Message(user.id),
                )?,
            },
        });
    }
    add_hook_context(env, session_id, &opening.context)?;
    // Only when there is something to show: a folder without AGENTS.md or skills adds
    // nothing to the turn's events.
    let context = &env.cfg.instructions.context;
    if !context.instructions.is_empty()
        || !context.skills.is_empty()
        || context.project_hooks.is_some()
    {
        emit(Event::Context {
            session_id,
            context: context.clone(),
        });
    }
    Ok(())
}

/// The tools offered this round. Tools the group denies outright are not offered at all
/// (docs/tools.md, "Which tools an agent is offered").
#[derive(Default)]
struct Offer {
    tools: Vec<ToolSpec>,
    /// What decided `tools`.
    key: Option<ToolsKey>,
}

impl Offer {
    /// Rebuilt when what decides them moved — a group activated last round, an MCP server
    /// that became ready, a plugin turned on — so they arrive from this round.
    fn refresh(&mut self, env: &TurnEnv<'_>, session_id: i64) -> Result<(), TurnError> {
        let key = tools_key_now(env, session_id)?;
        if self.key.as_ref() != Some(&key) {
            self.tools = turn_tools(env, session_id)?;
            self.key = Some(key);
        }
        Ok(())
    }
}

/// After an answer without tool calls: whether the turn goes on for another round rather
/// than ending with it. Messages that arrived during the answer get their own round, and a
/// Stop hook may send the agent back to work.
async fn go_on_after_answer(
    env: &TurnEnv<'_>,
    session_id: i64,
    stop_continues: &mut usize,
    emit: Emit<'_>,
) -> Result<bool, TurnError> {
    if inject_queued(env, session_id, emit).await? | take_deliveries(env, session_id, emit)? {
        return Ok(true);
    }
    stop_hooks(env, session_id, stop_continues, emit).await
}

/// Stores every call of an answer before any runs, so a crash leaves a row for each.
fn store_calls(
    env: &TurnEnv<'_>,
    session_id: i64,
    message_id: i64,
    calls: &[ToolCall],
) -> Result<(), TurnError> {
    for call in calls {
        env.store.insert_tool_call(&NewToolCall {
            tool_call_id: call.id.clone(),
            session_id,
            stack_id: env.frame.stack_id,
            message_id: Some(message_id),
            name: call.name.clone(),
            // Unreadable arguments are kept for the model to see its mistake — but
            // shown like any others, so a secret's are kept nowhere.
            args: env.registry.redacted_args(
                &call.name,
                parse_args(&call.arguments)
                    .unwrap_or_else(|_| Value::String(call.arguments.clone())),
            ),
            status: ToolCallStatus::Running,
        })?;
    }
    Ok(())
}

/// Refuses the calls of tools the model was not offered (one it saw earlier, or made up)
/// and returns the rest, to run. A tool hidden because the rules deny it goes to the gate,
/// which says so.
fn refuse_unoffered_calls(
    env: &TurnEnv<'_>,
    session_id: i64,
    calls: Vec<ToolCall>,
    offered: &[ToolSpec],
    emit: Emit<'_>,
) -> Result<Vec<ToolCall>, TurnError> {
    let (calls, unoffered): (Vec<ToolCall>, Vec<ToolCall>) = calls.into_iter().partition(|c| {
        offered.iter().any(|t| t.name == c.name)
            || approval::check(
                env.store,
                &env.cfg.run,
                &c.name,
                &parse_args(&c.arguments).unwrap_or(Value::Null),
            )
            .action
                == RuleAction::Deny
    });
    for call in &unoffered {
        refuse_unoffered(env, session_id, call, emit)?;
    }
    Ok(calls)
}

/// What the first request of a chat that is not stored yet would send: the messages a new
/// chat's first round reads (`prompt` as its user message) and the tools it is offered,
/// built by the code a turn uses, so the two cannot drift apart. `Engine::prepare_chat`
/// reads it once ahead of any chat (docs/models.md, "The first answer").
pub fn first_request(
    env: &TurnEnv<'_>,
    prompt: &str,
) -> Result<(Vec<skald_llm::Message>, Vec<ToolSpec>), TurnError> {
    // SQLite's rowids start at 1, so no stored chat, message, grant or scratchpad has
    // this id: what is read for it is what a chat holds before its first message.
    const NOT_STORED: i64 = 0;
    let tools = turn_tools(env, NOT_STORED)?;
    let mut messages = conversation(env, NOT_STORED)?;
    // The user's message is stored before the round starts, so it comes before the
    // closing note (time, folder) as in every chat.
    let tail = messages.len().saturating_sub(1);
    messages.insert(tail, skald_llm::Message::user(prompt));
    Ok((messages, tools))
}

/// Some servers (and small local models) reuse tool call ids. Ids must be unique in a
/// session to pair each result with its call, so a reused id gets a suffix; the model
/// sees the renamed id in both its call and the result.
fn unique_call_ids(
    store: &Store,
    session_id: i64,
    calls: &mut [ToolCall],
) -> Result<(), TurnError> {
    let mut taken: std::collections::HashSet<String> = std::collections::HashSet::new();
    for call in calls.iter_mut() {
        let base = call.id.clone();
        let mut n = 1;
        while taken.contains(&call.id) || store.find_tool_call(session_id, &call.id)?.is_some() {
            n += 1;
            call.id = format!("{base}_{n}");
        }
        taken.insert(call.id.clone());
    }
    Ok(())
}

/// Stores the messages queued while the turn ran as user messages. Returns whether there
/// were any.
async fn inject_queued(
    env: &TurnEnv<'_>,
    session_id: i64,
    emit: Emit<'_>,
) -> Result<bool, TurnError> {
    let Some(take) = env.queued else {
        return Ok(false);
    };
    let prompts = take();
    let cfg = env.cfg;
    let mut any = false;
    for prompt in &prompts {
        // A message sent while the turn ran meets the UserPromptSubmit hooks too.
        let Some(context) = prompt_hooks(cfg, session_id, &prompt.text, emit).await else {
            continue;
        };
        let m = append_prompt(env, session_id, prompt)?;
        emit(Event::UserMessage {
            session_id,
            message_id: m.id,
            text: m.content.clone(),
            images: match prompt.images.is_empty() {
                true => Vec::new(),
                false => crate::images::shown_by(
                    env.store,
                    session_id,
                    &skald_store::ImageOwner::Message(m.id),
                )?,
            },
        });
        add_hook_context(env, session_id, &context)?;
        any = true;
    }
    Ok(any)
}

/// Stores a person's message with its images. An image no longer kept (removed since it
/// was attached) is said in the message instead: the message itself is never lost.
fn append_prompt(
    env: &TurnEnv<'_>,
    session_id: i64,
    prompt: &Prompt,
) -> Result<skald_store::Message, TurnError> {
    let message = |text: String| NewMessage {
        stack_id: env.frame.stack_id,
        ..NewMessage::new(session_id, Role::User, text)
    };
    match env
        .store
        .append_message_showing(&message(prompt.text.clone()), &prompt.images)
    {
        Err(skald_store::StoreError::NotFound { what: "image", .. }) => {
            let mut kept = Vec::new();
            for image in &prompt.images {
                if env.store.image(&image.sha256)?.is_some() {
                    kept.push(image.clone());
                }
            }
            let lost = prompt.images.len() - kept.len();
            let note = format!(
                "[{lost} attached image{} could not be kept and {} missing]",
                if lost == 1 { "" } else { "s" },
                if lost == 1 { "is" } else { "are" }
            );
            let text = if prompt.text.is_empty() {
                note
            } else {
                format!("{}\n\n{note}", prompt.text)
            };
            Ok(env.store.append_message_showing(&message(text), &kept)?)
        }
        other => Ok(other?),
    }
}

/// Takes the deliveries waiting for this chat (finished tasks' results, notifications)
/// into its history, between rounds of its root agent. Returns whether there were any.
fn take_deliveries(env: &TurnEnv<'_>, session_id: i64, emit: Emit<'_>) -> Result<bool, TurnError> {
    if env.frame.stack_id.is_some() || env.cfg.background {
        return Ok(false);
    }
    let delivered = env.store.take_deliveries(session_id)?;
    for d in &delivered {
        emit(Event::ToolStart {
            tool_call_id: d.tool_call_id.clone(),
            name: d.tool.clone(),
            arguments: d.arguments.clone(),
            label_short: d.text.clone(),
            label_full: d.text.clone(),
            path: None,
        });
        emit(Event::ToolDone {
            tool_call_id: d.tool_call_id.clone(),
            result: d.result.clone(),
            images: Vec::new(),
        });
    }
    Ok(!delivered.is_empty())
}

fn finish(
    emit: Emit<'_>,
    session_id: i64,
    outcome: TurnOutcome,
    text: &str,
) -> Result<TurnOutcome, TurnError> {
    emit(Event::Done {
        session_id,
        outcome,
        text: text.to_string(),
    });
    Ok(outcome)
}
