//! Scheduled jobs (docs/tasks.md, "Scheduled jobs (cron)"): cron expressions with optional
//! seconds, evaluated in the job's time zone; a scheduler that claims each occurrence
//! through the store (so two Skald processes on one database run it once), runs it in a
//! fresh background session with the job's agent, and keeps its result per run.
//!
//! Missed occurrences (Skald was not running) follow the job's policy: `once` runs one run
//! at the next start that stands for all of them; `skip` drops them. A run a shutdown
//! interrupted is taken over at the next start and goes on from where it stopped; so is a
//! run whose process died, once its lease runs out.

use crate::engine::{Engine, EngineError};
use crate::lock;
use chrono::{DateTime, TimeZone, Utc};
use chrono_tz::Tz;
use croner::Cron;
use croner::parser::CronParser;
use skald_api::CancellationToken;
use skald_api::events::{Event, TurnOutcome};
use skald_store::{
    Claim, JobRun, MissedPolicy, NewJob, NewSession, RunStatus, ScheduledJob, SessionKind,
};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long a run's lease lasts before another process may take the run over; the owner
/// renews it at a third of that.
pub const LEASE_MS: i64 = 60_000;

/// A late occurrence still runs under `skip` if it is at most this late (a tick's delay,
/// a laptop waking up a little after the hour).
const SKIP_GRACE_MS: i64 = 60_000;

/// Missed occurrences counted one by one before the count becomes a lower bound.
const MAX_COUNTED: usize = 10_000;

/// How often the scheduler looks at the store even when no job is due: jobs added or
/// enabled by other processes, and runs whose owner died.
const POLL: Duration = Duration::from_secs(5);

