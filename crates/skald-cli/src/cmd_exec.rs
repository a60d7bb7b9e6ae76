//! `skald exec`: one agent turn, headless. Ctrl-C is /stop.

use crate::exit;
use crate::fail::{Fail, finish};
use skald_api::CancellationToken;
use skald_api::events::{Event, TurnOutcome};
use skald_api::{escape_controls, escape_controls_inline};
use skald_core::approval::RunContext;
use skald_core::engine::{Engine, TurnSettings};
use skald_core::turn::{self, ApprovalMode, TurnConfig};
use skald_core::{Config, DataDir, builtin_registry};
use skald_store::{NewSession, Store};
use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::Arc;

pub struct ExecArgs<'a> {
    pub session: Option<i64>,
    pub agent: Option<&'a str>,
    pub model: Option<&'a str>,
    pub cwd: Option<&'a Path>,
    pub approve: ApprovalMode,
    /// `--sandbox`: how the agent's commands are confined in this run, over the chat's own
    /// setting and config.toml's.
    pub sandbox: Option<skald_api::SandboxMode>,
    /// `--network`: sandboxed commands may use the network in this run.
    pub network: bool,
    pub json: bool,
    pub max_rounds: Option<usize>,
    pub tool_choice: skald_llm::ToolChoice,
    /// For a new session: its run context.
    pub group: Option<&'a str>,
    pub allow_read: &'a [std::path::PathBuf],
    pub allow_write: &'a [std::path::PathBuf],
    pub extra_prompt: Option<&'a str>,
    /// `--image`: files shown to the model with the prompt.
    pub images: &'a [std::path::PathBuf],
    /// `--effort`: how hard the model reasons in this run (docs/models.md).
    pub effort: Option<skald_llm::effort::Effort>,
    /// `--plan`: the chat plans (docs/agent-loop.md, "Plan mode").
    pub plan: bool,
    /// `--worktree [NAME]`: a new chat in a worktree of its own (`Some("")`: named after
    /// the folder) (docs/worktrees.md).
    pub worktree: Option<&'a str>,
    pub prompt: &'a str,
}

/// `settings` with this run's `--sandbox` and `--network`, which win over the chat's own
/// and config.toml's.
fn run_sandbox(
    a: &ExecArgs<'_>,
    settings: skald_core::sandbox::SandboxSettings,
) -> skald_core::sandbox::SandboxSettings {
    let mut s = settings;
    if let Some(mode) = a.sandbox {
        s.mode = mode;
    }
    s.network |= a.network;
    s
}

fn usage(e: impl std::fmt::Display) -> Fail {
    Fail::usage(e)
}

fn failed(e: impl std::fmt::Display) -> Fail {
    Fail::failed(e)
}

pub async fn run(data_dir: &DataDir, config: &Config, a: ExecArgs<'_>) -> u8 {
    finish("skald exec", exec(data_dir, config, a).await)
}

