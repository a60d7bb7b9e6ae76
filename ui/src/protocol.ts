// Generated from crates/skald-api (protocol.rs, events.rs, view.rs, inbox.rs, listings.rs,
// records.rs) by `SKALD_BLESS=1 cargo test -p skald-api --test typescript`. Do not edit.

export type JsonValue = number | string | boolean | Array<JsonValue> | { [key in string]?: JsonValue } | null;

/**
 * How a turn ended.
 */
export type TurnOutcome = "final" | "cancelled" | "exhausted" | "failed";

/**
 * Who drives a session.
 */
export type SessionKind = "interactive" | "background";

/**
 * Who wrote a message.
 */
export type Role = "system" | "user" | "assistant" | "tool";

/**
 * How far a message got.
 */
export type MessageStatus = "streaming" | "complete" | "interrupted";

/**
 * The status string persisted for a tool call. `Interrupted` has no live state: it marks a
 * call that was running when the process died and that is reported rather than re-run.
 */
export type ToolCallStatus = "running" | "pending" | "done" | "failed" | "cancelled" | "rejected" | "interrupted";

/**
 * Every tool declares one category; the approval gate and audit group by it.
 */
export type ToolCategory = "filesystem" | "shell" | "subagent" | "introspection" | "config" | "session" | "web";

/**
 * Where a background task stands.
 */
export type TaskStatus = "running" | "done" | "failed" | "cancelled";

/**
 * What an Inbox item asks for.
 */
export type InboxKind = "approval" | "question" | "elicitation";

/**
 * Where an Inbox item stands.
 */
export type InboxStatus = "pending" | "approved" | "rejected" | "answered" | "cancelled";

/**
 * What an approval rule does with the calls it matches.
 */
export type RuleAction = "allow" | "require" | "deny";

/**
 * What a schedule does with the runs it missed while Skald was not running.
 */
export type MissedPolicy = "once" | "skip";

/**
 * Where an MCP server stands.
 */
export type McpStatus = { "state": "connecting" } | { "state": "ready", tools: number, } | { "state": "failed", error: string, log_tail: string, } | { "state": "disabled" } | { "state": "not_started" } | { "state": "needs_login", expired: boolean, scope?: string, };

/**
 * Where an item of an agent's todo list stands (`write_todos`).
 */
export type TodoStatus = "pending" | "in_progress" | "completed";

/**
 * One item of an agent's todo list.
 */
export type TodoItem = { content: string, status: TodoStatus, };

/**
 * The arguments of `write_todos`: the whole list, each time. The UI reads a call's
 * arguments as this to show the checklist above the composer.
 */
export type WriteTodosArgs = { todos: Array<TodoItem>, };

export type Event = { "type": "turn_running", session_id: number, } | { "type": "turn_queued", session_id: number, 
/**
 * Turns in line before it.
 */
ahead: number, } | { "type": "user_message", session_id: number, message_id: number, text: string, 
/**
 * The images shown with it (docs/images.md).
 */
images?: Array<ChatImage>, } | { "type": "token_delta", text: string, } | { "type": "thinking", text: string, } | { "type": "tool_start", tool_call_id: string, name: string, arguments: JsonValue, label_short: string, label_full: string, path?: string, } | { "type": "tool_done", tool_call_id: string, result: string, 
/**
 * The images the tool showed the model (docs/images.md).
 */
images?: Array<ChatImage>, } | { "type": "tool_error", tool_call_id: string, error: string, } | { "type": "tool_cancelled", tool_call_id: string, } | { "type": "tool_rejected", tool_call_id: string, reason: string, } | { "type": "llm_failed", message: string, retrying: boolean, } | { "type": "agent_start", stack_id: number, agent_id: string, depth: number, } | { "type": "turn_usage", session_id: number, requests: number, input_tokens: number, output_tokens: number, cost_usd: number, unpriced: number, 
/**
 * The chat's calls so far, this turn's included.
 */
chat_cost_usd: number, 
/**
 * Every call since midnight (local time), of any chat or task.
 */
today_cost_usd: number, } | { "type": "rate_limits", session_id: number, limits: RateLimitInfo, } | { "type": "agent_done", stack_id: number, agent_id: string, outcome: TurnOutcome, } | { "type": "approval_required", tool_call_id: string, name: string, arguments: JsonValue, label: string, reason: string, inbox_id: number, } | { "type": "agent_question", tool_call_id: string, inbox_id: number, question: string, suggested_answers: Array<string>, } | { "type": "inbox_requested", item: InboxEntry, } | { "type": "inbox_resolved", id: number, session_id: number, status: InboxStatus, } | { "type": "compaction_started", session_id: number, up_to_message_id: number, tokens: number, window: number, } | { "type": "context_compacted", session_id: number, up_to_message_id: number, } | { "type": "model_fallback", from: string, to: string, reason: string, } | { "type": "tool_progress", tool_call_id: string, progress: number, total?: number, message?: string, } | { "type": "mcp_status", server: string, status: McpStatus, } | { "type": "open_file", path: string, } | { "type": "file_changed", path: string, } | { "type": "prompt_progress", read: number, total: number, } | { "type": "model_pull", name: string, done: number, total: number, } | { "type": "model_prepare", name: string, read: number, total: number, } | { "type": "latex_progress", path: string, stage: LatexStage, } | { "type": "tex_bundle", done: number, total: number, } | { "type": "task_update", task_id: number, 
/**
 * The background session the task works in.
 */
session_id: number | null, title: string, agent_id: string, status: TaskStatus, result?: string, } | { "type": "process_update", process: ProcessInfo, } | { "type": "checkpoint", checkpoint: CheckpointInfo, } | { "type": "context", session_id: number, context: TurnContext, } | { "type": "hook", session_id: number, hook: HookRun, } | { "type": "error", message: string, } | { "type": "done", session_id: number, outcome: TurnOutcome, text: string, };

