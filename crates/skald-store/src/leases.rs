//! Leases on chats and background tasks: which process is working on them now. Claims are
//! compare-and-set statements, so of two processes claiming at once exactly one wins.

use crate::{Store, StoreError, now_ms};
use rusqlite::{OptionalExtension, params};

/// A lease someone holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    pub owner: String,
    pub lease_until: i64,
}

impl Store {
    /// Claims a chat for `owner`: succeeds when nobody holds it, `owner` already does, its
    /// lease ran out, or the holder is `dead_owner` (a process known to be gone).
    pub fn claim_session(
        &self,
        session_id: i64,
        owner: &str,
        lease_ms: i64,
        dead_owner: Option<&str>,
    ) -> Result<bool, StoreError> {
        let now = now_ms();
        let changed = self.conn().execute(
            "INSERT INTO session_leases (session_id, owner, lease_until) VALUES (?1, ?2, ?3)
             ON CONFLICT(session_id) DO UPDATE SET owner = excluded.owner,
                                                   lease_until = excluded.lease_until
             WHERE session_leases.owner = excluded.owner
                OR session_leases.lease_until < ?4
                OR session_leases.owner = ?5",
            params![session_id, owner, now + lease_ms, now, dead_owner],
        )?;
        Ok(changed == 1)
    }

    /// Who holds a chat, if anyone's lease is still running.
    pub fn session_holder(&self, session_id: i64) -> Result<Option<Holder>, StoreError> {
        Ok(self
            .conn()
            .query_row(
                "SELECT owner, lease_until FROM session_leases
                 WHERE session_id = ?1 AND lease_until >= ?2",
                params![session_id, now_ms()],
                |r| {
                    Ok(Holder {
                        owner: r.get(0)?,
                        lease_until: r.get(1)?,
                    })
                },
            )
            .optional()?)
    }

    /// Extends `owner`'s lease on a chat. False if it no longer holds it.
    pub fn renew_session(
        &self,
        session_id: i64,
        owner: &str,
        lease_ms: i64,
    ) -> Result<bool, StoreError> {
        let changed = self.conn().execute(
            "UPDATE session_leases SET lease_until = ?3 WHERE session_id = ?1 AND owner = ?2",
            params![session_id, owner, now_ms() + lease_ms],
        )?;
        Ok(changed == 1)
    }

    pub fn release_session(&self, session_id: i64, owner: &str) -> Result<(), StoreError> {
        self.conn().execute(
            "DELETE FROM session_leases WHERE session_id = ?1 AND owner = ?2",
            params![session_id, owner],
        )?;
        Ok(())
    }

    /// Claims a running task for `owner` (same rules as `claim_session`).
    pub fn claim_task(
        &self,
        task_id: i64,
        owner: &str,
        lease_ms: i64,
        dead_owner: Option<&str>,
    ) -> Result<bool, StoreError> {
        let now = now_ms();
        let changed = self.conn().execute(
            "UPDATE tasks SET owner = ?2, lease_until = ?3
             WHERE id = ?1 AND status = 'running'
               AND (owner IS NULL OR owner = ?2 OR lease_until < ?4 OR owner = ?5)",
            params![task_id, owner, now + lease_ms, now, dead_owner],
        )?;
        Ok(changed == 1)
    }

    /// Who holds a running task, if anyone's lease is still running.
    pub fn task_holder(&self, task_id: i64) -> Result<Option<Holder>, StoreError> {
        Ok(self
            .conn()
            .query_row(
                "SELECT owner, lease_until FROM tasks
                 WHERE id = ?1 AND owner IS NOT NULL AND lease_until >= ?2",
                params![task_id, now_ms()],
                |r| {
                    Ok(Holder {
                        owner: r.get(0)?,
                        lease_until: r.get(1)?,
                    })
                },
            )
            .optional()?)
    }

    pub fn renew_task(&self, task_id: i64, owner: &str, lease_ms: i64) -> Result<bool, StoreError> {
        let changed = self.conn().execute(
            "UPDATE tasks SET lease_until = ?3 WHERE id = ?1 AND owner = ?2 AND status = 'running'",
            params![task_id, owner, now_ms() + lease_ms],
        )?;
        Ok(changed == 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NewSession;

    #[test]
    fn one_holder_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("skald.db");
        let (a, b) = (Store::open(&path).unwrap(), Store::open(&path).unwrap());
        let s = a.create_session(&NewSession::default()).unwrap();
        assert!(a.claim_session(s.id, "a", 60_000, None).unwrap());
        assert!(!b.claim_session(s.id, "b", 60_000, None).unwrap());
        assert_eq!(b.session_holder(s.id).unwrap().unwrap().owner, "a");
        assert!(
            a.claim_session(s.id, "a", 60_000, None).unwrap(),
            "a holder claims again"
        );
        // A holder known to be dead is taken over at once.
        assert!(b.claim_session(s.id, "b", 60_000, Some("a")).unwrap());
        assert!(!a.renew_session(s.id, "a", 60_000).unwrap());
        assert!(b.renew_session(s.id, "b", 60_000).unwrap());
        b.release_session(s.id, "b").unwrap();
        assert!(a.session_holder(s.id).unwrap().is_none());
        // An expired lease is free.
        assert!(a.claim_session(s.id, "a", -1, None).unwrap());
        assert!(b.claim_session(s.id, "b", 60_000, None).unwrap());
    }
}
