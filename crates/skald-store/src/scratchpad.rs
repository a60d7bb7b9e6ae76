//! The session scratchpad: a key/value board shared by every agent of a session.

use crate::{Store, StoreError, now_ms};
use rusqlite::params;

impl Store {
    /// Sets `key`; an empty `value` removes it.
    pub fn set_scratchpad(
        &self,
        session_id: i64,
        key: &str,
        value: &str,
    ) -> Result<(), StoreError> {
        let conn = self.conn();
        if value.is_empty() {
            conn.execute(
                "DELETE FROM session_scratchpad WHERE session_id = ?1 AND key = ?2",
                params![session_id, key],
            )?;
        } else {
            conn.execute(
                "INSERT INTO session_scratchpad (session_id, key, value, updated_at)
                 VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT(session_id, key) DO UPDATE SET value = excluded.value,
                                                          updated_at = excluded.updated_at",
                params![session_id, key, value, now_ms()],
            )?;
        }
        Ok(())
    }

    /// The board, sorted by key.
    pub fn scratchpad(&self, session_id: i64) -> Result<Vec<(String, String)>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(
            "SELECT key, value FROM session_scratchpad WHERE session_id = ?1 ORDER BY key",
        )?;
        let rows = stmt
            .query_map([session_id], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NewSession;

    #[test]
    fn set_update_and_remove() {
        let store = Store::open_in_memory().unwrap();
        let s = store.create_session(&NewSession::default()).unwrap();
        store.set_scratchpad(s.id, "plan", "step 1").unwrap();
        store.set_scratchpad(s.id, "owner", "researcher").unwrap();
        store.set_scratchpad(s.id, "plan", "step 2").unwrap();
        assert_eq!(
            store.scratchpad(s.id).unwrap(),
            [
                ("owner".to_string(), "researcher".to_string()),
                ("plan".to_string(), "step 2".to_string())
            ]
        );
        store.set_scratchpad(s.id, "owner", "").unwrap();
        assert_eq!(store.scratchpad(s.id).unwrap().len(), 1);
        assert!(store.scratchpad(999).unwrap().is_empty());
    }
}
