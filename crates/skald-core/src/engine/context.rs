//! What a turn runs with: its configuration, the borrowed parts of the engine it runs
//! against (`TurnEnv`), its place among delegated agents (`Frame`), and how it asks for
//! approval. Defined with the engine so the turn loop, the tools and the background work
//! above it all read one definition.

use crate::approval::RunContext;
use crate::engine::registry::ToolRegistry;
use crate::models::ModelHealth;
use serde_json::Value;
use skald_api::events::Event;
use skald_llm::ToolChoice;
use skald_store::Store;

/// What happens to a call the approval gate says needs a person's yes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalMode {
    /// Reject it; the model is told and the turn goes on (headless default).
    Never,
    /// Run it (headless, the user said so up front).
    All,
    /// Ask through the turn's `ask` callback (a terminal prompt); without one, reject.
    Ask,
    /// Ask in the chat and the Agent Inbox, and wait for the answer (interactive).
    Inbox,
}

/// A question to the person at the terminal: may this call run?
#[derive(Debug, Clone)]
pub struct AskRequest {
    pub tool: String,
    pub label: String,
    pub reason: String,
    pub arguments: Value,
}

/// Answers an `AskRequest`; true means yes.
pub type Ask<'a> =
    &'a (dyn Fn(AskRequest) -> futures::future::BoxFuture<'static, bool> + Send + Sync);

#[derive(Debug, Clone)]
pub struct TurnConfig {
    pub max_rounds: usize,
    /// Tokens the models' context holds; older turns are summarised near it.
    pub context_window: usize,
    pub approval: ApprovalMode,
    /// Permission group, agent, working directory and grants: what the gate decides with.
    pub run: RunContext,
    pub system_prompt: String,
    /// A background session (a task or a cron run): its root delegates with
    /// `execute_subtask` and may `notify`; no one is typing in it.
    pub background: bool,
    /// Whether the turn's first answer must be a tool call (`skald exec --tool-choice`);
    /// later rounds are always the model's choice, or it could never answer.
    pub first_tool_choice: ToolChoice,
    /// The AGENTS.md files and skills of the folder, as given in `system_prompt`
    /// (docs/instructions.md); a sub-agent is given them too.
    pub instructions: crate::instructions::Gathered,
    /// The hooks of the turn: the person's, and the project's once approved
    /// (docs/hooks.md).
    pub hooks: crate::hooks::Active,
    /// How hard the chat's model reasons, for a model that takes an effort (docs/models.md,
    /// "Reasoning effort"); its default when `None`.
    pub effort: Option<skald_llm::effort::Effort>,
    /// Percent of the window the context may fill before it is compacted; 0: never unasked.
    pub compact_at: u8,
}

/// What a person sends: its text, and the images pasted or attached with it (kept in the
/// store already, `crate::images::keep`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Prompt {
    pub text: String,
    pub images: Vec<skald_store::ImageRef>,
}

impl From<&str> for Prompt {
    fn from(text: &str) -> Prompt {
        Prompt {
            text: text.to_string(),
            images: Vec::new(),
        }
    }
}

impl From<String> for Prompt {
    fn from(text: String) -> Prompt {
        Prompt {
            text,
            images: Vec::new(),
        }
    }
}

/// Where events go. Called synchronously, in order.
pub type Emit<'a> = &'a (dyn Fn(Event) + Send + Sync);

#[derive(Debug, thiserror::Error)]
pub enum TurnError {
    #[error("{0}")]
    Store(#[from] skald_store::StoreError),
}

/// Which agent frame of the session a turn runs in: the root agent, or a task agent a
/// delegation started (its messages and calls are stored under its own stack row).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Frame {
    pub stack_id: Option<i64>,
    pub depth: usize,
}

/// Delegation goes no deeper than this (docs/tasks.md, "Delegating to a task agent").
pub const MAX_DEPTH: usize = 5;

/// What a turn runs against.
#[derive(Clone, Copy)]
pub struct TurnEnv<'a> {
    pub store: &'a Store,
    pub registry: &'a ToolRegistry,
    /// The chosen model first, then its fallbacks.
    /// Read at each model call: a provider the user configures applies from the next one.
    pub models: &'a crate::models::ModelList,
    pub health: &'a ModelHealth,
    pub cfg: &'a TurnConfig,
    /// Messages the user sent while the turn ran, taken at the start of each round.
    pub queued: Option<&'a (dyn Fn() -> Vec<Prompt> + Send + Sync)>,
    /// How `ApprovalMode::Ask` asks.
    pub ask: Option<Ask<'a>>,
    /// Where `ApprovalMode::Inbox` asks.
    pub inbox: Option<&'a crate::inbox::Inbox>,
    pub frame: Frame,
    /// The agents a turn may delegate to; without it, no delegation is offered.
    pub library: Option<&'a crate::agents::Library>,
    /// The MCP list shown in delegated agents' prompts.
    pub mcp_list: &'a str,
    /// The engine, for work that outlives the turn (background tasks, schedules,
    /// notifications); without it those are refused with a clear message.
    pub engine: Option<&'a std::sync::Arc<crate::engine::Engine>>,
}
