//! Run contexts: the permission group, extra prompt lines and grants a session runs with.

use crate::{Store, StoreError, now_ms};
use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredRunContext {
    pub id: i64,
    pub permission_group: String,
    pub extra_prompt: String,
    pub allow_fs_reads: Vec<String>,
    pub allow_fs_writes: Vec<String>,
}

impl Store {
    pub fn create_run_context(
        &self,
        permission_group: &str,
        extra_prompt: &str,
        allow_fs_reads: &[String],
        allow_fs_writes: &[String],
    ) -> Result<StoredRunContext, StoreError> {
        let json = |v: &[String]| serde_json::to_string(v).unwrap_or_else(|_| "[]".into());
        let conn = self.conn();
        conn.execute(
            "INSERT INTO run_contexts (permission_group, extra_prompt, allow_fs_reads,
                                       allow_fs_writes, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![
                permission_group,
                extra_prompt,
                json(allow_fs_reads),
                json(allow_fs_writes),
                now_ms()
            ],
        )?;
        Ok(StoredRunContext {
            id: conn.last_insert_rowid(),
            permission_group: permission_group.to_string(),
            extra_prompt: extra_prompt.to_string(),
            allow_fs_reads: allow_fs_reads.to_vec(),
            allow_fs_writes: allow_fs_writes.to_vec(),
        })
    }

    pub fn get_run_context(&self, id: i64) -> Result<StoredRunContext, StoreError> {
        let row = self
            .conn()
            .query_row(
                "SELECT id, permission_group, extra_prompt, allow_fs_reads, allow_fs_writes
                 FROM run_contexts WHERE id = ?1",
                [id],
                |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, String>(3)?,
                        r.get::<_, String>(4)?,
                    ))
                },
            )
            .optional()?;
        let (id, group, extra, reads, writes) = row.ok_or_else(|| StoreError::NotFound {
            what: "run context",
            id: id.to_string(),
        })?;
        let list = |s: &str| {
            serde_json::from_str::<Vec<String>>(s)
                .map_err(|e| StoreError::Invalid(format!("run context {id} grants: {e}")))
        };
        Ok(StoredRunContext {
            id,
            permission_group: group,
            extra_prompt: extra,
            allow_fs_reads: list(&reads)?,
            allow_fs_writes: list(&writes)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NewSession;

    #[test]
    fn a_session_points_at_its_run_context() {
        let store = Store::open_in_memory().unwrap();
        let rc = store
            .create_run_context(
                "trusted",
                "Answer in French.",
                &["/data".into()],
                &["/tmp/out".into()],
            )
            .unwrap();
        let s = store
            .create_session(&NewSession {
                run_context_id: Some(rc.id),
                ..NewSession::default()
            })
            .unwrap();
        let back = store
            .get_run_context(store.get_session(s.id).unwrap().run_context_id.unwrap())
            .unwrap();
        assert_eq!(back, rc);
        assert!(matches!(
            store.get_run_context(999),
            Err(StoreError::NotFound { .. })
        ));
    }
}
