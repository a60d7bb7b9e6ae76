//! Run contexts: the permission group, extra prompt lines, grants and command sandbox a
//! session runs with.

use crate::{Store, StoreError, now_ms};
use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};
use skald_api::SandboxMode;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredRunContext {
    pub id: i64,
    pub permission_group: String,
    pub extra_prompt: String,
    pub allow_fs_reads: Vec<String>,
    pub allow_fs_writes: Vec<String>,
    /// The chat's own sandbox mode; None: config.toml's.
    pub sandbox_mode: Option<SandboxMode>,
    /// Whether the chat's sandboxed commands may use the network; None: config.toml's.
    pub sandbox_network: Option<bool>,
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
            sandbox_mode: None,
            sandbox_network: None,
        })
    }

    /// Sets a run context's own sandbox; None keeps config.toml's.
    pub fn set_run_context_sandbox(
        &self,
        id: i64,
        mode: Option<SandboxMode>,
        network: Option<bool>,
    ) -> Result<(), StoreError> {
        let changed = self.conn().execute(
            "UPDATE run_contexts SET sandbox_mode = ?2, sandbox_network = ?3 WHERE id = ?1",
            params![id, mode.map(SandboxMode::as_str), network],
        )?;
        if changed == 0 {
            return Err(StoreError::NotFound {
                what: "run context",
                id: id.to_string(),
            });
        }
        Ok(())
    }

    /// The run context of a session, made (in the `default` group, with no grants) if it
    /// has none yet, so a chat can be given settings of its own.
    pub fn ensure_run_context(&self, session_id: i64) -> Result<i64, StoreError> {
        let session = self.get_session(session_id)?;
        if let Some(id) = session.run_context_id {
            return Ok(id);
        }
        let rc = self.create_run_context("default", "", &[], &[])?;
        self.conn().execute(
            "UPDATE chat_sessions SET run_context_id = ?2 WHERE id = ?1",
            params![session_id, rc.id],
        )?;
        Ok(rc.id)
    }

    pub fn get_run_context(&self, id: i64) -> Result<StoredRunContext, StoreError> {
        let row = self
            .conn()
            .query_row(
                "SELECT id, permission_group, extra_prompt, allow_fs_reads, allow_fs_writes,
                        sandbox_mode, sandbox_network
                 FROM run_contexts WHERE id = ?1",
                [id],
                |r| {
                    Ok((
                        (
                            r.get::<_, i64>(0)?,
                            r.get::<_, String>(1)?,
                            r.get::<_, String>(2)?,
                            r.get::<_, String>(3)?,
                            r.get::<_, String>(4)?,
                        ),
                        r.get::<_, Option<String>>(5)?,
                        r.get::<_, Option<bool>>(6)?,
                    ))
                },
            )
            .optional()?;
        let ((id, group, extra, reads, writes), mode, network) =
            row.ok_or_else(|| StoreError::NotFound {
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
            sandbox_mode: mode
                .map(|m| {
                    SandboxMode::parse(&m).ok_or_else(|| {
                        StoreError::Invalid(format!("run context {id}: sandbox mode {m:?}"))
                    })
                })
                .transpose()?,
            sandbox_network: network,
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

    #[test]
    fn a_chat_gets_a_run_context_for_its_own_sandbox_and_keeps_it() {
        let store = Store::open_in_memory().unwrap();
        let s = store.create_session(&NewSession::default()).unwrap();
        let rc = store.ensure_run_context(s.id).unwrap();
        assert_eq!(store.ensure_run_context(s.id).unwrap(), rc);
        let stored = store.get_run_context(rc).unwrap();
        assert_eq!((stored.sandbox_mode, stored.sandbox_network), (None, None));
        store
            .set_run_context_sandbox(rc, Some(SandboxMode::ReadOnly), Some(true))
            .unwrap();
        let stored = store.get_run_context(rc).unwrap();
        assert_eq!(stored.sandbox_mode, Some(SandboxMode::ReadOnly));
        assert_eq!(stored.sandbox_network, Some(true));
        assert_eq!(stored.permission_group, "default");
        assert!(store.set_run_context_sandbox(999, None, None).is_err());
    }
}
