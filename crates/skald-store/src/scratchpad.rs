//! The session scratchpad, a key/value board shared by every agent of a session, and the
//! tool groups its agents activated.

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

impl Store {
    /// Records that an agent activated a tool group (an MCP server's name, or `config`):
    /// the root agent's grants belong to its session, a sub-agent's to its stack frame.
    pub fn grant_group(
        &self,
        session_id: i64,
        stack_id: Option<i64>,
        name: &str,
    ) -> Result<(), StoreError> {
        let conn = self.conn();
        match stack_id {
            None => conn.execute(
                "INSERT OR IGNORE INTO session_mcp_grants (session_id, name, granted_at)
                 VALUES (?1, ?2, ?3)",
                params![session_id, name, now_ms()],
            )?,
            Some(stack) => conn.execute(
                "INSERT OR IGNORE INTO stack_mcp_grants (stack_id, name, granted_at)
                 VALUES (?1, ?2, ?3)",
                params![stack, name, now_ms()],
            )?,
        };
        Ok(())
    }

    /// The groups an agent frame activated, sorted.
    pub fn granted_groups(
        &self,
        session_id: i64,
        stack_id: Option<i64>,
    ) -> Result<Vec<String>, StoreError> {
        let conn = self.conn();
        let rows = match stack_id {
            None => {
                let mut stmt = conn.prepare(
                    "SELECT name FROM session_mcp_grants WHERE session_id = ?1 ORDER BY name",
                )?;
                stmt.query_map([session_id], |r| r.get(0))?
                    .collect::<Result<Vec<String>, _>>()?
            }
            Some(stack) => {
                let mut stmt = conn.prepare(
                    "SELECT name FROM stack_mcp_grants WHERE stack_id = ?1 ORDER BY name",
                )?;
                stmt.query_map([stack], |r| r.get(0))?
                    .collect::<Result<Vec<String>, _>>()?
            }
        };
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