export type Kind = { "kind": "markdown" } | { "kind": "code", language: string, } | { "kind": "text" } | { "kind": "image", mime: string, } | { "kind": "svg", mime: string, } | { "kind": "pdf", mime: string, } | { "kind": "html" } | { "kind": "latex" } | { "kind": "binary" };

export type Page = { 
/**
 * Where the page starts and how many bytes it covers.
 */
offset: number, len: number, 
/**
 * The file's size.
 */
total: number, text: string, 
/**
 * Where the next page starts, if there is more.
 */
next_offset: number | null, };

export type TexError = { file: string, line: number | null, message: string, };

/**
 * What a LaTeX build is doing, as its worker reports it: a first build makes the format
 * file (seconds, once per bundle), then XeTeX passes, BibTeX, and the PDF.
 */
export type LatexStage = { "stage": "format" } | { "stage": "tex", pass: number, } | { "stage": "bibtex" } | { "stage": "pdf" };

/**
 * What the viewer shows for a file.
 */
export type View = { "view": "markdown", html: string, } | { "view": "text", language: string | null, page: Page, } | { "view": "media", mime: string, url: string, } | { "view": "html", url: string, sandbox: string, csp: string, source: Page, } | { "view": "latex", source: Page, } | { "view": "none", reason: string, };

/**
 * One call from the UI.
 */
export type Request = { 
/**
 * Chosen by the UI; the reply carries it back.
 */
id: number, command: Command, };

/**
 * How much a command may do without a person's yes.
 */
export type SandboxMode = "off" | "read-only" | "workspace-write";

/**
 * What a chat shows about its commands' sandbox (the header, the approval card).
 */
export type SandboxInfo = { mode: SandboxMode, 
/**
 * Whether sandboxed commands may use the network.
 */
network: boolean, 
/**
 * Whether the sandbox works on this machine; when not, `note` says why and every
 * command asks.
 */
available: boolean, 
/**
 * Whether commands ask even when they would run sandboxed (`[sandbox] ask = "always"`).
 */
always_ask: boolean, 
/**
 * One line for a person: how commands run here.
 */
note: string, };

export type ChangeStatus = "added" | "modified" | "deleted";

/**
 * One file's change.
 */
export type FileChange = { 
/**
 * Relative to the chat's folder, `/`-separated.
 */
path: string, status: ChangeStatus, 
/**
 * Lines added and removed (0 for a binary file, and past the first 500 files).
 */
added: number, removed: number, binary: boolean, };

/**
 * The files one step changed.
 */
export type FileChanges = { 
/**
 * At most 2,000, in path order.
 */
files: Array<FileChange>, 
/**
 * How many files changed in all.
 */
total: number, };

export type CheckpointKind = "call" | "restore";

/**
 * A step that changed the folder, or could not be recorded: what the chat shows under a
 * tool call and `skald checkpoints list` prints.
 */
export type CheckpointInfo = { id: number, session_id: number, 
/**
 * The call it brackets (for a restore, none).
 */
tool_call_id: string | null, kind: CheckpointKind, folder: string, 
/**
 * The folder before and after the step, as commits of its shadow repository; none
 * when no checkpoint could be taken (`note` says why).
 */
before: string | null, after: string | null, changes: FileChanges, 
/**
 * What was left out or went wrong, for a person; "" when nothing.
 */
note: string, 
/**
 * For a restore: the checkpoint whose "before" it went back to.
 */
restored_to: number | null, 
/**
 * Milliseconds since the epoch.
 */
created_at: number, };

/**
 * How one hook's run ended.
 */
export type HookOutcome = "ok" | "blocked" | "error" | "timeout";

/**
 * One hook's run.
 */
export type HookRun = { 
/**
 * The event: `PreToolUse`, `PostToolUse`, `UserPromptSubmit`, `Stop`, `SubagentStop`,
 * `PreCompact`, `SessionStart`, `Notification`.
 */
event: string, command: string, 
/**
 * The call it ran for (PreToolUse, PostToolUse, Notification of an approval).
 */
tool_call_id?: string, source: ContextSource, outcome: HookOutcome, 
/**
 * The reason, decision or error it gave, cut at 2,000 characters ("" when none).
 */
message: string, duration_ms: number, };

/**
 * A project's hooks file and whether its current content may run.
 */
export type ProjectHooks = { path: string, 
/**
 * SHA-256 of every file under `.skald/` (paths and contents), as approved with
 * `approve_hooks`.
 */
sha256: string, approved: boolean, 
/**
 * How many hooks it configures.
 */
hooks: number, 
/**
 * Every file the approval covers: the whole `.skald/` folder (a script a hook runs is
 * part of what runs), relative to the project's root.
 */
files: Array<string>, };

/**
 * Where a file of instructions or a skill came from.
 */
export type ContextSource = "user" | "project";

/**
 * One AGENTS.md, as it was given to the agent.
 */
export type InstructionFile = { path: string, source: ContextSource, 
/**
 * The file's size, and how much of it the agent was given.
 */
bytes: number, included: number, 
/**
 * Why it was cut or left out, when it was ("" when given whole).
 */
note: string, };

/**
 * A skill found in a project's or the person's `.agents/skills`.
 */
export type ContextSkill = { name: string, description: string, 
/**
 * Its SKILL.md.
 */
path: string, source: ContextSource, };

/**
 * What a turn's agent was given besides its own prompt.
 */
