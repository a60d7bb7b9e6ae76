//! Checkpoints of a chat's folder, so that every change an agent makes can be undone
//! (docs/checkpoints.md).
//!
//! Each folder has a *shadow repository*: a bare git repository in Skald's data directory,
//! never in the folder and never touching the user's own `.git`. A snapshot records the
//! folder's files (what the walk of every tool sees: `.gitignore` honoured, `.git`,
//! `node_modules`, `target` and `secrets` left out, files over a size limit skipped with a
//! note) as a commit on a *line*, one per session. The shadow repository keeps its own
//! index, whose stat data makes a snapshot of an unchanged folder a stat pass: only files
//! whose size, modification time or inode changed are read and hashed again.
//!
//! A restore first snapshots the folder as it is (so the restore itself can be undone),
//! then writes a journal, changes the files one atomic rename at a time, snapshots the
//! result and removes the journal. Opening the shadow repository finishes a restore that a
//! crash interrupted, so a folder is seen wholly before or wholly after a restore.
//!
//! libgit2 (the `git2` crate) is the object store; this crate is the one module of ours
//! that names it.

mod bulk;
mod diff;
mod live;
mod restore;
mod shadow;
#[cfg(target_os = "linux")]
mod watch;
mod write;

pub use live::Live;
pub use restore::Restored;
pub use shadow::{Shadow, Snapshot};
pub use skald_api::checkpoint::{ChangeStatus, FileChange, FileChanges};
pub use write::FileWrite;

use std::path::PathBuf;

/// How much a folder may hold and still be checkpointed on every call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Files in the folder (after what the walk leaves out).
    pub max_files: usize,
    /// Their total size in bytes.
    pub max_bytes: u64,
    /// A larger file is not recorded; the checkpoint names it.
    pub max_file_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_files: 50_000,
            max_bytes: 1 << 30,
            max_file_bytes: 10 << 20,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    #[error(
        "the folder is too large to checkpoint: more than {limit} {what} (the limit is \
         `[checkpoints] {setting}` in config.toml)"
    )]
    TooLarge {
        limit: String,
        what: &'static str,
        setting: &'static str,
    },
    #[error("the folder {0} cannot be checkpointed: it is not a directory")]
    NotAFolder(PathBuf),
    #[error("another Skald process has held the checkpoints of {0} for over 10 seconds")]
    Busy(PathBuf),
    #[error("there is no checkpoint {0} in this folder's history")]
    Unknown(String),
    #[error("cannot {action} {path}: {reason}")]
    Io {
        action: &'static str,
        path: PathBuf,
        reason: String,
    },
    #[error(
        "{0} changed since its new content was worked out; nothing was written (look again \
         and retry)"
    )]
    Moved(String),
    #[error("the checkpoint store failed: {0}")]
    Git(#[from] git2::Error),
}

impl CheckpointError {
    pub(crate) fn io(action: &'static str, path: impl Into<PathBuf>, e: &std::io::Error) -> Self {
        CheckpointError::Io {
            action,
            path: path.into(),
            reason: skald_base::io_reason(e),
        }
    }
}

pub type Result<T> = std::result::Result<T, CheckpointError>;
