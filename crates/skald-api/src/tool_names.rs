//! Names of every system and built-in tool, defined once (docs/tools.md,
//! "The contract (`skald-api`)"). Never write these strings anywhere else: a rename is then
//! a one-line change and a typo a compile error instead of a silent dispatch miss.

// Synthetic tools, injected by the engine outside the registry.
pub const EXECUTE_TASK: &str = "execute_task";
pub const EXECUTE_SUBTASK: &str = "execute_subtask";
pub const UPDATE_SCRATCHPAD: &str = "update_scratchpad";
pub const WRITE_TODOS: &str = "write_todos";
pub const ASK_USER_CLARIFICATION: &str = "ask_user_clarification";
pub const ACTIVATE_TOOLS: &str = "activate_tools";
pub const NOTIFY: &str = "notify";
pub const SHOW_FILE_TO_USER: &str = "show_file_to_user";
pub const IMAGE_GENERATE: &str = "image_generate";
/// Legacy alias of `execute_subtask`, still recognised when labelling old histories.
pub const RUN_SUBTASK: &str = "run_subtask";
pub const READ_AGENT_RESULT: &str = "read_agent_result";
/// Ends plan mode with the plan, once the person approves it (docs/agent-loop.md, "Plan mode").
pub const EXIT_PLAN_MODE: &str = "exit_plan_mode";

// Registry tools: shell.
pub const EXECUTE_CMD: &str = "execute_cmd";
pub const RESTART: &str = "restart";
/// Reads or stops a background process `execute_cmd` started (docs/processes.md).
pub const CHECK_PROCESS: &str = "check_process";

// Registry tools: filesystem.
pub const LIST_FILES: &str = "list_files";
pub const READ_FILE: &str = "read_file";
pub const WRITE_FILE: &str = "write_file";
pub const EDIT_FILE: &str = "edit_file";
pub const INSERT_AT_LINE: &str = "insert_at_line";
pub const REPLACE_LINES: &str = "replace_lines";
pub const SEARCH_FILE: &str = "search_file";
pub const GREP_FILES: &str = "grep_files";
pub const GET_AST_OUTLINE: &str = "get_ast_outline";

// Registry tools: the web (docs/web.md).
pub const WEB_FETCH: &str = "web_fetch";
pub const WEB_SEARCH: &str = "web_search";

// Registry tools: language servers (docs/lsp.md).
pub const DIAGNOSTICS: &str = "diagnostics";
pub const GO_TO_DEFINITION: &str = "go_to_definition";
pub const FIND_REFERENCES: &str = "find_references";

// Registry tools: introspection.
pub const LIST_ITEMS: &str = "list_items";
pub const READ_NOTIFICATION: &str = "read_notification";
pub const IMAGE_GENERATE_PROVIDERS_LIST: &str = "image_generate_providers_list";

// Registry tools: config (the lazy `config` group).
pub const REGISTER_MCP: &str = "register_mcp";
pub const DELETE_MCP: &str = "delete_mcp";
pub const TOGGLE_ITEM: &str = "toggle_item";
pub const DELETE_CRON_JOB: &str = "delete_cron_job";
pub const CONFIGURE_PLUGIN: &str = "configure_plugin";
pub const SET_SECRET: &str = "set_secret";
pub const LIST_SECRETS: &str = "list_secrets";
/// Offered only while an activated MCP server has resources.
pub const READ_MCP_RESOURCE: &str = "read_mcp_resource";
/// Offered instead of the activated servers' tools when there are too many of them.
pub const SEARCH_MCP_TOOLS: &str = "search_mcp_tools";

/// The reserved group name that `activate_tools` accepts for the Config-category tools.
pub const CONFIG_GROUP: &str = "config";

/// Prefix of every MCP tool name: `mcp__<server>__<tool>`.
pub const MCP_PREFIX: &str = "mcp__";