async fn exec(data_dir: &DataDir, config: &Config, a: ExecArgs<'_>) -> Result<u8, Fail> {
    let models = skald_core::models::choose_models(config, a.model, &data_dir.models_dir(), |k| {
        std::env::var(k).ok()
    })
    .map_err(usage)?;
    let cwd = working_dir(a.cwd)?;
    let store = Arc::new(Store::open(data_dir.db_path()).map_err(failed)?);
    let registry = Arc::new(builtin_registry().map_err(failed)?);
    let library = Arc::new(skald_core::agents::Library::load(data_dir.root()).map_err(failed)?);
    // An unknown agent is refused before anything is stored.
    if let Some(id) = a.agent {
        library.get(id).map_err(usage)?;
    }
    // Refused, like an unknown agent, before a chat is made for them.
    let prompt = prompt_with_images(&store, &a)?;
    let run_context_id = new_run_context(&store, &a)?;
    let (cwd, worktree) = in_worktree(&store, data_dir, config, &a, cwd)?;
    let mut session = match open_session(&store, &a, &cwd, run_context_id) {
        Ok(s) => s,
        Err(e) => {
            // No chat, no worktree left behind for it.
            if let Some(made) = &worktree {
                let _ = skald_worktree::discard(&made.worktree);
            }
            return Err(e);
        }
    };
    if let Some(made) = &worktree {
        let info = skald_core::worktrees::record(&store, made, session.id).map_err(failed)?;
        eprintln!(
            "skald exec: working in worktree {} ({}{})",
            info.name,
            info.working_dir,
            info.branch
                .as_deref()
                .map(|b| format!(", branch {b}"))
                .unwrap_or_default()
        );
    }
    if a.plan {
        let plan = skald_api::records::ChatMode::Plan;
        store.set_session_mode(session.id, plan).map_err(failed)?;
        session.mode = plan;
    }
    // A chat with a model of its own uses it, unless --model says otherwise.
    let models = match (a.model, session.model.as_deref()) {
        (None, Some(own)) => {
            skald_core::models::choose_models(config, Some(own), &data_dir.models_dir(), |k| {
                std::env::var(k).ok()
            })
            .map_err(|e| usage(format!("the chat's model {own} cannot be used: {e}")))?
        }
        _ => models,
    };
    if let (Some(model), Some(effort)) = (models.first(), a.effort)
        && !skald_llm::effort::takes_effort(model.provider.kind, &model.model)
    {
        eprintln!(
            "skald exec: {} takes no reasoning effort; --effort {} is not sent",
            model.label(),
            effort.as_str()
        );
    }
    if let Some(model) = models.first()
        && !prompt.images.is_empty()
        && !skald_core::images::sees_images(model, &config.models.vision)
    {
        eprintln!(
            "skald exec: {} cannot see images; it is told an image was attached, not what it \
             shows",
            model.label()
        );
    }
    let agent = a.agent.unwrap_or(&session.agent_id);
    let cancel = CancellationToken::new();
    if let Ok(signal) = crate::stop_signal::StopSignal::listen() {
        tokio::spawn(stop_on_signal(signal, cancel.clone()));
    }
    let json = a.json;
    let emit = move |event: Event| print_event(&event, json);
    // Background tasks this turn starts run in this process, in their own sessions; their
    // events are shown with their session. With --approve inbox (and for background work
    // whatever the mode but `all`) a call that needs approval waits until `skald inbox
    // answer` (any process) resolves it.
    let root_session = session.id;
    let sink: skald_core::engine::Sink = Arc::new(move |session_id, event| {
        if session_id == root_session {
            print_event(&event, json);
        } else {
            crate::session_events::print(session_id, &event, json, false);
        }
    });
    let engine = Engine::new(
        store.clone(),
        registry.clone(),
        models.clone(),
        library.clone(),
        TurnSettings {
            max_rounds: a.max_rounds.unwrap_or(config.agent.max_rounds).max(1),
            sandbox: run_sandbox(&a, config.sandbox.settings()),
            ..TurnSettings::from_config(config, data_dir, a.approve)
        },
        sink,
    );
    // The chat is this process's while it runs: another Skald process is told it is busy
    // instead of writing into the same conversation.
    let _hold = engine.hold_session(session.id).map_err(failed)?;
    start_services(&engine, data_dir, config);
    let granted = store.granted_groups(session.id, None).map_err(failed)?;
    let mcp_list = engine.mcp.prompt_list(&store, &granted);
    // An unknown agent is the caller's mistake, told before anything runs.
    library.get(agent).map_err(usage)?;
    let (mut run, extra) = RunContext::for_session(
        &store,
        &session,
        library.skill_dirs(),
        &engine.withheld,
        config.sandbox.settings(),
    )
    .map_err(failed)?;
    run.working_dir = session_folder(&a, &session, cwd)?;
    run.agent_id = agent.to_string();
    run.sandbox = run_sandbox(&a, run.sandbox);
    let (system_prompt, instructions, hooks) = engine
        .prompt_for(agent, &mcp_list, &extra, &mut run)
        .map_err(failed)?;
    let cfg = TurnConfig {
        max_rounds: engine.settings.max_rounds,
        context_window: engine.settings.context_window,
        approval: a.approve,
        system_prompt,
        run,
        background: false,
        first_tool_choice: a.tool_choice,
        instructions,
        hooks,
        // `--effort` for this run, else the chat's own.
        effort: a.effort.or_else(|| {
            session
                .effort
                .as_deref()
                .and_then(skald_llm::effort::Effort::parse)
        }),
        compact_at: engine.limits.compact_at(),
    };
    let ask_fn = |req: turn::AskRequest| -> futures::future::BoxFuture<'static, bool> {
        Box::pin(ask_at_the_terminal(req))
    };
    let ask: Option<turn::Ask<'_>> = if a.approve == ApprovalMode::Ask
        && std::io::stdin().is_terminal()
    {
        Some(&ask_fn)
    } else {
        if a.approve == ApprovalMode::Ask {
            eprintln!("skald exec: stdin is not a terminal; calls needing approval are rejected");
        }
        None
    };
    let env = engine.env(&cfg, None, ask);
    // A session continued after Skald stopped mid-turn first finishes what it left.
    skald_core::session::resume::resume_pending_tools(&env, session.id, &cancel, &emit)
        .await
        .map_err(|e| failed(format!("cannot resume session {}: {e}", session.id)))?;
    // Tasks this chat started that a previous process left running go on now.
    if a.session.is_some()
        && let Err(e) = engine.resume_tasks(Some(session.id))
    {
        eprintln!("skald exec: cannot resume the session's background tasks: {e}");
    }
    let outcome =
        turn_and_deliveries(&engine, &env, &store, session.id, &prompt, &cancel, &emit).await?;
    wind_down(&engine, outcome).await
}

