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
use futures::StreamExt;
use serde_json::Value;
use skald_api::events::{Event, TurnOutcome};
use skald_api::{
    CancellationToken, ExecutionOutcome, ToolCallStatus, ToolDescriptionLength, ToolScope,
    drive_execution, tool_names as tn,
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
                args: match parse_args(&call.arguments) {
                    Ok(args) => crate::interface::shown_args(&call.name, args),
                    // Unreadable arguments are kept for the model to see its mistake —
                    // except a secret's, which are kept nowhere.
                    Err(_) if call.name == tn::SET_SECRET => {
                        Value::String(crate::interface::HIDDEN_VALUE.to_string())
                    }
                    Err(_) => Value::String(call.arguments.clone()),
                },
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
            refuse_unoffered(store, session_id, call, emit)?;
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
        |c: &&ToolCall| matches!(c.name.as_str(), tn::EXECUTE_TASK | tn::EXECUTE_SUBTASK);
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

enum Delegated {
    Answer(String),
    Failed(String),
    Cancelled,
}

/// Runs a task agent inline on a child frame — same session, same cancel token, the
/// parent's run context — and returns its final answer as the delegating call's result.
///
/// It returns a boxed `Send` future: a turn awaits its delegations and a delegation awaits
/// a turn, and naming the type here is what lets the compiler see the cycle is `Send`.
fn delegate<'a, 'b: 'a>(
    env: &'a TurnEnv<'b>,
    session_id: i64,
    call: &'a ToolCall,
    args: &'a Value,
    cancel: &'a CancellationToken,
    emit: Emit<'a>,
) -> futures::future::BoxFuture<'a, Result<Delegated, TurnError>> {
    Box::pin(delegate_inner(env, session_id, call, args, cancel, emit))
}