export type TurnContext = { 
/**
 * The AGENTS.md files, in the order given: the person's, then the project's from its
 * root down to the chat's folder (the nearest last, so it weighs most).
 */
instructions: Array<InstructionFile>, skills: Array<ContextSkill>, 
/**
 * Where the project was taken to start.
 */
project_root: string, 
/**
 * The project's `.skald/hooks.json`, when it has one: its hooks run only once the
 * person approved this content (docs/hooks.md).
 */
project_hooks?: ProjectHooks, };

export type Command = { "cmd": "list_sessions" } | { "cmd": "create_session", title?: string, 
/**
 * The folder the agent works in; the server's folder when absent.
 */
working_dir?: string, agent_id?: string, 
/**
 * Work in a worktree of its own (docs/worktrees.md): named so, or after the folder
 * when empty.
 */
worktree?: string, } | { "cmd": "best_of", text: string, 
/**
 * One per agent, 2 to 4: `provider/model`, or absent for the configured model.
 */
models: Array<string | null>, 
/**
 * The folder; the server's when absent.
 */
working_dir?: string, title?: string, } | { "cmd": "list_worktrees" } | { "cmd": "board", 
/**
 * At most this many [default 100].
 */
limit?: number, } | { "cmd": "worktree_diff", name: string, } | { "cmd": "apply_worktree", name: string, files?: Array<FileChoice>, 
/**
 * The `snapshot` of the `worktree_diff` reviewed: refused if the worktree changed
 * since (its hunks would be others).
 */
snapshot?: string, } | { "cmd": "commit_worktree", name: string, message?: string, 
/**
 * The `snapshot` of the `worktree_diff` reviewed: what is committed, refused if
 * the worktree changed since. Absent: the worktree as it is now.
 */
snapshot?: string, } | { "cmd": "merge_worktree", name: string, } | { "cmd": "discard_worktree", name: string, } | { "cmd": "chat_changes", session_id: number, } | { "cmd": "revert_changes", session_id: number, files?: Array<FileChoice>, 
/**
 * The `snapshot` of the `chat_changes` reviewed: refused if the chat changed files
 * since.
 */
snapshot?: string, } | { "cmd": "rename_session", session_id: number, title: string, } | { "cmd": "delete_session", session_id: number, } | { "cmd": "history", session_id: number, before?: number, limit?: number, } | { "cmd": "usage", session_id: number, } | { "cmd": "sandbox", session_id: number, } | { "cmd": "set_sandbox", session_id: number, mode: SandboxMode, network: boolean, } | { "cmd": "fork_session", session_id: number, message_id: number, } | { "cmd": "edit_message", session_id: number, message_id: number, text: string, images?: Array<ChatImage>, } | { "cmd": "set_session_mode", session_id: number, mode: ChatMode, } | { "cmd": "context_usage", session_id: number, } | { "cmd": "compact_now", session_id: number, } | { "cmd": "undo_compaction", session_id: number, } | { "cmd": "list_models" } | { "cmd": "set_session_model", session_id: number, model?: string, effort?: string, } | { "cmd": "session_context", session_id: number, } | { "cmd": "approve_hooks", session_id: number, sha256: string, } | { "cmd": "checkpoints", session_id: number, } | { "cmd": "checkpoint_diff", id: number, path?: string, } | { "cmd": "restore_checkpoint", id: number, rewind?: boolean, } | { "cmd": "send_message", session_id: number, text: string, 
/**
 * Images attached with it, by what `AttachImage` answered (only `sha256` and
 * `name` are read).
 */
images?: Array<ChatImage>, } | { "cmd": "attach_image", data: string, name?: string, 
/**
 * The chat it is for: the warning is about that chat's model.
 */
session_id?: number, } | { "cmd": "get_image", sha256: string, } | { "cmd": "stop", session_id: number, } | { "cmd": "list_processes", session_id: number, } | { "cmd": "process_output", session_id: number, process_id: number, } | { "cmd": "stop_process", session_id: number, process_id: number, } | { "cmd": "render_markdown", text: string, 
/**
 * Relative links resolve against this session's folder.
 */
session_id?: number, } | { "cmd": "inbox" } | { "cmd": "answer", inbox_id: number, answer: InboxAnswer, } | { "cmd": "propose_rule", inbox_id: number, } | { "cmd": "list_rules" } | { "cmd": "remove_rule", id: number, } | { "cmd": "list_agents" } | { "cmd": "list_tasks" } | { "cmd": "list_cron" } | { "cmd": "set_cron_enabled", id: number, enabled: boolean, } | { "cmd": "remove_cron", id: number, } | { "cmd": "update_cron", id: number, name: string, prompt: string, cron: string, 
/**
 * An IANA zone, e.g. Europe/Berlin.
 */
timezone: string, } | { "cmd": "list_mcp" } | { "cmd": "set_mcp_enabled", name: string, enabled: boolean, } | { "cmd": "mcp_login", name: string, } | { "cmd": "mcp_logout", name: string, } | { "cmd": "list_mcp_prompts" } | { "cmd": "list_mcp_resources" } | { "cmd": "list_secrets" } | { "cmd": "set_secret", name: string, value: string, } | { "cmd": "remove_secret", name: string, } | { "cmd": "list_plugins" } | { "cmd": "configure_plugin", id: string, enabled?: boolean, config?: JsonValue, } | { "cmd": "settings" } | { "cmd": "set_compact_at", percent: number, } | { "cmd": "set_daily_budget", usd?: number, } | { "cmd": "set_at_once", count: number, } | { "cmd": "set_web", 
/**
 * "" (off), "provider", "searxng", "brave" or "tavily".
 */
search: string, search_url: string, provider_search: boolean, timeout_secs: number, } | { "cmd": "test_model" } | { "cmd": "local_models" } | { "cmd": "pull_model", name: string, } | { "cmd": "build_tex_bundle" } | { "cmd": "configure_model", 
/**
 * openai (any OpenAI-compatible server) | anthropic | ollama | local (a model in
 * the models folder, by name; no address or key)
 */
kind: string, model: string, 
/**
 * The provider's address; its usual one when absent.
 */
base_url?: string, 
/**
 * Stored in the OS keyring (or Skald's encrypted file), never in config.toml.
 */
api_key?: string, } | { "cmd": "view", path: string, session_id?: number, } | { "cmd": "read_page", path: string, offset: number, } | { "cmd": "latex_build", path: string, } | { "cmd": "latex_stop", path: string, } | { "cmd": "subscribe", path: string, } | { "cmd": "unsubscribe", path: string, };

