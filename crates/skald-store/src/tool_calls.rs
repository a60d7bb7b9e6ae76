//! Tool calls made by models: persisted before they run, their state mirrored as they go.

use crate::{Store, StoreError, now_ms};
use rusqlite::{OptionalExtension, Row, params};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use skald_api::ToolCallStatus;

/// How a stored result is to be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResultType {
    Text,
    Json,
    Error,
}

impl ResultType {
    pub fn as_str(self) -> &'static str {
        match self {
            ResultType::Text => "text",
            ResultType::Json => "json",
            ResultType::Error => "error",
        }
    }

    fn parse(s: &str) -> Result<ResultType, StoreError> {
        match s {
            "text" => Ok(ResultType::Text),
            "json" => Ok(ResultType::Json),
            "error" => Ok(ResultType::Error),
            other => Err(StoreError::Invalid(format!("result type `{other}`"))),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallRecord {
    pub id: i64,
    pub tool_call_id: String,
    pub session_id: i64,
    pub stack_id: Option<i64>,
    pub message_id: Option<i64>,
    pub name: String,
    pub args: Value,
    pub status: ToolCallStatus,
    pub result: Option<String>,
    pub result_type: Option<ResultType>,
    pub created_at: i64,
    pub updated_at: i64,
    pub finished_at: Option<i64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NewToolCall {
    pub tool_call_id: String,
    pub session_id: i64,
    pub stack_id: Option<i64>,
    pub message_id: Option<i64>,
    pub name: String,
    pub args: Value,
    pub status: ToolCallStatus,
}

const COLUMNS: &str = "id, tool_call_id, session_id, stack_id, message_id, name, args, status, \
                       result, result_type, created_at, updated_at, finished_at";

struct RawRow {
    record: ToolCallRecord,
    args: String,
    status: String,
    result_type: Option<String>,
}

fn from_row(row: &Row<'_>) -> rusqlite::Result<RawRow> {
    Ok(RawRow {
        record: ToolCallRecord {
            id: row.get(0)?,
            tool_call_id: row.get(1)?,
            session_id: row.get(2)?,
            stack_id: row.get(3)?,
            message_id: row.get(4)?,
            name: row.get(5)?,
            args: Value::Null,
            status: ToolCallStatus::Running,
            result: row.get(8)?,
            result_type: None,
            created_at: row.get(10)?,
            updated_at: row.get(11)?,
            finished_at: row.get(12)?,
        },
        args: row.get(6)?,
        status: row.get(7)?,
        result_type: row.get(9)?,
    })
}

fn finish(raw: RawRow) -> Result<ToolCallRecord, StoreError> {
    let mut rec = raw.record;
    rec.args = serde_json::from_str(&raw.args)
        .map_err(|e| StoreError::Invalid(format!("arguments of {}: {e}", rec.tool_call_id)))?;
    rec.status = ToolCallStatus::parse(&raw.status)
        .ok_or_else(|| StoreError::Invalid(format!("tool call status `{}`", raw.status)))?;
    rec.result_type = raw
        .result_type
        .as_deref()
        .map(ResultType::parse)
        .transpose()?;
    Ok(rec)
}

impl Store {
    /// Records a call before it runs, so a crash mid-run leaves a row to resume from.
    pub fn insert_tool_call(&self, new: &NewToolCall) -> Result<ToolCallRecord, StoreError> {
        let now = now_ms();
        let args = new.args.to_string();
        let conn = self.conn();
        conn.execute(
            "INSERT INTO chat_llm_tools (tool_call_id, session_id, stack_id, message_id, name,
                                         args, status, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8)",
            params![
                new.tool_call_id,
                new.session_id,
                new.stack_id,
                new.message_id,
                new.name,
                args,
                new.status.as_str(),
                now
            ],
        )?;
        Ok(ToolCallRecord {
            id: conn.last_insert_rowid(),
            tool_call_id: new.tool_call_id.clone(),
            session_id: new.session_id,
            stack_id: new.stack_id,
            message_id: new.message_id,
            name: new.name.clone(),
            args: new.args.clone(),
            status: new.status,
            result: None,
            result_type: None,
            created_at: now,
            updated_at: now,
            finished_at: None,
        })
    }

    /// Mirrors a call's state. A result is stored when given; reaching a final status
    /// stamps `finished_at`. Only unfinished calls (`running`, `pending`) change: a late
    /// completion can never overwrite a cancellation or a rejection, even across restarts.
    pub fn set_tool_call_status(
        &self,
        session_id: i64,
        tool_call_id: &str,
        status: ToolCallStatus,
        result: Option<(&str, ResultType)>,
    ) -> Result<(), StoreError> {
        let now = now_ms();
        let finished = (!status.is_unfinished()).then_some(now);
        let (text, kind) = match result {
            Some((text, kind)) => (Some(text), Some(kind.as_str())),
            None => (None, None),
        };
        let changed = self.conn().execute(
            "UPDATE chat_llm_tools
             SET status = ?3,
                 result = COALESCE(?4, result),
                 result_type = COALESCE(?5, result_type),
                 updated_at = ?6,
                 finished_at = ?7
             WHERE session_id = ?1 AND tool_call_id = ?2 AND status IN ('running', 'pending')",
            params![
                session_id,
                tool_call_id,
                status.as_str(),
                text,
                kind,
                now,
                finished
            ],
        )?;
        if changed == 0 {
            return Err(match self.find_tool_call(session_id, tool_call_id)? {
                Some(rec) => StoreError::AlreadyFinal {
                    id: tool_call_id.to_string(),
                    status: rec.status.to_string(),
                },
                None => StoreError::NotFound {
                    what: "tool call",
                    id: tool_call_id.to_string(),
                },
            });
        }
        Ok(())
    }

    pub fn find_tool_call(
        &self,
        session_id: i64,
        tool_call_id: &str,
    ) -> Result<Option<ToolCallRecord>, StoreError> {
        let raw = self
            .conn()
            .query_row(
                &format!(
                    "SELECT {COLUMNS} FROM chat_llm_tools
                     WHERE session_id = ?1 AND tool_call_id = ?2"
                ),
                params![session_id, tool_call_id],
                from_row,
            )
            .optional()?;
        raw.map(finish).transpose()
    }

    /// A session's calls in the order they were made.
    pub fn list_tool_calls(&self, session_id: i64) -> Result<Vec<ToolCallRecord>, StoreError> {
        self.query_tool_calls(
            &format!("SELECT {COLUMNS} FROM chat_llm_tools WHERE session_id = ?1 ORDER BY id"),
            Some(session_id),
        )
    }

    /// Sessions a restart must finish: with calls left `running` or `pending`, or an
    /// answer left `streaming`.
    pub fn sessions_needing_resume(&self) -> Result<Vec<i64>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(
            "SELECT session_id FROM chat_llm_tools WHERE status IN ('running', 'pending')
             UNION
             SELECT session_id FROM chat_history WHERE status = 'streaming'
             ORDER BY 1",
        )?;
        let ids = stmt
            .query_map([], |r| r.get(0))?
            .collect::<Result<Vec<i64>, _>>()?;
        Ok(ids)
    }

    /// Calls left `running` or `pending` — what resume after a restart looks at.
    pub fn list_unfinished_tool_calls(&self) -> Result<Vec<ToolCallRecord>, StoreError> {
        self.query_tool_calls(
            &format!(
                "SELECT {COLUMNS} FROM chat_llm_tools
                 WHERE status IN ('running', 'pending') ORDER BY id"
            ),
            None,
        )
    }

    fn query_tool_calls(
        &self,
        sql: &str,
        session_id: Option<i64>,
    ) -> Result<Vec<ToolCallRecord>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(sql)?;
        let rows = match session_id {
            Some(id) => stmt
                .query_map([id], from_row)?
                .collect::<Result<Vec<_>, _>>()?,
            None => stmt
                .query_map([], from_row)?
                .collect::<Result<Vec<_>, _>>()?,
        };
        rows.into_iter().map(finish).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NewSession;
    use serde_json::json;

    fn call(session_id: i64, id: &str) -> NewToolCall {
        NewToolCall {
            tool_call_id: id.into(),
            session_id,
            stack_id: None,
            message_id: None,
            name: "read_file".into(),
            args: json!({"path": "src/main.rs", "limit": 10}),
            status: ToolCallStatus::Running,
        }
    }

    #[test]
    fn lifecycle_is_mirrored() {
        let store = Store::open_in_memory().unwrap();
        let s = store.create_session(&NewSession::default()).unwrap();
        store.insert_tool_call(&call(s.id, "c1")).unwrap();
        store.insert_tool_call(&call(s.id, "c2")).unwrap();

        store
            .set_tool_call_status(s.id, "c2", ToolCallStatus::Pending, None)
            .unwrap();
        let unfinished: Vec<String> = store
            .list_unfinished_tool_calls()
            .unwrap()
            .into_iter()
            .map(|c| c.tool_call_id)
            .collect();
        assert_eq!(unfinished, ["c1", "c2"]);

        store
            .set_tool_call_status(
                s.id,
                "c1",
                ToolCallStatus::Done,
                Some(("1 | fn main", ResultType::Text)),
            )
            .unwrap();
        let c1 = store.find_tool_call(s.id, "c1").unwrap().unwrap();
        assert_eq!(c1.status, ToolCallStatus::Done);
        assert_eq!(c1.result.as_deref(), Some("1 | fn main"));
        assert_eq!(c1.result_type, Some(ResultType::Text));
        assert_eq!(c1.args, json!({"path": "src/main.rs", "limit": 10}));
        assert!(c1.finished_at.is_some());

        let c2 = store.find_tool_call(s.id, "c2").unwrap().unwrap();
        assert_eq!(c2.status, ToolCallStatus::Pending);
        assert!(c2.finished_at.is_none());
        assert_eq!(store.list_tool_calls(s.id).unwrap().len(), 2);
    }

    #[test]
    fn every_status_round_trips() {
        let store = Store::open_in_memory().unwrap();
        let s = store.create_session(&NewSession::default()).unwrap();
        for (i, status) in ToolCallStatus::ALL.into_iter().enumerate() {
            let id = format!("c{i}");
            store.insert_tool_call(&call(s.id, &id)).unwrap();
            store.set_tool_call_status(s.id, &id, status, None).unwrap();
            assert_eq!(
                store.find_tool_call(s.id, &id).unwrap().unwrap().status,
                status
            );
        }
    }

    #[test]
    fn a_final_status_is_never_overwritten() {
        let store = Store::open_in_memory().unwrap();
        let s = store.create_session(&NewSession::default()).unwrap();
        store.insert_tool_call(&call(s.id, "c")).unwrap();
        store
            .set_tool_call_status(s.id, "c", ToolCallStatus::Cancelled, None)
            .unwrap();
        let err = store
            .set_tool_call_status(
                s.id,
                "c",
                ToolCallStatus::Done,
                Some(("late", ResultType::Text)),
            )
            .unwrap_err();
        assert!(matches!(err, StoreError::AlreadyFinal { .. }), "{err}");
        let rec = store.find_tool_call(s.id, "c").unwrap().unwrap();
        assert_eq!(rec.status, ToolCallStatus::Cancelled);
        assert_eq!(rec.result, None);
    }

    #[test]
    fn duplicate_ids_and_unknown_calls_are_errors() {
        let store = Store::open_in_memory().unwrap();
        let s = store.create_session(&NewSession::default()).unwrap();
        store.insert_tool_call(&call(s.id, "dup")).unwrap();
        assert!(store.insert_tool_call(&call(s.id, "dup")).is_err());
        assert!(matches!(
            store.set_tool_call_status(s.id, "nope", ToolCallStatus::Done, None),
            Err(StoreError::NotFound { .. })
        ));
        assert!(store.find_tool_call(s.id, "nope").unwrap().is_none());
    }
}
