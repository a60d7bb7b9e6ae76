//! Background tasks (`execute_task` with mode async), notifications from background
//! agents, and the deliveries that bring their results into a chat (docs/tasks.md,
//! "Background tasks", "Notifications"): the work of an engine that outlives a turn.

use crate::agents::AgentKind;
use crate::approval::RunContext;
use crate::engine::{Engine, EngineError};
use crate::lock;
use crate::turn::ApprovalMode;
use serde_json::{Value, json};
use skald_api::CancellationToken;
use skald_api::events::{Event, TurnOutcome};
use skald_store::{DeliveryKind, NewSession, NewTask, SessionKind, TaskStatus};
use std::sync::{Arc, Mutex};

/// How long notifications wait for others before they go to the home chat as one batch.
pub const NOTIFY_BATCH_MS: i64 = 200;

/// The `app_state` key of the home chat.
const HOME_KEY: &str = "home_session_id";

impl Engine {
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

    /// Stops every background task (the carrier is shutting down) and every background
    /// process. Each task is recorded as cancelled and its parent chat told when it next
    /// runs; `wait_tasks` waits for both.
    pub fn shutdown(&self) {
        self.shutdown.cancel();
    }

    /// After `shutdown`: waits (at most `limit`) for the stopped tasks to record their
    /// end, so the next run finds them cancelled rather than still running.
    pub async fn wait_tasks(&self, limit: std::time::Duration) {
        let deadline = tokio::time::Instant::now() + limit;
        while (!lock(&self.tasks).is_empty() || self.processes.running() > 0)
            && tokio::time::Instant::now() < deadline
        {
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
        // In a worktree of its own when asked: it never writes the chat's folder.
        let made = match args.get("worktree").and_then(Value::as_bool) {
            Some(true) => Some(self.background_worktree(&run.working_dir, &run.group)?),
            _ => None,
        };
        let folder = made
            .as_ref()
            .map_or(run.working_dir.clone(), |m| m.worktree.working_dir.clone());
        let created = self
            .store
            .create_session(&NewSession {
                title: title.clone(),
                agent_id: agent_id.clone(),
                kind: SessionKind::Background,
                working_dir: Some(folder.display().to_string()),
                run_context_id: parent.run_context_id,
                home_session_id: Some(parent_session_id),
            })
            .and_then(|s| match &made {
                Some(m) => crate::worktrees::record(&self.store, m, s.id).map(|_| s),
                None => Ok(s),
            });
        let session = match (created, &made) {
            (Ok(s), _) => s,
            (Err(e), made) => {
                if let Some(m) = made {
                    let _ = skald_worktree::discard(&m.worktree);
                }
                return Err(e.to_string());
            }
        };
        // The chat's own model and effort: a chat kept on a private model keeps its tasks
        // there too.
        if parent.model.is_some() || parent.effort.is_some() {
            self.store
                .set_session_model(
                    session.id,
                    parent.model.as_deref(),
                    parent.effort.as_deref(),
                )
                .map_err(store_err)?;
        }
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
        let prompt = fresh.then(|| crate::turn::Prompt::from(task.prompt.as_str()));
        let outcome = self
            .run_session_turn(
                session_id,
                prompt.as_ref(),
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
