//! The engine as one shareable value: the store, tools, models and agents every turn runs
//! against, plus the work that outlives a turn — background tasks (`execute_task` with
//! mode async), notifications from background agents, and the deliveries that bring their
//! results into a chat (reference.md "Sub-agents and tasks", "Notifications").
//!
//! Carriers (`skald exec`, `skald cron run`, the session manager behind `skald serve` and
//! the desktop app) build one and hand out borrowed `TurnEnv`s from it.

use crate::agents::{AgentKind, Library};
use crate::approval::RunContext;
use crate::inbox::Inbox;
use crate::lock;
use crate::models::ModelHealth;
use crate::registry::ToolRegistry;
use crate::turn::{self, ApprovalMode, Ask, Emit, TurnConfig, TurnEnv};
use serde_json::{Value, json};
use skald_api::CancellationToken;
use skald_api::events::{Event, TurnOutcome};
use skald_llm::ModelChoice;
use skald_store::{DeliveryKind, NewSession, NewTask, Session, SessionKind, Store, TaskStatus};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// How long notifications wait for others before they go to the home chat as one batch.
pub const NOTIFY_BATCH_MS: i64 = 200;

/// The `app_state` key of the home chat.
const HOME_KEY: &str = "home_session_id";

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("{0}")]
    Store(#[from] skald_store::StoreError),
    #[error("{0}")]
    Agent(#[from] crate::agents::AgentError),
    #[error("{0}")]
    Turn(#[from] turn::TurnError),
    #[error(
        "session {session_id} is in use by another Skald process ({owner}); it is free again \
         when that process ends, or within a minute if it died"
    )]
    Busy { session_id: i64, owner: String },
}

/// How long a process's hold on a chat or a task lasts without being renewed; it is
/// renewed at a third of that while the work goes on.
pub const HOLD_MS: i64 = 60_000;

/// This process's name in leases: its pid (so a lease of a process that is gone can be
/// taken over at once) and a nonce (pids are reused).
fn process_owner() -> String {
    format!(
        "pid:{}:{}",
        std::process::id(),
        skald_store::now_ms().rem_euclid(1_000_000_007)
    )
}

/// Whether the process named in a lease is gone (on this machine, where the data
/// directory is).
fn owner_is_dead(owner: &str) -> bool {
    #[cfg(unix)]
    {
        let pid = owner
            .strip_prefix("pid:")
            .and_then(|r| r.split(':').next())
            .and_then(|p| p.parse::<i32>().ok());
        if let Some(pid) = pid {
            return matches!(
                nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None),
                Err(nix::errno::Errno::ESRCH)
            );
        }
    }
    #[cfg(not(unix))]
    let _ = owner;
    false
}

/// A hold on a chat: renewed in the background, released when dropped.
pub struct SessionHold {
    store: Arc<Store>,
    session_id: i64,
    owner: String,
    renewing: CancellationToken,
}

impl Drop for SessionHold {
    fn drop(&mut self) {
        self.renewing.cancel();
        let _ = self.store.release_session(self.session_id, &self.owner);
    }
}

/// Renews a lease every third of `HOLD_MS` until `stop`.
fn renew_every(stop: CancellationToken, mut renew: impl FnMut() + Send + 'static) {
    tokio::spawn(async move {
        let every = std::time::Duration::from_millis(u64::try_from(HOLD_MS / 3).unwrap_or(20_000));
        loop {
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = tokio::time::sleep(every) => renew(),
            }
        }
    });
}

/// Settings every turn the engine runs uses.
#[derive(Debug, Clone)]
pub struct TurnSettings {
    pub max_rounds: usize,
    /// What happens to calls needing approval in chats the engine drives.
    pub approval: ApprovalMode,
    pub context_window: usize,
    /// MCP connect and call timeouts.
    pub mcp: crate::config::McpConfig,
}

/// Where the events of sessions the engine drives go, with their session id.
pub type Sink = Arc<dyn Fn(i64, Event) + Send + Sync>;

