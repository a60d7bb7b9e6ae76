//! Which project hooks files the person approved, by content (docs/hooks.md).

use crate::{Store, StoreError, now_ms};
use rusqlite::{OptionalExtension, params};

impl Store {
    /// Records that the hooks file at `path` may run while its content hashes to `sha256`.
    pub fn approve_hooks(&self, path: &str, sha256: &str) -> Result<(), StoreError> {
        self.conn().execute(
            "INSERT INTO hook_approvals (path, sha256, approved_at) VALUES (?1, ?2, ?3)
             ON CONFLICT (path) DO UPDATE SET sha256 = excluded.sha256,
                                              approved_at = excluded.approved_at",
            params![path, sha256, now_ms()],
        )?;
        Ok(())
    }

    /// The content last approved for the hooks file at `path`.
    pub fn approved_hooks(&self, path: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .conn()
            .query_row(
                "SELECT sha256 FROM hook_approvals WHERE path = ?1",
                [path],
                |r| r.get(0),
            )
            .optional()?)
    }
}
