//! What a sandboxed command may do (docs/sandbox.md), as plain data: Skald's approval gate
//! writes it, the `skald-sandbox` helper confines a command to it, and the vocabulary
//! (`skald-api`) carries it in a tool call's scope. A crate of its own so that naming it
//! pulls in nothing of the sandbox's (landlock, seccomp, nix).

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// What a sandboxed command may do. Paths are absolute and canonical (symlinks resolved):
/// the helper compares nothing, it hands them to the kernel.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Policy {
    /// Folders the command may create, change and delete files in (and everything under
    /// them). Everything else is read-only.
    pub writable: Vec<PathBuf>,
    /// Files and folders the command may not read: each is covered by an empty, read-only
    /// stand-in for the command's lifetime (a folder looks empty, a file reads as nothing).
    pub masked: Vec<PathBuf>,
    /// Whether the command may open network sockets. Off, only local (Unix) sockets work.
    pub network: bool,
    /// Files and folders inside the writable folders that the command may read but not
    /// change, rename or remove: what runs later outside the sandbox (a repository's
    /// `.git/hooks` and `.git/config`, a project's `.skald`). Each is bound read-only over
    /// itself; one that does not exist is skipped.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_only: Vec<PathBuf>,
    /// Folders the command may change inside but not rename or remove (a repository's
    /// `.git`), so a read-only part of them stays where programs outside look for it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pinned: Vec<PathBuf>,
}
