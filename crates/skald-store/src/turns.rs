//! How each chat's turns go, and the rows of the board of agents (docs/board.md): one
//! statement gathers every chat with its latest turn, what its model calls used, what it
//! waits on and its last answer, so the board costs one query however many chats it shows.

use crate::sessions::{COLUMNS, finish, from_row};
use crate::{Session, SessionUsage, Store, StoreError, now_ms};
use rusqlite::params;
use skald_api::events::TurnOutcome;

/// Where a chat's latest turn is, as the store keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurnState {
    /// A process holds the chat and its turn waits for a free place among the agents it
    /// runs at once.
    Queued,
    /// A process said it started one and has not said it ended (it may have died: the
    /// chat's lease tells).
    Running,
    Ended(TurnOutcome),
}

impl TurnState {
    fn parse(s: &str) -> Option<TurnState> {
        Some(match s {
            "queued" => TurnState::Queued,
            "running" => TurnState::Running,
            "final" => TurnState::Ended(TurnOutcome::Final),
            "cancelled" => TurnState::Ended(TurnOutcome::Cancelled),
            "exhausted" => TurnState::Ended(TurnOutcome::Exhausted),
            "failed" => TurnState::Ended(TurnOutcome::Failed),
            _ => return None,
        })
    }
}

fn outcome_str(o: TurnOutcome) -> &'static str {
    match o {
        TurnOutcome::Final => "final",
        TurnOutcome::Cancelled => "cancelled",
        TurnOutcome::Exhausted => "exhausted",
        TurnOutcome::Failed => "failed",
    }
}

/// One chat as the board shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentRow {
    pub session: Session,
    /// None: no turn has run yet.
    pub turn: Option<TurnState>,
    pub turn_started_at: Option<i64>,
    pub turn_ended_at: Option<i64>,
    /// Every finished turn's time, added up.
    pub active_ms: i64,
    pub usage: SessionUsage,
    /// Approvals and questions of the chat waiting in the Inbox.
    pub waiting: u64,
    /// The root agent's latest answer that had text.
    pub last_message: Option<String>,
}

impl Store {
    /// Records that a turn of chat `session_id` waits for a free place.
    pub fn turn_queued(&self, session_id: i64) -> Result<(), StoreError> {
        self.conn().execute(
            "UPDATE chat_sessions SET turn_state = 'queued', turn_started_at = NULL,
                                      turn_ended_at = NULL
             WHERE id = ?1",
            [session_id],
        )?;
        Ok(())
    }

    /// Records that a turn of chat `session_id` started now.
    pub fn turn_started(&self, session_id: i64) -> Result<(), StoreError> {
        self.conn().execute(
            "UPDATE chat_sessions SET turn_state = 'running', turn_started_at = ?2,
                                      turn_ended_at = NULL
             WHERE id = ?1",
            params![session_id, now_ms()],
        )?;
        Ok(())
    }

    /// Records how chat `session_id`'s turn ended, and adds its time to the chat's.
    pub fn turn_ended(&self, session_id: i64, outcome: TurnOutcome) -> Result<(), StoreError> {
        self.conn().execute(
            "UPDATE chat_sessions
             SET turn_state = ?2, turn_ended_at = ?3,
                 active_ms = active_ms + MAX(0, ?3 - COALESCE(turn_started_at, ?3))
             WHERE id = ?1",
            params![session_id, outcome_str(outcome), now_ms()],
        )?;
        Ok(())
    }

    /// Where chat `session_id`'s latest turn is, as stored.
    pub fn turn_state(&self, session_id: i64) -> Result<Option<TurnState>, StoreError> {
        use rusqlite::OptionalExtension;
        let state: Option<Option<String>> = self
            .conn()
            .query_row(
                "SELECT turn_state FROM chat_sessions WHERE id = ?1",
                [session_id],
                |r| r.get(0),
            )
            .optional()?;
        Ok(state.flatten().as_deref().and_then(TurnState::parse))
    }

