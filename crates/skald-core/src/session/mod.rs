//! A chat over time: the session manager behind `skald serve` and the desktop app, the
//! leases that keep one process per chat, and picking a chat up after a crash.

pub mod lease;
pub mod manager;
pub mod resume;

pub use lease::{LEASE_MS, SessionLease};
pub use manager::SessionManager;

use crate::engine::{Engine, EngineError};
use crate::turn::{self, ApprovalMode, Emit, Prompt};
use skald_api::CancellationToken;
use skald_api::events::{Event, TurnOutcome};
use std::sync::Arc;

impl Engine {
    /// Runs one turn in a stored session with its own configuration: first finishes what
    /// a previous run left (resume), then answers `prompt` — or, with none, continues the
    /// conversation (after a delivery, or a restart).
    pub async fn run_session_turn(
        self: &Arc<Self>,
        session_id: i64,
        prompt: Option<&Prompt>,
        approval: ApprovalMode,
        cancel: &CancellationToken,
        queued: Option<&(dyn Fn() -> Vec<Prompt> + Send + Sync)>,
        emit: Emit<'_>,
    ) -> Result<TurnOutcome, EngineError> {
        let session = self.store.get_session(session_id)?;
        let _hold = self.hold_session(session_id)?;
        // Held while the chat waits in line: the turn is this process's to run.
        let Some(_slot) = self.turn_slot(session_id, cancel, emit).await else {
            if let Err(e) = self.store.turn_ended(session_id, TurnOutcome::Cancelled) {
                tracing::warn!(session_id, "cannot record the stopped turn: {e}");
            }
            emit(Event::Done {
                session_id,
                outcome: TurnOutcome::Cancelled,
                text: String::new(),
            });
            return Ok(TurnOutcome::Cancelled);
        };
        let cfg = self.config_for(&session, approval)?;
        let chat_models = self.models_for(&session)?;
        let mut env = self.env(&cfg, queued, None);
        if let Some(models) = &chat_models {
            env.models = models;
        }
        resume::resume_pending_tools(&env, session_id, cancel, emit).await?;
        Ok(turn::run_turn(&env, session_id, prompt, cancel, emit).await?)
    }

    /// A place among the turns that run at once (`[agent] at_once`): at once when one is
    /// free, else after waiting in line — said with `turn_queued`, and recorded for the
    /// board. None when the turn was stopped while it waited.
    async fn turn_slot(
        &self,
        session_id: i64,
        cancel: &CancellationToken,
        emit: Emit<'_>,
    ) -> Option<crate::slots::Slot<'_>> {
        if let Some(slot) = self.slots.try_take() {
            return Some(slot);
        }
        if let Err(e) = self.store.turn_queued(session_id) {
            tracing::warn!(session_id, "cannot record that the turn waits: {e}");
        }
        emit(Event::TurnQueued {
            session_id,
            ahead: self.slots.waiting(),
        });
        // Said again each time the line moves.
        self.slots
            .take(cancel, |ahead| {
                emit(Event::TurnQueued { session_id, ahead })
            })
            .await
    }

    /// "Compact now": summarises the chat's older turns whatever its threshold
    /// (docs/agent-loop.md, "Long conversations"). Returns whether a summary was made.
    pub async fn compact_session(
        self: &Arc<Self>,
        session_id: i64,
        cancel: &CancellationToken,
        emit: Emit<'_>,
    ) -> Result<bool, EngineError> {
        let session = self.store.get_session(session_id)?;
        let _hold = self.hold_session(session_id)?;
        let cfg = self.config_for(&session, self.settings.approval)?;
        let chat_models = self.models_for(&session)?;
        let mut env = self.env(&cfg, None, None);
        if let Some(models) = &chat_models {
            env.models = models;
        }
        Ok(turn::compact::compact_now(&env, session_id, cancel, emit).await?)
    }

    /// What fills the chat's context now: the parts of the request its next round would
    /// send, the window, and the share of it at which it is compacted.
    pub fn context_of(
        self: &Arc<Self>,
        session_id: i64,
    ) -> Result<(turn::context_usage::ContextParts, usize, u8), EngineError> {
        let session = self.store.get_session(session_id)?;
        let cfg = self.config_for(&session, self.settings.approval)?;
        let env = self.env(&cfg, None, None);
        let parts = turn::context_usage::context_parts(&env, session_id)?;
        Ok((parts, cfg.context_window, cfg.compact_at))
    }
}