/// The prompt with its `--image` files, each checked and kept (docs/images.md).
fn prompt_with_images(store: &Store, a: &ExecArgs<'_>) -> Result<turn::Prompt, Fail> {
    let mut images = Vec::new();
    for path in a.images {
        let shown = path.display();
        let bad = |e: &dyn std::fmt::Display| usage(format!("--image {shown}: {e}"));
        // Judged by what was opened: a device or a pipe has no end to read to.
        let file = std::fs::File::open(path).map_err(|e| bad(&e))?;
        let meta = file.metadata().map_err(|e| bad(&e))?;
        if !meta.is_file() {
            return Err(bad(&"not a regular file"));
        }
        let max = skald_llm::vision::MAX_INPUT_BYTES as u64;
        let mut data = Vec::new();
        std::io::Read::read_to_end(&mut std::io::Read::take(file, max + 1), &mut data)
            .map_err(|e| bad(&e))?;
        if data.len() as u64 > max {
            return Err(bad(&format!("more than the {max} bytes an image may have")));
        }
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        let kept = skald_core::images::keep(store, data, name).map_err(|e| match e {
            skald_core::images::ImageError::Image(e) => usage(format!("--image {shown}: {e}")),
            skald_core::images::ImageError::Store(e) => failed(e),
        })?;
        images.push(skald_store::ImageRef {
            sha256: kept.sha256,
            name: kept.name,
        });
    }
    Ok(turn::Prompt {
        text: a.prompt.to_string(),
        images,
    })
}

/// With `--worktree`, the worktree the new chat works in, made from `cwd`, and the folder
/// it works in there; else `cwd` as it is.
fn in_worktree(
    store: &Store,
    data_dir: &DataDir,
    config: &Config,
    a: &ExecArgs<'_>,
    cwd: std::path::PathBuf,
) -> Result<(std::path::PathBuf, Option<skald_core::worktrees::Made>), Fail> {
    let Some(name) = a.worktree else {
        return Ok((cwd, None));
    };
    if a.session.is_some() {
        return Err(usage(
            "--worktree makes a new chat; a chat given with --session keeps its folder",
        ));
    }
    let name = Some(name).filter(|n| !n.is_empty());
    let made = skald_core::worktrees::make(
        store,
        data_dir,
        &cwd,
        name,
        a.group.unwrap_or("default"),
        config.checkpoints.settings(data_dir.root()).limits,
    )
    .map_err(|e| match e {
        skald_core::worktrees::WorktreesError::Store(e) => failed(e),
        e => usage(e),
    })?;
    Ok((made.worktree.working_dir.clone(), Some(made)))
}

