//! The protocol between the engine and a UI, defined once: the commands a UI sends, the
//! replies it gets and the events pushed to it. `skald serve` carries it over a WebSocket
//! and the desktop shell over Tauri IPC; the UI's TypeScript types are generated from
//! these (`ui/src/protocol.ts`, checked by a test so the two cannot drift).
//!
//! Wire form: the UI sends `{"id": 7, "command": {"cmd": "send_message", …}}`; the server
//! answers `{"type": "reply", "id": 7, "reply": {"cmd": "send_message", …}}` or
//! `{"type": "failure", "id": 7, "error": "…"}` and pushes
//! `{"type": "event", "session_id": 3, "event": {"type": "token_delta", …}}`. A reply is
//! tagged with its command's name, so the UI's transport types each call's result.

use crate::ToolCallStatus;
use crate::events::Event;
pub use crate::inbox::{
    ApprovalRequest, BypassSpec, ElicitationRequest, InboxAnswer, InboxEntry, InboxRequest,
    QuestionRequest, RuleDraft, WritePreview,
};
pub use crate::listings::{CronJobInfo, PluginInfo, RuleInfo, TaskInfo};
use crate::records::{McpStatus, MessageStatus, Role, SessionKind};
use crate::view::{Kind, Page, TexError, View};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

/// One call from the UI.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct Request {
    /// Chosen by the UI; the reply carries it back.
    pub id: u64,
    pub command: Command,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "cmd", rename_all = "snake_case")]
