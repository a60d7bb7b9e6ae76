//! One agent turn (docs/agent-loop.md, "A round"): rebuild the conversation from
//! the store, stream the model's answer (persisting it before showing it), run the tool
//! calls it makes, and go round again until a final answer, a stop, or the round limit.
//!
//! This is the headless core that `skald exec` drives. The approval gate, sub-agents,
//! queued messages and resume after a restart build on it.

mod calls;
pub mod compact;
mod conversation;
mod offer;
#[cfg(test)]
mod tests;

pub(crate) use calls::run_call;
use calls::{parse_args, refuse_unoffered, run_calls};
use conversation::conversation;
pub use conversation::scratchpad_message;
pub use offer::fit_to_model;
use offer::{tools_key_now, turn_tools};

pub use crate::engine::context::{
    ApprovalMode, Ask, AskRequest, Emit, Frame, MAX_DEPTH, TurnConfig, TurnEnv, TurnError,
};

use crate::approval;
use crate::models::candidates;
use futures::StreamExt;
use serde_json::Value;
use skald_api::events::{Event, TurnOutcome};
use skald_api::{CancellationToken, ToolCallStatus};
use skald_llm::{Request, ToolCall, ToolChoice, ToolSpec, Usage};
use skald_store::{
    MessageStatus, NewLlmRequest, NewMessage, NewToolCall, RequestStatus, Role, RuleAction, Store,
};