#[derive(Debug, thiserror::Error)]
pub enum CronError {
    #[error("invalid cron expression `{expr}`: {reason}")]
    Expression { expr: String, reason: String },
    #[error("unknown time zone `{0}` (use an IANA name such as Europe/Paris or UTC)")]
    TimeZone(String),
    #[error("{0}")]
    Engine(#[from] EngineError),
    #[error("{0}")]
    Store(#[from] skald_store::StoreError),
    #[error("{0}")]
    Invalid(String),
}

/// A parsed schedule: the expression and the zone it is read in.
#[derive(Debug, Clone)]
pub struct Schedule {
    cron: Cron,
    tz: Tz,
}

impl Schedule {
    /// Parses `expr` (5 fields, or 6 with seconds first) in time zone `tz`.
    pub fn parse(expr: &str, tz: &str) -> Result<Schedule, CronError> {
        let cron = CronParser::new()
            .parse(expr)
            .map_err(|e| CronError::Expression {
                expr: expr.to_string(),
                reason: e.to_string(),
            })?;
        let tz: Tz = tz
            .parse()
            .map_err(|_| CronError::TimeZone(tz.to_string()))?;
        Ok(Schedule { cron, tz })
    }

    /// The last occurrence at or before `ms`, if any.
    pub fn latest_at_or_before(&self, ms: i64) -> Option<i64> {
        let start = self.tz.timestamp_millis_opt(ms).single()?;
        self.cron
            .find_previous_occurrence(&start, true)
            .ok()
            .map(|t| t.timestamp_millis())
    }

    /// The first occurrence strictly after `after_ms` (Unix ms), if any.
    pub fn next_after(&self, after_ms: i64) -> Option<i64> {
        let start = self.tz.timestamp_millis_opt(after_ms).single()?;
        self.cron
            .find_next_occurrence(&start, false)
            .ok()
            .map(|t| t.timestamp_millis())
    }
}

/// The local time zone's IANA name, or UTC when it cannot be found.
pub fn local_timezone() -> String {
    iana_time_zone::get_timezone()
        .ok()
        .filter(|z| z.parse::<Tz>().is_ok())
        .unwrap_or_else(|| "UTC".to_string())
}

/// A Unix-ms time as RFC 3339 in UTC, for people and models.
pub fn format_time(ms: i64) -> String {
    DateTime::<Utc>::from_timestamp_millis(ms)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        .unwrap_or_else(|| ms.to_string())
}

/// What a new job needs; the rest is derived.
#[derive(Debug, Clone)]
pub struct JobSpec {
    pub name: String,
    pub description: String,
    pub agent_id: String,
    pub prompt: String,
    pub cron: String,
    /// IANA name; `None`: the local zone.
    pub timezone: Option<String>,
    pub missed_policy: MissedPolicy,
    pub home_session_id: Option<i64>,
    pub run_context_id: Option<i64>,
    pub working_dir: Option<String>,
    /// Each run works in a worktree of its own (docs/worktrees.md).
    pub worktree: bool,
}

/// Checks and stores a new job, with its first occurrence. The agent must be a task agent.
pub fn create_job(
    store: &skald_store::Store,
    library: &crate::agents::Library,
    spec: JobSpec,
) -> Result<ScheduledJob, CronError> {
    let agent = library
        .get(&spec.agent_id)
        .map_err(|e| CronError::Invalid(e.to_string()))?;
    if agent.meta.kind != crate::agents::AgentKind::Task {
        return Err(CronError::Invalid(format!(
            "`{}` is not a task agent; scheduled jobs run task agents",
            spec.agent_id
        )));
    }
    if spec.prompt.trim().is_empty() {
        return Err(CronError::Invalid("the job needs a prompt".into()));
    }
    let timezone = spec.timezone.unwrap_or_else(local_timezone);
    let schedule = Schedule::parse(&spec.cron, &timezone)?;
    let next = schedule.next_after(skald_store::now_ms());
    if next.is_none() {
        return Err(CronError::Invalid(format!(
            "`{}` never fires after now",
            spec.cron
        )));
    }
    let name = if spec.name.trim().is_empty() {
        spec.prompt.chars().take(40).collect()
    } else {
        spec.name
    };
    Ok(store.create_job(&NewJob {
        name,
        description: spec.description,
        agent_id: spec.agent_id,
        prompt: spec.prompt,
        cron: spec.cron,
        timezone,
        missed_policy: spec.missed_policy,
        home_session_id: spec.home_session_id,
        run_context_id: spec.run_context_id,
        working_dir: spec.working_dir,
        worktree: spec.worktree,
        next_run_at: next,
    })?)
}

/// Changes a job's name, prompt and schedule; an enabled job's next run is the new
/// schedule's next occurrence after now.
pub fn update_job(
    store: &skald_store::Store,
    id: i64,
    name: &str,
    prompt: &str,
    cron: &str,
    timezone: &str,
) -> Result<ScheduledJob, CronError> {
    if prompt.trim().is_empty() {
        return Err(CronError::Invalid("the job needs a prompt".into()));
    }
    let schedule = Schedule::parse(cron, timezone)?;
    let next = schedule.next_after(skald_store::now_ms());
    if next.is_none() {
        return Err(CronError::Invalid(format!(
            "`{cron}` never fires after now"
        )));
    }
    let name = if name.trim().is_empty() {
        prompt.chars().take(40).collect()
    } else {
        name.trim().to_string()
    };
    Ok(store.update_job(id, &name, prompt, cron.trim(), timezone.trim(), next)?)
}

/// Turns a job on (from its next occurrence after now) or off.
pub fn set_enabled(
    store: &skald_store::Store,
    id: i64,
    enabled: bool,
) -> Result<ScheduledJob, CronError> {
    let job = store.get_job(id)?;
    let next = if enabled {
        Schedule::parse(&job.cron, &job.timezone)?.next_after(skald_store::now_ms())
    } else {
        None
    };
    Ok(store.set_job_enabled(id, enabled, next)?)
}

/// The occurrence to claim for a due job — the latest one up to now, standing for all the
/// missed ones — and whether its missed-run policy runs it (`false`: the job is only moved
/// on to its next occurrence).
fn plan(job: &ScheduledJob, now: i64) -> Result<(Claim, bool), CronError> {
    let seen = job.next_run_at.unwrap_or(now);
    let schedule = Schedule::parse(&job.cron, &job.timezone)?;
    // Walk the missed occurrences up to now; a job down for years must not loop for
    // long, so past a bound the count is a lower bound and the latest is found directly.
    let (mut latest, mut count) = (seen, 1i64);
    let mut cursor = seen;
    let mut capped = true;
    for _ in 0..MAX_COUNTED {
        match schedule.next_after(cursor) {
            Some(t) if t <= now => {
                latest = t;
                count += 1;
                cursor = t;
            }
            _ => {
                capped = false;
                break;
            }
        }
    }
    if capped && let Some(last) = schedule.latest_at_or_before(now) {
        latest = latest.max(last);
    }
    let next = schedule.next_after(now.max(latest));
    let run = match job.missed_policy {
        MissedPolicy::Once => true,
        MissedPolicy::Skip => now - latest <= SKIP_GRACE_MS,
    };
    // Under `skip` a run never stands for the occurrences it dropped.
    if job.missed_policy == MissedPolicy::Skip {
        count = 1;
    }
    Ok((
        Claim {
            job_id: job.id,
            seen_next_run_at: seen,
            scheduled_for: latest,
            occurrences: count,
            new_next_run_at: next,
        },
        run,
    ))
}

/// Runs scheduled jobs. Several schedulers (processes) may share one database.
pub struct Scheduler {
    engine: Arc<Engine>,
    owner: String,
    lease_ms: i64,
    runs: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    /// Runs this scheduler is executing: a lease that lapsed while this process slept (a
    /// laptop's suspend) must not hand it its own run a second time.
    in_flight: Arc<Mutex<std::collections::HashSet<i64>>>,
}

impl Scheduler {
    /// `owner` names this scheduler in run leases; it must differ between processes.
    pub fn new(engine: Arc<Engine>, owner: String) -> Scheduler {
        Scheduler {
            engine,
            owner,
            lease_ms: LEASE_MS,
            runs: Mutex::new(Vec::new()),
            in_flight: Arc::new(Mutex::new(std::collections::HashSet::new())),
        }
    }

    /// A shorter lease, for tests of a process that dies.
    pub fn with_lease_ms(mut self, ms: i64) -> Scheduler {
        self.lease_ms = ms;
        self
    }

    /// A name unique to this process.
    pub fn process_owner() -> String {
        format!(
            "pid{}-{}",
            std::process::id(),
            skald_store::now_ms().rem_euclid(1_000_000_000)
        )
    }

    /// Claims and starts everything due now: runs to take over, then due occurrences.
    /// Returns the runs started.
    pub fn tick(&self, cancel: &CancellationToken) -> Result<Vec<JobRun>, CronError> {
        let store = &self.engine.store;
        let mut started: Vec<JobRun> = store
            .take_over_runs(&self.owner, self.lease_ms)?
            .into_iter()
            .filter(|r| !lock(&self.in_flight).contains(&r.id))
            .collect();
        let now = skald_store::now_ms();
        for job in store.due_jobs(now)? {
            let (claim, run) = match plan(&job, now) {
                Ok(p) => p,
                Err(e) => {
                    // A job whose expression no longer parses (edited by hand) is turned off
                    // rather than retried every tick.
                    tracing::error!(job = job.id, "disabling job: {e}");
                    store.set_job_enabled(job.id, false, None)?;
                    continue;
                }
            };
            if !run {
                store.advance_job(job.id, claim.seen_next_run_at, claim.new_next_run_at)?;
                continue;
            }
            if let Some(r) = store.claim_occurrence(&claim, &self.owner, self.lease_ms)? {
                started.push(r);
            }
        }
        for run in &started {
            lock(&self.in_flight).insert(run.id);
            let in_flight = self.in_flight.clone();
            let engine = self.engine.clone();
            let (run, owner, lease) = (run.clone(), self.owner.clone(), self.lease_ms);
            let cancel = cancel.clone();
            let handle = tokio::spawn(async move {
                let id = run.id;
                if let Err(e) = execute(&engine, run, &owner, lease, &cancel).await {
                    tracing::error!(run = id, "scheduled run failed: {e}");
                }
                lock(&in_flight).remove(&id);
            });
            lock(&self.runs).push(handle);
        }
        Ok(started)
    }

    /// Waits for the runs started so far.
    pub async fn wait_runs(&self) {
        let handles: Vec<_> = std::mem::take(&mut *lock(&self.runs));
        for h in handles {
            let _ = h.await;
        }
    }

    /// Runs the scheduler until `cancel`: ticks at each job's next occurrence (and every
    /// few seconds, for changes by other processes). On cancel, running jobs are stopped
    /// and recorded as interrupted, to be taken over at the next start.
    pub async fn run(&self, cancel: &CancellationToken) -> Result<(), CronError> {
        loop {
            self.tick(cancel)?;
            lock(&self.runs).retain(|h| !h.is_finished());
            let now = skald_store::now_ms();
            let wait = match self.engine.store.next_job_time()? {
                Some(t) if t > now => {
                    Duration::from_millis(u64::try_from(t - now).unwrap_or(0)).min(POLL)
                }
                Some(_) => Duration::from_millis(50),
                None => POLL,
            };
            tokio::select! {
                _ = cancel.cancelled() => break,
                _ = tokio::time::sleep(wait) => {}
            }
        }
        self.wait_runs().await;
        Ok(())
    }
}

/// Runs one claimed occurrence in its session (new, or the one an interrupted run left),
/// renewing the lease while it works, and records the result.
async fn execute(
    engine: &Arc<Engine>,
    run: JobRun,
    owner: &str,
    lease_ms: i64,
    cancel: &CancellationToken,
) -> Result<(), CronError> {
    let store = &engine.store;
    let job = store.get_job(run.job_id)?;
    let session_id = match run.session_id {
        Some(id) if store.find_session(id)?.is_some() => id,
        _ => {
            let home = match job.home_session_id {
                Some(h) => h,
                None => engine.home_session()?,
            };
            // A job that asks for it runs each time in a worktree of its own.
            let made = match (&job.working_dir, job.worktree) {
                (Some(dir), true) => {
                    let group = match job.run_context_id {
                        Some(id) => store.get_run_context(id)?.permission_group,
                        None => "default".to_string(),
                    };
                    Some(
                        engine
                            .background_worktree(std::path::Path::new(dir), &group)
                            .map_err(CronError::Invalid)?,
                    )
                }
                _ => None,
            };
            let folder = match &made {
                Some(m) => Some(m.worktree.working_dir.display().to_string()),
                None => job.working_dir.clone(),
            };
            let created = store
                .create_session(&NewSession {
                    title: format!("{} — {}", job.name, format_time(run.scheduled_for)),
                    agent_id: job.agent_id.clone(),
                    kind: SessionKind::Background,
                    working_dir: folder,
                    run_context_id: job.run_context_id,
                    home_session_id: Some(home),
                })
                .and_then(|s| match &made {
                    Some(m) => crate::worktrees::record(store, m, s.id).map(|_| s),
                    None => Ok(s),
                });
            let s = match created {
                Ok(s) => s,
                Err(e) => {
                    if let Some(m) = &made {
                        let _ = skald_worktree::discard(&m.worktree);
                    }
                    return Err(e.into());
                }
            };
            // The model and effort of the chat the job reports to (the one that scheduled
            // it), as that chat has them now.
            if let Ok(h) = store.get_session(home)
                && (h.model.is_some() || h.effort.is_some())
            {
                store.set_session_model(s.id, h.model.as_deref(), h.effort.as_deref())?;
            }
            store.set_run_session(run.id, s.id)?;
            s.id
        }
    };
    let fresh = store.list_messages(session_id)?.is_empty();
    let prompt = if run.occurrences > 1 {
        format!(
            "{}\n\n(Skald was not running for {} scheduled runs of this job; this one run \
             stands for all of them, the latest at {}.)",
            job.prompt,
            run.occurrences,
            format_time(run.scheduled_for)
        )
    } else {
        job.prompt.clone()
    };
    // The lease is renewed while the run works; losing it (another process took the run
    // over after this one stalled) stops this run.
    let turn_cancel = cancel.child_token();
    let renew = {
        let (engine, owner, token) = (engine.clone(), owner.to_string(), turn_cancel.clone());
        let run_id = run.id;
        tokio::spawn(async move {
            let every = Duration::from_millis(u64::try_from(lease_ms / 3).unwrap_or(1000).max(10));
            loop {
                tokio::select! {
                    _ = token.cancelled() => return,
                    _ = tokio::time::sleep(every) => {}
                }
                match engine.store.renew_run_lease(run_id, &owner, lease_ms) {
                    Ok(true) => {}
                    // Another scheduler took the run over: this one stops.
                    Ok(false) => {
                        token.cancel();
                        return;
                    }
                    // A busy database is tried again at the next renewal; the lease has
                    // two more renewals' worth of time left.
                    Err(e) => tracing::warn!(run = run_id, "cannot renew the lease: {e}"),
                }
            }
        })
    };
    let answer = Mutex::new(String::new());
    let emit = |e: Event| {
        if let Event::Done { text, .. } = &e {
            *lock(&answer) = text.clone();
        }
        engine.emit(session_id, e);
    };
    let outcome = engine
        .run_session_turn(
            session_id,
            fresh
                .then(|| crate::turn::Prompt::from(prompt.as_str()))
                .as_ref(),
            engine.background_approval(),
            &turn_cancel,
            None,
            &emit,
        )
        .await;
    turn_cancel.cancel();
    let _ = renew.await;
    let text = lock(&answer).clone();
    let (status, result) = match outcome {
        Ok(TurnOutcome::Final) => (RunStatus::Done, text),
        // Stopped by a shutdown: the next start takes it over.
        Ok(TurnOutcome::Cancelled) => (RunStatus::Interrupted, String::new()),
        Ok(TurnOutcome::Exhausted) => (
            RunStatus::Failed,
            "The agent reached its round limit without an answer.".to_string(),
        ),
        Ok(TurnOutcome::Failed) => (
            RunStatus::Failed,
            "The agent could not reach a model.".to_string(),
        ),
        Err(e) => (RunStatus::Failed, e.to_string()),
    };
    store.finish_run(run.id, owner, status, &result)?;
    Ok(())
}

/// For `execute_task` with mode cron: a job for the chat's task agent, its notifications
/// going to that chat, with the chat's run context.
pub fn schedule_from_chat(
    engine: &Engine,
    session_id: i64,
    run: &crate::approval::RunContext,
    args: &serde_json::Value,
) -> Result<String, String> {
    let text = |k: &str| {
        args.get(k)
            .and_then(serde_json::Value::as_str)
            .unwrap_or("")
            .trim()
            .to_string()
    };
    let expr = text("cron");
    if expr.is_empty() {
        return Err("mode `cron` needs a `cron` expression, e.g. \"0 0 9 * * MON-FRI\"".into());
    }
    if text("agent_id") == run.agent_id {
        return Err("an agent cannot delegate to itself".into());
    }
    let session = engine
        .store
        .get_session(session_id)
        .map_err(|e| e.to_string())?;
    let job = create_job(
        &engine.store,
        &engine.library,
        JobSpec {
            name: text("title"),
            description: text("description"),
            agent_id: text("agent_id"),
            prompt: text("prompt"),
            cron: expr,
            timezone: None,
            missed_policy: MissedPolicy::Once,
            home_session_id: Some(session_id),
            run_context_id: session.run_context_id,
            working_dir: Some(run.working_dir.display().to_string()),
            worktree: args
                .get("worktree")
                .and_then(serde_json::Value::as_bool)
                .unwrap_or(false),
        },
    )
    .map_err(|e| e.to_string())?;
    Ok(serde_json::json!({
        "job_id": job.id,
        "status": "scheduled",
        "cron": job.cron,
        "timezone": job.timezone,
        "next_run": job.next_run_at.map(format_time),
    })
    .to_string())
}

#[cfg(test)]
#[path = "cron_tests.rs"]
mod tests;
