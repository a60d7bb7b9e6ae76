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
    /// Its folder as it started (a checkpoint), what a review compares with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub base_snapshot: Option<String>,
    pub status: WorktreeStatus,
    pub created_at: i64,
    /// The best-of-N trial it is one answer of (docs/worktrees.md, "Best of N"): the
    /// worktrees of one trial are shown side by side.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub trial: Option<String>,
    /// When its chat last worked in it (or it was made, whichever is later): what "old"
    /// is measured from (`[worktrees] clean_after_days`). Filled in when listed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub last_used_at: Option<i64>,
    /// Whether a chat works in it in a live process now (any process): never offered for
    /// cleaning up, nor discarded. Filled in when listed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[ts(as = "Option<bool>", optional)]
    pub in_use: bool,
    /// The space its folder takes on disk, in bytes. Filled in when listed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub disk_bytes: Option<u64>,
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

/// One file a worktree's agent changed, as a review shows it (docs/worktrees.md, "Review
/// and apply").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct FileReview {
    /// Relative to the folder, `/`-separated.
    pub path: String,
    pub status: crate::checkpoint::ChangeStatus,
    /// A binary file is taken or left whole: it has no hunks.
    pub binary: bool,
    pub hunks: Vec<HunkInfo>,
}

/// One run of changed lines of a file, chosen or not on its own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct HunkInfo {
    /// Its number in the file's list, as `apply` takes it.
    pub index: usize,
    /// The first line it removes in the old file (1-based; for a pure insertion, the line
    /// after which it goes) and its first line in the new one.
    pub old_start: usize,
    pub new_start: usize,
    pub removed: Vec<String>,
    pub added: Vec<String>,
}

/// What applying a worktree's changes did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ApplyReport {
    /// Files written into the person's folder (or removed from it).
    pub written: Vec<String>,
    /// Files that already were what applying would make them.
    pub unchanged: Vec<String>,
    /// Files changed on both sides in the same place (or binary files changed on both):
    /// when there is any, nothing is written.
    pub conflicts: Vec<ConflictInfo>,
    /// The checkpoint of the apply, to undo it (`skald checkpoints restore ID`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub checkpoint_id: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ConflictInfo {
    pub path: String,
    /// The file with git's conflict markers, when both sides are text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub markers: Option<String>,
}

/// The hunks of one file to apply: all of them (none given), or those numbered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct FileChoice {
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub hunks: Option<Vec<usize>>,
}

/// How merging a git worktree's branch into the person's branch went (docs/worktrees.md,
/// "Commit and merge").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct MergeReport {
    /// The person's branch merged into.
    pub into: String,
    pub outcome: MergeOutcome,
    /// The commit the person's branch now points at (none when up to date or clashing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub commit: Option<String>,
    /// Files changed on both sides; when there is any, nothing was written.
    #[serde(default)]
    pub conflicts: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum MergeOutcome {
    /// The person's branch already had all of it.
    UpToDate,
    /// The person's branch had not moved and now points at the worktree's last commit.
    FastForward,
    /// A merge commit joins both.
    MergeCommit,
    /// Both changed the same lines; nothing was written.
    Conflicts,
}