async fn delegate_inner(
    env: &TurnEnv<'_>,
    session_id: i64,
    call: &ToolCall,
    args: &Value,
    cancel: &CancellationToken,
    emit: Emit<'_>,
) -> Result<Delegated, TurnError> {
    let text = |k: &str| {
        args.get(k)
            .and_then(Value::as_str)
            .unwrap_or("")
            .trim()
            .to_string()
    };
    let Some(library) = env.library else {
        return Ok(Delegated::Failed("delegation is not available here".into()));
    };
    // execute_task belongs to the root of an interactive chat; everywhere else (task
    // agents, background sessions) delegation is execute_subtask.
    let chat_root = env.frame.depth == 0 && !env.cfg.background;
    if call.name == tn::EXECUTE_TASK && !chat_root {
        return Ok(Delegated::Failed(
            "execute_task is for the root agent of a chat; use execute_subtask".into(),
        ));
    }
    if call.name == tn::EXECUTE_SUBTASK && chat_root {
        return Ok(Delegated::Failed(
            "execute_subtask is for task agents; use execute_task".into(),
        ));
    }
    let depth = env.frame.depth + 1;
    if depth > MAX_DEPTH {
        return Ok(Delegated::Failed(format!(
            "delegation goes at most {MAX_DEPTH} levels deep"
        )));
    }
    if call.name == tn::EXECUTE_TASK {
        let mode = text("mode");
        let later = match mode.as_str() {
            "sync" => None,
            "async" | "cron" => Some(mode.as_str()),
            other => {
                return Ok(Delegated::Failed(format!(
                    "unknown mode `{other}`: use sync, async or cron"
                )));
            }
        };
        if let Some(mode) = later {
            let Some(engine) = env.engine else {
                return Ok(Delegated::Failed(format!(
                    "mode `{mode}` needs work to outlive this turn, which this run cannot do; \
                     use mode \"sync\""
                )));
            };
            let started = if mode == "async" {
                engine
                    .start_task(session_id, &call.id, &env.cfg.run, args)
                    .map(|task_id| {
                        serde_json::json!({"task_id": task_id, "status": "started"}).to_string()
                    })
            } else {
                crate::cron::schedule_from_chat(engine, session_id, &env.cfg.run, args)
            };
            return Ok(match started {
                Ok(text) => Delegated::Answer(text),
                Err(e) => Delegated::Failed(e),
            });
        }
    }
    let agent_id = text("agent_id");
    let agent = match library.get(&agent_id) {
        Ok(a) => a,
        Err(e) => return Ok(Delegated::Failed(e.to_string())),
    };
    if agent.meta.kind != crate::agents::AgentKind::Task {
        return Ok(Delegated::Failed(format!(
            "`{agent_id}` is not a task agent"
        )));
    }
    if agent_id == env.cfg.run.agent_id {
        return Ok(Delegated::Failed(
            "an agent cannot delegate to itself".into(),
        ));
    }
    // A sub-agent starts with no servers active (its grants are its own frame's).
    let mcp_list = match env.engine {
        Some(engine) => engine.mcp.prompt_list(env.store, &[]),
        None => env.mcp_list.to_string(),
    };
    let system_prompt = match library.system_prompt(&agent_id, &mcp_list) {
        Ok(p) => p,
        Err(e) => return Ok(Delegated::Failed(e.to_string())),
    };
    let stack_id =
        env.store
            .create_stack_frame(session_id, env.frame.stack_id, &call.id, &agent_id, depth)?;
    emit(Event::AgentStart {
        stack_id,
        agent_id: agent_id.clone(),
        depth,
    });
    let child_cfg = TurnConfig {
        system_prompt,
        run: RunContext {
            agent_id: agent_id.clone(),
            ..env.cfg.run.clone()
        },
        ..env.cfg.clone()
    };
    let child = TurnEnv {
        cfg: &child_cfg,
        frame: Frame {
            stack_id: Some(stack_id),
            depth,
        },
        queued: None,
        ..*env
    };
    // The child's own turn events stand inside agent_start/agent_done; its `done` is the
    // delegating call's result, not the end of the user's turn.
    let answer: std::sync::Mutex<String> = std::sync::Mutex::new(String::new());
    let child_emit = |e: Event| match e {
        Event::Done { text, .. } => *answer.lock().unwrap_or_else(|p| p.into_inner()) = text,
        Event::TurnRunning { .. } | Event::UserMessage { .. } => {}
        other => emit(other),
    };
    let outcome = run_turn(
        &child,
        session_id,
        Some(&text("prompt")),
        cancel,
        &child_emit,
    )
    .await?;
    emit(Event::AgentDone {
        stack_id,
        agent_id: agent_id.clone(),
        outcome,
    });
    let answer = answer.into_inner().unwrap_or_else(|p| p.into_inner());
    Ok(match outcome {
        TurnOutcome::Final => Delegated::Answer(answer),
        TurnOutcome::Cancelled => Delegated::Cancelled,
        TurnOutcome::Exhausted => Delegated::Failed(format!(
            "{agent_id} reached its round limit without an answer"
        )),
        TurnOutcome::Failed => Delegated::Failed(format!("{agent_id} could not reach a model")),
    })
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

/// The tools a frame is offered (tools.md "Tool Visibility Filtering"): the root agent gets
/// the registry's root tools and `execute_task`; a task agent gets the sub-agent tools and,
/// while it may still delegate, `execute_subtask`. Engine tools go to every agent.
fn offered_tools(env: &TurnEnv<'_>, config: bool) -> Vec<ToolSpec> {
    let registry = env.registry;
    let root = env.frame.depth == 0;
    let mut defs: Vec<Value> = if root {
        registry.openai_definitions()
    } else {
        let root_only = registry.root_agent_only_names();
        registry
            .openai_definitions()
            .into_iter()
            .filter(|d| {
                let name = d["function"]["name"].as_str().unwrap_or("");
                !root_only.iter().any(|r| r == name)
            })
            .chain(registry.openai_definitions_sub_agents_only())
            .collect()
    };
    defs.sort_by(|a, b| {
        a["function"]["name"]
            .as_str()
            .cmp(&b["function"]["name"].as_str())
    });
    let mut tools: Vec<ToolSpec> = defs.iter().filter_map(ToolSpec::from_openai).collect();
    let system = env.library.is_some_and(|l| {
        l.get(&env.cfg.run.agent_id)
            .is_ok_and(|a| a.meta.kind == crate::agents::AgentKind::System)
    });
    tools.extend(crate::interface::offered(crate::interface::Offer {
        root,
        background: env.cfg.background,
        system,
        config,
        images: env
            .engine
            .is_some_and(|e| e.plugins.images.provider().is_some()),
    }));
    if env.library.is_some() {
        let delegate = if root && !env.cfg.background {
            Some(skald_api::tool_names::EXECUTE_TASK)
        } else if env.frame.depth < MAX_DEPTH {
            Some(skald_api::tool_names::EXECUTE_SUBTASK)
        } else {
            None
        };
        tools.extend(
            crate::synthetic::synthetic_tools()
                .into_iter()
                .filter(|t| Some(t.name.as_str()) == delegate)
                .map(|t| ToolSpec {
                    name: t.name,
                    description: t.description,
                    parameters: t.parameters,
                }),
        );
    }
    tools
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
                        "arguments": crate::interface::shown_args(&call.name, args.clone()),
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
        arguments: crate::interface::shown_args(&call.name, args.clone()),
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

/// Asks the user a question through the Agent Inbox and waits for the answer (the call's
/// row is `pending` meanwhile; after a restart it finds its question again). Runs without
/// an Inbox cannot ask, and say so.
async fn ask_question(
    env: &TurnEnv<'_>,
    session_id: i64,
    call: &ToolCall,
    args: &Value,
    cancel: &CancellationToken,
    emit: Emit<'_>,
) -> Result<crate::inbox::Outcome, TurnError> {
    let store = env.store;
    let inbox = match (env.cfg.approval, env.inbox) {
        (ApprovalMode::Inbox, Some(inbox)) => inbox,
        _ => {
            return Ok(crate::inbox::Outcome::Rejected(
                "no one can answer questions in this run; decide yourself, or end your answer \
                 with the question for the user"
                    .to_string(),
            ));
        }
    };
    let text = |k: &str| {
        args.get(k)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let item =
        match store.inbox_item_for_call(session_id, &call.id, skald_store::InboxKind::Question)? {
            Some(existing) => existing,
            None => {
                store.set_tool_call_status(session_id, &call.id, ToolCallStatus::Pending, None)?;
                let title = match text("title") {
                    t if t.trim().is_empty() => text("question"),
                    t => t,
                };
                inbox.request(
                    store,
                    &skald_store::NewInboxItem {
                        session_id,
                        kind: skald_store::InboxKind::Question,
                        tool_call_id: Some(call.id.clone()),
                        agent_id: env.cfg.run.agent_id.clone(),
                        depth: i64::try_from(env.frame.depth).unwrap_or(i64::MAX),
                        title,
                        payload: args.clone(),
                    },
                    emit,
                )?
            }
        };
    emit(Event::AgentQuestion {
        tool_call_id: call.id.clone(),
        inbox_id: item.id,
        question: text("question"),
        suggested_answers: args
            .get("suggested_answers")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default(),
    });
    Ok(inbox.wait(store, item.id, cancel).await?)
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

/// `image_generate`: asks the running image provider for one image, saves it under the
/// working directory's `images/`, opens it in the viewer, and answers with its path.
async fn generate_image(env: &TurnEnv<'_>, args: &Value, emit: Emit<'_>) -> Result<String, String> {
    let engine = env
        .engine
        .ok_or("image generation is not available in this run")?;
    let provider = engine
        .plugins
        .images
        .provider()
        .ok_or("no image provider is on; the user can configure the image-generation plugin")?;
    let wanted = args
        .get("provider_id")
        .and_then(Value::as_str)
        .unwrap_or("");
    if !wanted.is_empty() && wanted != provider.id {
        return Err(format!(
            "no image provider `{wanted}`; the one available is `{}`",
            provider.id
        ));
    }
    let prompt = args
        .get("prompt")
        .and_then(Value::as_str)
        .unwrap_or("")
        .trim();
    if prompt.is_empty() {
        return Err("invalid argument `prompt`: must not be empty".into());
    }
    let key = provider
        .api_key
        .as_deref()
        .map(|k| crate::mcp::resolve(k, engine.secrets().as_deref()))
        .transpose()?;
    let extra = args
        .get("extra_params")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let image = skald_llm::images::generate_image(&skald_llm::images::ImageRequest {
        base_url: &provider.base_url,
        api_key: key.as_deref(),
        model: &provider.model,
        prompt,
        size: provider.size.as_deref(),
        extra,
        timeout: provider.timeout,
    })
    .await
    .map_err(|e| e.to_string())?;
    let slug: String = prompt
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect::<String>()
        .split('-')
        .filter(|p| !p.is_empty())
        .take(6)
        .collect::<Vec<_>>()
        .join("-");
    let dir = env.cfg.run.working_dir.join("images");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let stamp = skald_store::now_ms();
    let name = format!(
        "{}-{stamp}.{}",
        if slug.is_empty() { "image" } else { &slug },
        image.extension
    );
    let path = dir.join(&name);
    skald_tools::text::write_atomic(&path, &image.bytes)
        .map_err(|e| format!("cannot save {}: {e}", path.display()))?;
    let relative = format!("images/{name}");
    emit(Event::OpenFile {
        path: relative.clone(),
    });
    let mut out = serde_json::json!({
        "path": relative,
        "url": format!("file://{}", path.display()),
    });
    if let Some(revised) = image.revised_prompt {
        out["revised_prompt"] = Value::String(revised);
    }
    Ok(out.to_string())
}

/// `register_mcp`: stores the server and, in a run with an engine, connects to it now and
/// says how that went.
async fn register_mcp(
    env: &TurnEnv<'_>,
    args: &Value,
    cancel: &CancellationToken,
) -> Result<String, String> {
    let rec = crate::mcp::record_from_args(args)?;
    let rec = env
        .store
        .upsert_mcp_server(&rec)
        .map_err(|e| e.to_string())?;
    let Some(engine) = env.engine else {
        return Ok(format!(
            "Registered MCP server `{}`; it connects when Skald next starts.",
            rec.name
        ));
    };
    engine.mcp.start(&rec);
    let status = tokio::select! {
        _ = cancel.cancelled() => return Err("stopped before the server was ready".into()),
        s = engine.mcp.manager.wait_ready(&rec.name, engine.mcp.connect_timeout) => s,
    };
    let name = &rec.name;
    Ok(match status {
        Some(skald_mcp::Status::Ready { .. }) => {
            let tools: Vec<String> = engine
                .mcp
                .manager
                .tools(name)
                .into_iter()
                .map(|t| t.name)
                .collect();
            format!(
                "Registered `{name}`: ready with {} tools ({}). Activate it with \
                 activate_tools {{\"groups\": [\"{name}\"]}} to use them.",
                tools.len(),
                tools.join(", ")
            )
        }
        Some(skald_mcp::Status::Failed { error, log_tail }) => format!(
            "Registered `{name}`, but it failed to start: {error}{}",
            if log_tail.is_empty() {
                String::new()
            } else {
                format!("\nIts last output:\n{log_tail}")
            }
        ),
        _ => format!("Registered `{name}`; it is still connecting."),
    })
}

/// `activate_tools`: grants the groups (checked against `config` and the registered
/// servers), and for a server still connecting waits for it, bounded by its connect
/// timeout, so the agent learns whether its tools will be there.
async fn activate(
    env: &TurnEnv<'_>,
    session_id: i64,
    args: &Value,
    cancel: &CancellationToken,
) -> Result<String, String> {
    let ctx = crate::interface::Ctx {
        store: env.store,
        session_id,
        stack_id: env.frame.stack_id,
        library: env.library,
        engine: env.engine.map(|e| e.as_ref()),
    };
    crate::interface::run(&ctx, tn::ACTIVATE_TOOLS, args)?;
    let Some(engine) = env.engine else {
        return Ok("Activated; the tools are in your list from your next step.".to_string());
    };
    let groups: Vec<&str> = args
        .get("groups")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    // Servers still connecting are waited for together, and a /stop ends the wait.
    let waits = futures::future::join_all(groups.iter().map(|g| async move {
        if *g == tn::CONFIG_GROUP {
            None
        } else {
            engine
                .mcp
                .manager
                .wait_ready(g, engine.mcp.connect_timeout)
                .await
        }
    }));
    let statuses = tokio::select! {
        _ = cancel.cancelled() => return Err("stopped while waiting for the servers".into()),
        s = waits => s,
    };
    let mut lines = Vec::new();
    for (g, status) in groups.into_iter().zip(statuses) {
        if g == tn::CONFIG_GROUP {
            lines.push(
                "config: Skald's configuration tools are in your list from your next step"
                    .to_string(),
            );
            continue;
        }
        lines.push(match status {
            Some(skald_mcp::Status::Ready { tools }) => {
                format!("{g}: ready; its {tools} tools are in your list from your next step")
            }
            Some(skald_mcp::Status::Failed { error, .. }) => format!(
                "{g}: failed ({error}); its tools arrive if it recovers — Skald keeps retrying"
            ),
            Some(skald_mcp::Status::Connecting) => {
                format!("{g}: still connecting; its tools arrive when it is ready")
            }
            Some(skald_mcp::Status::Disabled) | None => {
                format!("{g}: turned off; the user can turn it on")
            }
        });
    }
    Ok(lines.join("\n"))
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
    store: &Store,
    session_id: i64,
    call: &ToolCall,
    emit: Emit<'_>,
) -> Result<(), TurnError> {
    let config_tool = crate::synthetic::synthetic_tools()
        .iter()
        .any(|t| t.name == call.name && t.category == Some(skald_api::ToolCategory::Config))
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
        arguments: crate::interface::shown_args(
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
    let (store, registry, cfg) = (env.store, env.registry, env.cfg);
    let parsed = parse_args(&call.arguments);
    let shown = crate::interface::shown_args(&call.name, parsed.clone().unwrap_or(Value::Null));
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
    let delegation = matches!(call.name.as_str(), tn::EXECUTE_TASK | tn::EXECUTE_SUBTASK);
    let schema = match registry.get(&call.name) {
        Some(tool) => tool.parameters_schema(),
        None => match crate::interface::schema(&call.name) {
            Some(s) => s,
            None if delegation => crate::synthetic::synthetic_tools()
                .into_iter()
                .find(|t| t.name == call.name)
                .map(|t| t.parameters)
                .unwrap_or(Value::Null),
            None => match (crate::mcp::split_name(&call.name), env.engine) {
                (Some((server, _)), Some(engine)) => match engine.mcp.schema(&call.name) {
                    Some(s) => s,
                    None => {
                        let status = engine
                            .mcp
                            .manager
                            .status(server)
                            .map_or_else(|| "not registered".to_string(), |s| s.describe());
                        return fail(format!(
                            "`{}` is not available: MCP server `{server}` is {status}",
                            call.name
                        ));
                    }
                },
                _ => return fail(format!("there is no tool named `{}`", call.name)),
            },
        },
    };
    if let Err(e) = validate_args(&schema, &args) {
        return fail(e.to_string());
    }
    let decision = approval::check(store, &cfg.run, &call.name, &args);
    let rejection = match decision.action {
        RuleAction::Allow => None,
        RuleAction::Deny => Some(format!(
            "This tool call was denied by the user's approval rules: {}. Do not retry it; \
             find another way or ask the user.",
            decision.reason
        )),
        RuleAction::Require => match (cfg.approval, env.ask) {
            (ApprovalMode::All, _) => None,
            // A bypass granted from an earlier answer covers it.
            _ if env
                .inbox
                .is_some_and(|i| i.bypasses.covers(session_id, &call.name, registry)) =>
            {
                None
            }
            (ApprovalMode::Inbox, _) if env.inbox.is_some() => {
                match ask_inbox(env, session_id, call, &args, &decision.reason, cancel, emit)
                    .await?
                {
                    crate::inbox::Outcome::Approved => None,
                    // An approval is never answered with text (Inbox::answer refuses it).
                    crate::inbox::Outcome::Answered(_) => Some(
                        "User rejected this tool call. Reason: no approval was given".to_string(),
                    ),
                    crate::inbox::Outcome::Rejected(note) => Some(format!(
                        "User rejected this tool call. Reason: {}",
                        if note.trim().is_empty() {
                            "no reason given"
                        } else {
                            note.trim()
                        }
                    )),
                    crate::inbox::Outcome::Cancelled => {
                        return mark_cancelled(store, session_id, &call.id, emit);
                    }
                }
            }
            (ApprovalMode::Ask, Some(ask)) => {
                let asking = ask(AskRequest {
                    tool: call.name.clone(),
                    label: registry.describe_call(&call.name, &args, ToolDescriptionLength::Full),
                    reason: decision.reason.clone(),
                    arguments: crate::interface::shown_args(&call.name, args.clone()),
                });
                // Ctrl-C while the prompt waits stops the turn, as it does anywhere else.
                let yes = tokio::select! {
                    biased;
                    _ = cancel.cancelled() => {
                        return mark_cancelled(store, session_id, &call.id, emit);
                    }
                    yes = asking => yes,
                };
                (!yes).then(|| {
                    "User rejected this tool call. Reason: declined when asked.".to_string()
                })
            }
            (ApprovalMode::Never | ApprovalMode::Ask | ApprovalMode::Inbox, _) => Some(format!(
                "User rejected this tool call. Reason: it needs approval ({}) and this \
                 headless run does not give it (--approve never).",
                decision.reason
            )),
        },
    };
    retire_stale_approval(store, session_id, &call.id, emit)?;
    if let Some(reason) = rejection {
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
    if delegation {
        return match delegate(env, session_id, call, &args, cancel, emit).await? {
            Delegated::Answer(text) => mark_done(store, session_id, &call.id, redact(text), emit),
            Delegated::Failed(message) => fail(message),
            Delegated::Cancelled => mark_cancelled(store, session_id, &call.id, emit),
        };
    }
    if call.name == tn::ASK_USER_CLARIFICATION {
        return match ask_question(env, session_id, call, &args, cancel, emit).await? {
            crate::inbox::Outcome::Answered(text) if !text.trim().is_empty() => {
                let text = format!("The user answered: {text}");
                mark_done(store, session_id, &call.id, redact(text), emit)
            }
            crate::inbox::Outcome::Rejected(note) if !note.trim().is_empty() => {
                fail(format!("The user declined to answer: {note}"))
            }
            crate::inbox::Outcome::Cancelled => mark_cancelled(store, session_id, &call.id, emit),
            _ => fail("The user gave no answer.".to_string()),
        };
    }
    if call.name == tn::SHOW_FILE_TO_USER {
        let raw = args
            .get("path")
            .and_then(Value::as_str)
            .unwrap_or("")
            .trim();
        let path = skald_tools::fs::resolve_in(raw, &cfg.run.working_dir);
        if !path.is_file() {
            return fail(format!("there is no file at `{raw}`"));
        }
        let shown = skald_tools::fs::relativize_for_display(&path, &cfg.run.working_dir);
        emit(Event::OpenFile {
            path: shown.clone(),
        });
        let hint = if path.extension().is_some_and(|e| e == "pdf")
            && path.with_extension("tex").is_file()
        {
            " It is a built PDF: show the .tex source instead to have it compiled and kept \
             up to date as its inputs change."
        } else {
            ""
        };
        return mark_done(
            store,
            session_id,
            &call.id,
            format!("Opened `{shown}` in the user's viewer.{hint}"),
            emit,
        );
    }
    if call.name == tn::IMAGE_GENERATE {
        return match generate_image(env, &args, emit).await {
            Ok(text) => mark_done(store, session_id, &call.id, text, emit),
            Err(message) => fail(message),
        };
    }
    if call.name == tn::REGISTER_MCP {
        return match register_mcp(env, &args, cancel).await {
            Ok(text) => mark_done(store, session_id, &call.id, redact(text), emit),
            Err(message) => fail(message),
        };
    }
    if call.name == tn::ACTIVATE_TOOLS {
        return match activate(env, session_id, &args, cancel).await {
            Ok(text) => mark_done(store, session_id, &call.id, redact(text), emit),
            Err(message) => fail(message),
        };
    }
    if let (Some((server, tool)), Some(engine)) = (crate::mcp::split_name(&call.name), env.engine) {
        let _active = engine.mcp.enter(server, session_id);
        let progress = |p: skald_mcp::Progress| {
            emit(Event::ToolProgress {
                tool_call_id: call.id.clone(),
                progress: p.progress,
                total: p.total,
                message: p.message.map(&redact),
            })
        };
        let arguments = match args {
            Value::Object(m) => m,
            _ => serde_json::Map::new(),
        };
        return match engine
            .mcp
            .manager
            .call(server, tool, arguments, cancel, &progress)
            .await
        {
            Ok(out) if !out.is_error => {
                mark_done(store, session_id, &call.id, redact(out.text), emit)
            }
            Ok(out) => fail(format!("the MCP tool failed: {}", out.text)),
            Err(skald_mcp::McpError::Cancelled) => {
                mark_cancelled(store, session_id, &call.id, emit)
            }
            Err(e) => fail(e.to_string()),
        };
    }
    if crate::interface::schema(&call.name).is_some() {
        let ctx = crate::interface::Ctx {
            store,
            session_id,
            stack_id: env.frame.stack_id,
            library: env.library,
            engine: env.engine.map(|e| e.as_ref()),
        };
        return match crate::interface::run(&ctx, &call.name, &args) {
            Ok(text) => mark_done(store, session_id, &call.id, redact(text), emit),
            Err(message) => fail(message),
        };
    }
    let Some(exec) = registry.run(&call.name, args) else {
        return fail(format!("there is no tool named `{}`", call.name));
    };
    let outcome = ToolScope::new(&cfg.run.working_dir)
        .with_excluded(approval::denied_paths(store, &cfg.run, &call.name))
        .run(drive_execution(exec.as_ref(), cancel))
        .await;
    match outcome {
        ExecutionOutcome::Completed(text) => {
            mark_done(store, session_id, &call.id, redact(text), emit)
        }
        ExecutionOutcome::Failed(message) => fail(message),
        ExecutionOutcome::Cancelled => mark_cancelled(store, session_id, &call.id, emit),
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
    if let Some(board) = crate::interface::scratchpad_message(store, session_id)? {
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
        let call = ToolCall {
            id: "d".into(),
            name: tn::EXECUTE_SUBTASK.into(),
            arguments: String::new(),
        };
        let args = serde_json::json!({"agent_id": "researcher", "prompt": "go"});
        let out = delegate_inner(
            &env,
            fx.session_id,
            &call,
            &args,
            &CancellationToken::new(),
            &|_| {},
        )
        .await
        .unwrap();
        assert!(matches!(out, Delegated::Failed(m) if m.contains("at most 5 levels")));
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