/**
 * The answer to an Inbox item.
 */
export type InboxAnswer = { "decision": "approve" } | { "decision": "reject", note: string, } | { "decision": "approve_with_bypass", scope: BypassSpec, minutes?: number, } | { "decision": "always_allow", rule: RuleDraft, } | { "decision": "text", text: string, };

export type BypassSpec = { "scope": "all" } | { "scope": "category", "value": ToolCategory } | { "scope": "mcp_server", "value": string };

/**
 * An approval rule as the rule editor shows it.
 */
export type RuleDraft = { group: string, tool_pattern: string, path_pattern: string | null, command_pattern: string | null, working_dir: string | null, action: RuleAction, note: string, 
/**
 * For commands: what the rule allows runs in the sandbox with the network (proposed
 * when the approved call asked for the network).
 */
network: boolean, 
/**
 * For the web tools: the host the rule is about (proposed from the fetched URL).
 */
domain_pattern: string | null, };

/**
 * What the server sends.
 */
export type ServerMessage = { "type": "reply", id: number, reply: Reply, } | { "type": "failure", id: number, error: string, } | { "type": "event", session_id: number | null, event: Event, };

/**
 * A command's result, tagged with the command's name.
 */
export type Reply = { "cmd": "list_sessions", sessions: Array<SessionInfo>, } | { "cmd": "create_session", session: SessionInfo, } | { "cmd": "best_of", 
/**
 * The trial's name, shared by its worktrees (`WorktreeInfo::trial`).
 */
trial: string, 
/**
 * Its chats, in the order of `models`; each works in worktree `<trial>-a`, `-b`, …
 */
sessions: Array<SessionInfo>, } | { "cmd": "list_worktrees", worktrees: Array<WorktreeInfo>, 
/**
 * Days unused after which a worktree is offered for cleaning up
 * (`[worktrees] clean_after_days`; 0: never).
 */
clean_after_days: number, } | { "cmd": "board", agents: Array<BoardAgent>, } | { "cmd": "worktree_diff", files: Array<FileReview>, 
/**
 * The worktree's state reviewed, for `apply_worktree`.
 */
snapshot: string, } | { "cmd": "apply_worktree", report: ApplyReport, } | { "cmd": "commit_worktree", commit: string, } | { "cmd": "merge_worktree", report: MergeReport, } | { "cmd": "discard_worktree" } | { "cmd": "chat_changes", files: Array<FileReview>, 
/**
 * The chat's changes as reviewed, for `revert_changes`.
 */
snapshot: string, } | { "cmd": "revert_changes", report: ApplyReport, } | { "cmd": "rename_session" } | { "cmd": "delete_session" } | { "cmd": "history", session: SessionInfo, messages: Array<ChatMessage>, tool_calls: Array<ToolCallInfo>, 
/**
 * Older messages exist before the first one returned.
 */
has_more: boolean, 
/**
 * The chat's latest compaction, whose messages the chat shows collapsed under it.
 */
summary?: SummaryInfo, } | { "cmd": "usage", 
/**
 * Model calls made.
 */
requests: number, input_tokens: number, output_tokens: number, 
/**
 * What the chat's calls cost, in US dollars (docs/models.md, "Cost").
 */
cost_usd: number, 
/**
 * Calls of models with no known price, not in `cost_usd`.
 */
unpriced: number, 
/**
 * What every call since midnight (local time) cost.
 */
today_cost_usd: number, 
/**
 * The daily budget (config.toml `[budget] daily_usd`), if one is set.
 */
daily_budget_usd?: number, 
/**
 * The rate limits the chat's model's provider last stated, if it states any.
 */
rate_limits?: RateLimitInfo, } | { "cmd": "sandbox", sandbox: SandboxInfo, } | { "cmd": "set_sandbox", sandbox: SandboxInfo, } | { "cmd": "fork_session", session: SessionInfo, } | { "cmd": "set_session_mode", session: SessionInfo, } | { "cmd": "edit_message", 
/**
 * The new chat, where the edited message was sent.
 */
session: SessionInfo, queued: boolean, } | { "cmd": "context_usage", 
/**
 * The next request's estimated tokens, all parts together.
 */
tokens: number, 
/**
 * The model's window.
 */
window: number, 
/**
 * Percent of the window at which older turns are summarised (0: only when asked).
 */
compact_at: number, 
/**
 * What the last model call actually read, when there was one.
 */
last_input_tokens?: number, parts: Array<ContextPart>, } | { "cmd": "compact_now", 
/**
 * A summary was made (there were older turns to fold in).
 */
compacted: boolean, } | { "cmd": "undo_compaction", 
/**
 * A compaction was undone.
 */
undone: boolean, } | { "cmd": "list_models", 
/**
 * The configured model first, then its fallbacks, then the local models.
 */
models: Array<ModelOption>, } | { "cmd": "set_session_model", session: SessionInfo, } | { "cmd": "session_context", context: TurnContext, } | { "cmd": "approve_hooks", context: TurnContext, } | { "cmd": "checkpoints", checkpoints: Array<CheckpointInfo>, } | { "cmd": "checkpoint_diff", text: string, } | { "cmd": "restore_checkpoint", 
/**
 * The restore's own checkpoint: restoring to before it undoes the restore.
 */
checkpoint: CheckpointInfo, 
/**
 * With `rewind`: the new chat to go on in.
 */
fork: SessionInfo | null, } | { "cmd": "send_message", 
/**
 * The message waits for the running turn's next round.
 */
queued: boolean, } | { "cmd": "attach_image", image: ChatImage, 
/**
 * Set when the chat's model cannot see images: what the person is told before
 * sending (the model is given a line saying an image was there).
 */
warning?: string, } | { "cmd": "get_image", media_type: string, 
/**
 * base64
 */
data: string, } | { "cmd": "stop", 
/**
 * A turn was running.
 */
stopped: boolean, } | { "cmd": "list_processes", processes: Array<ProcessInfo>, } | { "cmd": "process_output", process: ProcessInfo, output: string, } | { "cmd": "stop_process", process: ProcessInfo, } | { "cmd": "render_markdown", html: string, } | { "cmd": "inbox", items: Array<InboxEntry>, } | { "cmd": "answer" } | { "cmd": "propose_rule", rule: RuleDraft, 
/**
 * How many of the session's earlier calls the rule would have allowed.
 */
matched: number, 
/**
 * What else the proposed rule would allow, in a sentence.
 */
reach: string, } | { "cmd": "list_rules", rules: Array<RuleInfo>, } | { "cmd": "remove_rule" } | { "cmd": "list_agents", agents: Array<AgentInfo>, } | { "cmd": "list_tasks", tasks: Array<TaskInfo>, } | { "cmd": "list_cron", jobs: Array<CronJobInfo>, } | { "cmd": "set_cron_enabled" } | { "cmd": "remove_cron" } | { "cmd": "update_cron", job: CronJobInfo, } | { "cmd": "list_mcp", servers: Array<McpServerInfo>, } | { "cmd": "set_mcp_enabled" } | { "cmd": "mcp_login", 
/**
 * The access asked for (empty: the server defines none).
 */
scopes: Array<string>, } | { "cmd": "mcp_logout" } | { "cmd": "list_mcp_prompts", prompts: Array<McpPromptInfo>, } | { "cmd": "list_mcp_resources", resources: Array<McpResourceInfo>, } | { "cmd": "list_secrets", names: Array<string>, 
/**
 * Where they are kept: the OS keyring or Skald's encrypted file.
 */
store: string, } | { "cmd": "set_secret" } | { "cmd": "remove_secret" } | { "cmd": "list_plugins", plugins: Array<PluginInfo>, } | { "cmd": "configure_plugin", message: string, } | { "cmd": "settings", version: string, data_dir: string, 
/**
 * The model first, then its fallbacks.
 */
models: Array<string>, 
/**
 * Why no model can be used, if none can.
 */
model_error: string | null, 
/**
 * Where the configuration is kept.
 */
config_path: string, approval: string, 
/**
 * Which TeX bundle LaTeX previews use, and whether one can be built here.
 */
tex: TexStatus, 
/**
 * Percent of the model's window at which older turns are summarised (config.toml
 * `[agent] compact_at`; 0: only when asked).
 */
compact_at: number, 
/**
 * The daily budget in US dollars (config.toml `[budget] daily_usd`), if one is set.
 */
daily_budget_usd?: number, 
/**
 * What every model call since midnight (local time) cost.
 */
today_cost_usd: number, 
/**
 * How many agents' turns run at once (config.toml `[agent] at_once`; 0: no limit).
 */
at_once: number, 
/**
 * The rate limits each provider last stated, in this run.
 */
rate_limits: Array<RateLimitInfo>, 
/**
 * The web tools' settings and whether web search is set up.
 */
web: WebSettings, 
/**
 * Which languages have a language server here (docs/lsp.md).
 */
language_servers: Array<LanguageServerInfo>, } | { "cmd": "set_web", web: WebSettings, } | { "cmd": "set_compact_at", percent: number, } | { "cmd": "set_daily_budget", usd?: number, } | { "cmd": "set_at_once", count: number, } | { "cmd": "test_model", ok: boolean, message: string, millis: number, } | { "cmd": "local_models", 
/**
 * Whether this build can run local models.
 */
available: boolean, folder: string, installed: Array<LocalModelInfo>, 
/**
 * Recommended models not installed yet.
 */
recommended: Array<RecommendedModel>, } | { "cmd": "pull_model", 
/**
 * How to name it as a model: `local/<name>`.
 */
model: string, } | { "cmd": "build_tex_bundle", path: string, files: number, bytes: number, } | { "cmd": "configure_model", 
/**
 * The models now, the configured one first.
 */
models: Array<string>, } | { "cmd": "view", 
/**
 * The absolute path.
 */
path: string, 
/**
 * As the user would write it (relative to the session's folder when under it).
 */
display_path: string, size: number, kind: Kind, view: View, } | { "cmd": "read_page", page: Page, } | { "cmd": "latex_build", ok: boolean, 
/**
 * The PDF on the file route, when the build succeeded.
 */
pdf_url: string | null, from_cache: boolean, millis: number, errors: Array<TexError>, 
/**
 * Set when the build failed for another reason than TeX errors.
 */
message: string | null, } | { "cmd": "latex_stop", 
/**
 * Whether a build was under way.
 */
stopped: boolean, } | { "cmd": "subscribe" } | { "cmd": "unsubscribe" };

