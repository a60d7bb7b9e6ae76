//! The checkpoint rows of a chat: each step that changed its folder, with the commits of
//! the folder's shadow repository before and after it (docs/checkpoints.md).

use crate::{Store, StoreError, now_ms};
use rusqlite::{OptionalExtension, Row, params};
use skald_api::checkpoint::{CheckpointInfo, CheckpointKind, FileChanges};

/// A step to record.
#[derive(Debug, Clone)]
pub struct NewCheckpoint<'a> {
    pub session_id: i64,
    pub tool_call_id: Option<&'a str>,
    pub kind: CheckpointKind,
    pub folder: &'a str,
    pub before: Option<&'a str>,
    pub after: Option<&'a str>,
    pub changes: &'a FileChanges,
    pub note: &'a str,
    pub restored_to: Option<i64>,
}

const COLUMNS: &str = "id, session_id, tool_call_id, kind, folder, before_commit, after_commit, \
                       changes, note, restored_to, created_at";

fn from_row(r: &Row<'_>) -> rusqlite::Result<CheckpointInfo> {
    let kind: String = r.get(3)?;
    let changes: String = r.get(7)?;
    Ok(CheckpointInfo {
        id: r.get(0)?,
        session_id: r.get(1)?,
        tool_call_id: r.get(2)?,
        // The table's CHECK admits only the two kinds.
        kind: CheckpointKind::parse(&kind).unwrap_or(CheckpointKind::Call),
        folder: r.get(4)?,
        before: r.get(5)?,
        after: r.get(6)?,
        // Written by `add_checkpoint` from the same type; an unreadable list shows as none.
        changes: serde_json::from_str(&changes).unwrap_or_default(),
        note: r.get(8)?,
        restored_to: r.get(9)?,
        created_at: r.get(10)?,
    })
}

impl Store {
    pub fn add_checkpoint(&self, c: &NewCheckpoint<'_>) -> Result<CheckpointInfo, StoreError> {
        let changes =
            serde_json::to_string(c.changes).map_err(|e| StoreError::Invalid(e.to_string()))?;
        let conn = self.conn();
        conn.execute(
            "INSERT INTO checkpoints (session_id, tool_call_id, kind, folder, before_commit,
                                      after_commit, changes, note, restored_to, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            params![
                c.session_id,
                c.tool_call_id,
                c.kind.as_str(),
                c.folder,
                c.before,
                c.after,
                changes,
                c.note,
                c.restored_to,
                now_ms()
            ],
        )?;
        let id = conn.last_insert_rowid();
        Ok(conn.query_row(
            &format!("SELECT {COLUMNS} FROM checkpoints WHERE id = ?1"),
            [id],
            from_row,
        )?)
    }

    pub fn checkpoint(&self, id: i64) -> Result<Option<CheckpointInfo>, StoreError> {
        Ok(self
            .conn()
            .query_row(
                &format!("SELECT {COLUMNS} FROM checkpoints WHERE id = ?1"),
                [id],
                from_row,
            )
            .optional()?)
    }

    /// A chat's checkpoints, oldest first.
    pub fn checkpoints(&self, session_id: i64) -> Result<Vec<CheckpointInfo>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!(
            "SELECT {COLUMNS} FROM checkpoints WHERE session_id = ?1 ORDER BY id"
        ))?;
        let rows = stmt.query_map([session_id], from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}
