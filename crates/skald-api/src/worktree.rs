//! An agent's own copy of a folder, as the store keeps it and the UI and CLI list it
//! (docs/worktrees.md).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct WorktreeInfo {
    pub id: i64,
    pub name: String,
    /// The chat working in it (none once that chat is deleted).
    pub session_id: Option<i64>,
    /// The person's folder it copies.
    pub source: String,
    /// Its own folder, in Skald's data directory.
    pub root: String,
    /// Where in it the agent works.
    pub working_dir: String,
    pub kind: WorktreeKind,
    /// For a git worktree: the repository's folder, its branch, the commit it started at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub repo: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub branch: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub base_commit: Option<String>,
    pub status: WorktreeStatus,
    pub created_at: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum WorktreeKind {
    /// A git worktree on a branch of its own.
    Git,
    /// A copy of the folder's files.
    Copy,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum WorktreeStatus {
    Active,
    Discarded,
}

impl WorktreeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            WorktreeKind::Git => "git",
            WorktreeKind::Copy => "copy",
        }
    }
}

impl WorktreeStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            WorktreeStatus::Active => "active",
            WorktreeStatus::Discarded => "discarded",
        }
    }
}