/// The session the turn runs in: the one `--session` names, or a new one titled by the prompt.
fn open_session(
    store: &Store,
    a: &ExecArgs<'_>,
    cwd: &Path,
    run_context_id: Option<i64>,
) -> Result<skald_store::Session, Fail> {
    match a.session {
        Some(id) => store.get_session(id).map_err(usage),
        None => {
            let title: String = a.prompt.chars().take(60).collect();
            store
                .create_session(&NewSession {
                    title,
                    agent_id: a.agent.unwrap_or("main").to_string(),
                    working_dir: Some(cwd.display().to_string()),
                    run_context_id,
                    ..NewSession::default()
                })
                .map_err(failed)
        }
    }
}

/// Secrets, plugins and MCP servers, in that order; none of them failing stops the turn.
fn start_services(engine: &Arc<Engine>, data_dir: &DataDir, config: &Config) {
    // Before anything starts a process: the declared providers' keys stay with Skald.
    engine
        .withheld
        .hide_env(skald_core::models::key_envs(config));
    // Secrets first: MCP servers may refer to them, and results are redacted with them.
    if let Err(e) = engine.open_secrets(data_dir.root()) {
        eprintln!("skald exec: secrets are not available: {e}");
    }
    engine.start_plugins();
    // MCP servers connect in the background; the turn never waits for them.
    if let Err(e) = engine.start_mcp(Some(data_dir.logs_dir())) {
        eprintln!("skald exec: cannot start the MCP servers: {e}");
    }
}

/// Stops what the turn left running and gives the exit code its outcome stands for.
async fn wind_down(
    engine: &Arc<Engine>,
    outcome: Result<TurnOutcome, turn::TurnError>,
) -> Result<u8, Fail> {
    // Counted first: a shutdown stops them too, and they are said either way.
    let running = engine.processes.running();
    if !matches!(outcome, Ok(TurnOutcome::Final)) {
        engine.shutdown();
        engine.wait_tasks(std::time::Duration::from_secs(5)).await;
    }
    // MCP servers' processes end with this one, and so do the processes the turn started
    // in the background (docs/processes.md): said, since the model may have promised them.
    engine.mcp.manager.stop_all();
    skald_lsp::pool().stop_all().await;
    let stopped = engine.processes.stop_all().await.max(running);
    if stopped > 0 {
        eprintln!(
            "skald exec: stopped {stopped} background process{} the turn left running; they \
             end with skald exec",
            if stopped == 1 { "" } else { "es" }
        );
    }
    match outcome {
        Ok(TurnOutcome::Final) => Ok(exit::OK),
        Ok(TurnOutcome::Cancelled) => Ok(exit::CANCELLED),
        Ok(TurnOutcome::Exhausted | TurnOutcome::Failed) => Ok(exit::FAILED),
        Err(e) => Err(failed(e)),
    }
}

/// The folder `--cwd` names (the current one without it), which must exist.
fn working_dir(cwd: Option<&Path>) -> Result<std::path::PathBuf, Fail> {
    let cwd = match cwd.map(Path::to_path_buf) {
        Some(d) => d,
        None => std::env::current_dir()
            .map_err(|e| usage(format!("cannot read the current directory: {e}")))?,
    };
    match std::fs::canonicalize(&cwd) {
        Ok(d) if d.is_dir() => Ok(d),
        _ => Err(usage(format!(
            "working directory {} is not a directory",
            cwd.display()
        ))),
    }
}

/// The run context a new session asks for with --group, --allow-read, --allow-write and
/// --extra-prompt, stored; `None` when none of them is given.
fn new_run_context(store: &Store, a: &ExecArgs<'_>) -> Result<Option<i64>, Fail> {
    let wants_context = a.group.is_some()
        || !a.allow_read.is_empty()
        || !a.allow_write.is_empty()
        || a.extra_prompt.is_some();
    if !wants_context {
        return Ok(None);
    }
    if a.session.is_some() {
        return Err(usage(
            "--group, --allow-read, --allow-write and --extra-prompt set up a new session; a \
             continued session keeps the run context it was started with",
        ));
    }
    let canon = |dirs: &[std::path::PathBuf]| -> Result<Vec<String>, Fail> {
        dirs.iter()
            .map(|d| {
                std::fs::canonicalize(d)
                    .map(|p| p.display().to_string())
                    .map_err(|e| usage(format!("grant {}: {e}", d.display())))
            })
            .collect()
    };
    let (reads, writes) = (canon(a.allow_read)?, canon(a.allow_write)?);
    let rc = store
        .create_run_context(
            a.group.unwrap_or("default"),
            a.extra_prompt.unwrap_or(""),
            &reads,
            &writes,
        )
        .map_err(failed)?;
    Ok(Some(rc.id))
}

