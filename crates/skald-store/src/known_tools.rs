//! Every tool name ever offered to a model, so that any of them can be gated.

use crate::{Store, StoreError, now_ms};
use rusqlite::params;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KnownTool {
    pub name: String,
    /// builtin | synthetic | mcp | plugin
    pub source: String,
    pub first_seen: i64,
    pub last_seen: i64,
}

impl Store {
    /// Records that `name` was offered; keeps its first sighting.
    pub fn upsert_known_tool(&self, name: &str, source: &str) -> Result<(), StoreError> {
        self.conn().execute(
            "INSERT INTO known_tools (name, source, first_seen, last_seen) VALUES (?1, ?2, ?3, ?3)
             ON CONFLICT(name) DO UPDATE SET source = excluded.source,
                                             last_seen = excluded.last_seen",
            params![name, source, now_ms()],
        )?;
        Ok(())
    }

    /// All known tools, sorted by name.
    pub fn list_known_tools(&self) -> Result<Vec<KnownTool>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare("SELECT name, source, first_seen, last_seen FROM known_tools ORDER BY name")?;
        let rows = stmt
            .query_map([], |r| {
                Ok(KnownTool {
                    name: r.get(0)?,
                    source: r.get(1)?,
                    first_seen: r.get(2)?,
                    last_seen: r.get(3)?,
                })
            })?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upsert_keeps_first_sighting_and_sorts() {
        let store = Store::open_in_memory().unwrap();
        store.upsert_known_tool("mcp__time__now", "mcp").unwrap();
        store.upsert_known_tool("read_file", "builtin").unwrap();
        let first = store.list_known_tools().unwrap();
        store.upsert_known_tool("read_file", "builtin").unwrap();
        let again = store.list_known_tools().unwrap();
        let names: Vec<&str> = again.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["mcp__time__now", "read_file"]);
        assert_eq!(again[1].first_seen, first[1].first_seen);
        assert!(again[1].last_seen >= first[1].last_seen);
    }
}
