//! Long-lived sessions for carriers that stay up (`skald serve`, the desktop app): one turn
//! at a time per session, messages sent during a turn queued and injected at its next
//! round, `/stop` per session, and every event broadcast with its session id.

use crate::agents::Library;
use crate::engine::Engine;
use crate::engine::registry::ToolRegistry;
use crate::inbox::Answer;
use crate::lock;
use serde::Serialize;
use skald_api::CancellationToken;
use skald_api::events::{Event, TurnOutcome};
use skald_llm::ModelChoice;
use skald_store::Store;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use tokio::sync::broadcast;

/// An event and the session it belongs to.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionEvent {
    pub session_id: i64,
    #[serde(flatten)]
    pub event: Event,
}

/// What became of a sent message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Sent {
    /// A turn started with it.
    Started,
    /// A turn is running; the message joins it at its next round.
    Queued,
}

#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("{0}")]
    Store(#[from] skald_store::StoreError),
    #[error("{0}")]
    Agent(#[from] crate::agents::AgentError),
}

pub use crate::engine::TurnSettings;
use crate::turn::Prompt;

#[derive(Default)]
struct Slot {
    running: Option<CancellationToken>,
    queue: VecDeque<Prompt>,
}

pub struct SessionManager {
    engine: Arc<Engine>,
    store: Arc<Store>,
    slots: Mutex<HashMap<i64, Arc<Mutex<Slot>>>>,
    events: broadcast::Sender<SessionEvent>,
}

/// Events kept for a slow subscriber before it starts missing some. Its subscriber is the
/// service, which passes each on at once (to its own, larger buffer for the UI). Every slot
/// is made at start (400 bytes each).
const EVENT_BUFFER: usize = 1024;

impl SessionManager {
    pub fn new(
        store: Arc<Store>,
        registry: Arc<ToolRegistry>,
        models: Vec<ModelChoice>,
        library: Arc<Library>,
        settings: TurnSettings,
    ) -> Arc<SessionManager> {
        let (events, _) = broadcast::channel(EVENT_BUFFER);
        let sender = events.clone();
        // No subscriber is not an error: the store has everything.
        let sink: crate::engine::Sink = Arc::new(move |session_id, event| {
            let _ = sender.send(SessionEvent { session_id, event });
        });
        let engine = Engine::new(store.clone(), registry, models, library, settings, sink);
        Arc::new(SessionManager {
            engine,
            store,
            slots: Mutex::new(HashMap::new()),
            events,
        })
    }

    /// The engine the sessions run on (background tasks, schedules).
    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    /// Brings waiting deliveries (finished background tasks, notifications) into idle
    /// chats and continues them, until `cancel`. A chat whose turn is running takes its
    /// deliveries between rounds itself.
    pub async fn deliver(self: Arc<Self>, cancel: CancellationToken) {
        loop {
            let now = skald_store::now_ms();
            let mut wait = std::time::Duration::from_millis(500);
            match self.store.pending_deliveries() {
                Ok(pending) => {
                    for (session_id, ready_at) in pending {
                        if ready_at <= now {
                            self.continue_session(session_id);
                        } else {
                            let until = u64::try_from(ready_at - now).unwrap_or(0);
                            wait = wait.min(std::time::Duration::from_millis(until));
                        }
                    }
                }
                Err(e) => tracing::error!("cannot read deliveries: {e}"),
            }
            tokio::select! {
                _ = cancel.cancelled() => return,
                _ = self.engine.changed(wait) => {}
            }
        }
    }

    /// Continues a chat's conversation with no new message, unless a turn is running.
    fn continue_session(self: &Arc<Self>, session_id: i64) {
        let slot = self.slot(session_id);
        let mut state = lock(&slot);
        if state.running.is_some() {
            return;
        }
        let cancel = CancellationToken::new();
        state.running = Some(cancel.clone());
        drop(state);
        let me = self.clone();
        tokio::spawn(async move { me.drive(session_id, None, cancel, slot).await });
    }

    /// Everything waiting on the user, across sessions, oldest first.
    pub fn inbox(&self) -> Result<Vec<skald_store::InboxItem>, SessionError> {
        Ok(self.store.pending_inbox()?)
    }

    /// The "always allow" rule proposed for an approval item, with the session's earlier
    /// calls it would have matched.
    pub fn propose_rule(
        &self,
        id: i64,
    ) -> Result<(crate::approval::RuleSpec, Vec<skald_store::ToolCallRecord>), SessionError> {
        Ok(crate::approval::propose_for_item(&self.store, id)?)
    }

    /// Answers an Inbox item; the call waiting on it goes on.
    pub fn answer(&self, id: i64, answer: &Answer) -> Result<skald_store::InboxItem, SessionError> {
        let store = self.store.clone();
        let events = self.events.clone();
        let session_id = store.get_inbox_item(id)?.session_id;
        let emit = move |event: Event| {
            let _ = events.send(SessionEvent { session_id, event });
        };
        Ok(self.engine.inbox.answer(&store, id, answer, &emit)?.item)
    }

    pub fn subscribe(&self) -> broadcast::Receiver<SessionEvent> {
        self.events.subscribe()
    }

    fn slot(&self, session_id: i64) -> Arc<Mutex<Slot>> {
        lock(&self.slots).entry(session_id).or_default().clone()
    }

    pub fn is_running(&self, session_id: i64) -> bool {
        lock(&self.slot(session_id)).running.is_some()
    }

    /// Starts a turn with `text`, or queues it if the session's turn is running.
    pub fn send_message(
        self: &Arc<Self>,
        session_id: i64,
        text: Prompt,
    ) -> Result<Sent, SessionError> {
        // Fails early, before anything runs, for a session that does not exist.
        self.store.get_session(session_id)?;
        let slot = self.slot(session_id);
        let mut state = lock(&slot);
        if state.running.is_some() {
            state.queue.push_back(text);
            return Ok(Sent::Queued);
        }
        let cancel = CancellationToken::new();
        state.running = Some(cancel.clone());
        drop(state);
        let me = self.clone();
        tokio::spawn(async move { me.drive(session_id, Some(text), cancel, slot).await });
        Ok(Sent::Started)
    }

    /// At start: every session a previous run left unfinished is resumed and its
    /// conversation continued. Returns the sessions it started on.
    pub fn resume_all(self: &Arc<Self>) -> Result<Vec<i64>, SessionError> {
        // Background sessions are not chats: a task's goes on with its task (which then
        // reports to its chat), a cron run's with the scheduler that takes it over.
        let mut ids = Vec::new();
        for id in self.store.sessions_needing_resume()? {
            if self.store.get_session(id)?.kind == skald_store::SessionKind::Interactive {
                ids.push(id);
            }
        }
        if let Err(e) = self.engine.resume_tasks(None) {
            tracing::error!("cannot resume background tasks: {e}");
        }
        for &session_id in &ids {
            let slot = self.slot(session_id);
            let mut state = lock(&slot);
            if state.running.is_some() {
                continue;
            }
            let cancel = CancellationToken::new();
            state.running = Some(cancel.clone());
            drop(state);
            let me = self.clone();
            tokio::spawn(async move { me.drive(session_id, None, cancel, slot).await });
        }
        Ok(ids)
    }

    /// Stops the session's turn and drops its queued messages. Returns whether a turn was
    /// running.
    pub fn stop(&self, session_id: i64) -> bool {
        let slot = self.slot(session_id);
        let mut state = lock(&slot);
        state.queue.clear();
        match &state.running {
            Some(token) => {
                token.cancel();
                true
            }
            None => false,
        }
    }

    /// Runs turns for the session until nothing is left to answer.
    async fn drive(
        self: Arc<Self>,
        session_id: i64,
        first: Option<Prompt>,
        cancel: CancellationToken,
        slot: Arc<Mutex<Slot>>,
    ) {
        let mut prompt = first;
        let mut cancel = cancel;
        loop {
            let outcome = self
                .one_turn(session_id, prompt.as_ref(), &cancel, &slot)
                .await;
            let mut state = lock(&slot);
            // A message can arrive between the turn's last look at the queue and its end.
            // `stop` empties the queue, so after a cancelled turn anything still queued was
            // sent after the stop: it starts a fresh turn with a fresh token instead of being
            // dropped.
            match state.queue.pop_front() {
                Some(next) => {
                    if outcome == Some(TurnOutcome::Cancelled) || cancel.is_cancelled() {
                        cancel = CancellationToken::new();
                        state.running = Some(cancel.clone());
                    }
                    prompt = Some(next);
                }
                None => {
                    state.running = None;
                    return;
                }
            }
        }
    }

    async fn one_turn(
        &self,
        session_id: i64,
        prompt: Option<&Prompt>,
        cancel: &CancellationToken,
        slot: &Arc<Mutex<Slot>>,
    ) -> Option<TurnOutcome> {
        let emit = |event: Event| {
            // No subscriber is not an error: the store has everything.
            let _ = self.events.send(SessionEvent { session_id, event });
        };
        let take = || lock(slot).queue.drain(..).collect::<Vec<_>>();
        let approval = self.engine.settings.approval;
        match self
            .engine
            .run_session_turn(session_id, prompt, approval, cancel, Some(&take), &emit)
            .await
        {
            Ok(outcome) => Some(outcome),
            Err(e) => {
                emit(Event::Error {
                    message: e.to_string(),
                });
                None
            }
        }
    }
}