/// The folder the session acts in. A session acts in the folder it was started in:
/// approvals and previews were given for that folder, so a continued session never
/// silently moves.
fn session_folder(
    a: &ExecArgs<'_>,
    session: &skald_store::Session,
    cwd: std::path::PathBuf,
) -> Result<std::path::PathBuf, Fail> {
    if a.session.is_none() {
        return Ok(cwd);
    }
    let stored = session.working_dir.as_deref().map(std::path::PathBuf::from);
    match (stored, a.cwd) {
        (Some(dir), Some(_)) if dir != cwd => Err(usage(format!(
            "session {} works in {}; --cwd {} would move it",
            session.id,
            dir.display(),
            cwd.display()
        ))),
        (Some(dir), _) => Ok(dir),
        (None, _) => Ok(cwd),
    }
}

/// Asks at the terminal whether a call may run. The label is a title (cut, on one line);
/// the arguments follow whole, line by line, with every control that could hide a line or
/// repaint the terminal escaped.
async fn ask_at_the_terminal(req: turn::AskRequest) -> bool {
    tokio::task::spawn_blocking(move || {
        let mut prompt = format!(
            "\n? {} needs approval ({}).\n  {}\n",
            escape_controls_inline(&req.label),
            escape_controls_inline(&req.reason),
            escape_controls_inline(&req.tool)
        );
        for line in crate::approval_prompt::argument_lines(&req.arguments, "    ") {
            prompt.push_str(&line);
            prompt.push('\n');
        }
        prompt.push_str("  Run it? [y/N] ");
        eprint!("{prompt}");
        let mut line = String::new();
        if std::io::stdin().read_line(&mut line).is_err() {
            return false;
        }
        matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes")
    })
    .await
    .unwrap_or(false)
}

/// Runs the turn, then keeps the chat going while background tasks it started report
/// back: the process stays until they have ended and the chat has answered their results
/// (Ctrl-C stops them all).
async fn turn_and_deliveries(
    engine: &Engine,
    env: &turn::TurnEnv<'_>,
    store: &Store,
    session_id: i64,
    prompt: &turn::Prompt,
    cancel: &CancellationToken,
    emit: turn::Emit<'_>,
) -> Result<Result<TurnOutcome, turn::TurnError>, Fail> {
    let mut outcome = turn::run_turn(env, session_id, Some(prompt), cancel, emit).await;
    while let Ok(TurnOutcome::Final) = outcome {
        // Tasks first: a task stores its result before it leaves the running set, so
        // reading them in this order never misses a result in between.
        let tasks_running = engine.has_running_tasks(session_id);
        let ready = store.next_delivery_at(session_id).map_err(failed)?;
        let now = skald_store::now_ms();
        match ready {
            Some(at) if at <= now => {
                outcome = turn::run_turn(env, session_id, None, cancel, emit).await;
                continue;
            }
            None if !tasks_running => break,
            _ => {}
        }
        let wait = ready.map_or(500, |at| (at - now).clamp(1, 500));
        tokio::select! {
            _ = cancel.cancelled() => {
                outcome = Ok(TurnOutcome::Cancelled);
            }
            _ = engine.changed(std::time::Duration::from_millis(wait.unsigned_abs())) => {}
        }
    }
    Ok(outcome)
}

