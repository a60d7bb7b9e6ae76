//! Model calls with their token usage, and conversation summaries.

use crate::{Store, StoreError, now_ms};
use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestStatus {
    Ok,
    Failed,
    Cancelled,
}

impl RequestStatus {
    fn as_str(self) -> &'static str {
        match self {
            RequestStatus::Ok => "ok",
            RequestStatus::Failed => "failed",
            RequestStatus::Cancelled => "cancelled",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct NewLlmRequest<'a> {
    pub session_id: Option<i64>,
    pub provider: &'a str,
    pub model: &'a str,
    pub status: RequestStatus,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub error: Option<&'a str>,
    /// Unix milliseconds when the call started.
    pub started_at: i64,
    /// What it cost in US dollars; `None` when no price is known for the model.
    pub cost_usd: Option<f64>,
}

/// Token and cost totals of a session, or of a span of time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionUsage {
    pub requests: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// The cost of the calls whose model had a known price, in US dollars.
    pub cost_usd: f64,
    /// Calls whose model had no known price (their cost is not in `cost_usd`).
    pub unpriced: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    pub id: i64,
    pub session_id: i64,
    pub up_to_message_id: i64,
    pub summary: String,
    pub created_at: i64,
}

fn tokens(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl Store {
    pub fn record_llm_request(&self, r: &NewLlmRequest<'_>) -> Result<i64, StoreError> {
        let conn = self.conn();
        conn.execute(
            "INSERT INTO llm_requests (session_id, provider, model, status, input_tokens,
                                       output_tokens, error, started_at, finished_at, cost_usd)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            params![
                r.session_id,
                r.provider,
                r.model,
                r.status.as_str(),
                tokens(r.input_tokens),
                tokens(r.output_tokens),
                r.error,
                r.started_at,
                now_ms(),
                r.cost_usd
            ],
        )?;
        Ok(conn.last_insert_rowid())
    }

    pub fn session_usage(&self, session_id: i64) -> Result<SessionUsage, StoreError> {
        self.usage_where("session_id = ?1", params![session_id])
    }

    /// What the session's latest model call that answered read, in tokens.
    pub fn last_input_tokens(&self, session_id: i64) -> Result<Option<u64>, StoreError> {
        Ok(self
            .conn()
            .query_row(
                "SELECT input_tokens FROM llm_requests
                 WHERE session_id = ?1 AND status = 'ok' ORDER BY id DESC LIMIT 1",
                [session_id],
                |r| r.get::<_, i64>(0),
            )
            .optional()?
            .map(|n| u64::try_from(n).unwrap_or(0)))
    }

    /// A session's calls that started at `since` (Unix ms) or later: a turn's.
    pub fn session_usage_since(
        &self,
        session_id: i64,
        since: i64,
    ) -> Result<SessionUsage, StoreError> {
        self.usage_where(
            "session_id = ?1 AND started_at >= ?2",
            params![session_id, since],
        )
    }

    /// Every call that started at `since` (Unix ms) or later, of any chat, task or test of a
    /// model: what a day has cost so far.
    pub fn usage_since(&self, since: i64) -> Result<SessionUsage, StoreError> {
        self.usage_where("started_at >= ?1", params![since])
    }

    fn usage_where(
        &self,
        condition: &str,
        params: impl rusqlite::Params,
    ) -> Result<SessionUsage, StoreError> {
        let (requests, input, output, cost, unpriced): (i64, i64, i64, f64, i64) =
            self.conn().query_row(
                &format!(
                    "SELECT COUNT(*), COALESCE(SUM(input_tokens), 0),
                            COALESCE(SUM(output_tokens), 0), COALESCE(SUM(cost_usd), 0.0),
                            COUNT(*) - COUNT(cost_usd)
                     FROM llm_requests WHERE {condition}"
                ),
                params,
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
            )?;
        let u = |v: i64| u64::try_from(v).unwrap_or(0);
        Ok(SessionUsage {
            requests: u(requests),
            input_tokens: u(input),
            output_tokens: u(output),
            cost_usd: cost,
            unpriced: u(unpriced),
        })
    }

    pub fn add_summary(
        &self,
        session_id: i64,
        up_to_message_id: i64,
        summary: &str,
    ) -> Result<Summary, StoreError> {
        let now = now_ms();
        let conn = self.conn();
        conn.execute(
            "INSERT INTO chat_summaries (session_id, up_to_message_id, summary, created_at)
             VALUES (?1, ?2, ?3, ?4)",
            params![session_id, up_to_message_id, summary, now],
        )?;
        Ok(Summary {
            id: conn.last_insert_rowid(),
            session_id,
            up_to_message_id,
            summary: summary.to_string(),
            created_at: now,
        })
    }

    /// The summary that covers the most of the session, if any.
    pub fn latest_summary(&self, session_id: i64) -> Result<Option<Summary>, StoreError> {
        Ok(self
            .conn()
            .query_row(
                "SELECT id, session_id, up_to_message_id, summary, created_at
                 FROM chat_summaries WHERE session_id = ?1
                 ORDER BY up_to_message_id DESC, id DESC LIMIT 1",
                [session_id],
                |r| {
                    Ok(Summary {
                        id: r.get(0)?,
                        session_id: r.get(1)?,
                        up_to_message_id: r.get(2)?,
                        summary: r.get(3)?,
                        created_at: r.get(4)?,
                    })
                },
            )
            .optional()?)
    }

    /// Undoes a chat's latest compaction: its summary goes, and the messages it stood for
    /// are sent whole again (they were never deleted). Returns the summary removed.
    pub fn undo_latest_summary(&self, session_id: i64) -> Result<Option<Summary>, StoreError> {
        let latest = self.latest_summary(session_id)?;
        if let Some(s) = &latest {
            self.conn()
                .execute("DELETE FROM chat_summaries WHERE id = ?1", [s.id])?;
        }
        Ok(latest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NewSession;

    #[test]
    fn usage_adds_up_per_session() {
        let store = Store::open_in_memory().unwrap();
        let s = store.create_session(&NewSession::default()).unwrap();
        for (i, o) in [(100, 20), (150, 30)] {
            store
                .record_llm_request(&NewLlmRequest {
                    session_id: Some(s.id),
                    provider: "openai",
                    model: "m",
                    status: RequestStatus::Ok,
                    input_tokens: i,
                    output_tokens: o,
                    error: None,
                    started_at: 0,
                    cost_usd: None,
                })
                .unwrap();
        }
        assert_eq!(
            store.session_usage(s.id).unwrap(),
            SessionUsage {
                requests: 2,
                input_tokens: 250,
                output_tokens: 50,
                cost_usd: 0.0,
                unpriced: 2,
            }
        );
        assert_eq!(store.session_usage(999).unwrap(), SessionUsage::default());
    }

    #[test]
    fn the_widest_summary_wins() {
        let store = Store::open_in_memory().unwrap();
        let s = store.create_session(&NewSession::default()).unwrap();
        assert!(store.latest_summary(s.id).unwrap().is_none());
        store.add_summary(s.id, 10, "first ten").unwrap();
        store.add_summary(s.id, 20, "first twenty").unwrap();
        assert_eq!(
            store.latest_summary(s.id).unwrap().unwrap().summary,
            "first twenty"
        );
    }

    #[test]
    fn costs_add_up_per_chat_per_turn_and_per_day_and_unpriced_calls_are_counted() {
        let store = Store::open_in_memory().unwrap();
        let a = store.create_session(&NewSession::default()).unwrap();
        let b = store.create_session(&NewSession::default()).unwrap();
        for (session, started_at, cost) in [
            (Some(a.id), 1_000, Some(0.25)),
            (Some(a.id), 5_000, Some(0.5)),
            (Some(a.id), 6_000, None),
            (Some(b.id), 5_500, Some(1.0)),
            (None, 7_000, Some(2.0)),
        ] {
            store
                .record_llm_request(&NewLlmRequest {
                    session_id: session,
                    provider: "openai",
                    model: "m",
                    status: RequestStatus::Ok,
                    input_tokens: 10,
                    output_tokens: 1,
                    error: None,
                    started_at,
                    cost_usd: cost,
                })
                .unwrap();
        }
        let chat = store.session_usage(a.id).unwrap();
        assert_eq!((chat.requests, chat.cost_usd, chat.unpriced), (3, 0.75, 1));
        let turn = store.session_usage_since(a.id, 5_000).unwrap();
        assert_eq!((turn.requests, turn.cost_usd, turn.unpriced), (2, 0.5, 1));
        let day = store.usage_since(5_000).unwrap();
        assert_eq!((day.requests, day.cost_usd, day.unpriced), (4, 3.5, 1));
    }

    #[test]
    fn a_compaction_is_undone_to_the_one_before() {
        let store = Store::open_in_memory().unwrap();
        let s = store.create_session(&NewSession::default()).unwrap();
        assert_eq!(store.undo_latest_summary(s.id).unwrap(), None);
        store.add_summary(s.id, 5, "first").unwrap();
        store.add_summary(s.id, 9, "second").unwrap();
        let undone = store.undo_latest_summary(s.id).unwrap().unwrap();
        assert_eq!(undone.summary, "second");
        assert_eq!(
            store.latest_summary(s.id).unwrap().unwrap().summary,
            "first"
        );
    }
}
