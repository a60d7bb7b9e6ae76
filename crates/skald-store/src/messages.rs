//! The message history of a session.

use crate::{Store, StoreError, now_ms, parse_stored};
use rusqlite::{Row, params};
use serde::{Deserialize, Serialize};
pub use skald_api::records::{MessageStatus, Role};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    pub id: i64,
    pub session_id: i64,
    pub stack_id: Option<i64>,
    pub role: Role,
    pub content: String,
    pub reasoning: Option<String>,
    pub status: MessageStatus,
    pub synthetic: bool,
    pub created_at: i64,
    /// The reasoning blocks its provider wants back (`set_message_replay`).
    pub replay: Vec<serde_json::Value>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewMessage {
    pub session_id: i64,
    pub stack_id: Option<i64>,
    pub role: Role,
    pub content: String,
    pub reasoning: Option<String>,
    pub status: MessageStatus,
    pub synthetic: bool,
}

impl NewMessage {
    /// A complete, non-synthetic message of the root agent.
    pub fn new(session_id: i64, role: Role, content: impl Into<String>) -> Self {
        NewMessage {
            session_id,
            stack_id: None,
            role,
            content: content.into(),
            reasoning: None,
            status: MessageStatus::Complete,
            synthetic: false,
        }
    }
}

fn from_row(row: &Row<'_>) -> rusqlite::Result<(Message, String, String)> {
    Ok((
        Message {
            id: row.get(0)?,
            session_id: row.get(1)?,
            stack_id: row.get(2)?,
            role: Role::User,
            content: row.get(4)?,
            reasoning: row.get(5)?,
            status: MessageStatus::Complete,
            synthetic: row.get(7)?,
            created_at: row.get(8)?,
            replay: row
                .get::<_, Option<String>>(9)?
                .and_then(|j| serde_json::from_str(&j).ok())
                .unwrap_or_default(),
        },
        row.get(3)?,
        row.get(6)?,
    ))
}

impl Store {
    /// Appends a message and touches its session, in one transaction.
    pub fn append_message(&self, new: &NewMessage) -> Result<Message, StoreError> {
        self.append_message_showing(new, &[])
    }

    /// `append_message` for a message that shows `images` (kept with `put_image`): the
    /// message and its images are written together or not at all.
    pub fn append_message_showing(
        &self,
        new: &NewMessage,
        images: &[crate::images::ImageRef],
    ) -> Result<Message, StoreError> {
        let now = now_ms();
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        tx.execute(
            "INSERT INTO chat_history (session_id, stack_id, role, content, reasoning, status,
                                       synthetic, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                new.session_id,
                new.stack_id,
                new.role.as_str(),
                new.content,
                new.reasoning,
                new.status.as_str(),
                new.synthetic,
                now
            ],
        )?;
        let id = tx.last_insert_rowid();
        crate::images::place(
            &tx,
            new.session_id,
            &crate::images::ImageOwner::Message(id),
            images,
        )?;
        tx.execute(
            "UPDATE chat_sessions SET updated_at = ?2 WHERE id = ?1",
            params![new.session_id, now],
        )?;
        tx.commit()?;
        Ok(Message {
            id,
            session_id: new.session_id,
            stack_id: new.stack_id,
            role: new.role,
            content: new.content.clone(),
            reasoning: new.reasoning.clone(),
            status: new.status,
            synthetic: new.synthetic,
            created_at: now,
            replay: Vec::new(),
        })
    }

    /// Replaces a message's text as it streams or when it is finalised.
    pub fn update_message(
        &self,
        id: i64,
        content: &str,
        reasoning: Option<&str>,
        status: MessageStatus,
    ) -> Result<(), StoreError> {
        let changed = self.conn().execute(
            "UPDATE chat_history SET content = ?2, reasoning = ?3, status = ?4 WHERE id = ?1",
            params![id, content, reasoning, status.as_str()],
        )?;
        if changed == 0 {
            return Err(StoreError::NotFound {
                what: "message",
                id: id.to_string(),
            });
        }
        Ok(())
    }

    /// Keeps the reasoning blocks an assistant message's provider wants back with the next
    /// request of the same tool loop (Anthropic's signed thinking).
    pub fn set_message_replay(
        &self,
        id: i64,
        blocks: &[serde_json::Value],
    ) -> Result<(), StoreError> {
        let json = serde_json::to_string(blocks)
            .map_err(|e| StoreError::Corrupt(format!("a message's reasoning blocks: {e}")))?;
        self.conn().execute(
            "UPDATE chat_history SET replay = ?2 WHERE id = ?1",
            params![id, json],
        )?;
        Ok(())
    }

    /// Whether a session has any message yet (a chat's first turn), without reading them.
    pub fn has_messages(&self, session_id: i64) -> Result<bool, StoreError> {
        Ok(self.conn().query_row(
            "SELECT EXISTS (SELECT 1 FROM chat_history WHERE session_id = ?1)",
            [session_id],
            |r| r.get(0),
        )?)
    }

    /// A session's history in the order it was written.
    pub fn list_messages(&self, session_id: i64) -> Result<Vec<Message>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(
            "SELECT id, session_id, stack_id, role, content, reasoning, status, synthetic,
                    created_at, replay
             FROM chat_history WHERE session_id = ?1 ORDER BY id",
        )?;
        let rows = stmt
            .query_map([session_id], from_row)?
            .collect::<Result<Vec<_>, _>>()?;
        rows.into_iter()
            .map(|(mut m, role, status)| {
                m.role = parse_stored(&role, Role::parse, "message role")?;
                m.status = parse_stored(&status, MessageStatus::parse, "message status")?;
                Ok(m)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NewSession;

    #[test]
    fn messages_keep_their_order_and_fields() {
        let store = Store::open_in_memory().unwrap();
        let s = store.create_session(&NewSession::default()).unwrap();
        store
            .append_message(&NewMessage::new(s.id, Role::User, "question"))
            .unwrap();
        let streaming = store
            .append_message(&NewMessage {
                status: MessageStatus::Streaming,
                ..NewMessage::new(s.id, Role::Assistant, "")
            })
            .unwrap();
        store
            .update_message(
                streaming.id,
                "answer ✓",
                Some("thought"),
                MessageStatus::Complete,
            )
            .unwrap();
        store
            .append_message(&NewMessage {
                synthetic: true,
                ..NewMessage::new(s.id, Role::Assistant, "task done")
            })
            .unwrap();
        let all = store.list_messages(s.id).unwrap();
        let texts: Vec<&str> = all.iter().map(|m| m.content.as_str()).collect();
        assert_eq!(texts, ["question", "answer ✓", "task done"]);
        assert_eq!(all[1].reasoning.as_deref(), Some("thought"));
        assert_eq!(all[1].status, MessageStatus::Complete);
        assert!(all[2].synthetic && !all[0].synthetic);
        assert_eq!(all[0].role, Role::User);
    }

    #[test]
    fn a_message_for_a_missing_session_is_refused() {
        let store = Store::open_in_memory().unwrap();
        let err = store
            .append_message(&NewMessage::new(42, Role::User, "orphan"))
            .unwrap_err();
        assert!(matches!(err, StoreError::Sqlite(_)), "{err}");
        assert!(matches!(
            store.update_message(9, "x", None, MessageStatus::Complete),
            Err(StoreError::NotFound { .. })
        ));
    }
}