pub enum Command {
    /// Chats, newest first (background sessions are the Tasks screen's).
    ListSessions,
    CreateSession {
        #[serde(default)]
        #[ts(optional)]
        title: Option<String>,
        /// The folder the agent works in; the server's folder when absent.
        #[serde(default)]
        #[ts(optional)]
        working_dir: Option<String>,
        #[serde(default)]
        #[ts(optional)]
        agent_id: Option<String>,
        /// Work in a worktree of its own (docs/worktrees.md): named so, or after the folder
        /// when empty.
        #[serde(default)]
        #[ts(optional)]
        worktree: Option<String>,
    },
    /// Best of N (docs/worktrees.md): one prompt to 2–4 agents at once, each a new chat
    /// in a worktree of its own of one folder, with its own model (absent: the configured
    /// one); their worktrees share the trial named in the reply.
    BestOf {
        text: String,
        /// One per agent, 2 to 4: `provider/model`, or absent for the configured model.
        models: Vec<Option<String>>,
        /// The folder; the server's when absent.
        #[serde(default)]
        #[ts(optional)]
        working_dir: Option<String>,
        #[serde(default)]
        #[ts(optional)]
        title: Option<String>,
    },
    /// Every worktree not discarded, newest first.
    ListWorktrees,
    /// The board: every agent (chats and background runs) across folders, the most
    /// recently active first (docs/board.md).
    Board {
        /// At most this many [default 100].
        #[serde(default)]
        #[ts(optional)]
        limit: Option<u32>,
    },
    /// What a worktree's agent changed since it started, file by file and hunk by hunk.
    WorktreeDiff {
        name: String,
    },
    /// Brings a worktree's changes (all, or the files and hunks chosen) into the folder it
    /// copies, merged with what changed there meanwhile; with any clash nothing is
    /// written. Undone like a restore (`restore_checkpoint` of the report's checkpoint).
    ApplyWorktree {
        name: String,
        #[serde(default)]
        #[ts(optional)]
        files: Option<Vec<crate::worktree::FileChoice>>,
        /// The `snapshot` of the `worktree_diff` reviewed: refused if the worktree changed
        /// since (its hunks would be others).
        #[serde(default)]
        #[ts(optional)]
        snapshot: Option<String>,
    },
    /// Commits what a git worktree's agent changed, as a review shows it (its files and
    /// contents; never a skipped folder or a file too large to review), on its branch
    /// `skald/NAME` (a message, or one saying whose work it is).
    CommitWorktree {
        name: String,
        #[serde(default)]
        #[ts(optional)]
        message: Option<String>,
        /// The `snapshot` of the `worktree_diff` reviewed: what is committed, refused if
        /// the worktree changed since. Absent: the worktree as it is now.
        #[serde(default)]
        #[ts(optional)]
        snapshot: Option<String>,
    },
    /// Merges a git worktree's branch into the branch checked out in the person's
    /// repository; refused while the agent has work not committed, and with any clash
    /// nothing is written.
    MergeWorktree {
        name: String,
    },
    /// Removes a worktree: its folder, and for a git worktree its branch.
    DiscardWorktree {
        name: String,
    },
    /// What a chat changed in its folder, from before its first change to after its last,
    /// file by file and hunk by hunk (docs/worktrees.md, "A chat's own changes").
    ChatChanges {
        session_id: i64,
    },
    /// Takes back a chat's changes — all, or the files and hunks chosen — merged with what
    /// changed in the folder since; with any clash nothing is written. Undone like a
    /// restore (`restore_checkpoint` of the report's checkpoint).
    RevertChanges {
        session_id: i64,
        #[serde(default)]
        #[ts(optional)]
        files: Option<Vec<crate::worktree::FileChoice>>,
        /// The `snapshot` of the `chat_changes` reviewed: refused if the chat changed files
        /// since.
        #[serde(default)]
        #[ts(optional)]
        snapshot: Option<String>,
    },
    RenameSession {
        session_id: i64,
        title: String,
    },
    DeleteSession {
        session_id: i64,
    },
    /// A session's conversation: its last `limit` messages before `before` (a message id),
    /// and their tool calls.
    History {
        session_id: i64,
        #[serde(default)]
        #[ts(optional)]
        before: Option<i64>,
        #[serde(default)]
        #[ts(optional)]
        limit: Option<u32>,
    },
    /// Tokens the session's model calls used so far.
    Usage {
        session_id: i64,
    },
    /// How the session's commands are confined (the chat header shows it).
    Sandbox {
        session_id: i64,
    },
    /// Gives the chat its own sandbox mode and network setting (from its next turn).
    SetSandbox {
        session_id: i64,
        mode: crate::SandboxMode,
        network: bool,
    },
    /// "Fork from here": a new chat with the chat's messages up to and including
    /// `message_id` (and their tool calls and images); the original is unchanged
    /// (docs/store.md, "Forks").
    ForkSession {
        session_id: i64,
        message_id: i64,
    },
    /// Edit and resend: a new chat with the messages before the person's message
    /// `message_id`, where `text` (and `images`) is sent instead; the original is kept.
    EditMessage {
        session_id: i64,
        message_id: i64,
        text: String,
        #[serde(default)]
        #[ts(as = "Option<Vec<crate::images::ChatImage>>", optional)]
        images: Vec<crate::images::ChatImage>,
    },
    /// Plan or act, from the chat's next round (docs/agent-loop.md, "Plan mode").
    SetSessionMode {
        session_id: i64,
        mode: crate::records::ChatMode,
    },
    /// What fills the chat's context now, part by part (docs/agent-loop.md, "Long
    /// conversations").
    ContextUsage {
        session_id: i64,
    },
    /// Summarises the chat's older turns now, whatever its threshold. Refused while its
    /// turn runs.
    CompactNow {
        session_id: i64,
    },
    /// Undoes the chat's latest compaction: the turns it summarised are sent whole again.
    UndoCompaction {
        session_id: i64,
    },
    /// The models a chat can be given (docs/models.md, "A model per chat").
    ListModels,
    /// Gives the chat its own model (`provider/model`; none: the configured one) and
    /// reasoning effort (low, medium, high; none: the model's own), from its next turn.
    SetSessionModel {
        session_id: i64,
        #[serde(default)]
        #[ts(optional)]
        model: Option<String>,
        #[serde(default)]
        #[ts(optional)]
        effort: Option<String>,
    },
    /// What the chat's agent is given besides its own prompt now: AGENTS.md files and
    /// skills (docs/instructions.md).
    SessionContext {
        session_id: i64,
    },
    /// Lets the chat's project hooks file (`.skald/hooks.json`) run, as its content is
    /// now: `sha256` must be the one the context view showed (docs/hooks.md).
    ApproveHooks {
        session_id: i64,
        sha256: String,
    },
    /// The steps that changed the chat's folder, oldest first (docs/checkpoints.md).
    Checkpoints {
        session_id: i64,
    },
    /// The unified diff of what one step changed (of one file when `path` is given), cut
    /// at 512 KiB.
    CheckpointDiff {
        id: i64,
        #[serde(default)]
        #[ts(optional)]
        path: Option<String>,
    },
    /// "Restore to before this": brings the chat's folder back to before checkpoint `id`.
    /// Refused while the chat's turn runs. The restore is itself a checkpoint. With
    /// `rewind`, also a new chat with the conversation before that call (the original keeps
    /// every message).
    RestoreCheckpoint {
        id: i64,
        #[serde(default)]
        #[ts(optional)]
        rewind: Option<bool>,
    },
    /// Starts a turn, or queues the message for the running turn's next round.
    SendMessage {
        session_id: i64,
        text: String,
        /// Images attached with it, by what `AttachImage` answered (only `sha256` and
        /// `name` are read).
        #[serde(default)]
        #[ts(as = "Option<Vec<crate::images::ChatImage>>", optional)]
        images: Vec<crate::images::ChatImage>,
    },
    /// Keeps an image pasted, dropped or attached in the composer, for a message to show:
    /// PNG, JPEG, WebP or GIF, base64, at most 30 MB.
    AttachImage {
        data: String,
        #[serde(default)]
        #[ts(optional)]
        name: Option<String>,
        /// The chat it is for: the warning is about that chat's model.
        #[serde(default)]
        #[ts(optional)]
        session_id: Option<i64>,
    },
    /// A kept image's bytes (to show it in the chat).
    GetImage {
        sha256: String,
    },
    /// /stop: ends the session's turn and drops its queued messages.
    Stop {
        session_id: i64,
    },
    /// The chat's background processes (`execute_cmd` with `background: true`).
    ListProcesses {
        session_id: i64,
    },
    /// A background process of the chat and its output so far (the latest 256 KB).
    ProcessOutput {
        session_id: i64,
        process_id: u32,
    },
    /// Stops a background process of the chat; answers once nothing of it runs.
    StopProcess {
        session_id: i64,
        process_id: u32,
    },
    /// Markdown to the same sanitised HTML the viewer shows (chat messages, streaming).
    RenderMarkdown {
        text: String,
        /// Relative links resolve against this session's folder.
        #[serde(default)]
        #[ts(optional)]
        session_id: Option<i64>,
    },
    /// Everything waiting on the user, across sessions and tasks.
    Inbox,
    Answer {
        inbox_id: i64,
        answer: InboxAnswer,
    },
    /// The "always allow" rule an approval would store, for the rule editor.
    ProposeRule {
        inbox_id: i64,
    },
    ListRules,
    RemoveRule {
        id: i64,
    },
    ListAgents,
    ListTasks,
    ListCron,
    SetCronEnabled {
        id: i64,
        enabled: bool,
    },
    RemoveCron {
        id: i64,
    },
    /// Changes a job's name, prompt and schedule (5 fields, or 6 with seconds first).
    UpdateCron {
        id: i64,
        name: String,
        prompt: String,
        cron: String,
        /// An IANA zone, e.g. Europe/Berlin.
        timezone: String,
    },
    ListMcp,
    SetMcpEnabled {
        name: String,
        enabled: bool,
    },
    /// Signs in to an HTTP server with OAuth in the system browser; the reply comes when
    /// the browser is back (or the login failed or timed out, after 5 minutes).
    McpLogin {
        name: String,
    },
    /// Forgets an HTTP server's OAuth login.
    McpLogout {
        name: String,
    },
    /// The prompts of the ready servers: the composer's `/server:prompt` commands.
    ListMcpPrompts,
    /// The resources of the ready servers, to attach to a message as `@server:uri`.
    ListMcpResources,
    /// Secret names only: values never leave the engine.
    ListSecrets,
    SetSecret {
        name: String,
        value: String,
    },
    RemoveSecret {
        name: String,
    },
    ListPlugins,
    /// Turns a plugin on or off and/or sets its configuration (checked against its schema).
    ConfigurePlugin {
        id: String,
        #[serde(default)]
        #[ts(optional)]
        enabled: Option<bool>,
        #[serde(default)]
        #[ts(optional)]
        config: Option<Value>,
    },
    /// Models, data folder and version.
    Settings,
    /// Sets the percent of the model's window at which older turns are summarised (0: only
    /// when asked), written to config.toml `[agent] compact_at`; turns use it from their
    /// next round.
    SetCompactAt {
        percent: u8,
    },
    /// Sets the daily budget in US dollars (none: no budget), written to config.toml
    /// `[budget] daily_usd`; a turn that would pass it asks first (docs/models.md, "Cost
    /// and limits").
    SetDailyBudget {
        #[serde(default)]
        #[ts(optional)]
        usd: Option<f64>,
    },
    /// `[agent] at_once`: how many agents' turns run at once; more wait in line (0: no
    /// limit). Waiting turns that now fit start.
    SetAtOnce {
        count: u32,
    },
    /// config.toml `[web]` (docs/web.md): how web_search searches and how long a fetch may
    /// take. Chats use it from their next call. The search API's key is the
    /// `WEB_SEARCH_KEY` secret (`set_secret`).
    SetWeb {
        /// "" (off), "provider", "searxng", "brave" or "tavily".
        search: String,
        search_url: String,
        provider_search: bool,
        timeout_secs: u64,
    },
    /// Sends a tiny request to the first model and reports how it went.
    TestModel,
    /// The local models (GGUF files run in-process), and the recommended ones to pull.
    LocalModels,
    /// Downloads a recommended local model; `model_pull` events report progress and the
    /// reply comes when it is ready (resumable: asking again goes on from where a broken
    /// download stopped).
    PullModel {
        name: String,
    },
    /// Builds the offline TeX bundle from the TeX Live installed on the machine (as
    /// `skald latex bundle --from-system`); `tex_bundle` events report progress, and the
    /// reply comes when it is in place. LaTeX previews use it from their next compile.
    BuildTexBundle,
    /// Makes a provider's model the default (written to config.toml; the key, if given,
    /// kept as a secret). Turns use it from their next model call.
    ConfigureModel {
        /// openai (any OpenAI-compatible server) | anthropic | ollama | local (a model in
        /// the models folder, by name; no address or key)
        kind: String,
        model: String,
        /// The provider's address; its usual one when absent.
        #[serde(default)]
        #[ts(optional)]
        base_url: Option<String>,
        /// Stored in the OS keyring (or Skald's encrypted file), never in config.toml.
        #[serde(default)]
        #[ts(optional)]
        api_key: Option<String>,
    },
    /// How the viewer shows a file. Relative paths resolve against the session's folder.
    View {
        path: String,
        #[serde(default)]
        #[ts(optional)]
        session_id: Option<i64>,
    },
    /// Another page of a text file.
    ReadPage {
        path: String,
        offset: u64,
    },
    /// Compiles a LaTeX document (from the cache when nothing changed). A newer request
    /// for the same document stops this one (its reply says it was replaced).
    LatexBuild {
        path: String,
    },
    /// Stops the builds of a LaTeX document under way; their replies say they were
    /// stopped.
    LatexStop {
        path: String,
    },
    /// Follow a file (for LaTeX, every input of its last build): `file_changed` events.
    Subscribe {
        path: String,
    },
    Unsubscribe {
        path: String,
    },
}