fn print_event(event: &Event, json: bool) {
    let mut out = std::io::stdout().lock();
    // A closed pipe is not the turn's failure; the turn goes on and is stored.
    let _ = if json {
        match serde_json::to_string(event) {
            Ok(line) => writeln!(out, "{line}"),
            Err(_) => Ok(()),
        }
    } else {
        match event {
            // The model's text keeps its lines but not its terminal controls: a
            // concealing or colour escape would hide the approval prompt after it.
            Event::TokenDelta { text } => write!(out, "{}", escape_controls(text)),
            Event::ToolStart { label_short, .. } => {
                writeln!(out, "\n→ {}", escape_controls_inline(label_short))
            }
            Event::ToolError { error, .. } => {
                writeln!(out, "  ✗ {}", escape_controls_inline(first_line(error)))
            }
            Event::ToolRejected { .. } => {
                writeln!(out, "  ✗ rejected (needs approval; --approve all runs it)")
            }
            Event::ToolCancelled { .. } => writeln!(out, "  ✗ cancelled"),
            Event::ApprovalRequired {
                label, inbox_id, ..
            } => writeln!(
                out,
                "  ⏸ waiting for approval of {}: skald inbox answer {inbox_id} approve|reject",
                escape_controls_inline(label)
            ),
            Event::OpenFile { path } => writeln!(out, "  📄 open {}", escape_controls_inline(path)),
            // What the agent was told besides its prompt, on stderr: the answer on stdout
            // stays the answer.
            Event::Context { context, .. } if !context.instructions.is_empty() => {
                let files: Vec<String> = context
                    .instructions
                    .iter()
                    .map(|f| {
                        let note = if f.note.is_empty() {
                            String::new()
                        } else {
                            format!(" ({})", f.note)
                        };
                        format!("{}{note}", escape_controls_inline(&f.path))
                    })
                    .collect();
                let _ = writeln!(std::io::stderr(), "· instructions: {}", files.join(", "));
                Ok(())
            }
            Event::Checkpoint { checkpoint } if checkpoint.restorable() => writeln!(
                out,
                "  ↺ {}{} (undo: skald checkpoints restore {})",
                escape_controls_inline(&checkpoint.changes.summary()),
                if checkpoint.note.is_empty() {
                    String::new()
                } else {
                    format!("; {}", escape_controls_inline(&checkpoint.note))
                },
                checkpoint.id
            ),
            Event::Checkpoint { checkpoint } => {
                writeln!(out, "  ↺ {}", escape_controls_inline(&checkpoint.note))
            }
            // On the terminal only, one line rewritten in place and cleared at the end: a
            // script reading stderr wants the errors, not a percentage a second.
            Event::PromptProgress { read, total } => {
                let mut err = std::io::stderr().lock();
                if err.is_terminal() {
                    let _ = match (read * 100).checked_div(*total) {
                        Some(100) | None => write!(err, "\r\x1b[K"),
                        Some(pct) => write!(err, "\rreading the prompt… {pct}%"),
                    };
                    let _ = err.flush();
                }
                Ok(())
            }
            Event::TaskUpdate {
                task_id,
                title,
                status,
                session_id,
                ..
            } => match status.as_str() {
                "running" => writeln!(
                    out,
                    "\n🚀 task {task_id} started in the background: {} (session {})",
                    escape_controls_inline(title),
                    session_id.unwrap_or_default()
                ),
                other => writeln!(
                    out,
                    "\n■ task {task_id} {other}: {}",
                    escape_controls_inline(title)
                ),
            },
            Event::AgentStart {
                agent_id, depth, ..
            } => {
                writeln!(out, "{}↳ {agent_id} is working", "  ".repeat(*depth))
            }
            Event::LlmFailed { message, .. } | Event::Error { message } => {
                eprintln!("skald exec: {}", escape_controls(message));
                Ok(())
            }
            Event::Done {
                outcome,
                session_id,
                ..
            } => {
                let _ = writeln!(out);
                match outcome {
                    TurnOutcome::Final => Ok(()),
                    TurnOutcome::Cancelled => writeln!(out, "[stopped; session {session_id}]"),
                    TurnOutcome::Exhausted => {
                        writeln!(out, "[round limit reached; session {session_id}]")
                    }
                    TurnOutcome::Failed => writeln!(out, "[failed; session {session_id}]"),
                }
            }
            _ => Ok(()),
        }
    };
    let _ = out.flush();
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

/// Ctrl-C (or SIGTERM, SIGHUP) ends the turn, and what it started, as a cancel does; a
/// second one exits at once.
async fn stop_on_signal(mut signal: crate::stop_signal::StopSignal, cancel: CancellationToken) {
    signal.wait().await;
    cancel.cancel();
    signal.wait().await;
    std::process::exit(i32::from(exit::CANCELLED));
}