pub struct Engine {
    pub store: Arc<Store>,
    pub registry: Arc<ToolRegistry>,
    /// The model first, then its fallbacks.
    models: crate::models::ModelList,
    pub health: Arc<ModelHealth>,
    pub library: Arc<Library>,
    pub inbox: Arc<Inbox>,
    pub settings: TurnSettings,
    /// The registered MCP servers and their client.
    pub mcp: Arc<crate::mcp::Servers>,
    /// The plugins Skald ships, on or off.
    pub plugins: crate::plugins::Plugins,
    /// The user's secrets, once opened; and the redactor over their values.
    secrets: Mutex<Option<Arc<skald_secrets::Secrets>>>,
    redactor: Arc<Mutex<skald_secrets::Redactor>>,
    sink: Sink,
    /// Running background tasks: task id -> (parent chat, stop token).
    tasks: Mutex<HashMap<i64, (i64, CancellationToken)>>,
    /// Wakes carriers waiting for a task to end or a delivery to arrive.
    changed: tokio::sync::Notify,
    /// Stops every background task at shutdown.
    shutdown: CancellationToken,
    /// This process's name in leases.
    owner: String,
    /// What every tool and process this engine starts is kept from: Skald's secrets
    /// folder, provider keys in the environment.
    pub withheld: Arc<crate::withheld::Withheld>,
}

impl Engine {
    pub fn new(
        store: Arc<Store>,
        registry: Arc<ToolRegistry>,
        models: Vec<ModelChoice>,
        library: Arc<Library>,
        settings: TurnSettings,
        sink: Sink,
    ) -> Arc<Engine> {
        let inbox = Inbox::new();
        let active = Arc::new(Mutex::new(HashMap::new()));
        let redactor = Arc::new(Mutex::new(skald_secrets::Redactor::default()));
        let withheld = Arc::new(crate::withheld::Withheld::default());
        let host = crate::mcp::Host {
            store: store.clone(),
            inbox: inbox.clone(),
            sink: sink.clone(),
            active: active.clone(),
            redactor: redactor.clone(),
        };
        let mcp = Arc::new(crate::mcp::Servers {
            manager: skald_mcp::McpManager::new(Arc::new(host)),
            active,
            connect_timeout: std::time::Duration::from_secs(settings.mcp.connect_timeout_secs),
            call_timeout: std::time::Duration::from_secs(settings.mcp.call_timeout_secs),
            logs_dir: Mutex::new(None),
            secrets: Mutex::new(None),
            withheld: withheld.clone(),
        });
        Arc::new(Engine {
            store,
            registry,
            models: crate::models::ModelList::new(models),
            health: Arc::new(ModelHealth::default()),
            library,
            inbox,
            settings,
            mcp,
            plugins: crate::plugins::Plugins::default(),
            secrets: Mutex::new(None),
            redactor,
            sink,
            tasks: Mutex::new(HashMap::new()),
            changed: tokio::sync::Notify::new(),
            shutdown: CancellationToken::new(),
            owner: process_owner(),
            withheld,
        })
    }

    /// Opens the user's secrets (`<data dir>/secrets`, or the OS keyring): MCP servers can
    /// then use `${secret:NAME}`, agents `set_secret` and `list_secrets`, and every tool
    /// result has their values redacted.
    pub fn open_secrets(
        &self,
        data_dir: &std::path::Path,
    ) -> Result<(), skald_secrets::SecretError> {
        // Whatever folder a chat works in, file tools never reach Skald's own secrets;
        // protected before opening, so a keyring failure leaves the folder guarded.
        self.withheld
            .protect(&crate::DataDir::at(data_dir).secrets_dir());
        let secrets = Arc::new(skald_secrets::Secrets::open(data_dir)?);
        *lock(&self.redactor) = secrets.redactor()?;
        *lock(&self.mcp.secrets) = Some(secrets.clone());
        *lock(&self.secrets) = Some(secrets);
        Ok(())
    }

    pub fn secrets(&self) -> Option<Arc<skald_secrets::Secrets>> {
        lock(&self.secrets).clone()
    }

    /// Re-reads the values to redact (after a secret was set or removed).
    pub fn refresh_redactor(&self) {
        if let Some(s) = self.secrets()
            && let Ok(r) = s.redactor()
        {
            *lock(&self.redactor) = r;
        }
    }

    /// `text` with every secret value replaced by its name.
    pub fn redact(&self, text: &str) -> String {
        let r = lock(&self.redactor);
        if r.is_empty() {
            text.to_string()
        } else {
            r.redact(text)
        }
    }

    /// Starts the plugins the user turned on.
    pub fn start_plugins(&self) {
        self.plugins.start_enabled(&self.store);
    }

