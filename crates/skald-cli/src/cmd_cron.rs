//! `skald cron`: scheduled jobs — list, add, remove, enable, disable, their runs, and
//! `run`, the scheduler in the foreground (`--once`: what is due now, then exit).

use crate::Approve;
use clap::Subcommand;
use skald_api::escape_controls_inline;
use std::path::PathBuf;

use crate::exit;
use crate::fail::{Fail, finish};
use skald_core::engine::{Engine, TurnSettings};
use skald_core::tasks::cron::{self, JobSpec, Scheduler};
use skald_core::turn::ApprovalMode;
use skald_core::{Config, DataDir, builtin_registry};
use skald_service::records::Records;
use skald_store::{MissedPolicy, Store, StoreError};
use std::sync::Arc;

fn open(data_dir: &DataDir) -> Result<Store, Fail> {
    Store::open(data_dir.db_path()).map_err(Fail::failed)
}

/// What the user named wrongly (no such job) is bad usage; the rest failed.
fn store_fail(e: StoreError) -> Fail {
    match e {
        StoreError::NotFound { .. } => Fail::usage(e),
        _ => Fail::failed(e),
    }
}

fn time(ms: Option<i64>) -> String {
    ms.map_or_else(|| "never".to_string(), cron::format_time)
}

pub fn list(data_dir: &DataDir, json: bool) -> Result<u8, Fail> {
    let store = open(data_dir)?;
    let jobs = store.list_jobs().map_err(Fail::failed)?;
    if json {
        let mut out = Vec::new();
        for j in &jobs {
            let mut v = serde_json::to_value(j).unwrap_or_default();
            let last = store
                .list_runs(j.id)
                .ok()
                .and_then(|r| r.into_iter().next());
            v["last_run"] = serde_json::to_value(last).unwrap_or_default();
            out.push(v);
        }
        println!("{}", serde_json::Value::Array(out));
        return Ok(exit::OK);
    }
    if jobs.is_empty() {
        println!("No scheduled jobs. Add one with `skald cron add`.");
        return Ok(exit::OK);
    }
    for j in jobs {
        let last = store
            .list_runs(j.id)
            .ok()
            .and_then(|r| r.into_iter().next())
            .map(|r| {
                format!(
                    "{} ({})",
                    r.status.as_str(),
                    cron::format_time(r.scheduled_for)
                )
            })
            .unwrap_or_else(|| "—".into());
        println!(
            "{:>4}  {}  {:<20} {} [{}]  agent {}  next {}  last {}",
            j.id,
            if j.enabled { "on " } else { "off" },
            escape_controls_inline(&j.name),
            j.cron,
            j.timezone,
            j.agent_id,
            if j.enabled {
                time(j.next_run_at)
            } else {
                "—".into()
            },
            last
        );
    }
    Ok(exit::OK)
}

pub struct AddArgs<'a> {
    pub name: Option<&'a str>,
    pub agent: &'a str,
    pub prompt: &'a str,
    pub cron: &'a str,
    pub tz: Option<&'a str>,
    pub missed: &'a str,
    pub cwd: Option<&'a std::path::Path>,
    pub home: Option<i64>,
    pub worktree: bool,
    pub json: bool,
}

/// The job's working directory: `--cwd` or the current one, which must exist.
fn job_dir(cwd: Option<&std::path::Path>) -> Result<PathBuf, Fail> {
    let cwd = cwd
        .map_or_else(std::env::current_dir, |d| Ok(d.to_path_buf()))
        .map_err(|e| Fail::usage(format!("cannot read the current directory: {e}")))?;
    std::fs::canonicalize(&cwd).map_err(|_| {
        Fail::usage(format!(
            "working directory {} does not exist",
            cwd.display()
        ))
    })
}