export type SessionInfo = { id: number, title: string, agent_id: string, kind: SessionKind, working_dir: string | null, created_at: number, updated_at: number, 
/**
 * A turn runs in this process now (or waits for a place: `queued`).
 */
running: boolean, 
/**
 * Its turn waits for a place among the agents that run at once (docs/board.md).
 */
queued?: boolean, 
/**
 * The chat's own model (`provider/model`); absent: the configured one.
 */
model?: string, 
/**
 * The chat's reasoning effort (low, medium, high); absent: the model's own.
 */
effort?: string, 
/**
 * The chat it was forked from (an edited message, "fork from here", a rewind).
 */
forked_from?: number, 
/**
 * The last message of that chat it copied.
 */
forked_after?: number, 
/**
 * Plan or act (docs/agent-loop.md, "Plan mode").
 */
mode: ChatMode, };

export type ChatMessage = { id: number, 
/**
 * The sub-agent frame it belongs to (absent for the chat's own agent).
 */
stack_id: number | null, role: Role, content: string, 
/**
 * The content rendered as sanitised HTML (assistant messages).
 */
html: string | null, reasoning: string | null, status: MessageStatus, 
/**
 * Written by Skald, not typed or generated (a delivered task result, say).
 */
synthetic: boolean, created_at: number, 
/**
 * The images shown with it (docs/images.md).
 */
images?: Array<ChatImage>, };