/// What the server sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServerMessage {
    Reply {
        id: u64,
        reply: Reply,
    },
    Failure {
        id: u64,
        error: String,
    },
    /// An engine event; `session_id` is absent for events of no session (a viewed file
    /// changed).
    Event {
        session_id: Option<i64>,
        event: Event,
    },
}

/// A command's result, tagged with the command's name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "cmd", rename_all = "snake_case")]
pub enum Reply {
    ListSessions {
        sessions: Vec<SessionInfo>,
    },
    CreateSession {
        session: SessionInfo,
    },
    BestOf {
        /// The trial's name, shared by its worktrees (`WorktreeInfo::trial`).
        trial: String,
        /// Its chats, in the order of `models`; each works in worktree `<trial>-a`, `-b`, …
        sessions: Vec<SessionInfo>,
    },
    ListWorktrees {
        worktrees: Vec<crate::worktree::WorktreeInfo>,
        /// Days unused after which a worktree is offered for cleaning up
        /// (`[worktrees] clean_after_days`; 0: never).
        clean_after_days: u32,
    },
    Board {
        agents: Vec<crate::board::BoardAgent>,
    },
    WorktreeDiff {
        files: Vec<crate::worktree::FileReview>,
        /// The worktree's state reviewed, for `apply_worktree`.
        snapshot: String,
    },
    ApplyWorktree {
        report: crate::worktree::ApplyReport,
    },
    CommitWorktree {
        commit: String,
    },
    MergeWorktree {
        report: crate::worktree::MergeReport,
    },
    DiscardWorktree,
    ChatChanges {
        files: Vec<crate::worktree::FileReview>,
        /// The chat's changes as reviewed, for `revert_changes`.
        snapshot: String,
    },
    RevertChanges {
        report: crate::worktree::ApplyReport,
    },
    RenameSession,
    DeleteSession,
    History {
        session: SessionInfo,
        messages: Vec<ChatMessage>,
        tool_calls: Vec<ToolCallInfo>,
        /// Older messages exist before the first one returned.
        has_more: bool,
        /// The chat's latest compaction, whose messages the chat shows collapsed under it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        summary: Option<SummaryInfo>,
    },
    Usage {
        /// Model calls made.
        requests: u64,
        input_tokens: u64,
        output_tokens: u64,
        /// What the chat's calls cost, in US dollars (docs/models.md, "Cost").
        cost_usd: f64,
        /// Calls of models with no known price, not in `cost_usd`.
        unpriced: u64,
        /// What every call since midnight (local time) cost.
        today_cost_usd: f64,
        /// The daily budget (config.toml `[budget] daily_usd`), if one is set.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        daily_budget_usd: Option<f64>,
        /// The rate limits the chat's model's provider last stated, if it states any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        rate_limits: Option<RateLimitInfo>,
    },
    Sandbox {
        sandbox: crate::SandboxInfo,
    },
    SetSandbox {
        sandbox: crate::SandboxInfo,
    },
    ForkSession {
        session: SessionInfo,
    },
    SetSessionMode {
        session: SessionInfo,
    },
    EditMessage {
        /// The new chat, where the edited message was sent.
        session: SessionInfo,
        queued: bool,
    },
    ContextUsage {
        /// The next request's estimated tokens, all parts together.
        #[ts(type = "number")]
        tokens: u64,
        /// The model's window.
        #[ts(type = "number")]
        window: u64,
        /// Percent of the window at which older turns are summarised (0: only when asked).
        compact_at: u8,
        /// What the last model call actually read, when there was one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional, type = "number")]
        last_input_tokens: Option<u64>,
        parts: Vec<ContextPart>,
    },
    CompactNow {
        /// A summary was made (there were older turns to fold in).
        compacted: bool,
    },
    UndoCompaction {
        /// A compaction was undone.
        undone: bool,
    },
    ListModels {
        /// The configured model first, then its fallbacks, then the local models.
        models: Vec<ModelOption>,
    },
    SetSessionModel {
        session: SessionInfo,
    },
    SessionContext {
        context: crate::context::TurnContext,
    },
    ApproveHooks {
        context: crate::context::TurnContext,
    },
    Checkpoints {
        checkpoints: Vec<crate::checkpoint::CheckpointInfo>,
    },
    CheckpointDiff {
        text: String,
    },
    RestoreCheckpoint {
        /// The restore's own checkpoint: restoring to before it undoes the restore.
        checkpoint: crate::checkpoint::CheckpointInfo,
        /// With `rewind`: the new chat to go on in.
        fork: Option<SessionInfo>,
    },
    SendMessage {
        /// The message waits for the running turn's next round.
        queued: bool,
    },
    AttachImage {
        image: crate::images::ChatImage,
        /// Set when the chat's model cannot see images: what the person is told before
        /// sending (the model is given a line saying an image was there).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        warning: Option<String>,
    },
    GetImage {
        media_type: String,
        /// base64
        data: String,
    },
    Stop {
        /// A turn was running.
        stopped: bool,
    },
    ListProcesses {
        processes: Vec<crate::processes::ProcessInfo>,
    },
    ProcessOutput {
        process: crate::processes::ProcessInfo,
        output: String,
    },
    StopProcess {
        process: crate::processes::ProcessInfo,
    },
    RenderMarkdown {
        html: String,
    },
    Inbox {
        items: Vec<InboxEntry>,
    },
    Answer,
    ProposeRule {
        rule: RuleDraft,
        /// How many of the session's earlier calls the rule would have allowed.
        matched: u32,
        /// What else the proposed rule would allow, in a sentence.
        reach: String,
    },
    ListRules {
        rules: Vec<RuleInfo>,
    },
    RemoveRule,
    ListAgents {
        agents: Vec<AgentInfo>,
    },
    ListTasks {
        tasks: Vec<TaskInfo>,
    },
    ListCron {
        jobs: Vec<CronJobInfo>,
    },
    SetCronEnabled,
    RemoveCron,
    UpdateCron {
        job: CronJobInfo,
    },
    ListMcp {
        servers: Vec<McpServerInfo>,
    },
    SetMcpEnabled,
    McpLogin {
        /// The access asked for (empty: the server defines none).
        scopes: Vec<String>,
    },
    McpLogout,
    ListMcpPrompts {
        prompts: Vec<McpPromptInfo>,
    },
    ListMcpResources {
        resources: Vec<McpResourceInfo>,
    },
    ListSecrets {
        names: Vec<String>,
        /// Where they are kept: the OS keyring or Skald's encrypted file.
        store: String,
    },
    SetSecret,
    RemoveSecret,
    ListPlugins {
        plugins: Vec<PluginInfo>,
    },
    ConfigurePlugin {
        message: String,
    },
    Settings {
        version: String,
        data_dir: String,
        /// The model first, then its fallbacks.
        models: Vec<String>,
        /// Why no model can be used, if none can.
        model_error: Option<String>,
        /// Where the configuration is kept.
        config_path: String,
        approval: String,
        /// Which TeX bundle LaTeX previews use, and whether one can be built here.
        tex: TexStatus,
        /// Percent of the model's window at which older turns are summarised (config.toml
        /// `[agent] compact_at`; 0: only when asked).
        compact_at: u8,
        /// The daily budget in US dollars (config.toml `[budget] daily_usd`), if one is set.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        daily_budget_usd: Option<f64>,
        /// What every model call since midnight (local time) cost.
        today_cost_usd: f64,
        /// How many agents' turns run at once (config.toml `[agent] at_once`; 0: no limit).
        at_once: u32,
        /// The rate limits each provider last stated, in this run.
        rate_limits: Vec<RateLimitInfo>,
        /// The web tools' settings and whether web search is set up.
        web: WebSettings,
        /// Which languages have a language server here (docs/lsp.md).
        language_servers: Vec<LanguageServerInfo>,
    },
    SetWeb {
        web: WebSettings,
    },
    SetCompactAt {
        percent: u8,
    },
    SetDailyBudget {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        usd: Option<f64>,
    },
    SetAtOnce {
        count: u32,
    },
    TestModel {
        ok: bool,
        message: String,
        millis: u64,
    },
    LocalModels {
        /// Whether this build can run local models.
        available: bool,
        folder: String,
        installed: Vec<LocalModelInfo>,
        /// Recommended models not installed yet.
        recommended: Vec<RecommendedModel>,
    },
    PullModel {
        /// How to name it as a model: `local/<name>`.
        model: String,
    },
    BuildTexBundle {
        path: String,
        files: u64,
        bytes: u64,
    },
    ConfigureModel {
        /// The models now, the configured one first.
        models: Vec<String>,
    },
    View {
        /// The absolute path.
        path: String,
        /// As the user would write it (relative to the session's folder when under it).
        display_path: String,
        size: u64,
        kind: Kind,
        view: View,
    },
    ReadPage {
        page: Page,
    },
    LatexBuild {
        ok: bool,
        /// The PDF on the file route, when the build succeeded.
        pdf_url: Option<String>,
        from_cache: bool,
        millis: u64,
        errors: Vec<TexError>,
        /// Set when the build failed for another reason than TeX errors.
        message: Option<String>,
    },
    LatexStop {
        /// Whether a build was under way.
        stopped: bool,
    },
    Subscribe,
    Unsubscribe,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct SessionInfo {
    pub id: i64,
    pub title: String,
    pub agent_id: String,
    pub kind: SessionKind,
    pub working_dir: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
    /// A turn runs in this process now (or waits for a place: `queued`).
    pub running: bool,
    /// Its turn waits for a place among the agents that run at once (docs/board.md).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[ts(as = "Option<bool>", optional)]
    pub queued: bool,
    /// The chat's own model (`provider/model`); absent: the configured one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub model: Option<String>,
    /// The chat's reasoning effort (low, medium, high); absent: the model's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub effort: Option<String>,
    /// The chat it was forked from (an edited message, "fork from here", a rewind).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub forked_from: Option<i64>,
    /// The last message of that chat it copied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub forked_after: Option<i64>,
    /// Plan or act (docs/agent-loop.md, "Plan mode").
    pub mode: crate::records::ChatMode,
}

/// One part of what fills a chat's context.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ContextPart {
    /// system | instructions | tools | summary | messages | tool_results
    pub what: String,
    #[ts(type = "number")]
    pub tokens: u64,
}

