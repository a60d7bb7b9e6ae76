//! ToolDiscovery (docs/approval.md, "Known tools"): every tool ever offered to a model is
//! remembered in `known_tools`, so rules can be written for tools that are not in the
//! registry — MCP and plugin tools — as soon as they have been seen once. An in-memory set
//! keeps the store write to the first sighting of each name in this process.

use skald_store::Store;
use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

fn seen() -> &'static Mutex<HashSet<String>> {
    static SEEN: OnceLock<Mutex<HashSet<String>>> = OnceLock::new();
    SEEN.get_or_init(|| Mutex::new(HashSet::new()))
}

/// Records the names offered in a round. Only names new to this process touch the store;
/// a failed write is logged and retried at the next sighting, never fails the turn.
pub fn observe<'a>(store: &Store, names: impl IntoIterator<Item = (&'a str, &'a str)>) {
    let fresh: Vec<(&str, &str)> = {
        let set = seen().lock().unwrap_or_else(|p| p.into_inner());
        names
            .into_iter()
            .filter(|(n, _)| !set.contains(*n))
            .collect()
    };
    for (name, source) in fresh {
        match store.upsert_known_tool(name, source) {
            Ok(()) => {
                seen()
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(name.to_string());
            }
            Err(e) => tracing::warn!(tool = name, %e, "cannot record a known tool"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_recorded_once() {
        let store = Store::open_in_memory().unwrap();
        observe(&store, [("discovery_test_tool", "mcp")]);
        let first = store.list_known_tools().unwrap();
        assert_eq!(first.len(), 1);
        // The second sighting does not write (the in-memory set answers).
        observe(&store, [("discovery_test_tool", "mcp")]);
        assert_eq!(store.list_known_tools().unwrap(), first);
    }
}
