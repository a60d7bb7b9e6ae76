//! Chat sessions.

use crate::{Store, StoreError, now_ms, parse_stored};
use rusqlite::{OptionalExtension, Row, params};
use serde::{Deserialize, Serialize};
use skald_api::records::ChatMode;
pub use skald_api::records::SessionKind;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Session {
    pub id: i64,
    pub title: String,
    pub agent_id: String,
    pub kind: SessionKind,
    pub working_dir: Option<String>,
    pub run_context_id: Option<i64>,
    /// A background session's home chat, where its notifications go.
    pub home_session_id: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
    /// The model the chat's turns use (`provider/model`); the configured one when `None`.
    pub model: Option<String>,
    /// Its reasoning effort (low, medium, high); the model's default when `None`.
    pub effort: Option<String>,
    /// The chat it was forked from, if it still exists.
    pub forked_from: Option<i64>,
    /// The last message of that chat it copied (`None`: it copied none).
    pub forked_after: Option<i64>,
    /// Plan or act (docs/agent-loop.md, "Plan mode").
    pub mode: ChatMode,
}

/// What a caller decides about a new session; the rest is assigned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewSession {
    pub title: String,
    pub agent_id: String,
    pub kind: SessionKind,
    pub working_dir: Option<String>,
    pub run_context_id: Option<i64>,
    pub home_session_id: Option<i64>,
}

impl Default for NewSession {
    fn default() -> Self {
        NewSession {
            title: String::new(),
            agent_id: "main".to_string(),
            kind: SessionKind::Interactive,
            working_dir: None,
            run_context_id: None,
            home_session_id: None,
        }
    }
}

pub(crate) const COLUMNS: &str = "id, title, agent_id, kind, working_dir, run_context_id, created_at, \
                       updated_at, home_session_id, model, effort, forked_from, forked_after, mode";

pub(crate) fn from_row(row: &Row<'_>) -> rusqlite::Result<(Session, String)> {
    let kind: String = row.get(3)?;
    Ok((
        Session {
            id: row.get(0)?,
            title: row.get(1)?,
            agent_id: row.get(2)?,
            kind: SessionKind::Interactive,
            working_dir: row.get(4)?,
            run_context_id: row.get(5)?,
            created_at: row.get(6)?,
            updated_at: row.get(7)?,
            home_session_id: row.get(8)?,
            model: row.get(9)?,
            effort: row.get(10)?,
            forked_from: row.get(11)?,
            forked_after: row.get(12)?,
            mode: row
                .get::<_, Option<String>>(13)?
                .as_deref()
                .and_then(ChatMode::parse)
                .unwrap_or(ChatMode::Act),
        },
        kind,
    ))
}

pub(crate) fn finish((mut session, kind): (Session, String)) -> Result<Session, StoreError> {
    session.kind = parse_stored(&kind, SessionKind::parse, "session kind")?;
    Ok(session)
}