/// Runs one turn for `prompt` in a session; with no prompt, the turn continues the
/// conversation as it stands (after a restart finished what a session left). Store calls happen on the turn's task: they
/// are short indexed statements on a WAL database, cheaper than a hop to the blocking pool.
pub async fn run_turn(
    env: &TurnEnv<'_>,
    session_id: i64,
    prompt: Option<&str>,
    cancel: &CancellationToken,
    emit: Emit<'_>,
) -> Result<TurnOutcome, TurnError> {
    let TurnEnv { store, cfg, .. } = *env;
    let root = env.frame.stack_id.is_none();
    // `/server:prompt` and `@server:uri` (docs/mcp.md): expanded once, in a message a
    // person sent — never in a background session's prompt, which an agent wrote — before
    // the hooks see it, and redacted like a tool result (a resource may hold a secret).
    let expanded = match (prompt, env.engine) {
        (Some(p), Some(engine)) if root && !cfg.background => {
            match crate::mcp::expand::expand(&engine.mcp, store, p, cancel).await {
                Ok(e) => e.map(|text| engine.redact(&text)),
                Err(message) => {
                    emit(Event::TurnRunning { session_id });
                    emit(Event::Error { message });
                    return finish(emit, session_id, TurnOutcome::Failed, "");
                }
            }
        }
        _ => None,
    };
    let prompt = expanded.as_deref().or(prompt);
    // What SessionStart and UserPromptSubmit hooks add, stored after the message.
    let mut hook_context = Vec::new();
    // With hooks, the turn is running from before they run (they can take seconds).
    let mut running = false;
    if root && !cfg.hooks.is_empty() {
        emit(Event::TurnRunning { session_id });
        running = true;
        if let Some(source) = session_start(env, session_id)? {
            let v = fire_hooks(
                cfg,
                session_id,
                None,
                crate::hooks::HookEvent::SessionStart,
                Some(source.into()),
                serde_json::json!({ "source": source }),
                emit,
            )
            .await;
            hook_context.extend(v.context);
        }
        if let Some(p) = prompt {
            match prompt_hooks(cfg, session_id, p, emit).await {
                Some(context) => hook_context.extend(context),
                None => return finish(emit, session_id, TurnOutcome::Cancelled, ""),
            }
        }
    }
    let user = match prompt {
        Some(p) => Some(store.append_message(&NewMessage {
            stack_id: env.frame.stack_id,
            ..NewMessage::new(session_id, Role::User, p)
        })?),
        None => None,
    };
    if !running {
        emit(Event::TurnRunning { session_id });
    }
    if let Some(user) = user {
        emit(Event::UserMessage {
            session_id,
            message_id: user.id,
            text: user.content,
        });
    }
    add_hook_context(env, session_id, &hook_context)?;
    let mut stop_continues = 0;
    // Only when there is something to show: a folder without AGENTS.md or skills adds
    // nothing to the turn's events.
    let context = &cfg.instructions.context;
    if !context.instructions.is_empty()
        || !context.skills.is_empty()
        || context.project_hooks.is_some()
    {
        emit(Event::Context {
            session_id,
            context: context.clone(),
        });
    }
    // Tools the group denies outright are not offered at all (docs/tools.md,
    // "Which tools an agent is offered").
    let mut tools: Vec<ToolSpec> = Vec::new();
    let mut tools_key = None;

    for round in 0..cfg.max_rounds {
        if cancel.is_cancelled() {
            return finish(emit, session_id, TurnOutcome::Cancelled, "");
        }
        inject_queued(env, session_id, emit).await?;
        take_deliveries(env, session_id, emit)?;
        // Rebuilt when what decides them moved — a group activated last round, an MCP
        // server that became ready, a plugin turned on — so they arrive from this round.
        let key = tools_key_now(env, session_id)?;
        if tools_key.as_ref() != Some(&key) {
            tools = turn_tools(env, session_id)?;
            tools_key = Some(key);
        }
        let choice = if round == 0 {
            cfg.first_tool_choice
        } else {
            ToolChoice::Auto
        };
        let (msg_id, text, mut calls) =
            match answer(env, session_id, &tools, choice, cancel, emit).await? {
                Ok(a) => a,
                Err(outcome) => return finish(emit, session_id, outcome, ""),
            };
        unique_call_ids(store, session_id, &mut calls)?;
        if calls.is_empty() {
            // Messages that arrived during this answer get their own round.
            if inject_queued(env, session_id, emit).await? | take_deliveries(env, session_id, emit)?
            {
                continue;
            }
            // A Stop hook may ask the agent to go on (run the tests first, …); at most a
            // few times, so two hooks cannot keep a turn going for ever.
            if !cfg.hooks.is_empty() && stop_continues < MAX_STOP_CONTINUES {
                let event = if root {
                    crate::hooks::HookEvent::Stop
                } else {
                    crate::hooks::HookEvent::SubagentStop
                };
                let v = fire_hooks(
                    cfg,
                    session_id,
                    None,
                    event,
                    None,
                    serde_json::json!({ "stop_hook_active": stop_continues > 0 }),
                    emit,
                )
                .await;
                if let (Some(reason), None) = (v.blocked, v.stop) {
                    stop_continues += 1;
                    store.append_message(&NewMessage {
                        stack_id: env.frame.stack_id,
                        ..NewMessage::new(
                            session_id,
                            Role::System,
                            format!(
                                "A {} hook asks you to go on before you finish: {reason}",
                                event.name()
                            ),
                        )
                    })?;
                    continue;
                }
            }
            return finish(emit, session_id, TurnOutcome::Final, &text);
        }
        // Every call is stored before any runs, so a crash leaves a row for each.
        for call in &calls {
            store.insert_tool_call(&NewToolCall {
                tool_call_id: call.id.clone(),
                session_id,
                stack_id: env.frame.stack_id,
                message_id: Some(msg_id),
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
        // A model may call a tool it was not offered (one it saw earlier, or made up):
        // it is refused, not run. A tool hidden because the rules deny it goes to the gate,
        // which says so.
        let (calls, unoffered): (Vec<ToolCall>, Vec<ToolCall>) = calls.into_iter().partition(|c| {
            tools.iter().any(|t| t.name == c.name)
                || approval::check(
                    store,
                    &cfg.run,
                    &c.name,
                    &parse_args(&c.arguments).unwrap_or(Value::Null),
                )
                .action
                    == RuleAction::Deny
        });
        for call in &unoffered {
            refuse_unoffered(env, session_id, call, emit)?;
        }
        if run_calls(env, session_id, &calls, cancel, emit).await? {
            return finish(emit, session_id, TurnOutcome::Cancelled, "");
        }
    }
    finish(emit, session_id, TurnOutcome::Exhausted, "")
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

/// One model answer for the next round: the stored message's id, its text and its tool
/// calls — or how the turn ends if no model could answer. Failures before an answer
/// starts move on to the next fallback model (at most `MAX_FALLBACKS`); a stream cut
/// mid-answer keeps what arrived (marked interrupted) and asks again, so the model can
/// continue from it.
async fn answer(
    env: &TurnEnv<'_>,
    session_id: i64,
    tools: &[ToolSpec],
    tool_choice: ToolChoice,
    cancel: &CancellationToken,
    emit: Emit<'_>,
) -> Result<Result<(i64, String, Vec<ToolCall>), TurnOutcome>, TurnError> {
    let store = env.store;
    let models = env.models.current();
    let candidates = candidates(&models, env.health);
    let current = conversation(env, session_id)?;
    // The first attempt sends the context just built, unless a summary replaced part of
    // it; later attempts rebuild it, since a cut answer has been added to the history.
    let mut prepared = if crate::turn::compact::compact_if_needed(
        env, session_id, &current, cancel, emit,
    )
    .await?
    {
        None
    } else {
        Some(current)
    };
    let max_attempts = candidates.len() + 2;
    let (mut idx, mut attempts) = (0, 0);
    while let Some(model) = candidates.get(idx).copied() {
        if attempts == max_attempts {
            break;
        }
        attempts += 1;
        let label = model.label();
        let request = Request {
            model: model.model.clone(),
            messages: match prepared.take() {
                Some(m) => m,
                None => conversation(env, session_id)?,
            },
            tools: offer::fit_to_model(model, tools, env.registry),
            tool_choice,
            max_tokens: None,
            temperature: None,
        };
        let started_at = skald_store::now_ms();
        let record = |status: RequestStatus, usage: Option<Usage>, error: Option<&str>| {
            let usage = usage.unwrap_or_default();
            store.record_llm_request(&NewLlmRequest {
                session_id: Some(session_id),
                provider: &model.provider.name,
                model: &model.model,
                status,
                input_tokens: usage.input_tokens,
                output_tokens: usage.output_tokens,
                error,
                started_at,
            })
        };
        let next = candidates.get(idx + 1).copied();
        let move_on = |e: &skald_llm::LlmError| {
            emit(Event::LlmFailed {
                message: e.to_string(),
                retrying: next.is_some(),
            });
            if let Some(to) = next {
                emit(Event::ModelFallback {
                    from: label.clone(),
                    to: to.label(),
                    reason: e.to_string(),
                });
            }
        };
        let started = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Ok(Err(TurnOutcome::Cancelled)),
            r = model.provider.stream(&request) => r,
        };
        let stream = match started {
            Ok(s) => s,
            Err(e) => {
                record(RequestStatus::Failed, None, Some(&e.to_string()))?;
                env.health.failed(&label);
                move_on(&e);
                idx += 1;
                continue;
            }
        };
        match read_stream(env, session_id, stream, cancel, emit).await? {
            Streamed::Complete {
                message_id,
                text,
                calls,
                usage,
            } => {
                record(RequestStatus::Ok, usage, None)?;
                env.health.succeeded(&label);
                return Ok(Ok((message_id, text, calls)));
            }
            Streamed::Cancelled { usage } => {
                record(RequestStatus::Cancelled, usage, None)?;
                return Ok(Err(TurnOutcome::Cancelled));
            }
            Streamed::Failed { error: e, usage } => {
                record(RequestStatus::Failed, usage, Some(&e.to_string()))?;
                env.health.failed(&label);
                if e.is_retryable() && attempts < max_attempts {
                    // The same model again: it sees its cut answer and can continue.
                    emit(Event::LlmFailed {
                        message: e.to_string(),
                        retrying: true,
                    });
                } else {
                    move_on(&e);
                    idx += 1;
                }
            }
        }
    }
    Ok(Err(TurnOutcome::Failed))
}

/// How one streamed answer ended.
enum Streamed {
    Complete {
        message_id: i64,
        text: String,
        calls: Vec<ToolCall>,
        usage: Option<Usage>,
    },
    Failed {
        error: skald_llm::LlmError,
        usage: Option<Usage>,
    },
    Cancelled {
        usage: Option<Usage>,
    },
}

/// Reads one answer as it streams. It is stored before each piece is shown: a crash never
/// loses text the user has seen. A cut or stopped answer stays, marked interrupted.
async fn read_stream(
    env: &TurnEnv<'_>,
    session_id: i64,
    mut stream: skald_llm::EventStream,
    cancel: &CancellationToken,
    emit: Emit<'_>,
) -> Result<Streamed, TurnError> {
    let store = env.store;
    let msg = store.append_message(&NewMessage {
        status: MessageStatus::Streaming,
        stack_id: env.frame.stack_id,
        ..NewMessage::new(session_id, Role::Assistant, "")
    })?;
    let (mut text, mut reasoning) = (String::new(), String::new());
    let mut calls: Vec<ToolCall> = Vec::new();
    let mut usage = None;
    let failure = loop {
        let next_event = tokio::select! {
            biased;
            _ = cancel.cancelled() => {
                store.update_message(msg.id, &text, some(&reasoning), MessageStatus::Interrupted)?;
                return Ok(Streamed::Cancelled { usage });
            }
            n = stream.next() => n,
        };
        match next_event {
            None => break None,
            Some(Err(e)) => break Some(e),
            Some(Ok(skald_llm::Event::Text { delta })) => {
                text.push_str(&delta);
                store.update_message(msg.id, &text, some(&reasoning), MessageStatus::Streaming)?;
                emit(Event::TokenDelta { text: delta });
            }
            Some(Ok(skald_llm::Event::Reasoning { delta })) => {
                reasoning.push_str(&delta);
                store.update_message(msg.id, &text, some(&reasoning), MessageStatus::Streaming)?;
                emit(Event::Thinking { text: delta });
            }
            Some(Ok(skald_llm::Event::ToolCall { call })) => calls.push(call),
            Some(Ok(skald_llm::Event::Usage { usage: u })) => usage = Some(u),
            Some(Ok(skald_llm::Event::Finish { .. })) => {}
            Some(Ok(skald_llm::Event::Reading { done, total })) => {
                emit(Event::PromptProgress { read: done, total });
            }
        }
    };
    let status = match failure {
        None => MessageStatus::Complete,
        Some(_) => MessageStatus::Interrupted,
    };
    store.update_message(msg.id, &text, some(&reasoning), status)?;
    Ok(match failure {
        None => Streamed::Complete {
            message_id: msg.id,
            text,
            calls,
            usage,
        },
        Some(error) => Streamed::Failed { error, usage },
    })
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
    let texts = take();
    let cfg = env.cfg;
    let mut any = false;
    for text in &texts {
        // A message sent while the turn ran meets the UserPromptSubmit hooks too.
        let Some(context) = prompt_hooks(cfg, session_id, text, emit).await else {
            continue;
        };
        let m = env.store.append_message(&NewMessage {
            stack_id: env.frame.stack_id,
            ..NewMessage::new(session_id, Role::User, text.as_str())
        })?;
        emit(Event::UserMessage {
            session_id,
            message_id: m.id,
            text: text.clone(),
        });
        add_hook_context(env, session_id, &context)?;
        any = true;
    }
    Ok(any)
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
        });
    }
    Ok(!delivered.is_empty())
}