/// A provider's rate limits as its latest response stated them (docs/models.md, "Cost and
/// limits").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct RateLimitInfo {
    /// The provider's name in config.toml (`openai`, `anthropic`, `openrouter`, …).
    pub provider: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub requests: Option<LimitInfo>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tokens: Option<LimitInfo>,
    /// When the response came (Unix ms).
    pub seen_at: i64,
}

/// One rate limit: the window's size, what is left, and when it is whole again (Unix ms).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct LimitInfo {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub limit: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub remaining: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub resets_at: Option<i64>,
}

/// A compaction: the summary that stands for the messages up to `up_to_message_id`
/// (which stay in the store and in the history).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct SummaryInfo {
    pub up_to_message_id: i64,
    pub summary: String,
    pub created_at: i64,
}

/// A model a chat can be given, and what it can do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ModelOption {
    /// `provider/model`, as `set_session_model` takes it.
    pub label: String,
    pub sees_images: bool,
    /// Whether it takes a reasoning effort.
    pub takes_effort: bool,
    /// The configured model (what a chat without its own uses).
    pub default: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ChatMessage {
    pub id: i64,
    /// The sub-agent frame it belongs to (absent for the chat's own agent).
    pub stack_id: Option<i64>,
    pub role: Role,
    pub content: String,
    /// The content rendered as sanitised HTML (assistant messages).
    pub html: Option<String>,
    pub reasoning: Option<String>,
    pub status: MessageStatus,
    /// Written by Skald, not typed or generated (a delivered task result, say).
    pub synthetic: bool,
    pub created_at: i64,
    /// The images shown with it (docs/images.md).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<crate::images::ChatImage>>", optional)]
    pub images: Vec<crate::images::ChatImage>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ToolCallInfo {
    pub tool_call_id: String,
    /// The assistant message that made the call.
    pub message_id: Option<i64>,
    pub stack_id: Option<i64>,
    pub name: String,
    pub arguments: Value,
    pub label_short: String,
    pub label_full: String,
    /// The file the call works on, for the viewer.
    pub path: Option<String>,
    pub status: ToolCallStatus,
    pub result: Option<String>,
    /// The images the tool showed the model (`read_file` of an image).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<crate::images::ChatImage>>", optional)]
    pub images: Vec<crate::images::ChatImage>,
}

/// What the desktop shell asks the UI to show, sent as its `skald://open` event: a
/// clicked notification opens the Inbox item it was about.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "what", rename_all = "snake_case")]
pub enum OpenTarget {
    InboxItem { inbox_id: i64, session_id: i64 },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct LocalModelInfo {
    pub name: String,
    pub bytes: u64,
}

/// A language and the server Skald would start for it (docs/lsp.md, "Servers").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct LanguageServerInfo {
    /// As config.toml's `[lsp.commands]` names it: python, typescript, rust, go, c.
    pub language: String,
    /// The server's command line as found (configured or on PATH); none if there is none.
    pub command: Option<String>,
    /// How to get one.
    pub install: String,
}

/// config.toml `[web]` as Settings shows it, with what doctor says of it (docs/web.md).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct WebSettings {
    /// "" (off), "provider", "searxng", "brave" or "tavily".
    pub search: String,
    pub search_url: String,
    pub provider_search: bool,
    pub timeout_secs: u64,
    /// Whether the `WEB_SEARCH_KEY` secret is stored.
    pub key_stored: bool,
    /// Whether web search works as set up.
    pub ready: bool,
    /// What applies, in a sentence ("searxng at http://…", "off").
    pub status: String,
    /// What to do to set it up or fix it, when it is not ready.
    pub hint: Option<String>,
}

