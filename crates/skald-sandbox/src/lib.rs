//! The OS sandbox under the approval gate (docs/sandbox.md).
//!
//! Skald decides what a command may touch and writes it down as a [`Policy`]; the
//! `skald-sandbox` helper is started in the command's place, confines *itself* to that
//! policy and then execs the command, which inherits every restriction and can lift none.
//! The confinement happens in a process of its own because the user namespace it needs is
//! refused to a multi-threaded process (Skald runs Tokio), and because what happens between
//! fork and exec in Skald would need `unsafe`.
//!
//! This crate has no Tokio and no Skald dependency, so the helper stays small and starts
//! fast: every command pays for its start.

mod helper;
mod masks;
#[cfg(target_os = "linux")]
mod presence;
mod refusal;
mod tmp;

#[cfg(target_os = "linux")]
pub mod confine;
#[cfg(target_os = "linux")]
pub mod spawner;
#[cfg(target_os = "linux")]
pub mod zygote;

pub use helper::{
    Availability, ENV_HELPER, HELPER_NAME, PREFIX, SETUP_FAILED, availability, command_args,
    find_helper, probe,
};
pub use masks::plan_masks;
pub use refusal::{Refusal, explain};
pub use tmp::{PRIVATE_TMP, seen_in_private_tmp};

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The variables a sandboxed command finds its private temporary folder under.
pub const TMP_VARS: [&str; 4] = ["TMPDIR", "TMP", "TEMP", "TEMPDIR"];

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