pub fn add(data_dir: &DataDir, a: AddArgs<'_>) -> Result<u8, Fail> {
    let store = open(data_dir)?;
    let library = skald_core::agents::Library::load(data_dir.root()).map_err(Fail::failed)?;
    let missed = MissedPolicy::parse(a.missed)
        .ok_or_else(|| Fail::usage("--missed takes `once` or `skip`"))?;
    let cwd = job_dir(a.cwd)?;
    if let Some(h) = a.home {
        match store.get_session(h) {
            Ok(s) if s.kind == skald_store::SessionKind::Interactive => {}
            Ok(_) => {
                return Err(Fail::usage(format!(
                    "--home: session {h} is a background session, not a chat"
                )));
            }
            Err(e) => return Err(Fail::usage(format!("--home: {e}"))),
        }
    }
    let job = cron::create_job(
        &store,
        &library,
        JobSpec {
            name: a.name.unwrap_or_default().to_string(),
            description: String::new(),
            agent_id: a.agent.to_string(),
            prompt: a.prompt.to_string(),
            cron: a.cron.to_string(),
            timezone: a.tz.map(str::to_string),
            missed_policy: missed,
            home_session_id: a.home,
            run_context_id: None,
            working_dir: Some(cwd.display().to_string()),
            worktree: a.worktree,
        },
    )
    .map_err(|e| match e {
        cron::CronError::Store(e) => Fail::failed(e),
        e => Fail::usage(e),
    })?;
    if a.json {
        println!("{}", serde_json::to_value(&job).unwrap_or_default());
    } else {
        println!(
            "added job {}: {} — next run {} ({}). It runs while `skald cron run` (or the app) is running.",
            job.id,
            job.name,
            time(job.next_run_at),
            job.timezone
        );
    }
    Ok(exit::OK)
}

pub fn rm(data_dir: &DataDir, id: i64) -> Result<u8, Fail> {
    let store = open(data_dir)?;
    Records::new(&store).remove_job(id)?;
    println!("removed job {id}");
    Ok(exit::OK)
}

pub fn enable(data_dir: &DataDir, id: i64, on: bool) -> Result<u8, Fail> {
    let store = open(data_dir)?;
    let job = Records::new(&store).set_job_enabled(id, on)?;
    if on {
        println!("job {id} enabled; next run {}", time(job.next_run_at));
    } else {
        println!("job {id} disabled");
    }
    Ok(exit::OK)
}

pub fn runs(data_dir: &DataDir, id: i64, json: bool) -> Result<u8, Fail> {
    let store = open(data_dir)?;
    store.get_job(id).map_err(store_fail)?;
    let runs = store.list_runs(id).map_err(Fail::failed)?;
    if json {
        println!("{}", serde_json::to_value(&runs).unwrap_or_default());
        return Ok(exit::OK);
    }
    if runs.is_empty() {
        println!("Job {id} has not run yet.");
    }
    for r in runs {
        let covers = if r.occurrences > 1 {
            format!(" (for {} missed runs)", r.occurrences)
        } else {
            String::new()
        };
        println!(
            "{:>4}  {}  {}{covers}  session {}",
            r.id,
            cron::format_time(r.scheduled_for),
            r.status.as_str(),
            r.session_id.map_or_else(|| "—".into(), |s| s.to_string())
        );
        if let Some(result) = r.result.filter(|t| !t.is_empty()) {
            for line in result.lines() {
                println!("      {}", escape_controls_inline(line));
            }
        }
        // What the run changed in its folder can be looked at and undone from here.
        if let Some(sid) = r.session_id {
            let changed = store.checkpoints(sid).map_err(Fail::failed)?;
            let files: usize = changed.iter().map(|c| c.changes.total).sum();
            if files > 0 {
                println!(
                    "      changed files ({} {}): skald checkpoints list {sid}",
                    changed.len(),
                    if changed.len() == 1 { "step" } else { "steps" }
                );
            }
        }
    }
    Ok(exit::OK)
}

