//! One agent turn: the loop of reference.md "Agent loop" — rebuild the conversation from
//! the store, stream the model's answer (persisting it before showing it), run the tool
//! calls it makes, and go round again until a final answer, a stop, or the round limit.
//!
//! This is the headless core that `skald exec` drives. The approval gate, sub-agents,
//! queued messages and resume after a restart build on it.

use crate::approval::{self, RunContext};
use crate::args::validate_args;
use crate::models::{Health, MAX_FALLBACKS, ModelHealth};
use crate::registry::ToolRegistry;
use crate::tools::{Call, ToolCx};
use futures::StreamExt;
use serde_json::Value;
use skald_api::events::{Event, TurnOutcome};
use skald_api::{
    Audience, CancellationToken, ExecutionOutcome, ToolCallStatus, ToolCategory,
    ToolDescriptionLength, ToolScope, drive_execution, tool_names as tn,
};
use skald_llm::{Message, ModelChoice, Request, ToolCall, ToolChoice, ToolSpec, Usage};
use skald_store::{
    MessageStatus, NewLlmRequest, NewMessage, NewToolCall, RequestStatus, ResultType, Role,
    RuleAction, Store,
};

/// What happens to a call the approval gate says needs a person's yes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalMode {
    /// Reject it; the model is told and the turn goes on (headless default).
    Never,
    /// Run it (headless, the user said so up front).
    All,
    /// Ask through the turn's `ask` callback (a terminal prompt); without one, reject.
    Ask,
    /// Ask in the chat and the Agent Inbox, and wait for the answer (interactive).
    Inbox,
}

/// A question to the person at the terminal: may this call run?
#[derive(Debug, Clone)]
pub struct AskRequest {
    pub tool: String,
    pub label: String,
    pub reason: String,
    pub arguments: Value,
}

/// Answers an `AskRequest`; true means yes.
pub type Ask<'a> =
    &'a (dyn Fn(AskRequest) -> futures::future::BoxFuture<'static, bool> + Send + Sync);

#[derive(Debug, Clone)]
pub struct TurnConfig {
    pub max_rounds: usize,
    /// Tokens the models' context holds; older turns are summarised near it.
    pub context_window: usize,
    pub approval: ApprovalMode,
    /// Permission group, agent, working directory and grants: what the gate decides with.
    pub run: RunContext,
    pub system_prompt: String,
    /// A background session (a task or a cron run): its root delegates with
    /// `execute_subtask` and may `notify`; no one is typing in it.
    pub background: bool,
    /// Whether the turn's first answer must be a tool call (`skald exec --tool-choice`);
    /// later rounds are always the model's choice, or it could never answer.
    pub first_tool_choice: ToolChoice,
}

/// Where events go. Called synchronously, in order.
pub type Emit<'a> = &'a (dyn Fn(Event) + Send + Sync);

#[derive(Debug, thiserror::Error)]
pub enum TurnError {
    #[error("{0}")]
    Store(#[from] skald_store::StoreError),
}

/// Which agent frame of the session a turn runs in: the root agent, or a task agent a
/// delegation started (its messages and calls are stored under its own stack row).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Frame {
    pub stack_id: Option<i64>,
    pub depth: usize,
}

/// Delegation goes no deeper than this (reference.md).
pub const MAX_DEPTH: usize = 5;

