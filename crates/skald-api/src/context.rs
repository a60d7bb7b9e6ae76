//! What an agent was given besides its own prompt (docs/instructions.md): the projects'
//! and the user's AGENTS.md files, and the skills found beside them. A chat shows it in its
//! context view; `skald exec --json` prints it as the `context` event of each turn.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Where a file of instructions or a skill came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ContextSource {
    /// The person's own (`~/.config/skald/AGENTS.md`, `~/.agents/skills`).
    User,
    /// The project's: from its root (the git root, or the chat's folder) down to the
    /// chat's folder.
    Project,
}

/// One AGENTS.md, as it was given to the agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct InstructionFile {
    pub path: String,
    pub source: ContextSource,
    /// The file's size, and how much of it the agent was given.
    #[ts(type = "number")]
    pub bytes: u64,
    #[ts(type = "number")]
    pub included: u64,
    /// Why it was cut or left out, when it was ("" when given whole).
    pub note: String,
}

/// A skill found in a project's or the person's `.agents/skills`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ContextSkill {
    pub name: String,
    pub description: String,
    /// Its SKILL.md.
    pub path: String,
    pub source: ContextSource,
}

/// What a turn's agent was given besides its own prompt.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct TurnContext {
    /// The AGENTS.md files, in the order given: the person's, then the project's from its
    /// root down to the chat's folder (the nearest last, so it weighs most).
    pub instructions: Vec<InstructionFile>,
    pub skills: Vec<ContextSkill>,
    /// Where the project was taken to start.
    pub project_root: String,
    /// The project's `.skald/hooks.json`, when it has one: its hooks run only once the
    /// person approved this content (docs/hooks.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub project_hooks: Option<crate::hook::ProjectHooks>,
}
