//! Deliveries: what the engine writes into a chat on its own — a background task's result
//! (`task_completed`) and batches of notifications. A delivery is stored first and taken
//! into the chat later, at a point where the conversation can take it (between rounds, or
//! when the chat is idle), so it is never lost and never splits a model's answer.

use crate::{Store, StoreError, now_ms};
use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeliveryKind {
    TaskCompleted,
    Notification,
}

impl DeliveryKind {
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryKind::TaskCompleted => "task_completed",
            DeliveryKind::Notification => "notification",
        }
    }
}

/// A delivery taken into a chat: the synthetic assistant message and the completed tool
/// call that carries it.
#[derive(Debug, Clone, PartialEq)]
pub struct Delivered {
    pub message_id: i64,
    pub text: String,
    pub tool_call_id: String,
    pub tool: String,
    pub arguments: Value,
    pub result: String,
}

/// The tool whose completed call carries a task's result into its parent chat.
pub const TASK_RESULT_TOOL: &str = "read_agent_result";
/// The tool whose completed call carries a batch of notifications into the home chat.
pub const NOTIFICATION_TOOL: &str = "read_notification";

impl Store {
    /// Stores a delivery for a chat. A notification joins the batch already waiting for
    /// the chat, if there is one, so a burst arrives as one message; otherwise it waits
    /// `batch_ms` for others. A task's result is ready at once.
    pub fn add_delivery(
        &self,
        session_id: i64,
        kind: DeliveryKind,
        payload: &Value,
        batch_ms: i64,
    ) -> Result<i64, StoreError> {
        let now = now_ms();
        let mut conn = self.conn();
        // Immediate: it reads then writes, and another process may write in between.
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let ready_at = match kind {
            DeliveryKind::TaskCompleted => now,
            DeliveryKind::Notification => tx
                .query_row(
                    "SELECT MIN(ready_at) FROM session_deliveries
                     WHERE session_id = ?1 AND kind = 'notification' AND delivered_at IS NULL",
                    [session_id],
                    |r| r.get::<_, Option<i64>>(0),
                )?
                .unwrap_or(now + batch_ms),
        };
        tx.execute(
            "INSERT INTO session_deliveries (session_id, kind, payload, ready_at, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![
                session_id,
                kind.as_str(),
                payload.to_string(),
                ready_at,
                now
            ],
        )?;
        let id = tx.last_insert_rowid();
        tx.commit()?;
        Ok(id)
    }

    /// When the chat's earliest waiting delivery is ready, if it has one.
    pub fn next_delivery_at(&self, session_id: i64) -> Result<Option<i64>, StoreError> {
        Ok(self
            .conn()
            .query_row(
                "SELECT MIN(ready_at) FROM session_deliveries
                 WHERE session_id = ?1 AND delivered_at IS NULL",
                [session_id],
                |r| r.get::<_, Option<i64>>(0),
            )
            .optional()?
            .flatten())
    }

    /// Chats with deliveries waiting, and when the earliest is ready. Only chats people
    /// use take deliveries in; background sessions never do.
    pub fn pending_deliveries(&self) -> Result<Vec<(i64, i64)>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(
            "SELECT d.session_id, MIN(d.ready_at) FROM session_deliveries d
             JOIN chat_sessions s ON s.id = d.session_id AND s.kind = 'interactive'
             WHERE d.delivered_at IS NULL GROUP BY d.session_id ORDER BY 2",
        )?;
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(rows)
    }

    /// Takes the chat's ready deliveries into its history, in one transaction: each task
    /// result becomes a synthetic assistant message with a completed `read_agent_result`
    /// call holding `task_completed`; the ready notifications become one message with one
    /// completed `read_notification` call holding them all.
    pub fn take_deliveries(&self, session_id: i64) -> Result<Vec<Delivered>, StoreError> {
        let now = now_ms();
        // The common case — nothing waiting — is one indexed read, not a write
        // transaction on every round.
        match self.next_delivery_at(session_id)? {
            Some(ready_at) if ready_at <= now => {}
            _ => return Ok(Vec::new()),
        }
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let ready: Vec<(i64, String, String)> = {
            let mut stmt = tx.prepare(
                "SELECT id, kind, payload FROM session_deliveries
                 WHERE session_id = ?1 AND delivered_at IS NULL AND ready_at <= ?2
                 ORDER BY id",
            )?;
            stmt.query_map(params![session_id, now], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })?
            .collect::<Result<Vec<_>, _>>()?
        };
        let mut out = Vec::new();
        let mut notes: Vec<(i64, Value)> = Vec::new();
        let write = |tx: &rusqlite::Transaction<'_>,
                     text: String,
                     call_id: String,
                     tool: &str,
                     args: Value,
                     result: String|
         -> Result<Delivered, StoreError> {
            tx.execute(
                "INSERT INTO chat_history (session_id, role, content, status, synthetic, created_at)
                 VALUES (?1, 'assistant', ?2, 'complete', 1, ?3)",
                params![session_id, text, now],
            )?;
            let message_id = tx.last_insert_rowid();
            tx.execute(
                "INSERT INTO chat_llm_tools (tool_call_id, session_id, message_id, name, args,
                                             status, result, result_type, created_at,
                                             updated_at, finished_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, 'done', ?6, 'json', ?7, ?7, ?7)",
                params![
                    call_id,
                    session_id,
                    message_id,
                    tool,
                    args.to_string(),
                    result,
                    now
                ],
            )?;
            Ok(Delivered {
                message_id,
                text,
                tool_call_id: call_id,
                tool: tool.to_string(),
                arguments: args,
                result,
            })
        };
        for (id, kind, payload) in ready {
            let value: Value = serde_json::from_str(&payload).unwrap_or(Value::Null);
            if kind == "notification" {
                notes.push((id, value));
                continue;
            }
            let task_id = value["task_id"].clone();
            let title = value["title"].as_str().unwrap_or_default();
            out.push(write(
                &tx,
                format!("Background task {task_id} ({title}) has finished."),
                format!("task_completed_{id}"),
                TASK_RESULT_TOOL,
                json!({"task_id": task_id}),
                payload,
            )?);
        }
        if let Some((first, _)) = notes.first() {
            let n = notes.len();
            let list: Vec<Value> = notes.iter().map(|(_, v)| v.clone()).collect();
            out.push(write(
                &tx,
                if n == 1 {
                    "A notification arrived.".to_string()
                } else {
                    format!("{n} notifications arrived.")
                },
                format!("notification_{first}"),
                NOTIFICATION_TOOL,
                json!({}),
                json!({"notifications": list}).to_string(),
            )?);
        }
        tx.execute(
            "UPDATE session_deliveries SET delivered_at = ?2
             WHERE session_id = ?1 AND delivered_at IS NULL AND ready_at <= ?2",
            params![session_id, now],
        )?;
        if !out.is_empty() {
            tx.execute(
                "UPDATE chat_sessions SET updated_at = ?2 WHERE id = ?1",
                params![session_id, now],
            )?;
        }
        tx.commit()?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NewSession;

    #[test]
    fn notifications_batch_and_tasks_do_not_wait() {
        let store = Store::open_in_memory().unwrap();
        let s = store.create_session(&NewSession::default()).unwrap();
        // A long batch window: the notifications wait; the task result does not.
        store
            .add_delivery(
                s.id,
                DeliveryKind::Notification,
                &json!({"summary": "a"}),
                60_000,
            )
            .unwrap();
        store
            .add_delivery(
                s.id,
                DeliveryKind::Notification,
                &json!({"summary": "b"}),
                60_000,
            )
            .unwrap();
        store
            .add_delivery(
                s.id,
                DeliveryKind::TaskCompleted,
                &json!({"type": "task_completed", "task_id": 7, "title": "T", "result": "r"}),
                0,
            )
            .unwrap();
        let got = store.take_deliveries(s.id).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].tool, TASK_RESULT_TOOL);
        assert!(got[0].result.contains("\"result\":\"r\""));
        let calls = store.list_tool_calls(s.id).unwrap();
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].status, skald_api::ToolCallStatus::Done);
        assert!(store.next_delivery_at(s.id).unwrap().unwrap() > now_ms() + 50_000);
        assert!(store.take_deliveries(s.id).unwrap().is_empty());

        // Both notifications share the first one's ready time: one batch, one call.
        let s2 = store.create_session(&NewSession::default()).unwrap();
        store
            .add_delivery(
                s2.id,
                DeliveryKind::Notification,
                &json!({"summary": "x"}),
                0,
            )
            .unwrap();
        store
            .add_delivery(
                s2.id,
                DeliveryKind::Notification,
                &json!({"summary": "y"}),
                60_000,
            )
            .unwrap();
        let got = store.take_deliveries(s2.id).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].tool, NOTIFICATION_TOOL);
        let v: Value = serde_json::from_str(&got[0].result).unwrap();
        assert_eq!(v["notifications"].as_array().unwrap().len(), 2);
        assert_eq!(store.next_delivery_at(s2.id).unwrap(), None);
        assert_eq!(store.pending_deliveries().unwrap().len(), 1);
    }
}
