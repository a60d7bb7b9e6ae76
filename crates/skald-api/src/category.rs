//! Access-control grouping of tools (docs/tools.md, "Catalogue").

use serde::{Deserialize, Serialize};
use std::fmt;

/// Every tool declares one category; the approval gate and audit group by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum ToolCategory {
    /// File read/write tools (read_file, write_file, edit_file, …).
    Filesystem,
    /// execute_cmd, restart.
    Shell,
    /// execute_task / execute_subtask.
    Subagent,
    /// list_items, image_generate_providers_list, read_notification.
    Introspection,
    /// Tools that change Skald's own configuration; lazily activated as the `config` group.
    Config,
    /// Tools that act on the session itself: the scratchpad, the todo list, questions to
    /// the user, notifications, the file viewer.
    Session,
    /// Tools that reach the web: web_fetch, web_search (docs/web.md).
    Web,
}

impl ToolCategory {
    pub const ALL: [ToolCategory; 7] = [
        ToolCategory::Filesystem,
        ToolCategory::Shell,
        ToolCategory::Subagent,
        ToolCategory::Introspection,
        ToolCategory::Config,
        ToolCategory::Session,
        ToolCategory::Web,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ToolCategory::Filesystem => "filesystem",
            ToolCategory::Shell => "shell",
            ToolCategory::Subagent => "subagent",
            ToolCategory::Introspection => "introspection",
            ToolCategory::Config => "config",
            ToolCategory::Session => "session",
            ToolCategory::Web => "web",
        }
    }
}

impl fmt::Display for ToolCategory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialises_as_snake_case_and_matches_as_str() {
        for c in ToolCategory::ALL {
            let json = serde_json::to_string(&c).unwrap();
            assert_eq!(json, format!("\"{}\"", c.as_str()));
            let back: ToolCategory = serde_json::from_str(&json).unwrap();
            assert_eq!(back, c);
        }
    }
}