    /// When chat `session_id` was last active: its latest message or turn (Unix ms).
    pub fn agent_activity(&self, session_id: i64) -> Result<Option<i64>, StoreError> {
        use rusqlite::OptionalExtension;
        Ok(self
            .conn()
            .query_row(
                "SELECT MAX(updated_at, COALESCE(turn_started_at, 0), COALESCE(turn_ended_at, 0))
                 FROM chat_sessions WHERE id = ?1",
                [session_id],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// The `limit` chats worked in most recently, newest first, with what the board shows
    /// of each.
    pub fn agent_rows(&self, limit: usize) -> Result<Vec<AgentRow>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!(
            "SELECT {COLUMNS}, turn_state, turn_started_at, turn_ended_at, active_ms,
                    (SELECT COUNT(*) FROM llm_requests r WHERE r.session_id = s.id),
                    (SELECT COALESCE(SUM(input_tokens), 0) FROM llm_requests r
                     WHERE r.session_id = s.id),
                    (SELECT COALESCE(SUM(output_tokens), 0) FROM llm_requests r
                     WHERE r.session_id = s.id),
                    (SELECT COALESCE(SUM(cost_usd), 0.0) FROM llm_requests r
                     WHERE r.session_id = s.id),
                    (SELECT COUNT(*) - COUNT(cost_usd) FROM llm_requests r
                     WHERE r.session_id = s.id),
                    (SELECT COUNT(*) FROM inbox_items i
                     WHERE i.session_id = s.id AND i.status = 'pending'),
                    (SELECT content FROM chat_history h
                     WHERE h.session_id = s.id AND h.stack_id IS NULL AND h.role = 'assistant'
                       AND h.content != ''
                     ORDER BY h.id DESC LIMIT 1)
             FROM chat_sessions s
             ORDER BY MAX(updated_at, COALESCE(turn_started_at, 0)) DESC, id DESC
             LIMIT ?1"
        ))?;
        let base = COLUMNS.split(',').count();
        let u = |v: i64| u64::try_from(v).unwrap_or(0);
        let rows = stmt
            .query_map([i64::try_from(limit).unwrap_or(i64::MAX)], |row| {
                let session = from_row(row)?;
                let state: Option<String> = row.get(base)?;
                Ok((
                    session,
                    state,
                    row.get::<_, Option<i64>>(base + 1)?,
                    row.get::<_, Option<i64>>(base + 2)?,
                    row.get::<_, i64>(base + 3)?,
                    SessionUsage {
                        requests: u(row.get(base + 4)?),
                        input_tokens: u(row.get(base + 5)?),
                        output_tokens: u(row.get(base + 6)?),
                        cost_usd: row.get(base + 7)?,
                        unpriced: u(row.get(base + 8)?),
                    },
                    u(row.get(base + 9)?),
                    row.get::<_, Option<String>>(base + 10)?,
                ))
            })?
            .collect::<Result<Vec<_>, _>>()?;
        rows.into_iter()
            .map(
                |(session, state, started, ended, active_ms, usage, waiting, last)| {
                    Ok(AgentRow {
                        session: finish(session)?,
                        turn: state.as_deref().and_then(TurnState::parse),
                        turn_started_at: started,
                        turn_ended_at: ended,
                        active_ms,
                        usage,
                        waiting,
                        last_message: last,
                    })
                },
            )
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{NewMessage, NewSession, Role};

    #[test]
    fn a_chat_s_turns_are_kept_with_their_time() {
        let store = Store::open_in_memory().unwrap();
        let s = store.create_session(&NewSession::default()).unwrap();
        let rows = store.agent_rows(10).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].turn, None);
        assert_eq!(rows[0].last_message, None);

        store.turn_started(s.id).unwrap();
        assert_eq!(
            store.agent_rows(10).unwrap()[0].turn,
            Some(TurnState::Running)
        );
        store
            .append_message(&NewMessage::new(s.id, Role::Assistant, "All done."))
            .unwrap();
        store
            .append_message(&NewMessage::new(s.id, Role::Assistant, ""))
            .unwrap();
        store.turn_ended(s.id, TurnOutcome::Failed).unwrap();
        let row = &store.agent_rows(10).unwrap()[0];
        assert_eq!(row.turn, Some(TurnState::Ended(TurnOutcome::Failed)));
        assert_eq!(row.last_message.as_deref(), Some("All done."));
        assert!(row.active_ms >= 0);
        assert!(row.turn_ended_at >= row.turn_started_at);
    }
}