export type ToolCallInfo = { tool_call_id: string, 
/**
 * The assistant message that made the call.
 */
message_id: number | null, stack_id: number | null, name: string, arguments: JsonValue, label_short: string, label_full: string, 
/**
 * The file the call works on, for the viewer.
 */
path: string | null, status: ToolCallStatus, result: string | null, 
/**
 * The images the tool showed the model (`read_file` of an image).
 */
images?: Array<ChatImage>, };

/**
 * An item waiting on the user, as the Inbox and the chat show it.
 */
export type InboxEntry = { id: number, session_id: number, session_title: string, tool_call_id: string | null, agent_id: string, 
/**
 * 0 for the chat's own agent, more for sub-agents.
 */
depth: number, title: string, created_at: number, } & ({ "kind": "approval", "payload": ApprovalRequest } | { "kind": "question", "payload": QuestionRequest } | { "kind": "elicitation", "payload": ElicitationRequest });

/**
 * What an Inbox item asks, tagged with its kind. It is stored as the item's payload (the
 * kind in its own column) and sent as `{"kind": …, "payload": {…}}`.
 */
export type InboxRequest = { "kind": "approval", "payload": ApprovalRequest } | { "kind": "question", "payload": QuestionRequest } | { "kind": "elicitation", "payload": ElicitationRequest };

/**
 * A tool call waiting for a yes or no. Every field but the tool reads as empty when a
 * stored item lacks it (items written by older versions).
 */
export type ApprovalRequest = { tool: string, 
/**
 * As shown to people (a secret's value hidden).
 */
arguments: JsonValue, label: string, 
/**
 * Why it asks (the rule or the default that decided).
 */
reason: string, 
/**
 * For "approve all calls of this category" (MCP tools have none: their server is
 * the scope).
 */
category: ToolCategory | null, 
/**
 * What a write would change, for the diff; absent for calls that are not writes.
 */
write: WritePreview | null, 
/**
 * For a shell command: the sandbox it would run in (or that it would not).
 */
sandbox: SandboxInfo | null, };

/**
 * A file write's before and after (a unified diff is derivable from the two).
 */
export type WritePreview = { path: string, 
/**
 * The file now; absent when it does not exist or is too large to show.
 */
old: string | null, 
/**
 * The file after the write; absent when it cannot be worked out cheaply.
 */
new: string | null, };

/**
 * An agent's question (`ask_user_clarification`).
 */
export type QuestionRequest = { question: string, suggested_answers: Array<string>, title?: string, };

/**
 * A form an MCP server asks the user to fill in.
 */
export type ElicitationRequest = { server: string, message: string, 
/**
 * The form's JSON Schema, as the server sent it.
 */
schema: JsonValue, };

/**
 * A stored approval rule.
 */
export type RuleInfo = { id: number, group_name: string, tool_pattern: string, path_pattern: string | null, command_pattern: string | null, agent_id: string | null, working_dir: string | null, action: RuleAction, 
/**
 * Higher first.
 */
priority: number, note: string, 
/**
 * An allow rule for commands: what it allows runs in the sandbox with the network.
 */
network: boolean, 
/**
 * For the web tools: the host it is about (`docs.rs`, `*.python.org`,
 * `localhost:3000`; docs/web.md).
 */
domain_pattern: string | null, };

/**
 * A background task an agent started.
 */
export type TaskInfo = { id: number, 
/**
 * The chat that started it, where its result is delivered.
 */
parent_session_id: number, parent_tool_call_id: string | null, 
/**
 * The background session it works in.
 */
session_id: number | null, agent_id: string, title: string, description: string, prompt: string, status: TaskStatus, result: string | null, created_at: number, finished_at: number | null, };

/**
 * One background process, as the chat lists it.
 */
export type ProcessInfo = { 
/**
 * Its number in this Skald process (the agent's `process_id`).
 */
id: number, session_id: number, command: string, workdir: string, 
/**
 * When it started, in milliseconds since the Unix epoch.
 */
started_at: number, status: ProcessStatus, 
/**
 * How it ended ("exit code 0", "killed by signal 9"), with what the sandbox noted.
 */
ended?: string, 
/**
 * All the output it has written so far (the latest `KEPT_OUTPUT` bytes are kept).
 */
output_bytes: number, };