/// The engine the scheduler's runs use, with secrets, plugins and MCP servers started
/// (none of those failing stops the scheduler).
fn start_engine(
    data_dir: &DataDir,
    config: &Config,
    model: Option<&str>,
    approval: ApprovalMode,
    json: bool,
) -> Result<Arc<Engine>, Fail> {
    let models = skald_core::models::choose_models(config, model, &data_dir.models_dir(), |k| {
        std::env::var(k).ok()
    })
    .map_err(Fail::usage)?;
    let store = Arc::new(open(data_dir)?);
    let registry = Arc::new(builtin_registry().map_err(Fail::failed)?);
    let library =
        Arc::new(skald_core::agents::Library::load(data_dir.root()).map_err(Fail::failed)?);
    let sink: skald_core::engine::Sink = Arc::new(move |session_id, event| {
        crate::session_events::print(session_id, &event, json, true);
    });
    let engine = Engine::new(
        store,
        registry,
        models,
        library,
        TurnSettings::from_config(config, data_dir, approval),
        sink,
    );
    // Before anything starts a process: the declared providers' keys stay with Skald.
    engine
        .withheld
        .hide_env(skald_core::models::key_envs(config));
    if let Err(e) = engine.open_secrets(data_dir.root()) {
        eprintln!("skald cron: secrets are not available: {e}");
    }
    engine.start_plugins();
    if let Err(e) = engine.start_mcp(Some(data_dir.logs_dir())) {
        eprintln!("skald cron: cannot start the MCP servers: {e}");
    }
    Ok(engine)
}

/// The first Ctrl-C stops the scheduler (and marks it `interrupted`); a second one exits.
fn stop_on_ctrl_c(cancel: skald_api::CancellationToken, interrupted: skald_api::CancellationToken) {
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            interrupted.cancel();
            cancel.cancel();
        }
        if tokio::signal::ctrl_c().await.is_ok() {
            std::process::exit(i32::from(exit::CANCELLED));
        }
    });
}

/// `--once`: the runs due now, then what they delivered to their home chats.
async fn run_once(
    engine: &Arc<Engine>,
    scheduler: &Scheduler,
    cancel: &skald_api::CancellationToken,
    json: bool,
) -> Result<(), cron::CronError> {
    let started = scheduler.tick(cancel)?;
    if !json {
        println!("{} run(s) due", started.len());
    }
    scheduler.wait_runs().await;
    // What the runs delivered is taken in before exiting. Notifications wait a moment to
    // be batched; a chat that cannot take its deliveries is left for the next carrier
    // rather than waited on.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        match engine.continue_ready_chats(cancel).await {
            Ok(Some(wait))
                if !cancel.is_cancelled() && tokio::time::Instant::now() + wait < deadline =>
            {
                tokio::time::sleep(wait).await
            }
            Ok(_) => return Ok(()),
            Err(e) => return Err(cron::CronError::Engine(e)),
        }
    }
}

/// The scheduler in the foreground until Ctrl-C, or (`once`) what is due now.
pub async fn run(
    data_dir: &DataDir,
    config: &Config,
    model: Option<&str>,
    approval: ApprovalMode,
    once: bool,
    json: bool,
) -> Result<u8, Fail> {
    let engine = start_engine(data_dir, config, model, approval, json)?;
    let scheduler = Scheduler::new(engine.clone(), Scheduler::process_owner());
    let cancel = skald_api::CancellationToken::new();
    // Set by Ctrl-C only: `cancel` is also used to stop the chats loop on the way out.
    let interrupted = skald_api::CancellationToken::new();
    stop_on_ctrl_c(cancel.clone(), interrupted.clone());
    // Notifications from the runs go to their home chats, which this process continues
    // (the app does the same when it is the one running).
    let result = if once {
        run_once(&engine, &scheduler, &cancel, json).await
    } else {
        if !json {
            println!(
                "Scheduler running; Ctrl-C stops it (runs in progress resume at the next start)."
            );
        }
        let chats = tokio::spawn(engine.clone().continue_chats(cancel.clone()));
        let r = scheduler.run(&cancel).await;
        cancel.cancel();
        let _ = chats.await;
        r
    };
    let stopped = interrupted.is_cancelled();
    // MCP servers' and language servers' processes end with this one.
    engine.mcp.manager.stop_all();
    skald_lsp::pool().stop_all().await;
    result.map_err(Fail::failed)?;
    if stopped {
        return Ok(exit::CANCELLED);
    }
    Ok(exit::OK)
}