    /// Starts the registered MCP servers in the background (stderr logs under
    /// `logs_dir/mcp`). Never waits for them.
    pub fn start_mcp(&self, logs_dir: Option<std::path::PathBuf>) -> Result<(), EngineError> {
        *lock(&self.mcp.logs_dir) = logs_dir;
        Ok(self.mcp.start_registered(&self.store)?)
    }

    /// Takes a chat for this process while it runs turns in it: a second process gets
    /// `Busy` instead of writing into the same conversation. A hold left by a process that
    /// is gone is taken over at once.
    pub fn hold_session(&self, session_id: i64) -> Result<SessionHold, EngineError> {
        let store = &self.store;
        let mut claimed = store.claim_session(session_id, &self.owner, HOLD_MS, None)?;
        if !claimed && let Some(holder) = store.session_holder(session_id)? {
            if owner_is_dead(&holder.owner) {
                claimed =
                    store.claim_session(session_id, &self.owner, HOLD_MS, Some(&holder.owner))?;
            }
            if !claimed {
                return Err(EngineError::Busy {
                    session_id,
                    owner: holder.owner,
                });
            }
        }
        if !claimed {
            // The holder let go between the two looks.
            store.claim_session(session_id, &self.owner, HOLD_MS, None)?;
        }
        let renewing = CancellationToken::new();
        let (s, owner) = (self.store.clone(), self.owner.clone());
        renew_every(renewing.clone(), move || {
            let _ = s.renew_session(session_id, &owner, HOLD_MS);
        });
        Ok(SessionHold {
            store: self.store.clone(),
            session_id,
            owner: self.owner.clone(),
            renewing,
        })
    }

    /// Takes a running task for this process (a new one, or one a process that is gone
    /// left running). False: another live process runs it.
    fn hold_task(&self, task_id: i64, stop: &CancellationToken) -> Result<bool, EngineError> {
        let store = &self.store;
        let mut claimed = store.claim_task(task_id, &self.owner, HOLD_MS, None)?;
        if !claimed
            && let Some(holder) = store.task_holder(task_id)?
            && owner_is_dead(&holder.owner)
        {
            claimed = store.claim_task(task_id, &self.owner, HOLD_MS, Some(&holder.owner))?;
        }
        if claimed {
            let (s, owner) = (self.store.clone(), self.owner.clone());
            renew_every(stop.clone(), move || {
                let _ = s.renew_task(task_id, &owner, HOLD_MS);
            });
        }
        Ok(claimed)
    }

    /// The models turns start with now.
    pub fn models(&self) -> Arc<Vec<ModelChoice>> {
        self.models.current()
    }

    /// Replaces the models for turns that start from now on.
    pub fn set_models(&self, models: Vec<ModelChoice>) {
        self.models.set(models);
    }

    /// Sends an event of `session_id` to the engine's sink.
    pub fn emit(&self, session_id: i64, event: Event) {
        (self.sink)(session_id, event);
    }

    /// The turn configuration a session runs with: its agent's prompt, its run context
    /// with the stored extra lines, and whether it is a background session.
    pub fn config_for(
        &self,
        session: &Session,
        approval: ApprovalMode,
    ) -> Result<TurnConfig, EngineError> {
        let granted = self.store.granted_groups(session.id, None)?;
        let prompt = self.library.system_prompt(
            &session.agent_id,
            &self.mcp.prompt_list(&self.store, &granted),
        )?;
        let (mut run, extra) = RunContext::for_session(
            &self.store,
            session,
            self.library.skill_dirs(),
            &self.withheld,
        )?;
        run.agent_id = session.agent_id.clone();
        let system_prompt = if extra.trim().is_empty() {
            prompt
        } else {
            format!("{prompt}\n\n{}", extra.trim())
        };
        Ok(TurnConfig {
            max_rounds: self.settings.max_rounds,
            context_window: self.settings.context_window,
            approval,
            run,
            system_prompt,
            background: session.kind == SessionKind::Background,
            first_tool_choice: skald_llm::ToolChoice::Auto,
        })
    }