fn some(s: &str) -> Option<&str> {
    (!s.is_empty()).then_some(s)
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

/// How many times Stop hooks may send an agent back to work in one turn.
const MAX_STOP_CONTINUES: usize = 3;

/// Whether this turn starts a session for SessionStart hooks: `startup` for a chat's first
/// turn, `resume` for the first this process runs in an older chat; None otherwise.
fn session_start(env: &TurnEnv<'_>, session_id: i64) -> Result<Option<&'static str>, TurnError> {
    if !env.store.has_messages(session_id)? {
        if let Some(engine) = env.engine {
            engine.started_session(session_id);
        }
        return Ok(Some("startup"));
    }
    Ok(match env.engine {
        Some(engine) if engine.started_session(session_id) => Some("resume"),
        _ => None,
    })
}

/// Fires the turn's hooks of `event` (docs/hooks.md) in its folder, about the call `call`
/// when there is one; nothing when it has none.
pub(crate) async fn fire_hooks(
    cfg: &TurnConfig,
    session_id: i64,
    call: Option<&str>,
    event: crate::hooks::HookEvent,
    subject: Option<crate::hooks::Subject<'_>>,
    input: serde_json::Value,
    emit: Emit<'_>,
) -> crate::hooks::Verdict {
    if cfg.hooks.is_empty() {
        return crate::hooks::Verdict::default();
    }
    // A project's hooks run confined as the chat's commands are (docs/hooks.md).
    let project_sandbox = if cfg.hooks.has_project_hooks() {
        match crate::sandbox::command_sandbox(&cfg.run) {
            skald_api::CommandSandbox::On { helper, policy, .. } => Some((helper, policy)),
            _ => None,
        }
    } else {
        None
    };
    let at = crate::hooks::Fire {
        session_id,
        call,
        cwd: &cfg.run.working_dir,
        hidden_env: &cfg.run.hidden_env,
        project_sandbox,
        emit,
    };
    crate::hooks::fire(&cfg.hooks, event, subject, input, &at).await
}

/// The UserPromptSubmit hooks of one message: what they add for the model, or None when
/// one blocked it — then it is not kept, and the person is told why.
async fn prompt_hooks(
    cfg: &TurnConfig,
    session_id: i64,
    text: &str,
    emit: Emit<'_>,
) -> Option<Vec<String>> {
    let v = fire_hooks(
        cfg,
        session_id,
        None,
        crate::hooks::HookEvent::UserPromptSubmit,
        None,
        serde_json::json!({ "prompt": text }),
        emit,
    )
    .await;
    if let Some(reason) = v.blocked.or(v.stop) {
        emit(Event::Error {
            message: format!("A UserPromptSubmit hook blocked this message: {reason}"),
        });
        return None;
    }
    Some(v.context)
}

/// Stores what hooks added for the model, after the message they ran for.
fn add_hook_context(
    env: &TurnEnv<'_>,
    session_id: i64,
    context: &[String],
) -> Result<(), TurnError> {
    if context.is_empty() {
        return Ok(());
    }
    env.store.append_message(&NewMessage {
        stack_id: env.frame.stack_id,
        ..NewMessage::new(
            session_id,
            Role::System,
            format!("Context from hooks:\n\n{}", context.join("\n\n")),
        )
    })?;
    Ok(())
}
