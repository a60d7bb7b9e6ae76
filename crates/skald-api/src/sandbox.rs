//! How the commands an agent starts are confined (docs/sandbox.md): the mode a user picks,
//! what a chat shows about it, and what a tool call carries to `execute_cmd`.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use ts_rs::TS;

/// How much a command may do without a person's yes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// No sandbox: every command runs as the user and needs approval.
    Off,
    /// Commands may read (all but the hidden paths) and write only their private
    /// temporary folder.
    ReadOnly,
    /// Commands may also write the chat's folder and its write grants.
    #[default]
    WorkspaceWrite,
}

impl SandboxMode {
    pub const ALL: &'static [SandboxMode] = &[
        SandboxMode::Off,
        SandboxMode::ReadOnly,
        SandboxMode::WorkspaceWrite,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::Off => "off",
            SandboxMode::ReadOnly => "read-only",
            SandboxMode::WorkspaceWrite => "workspace-write",
        }
    }

    pub fn parse(s: &str) -> Option<SandboxMode> {
        SandboxMode::ALL.iter().copied().find(|m| m.as_str() == s)
    }
}

impl std::fmt::Display for SandboxMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a chat shows about its commands' sandbox (the header, the approval card).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct SandboxInfo {
    pub mode: SandboxMode,
    /// Whether sandboxed commands may use the network.
    pub network: bool,
    /// Whether the sandbox works on this machine; when not, `note` says why and every
    /// command asks.
    pub available: bool,
    /// Whether commands ask even when they would run sandboxed (`[sandbox] ask = "always"`).
    pub always_ask: bool,
    /// One line for a person: how commands run here.
    pub note: String,
}

/// How a command started by this call is confined: what `execute_cmd` reads from the
/// call's `ToolScope`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum CommandSandbox {
    /// Mode `off`: commands run as the user.
    #[default]
    Off,
    /// A mode is set but this machine cannot confine a command: the command runs as the
    /// user (it was approved as one) and its result says why.
    Unavailable { mode: SandboxMode, why: String },
    /// The command runs through `helper`, confined to `policy`.
    On {
        mode: SandboxMode,
        helper: PathBuf,
        policy: skald_policy::Policy,
    },
}
