//! The board of agents (docs/board.md): every chat and background run, across folders,
//! with what it is doing, what it used and what it changed — one screen in the app and
//! `skald agents list`.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// What an agent is doing, as the board says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum AgentState {
    /// Its turn waits for a free place: as many agents as Settings allows already run.
    Queued,
    /// A turn runs.
    Working,
    /// An approval or a question of it waits in the Inbox.
    Waiting,
    /// Its last turn gave an answer.
    Done,
    /// Its last turn failed (the model could not be reached, or the round limit).
    Failed,
    /// Its last turn was stopped by a person.
    Stopped,
    /// The process that ran its turn ended during it (a crash, a kill); reopening the app
    /// picks it up.
    Interrupted,
    /// No turn has run yet.
    Idle,
}

impl AgentState {
    pub fn as_str(self) -> &'static str {
        match self {
            AgentState::Queued => "queued",
            AgentState::Working => "working",
            AgentState::Waiting => "waiting",
            AgentState::Done => "done",
            AgentState::Failed => "failed",
            AgentState::Stopped => "stopped",
            AgentState::Interrupted => "interrupted",
            AgentState::Idle => "idle",
        }
    }
}

/// The files an agent changed, added up: for a chat in a worktree, its worktree against
/// how it started; otherwise what its checkpoints recorded, from before its first change
/// to after its last.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ChangeTally {
    pub files: usize,
    pub added: usize,
    pub removed: usize,
}

/// One agent on the board.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct BoardAgent {
    pub session_id: i64,
    pub title: String,
    pub agent_id: String,
    pub kind: crate::records::SessionKind,
    pub state: AgentState,
    /// The folder it works in (for a worktree's chat, the worktree's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub folder: Option<String>,
    /// Its worktree's name, and the person's folder that worktree copies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub worktree: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub source: Option<String>,
    /// The chat's own model, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub model: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
    /// When its latest turn started (Unix ms), if one ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub turn_started_at: Option<i64>,
    /// Milliseconds it has worked: its finished turns, and the running one so far.
    #[ts(type = "number")]
    pub active_ms: u64,
    #[ts(type = "number")]
    pub input_tokens: u64,
    #[ts(type = "number")]
    pub output_tokens: u64,
    /// US dollars, of the calls whose price is known.
    pub cost_usd: f64,
    /// Calls whose model had no known price.
    #[ts(type = "number")]
    pub unpriced: u64,
    pub changes: ChangeTally,
    /// Approvals and questions waiting in the Inbox.
    #[ts(type = "number")]
    pub waiting: u64,
    /// The start of its latest answer (at most 300 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub last_message: Option<String>,
}