    /// A turn environment over the engine's parts.
    pub fn env<'a>(
        self: &'a Arc<Self>,
        cfg: &'a TurnConfig,
        queued: Option<&'a (dyn Fn() -> Vec<String> + Send + Sync)>,
        ask: Option<Ask<'a>>,
    ) -> TurnEnv<'a> {
        TurnEnv {
            store: &self.store,
            registry: &self.registry,
            models: &self.models,
            health: &self.health,
            cfg,
            queued,
            ask,
            inbox: Some(&self.inbox),
            frame: turn::Frame::default(),
            library: Some(&self.library),
            mcp_list: crate::mcp::NONE_CONFIGURED,
            engine: Some(self),
        }
    }

    /// Runs one turn in a stored session with its own configuration: first finishes what
    /// a previous run left (resume), then answers `prompt` — or, with none, continues the
    /// conversation (after a delivery, or a restart).
    pub async fn run_session_turn(
        self: &Arc<Self>,
        session_id: i64,
        prompt: Option<&str>,
        approval: ApprovalMode,
        cancel: &CancellationToken,
        queued: Option<&(dyn Fn() -> Vec<String> + Send + Sync)>,
        emit: Emit<'_>,
    ) -> Result<TurnOutcome, EngineError> {
        let session = self.store.get_session(session_id)?;
        let _hold = self.hold_session(session_id)?;
        let cfg = self.config_for(&session, approval)?;
        let env = self.env(&cfg, queued, None);
        crate::resume::resume_pending_tools(&env, session_id, cancel, emit).await?;
        Ok(turn::run_turn(&env, session_id, prompt, cancel, emit).await?)
    }

    /// Waits until a background task ends or a delivery is stored (or a moment passes:
    /// other processes write deliveries too, and they cannot wake this one).
    pub async fn changed(&self, at_most: std::time::Duration) {
        let _ = tokio::time::timeout(at_most, self.changed.notified()).await;
    }

    fn wake(&self) {
        self.changed.notify_waiters();
    }

    /// Whether background tasks started from `parent` are still running in this process.
    pub fn has_running_tasks(&self, parent: i64) -> bool {
        lock(&self.tasks).values().any(|(p, _)| *p == parent)
    }

    /// Stops every background task (the carrier is shutting down). Each is recorded as
    /// cancelled and its parent chat told when it next runs.
    pub fn shutdown(&self) {
        self.shutdown.cancel();
    }

    /// After `shutdown`: waits (at most `limit`) for the stopped tasks to record their
    /// end, so the next run finds them cancelled rather than still running.
    pub async fn wait_tasks(&self, limit: std::time::Duration) {
        let deadline = tokio::time::Instant::now() + limit;
        while !lock(&self.tasks).is_empty() && tokio::time::Instant::now() < deadline {
            self.changed(std::time::Duration::from_millis(50)).await;
        }
    }

    /// Stops one background task. Returns whether it was running here.
    pub fn stop_task(&self, task_id: i64) -> bool {
        match lock(&self.tasks).get(&task_id) {
            Some((_, token)) => {
                token.cancel();
                true
            }
            None => false,
        }
    }

    /// The home chat: where notifications from background work without a chat of their
    /// own go. Created on first use.
    pub fn home_session(&self) -> Result<i64, EngineError> {
        let dir = std::env::current_dir()
            .ok()
            .map(|d| d.display().to_string());
        Ok(self
            .store
            .ensure_home_session(HOME_KEY, "Home", dir.as_deref())?)
    }

    /// Starts a background task from a chat (`execute_task` with mode async): a fresh
    /// background session with the task agent and the chat's run context. Returns the
    /// task's id at once; the task's result is delivered into the chat when it ends.
    pub fn start_task(
        self: &Arc<Self>,
        parent_session_id: i64,
        parent_call_id: &str,
        run: &RunContext,
        args: &Value,
    ) -> Result<i64, String> {
        let text = |k: &str| {
            args.get(k)
                .and_then(Value::as_str)
                .unwrap_or("")
                .trim()
                .to_string()
        };
        let agent_id = text("agent_id");
        let agent = self.library.get(&agent_id).map_err(|e| e.to_string())?;
        if agent.meta.kind != AgentKind::Task {
            return Err(format!("`{agent_id}` is not a task agent"));
        }
        if agent_id == run.agent_id {
            return Err("an agent cannot delegate to itself".into());
        }
        let parent = self
            .store
            .get_session(parent_session_id)
            .map_err(|e| e.to_string())?;
        let title = match text("title") {
            t if t.is_empty() => text("description"),
            t => t,
        };
        let store_err = |e: skald_store::StoreError| e.to_string();
        let session = self
            .store
            .create_session(&NewSession {
                title: title.clone(),
                agent_id: agent_id.clone(),
                kind: SessionKind::Background,
                working_dir: Some(run.working_dir.display().to_string()),
                run_context_id: parent.run_context_id,
                home_session_id: Some(parent_session_id),
            })
            .map_err(store_err)?;
        let task = self
            .store
            .create_task(&NewTask {
                parent_session_id,
                parent_tool_call_id: Some(parent_call_id.to_string()),
                session_id: session.id,
                agent_id,
                title,
                description: text("description"),
                prompt: text("prompt"),
            })
            .map_err(store_err)?;
        let cancel = self.shutdown.child_token();
        if !self
            .hold_task(task.id, &cancel)
            .map_err(|e| e.to_string())?
        {
            return Err(format!("task {} is already running elsewhere", task.id));
        }
        lock(&self.tasks).insert(task.id, (parent_session_id, cancel.clone()));
        self.emit_task(&task);
        let (me, id) = (self.clone(), task.id);
        tokio::spawn(async move { me.run_task(task, cancel).await });
        Ok(id)
    }

    fn emit_task(&self, task: &skald_store::Task) {
        self.emit(
            task.parent_session_id,
            Event::TaskUpdate {
                task_id: task.id,
                session_id: task.session_id,
                title: task.title.clone(),
                agent_id: task.agent_id.clone(),
                status: task.status,
                result: task.result.clone(),
            },
        );
    }

    /// Runs a background task to its end and delivers its result to the parent chat.
    async fn run_task(self: Arc<Self>, task: skald_store::Task, cancel: CancellationToken) {
        let (status, result) = match self.task_turn(&task, &cancel).await {
            Ok((TurnOutcome::Final, text)) => (TaskStatus::Done, text),
            Ok((TurnOutcome::Cancelled, _)) => {
                (TaskStatus::Cancelled, "The task was stopped.".to_string())
            }
            Ok((TurnOutcome::Exhausted, _)) => (
                TaskStatus::Failed,
                "The task agent reached its round limit without an answer.".to_string(),
            ),
            Ok((TurnOutcome::Failed, _)) => (
                TaskStatus::Failed,
                "The task agent could not reach a model.".to_string(),
            ),
            Err(e) => (TaskStatus::Failed, e.to_string()),
        };
        let delivered = self.finish_task(&task, status, &result);
        if let Err(e) = delivered {
            tracing::error!(task = task.id, "cannot record the task's end: {e}");
        }
        lock(&self.tasks).remove(&task.id);
        // Ends the lease renewal too.
        cancel.cancel();
        self.wake();
    }

    async fn task_turn(
        self: &Arc<Self>,
        task: &skald_store::Task,
        cancel: &CancellationToken,
    ) -> Result<(TurnOutcome, String), EngineError> {
        let session_id = task.session_id.ok_or_else(|| {
            skald_store::StoreError::Invalid(format!("task {} has no session", task.id))
        })?;
        let answer = Mutex::new(String::new());
        let sink = self.sink.clone();
        let emit = |e: Event| {
            if let Event::Done { text, .. } = &e {
                *lock(&answer) = text.clone();
            }
            sink(session_id, e);
        };
        // A task continued after a restart goes on from where it stopped; a new one starts
        // with its prompt.
        let fresh = self.store.list_messages(session_id)?.is_empty();
        let prompt = fresh.then_some(task.prompt.as_str());
        let outcome = self
            .run_session_turn(
                session_id,
                prompt,
                self.background_approval(),
                cancel,
                None,
                &emit,
            )
            .await?;
        let text = lock(&answer).clone();
        Ok((outcome, text))
    }

    /// Background work never dies at a permission request: it waits in the Inbox, unless
    /// the user approved everything up front.
    pub fn background_approval(&self) -> ApprovalMode {
        match self.settings.approval {
            ApprovalMode::All => ApprovalMode::All,
            _ => ApprovalMode::Inbox,
        }
    }

    fn finish_task(
        &self,
        task: &skald_store::Task,
        status: TaskStatus,
        result: &str,
    ) -> Result<(), EngineError> {
        let delivery = json!({
            "type": "task_completed",
            "task_id": task.id,
            "title": task.title,
            "agent_id": task.agent_id,
            "status": status.as_str(),
            "result": result,
        });
        if self
            .store
            .finish_task_and_deliver(task.id, status, result, &delivery)?
        {
            self.emit_task(&self.store.get_task(task.id)?);
        }
        Ok(())
    }

    /// `notify` from a background agent: stored for its home chat, which takes it in with
    /// the others that arrive within `NOTIFY_BATCH_MS`.
    pub fn notify(&self, session_id: i64, args: &Value) -> Result<String, String> {
        let session = self
            .store
            .get_session(session_id)
            .map_err(|e| e.to_string())?;
        let home = match session.home_session_id {
            Some(h) => h,
            None => self.home_session().map_err(|e| e.to_string())?,
        };
        let mut payload = args.clone();
        if let Value::Object(m) = &mut payload {
            m.insert("from_session_id".into(), json!(session_id));
            m.insert("agent_id".into(), json!(session.agent_id));
        }
        self.store
            .add_delivery(home, DeliveryKind::Notification, &payload, NOTIFY_BATCH_MS)
            .map_err(|e| e.to_string())?;
        self.wake();
        Ok(format!(
            "Notification sent to the user's chat (session {home})."
        ))
    }

    /// For headless carriers without a session manager (`skald cron run`): continues each
    /// chat that has deliveries ready — notifications from scheduled runs, results of
    /// tasks — one turn at a time, until `cancel`.
    pub async fn continue_chats(self: Arc<Self>, cancel: CancellationToken) {
        loop {
            let wait = match self.continue_ready_chats(&cancel).await {
                Ok(Some(wait)) => wait,
                Ok(None) => std::time::Duration::from_millis(500),
                Err(e) => {
                    // Left for the next carrier rather than retried in a tight loop.
                    tracing::error!("cannot continue a chat: {e}");
                    return;
                }
            };
            tokio::select! {
                _ = cancel.cancelled() => return,
                _ = self.changed(wait) => {}
            }
        }
    }

    /// Continues the chats whose deliveries are ready, one turn each. Returns how long
    /// until the next waiting delivery is ready, or `None` when none waits. A chat whose
    /// turn cannot take its deliveries (its agent is gone, say) is logged and left for
    /// later, not retried at once.
    pub async fn continue_ready_chats(
        self: &Arc<Self>,
        cancel: &CancellationToken,
    ) -> Result<Option<std::time::Duration>, EngineError> {
        let now = skald_store::now_ms();
        let mut wait: Option<std::time::Duration> = None;
        let mut soonest = |d: std::time::Duration| {
            wait = Some(wait.map_or(d, |w| w.min(d)));
        };
        for (session_id, ready_at) in self.store.pending_deliveries()? {
            if cancel.is_cancelled() {
                break;
            }
            if ready_at > now {
                soonest(std::time::Duration::from_millis(
                    u64::try_from(ready_at - now).unwrap_or(0),
                ));
                continue;
            }
            let sink = self.sink.clone();
            let emit = move |e: Event| sink(session_id, e);
            let approval = self.background_approval();
            let turn = self
                .run_session_turn(session_id, None, approval, cancel, None, &emit)
                .await;
            if let Err(e) = &turn {
                tracing::error!(session = session_id, "cannot continue the chat: {e}");
            }
            // Taken: look again at once (the turn may have taken others' too). Not taken:
            // try again later rather than in a loop.
            let taken = self.store.next_delivery_at(session_id)? != Some(ready_at);
            soonest(if taken && turn.is_ok() {
                std::time::Duration::ZERO
            } else {
                std::time::Duration::from_secs(5)
            });
        }
        Ok(wait)
    }

    /// Resumes, at start, the background tasks a previous run left running (those of one
    /// chat, or all); each goes on from where it stopped. Returns their ids.
    pub fn resume_tasks(self: &Arc<Self>, parent: Option<i64>) -> Result<Vec<i64>, EngineError> {
        let mut ids = Vec::new();
        for task in self.store.list_tasks(parent)? {
            if task.status != TaskStatus::Running || lock(&self.tasks).contains_key(&task.id) {
                continue;
            }
            let cancel = self.shutdown.child_token();
            // Still running in another live process: not ours to resume.
            if !self.hold_task(task.id, &cancel)? {
                continue;
            }
            lock(&self.tasks).insert(task.id, (task.parent_session_id, cancel.clone()));
            ids.push(task.id);
            let me = self.clone();
            tokio::spawn(async move { me.run_task(task, cancel).await });
        }
        Ok(ids)
    }
}
