//! Checkpoints of a chat's folder (docs/checkpoints.md): what one tool call changed, and
//! the points a user can restore the folder to.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ChangeStatus {
    Added,
    Modified,
    Deleted,
}

/// One file's change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct FileChange {
    /// Relative to the chat's folder, `/`-separated.
    pub path: String,
    pub status: ChangeStatus,
    /// Lines added and removed (0 for a binary file, and past the first 500 files).
    pub added: usize,
    pub removed: usize,
    pub binary: bool,
}

/// The files one step changed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct FileChanges {
    /// At most 2,000, in path order.
    pub files: Vec<FileChange>,
    /// How many files changed in all.
    pub total: usize,
}

impl FileChanges {
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// "2 files changed: src/a.rs (+3 −1), notes.md (new)".
    pub fn summary(&self) -> String {
        if self.total == 0 {
            return "no files changed".to_string();
        }
        let shown: Vec<String> = self
            .files
            .iter()
            .take(5)
            .map(|f| match f.status {
                ChangeStatus::Added => format!("{} (new)", f.path),
                ChangeStatus::Deleted => format!("{} (deleted)", f.path),
                ChangeStatus::Modified if f.binary => format!("{} (binary)", f.path),
                ChangeStatus::Modified => format!("{} (+{} −{})", f.path, f.added, f.removed),
            })
            .collect();
        let more = self.total.saturating_sub(shown.len());
        format!(
            "{} {} changed: {}{}",
            self.total,
            if self.total == 1 { "file" } else { "files" },
            shown.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum CheckpointKind {
    /// Around one tool call: the folder before it and after it.
    Call,
    /// Around a restore: the folder before it (restoring there undoes it) and after it.
    Restore,
}

impl CheckpointKind {
    pub fn as_str(self) -> &'static str {
        match self {
            CheckpointKind::Call => "call",
            CheckpointKind::Restore => "restore",
        }
    }

    pub fn parse(s: &str) -> Option<CheckpointKind> {
        match s {
            "call" => Some(CheckpointKind::Call),
            "restore" => Some(CheckpointKind::Restore),
            _ => None,
        }
    }
}

/// A step that changed the folder, or could not be recorded: what the chat shows under a
/// tool call and `skald checkpoints list` prints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct CheckpointInfo {
    pub id: i64,
    pub session_id: i64,
    /// The call it brackets (for a restore, none).
    pub tool_call_id: Option<String>,
    pub kind: CheckpointKind,
    pub folder: String,
    /// The folder before and after the step, as commits of its shadow repository; none
    /// when no checkpoint could be taken (`note` says why).
    pub before: Option<String>,
    pub after: Option<String>,
    pub changes: FileChanges,
    /// What was left out or went wrong, for a person; "" when nothing.
    pub note: String,
    /// For a restore: the checkpoint whose "before" it went back to.
    pub restored_to: Option<i64>,
    /// Milliseconds since the epoch.
    pub created_at: i64,
}

impl CheckpointInfo {
    /// Whether "Restore to before this" can be offered.
    pub fn restorable(&self) -> bool {
        self.before.is_some()
    }
}
