//! Running the calls of one answer: the approval gate, the tools of the registry through
//! `drive_execution`, MCP tools, and each call's final status in the store.

use super::{ApprovalMode, AskRequest, Emit, TurnEnv, TurnError};
use crate::approval;
use crate::args::validate_args;
use crate::engine::tool_context::{Call, ToolCx};
use serde_json::Value;
use skald_api::events::Event;
use skald_api::inbox::{ApprovalRequest, InboxRequest};
use skald_api::{
    CancellationToken, ExecutionOutcome, ToolCallStatus, ToolCategory, ToolDescriptionLength,
    ToolScope, drive_execution, tool_names as tn,
};
use skald_llm::ToolCall;
use skald_store::{ResultType, RuleAction, Store};

/// Sync delegations of one reply that run at the same time, at most (docs/tasks.md,
/// "Delegating to a task agent").
const MAX_PARALLEL_DELEGATIONS: usize = 4;

/// Runs a reply's calls: the ordinary ones one after the other in the order the model
/// wrote them, then — when there are two or more — its delegations concurrently, at most
/// four at a time. Every call was stored in call order before any ran, so the history
/// keeps that order however the delegations finish. Returns whether the turn was stopped;
/// calls that never started are then marked cancelled.
pub(super) async fn run_calls(
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
    let item =
        match store.inbox_item_for_call(session_id, &call.id, skald_store::InboxKind::Approval)? {
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
                        payload: InboxRequest::Approval(ApprovalRequest {
                            tool: call.name.clone(),
                            arguments: registry.redacted_args(&call.name, args.clone()),
                            label: label.clone(),
                            reason: reason.to_string(),
                            category: registry.category_of(&call.name),
                            write: crate::approval::write_preview(
                                &call.name,
                                args,
                                &cfg.run.working_dir,
                            ),
                            sandbox: (call.name == skald_api::tool_names::EXECUTE_CMD)
                                .then(|| command_sandbox_info(&cfg.run.sandbox, args)),
                        })
                        .payload(),
                    },
                    emit,
                )?
            }
        };
    emit(Event::ApprovalRequired {
        tool_call_id: call.id.clone(),
        name: call.name.clone(),
        arguments: registry.redacted_args(&call.name, args.clone()),
        label: label.clone(),
        reason: reason.to_string(),
        inbox_id: item.id,
    });
    super::fire_hooks(
        cfg,
        session_id,
        Some(&call.id),
        crate::hooks::HookEvent::Notification,
        None,
        serde_json::json!({ "message": format!("Skald needs your approval: {label}") }),
        emit,
    )
    .await;
    let outcome = inbox.wait(store, item.id, cancel).await?;
    if matches!(
        outcome,
        crate::inbox::Outcome::Approved | crate::inbox::Outcome::Answered(_)
    ) {
        store.set_tool_call_status(session_id, &call.id, ToolCallStatus::Running, None)?;
    }
    Ok(outcome)
}

pub(super) fn parse_args(raw: &str) -> Result<Value, String> {
    let raw = if raw.trim().is_empty() { "{}" } else { raw };
    match serde_json::from_str::<Value>(raw) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(_) => Err("the arguments must be a JSON object".to_string()),
        Err(e) => Err(format!("the arguments are not valid JSON ({e})")),
    }
}

/// Records a call's result, with the images it showed the model, and says so;
/// `Ok(false)`: the turn goes on.
fn mark_done(
    store: &Store,
    session_id: i64,
    call_id: &str,
    text: String,
    images: Vec<crate::images::CheckedImage>,
    emit: Emit<'_>,
) -> Result<bool, TurnError> {
    // An image that is not one after all is said in the result instead.
    let showed = !images.is_empty();
    let notes = crate::images::keep_call_images(store, session_id, call_id, images)?;
    let text = text + &notes;
    store.set_tool_call_status(
        session_id,
        call_id,
        ToolCallStatus::Done,
        Some((&text, ResultType::Text)),
    )?;
    // Read back only when the call showed any: most calls show none.
    let images = if showed {
        let owner = skald_store::ImageOwner::ToolCall(call_id.to_string());
        crate::images::shown_by(store, session_id, &owner)?
    } else {
        Vec::new()
    };
    emit(Event::ToolDone {
        tool_call_id: call_id.to_string(),
        result: text,
        images,
    });
    Ok(false)
}

/// Records a call the person said no to (at the gate, or to what it asked them) and says
/// so; `Ok(false)`: the turn goes on, the model reading why.
fn mark_rejected(
    store: &Store,
    session_id: i64,
    call_id: &str,
    reason: String,
    emit: Emit<'_>,
) -> Result<bool, TurnError> {
    store.set_tool_call_status(
        session_id,
        call_id,
        ToolCallStatus::Rejected,
        Some((&reason, ResultType::Text)),
    )?;
    emit(Event::ToolRejected {
        tool_call_id: call_id.to_string(),
        reason,
    });
    Ok(false)
}