#[derive(Debug, Subcommand)]
pub enum CronCommand {
    /// Every job with its schedule, next run and last run
    List {
        #[arg(long)]
        json: bool,
    },
    /// Schedule a task agent
    #[command(
        after_help = "The expression has 5 fields (minute hour day month weekday) or 6 with \
                      seconds first, in --tz (default: the local zone).\n\nExamples:\n  \
                      skald cron add --agent researcher --cron \"0 9 * * MON-FRI\" --prompt \"Summarise yesterday's notes\"\n  \
                      skald cron add --agent software-engineer --cron \"0 */15 * * * *\" --tz UTC --missed skip --prompt \"Run the tests\""
    )]
    Add {
        /// The task agent that runs it
        #[arg(long)]
        agent: String,
        /// What the agent is asked at each run
        #[arg(long)]
        prompt: String,
        /// Cron expression (seconds optional)
        #[arg(long)]
        cron: String,
        /// A short name [default: the prompt's start]
        #[arg(long)]
        name: Option<String>,
        /// IANA time zone, e.g. Europe/Paris [default: local]
        #[arg(long)]
        tz: Option<String>,
        /// After a downtime: `once` runs one run for all missed occurrences, `skip` drops them
        #[arg(long, default_value = "once")]
        missed: String,
        /// The folder the agent works in [default: the current one]
        #[arg(long, value_name = "DIR")]
        cwd: Option<PathBuf>,
        /// The chat its notifications go to [default: the home chat]
        #[arg(long, value_name = "SESSION")]
        home: Option<i64>,
        /// Each run works in a worktree of its own, reviewed and applied like a chat's
        /// (`skald worktrees`): it never writes the folder
        #[arg(long)]
        worktree: bool,
        #[arg(long)]
        json: bool,
    },
    /// Remove a job and its runs' records
    Rm { id: i64 },
    /// Turn a job on (from its next occurrence)
    Enable { id: i64 },
    /// Turn a job off
    Disable { id: i64 },
    /// A job's runs, newest first, with their results
    Runs {
        id: i64,
        #[arg(long)]
        json: bool,
    },
    /// Run the scheduler in the foreground until Ctrl-C
    #[command(
        after_help = "Several schedulers (processes) may share one data directory: each \
                      occurrence runs once. Runs stopped by Ctrl-C resume at the next start."
    )]
    Run {
        /// Run what is due now (missed and interrupted runs too), wait for it, and exit
        #[arg(long)]
        once: bool,
        /// The model [default: SKALD_MODEL]
        #[arg(long, value_name = "MODEL")]
        model: Option<String>,
        /// Calls needing approval: wait in the Inbox (default), or run them all
        #[arg(long, value_enum, default_value = "inbox")]
        approve: Approve,
        /// Print every event as one JSON object a line
        #[arg(long)]
        json: bool,
    },
}

/// Runs one `cron` subcommand; its exit code.
pub async fn dispatch(env: &crate::Env, command: CronCommand) -> u8 {
    let result = match command {
        CronCommand::List { json } => list(&env.data_dir, json),
        CronCommand::Add {
            agent,
            prompt,
            cron,
            name,
            tz,
            missed,
            cwd,
            home,
            worktree,
            json,
        } => add(
            &env.data_dir,
            AddArgs {
                name: name.as_deref(),
                agent: &agent,
                prompt: &prompt,
                cron: &cron,
                tz: tz.as_deref(),
                missed: &missed,
                cwd: cwd.as_deref(),
                home,
                worktree,
                json,
            },
        ),
        CronCommand::Rm { id } => rm(&env.data_dir, id),
        CronCommand::Enable { id } => enable(&env.data_dir, id, true),
        CronCommand::Disable { id } => enable(&env.data_dir, id, false),
        CronCommand::Runs { id, json } => runs(&env.data_dir, id, json),
        CronCommand::Run {
            once,
            model,
            approve,
            json,
        } => {
            run(
                &env.data_dir,
                &env.config,
                model.as_deref(),
                approve.mode(),
                once,
                json,
            )
            .await
        }
    };
    finish("skald cron", result)
}
