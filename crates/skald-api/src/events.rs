//! Events the engine emits while a turn runs: the one protocol every carrier speaks
//! (`skald exec --json` prints them as NDJSON; the UI and the desktop shell receive the
//! same JSON). Serialised as `{"type": "<snake_case name>", …fields}`.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

/// The version of the events' schema (docs/events.md): within it events and fields are
/// only added; removing, renaming or changing the meaning of one raises it.
pub const SCHEMA_VERSION: u32 = 1;

/// How a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum TurnOutcome {
    /// The model gave its answer.
    Final,
    /// Stopped by the user.
    Cancelled,
    /// The round limit was reached before an answer.
    Exhausted,
    /// The model could not be reached or kept failing.
    Failed,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// A turn started in a session.
    TurnRunning {
        session_id: i64,
    },
    /// The turn waits for a place: as many agents as `[agent] at_once` allows already
    /// run in this process (docs/board.md). `turn_running` follows when it starts; `done`
    /// (cancelled) when it is stopped first.
    TurnQueued {
        session_id: i64,
        /// Turns in line before it.
        #[ts(type = "number")]
        ahead: usize,
    },
    /// The user's message, as stored.
    UserMessage {
        session_id: i64,
        message_id: i64,
        text: String,
        /// The images shown with it (docs/images.md).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        #[ts(as = "Option<Vec<crate::images::ChatImage>>", optional)]
        images: Vec<crate::images::ChatImage>,
    },
    /// A piece of the answer's text.
    TokenDelta {
        text: String,
    },
    /// A piece of the model's visible reasoning.
    Thinking {
        text: String,
    },
    ToolStart {
        tool_call_id: String,
        name: String,
        arguments: Value,
        label_short: String,
        label_full: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        path: Option<String>,
    },
    ToolDone {
        tool_call_id: String,
        result: String,
        /// The images the tool showed the model (docs/images.md).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        #[ts(as = "Option<Vec<crate::images::ChatImage>>", optional)]
        images: Vec<crate::images::ChatImage>,
    },
    ToolError {
        tool_call_id: String,
        error: String,
    },
    ToolCancelled {
        tool_call_id: String,
    },
    ToolRejected {
        tool_call_id: String,
        reason: String,
    },
    /// A model call failed; `retrying` says whether the turn goes on.
    LlmFailed {
        message: String,
        retrying: bool,
    },
    /// A task agent started working on a delegated job.
    AgentStart {
        stack_id: i64,
        agent_id: String,
        depth: usize,
    },
    /// What a turn's model calls used and cost, just before its `done` (docs/models.md,
    /// "Cost"). Costs are US dollars at the prices known when the calls were made; the
    /// calls of models with no known price are counted in `unpriced` and not in the costs.
    TurnUsage {
        session_id: i64,
        requests: u64,
        input_tokens: u64,
        output_tokens: u64,
        cost_usd: f64,
        unpriced: u64,
        /// The chat's calls so far, this turn's included.
        chat_cost_usd: f64,
        /// Every call since midnight (local time), of any chat or task.
        today_cost_usd: f64,
    },
    /// The rate limits the provider stated with a model call's response (docs/models.md,
    /// "Cost and limits"), when it states any.
    RateLimits {
        session_id: i64,
        limits: crate::protocol::RateLimitInfo,
    },
    /// A task agent finished; its answer is the delegating call's result.
    AgentDone {
        stack_id: i64,
        agent_id: String,
        outcome: TurnOutcome,
    },
    /// A call waits for a person's approval (in the chat, and as an Inbox item).
    ApprovalRequired {
        tool_call_id: String,
        name: String,
        arguments: Value,
        label: String,
        reason: String,
        inbox_id: i64,
    },
    /// An agent asks the user a question (in the chat, and as an Inbox item).
    AgentQuestion {
        tool_call_id: String,
        inbox_id: i64,
        question: String,
        suggested_answers: Vec<String>,
    },
    /// Something now waits in the Agent Inbox.
    InboxRequested {
        item: crate::inbox::InboxEntry,
    },
    /// An Inbox item was answered (or its wait stopped).
    InboxResolved {
        id: i64,
        session_id: i64,
        status: crate::records::InboxStatus,
    },
    /// Older turns are being summarised, before it happens (docs/agent-loop.md, "Long
    /// conversations"): the messages up to `up_to_message_id` will be folded into a
    /// summary; `tokens` is the context's estimate over the model's `window`.
    CompactionStarted {
        session_id: i64,
        up_to_message_id: i64,
        tokens: u64,
        window: u64,
    },
    /// Older turns were summarised to keep the context within the model's window (they
    /// stay in the store).
    ContextCompacted {
        session_id: i64,
        up_to_message_id: i64,
    },
    /// The next fallback model is tried.
    ModelFallback {
        from: String,
        to: String,
        reason: String,
    },
    /// Progress of a running tool call (an MCP server's progress notification).
    ToolProgress {
        tool_call_id: String,
        progress: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        total: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        message: Option<String>,
    },
    /// An MCP server's status changed: connecting, ready, failed (with the error and the
    /// tail of its log) or disabled.
    McpStatus {
        server: String,
        status: crate::records::McpStatus,
    },
    /// A file should be shown in the user's viewer (a generated image, say).
    OpenFile {
        path: String,
    },
    /// A file someone is viewing changed on disk (for LaTeX, any input of its last build):
    /// the viewer reloads it.
    FileChanged {
        path: String,
    },
    /// How much of the prompt a local model has read before it answers, in tokens: sent
    /// while a long prompt is read (a new chat's first, before its state is saved).
    PromptProgress {
        read: u64,
        total: u64,
    },
    /// How far a local model's download is (`pull_model`), in bytes.
    ModelPull {
        name: String,
        done: u64,
        total: u64,
    },
    /// How far preparing a local model for chats is (`pull_model` after the download, and
    /// the default model at start or when it changes): its reading of a new chat's
    /// prompt, in tokens. The last one of a preparation has `read == total`.
    ModelPrepare {
        name: String,
        read: u64,
        total: u64,
    },
    /// A LaTeX build of `path` (as `latex_build` named it) reached `stage`.
    LatexProgress {
        path: String,
        stage: crate::view::LatexStage,
    },
    /// How far building the offline TeX bundle is (`build_tex_bundle`), in files.
    TexBundle {
        done: u64,
        total: u64,
    },
    /// A background task started or ended (sent to the chat that started it).
    TaskUpdate {
        task_id: i64,
        /// The background session the task works in.
        session_id: Option<i64>,
        title: String,
        agent_id: String,
        status: crate::records::TaskStatus,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        result: Option<String>,
    },
    /// A background process of the chat (`execute_cmd` with `background: true`) started
    /// or ended.
    ProcessUpdate {
        process: crate::processes::ProcessInfo,
    },
    /// A step changed the chat's folder (or could not be checkpointed): sent after the
    /// tool call it brackets ends, and after a restore.
    Checkpoint {
        checkpoint: crate::checkpoint::CheckpointInfo,
    },
    /// What the turn's agent was given besides its own prompt: AGENTS.md files and skills
    /// (docs/instructions.md). Sent as a turn starts.
    Context {
        session_id: i64,
        context: crate::context::TurnContext,
    },
    /// A hook ran (docs/hooks.md).
    Hook {
        session_id: i64,
        hook: crate::hook::HookRun,
    },
    /// Something went wrong outside a tool.
    Error {
        message: String,
    },
    /// The turn ended. `text` is the final answer (empty unless `outcome` is final).
    Done {
        session_id: i64,
        outcome: TurnOutcome,
        text: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialises_with_a_snake_case_type_tag() {
        let e = Event::Done {
            session_id: 3,
            outcome: TurnOutcome::Final,
            text: "ok".into(),
        };
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            serde_json::json!({"type": "done", "session_id": 3, "outcome": "final", "text": "ok"})
        );
        let e = Event::ToolStart {
            tool_call_id: "c".into(),
            name: "read_file".into(),
            arguments: serde_json::json!({}),
            label_short: "read_file".into(),
            label_full: "read_file".into(),
            path: None,
        };
        let v = serde_json::to_value(&e).unwrap();
        assert_eq!(v["type"], "tool_start");
        assert!(v.get("path").is_none());
    }
}