/**
 * Where a background process is.
 */
export type ProcessStatus = "running" | "exited" | "stopped";

/**
 * A scheduled job.
 */
export type CronJobInfo = { id: number, name: string, description: string, agent_id: string, prompt: string, 
/**
 * 5 fields, or 6 with seconds first.
 */
cron: string, 
/**
 * An IANA zone, e.g. Europe/Berlin.
 */
timezone: string, missed_policy: MissedPolicy, enabled: boolean, 
/**
 * The chat its notifications go to.
 */
home_session_id: number | null, run_context_id: number | null, working_dir: string | null, 
/**
 * Each run works in a worktree of its own (docs/worktrees.md).
 */
worktree?: boolean, 
/**
 * Milliseconds since the epoch; absent when it will not run again.
 */
next_run_at: number | null, created_at: number, updated_at: number, };

/**
 * A plugin Skald ships, on or off.
 */
export type PluginInfo = { id: string, name: string, description: string, enabled: boolean, running: boolean, 
/**
 * The user's configuration; it fits `config_schema` (user data, like tool arguments).
 */
config: JsonValue | null, 
/**
 * The JSON Schema the configuration is checked against.
 */
config_schema: JsonValue, 
/**
 * The tools it offers agents while it runs.
 */
tools: Array<string>, };

/**
 * What the desktop shell asks the UI to show, sent as its `skald://open` event: a
 * clicked notification opens the Inbox item it was about.
 */
export type OpenTarget = { "what": "inbox_item", inbox_id: number, session_id: number, };

export type LocalModelInfo = { name: string, bytes: number, };

export type RecommendedModel = { name: string, description: string, bytes: number, };

/**
 * The TeX bundle LaTeX previews use (docs/viewer.md, "Bundles").
 */
export type TexStatus = { 
/**
 * What applies, in a sentence ("offline bundle at …", "tectonic's online bundle, …").
 */
bundle: string, 
/**
 * Whether previews work without the network.
 */
offline: boolean, 
/**
 * The installed TeX Live an offline bundle can be built from, if there is one.
 */
system_tex: string | null, };

/**
 * config.toml `[web]` as Settings shows it, with what doctor says of it (docs/web.md).
 */
export type WebSettings = { 
/**
 * "" (off), "provider", "searxng", "brave" or "tavily".
 */
search: string, search_url: string, provider_search: boolean, timeout_secs: number, 
/**
 * Whether the `WEB_SEARCH_KEY` secret is stored.
 */
key_stored: boolean, 
/**
 * Whether web search works as set up.
 */
ready: boolean, 
/**
 * What applies, in a sentence ("searxng at http://…", "off").
 */
status: string, 
/**
 * What to do to set it up or fix it, when it is not ready.
 */
hint: string | null, };

/**
 * A language and the server Skald would start for it (docs/lsp.md, "Servers").
 */
export type LanguageServerInfo = { 
/**
 * As config.toml's `[lsp.commands]` names it: python, typescript, rust, go, c.
 */
language: string, 
/**
 * The server's command line as found (configured or on PATH); none if there is none.
 */
command: string | null, 
/**
 * How to get one.
 */
install: string, };

export type AgentInfo = { id: string, name: string, description: string, };

export type McpServerInfo = { name: string, enabled: boolean, 
/**
 * stdio | http
 */
transport: string, description: string, status: McpStatus, 
/**
 * The last lines of the server's log.
 */
log_tail: Array<string>, 
/**
 * A stdio server that runs in the command sandbox, and whether it has the network.
 */
sandbox: boolean, sandbox_network: boolean, };

/**
 * A server's prompt, run in a message as `/server:name ARGS` (docs/mcp.md "Prompts").
 */
export type McpPromptInfo = { server: string, name: string, title: string | null, description: string, arguments: Array<McpPromptArgumentInfo>, };

export type McpPromptArgumentInfo = { name: string, description: string, required: boolean, };

/**
 * A server's resource; `@server:uri` in a message attaches it (docs/mcp.md "Resources").
 */
export type McpResourceInfo = { server: string, uri: string, name: string, title: string | null, description: string, mime_type: string | null, };

/**
 * An image a message or a tool call shows.
 */
export type ChatImage = { 
/**
 * Hex SHA-256 of the bytes, which name the image.
 */
sha256: string, 
/**
 * image/png, image/jpeg, image/webp or image/gif.
 */
media_type: string, width: number, height: number, 
/**
 * Size of the file in bytes.
 */
bytes: number, 
/**
 * The file name it was attached as, when it had one.
 */
name?: string, };

/**
 * A model a chat can be given, and what it can do.
 */
export type ModelOption = { 
/**
 * `provider/model`, as `set_session_model` takes it.
 */
label: string, sees_images: boolean, 
/**
 * Whether it takes a reasoning effort.
 */
takes_effort: boolean, 
/**
 * The configured model (what a chat without its own uses).
 */
default: boolean, };

/**
 * One part of what fills a chat's context.
 */
export type ContextPart = { 
/**
 * system | instructions | tools | summary | messages | tool_results
 */
what: string, tokens: number, };

/**
 * A compaction: the summary that stands for the messages up to `up_to_message_id`
 * (which stay in the store and in the history).
 */
export type SummaryInfo = { up_to_message_id: number, summary: string, created_at: number, };

/**
 * A provider's rate limits as its latest response stated them (docs/models.md, "Cost and
 * limits").
 */
