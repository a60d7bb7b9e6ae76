//! Inbox items: what agents wait on a person for.

use crate::{Store, StoreError, now_ms, parse_stored};
use rusqlite::{OptionalExtension, Row, params};
use serde::{Deserialize, Serialize};
use serde_json::Value;
pub use skald_api::records::{InboxKind, InboxStatus};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InboxItem {
    pub id: i64,
    pub session_id: i64,
    pub kind: InboxKind,
    pub tool_call_id: Option<String>,
    pub agent_id: String,
    pub depth: i64,
    pub title: String,
    pub payload: Value,
    pub status: InboxStatus,
    pub answer: Option<String>,
    pub created_at: i64,
    pub resolved_at: Option<i64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NewInboxItem {
    pub session_id: i64,
    pub kind: InboxKind,
    pub tool_call_id: Option<String>,
    pub agent_id: String,
    pub depth: i64,
    pub title: String,
    pub payload: Value,
}

const COLUMNS: &str = "id, session_id, kind, tool_call_id, agent_id, depth, title, payload, \
                       status, answer, created_at, resolved_at";

fn item(r: &Row<'_>) -> rusqlite::Result<(InboxItem, [String; 3])> {
    let (kind, payload, status): (String, String, String) = (r.get(2)?, r.get(7)?, r.get(8)?);
    Ok((
        InboxItem {
            id: r.get(0)?,
            session_id: r.get(1)?,
            kind: InboxKind::Approval,
            tool_call_id: r.get(3)?,
            agent_id: r.get(4)?,
            depth: r.get(5)?,
            title: r.get(6)?,
            payload: Value::Null,
            status: InboxStatus::Pending,
            answer: r.get(9)?,
            created_at: r.get(10)?,
            resolved_at: r.get(11)?,
        },
        [kind, payload, status],
    ))
}

fn finish(
    (mut it, [kind, payload, status]): (InboxItem, [String; 3]),
) -> Result<InboxItem, StoreError> {
    it.kind = parse_stored(&kind, InboxKind::parse, "inbox kind")?;
    it.status = parse_stored(&status, InboxStatus::parse, "inbox status")?;
    it.payload = serde_json::from_str(&payload)
        .map_err(|e| StoreError::Invalid(format!("inbox payload {}: {e}", it.id)))?;
    Ok(it)
}

impl Store {
    pub fn add_inbox_item(&self, new: &NewInboxItem) -> Result<InboxItem, StoreError> {
        let now = now_ms();
        let conn = self.conn();
        conn.execute(
            "INSERT INTO inbox_items (session_id, kind, tool_call_id, agent_id, depth, title,
                                      payload, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                new.session_id,
                new.kind.as_str(),
                new.tool_call_id,
                new.agent_id,
                new.depth,
                new.title,
                new.payload.to_string(),
                now
            ],
        )?;
        Ok(InboxItem {
            id: conn.last_insert_rowid(),
            session_id: new.session_id,
            kind: new.kind,
            tool_call_id: new.tool_call_id.clone(),
            agent_id: new.agent_id.clone(),
            depth: new.depth,
            title: new.title.clone(),
            payload: new.payload.clone(),
            status: InboxStatus::Pending,
            answer: None,
            created_at: now,
            resolved_at: None,
        })
    }

    pub fn get_inbox_item(&self, id: i64) -> Result<InboxItem, StoreError> {
        let raw = self
            .conn()
            .query_row(
                &format!("SELECT {COLUMNS} FROM inbox_items WHERE id = ?1"),
                [id],
                item,
            )
            .optional()?;
        raw.map(finish)
            .transpose()?
            .ok_or_else(|| StoreError::NotFound {
                what: "inbox item",
                id: id.to_string(),
            })
    }

    /// The item a tool call waits on, if it has one (after a restart).
    pub fn inbox_item_for_call(
        &self,
        session_id: i64,
        tool_call_id: &str,
        kind: InboxKind,
    ) -> Result<Option<InboxItem>, StoreError> {
        let raw = self
            .conn()
            .query_row(
                &format!(
                    "SELECT {COLUMNS} FROM inbox_items
                     WHERE session_id = ?1 AND tool_call_id = ?2 AND kind = ?3
                     ORDER BY id DESC LIMIT 1"
                ),
                params![session_id, tool_call_id, kind.as_str()],
                item,
            )
            .optional()?;
        raw.map(finish).transpose()
    }

    /// Everything still waiting, oldest first, across all sessions.
    pub fn pending_inbox(&self) -> Result<Vec<InboxItem>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!(
            "SELECT {COLUMNS} FROM inbox_items WHERE status = 'pending' ORDER BY id"
        ))?;
        let rows = stmt.query_map([], item)?.collect::<Result<Vec<_>, _>>()?;
        rows.into_iter().map(finish).collect()
    }

    /// Resolves a pending item. An item already resolved keeps its first answer:
    /// `StoreError::AlreadyFinal`, so two people answering at once cannot both win.
    pub fn resolve_inbox_item(
        &self,
        id: i64,
        status: InboxStatus,
        answer: Option<&str>,
    ) -> Result<InboxItem, StoreError> {
        if status == InboxStatus::Pending {
            return Err(StoreError::Invalid(
                "an answer cannot make an item pending".into(),
            ));
        }
        let changed = self.conn().execute(
            "UPDATE inbox_items SET status = ?2, answer = ?3, resolved_at = ?4
             WHERE id = ?1 AND status = 'pending'",
            params![id, status.as_str(), answer, now_ms()],
        )?;
        let current = self.get_inbox_item(id)?;
        if changed == 0 {
            return Err(StoreError::AlreadyFinal {
                id: format!("inbox item {id}"),
                status: current.status.as_str().to_string(),
            });
        }
        Ok(current)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NewSession;
    use serde_json::json;

    #[test]
    fn items_wait_until_answered_once() {
        let store = Store::open_in_memory().unwrap();
        let s = store.create_session(&NewSession::default()).unwrap();
        let it = store
            .add_inbox_item(&NewInboxItem {
                session_id: s.id,
                kind: InboxKind::Approval,
                tool_call_id: Some("c1".into()),
                agent_id: "main".into(),
                depth: 0,
                title: "execute_cmd `ls`".into(),
                payload: json!({"tool": "execute_cmd", "arguments": {"command": "ls"}}),
            })
            .unwrap();
        assert_eq!(store.pending_inbox().unwrap(), std::slice::from_ref(&it));
        assert_eq!(
            store
                .inbox_item_for_call(s.id, "c1", InboxKind::Approval)
                .unwrap()
                .unwrap()
                .id,
            it.id
        );
        assert!(
            store
                .inbox_item_for_call(s.id, "c1", InboxKind::Question)
                .unwrap()
                .is_none()
        );
        let done = store
            .resolve_inbox_item(it.id, InboxStatus::Rejected, Some("not now"))
            .unwrap();
        assert_eq!(done.status, InboxStatus::Rejected);
        assert_eq!(done.answer.as_deref(), Some("not now"));
        assert!(store.pending_inbox().unwrap().is_empty());
        let again = store.resolve_inbox_item(it.id, InboxStatus::Approved, None);
        assert!(matches!(again, Err(StoreError::AlreadyFinal { .. })));
        assert!(matches!(
            store.get_inbox_item(999),
            Err(StoreError::NotFound { .. })
        ));
    }
}