/// Fails a call of a tool this agent was not offered this round, saying how to get it when
/// there is a way.
pub(super) fn refuse_unoffered(
    env: &TurnEnv<'_>,
    session_id: i64,
    call: &ToolCall,
    emit: Emit<'_>,
) -> Result<(), TurnError> {
    let (store, registry) = (env.store, env.registry);
    // What would offer it: the `config` group, or an image provider; asked of the tool
    // itself, so the advice is never one that would not help.
    let with_config = super::offer::audience(env, true);
    let offered_with =
        |who: &skald_api::Audience| registry.get(&call.name).is_some_and(|t| t.offered_to(who));
    let config_tool = registry.category_of(&call.name) == Some(ToolCategory::Config)
        && call.name != tn::ACTIVATE_TOOLS
        && offered_with(&with_config);
    let image_tool = !with_config.images
        && offered_with(&skald_api::Audience {
            images: true,
            ..with_config
        });
    // In plan mode a tool that changes something is held back for that reason alone.
    let planning = env
        .cfg
        .run
        .is_planning()
        .then(|| planning_refusal(registry, &call.name, &Value::Null))
        .flatten();
    let message = if let Some(refused) = planning {
        refused
    } else if config_tool {
        format!(
            "`{}` is one of Skald's configuration tools; call activate_tools with groups \
             [\"config\"] first, then use it from your next step",
            call.name
        )
    } else if image_tool {
        format!(
            "`{}` needs an image provider, and none is on: the image-generation plugin \
             must be enabled with a provider (the user can do it in Settings → Plugins, or \
             you with configure_plugin {{\"id\": \"{}\", \"enabled\": true}} after \
             activating the config group)",
            call.name,
            crate::plugins::IMAGE_PLUGIN
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
        arguments: registry.redacted_args(
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

/// Why a call cannot run while the chat plans (docs/agent-loop.md, "Plan mode"): a tool
/// that changes something (any MCP tool among them), or a command asking for more than
/// the read-only sandbox. `None`: it may run, as the rules say.
fn planning_refusal(registry: &crate::ToolRegistry, tool: &str, args: &Value) -> Option<String> {
    const PLANNING: &str = "This chat is in plan mode: read, search and ask, and change \
        nothing until the user approves your plan (present it with exit_plan_mode)";
    let Some(t) = registry.get(tool).filter(|t| t.in_plan_mode()) else {
        return Some(format!("{PLANNING}; `{tool}` is not available until then."));
    };
    if let Some(why) = t.refused_while_planning(args) {
        return Some(format!("{PLANNING}; {why}."));
    }
    approval::asks_beyond_sandbox(tool, args).map(|_| {
        format!(
            "{PLANNING}; commands run only in the read-only sandbox, and nothing beyond it \
             can be granted until then."
        )
    })
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
pub(super) fn mark_cancelled(
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
                status: resolved.status,
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
    let shown = registry.redacted_args(&call.name, parsed.clone().unwrap_or(Value::Null));
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
    let checked = match gate {
        Gate::Run(path) => path,
        Gate::Rejected(reason) => {
            return mark_rejected(store, session_id, &call.id, reason, emit);
        }
        Gate::Cancelled => return mark_cancelled(store, session_id, &call.id, emit),
    };
    // A stopped turn starts no more calls, whatever kind of tool they are.
    if cancel.is_cancelled() {
        return mark_cancelled(store, session_id, &call.id, emit);
    }
    // The folder before a call that can change it, so what it changed can be shown and
    // undone (docs/checkpoints.md); never in the way of the call.
    let checkpoint = match env.engine {
        Some(engine) if registry.changes_files(&call.name) && engine.checkpoints.enabled() => {
            engine
                .checkpoints
                .before(store, session_id, &env.cfg.run)
                .await
                .map(|before| (engine, before))
        }
        _ => None,
    };
    let (outcome, images) = match (crate::mcp::split_name(&call.name), env.engine) {
        (Some((server, tool)), Some(engine)) if !registry.contains(&call.name) => (
            run_mcp(
                engine, session_id, call, server, tool, args, cancel, emit, &redact,
            )
            .await,
            Vec::new(),
        ),
        _ => run_tool(env, session_id, call, args, checked, cancel, emit).await?,
    };
    let stopped = match outcome {
        ExecutionOutcome::Completed(text) => {
            let text = after_hooks(env, session_id, call, &shown, text, emit).await;
            let images = crate::images::check_all(images).await;
            mark_done(store, session_id, &call.id, redact(text), images, emit)
        }
        ExecutionOutcome::Failed(message) => fail(message),
        ExecutionOutcome::Cancelled => mark_cancelled(store, session_id, &call.id, emit),
        ExecutionOutcome::Rejected(reason) => {
            mark_rejected(store, session_id, &call.id, redact(reason), emit)
        }
    };
    // Also after a failed or stopped call: a command can change files before it fails.
    if let Some((engine, before)) = checkpoint
        && let Some(checkpoint) = engine
            .checkpoints
            .after(store, session_id, &call.id, before)
            .await
    {
        emit(Event::Checkpoint { checkpoint });
    }
    stopped
}

/// A call as hook matchers see it: its tool's name, and the name Claude Code gives the
/// same tool, as the tool declares it.
fn hook_subject<'a>(env: &TurnEnv<'_>, name: &'a str) -> crate::hooks::Subject<'a> {
    crate::hooks::Subject {
        name,
        alias: env.registry.get(name).and_then(|t| t.hook_alias()),
    }
}

/// PostToolUse hooks: what they say back (a `block` reason, context) is added to the
/// result the model reads.
async fn after_hooks(
    env: &TurnEnv<'_>,
    session_id: i64,
    call: &ToolCall,
    shown: &Value,
    text: String,
    emit: Emit<'_>,
) -> String {
    if env.cfg.hooks.is_empty() {
        return text;
    }
    let v = super::fire_hooks(
        env.cfg,
        session_id,
        Some(&call.id),
        crate::hooks::HookEvent::PostToolUse,
        Some(hook_subject(env, &call.name)),
        serde_json::json!({
            "tool_name": call.name,
            "tool_input": crate::hooks::tool_input(shown.clone()),
            "tool_response": text,
        }),
        emit,
    )
    .await;
    let mut out = text;
    if let Some(reason) = v.blocked {
        out.push_str(&format!("\n\n[A PostToolUse hook says: {reason}]"));
    }
    for c in v.context {
        out.push_str(&format!("\n\n[Context from a PostToolUse hook: {c}]"));
    }
    out
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

/// The sandbox an approved command would run in, as its approval card shows it: a grant
/// of `unsandboxed` means none, one of more folders or the network means a wider one.
fn command_sandbox_info(
    settings: &crate::config::SandboxSettings,
    args: &Value,
) -> skald_api::SandboxInfo {
    let mut info = settings.info();
    if let Ok(Some(grant)) = skald_tools::execute_cmd::SandboxGrant::from_args(args) {
        if grant.unsandboxed {
            info.mode = skald_api::SandboxMode::Off;
            info.note = "Approving runs this command with no sandbox, as you.".to_string();
        } else {
            info.network |= grant.network;
            info.note = format!("Approving lets it {}; {}", grant.describe(), info.note);
        }
    }
    info
}

/// What the approval gate decided for a call.
#[derive(Debug, PartialEq, Eq)]
enum Gate {
    /// Run it, opening the path the decision was made on (`approval::Checked::path`).
    Run(Option<std::path::PathBuf>),
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
    if cfg.run.is_planning()
        && let Some(refused) = planning_refusal(registry, &call.name, args)
    {
        return Ok(Gate::Rejected(refused));
    }
    let approval::Checked { mut decision, path } =
        approval::check_call(store, &cfg.run, &call.name, args);
    // PreToolUse hooks (docs/hooks.md) may deny or ask for a call the rules allow, and let
    // through one they would ask about; a call the rules deny stays denied, unasked.
    if decision.action != RuleAction::Deny && !cfg.hooks.is_empty() {
        let v = super::fire_hooks(
            cfg,
            session_id,
            Some(&call.id),
            crate::hooks::HookEvent::PreToolUse,
            Some(hook_subject(env, &call.name)),
            serde_json::json!({
                "tool_name": call.name,
                "tool_input": crate::hooks::tool_input(registry.redacted_args(&call.name, args.clone())),
            }),
            emit,
        )
        .await;
        if let Some(reason) = v.blocked.or(v.stop) {
            return Ok(Gate::Rejected(format!(
                "A PreToolUse hook blocked this tool call: {reason}"
            )));
        }
        match v.permission {
            Some((crate::hooks::Permission::Deny, reason)) => {
                return Ok(Gate::Rejected(format!(
                    "A PreToolUse hook denied this tool call: {}",
                    if reason.is_empty() {
                        "no reason given"
                    } else {
                        &reason
                    }
                )));
            }
            Some((crate::hooks::Permission::Ask, reason)) => {
                decision.action = RuleAction::Require;
                decision.reason = if reason.is_empty() {
                    "a hook asks for approval".to_string()
                } else {
                    format!("a hook asks for approval: {reason}")
                };
            }
            // A hook's allow lifts an ordinary "needs approval", never one only the person
            // may lift (a sandbox grant, a credential folder).
            Some((crate::hooks::Permission::Allow, _))
                if !(decision.action == RuleAction::Require
                    && approval::always_asks_in(
                        &env.cfg.run,
                        &call.name,
                        args,
                        path.as_deref(),
                    )) =>
            {
                decision.action = RuleAction::Allow
            }
            Some((crate::hooks::Permission::Allow, _)) => {}
            None => {}
        }
    }
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
        RuleAction::Allow => Gate::Run(path.clone()),
        RuleAction::Deny => Gate::Rejected(format!(
            "This tool call was denied by the user's approval rules: {}. Do not retry it; \
             find another way or ask the user.",
            decision.reason
        )),
        RuleAction::Require => match (cfg.approval, env.ask) {
            (ApprovalMode::All, _) => Gate::Run(path.clone()),
            // A bypass granted from an earlier answer covers it.
            _ if env
                .inbox
                .is_some_and(|i| i.bypasses.covers(session_id, &call.name, registry))
                && !approval::always_asks_in(&env.cfg.run, &call.name, args, path.as_deref()) =>
            {
                Gate::Run(path.clone())
            }
            (ApprovalMode::Inbox, _) if env.inbox.is_some() => {
                match ask_inbox(env, session_id, call, args, &decision.reason, cancel, emit).await?
                {
                    crate::inbox::Outcome::Approved => Gate::Run(path.clone()),
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
                    arguments: registry.redacted_args(&call.name, args.clone()),
                });
                // Ctrl-C while the prompt waits stops the turn, as it does anywhere else.
                tokio::select! {
                    biased;
                    _ = cancel.cancelled() => Gate::Cancelled,
                    yes = asking => match yes {
                        true => Gate::Run(path.clone()),
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
/// on the session; an engine error one of them met ends the turn. Also returns the images
/// the tool showed, where the chat's model can see them (docs/images.md).
async fn run_tool(
    env: &TurnEnv<'_>,
    session_id: i64,
    call: &ToolCall,
    args: Value,
    checked: Option<std::path::PathBuf>,
    cancel: &CancellationToken,
    emit: Emit<'_>,
) -> Result<(ExecutionOutcome, Vec<skald_api::ToolImage>), TurnError> {
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
    // Worked out before the arguments go to the tool: the rule that allowed a command may
    // give it the network.
    let sandbox = crate::sandbox::for_call(env.store, &env.cfg.run, &call.name, &args);
    let lsp = approval::lsp_setup(
        env.store,
        &env.cfg.run,
        &call.name,
        &args,
        env.engine
            .map(|e| e.settings.lsp.clone())
            .unwrap_or_default(),
    );
    let Some(exec) = env.registry.run(&call.name, &cx, args) else {
        return Ok((
            ExecutionOutcome::Failed(format!("there is no tool named `{}`", call.name)),
            Vec::new(),
        ));
    };
    let images = env
        .models
        .current()
        .first()
        .filter(|m| env.models.sees_images(m))
        .map(|_| skald_api::ImageSink::default());
    let web = is_web_tool(&call.name).then(|| {
        let settings = env.engine.map(|e| e.web()).unwrap_or_default();
        let secrets = env.engine.and_then(|e| e.secrets());
        approval::web::web_access(
            env.store,
            &env.cfg.run,
            &call.name,
            &settings,
            secrets.as_deref(),
        )
    });
    let outcome = ToolScope::new(&env.cfg.run.working_dir)
        .with_web(web.unwrap_or_default())
        .with_lsp(lsp)
        .with_excluded(approval::denied_paths(env.store, &env.cfg.run, &call.name))
        .with_checked_path(checked)
        .with_hidden_env(env.cfg.run.hidden_env.clone())
        .with_sandbox(sandbox)
        .with_cache_dir(env.engine.and_then(|e| e.settings.cache_dir.clone()))
        .with_editor(env.engine.and_then(|e| e.editor_for(session_id, &call.id)))
        .with_processes(env.engine.map(|e| skald_api::ProcessSlot {
            table: e.processes.clone(),
            session_id,
        }))
        .with_images(images.clone())
        .run(drive_execution(exec.as_ref(), cancel))
        .await;
    drop(exec);
    match cx.take_fatal() {
        Some(e) => Err(e),
        None => Ok((outcome, images.map(|s| s.take()).unwrap_or_default())),
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

/// Whether `tool` reaches the web, so its call gets the person's `[web]` settings and the
/// hosts their rules name (and, for a search API, its key).
fn is_web_tool(tool: &str) -> bool {
    matches!(
        tool,
        skald_api::tool_names::WEB_FETCH | skald_api::tool_names::WEB_SEARCH
    )
}
