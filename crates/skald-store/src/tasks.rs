//! Background tasks: what `execute_task` started with mode async, and how each ended.

use crate::{Store, StoreError, now_ms, parse_stored};
use rusqlite::{OptionalExtension, Row, params};
pub use skald_api::records::TaskStatus;

/// Defined with the protocol, which carries it to the UI as it is stored.
pub use skald_api::listings::TaskInfo as Task;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewTask {
    pub parent_session_id: i64,
    pub parent_tool_call_id: Option<String>,
    pub session_id: i64,
    pub agent_id: String,
    pub title: String,
    pub description: String,
    pub prompt: String,
}

const COLUMNS: &str = "id, parent_session_id, parent_tool_call_id, session_id, agent_id, title, \
                       description, prompt, status, result, created_at, finished_at";

fn from_row(row: &Row<'_>) -> rusqlite::Result<(Task, String)> {
    Ok((
        Task {
            id: row.get(0)?,
            parent_session_id: row.get(1)?,
            parent_tool_call_id: row.get(2)?,
            session_id: row.get(3)?,
            agent_id: row.get(4)?,
            title: row.get(5)?,
            description: row.get(6)?,
            prompt: row.get(7)?,
            status: TaskStatus::Running,
            result: row.get(9)?,
            created_at: row.get(10)?,
            finished_at: row.get(11)?,
        },
        row.get(8)?,
    ))
}

fn finish((mut task, status): (Task, String)) -> Result<Task, StoreError> {
    task.status = parse_stored(&status, TaskStatus::parse, "task status")?;
    Ok(task)
}

impl Store {
    pub fn create_task(&self, new: &NewTask) -> Result<Task, StoreError> {
        let id = {
            let conn = self.conn();
            conn.execute(
                "INSERT INTO tasks (parent_session_id, parent_tool_call_id, session_id, agent_id,
                                    title, description, prompt, status, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'running', ?8)",
                params![
                    new.parent_session_id,
                    new.parent_tool_call_id,
                    new.session_id,
                    new.agent_id,
                    new.title,
                    new.description,
                    new.prompt,
                    now_ms()
                ],
            )?;
            conn.last_insert_rowid()
        };
        self.get_task(id)
    }

    pub fn get_task(&self, id: i64) -> Result<Task, StoreError> {
        let row = self
            .conn()
            .query_row(
                &format!("SELECT {COLUMNS} FROM tasks WHERE id = ?1"),
                [id],
                from_row,
            )
            .optional()?;
        row.map(finish)
            .transpose()?
            .ok_or_else(|| StoreError::NotFound {
                what: "task",
                id: id.to_string(),
            })
    }

    /// The task working in a background session, if that session is a task's.
    pub fn task_for_session(&self, session_id: i64) -> Result<Option<Task>, StoreError> {
        let row = self
            .conn()
            .query_row(
                &format!("SELECT {COLUMNS} FROM tasks WHERE session_id = ?1"),
                [session_id],
                from_row,
            )
            .optional()?;
        row.map(finish).transpose()
    }

    /// Tasks, newest first; only those started from `parent` when given.
    pub fn list_tasks(&self, parent: Option<i64>) -> Result<Vec<Task>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!(
            "SELECT {COLUMNS} FROM tasks WHERE ?1 IS NULL OR parent_session_id = ?1
             ORDER BY id DESC"
        ))?;
        let rows = stmt
            .query_map([parent], from_row)?
            .collect::<Result<Vec<_>, _>>()?;
        rows.into_iter().map(finish).collect()
    }

    /// Records how a running task ended and stores its result for the chat that started
    /// it, in one transaction, so a result is never recorded without its delivery. Returns
    /// false when it had already ended (a stop and a finish racing): the first outcome
    /// stands.
    pub fn finish_task_and_deliver(
        &self,
        id: i64,
        status: TaskStatus,
        result: &str,
        delivery: &serde_json::Value,
    ) -> Result<bool, StoreError> {
        let now = now_ms();
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let changed = tx.execute(
            "UPDATE tasks SET status = ?2, result = ?3, finished_at = ?4
             WHERE id = ?1 AND status = 'running'",
            params![id, status.as_str(), result, now],
        )?;
        if changed == 1 {
            tx.execute(
                "INSERT INTO session_deliveries (session_id, kind, payload, ready_at, created_at)
                 SELECT parent_session_id, 'task_completed', ?2, ?3, ?3 FROM tasks WHERE id = ?1",
                params![id, delivery.to_string(), now],
            )?;
        }
        tx.commit()?;
        Ok(changed == 1)
    }

    /// Records how a running task ended. Returns false when it had already ended (a stop
    /// and a finish racing): the first outcome stands.
    pub fn finish_task(
        &self,
        id: i64,
        status: TaskStatus,
        result: &str,
    ) -> Result<bool, StoreError> {
        let changed = self.conn().execute(
            "UPDATE tasks SET status = ?2, result = ?3, finished_at = ?4
             WHERE id = ?1 AND status = 'running'",
            params![id, status.as_str(), result, now_ms()],
        )?;
        Ok(changed == 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{NewSession, SessionKind};

    #[test]
    fn a_task_ends_once() {
        let store = Store::open_in_memory().unwrap();
        let parent = store.create_session(&NewSession::default()).unwrap();
        let bg = store
            .create_session(&NewSession {
                kind: SessionKind::Background,
                ..NewSession::default()
            })
            .unwrap();
        let t = store
            .create_task(&NewTask {
                parent_session_id: parent.id,
                parent_tool_call_id: Some("c1".into()),
                session_id: bg.id,
                agent_id: "researcher".into(),
                title: "Survey".into(),
                description: String::new(),
                prompt: "look".into(),
            })
            .unwrap();
        assert_eq!(t.status, TaskStatus::Running);
        assert_eq!(store.task_for_session(bg.id).unwrap().unwrap().id, t.id);
        assert!(
            store
                .finish_task(t.id, TaskStatus::Done, "found it")
                .unwrap()
        );
        assert!(!store.finish_task(t.id, TaskStatus::Cancelled, "").unwrap());
        let t = store.get_task(t.id).unwrap();
        assert_eq!(t.status, TaskStatus::Done);
        assert_eq!(t.result.as_deref(), Some("found it"));
        assert_eq!(store.list_tasks(Some(parent.id)).unwrap().len(), 1);
        assert!(store.list_tasks(Some(bg.id)).unwrap().is_empty());
        assert!(matches!(
            store.get_task(999),
            Err(StoreError::NotFound { .. })
        ));
    }
}
