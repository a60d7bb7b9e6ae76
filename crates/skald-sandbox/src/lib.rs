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

/// What a command may do: plain data in a crate of its own, so that the vocabulary
/// (`skald-api`) can name it without depending on the sandbox.
pub use skald_policy::Policy;

/// The variables a sandboxed command finds its private temporary folder under.
pub const TMP_VARS: [&str; 4] = ["TMPDIR", "TMP", "TEMP", "TEMPDIR"];