/// What a turn runs against.
#[derive(Clone, Copy)]
pub struct TurnEnv<'a> {
    pub store: &'a Store,
    pub registry: &'a ToolRegistry,
    /// The chosen model first, then its fallbacks.
    /// Read at each model call: a provider the user configures applies from the next one.
    pub models: &'a crate::models::ModelList,
    pub health: &'a ModelHealth,
    pub cfg: &'a TurnConfig,
    /// Messages the user sent while the turn ran, taken at the start of each round.
    pub queued: Option<&'a (dyn Fn() -> Vec<String> + Send + Sync)>,
    /// How `ApprovalMode::Ask` asks.
    pub ask: Option<Ask<'a>>,
    /// Where `ApprovalMode::Inbox` asks.
    pub inbox: Option<&'a crate::inbox::Inbox>,
    pub frame: Frame,
    /// The agents a turn may delegate to; without it, no delegation is offered.
    pub library: Option<&'a crate::agents::Library>,
    /// The MCP list shown in delegated agents' prompts.
    pub mcp_list: &'a str,
    /// The engine, for work that outlives the turn (background tasks, schedules,
    /// notifications); without it those are refused with a clear message.
    pub engine: Option<&'a std::sync::Arc<crate::engine::Engine>>,
}

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
    let user = match prompt {
        Some(p) => Some(store.append_message(&NewMessage {
            stack_id: env.frame.stack_id,
            ..NewMessage::new(session_id, Role::User, p)
        })?),
        None => None,
    };
    emit(Event::TurnRunning { session_id });
    if let Some(user) = user {
        emit(Event::UserMessage {
            session_id,
            message_id: user.id,
            text: user.content,
        });
    }
    // Tools the group denies outright are not offered at all (tools.md "Tool Visibility
    // Filtering").
    let mut tools: Vec<ToolSpec> = Vec::new();
    let mut tools_key = None;

    for round in 0..cfg.max_rounds {
        if cancel.is_cancelled() {
            return finish(emit, session_id, TurnOutcome::Cancelled, "");
        }
        inject_queued(env, session_id, emit)?;
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
            if inject_queued(env, session_id, emit)? | take_deliveries(env, session_id, emit)? {
                continue;
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
                args: env.registry.shown_args(
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
    let usable: Vec<&ModelChoice> = models
        .iter()
        .filter(|m| env.health.health(&m.label()) != Health::Down)
        .collect();
    // If every model is down, trying them beats giving up without a call.
    let candidates: Vec<&ModelChoice> = if usable.is_empty() {
        models.iter().collect()
    } else {
        usable
    }
    .into_iter()
    .take(1 + MAX_FALLBACKS)
    .collect();
    let current = conversation(store, session_id, env.cfg, env.frame)?;
    // The first attempt sends the context just built, unless a summary replaced part of
    // it; later attempts rebuild it, since a cut answer has been added to the history.
    let mut prepared =
        if crate::compact::compact_if_needed(env, session_id, &current, cancel, emit).await? {
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
                None => conversation(store, session_id, env.cfg, env.frame)?,
            },
            tools: tools.to_vec(),
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
        let mut stream = match started {
            Ok(s) => s,
            Err(e) => {
                record(RequestStatus::Failed, None, Some(&e.to_string()))?;
                env.health.failed(&label);
                move_on(&e);
                idx += 1;
                continue;
            }
        };
        // The answer is stored as it streams, before each piece is shown: a crash never
        // loses text the user has seen.
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
                    record(RequestStatus::Cancelled, usage, None)?;
                    return Ok(Err(TurnOutcome::Cancelled));
                }
                n = stream.next() => n,
            };
            match next_event {
                None => break None,
                Some(Err(e)) => break Some(e),
                Some(Ok(skald_llm::Event::Text { delta })) => {
                    text.push_str(&delta);
                    store.update_message(
                        msg.id,
                        &text,
                        some(&reasoning),
                        MessageStatus::Streaming,
                    )?;
                    emit(Event::TokenDelta { text: delta });
                }
                Some(Ok(skald_llm::Event::Reasoning { delta })) => {
                    reasoning.push_str(&delta);
                    store.update_message(
                        msg.id,
                        &text,
                        some(&reasoning),
                        MessageStatus::Streaming,
                    )?;
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
        match failure {
            None => {
                store.update_message(msg.id, &text, some(&reasoning), MessageStatus::Complete)?;
                record(RequestStatus::Ok, usage, None)?;
                env.health.succeeded(&label);
                return Ok(Ok((msg.id, text, calls)));
            }
            Some(e) => {
                store.update_message(
                    msg.id,
                    &text,
                    some(&reasoning),
                    MessageStatus::Interrupted,
                )?;
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

/// Sync delegations of one reply that run at the same time, at most (reference.md).
const MAX_PARALLEL_DELEGATIONS: usize = 4;

/// Runs a reply's calls: the ordinary ones one after the other in the order the model
/// wrote them, then — when there are two or more — its delegations concurrently, at most
/// four at a time. Every call was stored in call order before any ran, so the history
/// keeps that order however the delegations finish. Returns whether the turn was stopped;
/// calls that never started are then marked cancelled.
async fn run_calls(
    env: &TurnEnv<'_>,
    session_id: i64,
    calls: &[ToolCall],
    cancel: &CancellationToken,
    emit: Emit<'_>,
) -> Result<bool, TurnError> {
    let is_delegation =
        |c: &&ToolCall| env.registry.category_of(&c.name) == Some(ToolCategory::Subagent);
    let delegations: Vec<&ToolCall> = calls.iter().filter(is_delegation).collect();
    let (sequential, parallel): (Vec<&ToolCall>, Vec<&ToolCall>) = if delegations.len() >= 2 {
        (
            calls.iter().filter(|c| !is_delegation(c)).collect(),
            delegations,
        )
    } else {
        (calls.iter().collect(), Vec::new())
    };
    let mut started = std::collections::HashSet::new();
    let mut stopped = false;
    for call in sequential {
        started.insert(call.id.clone());
        if run_call(env, session_id, call, cancel, emit).await? {
            stopped = true;
            break;
        }
    }
    if !stopped && !parallel.is_empty() {
        use futures::StreamExt;
        started.extend(parallel.iter().map(|c| c.id.clone()));
        // Boxed one by one: a stream built from a closure over borrowed calls would not
        // prove `Send` for the higher-ranked lifetimes involved.
        let runs: Vec<futures::future::BoxFuture<'_, Result<bool, TurnError>>> = parallel
            .into_iter()
            .map(|call| {
                Box::pin(run_call(env, session_id, call, cancel, emit))
                    as futures::future::BoxFuture<'_, Result<bool, TurnError>>
            })
            .collect();
        let results: Vec<Result<bool, TurnError>> = futures::stream::iter(runs)
            .buffer_unordered(MAX_PARALLEL_DELEGATIONS)
            .collect()
            .await;
        for r in results {
            stopped |= r?;
        }
    }
    if stopped {
        for rest in calls.iter().filter(|c| !started.contains(&c.id)) {
            mark_cancelled(env.store, session_id, &rest.id, emit)?;
        }
    }
    Ok(stopped)
}

/// What the offered tools depend on besides the registry and the rules (fixed during a
/// turn): the agent's grants, the MCP servers' state, whether image generation is on.
fn tools_key_now(
    env: &TurnEnv<'_>,
    session_id: i64,
) -> Result<(Vec<String>, u64, bool), TurnError> {
    Ok((
        env.store.granted_groups(session_id, env.frame.stack_id)?,
        env.engine.map_or(0, |e| e.mcp.manager.generation()),
        env.engine
            .is_some_and(|e| e.plugins.images.provider().is_some()),
    ))
}

/// The tools offered this round, less those the group denies outright (tools.md "Tool
/// Visibility Filtering"); every offered name is recorded for the approval UI.
fn turn_tools(env: &TurnEnv<'_>, session_id: i64) -> Result<Vec<ToolSpec>, TurnError> {
    let granted = env.store.granted_groups(session_id, env.frame.stack_id)?;
    let config = granted.iter().any(|g| g == tn::CONFIG_GROUP);
    let mut tools = offered_tools(env, config);
    if let Some(engine) = env.engine {
        tools.extend(engine.mcp.offered(&granted));
    }
    let hidden = approval::hidden_tools(
        env.store,
        &env.cfg.run,
        tools.iter().map(|t| t.name.as_str()),
    );
    tools.retain(|t| !hidden.contains(&t.name));
    crate::discovery::observe(
        env.store,
        tools.iter().map(|t| {
            let source = if t.name.starts_with(crate::mcp::PREFIX) {
                "mcp"
            } else {
                "builtin"
            };
            (t.name.as_str(), source)
        }),
    );
    Ok(tools)
}

/// The tools a frame is offered (tools.md "Tool Visibility Filtering"): each registered
/// tool says whether it is for this agent — its depth, whether anyone is watching, whether
/// it activated the `config` group.
fn offered_tools(env: &TurnEnv<'_>, config: bool) -> Vec<ToolSpec> {
    let system = env.library.is_some_and(|l| {
        l.get(&env.cfg.run.agent_id)
            .is_ok_and(|a| a.meta.kind == crate::agents::AgentKind::System)
    });
    let who = Audience {
        depth: env.frame.depth,
        background: env.cfg.background,
        system,
        config,
        images: env
            .engine
            .is_some_and(|e| e.plugins.images.provider().is_some()),
        delegation: env.library.is_some(),
    };
    env.registry
        .offered(&who)
        .iter()
        .filter_map(ToolSpec::from_openai)
        .collect()
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

/// Puts a call that needs approval in the Agent Inbox (its row `pending`) and waits for
/// the answer. A call resumed after a restart finds the item it already has.
async fn ask_inbox(
    env: &TurnEnv<'_>,
    session_id: i64,
    call: &ToolCall,
    args: &Value,
    reason: &str,
    cancel: &CancellationToken,
    emit: Emit<'_>,
) -> Result<crate::inbox::Outcome, TurnError> {
    let (store, registry, cfg) = (env.store, env.registry, env.cfg);
    let Some(inbox) = env.inbox else {
        return Ok(crate::inbox::Outcome::Rejected("no inbox to ask in".into()));
    };
    let label = registry.describe_call(&call.name, args, ToolDescriptionLength::Full);
    let item = match store.inbox_item_for_call(
        session_id,
        &call.id,
        skald_store::InboxKind::Approval,
    )? {
        Some(existing) => existing,
        None => {
            store.set_tool_call_status(session_id, &call.id, ToolCallStatus::Pending, None)?;
            inbox.request(
                store,
                &skald_store::NewInboxItem {
                    session_id,
                    kind: skald_store::InboxKind::Approval,
                    tool_call_id: Some(call.id.clone()),
                    agent_id: cfg.run.agent_id.clone(),
                    depth: i64::try_from(env.frame.depth).unwrap_or(i64::MAX),
                    title: label.clone(),
                    payload: serde_json::json!({
                        "tool": call.name,
                        "arguments": registry.shown_args(&call.name, args.clone()),
                        "label": label,
                        "reason": reason,
                        // For "bypass this category" (MCP tools have none: their server is
                        // the scope).
                        "category": registry.category_of(&call.name),
                        "write": crate::approval::write_preview(&call.name, args, &cfg.run.working_dir),
                    }),
                },
                emit,
            )?
        }
    };
    emit(Event::ApprovalRequired {
        tool_call_id: call.id.clone(),
        name: call.name.clone(),
        arguments: registry.shown_args(&call.name, args.clone()),
        label,
        reason: reason.to_string(),
        inbox_id: item.id,
    });
    let outcome = inbox.wait(store, item.id, cancel).await?;
    if matches!(
        outcome,
        crate::inbox::Outcome::Approved | crate::inbox::Outcome::Answered(_)
    ) {
        store.set_tool_call_status(session_id, &call.id, ToolCallStatus::Running, None)?;
    }
    Ok(outcome)
}

/// Stores the messages queued while the turn ran as user messages. Returns whether there
/// were any.
fn inject_queued(env: &TurnEnv<'_>, session_id: i64, emit: Emit<'_>) -> Result<bool, TurnError> {
    let Some(take) = env.queued else {
        return Ok(false);
    };
    let texts = take();
    for text in &texts {
        let m = env.store.append_message(&NewMessage {
            stack_id: env.frame.stack_id,
            ..NewMessage::new(session_id, Role::User, text.as_str())
        })?;
        emit(Event::UserMessage {
            session_id,
            message_id: m.id,
            text: text.clone(),
        });
    }
    Ok(!texts.is_empty())
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

fn parse_args(raw: &str) -> Result<Value, String> {
    let raw = if raw.trim().is_empty() { "{}" } else { raw };
    match serde_json::from_str::<Value>(raw) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(_) => Err("the arguments must be a JSON object".to_string()),
        Err(e) => Err(format!("the arguments are not valid JSON ({e})")),
    }
}

/// Records a call's result and says so; `Ok(false)`: the turn goes on.
fn mark_done(
    store: &Store,
    session_id: i64,
    call_id: &str,
    text: String,
    emit: Emit<'_>,
) -> Result<bool, TurnError> {
    store.set_tool_call_status(
        session_id,
        call_id,
        ToolCallStatus::Done,
        Some((&text, ResultType::Text)),
    )?;
    emit(Event::ToolDone {
        tool_call_id: call_id.to_string(),
        result: text,
    });
    Ok(false)
}

/// Fails a call of a tool this agent was not offered this round, saying how to get it when
/// there is a way.
fn refuse_unoffered(
    env: &TurnEnv<'_>,
    session_id: i64,
    call: &ToolCall,
    emit: Emit<'_>,
) -> Result<(), TurnError> {
    let (store, registry) = (env.store, env.registry);
    let config_tool = registry.is_engine_tool(&call.name)
        && registry.category_of(&call.name) == Some(ToolCategory::Config)
        && call.name != tn::ACTIVATE_TOOLS;
    let message = if config_tool {
        format!(
            "`{}` is one of Skald's configuration tools; call activate_tools with groups \
             [\"config\"] first, then use it from your next step",
            call.name
        )
    } else {
        format!(
            "`{}` is not among the tools you have; use one of those",
            call.name
        )
    };
    emit(Event::ToolStart {
        tool_call_id: call.id.clone(),
        name: call.name.clone(),
        arguments: registry.shown_args(
            &call.name,
            parse_args(&call.arguments).unwrap_or(Value::Null),
        ),
        label_short: call.name.clone(),
        label_full: call.name.clone(),
        path: None,
    });
    mark_failed(store, session_id, &call.id, message, emit)?;
    Ok(())
}

/// Records a call as failed with `message` and says so; `Ok(false)`: the turn goes on.
fn mark_failed(
    store: &Store,
    session_id: i64,
    call_id: &str,
    message: String,
    emit: Emit<'_>,
) -> Result<bool, TurnError> {
    store.set_tool_call_status(
        session_id,
        call_id,
        ToolCallStatus::Failed,
        Some((&message, ResultType::Error)),
    )?;
    emit(Event::ToolError {
        tool_call_id: call_id.to_string(),
        error: message,
    });
    Ok(false)
}

/// Records a call as stopped by /stop and says so; `Ok(true)` tells the turn to end.
fn mark_cancelled(
    store: &Store,
    session_id: i64,
    call_id: &str,
    emit: Emit<'_>,
) -> Result<bool, TurnError> {
    store.set_tool_call_status(session_id, call_id, ToolCallStatus::Cancelled, None)?;
    emit(Event::ToolCancelled {
        tool_call_id: call_id.to_string(),
    });
    Ok(true)
}

/// A call resumed after a restart may still have the approval item an earlier run put in
/// the Inbox. If this run decided without it (another approval mode, a rule added since),
/// the item is retired so the Inbox does not keep asking about a call that has moved on.
fn retire_stale_approval(
    store: &Store,
    session_id: i64,
    call_id: &str,
    emit: Emit<'_>,
) -> Result<(), TurnError> {
    let Some(item) =
        store.inbox_item_for_call(session_id, call_id, skald_store::InboxKind::Approval)?
    else {
        return Ok(());
    };
    if item.status != skald_store::InboxStatus::Pending {
        return Ok(());
    }
    match store.resolve_inbox_item(item.id, skald_store::InboxStatus::Cancelled, None) {
        Ok(resolved) => {
            emit(Event::InboxResolved {
                id: item.id,
                session_id,
                status: serde_json::to_value(resolved.status).unwrap_or_default(),
            });
            Ok(())
        }
        // Someone answered it in the meantime; this run's decision stands all the same.
        Err(skald_store::StoreError::AlreadyFinal { .. }) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Runs one stored call to its final status. Returns true when the turn was stopped.
pub(crate) async fn run_call(
    env: &TurnEnv<'_>,
    session_id: i64,
    call: &ToolCall,
    cancel: &CancellationToken,
    emit: Emit<'_>,
) -> Result<bool, TurnError> {
    let (store, registry) = (env.store, env.registry);
    let parsed = parse_args(&call.arguments);
    let shown = registry.shown_args(&call.name, parsed.clone().unwrap_or(Value::Null));
    emit(Event::ToolStart {
        tool_call_id: call.id.clone(),
        name: call.name.clone(),
        arguments: shown.clone(),
        label_short: registry.describe_call(&call.name, &shown, ToolDescriptionLength::Short),
        label_full: registry.describe_call(&call.name, &shown, ToolDescriptionLength::Full),
        path: registry.target_path(&call.name, &shown),
    });
    // Secret values never reach the model or the store through a result.
    let redact = |text: String| match env.engine {
        Some(engine) => engine.redact(&text),
        None => text,
    };
    let fail = |message: String| -> Result<bool, TurnError> {
        mark_failed(store, session_id, &call.id, redact(message), emit)
    };
    let args = match parsed {
        Ok(a) => a,
        Err(e) => {
            return fail(format!(
                "{e}. Call the tool again with a JSON object that matches its parameters."
            ));
        }
    };
    let schema = match schema_of(env, &call.name) {
        Ok(schema) => schema,
        Err(message) => return fail(message),
    };
    if let Err(e) = validate_args(&schema, &args) {
        return fail(e.to_string());
    }
    let gate = gate(env, session_id, call, &args, cancel, emit).await?;
    if gate == Gate::Cancelled {
        return mark_cancelled(store, session_id, &call.id, emit);
    }
    retire_stale_approval(store, session_id, &call.id, emit)?;
    if let Gate::Rejected(reason) = gate {
        store.set_tool_call_status(
            session_id,
            &call.id,
            ToolCallStatus::Rejected,
            Some((&reason, ResultType::Text)),
        )?;
        emit(Event::ToolRejected {
            tool_call_id: call.id.clone(),
            reason,
        });
        return Ok(false);
    }
    // A stopped turn starts no more calls, whatever kind of tool they are.
    if cancel.is_cancelled() {
        return mark_cancelled(store, session_id, &call.id, emit);
    }
    let outcome = match (crate::mcp::split_name(&call.name), env.engine) {
        (Some((server, tool)), Some(engine)) if !registry.contains(&call.name) => {
            run_mcp(
                engine, session_id, call, server, tool, args, cancel, emit, &redact,
            )
            .await
        }
        _ => run_tool(env, session_id, call, args, cancel, emit).await?,
    };
    match outcome {
        ExecutionOutcome::Completed(text) => {
            mark_done(store, session_id, &call.id, redact(text), emit)
        }
        ExecutionOutcome::Failed(message) => fail(message),
        ExecutionOutcome::Cancelled => mark_cancelled(store, session_id, &call.id, emit),
    }
}

/// The argument schema of the tool `name`, or why there is no such tool to call.
fn schema_of(env: &TurnEnv<'_>, name: &str) -> Result<Value, String> {
    if let Some(tool) = env.registry.get(name) {
        return Ok(tool.parameters_schema());
    }
    match (crate::mcp::split_name(name), env.engine) {
        (Some((server, _)), Some(engine)) => engine.mcp.schema(name).ok_or_else(|| {
            let status = engine
                .mcp
                .manager
                .status(server)
                .map_or_else(|| "not registered".to_string(), |s| s.describe());
            format!("`{name}` is not available: MCP server `{server}` is {status}")
        }),
        _ => Err(format!("there is no tool named `{name}`")),
    }
}

/// What the approval gate decided for a call.
#[derive(Debug, PartialEq, Eq)]
enum Gate {
    Run,
    /// Denied by a rule or by the person asked; the reason is the call's result.
    Rejected(String),
    /// The turn was stopped while the person was being asked.
    Cancelled,
}

/// Asks the approval gate about a call and, when a person's yes is needed, asks for it
/// the way this run asks: the Inbox, the terminal, or not at all.
async fn gate(
    env: &TurnEnv<'_>,
    session_id: i64,
    call: &ToolCall,
    args: &Value,
    cancel: &CancellationToken,
    emit: Emit<'_>,
) -> Result<Gate, TurnError> {
    let (store, registry, cfg) = (env.store, env.registry, env.cfg);
    let decision = approval::check(store, &cfg.run, &call.name, args);
    let rejected = |reason: &str| {
        Gate::Rejected(format!(
            "User rejected this tool call. Reason: {}",
            match reason.trim() {
                "" => "no reason given",
                r => r,
            }
        ))
    };
    Ok(match decision.action {
        RuleAction::Allow => Gate::Run,
        RuleAction::Deny => Gate::Rejected(format!(
            "This tool call was denied by the user's approval rules: {}. Do not retry it; \
             find another way or ask the user.",
            decision.reason
        )),
        RuleAction::Require => match (cfg.approval, env.ask) {
            (ApprovalMode::All, _) => Gate::Run,
            // A bypass granted from an earlier answer covers it.
            _ if env
                .inbox
                .is_some_and(|i| i.bypasses.covers(session_id, &call.name, registry)) =>
            {
                Gate::Run
            }
            (ApprovalMode::Inbox, _) if env.inbox.is_some() => {
                match ask_inbox(env, session_id, call, args, &decision.reason, cancel, emit).await?
                {
                    crate::inbox::Outcome::Approved => Gate::Run,
                    // An approval is never answered with text (Inbox::answer refuses it).
                    crate::inbox::Outcome::Answered(_) => rejected("no approval was given"),
                    crate::inbox::Outcome::Rejected(note) => rejected(&note),
                    crate::inbox::Outcome::Cancelled => Gate::Cancelled,
                }
            }
            (ApprovalMode::Ask, Some(ask)) => {
                let asking = ask(AskRequest {
                    tool: call.name.clone(),
                    label: registry.describe_call(&call.name, args, ToolDescriptionLength::Full),
                    reason: decision.reason.clone(),
                    arguments: registry.shown_args(&call.name, args.clone()),
                });
                // Ctrl-C while the prompt waits stops the turn, as it does anywhere else.
                tokio::select! {
                    biased;
                    _ = cancel.cancelled() => Gate::Cancelled,
                    yes = asking => match yes {
                        true => Gate::Run,
                        false => rejected("declined when asked."),
                    },
                }
            }
            (ApprovalMode::Never | ApprovalMode::Ask | ApprovalMode::Inbox, _) => {
                Gate::Rejected(format!(
                    "User rejected this tool call. Reason: it needs approval ({}) and this \
                     headless run does not give it (--approve never).",
                    decision.reason
                ))
            }
        },
    })
}

/// Runs a registered tool through `drive_execution`, in the run's folder, with the
/// paths the rules deny kept out of its walks. The turn's context goes to tools that act
/// on the session; an engine error one of them met ends the turn.
async fn run_tool(
    env: &TurnEnv<'_>,
    session_id: i64,
    call: &ToolCall,
    args: Value,
    cancel: &CancellationToken,
    emit: Emit<'_>,
) -> Result<ExecutionOutcome, TurnError> {
    let cx = ToolCx::new(Call {
        store: env.store,
        session_id,
        stack_id: env.frame.stack_id,
        library: env.library,
        engine: env.engine,
        call_id: &call.id,
        cancel,
        emit,
        turn: Some(env),
    });
    let Some(exec) = env.registry.run(&call.name, &cx, args) else {
        return Ok(ExecutionOutcome::Failed(format!(
            "there is no tool named `{}`",
            call.name
        )));
    };
    let outcome = ToolScope::new(&env.cfg.run.working_dir)
        .with_excluded(approval::denied_paths(env.store, &env.cfg.run, &call.name))
        .run(drive_execution(exec.as_ref(), cancel))
        .await;
    drop(exec);
    match cx.take_fatal() {
        Some(e) => Err(e),
        None => Ok(outcome),
    }
}

/// Calls an MCP server's tool, its progress shown as it comes (redacted like results).
#[allow(clippy::too_many_arguments)]
async fn run_mcp(
    engine: &std::sync::Arc<crate::engine::Engine>,
    session_id: i64,
    call: &ToolCall,
    server: &str,
    tool: &str,
    args: Value,
    cancel: &CancellationToken,
    emit: Emit<'_>,
    redact: &(dyn Fn(String) -> String + Sync),
) -> ExecutionOutcome {
    let _active = engine.mcp.enter(server, session_id);
    let progress = |p: skald_mcp::Progress| {
        emit(Event::ToolProgress {
            tool_call_id: call.id.clone(),
            progress: p.progress,
            total: p.total,
            message: p.message.map(redact),
        })
    };
    let arguments = match args {
        Value::Object(m) => m,
        _ => serde_json::Map::new(),
    };
    match engine
        .mcp
        .manager
        .call(server, tool, arguments, cancel, &progress)
        .await
    {
        Ok(out) if !out.is_error => ExecutionOutcome::Completed(out.text),
        Ok(out) => ExecutionOutcome::Failed(format!("the MCP tool failed: {}", out.text)),
        Err(skald_mcp::McpError::Cancelled) => ExecutionOutcome::Cancelled,
        Err(e) => ExecutionOutcome::Failed(e.to_string()),
    }
}

/// The conversation as the model must see it, in the order of reference.md: the static
/// system part, the history with every tool call of an assistant message followed by its
/// result, then the short dynamic tail (time, OS, working directory). Keeping what changes
/// at the end keeps the long prefix cacheable by providers.
fn conversation(
    store: &Store,
    session_id: i64,
    cfg: &TurnConfig,
    frame: Frame,
) -> Result<Vec<Message>, TurnError> {
    let mut out = vec![Message::system(cfg.system_prompt.clone())];
    // A summary stands in for the turns it covers (reference.md: after the system part
    // and the scratchpad, before the history). Summaries are of the root conversation; a
    // task agent's own conversation is short-lived.
    let summary = match frame.stack_id {
        None => store.latest_summary(session_id)?,
        Some(_) => None,
    };
    let covered = summary.as_ref().map_or(0, |s| s.up_to_message_id);
    if let Some(s) = summary {
        out.push(Message::system(format!(
            "Summary of the earlier part of this conversation:\n\n{}",
            s.summary
        )));
    }
    let calls = store.list_tool_calls(session_id)?;
    if let Some(board) = crate::tools::scratchpad_message(store, session_id)? {
        out.insert(1, Message::system(board));
    }
    for m in store
        .list_messages(session_id)?
        .into_iter()
        .filter(|m| m.id > covered && m.stack_id == frame.stack_id)
    {
        match m.role {
            Role::System => out.push(Message::system(m.content)),
            Role::User => out.push(Message::user(m.content)),
            Role::Tool => {}
            Role::Assistant => {
                let mine: Vec<_> = calls
                    .iter()
                    .filter(|c| c.message_id == Some(m.id))
                    .collect();
                if m.content.is_empty() && mine.is_empty() {
                    continue;
                }
                out.push(Message::assistant(
                    m.content.clone(),
                    mine.iter()
                        .map(|c| ToolCall {
                            id: c.tool_call_id.clone(),
                            name: c.name.clone(),
                            arguments: match &c.args {
                                Value::String(raw) => raw.clone(),
                                v => v.to_string(),
                            },
                        })
                        .collect(),
                ));
                for c in mine {
                    out.push(Message::tool_result(c.tool_call_id.clone(), result_text(c)));
                }
            }
        }
    }
    out.push(Message::system(crate::agents::dynamic_tail(
        std::time::SystemTime::now(),
        &cfg.run.working_dir,
    )));
    Ok(out)
}

/// What the model reads as a call's result, whatever became of it.
fn result_text(c: &skald_store::ToolCallRecord) -> String {
    let result = c.result.clone().unwrap_or_default();
    match c.status {
        ToolCallStatus::Done | ToolCallStatus::Rejected => result,
        ToolCallStatus::Failed => format!("Error: {result}"),
        ToolCallStatus::Cancelled => {
            "The user stopped this tool call before it finished.".to_string()
        }
        ToolCallStatus::Interrupted if !result.is_empty() => result,
        ToolCallStatus::Interrupted => {
            "Skald stopped while this call was running; it did not complete and was not re-run."
                .to_string()
        }
        ToolCallStatus::Running | ToolCallStatus::Pending => {
            "This tool call did not complete.".to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::Library;
    use crate::models::ModelHealth;

    /// What a turn borrows, owned by the test.
    struct Fixture {
        data: tempfile::TempDir,
        store: Store,
        session_id: i64,
        registry: ToolRegistry,
        models: crate::models::ModelList,
        health: ModelHealth,
    }

    impl Fixture {
        fn new() -> Self {
            let store = Store::open_in_memory().unwrap();
            let session_id = store
                .create_session(&skald_store::NewSession::default())
                .unwrap()
                .id;
            Fixture {
                data: tempfile::tempdir().unwrap(),
                store,
                session_id,
                registry: crate::builtin_registry().unwrap(),
                models: crate::models::ModelList::new(vec![
                    skald_llm::from_env(Some("openai/unused"), |_| None).unwrap(),
                ]),
                health: ModelHealth::default(),
            }
        }

        fn cfg(&self, approval: ApprovalMode, agent_id: &str) -> TurnConfig {
            TurnConfig {
                max_rounds: 1,
                context_window: 128_000,
                approval,
                run: RunContext {
                    group: "default".into(),
                    agent_id: agent_id.into(),
                    working_dir: self.data.path().to_path_buf(),
                    ..RunContext::default()
                },
                system_prompt: String::new(),
                background: false,
                first_tool_choice: skald_llm::ToolChoice::Auto,
            }
        }

        fn env<'a>(&'a self, cfg: &'a TurnConfig) -> TurnEnv<'a> {
            TurnEnv {
                store: &self.store,
                registry: &self.registry,
                models: &self.models,
                health: &self.health,
                cfg,
                queued: None,
                ask: None,
                inbox: None,
                frame: Frame::default(),
                library: None,
                mcp_list: "",
                engine: None,
            }
        }
    }

    #[tokio::test]
    async fn delegation_stops_at_the_depth_limit() {
        let fx = Fixture::new();
        let library = Library::load(fx.data.path()).unwrap();
        let cfg = fx.cfg(ApprovalMode::Never, "software-engineer");
        let mut env = TurnEnv {
            frame: Frame {
                stack_id: Some(1),
                depth: MAX_DEPTH - 1,
            },
            library: Some(&library),
            ..fx.env(&cfg)
        };
        let names = |env: &TurnEnv<'_>| {
            offered_tools(env, false)
                .into_iter()
                .map(|t| t.name)
                .collect::<Vec<_>>()
        };
        assert!(names(&env).contains(&tn::EXECUTE_SUBTASK.to_string()));
        assert!(!names(&env).contains(&tn::EXECUTE_TASK.to_string()));
        env.frame.depth = MAX_DEPTH;
        assert!(
            !names(&env).contains(&tn::EXECUTE_SUBTASK.to_string()),
            "not offered at the limit"
        );
        // Called anyway, it is refused before anything runs.
        let cancel = CancellationToken::new();
        let cx = ToolCx::new(Call {
            store: env.store,
            session_id: fx.session_id,
            stack_id: env.frame.stack_id,
            library: env.library,
            engine: None,
            call_id: "d",
            cancel: &cancel,
            emit: &|_| {},
            turn: Some(&env),
        });
        let args = serde_json::json!({"agent_id": "researcher", "prompt": "go"});
        let exec = env.registry.run(tn::EXECUTE_SUBTASK, &cx, args).unwrap();
        let out = exec.wait().await;
        assert!(matches!(out, ExecutionOutcome::Failed(m) if m.contains("at most 5 levels")));
    }

    #[tokio::test]
    async fn stop_while_the_prompt_waits_cancels_the_call() {
        let fx = Fixture::new();
        let cfg = fx.cfg(ApprovalMode::Ask, "main");
        // A person who never answers.
        let ask = |_req: AskRequest| -> futures::future::BoxFuture<'static, bool> {
            Box::pin(futures::future::pending())
        };
        let env = TurnEnv {
            ask: Some(&ask),
            ..fx.env(&cfg)
        };
        let (store, session) = (&fx.store, fx.session_id);
        store
            .insert_tool_call(&skald_store::NewToolCall {
                tool_call_id: "c1".into(),
                session_id: session,
                stack_id: None,
                message_id: None,
                name: tn::EXECUTE_CMD.into(),
                args: serde_json::json!({"command": "touch made"}),
                status: ToolCallStatus::Running,
            })
            .unwrap();
        let call = ToolCall {
            id: "c1".into(),
            name: tn::EXECUTE_CMD.into(),
            arguments: r#"{"command": "touch made"}"#.into(),
        };
        let cancel = CancellationToken::new();
        let stopper = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            stopper.cancel();
        });
        let stopped = tokio::time::timeout(
            std::time::Duration::from_secs(30),
            run_call(&env, session, &call, &cancel, &|_| {}),
        )
        .await
        .expect("the prompt gave way to the stop")
        .unwrap();
        assert!(stopped);
        let calls = store.list_tool_calls(session).unwrap();
        assert_eq!(calls[0].status, ToolCallStatus::Cancelled);
        assert!(!fx.data.path().join("made").exists());
    }
}