export type RateLimitInfo = { 
/**
 * The provider's name in config.toml (`openai`, `anthropic`, `openrouter`, …).
 */
provider: string, requests?: LimitInfo, tokens?: LimitInfo, 
/**
 * When the response came (Unix ms).
 */
seen_at: number, };

/**
 * One rate limit: the window's size, what is left, and when it is whole again (Unix ms).
 */
export type LimitInfo = { limit?: number, remaining?: number, resets_at?: number, };

export type WorktreeInfo = { id: number, name: string, 
/**
 * The chat working in it (none once that chat is deleted).
 */
session_id: number | null, 
/**
 * The person's folder it copies.
 */
source: string, 
/**
 * Its own folder, in Skald's data directory.
 */
root: string, 
/**
 * Where in it the agent works.
 */
working_dir: string, kind: WorktreeKind, 
/**
 * For a git worktree: the repository's folder, its branch, the commit it started at.
 */
repo?: string, branch?: string, base_commit?: string, 
/**
 * Its folder as it started (a checkpoint), what a review compares with.
 */
base_snapshot?: string, status: WorktreeStatus, created_at: number, 
/**
 * The best-of-N trial it is one answer of (docs/worktrees.md, "Best of N"): the
 * worktrees of one trial are shown side by side.
 */
trial?: string, 
/**
 * When its chat last worked in it (or it was made, whichever is later): what "old"
 * is measured from (`[worktrees] clean_after_days`). Filled in when listed.
 */
last_used_at?: number, 
/**
 * Whether a chat works in it in a live process now (any process): never offered for
 * cleaning up, nor discarded. Filled in when listed.
 */
in_use?: boolean, 
/**
 * The space its folder takes on disk, in bytes. Filled in when listed.
 */
disk_bytes?: number, };

/**
 * One agent on the board.
 */
export type BoardAgent = { session_id: number, title: string, agent_id: string, kind: SessionKind, state: AgentState, 
/**
 * The folder it works in (for a worktree's chat, the worktree's).
 */
folder?: string, 
/**
 * Its worktree's name, and the person's folder that worktree copies.
 */
worktree?: string, source?: string, 
/**
 * The chat's own model, when it has one.
 */
model?: string, created_at: number, updated_at: number, 
/**
 * When its latest turn started (Unix ms), if one ran.
 */
turn_started_at?: number, 
/**
 * Milliseconds it has worked: its finished turns, and the running one so far.
 */
active_ms: number, input_tokens: number, output_tokens: number, 
/**
 * US dollars, of the calls whose price is known.
 */
cost_usd: number, 
/**
 * Calls whose model had no known price.
 */
unpriced: number, changes: ChangeTally, 
/**
 * Approvals and questions waiting in the Inbox.
 */
waiting: number, 
/**
 * The start of its latest answer (at most 300 characters).
 */
last_message?: string, };

/**
 * How merging a git worktree's branch into the person's branch went (docs/worktrees.md,
 * "Commit and merge").
 */
export type MergeReport = { 
/**
 * The person's branch merged into.
 */
into: string, outcome: MergeOutcome, 
/**
 * The commit the person's branch now points at (none when up to date or clashing).
 */
commit?: string, 
/**
 * Files changed on both sides; when there is any, nothing was written.
 */
conflicts: Array<string>, };

export type MergeOutcome = "up_to_date" | "fast_forward" | "merge_commit" | "conflicts";

/**
 * What an agent is doing, as the board says it.
 */
export type AgentState = "queued" | "working" | "waiting" | "done" | "failed" | "stopped" | "interrupted" | "idle";

/**
 * The files an agent changed, added up: for a chat in a worktree, its worktree against
 * how it started; otherwise what its checkpoints recorded, from before its first change
 * to after its last.
 */
export type ChangeTally = { files: number, added: number, removed: number, };

export type WorktreeKind = "git" | "copy";

export type WorktreeStatus = "active" | "discarded";

/**
 * One file a worktree's agent changed, as a review shows it (docs/worktrees.md, "Review
 * and apply").
 */
export type FileReview = { 
/**
 * Relative to the folder, `/`-separated.
 */
path: string, status: ChangeStatus, 
/**
 * A binary file is taken or left whole: it has no hunks.
 */
binary: boolean, hunks: Array<HunkInfo>, };

/**
 * One run of changed lines of a file, chosen or not on its own.
 */
export type HunkInfo = { 
/**
 * Its number in the file's list, as `apply` takes it.
 */
index: number, 
/**
 * The first line it removes in the old file (1-based; for a pure insertion, the line
 * after which it goes) and its first line in the new one.
 */
old_start: number, new_start: number, removed: Array<string>, added: Array<string>, };

/**
 * What applying a worktree's changes did.
 */
export type ApplyReport = { 
/**
 * Files written into the person's folder (or removed from it).
 */
written: Array<string>, 
/**
 * Files that already were what applying would make them.
 */
unchanged: Array<string>, 
/**
 * Files changed on both sides in the same place (or binary files changed on both):
 * when there is any, nothing is written.
 */
conflicts: Array<ConflictInfo>, 
/**
 * The checkpoint of the apply, to undo it (`skald checkpoints restore ID`).
 */
checkpoint_id?: number, };

export type ConflictInfo = { path: string, 
/**
 * The file with git's conflict markers, when both sides are text.
 */
markers?: string, };

/**
 * The hunks of one file to apply: all of them (none given), or those numbered.
 */
export type FileChoice = { path: string, hunks?: Array<number>, };

/**
 * How a chat's agent works (docs/agent-loop.md, "Plan mode").
 */
export type ChatMode = "act" | "plan";
