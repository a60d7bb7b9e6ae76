//! Long-lived sessions for carriers that stay up (`skald serve`, the desktop app): one turn
//! at a time per session, messages sent during a turn queued and injected at its next
//! round, `/stop` per session, and every event broadcast with its session id.

use crate::agents::Library;
use crate::approval::RunContext;
use crate::inbox::{Answer, Inbox};
use crate::models::ModelHealth;
use crate::registry::ToolRegistry;
use crate::turn::{self, ApprovalMode, TurnConfig, TurnEnv};
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

/// Settings every turn of the manager uses.
#[derive(Debug, Clone)]
pub struct TurnSettings {
    pub max_rounds: usize,
    pub approval: ApprovalMode,
    pub context_window: usize,
    /// The MCP list shown in agents' prompts.
    pub mcp_list: String,
}

#[derive(Default)]
struct Slot {
    running: Option<CancellationToken>,
    queue: VecDeque<String>,
}

pub struct SessionManager {
    store: Arc<Store>,
    registry: Arc<ToolRegistry>,
    models: Arc<Vec<ModelChoice>>,
    health: Arc<ModelHealth>,
    library: Arc<Library>,
    settings: TurnSettings,
    slots: Mutex<HashMap<i64, Arc<Mutex<Slot>>>>,
    events: broadcast::Sender<SessionEvent>,
    inbox: Arc<Inbox>,
}

/// Events kept for a slow subscriber before it starts missing some.
const EVENT_BUFFER: usize = 4096;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl SessionManager {
    pub fn new(
        store: Arc<Store>,
        registry: Arc<ToolRegistry>,
        models: Vec<ModelChoice>,
        library: Arc<Library>,
        settings: TurnSettings,
    ) -> Arc<SessionManager> {
        let (events, _) = broadcast::channel(EVENT_BUFFER);
        Arc::new(SessionManager {
            store,
            registry,
            models: Arc::new(models),
            health: Arc::new(ModelHealth::default()),
            library,
            settings,
            slots: Mutex::new(HashMap::new()),
            events,
            inbox: Inbox::new(),
        })
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
        let item = self.store.get_inbox_item(id)?;
        let session = self.store.get_session(item.session_id)?;
        let (ctx, _) = RunContext::for_session(&self.store, &session, Vec::new())?;
        let tool = item.payload["tool"].as_str().unwrap_or_default();
        let spec = crate::approval::propose_rule(&ctx, tool, &item.payload["arguments"]);
        let matched = crate::approval::would_match(&self.store, item.session_id, &ctx, &spec)?;
        Ok((spec, matched))
    }

    /// Answers an Inbox item; the call waiting on it goes on.
    pub fn answer(&self, id: i64, answer: &Answer) -> Result<skald_store::InboxItem, SessionError> {
        let store = self.store.clone();
        let events = self.events.clone();
        let session_id = store.get_inbox_item(id)?.session_id;
        let emit = move |event: Event| {
            let _ = events.send(SessionEvent { session_id, event });
        };
        Ok(self.inbox.answer(&store, id, answer, &emit)?)
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
        text: String,
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
        let ids = self.store.sessions_needing_resume()?;
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
        first: Option<String>,
        cancel: CancellationToken,
        slot: Arc<Mutex<Slot>>,
    ) {
        let mut prompt = first;
        let mut cancel = cancel;
        loop {
            let outcome = self
                .one_turn(session_id, prompt.as_deref(), &cancel, &slot)
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
        prompt: Option<&str>,
        cancel: &CancellationToken,
        slot: &Arc<Mutex<Slot>>,
    ) -> Option<TurnOutcome> {
        let emit = |event: Event| {
            // No subscriber is not an error: the store has everything.
            let _ = self.events.send(SessionEvent { session_id, event });
        };
        let prepared = self
            .store
            .get_session(session_id)
            .map_err(SessionError::from)
            .and_then(|s| {
                let prompt = self
                    .library
                    .system_prompt(&s.agent_id, &self.settings.mcp_list)?;
                Ok((s, prompt))
            });
        let (session, system_prompt) = match prepared {
            Ok(v) => v,
            Err(e) => {
                emit(Event::Error {
                    message: e.to_string(),
                });
                return None;
            }
        };
        let (run, extra) =
            match RunContext::for_session(&self.store, &session, self.library.skill_dirs()) {
                Ok(v) => v,
                Err(e) => {
                    emit(Event::Error {
                        message: e.to_string(),
                    });
                    return None;
                }
            };
        let system_prompt = if extra.trim().is_empty() {
            system_prompt
        } else {
            format!("{system_prompt}\n\n{}", extra.trim())
        };
        let cfg = TurnConfig {
            max_rounds: self.settings.max_rounds,
            context_window: self.settings.context_window,
            approval: self.settings.approval,
            run,
            system_prompt,
        };
        let take = || lock(slot).queue.drain(..).collect::<Vec<_>>();
        let env = TurnEnv {
            store: &self.store,
            registry: &self.registry,
            models: &self.models,
            health: &self.health,
            cfg: &cfg,
            queued: Some(&take),
            ask: None,
            inbox: Some(&self.inbox),
            frame: crate::turn::Frame::default(),
            library: Some(&self.library),
            mcp_list: &self.settings.mcp_list,
        };
        let _ = crate::resume::resume_pending_tools(&env, session_id, cancel, &emit).await;
        match turn::run_turn(&env, session_id, prompt, cancel, &emit).await {
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