/// The TeX bundle LaTeX previews use (docs/viewer.md, "Bundles").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct TexStatus {
    /// What applies, in a sentence ("offline bundle at …", "tectonic's online bundle, …").
    pub bundle: String,
    /// Whether previews work without the network.
    pub offline: bool,
    /// The installed TeX Live an offline bundle can be built from, if there is one.
    pub system_tex: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct RecommendedModel {
    pub name: String,
    pub description: String,
    pub bytes: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct AgentInfo {
    pub id: String,
    pub name: String,
    pub description: String,
}

/// A server's prompt, run in a message as `/server:name ARGS` (docs/mcp.md "Prompts").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct McpPromptInfo {
    pub server: String,
    pub name: String,
    pub title: Option<String>,
    pub description: String,
    pub arguments: Vec<McpPromptArgumentInfo>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct McpPromptArgumentInfo {
    pub name: String,
    pub description: String,
    pub required: bool,
}

/// A server's resource; `@server:uri` in a message attaches it (docs/mcp.md "Resources").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct McpResourceInfo {
    pub server: String,
    pub uri: String,
    pub name: String,
    pub title: Option<String>,
    pub description: String,
    pub mime_type: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct McpServerInfo {
    pub name: String,
    pub enabled: bool,
    /// stdio | http
    pub transport: String,
    pub description: String,
    pub status: McpStatus,
    /// The last lines of the server's log.
    pub log_tail: Vec<String>,
    /// A stdio server that runs in the command sandbox, and whether it has the network.
    pub sandbox: bool,
    pub sandbox_network: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_request_reads_with_optional_fields_left_out() {
        let r: Request = serde_json::from_value(json!({
            "id": 4, "command": {"cmd": "create_session"}
        }))
        .unwrap();
        assert_eq!(
            r.command,
            Command::CreateSession {
                title: None,
                working_dir: None,
                agent_id: None,
                worktree: None
            }
        );
        let r: Request = serde_json::from_value(json!({
            "id": 5, "command": {"cmd": "answer", "inbox_id": 2,
                "answer": {"decision": "reject", "note": "not that file"}}
        }))
        .unwrap();
        assert!(matches!(
            r.command,
            Command::Answer { inbox_id: 2, answer: InboxAnswer::Reject { ref note } } if note == "not that file"
        ));
    }

    #[test]
    fn a_reply_is_tagged_with_its_command() {
        let m = ServerMessage::Reply {
            id: 9,
            reply: Reply::Stop { stopped: true },
        };
        assert_eq!(
            serde_json::to_value(&m).unwrap(),
            json!({"type": "reply", "id": 9, "reply": {"cmd": "stop", "stopped": true}})
        );
    }
}