impl Store {
    pub fn create_session(&self, new: &NewSession) -> Result<Session, StoreError> {
        let now = now_ms();
        let conn = self.conn();
        conn.execute(
            "INSERT INTO chat_sessions (title, agent_id, kind, working_dir, run_context_id,
                                        home_session_id, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7)",
            params![
                new.title,
                new.agent_id,
                new.kind.as_str(),
                new.working_dir,
                new.run_context_id,
                new.home_session_id,
                now
            ],
        )?;
        let id = conn.last_insert_rowid();
        Ok(Session {
            id,
            title: new.title.clone(),
            agent_id: new.agent_id.clone(),
            kind: new.kind,
            working_dir: new.working_dir.clone(),
            run_context_id: new.run_context_id,
            home_session_id: new.home_session_id,
            created_at: now,
            updated_at: now,
            model: None,
            effort: None,
            forked_from: None,
            forked_after: None,
            mode: ChatMode::Act,
        })
    }

    /// Sets a chat's mode, from its next round.
    pub fn set_session_mode(&self, id: i64, mode: ChatMode) -> Result<(), StoreError> {
        let changed = self.conn().execute(
            "UPDATE chat_sessions SET mode = ?2 WHERE id = ?1",
            params![id, mode.as_str()],
        )?;
        if changed == 0 {
            return Err(StoreError::NotFound {
                what: "session",
                id: id.to_string(),
            });
        }
        Ok(())
    }

    /// Sets the model and effort a chat's next turns use (`None`: the configured model,
    /// the model's own effort). An effort other than low, medium or high is refused.
    pub fn set_session_model(
        &self,
        id: i64,
        model: Option<&str>,
        effort: Option<&str>,
    ) -> Result<(), StoreError> {
        let changed = self.conn().execute(
            "UPDATE chat_sessions SET model = ?2, effort = ?3 WHERE id = ?1",
            params![id, model, effort],
        )?;
        if changed == 0 {
            return Err(StoreError::NotFound {
                what: "session",
                id: id.to_string(),
            });
        }
        Ok(())
    }

    pub fn find_session(&self, id: i64) -> Result<Option<Session>, StoreError> {
        let row = self
            .conn()
            .query_row(
                &format!("SELECT {COLUMNS} FROM chat_sessions WHERE id = ?1"),
                [id],
                from_row,
            )
            .optional()?;
        row.map(finish).transpose()
    }

    pub fn get_session(&self, id: i64) -> Result<Session, StoreError> {
        self.find_session(id)?.ok_or_else(|| StoreError::NotFound {
            what: "session",
            id: id.to_string(),
        })
    }

    /// All sessions, most recently active first.
    pub fn list_sessions(&self) -> Result<Vec<Session>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!(
            "SELECT {COLUMNS} FROM chat_sessions ORDER BY updated_at DESC, id DESC"
        ))?;
        let rows = stmt
            .query_map([], from_row)?
            .collect::<Result<Vec<_>, _>>()?;
        rows.into_iter().map(finish).collect()
    }

    pub fn rename_session(&self, id: i64, title: &str) -> Result<(), StoreError> {
        let changed = self.conn().execute(
            "UPDATE chat_sessions SET title = ?2, updated_at = ?3 WHERE id = ?1",
            params![id, title, now_ms()],
        )?;
        if changed == 0 {
            return Err(StoreError::NotFound {
                what: "session",
                id: id.to_string(),
            });
        }
        Ok(())
    }

    /// Opens an agent frame under a session: a sub-agent started by `parent_tool_call_id`
    /// of the frame `parent_stack_id` (`None`: the root agent). Returns its id.
    pub fn create_stack_frame(
        &self,
        session_id: i64,
        parent_stack_id: Option<i64>,
        parent_tool_call_id: &str,
        agent_id: &str,
        depth: usize,
    ) -> Result<i64, StoreError> {
        let conn = self.conn();
        conn.execute(
            "INSERT INTO chat_session_stack (session_id, parent_stack_id, parent_tool_call_id,
                                             agent_id, depth, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                session_id,
                parent_stack_id,
                parent_tool_call_id,
                agent_id,
                i64::try_from(depth).unwrap_or(i64::MAX),
                now_ms()
            ],
        )?;
        Ok(conn.last_insert_rowid())
    }

    /// Deletes a session with its history and tool calls.
    pub fn delete_session(&self, id: i64) -> Result<(), StoreError> {
        let changed = self
            .conn()
            .execute("DELETE FROM chat_sessions WHERE id = ?1", [id])?;
        if changed == 0 {
            return Err(StoreError::NotFound {
                what: "session",
                id: id.to_string(),
            });
        }
        // Its images go once no chat shows them and none was attached in the last day: the
        // same image may be waiting in another chat's composer or queue to be sent.
        self.forget_unplaced_images()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{NewMessage, Role};

    #[test]
    fn create_get_list_rename_delete() {
        let store = Store::open_in_memory().unwrap();
        let a = store
            .create_session(&NewSession {
                title: "first".into(),
                working_dir: Some("/home/u/proj".into()),
                ..NewSession::default()
            })
            .unwrap();
        let b = store
            .create_session(&NewSession {
                kind: SessionKind::Background,
                agent_id: "researcher".into(),
                ..NewSession::default()
            })
            .unwrap();
        assert_eq!(store.get_session(a.id).unwrap(), a);
        assert_eq!(
            store.get_session(b.id).unwrap().kind,
            SessionKind::Background
        );
        let ids: Vec<i64> = store
            .list_sessions()
            .unwrap()
            .iter()
            .map(|s| s.id)
            .collect();
        assert_eq!(ids.len(), 2);
        assert!(ids.contains(&a.id) && ids.contains(&b.id));

        store.rename_session(a.id, "renamed").unwrap();
        assert_eq!(store.get_session(a.id).unwrap().title, "renamed");

        store
            .append_message(&NewMessage::new(a.id, Role::User, "hi"))
            .unwrap();
        store.delete_session(a.id).unwrap();
        assert!(store.find_session(a.id).unwrap().is_none());
        assert!(
            store.list_messages(a.id).unwrap().is_empty(),
            "history cascades"
        );
        assert!(matches!(
            store.delete_session(a.id),
            Err(StoreError::NotFound { .. })
        ));
        assert!(matches!(
            store.rename_session(12345, "x"),
            Err(StoreError::NotFound { .. })
        ));
    }

    #[test]
    fn a_chat_keeps_its_own_model_and_effort_and_a_fork_too() {
        let store = Store::open_in_memory().unwrap();
        let s = store.create_session(&NewSession::default()).unwrap();
        assert_eq!((s.model.as_deref(), s.effort.as_deref()), (None, None));
        store
            .set_session_model(s.id, Some("openai/o3-mini"), Some("high"))
            .unwrap();
        let got = store.get_session(s.id).unwrap();
        assert_eq!(got.model.as_deref(), Some("openai/o3-mini"));
        assert_eq!(got.effort.as_deref(), Some("high"));
        let m = store
            .append_message(&NewMessage::new(s.id, Role::User, "hi"))
            .unwrap();
        store
            .set_message_replay(
                m.id,
                &[serde_json::json!({"type": "thinking", "signature": "s"})],
            )
            .unwrap();
        let next = store
            .append_message(&NewMessage::new(s.id, Role::User, "next"))
            .unwrap();
        let fork = store.fork_session(s.id, next.id, "fork").unwrap();
        assert_eq!(fork.model.as_deref(), Some("openai/o3-mini"));
        assert_eq!(fork.effort.as_deref(), Some("high"));
        assert_eq!(
            store.list_messages(fork.id).unwrap()[0].replay,
            [serde_json::json!({"type": "thinking", "signature": "s"})]
        );
        // Back to the configured ones; an effort no model has is refused.
        store.set_session_model(s.id, None, None).unwrap();
        assert_eq!(store.get_session(s.id).unwrap().model, None);
        assert!(store.set_session_model(s.id, None, Some("max")).is_err());
        assert!(store.set_session_model(999, None, None).is_err());
    }
}
