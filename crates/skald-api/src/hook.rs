//! Hooks (docs/hooks.md): the person's and an approved project's commands that run at
//! points of a turn, in the schema Claude Code defined. What a chat shows of each run.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// How one hook's run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum HookOutcome {
    /// Exit 0: went on (with a decision or context, if it gave one).
    Ok,
    /// It blocked: exit 2, or a `block`/`deny` decision. The reason reached the model (or,
    /// for a prompt, the person).
    Blocked,
    /// Any other exit, an unreadable answer or a command that could not start: shown,
    /// and the turn goes on.
    Error,
    /// It ran past its timeout and was killed; the turn goes on.
    Timeout,
}

/// One hook's run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct HookRun {
    /// The event: `PreToolUse`, `PostToolUse`, `UserPromptSubmit`, `Stop`, `SubagentStop`,
    /// `PreCompact`, `SessionStart`, `Notification`.
    pub event: String,
    pub command: String,
    /// The call it ran for (PreToolUse, PostToolUse, Notification of an approval).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tool_call_id: Option<String>,
    pub source: crate::context::ContextSource,
    pub outcome: HookOutcome,
    /// The reason, decision or error it gave, cut at 2,000 characters ("" when none).
    pub message: String,
    #[ts(type = "number")]
    pub duration_ms: u64,
}

/// A project's hooks file and whether its current content may run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ProjectHooks {
    pub path: String,
    /// SHA-256 of every file under `.skald/` (paths and contents), as approved with
    /// `approve_hooks`.
    pub sha256: String,
    pub approved: bool,
    /// How many hooks it configures.
    pub hooks: usize,
    /// Every file the approval covers: the whole `.skald/` folder (a script a hook runs is
    /// part of what runs), relative to the project's root.
    #[serde(default)]
    pub files: Vec<String>,
}
