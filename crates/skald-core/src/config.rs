//! `config.toml` in the data directory: created on first run with every default written
//! out as a comment, so a user sees what can be changed without reading docs.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The file written on first run. Every setting is commented out at its default value; a
/// test checks that uncommenting all of them yields exactly `Config::default()`.
pub const DEFAULT_CONFIG_TOML: &str = r#"# Skald configuration.
# Every setting below is commented out at its default value: uncomment a line to change it.
# Unknown keys are refused, so a typo is reported instead of silently ignored.

# [log]
# Verbosity of the log files in <data dir>/logs: error, warn, info, debug or trace.
# The SKALD_LOG environment variable overrides it (same syntax as RUST_LOG).
# level = "info"
# How many daily log files to keep.
# max_files = 7

# [agent]
# Most model rounds in one turn before it ends as "exhausted".
# max_rounds = 20
# How full the context may get (percent of the window) before older turns are summarised;
# 0: only when asked (compact now).
# compact_at = 80
# How many agents work at once in the app (more wait in line); 0: no limit.
# at_once = 4

# [budget]
# A daily limit on what model calls cost, in US dollars (docs/models.md, "Cost and limits"):
# past it, a turn asks before it goes on. None by default, e.g.
#   daily_usd = 5.0

# [models]
# The model when neither --model nor SKALD_MODEL says: `provider/model`, e.g.
#   default = "anthropic/claude-sonnet-4-5"
# Models tried in order when the chosen one fails (at most 3 are used per round), e.g.
#   fallbacks = ["openai/gpt-4.1-mini", "ollama/llama3.2"]
# fallbacks = []
# The context window assumed for the models, in tokens. Older turns are summarised when
# a conversation nears it.
# context_window = 128000
# Which models can see images, where Skald guesses wrong: by provider/model or model name,
# a trailing * matching any rest (docs/images.md). In a table of its own:
#   [models.vision]
#   "ollama/my-llava*" = true
#   "openai/some-text-model" = false
# What models cost you, in US dollars per million tokens, where Skald's table of published
# prices is wrong or lacks the model (docs/models.md, "Cost"):
#   [models.prices]
#   "openai/gpt-4.1" = { input = 2.0, output = 8.0, cached_input = 0.5 }

# [mcp]
# Seconds an MCP server has to start and answer initialize (a turn never waits for it;
# only an agent activating a server that is still connecting does).
# connect_timeout_secs = 30
# Seconds an MCP tool call may go without an answer or a progress notification.
# call_timeout_secs = 120
# The HTTPS URL of a client ID metadata document describing Skald (SEP-991), for OAuth
# logins to servers whose authorization server accepts one, e.g.
#   client_metadata_url = "https://example.org/skald-client.json"
# Without it Skald registers itself with each authorization server (dynamic client
# registration).
# The percentage of the context window the activated servers' tool definitions may take;
# past it, agents search them (search_mcp_tools) instead of carrying every one. 0 turns
# the search off.
# tool_search_percent = 10

# [sandbox]
# How agents' shell commands are confined (docs/sandbox.md): "off" (each runs as you,
# after approval), "read-only" (they write only a temporary folder of their own) or
# "workspace-write" (also the chat's folder and its write grants). Secrets, credential
# folders and Skald's data are hidden from them either way.
# mode = "workspace-write"
# Whether sandboxed commands may use the network.
# network = false
# "unsandboxed": a command no rule names runs in the sandbox without asking; "always":
# every command asks, as with no sandbox.
# ask = "unsandboxed"

# [web]
# The web tools (docs/web.md). web_fetch asks per host (the Inbox offers "always allow
# docs.rs"); pages at local or private addresses are refused unless a rule names the host.
# timeout_secs = 30
# max_bytes = 5242880
# web_search is off until a search is set up: "provider" (the chat's provider's own
# search, where it has one: Anthropic, OpenAI), "searxng" (with search_url, the address
# of an instance with its JSON format on), "brave" or "tavily" (their key: skald secrets
# set WEB_SEARCH_KEY). With an API set up, chats on a provider that searches by itself
# still use the provider's search, unless provider_search is false.
# search = ""
# search_url = ""
# provider_search = true

# [lsp]
# Language servers for the diagnostics, go_to_definition and find_references tools
# (docs/lsp.md): found on PATH (pyright-langserver or basedpyright-langserver,
# typescript-language-server, rust-analyzer, gopls, clangd), started per folder when an
# agent first asks, run in the chat's sandbox without the network, stopped after
# idle_secs. Another server for a language goes in [lsp.commands], for example
#   python = ["basedpyright-langserver", "--stdio"]
# enabled = true
# idle_secs = 600

# [worktrees]
# Days a worktree may go unused before the app offers to clean it up (it asks first);
# 0: never offered.
# clean_after_days = 14

# [checkpoints]
# Before and after each call that can change files (the write tools, execute_cmd) the
# chat's folder is recorded in a shadow repository in Skald's data directory, so any change
# can be undone (docs/checkpoints.md). A folder over these limits is not checkpointed, and
# the chat says so; a file over max_file_mib is left out of each checkpoint.
# enabled = true
# Whether the folder's directories are watched (Linux) so a checkpoint lists only what
# changed; off, every checkpoint walks the folder.
# watch = true
# max_files = 50000
# max_mib = 1024
# max_file_mib = 10

# [desktop]
# How the desktop app's window draws its page (Linux; docs/desktop.md): "gpu" composites
# it with OpenGL, "cpu" paints it in software, "auto" uses the GPU when the system has a
# graphics driver's render node (/dev/dri/renderD*) and paints in software otherwise,
# where OpenGL would itself run on the CPU, slower and heavier. Read at start.
# rendering = "auto"

# More OpenAI-compatible (or Anthropic, Ollama) servers, used as `<name>/<model>`. Keys
# stay in environment variables, never in this file. For example:
#   [providers.openrouter]
#   kind = "openai"
#   base_url = "https://openrouter.ai/api/v1"
#   api_key_env = "OPENROUTER_API_KEY"
"#;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub log: LogConfig,
    pub agent: AgentConfig,
    pub budget: BudgetConfig,
    pub models: ModelsConfig,
    pub mcp: McpConfig,
    pub sandbox: SandboxConfig,
    pub checkpoints: CheckpointsConfig,
    pub worktrees: WorktreesConfig,
    pub web: WebConfig,
    pub lsp: LspConfig,
    pub desktop: DesktopConfig,
    /// The person's hooks, by event (docs/hooks.md).
    pub hooks: crate::hooks::HooksConfig,
    pub providers: std::collections::BTreeMap<String, ProviderConfig>,
}

/// `[lsp]`: language servers (docs/lsp.md).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LspConfig {
    /// Start language servers for the diagnostics, go_to_definition and find_references
    /// tools.
    pub enabled: bool,
    /// Seconds a server may go unasked before it is stopped.
    pub idle_secs: u64,
    /// A server's command line per language (python, typescript, rust, go, c), instead of
    /// the usual ones found on PATH.
    pub commands: std::collections::BTreeMap<String, Vec<String>>,
}

impl Default for LspConfig {
    fn default() -> Self {
        LspConfig {
            enabled: true,
            idle_secs: 600,
            commands: Default::default(),
        }
    }
}

impl LspConfig {
    /// What the tools' scope carries.
    pub fn setup(&self) -> skald_api::LspSetup {
        skald_api::LspSetup {
            enabled: self.enabled,
            commands: self.commands.clone(),
            idle: std::time::Duration::from_secs(self.idle_secs.max(10)),
            ..Default::default()
        }
    }
}

/// `[web]`: the web tools (docs/web.md).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WebConfig {
    /// The longest one fetch or search may take, redirects included.
    pub timeout_secs: u64,
    /// Bytes of a page read at most; a longer page is read that far and says so.
    pub max_bytes: usize,
    /// How web_search searches: "" (off), "provider", "searxng", "brave", "tavily".
    pub search: String,
    /// Where the search API answers: required for SearXNG, the API's own address
    /// otherwise.
    pub search_url: String,
    /// With a search API set up, chats on a provider that searches by itself use its
    /// search instead.
    pub provider_search: bool,
}

/// The secret web_search sends to a search API that needs a key.
pub const WEB_SEARCH_KEY: &str = "WEB_SEARCH_KEY";

impl Default for WebConfig {
    fn default() -> Self {
        WebConfig {
            timeout_secs: 30,
            max_bytes: 5 * 1024 * 1024,
            search: String::new(),
            search_url: String::new(),
            provider_search: true,
        }
    }
}

impl WebConfig {
    /// Whether the chat's provider's own search is what web search means for `provider`
    /// (a provider kind that has one).
    pub fn uses_provider_search(&self) -> bool {
        self.search == "provider" || (!self.search.is_empty() && self.provider_search)
    }

    /// The search API set up, with its endpoint, if any; `Err` says what is wrong with
    /// the setting (doctor prints it).
    pub fn search_api(&self) -> Result<Option<(skald_web::search::Backend, String)>, String> {
        let name = self.search.trim();
        if name.is_empty() || name == "provider" {
            return Ok(None);
        }
        let backend = skald_web::search::Backend::parse(name).ok_or_else(|| {
            format!("[web] search = \"{name}\" is not one of provider, searxng, brave, tavily")
        })?;
        let endpoint = match (self.search_url.trim(), backend.default_endpoint()) {
            ("", Some(default)) => default.to_string(),
            ("", None) => {
                return Err(format!(
                    "[web] search = \"{name}\" needs search_url (the instance's address)"
                ));
            }
            (url, _) => url.to_string(),
        };
        Ok(Some((backend, endpoint)))
    }
}

/// `[worktrees]`: agents' own copies of folders (docs/worktrees.md).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WorktreesConfig {
    /// Days a worktree may go unused before Skald offers to clean it up (it asks first,
    /// never removes one by itself); 0: never offered.
    pub clean_after_days: u32,
}

impl Default for WorktreesConfig {
    fn default() -> Self {
        WorktreesConfig {
            clean_after_days: 14,
        }
    }
}

/// `[checkpoints]`: recording the chat's folder around each call that can change it
/// (docs/checkpoints.md).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CheckpointsConfig {
    pub enabled: bool,
    /// Watch the folder's directories (Linux), so a checkpoint lists only what changed.
    pub watch: bool,
    /// A folder with more files than this is not checkpointed.
    pub max_files: usize,
    /// Nor one whose files take more than this many MiB.
    pub max_mib: u64,
    /// A file larger than this many MiB is left out of each checkpoint, with a note.
    pub max_file_mib: u64,
}

impl Default for CheckpointsConfig {
    fn default() -> Self {
        let limits = skald_checkpoint::Limits::default();
        CheckpointsConfig {
            enabled: true,
            watch: true,
            max_files: limits.max_files,
            max_mib: limits.max_bytes >> 20,
            max_file_mib: limits.max_file_bytes >> 20,
        }
    }
}

impl CheckpointsConfig {
    /// The settings of the engines of the data directory `data_dir`.
    pub fn settings(&self, data_dir: &std::path::Path) -> CheckpointSettings {
        CheckpointSettings {
            data_dir: self.enabled.then(|| data_dir.to_path_buf()),
            watch: self.watch,
            limits: skald_checkpoint::Limits {
                max_files: self.max_files.max(1),
                max_bytes: self.max_mib.max(1).saturating_mul(1 << 20),
                max_file_bytes: self.max_file_mib.max(1).saturating_mul(1 << 20),
            },
        }
    }
}

/// Where checkpoints are kept and how large a folder may be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointSettings {
    /// The data directory, whose `checkpoints/` holds the shadow repositories; none turns
    /// checkpoints off (config.toml `[checkpoints] enabled = false`, or an engine built
    /// without a data directory, as in-process tests are).
    pub data_dir: Option<PathBuf>,
    /// Whether folders are watched between checkpoints (`[checkpoints] watch`).
    pub watch: bool,
    pub limits: skald_checkpoint::Limits,
}

impl Default for CheckpointSettings {
    fn default() -> Self {
        CheckpointSettings {
            data_dir: None,
            watch: true,
            limits: skald_checkpoint::Limits::default(),
        }
    }
}

/// `[desktop]`: the desktop app's window (docs/desktop.md).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct DesktopConfig {
    pub rendering: Rendering,
}

/// How the desktop window draws its page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rendering {
    /// The GPU when the system has a graphics driver, software otherwise.
    #[default]
    Auto,
    /// Composited with OpenGL, whatever draws it.
    Gpu,
    /// Painted in software.
    Cpu,
}

impl Rendering {
    /// Whether the page is composited on the GPU, given the system's device folder for
    /// graphics (`/dev/dri`). Without a render node, OpenGL is Mesa's software renderer:
    /// compositing through it took the web process 115 MB more and doubled the start
    /// against WebKit's own software painting (docs/performance.md), for no smoother
    /// scrolling.
    pub fn uses_gpu(self, dri: &Path) -> bool {
        match self {
            Rendering::Gpu => true,
            Rendering::Cpu => false,
            Rendering::Auto => std::fs::read_dir(dri).is_ok_and(|entries| {
                entries.flatten().any(|e| {
                    e.file_name()
                        .to_str()
                        .is_some_and(|n| n.starts_with("renderD"))
                })
            }),
        }
    }
}

/// `[sandbox]`: how agents' commands are confined (docs/sandbox.md).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SandboxConfig {
    /// `off`, `read-only` or `workspace-write` (the default).
    pub mode: skald_api::SandboxMode,
    /// Whether sandboxed commands may use the network.
    pub network: bool,
    /// `sandboxed` (the default): a command no rule names runs in the sandbox without
    /// asking; `always`: every command asks, as without a sandbox.
    pub ask: SandboxAsk,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        SandboxConfig {
            mode: skald_api::SandboxMode::WorkspaceWrite,
            network: false,
            ask: SandboxAsk::Unsandboxed,
        }
    }
}

/// When a command asks for approval although it would run sandboxed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxAsk {
    /// Only commands that would run outside the sandbox (or that a rule says must ask).
    #[default]
    Unsandboxed,
    /// Every command.
    Always,
}

impl SandboxConfig {
    /// The settings a run starts from.
    pub fn settings(&self) -> SandboxSettings {
        SandboxSettings {
            mode: self.mode,
            network: self.network,
            always_ask: self.ask == SandboxAsk::Always,
        }
    }
}

/// How a run's commands are confined and when they ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SandboxSettings {
    pub mode: skald_api::SandboxMode,
    /// Whether sandboxed commands may use the network.
    pub network: bool,
    /// Whether every command asks, sandboxed or not (today's behaviour without a sandbox).
    pub always_ask: bool,
}

/// A run context made by hand (a direct `skald tool` run, a test) has no sandbox: the
/// sandbox is on where a run's settings say so, and config.toml's default says
/// `workspace-write` (see `SandboxConfig`).
impl Default for SandboxSettings {
    fn default() -> Self {
        SandboxSettings {
            mode: skald_api::SandboxMode::Off,
            network: false,
            always_ask: false,
        }
    }
}

impl SandboxSettings {
    /// These settings with a chat's own (`None`: keep these).
    pub fn with_chat(self, mode: Option<skald_api::SandboxMode>, network: Option<bool>) -> Self {
        SandboxSettings {
            mode: mode.unwrap_or(self.mode),
            network: network.unwrap_or(self.network),
            always_ask: self.always_ask,
        }
    }

    /// Whether this run's commands run confined: a mode is set and the machine can.
    pub fn confines(&self) -> bool {
        self.mode != skald_api::SandboxMode::Off && skald_sandbox::availability().is_ready()
    }

    /// Whether a command no rule names runs, confined, without asking.
    pub fn runs_unasked(&self) -> bool {
        self.confines() && !self.always_ask
    }

    /// What a chat shows about it.
    pub fn info(&self) -> skald_api::SandboxInfo {
        let availability = skald_sandbox::availability();
        let net = if self.network { "on" } else { "off" };
        let (available, note) = match (self.mode, availability) {
            (skald_api::SandboxMode::Off, _) => (
                availability.is_ready(),
                "Sandbox off: commands run as you, each after your approval.".to_string(),
            ),
            (mode, skald_sandbox::Availability::Ready { .. }) => (
                true,
                format!(
                    "Sandbox {mode}: commands write only {}, network {net}, secrets hidden; {}.",
                    if mode == skald_api::SandboxMode::WorkspaceWrite {
                        "this chat's folder, its write grants and a private temporary folder"
                    } else {
                        "a private temporary folder"
                    },
                    if self.always_ask {
                        "each asks first"
                    } else {
                        "they run without asking unless a rule says otherwise"
                    }
                ),
            ),
            (mode, skald_sandbox::Availability::Unavailable { why }) => (
                false,
                format!(
                    "Sandbox {mode} is not available here ({why}): every command asks and runs \
                     as you."
                ),
            ),
        };
        skald_api::SandboxInfo {
            mode: self.mode,
            network: self.network,
            available,
            always_ask: self.always_ask,
            note,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AgentConfig {
    pub max_rounds: usize,
    /// How full the context may get, in percent of the model's window, before older turns
    /// are summarised (docs/agent-loop.md, "Long conversations"); 0 never does it unasked.
    pub compact_at: u8,
    /// How many agents' turns run at once in the app or `skald serve`; more wait in line
    /// (docs/board.md, "Agents at once"). 0: no limit.
    pub at_once: usize,
}

impl Default for AgentConfig {
    fn default() -> Self {
        AgentConfig {
            max_rounds: 20,
            compact_at: 80,
            at_once: crate::slots::DEFAULT_AT_ONCE,
        }
    }
}

/// `[budget]`: what model calls may cost (docs/models.md, "Cost and limits").
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BudgetConfig {
    /// US dollars a day (from local midnight); past it, a turn asks before it goes on.
    pub daily_usd: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ModelsConfig {
    pub default: Option<String>,
    pub fallbacks: Vec<String>,
    pub context_window: usize,
    /// Which models can see images, by `provider/model` or model name (a trailing `*`
    /// matches any rest), where what Skald knows of them is wrong or missing.
    pub vision: std::collections::BTreeMap<String, bool>,
    /// What models cost, in US dollars per million tokens, by `provider/model` or model
    /// name (a trailing `*` matches any rest): over Skald's table of published prices.
    pub prices: std::collections::BTreeMap<String, skald_llm::prices::Price>,
}

impl Default for ModelsConfig {
    fn default() -> Self {
        ModelsConfig {
            default: None,
            fallbacks: Vec::new(),
            context_window: 128_000,
            vision: std::collections::BTreeMap::new(),
            prices: std::collections::BTreeMap::new(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct McpConfig {
    pub connect_timeout_secs: u64,
    pub call_timeout_secs: u64,
    pub client_metadata_url: Option<String>,
    pub tool_search_percent: u8,
}

impl Default for McpConfig {
    fn default() -> Self {
        McpConfig {
            connect_timeout_secs: 30,
            call_timeout_secs: 120,
            client_metadata_url: None,
            tool_search_percent: 10,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    /// openai | anthropic | ollama: the protocol it speaks.
    pub kind: String,
    pub base_url: String,
    #[serde(default)]
    pub api_key_env: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LogConfig {
    pub level: String,
    pub max_files: usize,
}

impl Default for LogConfig {
    fn default() -> Self {
        LogConfig {
            level: "info".to_string(),
            max_files: 7,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write {path}: {message}")]
    Write { path: PathBuf, message: String },
    #[error("{path} is not valid: {message}")]
    Parse { path: PathBuf, message: String },
}

/// Makes `provider/model` the default model in the config file at `path`, with the
/// provider's protocol, address and the variable (or secret) its key is read from. Only
/// those keys change: the rest of the file, comments included, stays as it was. The new
/// file is checked before it replaces the old one, atomically.
pub fn set_default_model(
    path: &Path,
    provider: &str,
    p: Option<&ProviderConfig>,
    model: &str,
) -> Result<Config, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let parse_err = |message: String| ConfigError::Parse {
        path: path.to_path_buf(),
        message,
    };
    if let Some(p) = p
        && skald_llm::ProviderKind::parse(&p.kind).is_none()
    {
        return Err(parse_err(format!(
            "a provider's kind is openai, anthropic, ollama or local, not `{}`",
            p.kind
        )));
    }
    let mut doc: toml_edit::DocumentMut = text.parse().map_err(|e| parse_err(format!("{e}")))?;
    let models = doc
        .entry("models")
        .or_insert(toml_edit::table())
        .as_table_mut()
        .ok_or_else(|| parse_err("[models] is not a table".into()))?;
    models["default"] = toml_edit::value(format!("{provider}/{model}"));
    // Local models need no provider entry: their folder is the data directory's.
    let Some(p) = p else {
        return write_config(path, doc.to_string(), parse_err);
    };
    let providers = doc
        .entry("providers")
        .or_insert(toml_edit::table())
        .as_table_mut()
        .ok_or_else(|| parse_err("[providers] is not a table".into()))?;
    providers.set_implicit(true);
    let mut t = toml_edit::Table::new();
    t["kind"] = toml_edit::value(p.kind.as_str());
    t["base_url"] = toml_edit::value(p.base_url.as_str());
    if let Some(k) = &p.api_key_env {
        t["api_key_env"] = toml_edit::value(k.as_str());
    }
    providers[provider] = toml_edit::Item::Table(t);
    write_config(path, doc.to_string(), parse_err)
}

/// Sets `[table] key` in the config file at `path` to `value`, or removes it (none). Only
/// that key changes: the rest of the file, comments included, stays as it was; the new
/// file is checked (a value the key does not take is refused) before it replaces the old
/// one, atomically.
pub fn set_value(
    path: &Path,
    table: &str,
    key: &str,
    value: Option<toml_edit::Value>,
) -> Result<Config, ConfigError> {
    set_values(path, table, vec![(key, value)])
}

/// `set_value` for several keys of one table, written at once: the file holds all of
/// them or none.
pub fn set_values(
    path: &Path,
    table: &str,
    values: Vec<(&str, Option<toml_edit::Value>)>,
) -> Result<Config, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let parse_err = |message: String| ConfigError::Parse {
        path: path.to_path_buf(),
        message,
    };
    let mut doc: toml_edit::DocumentMut = text.parse().map_err(|e| parse_err(format!("{e}")))?;
    let t = doc
        .entry(table)
        .or_insert(toml_edit::table())
        .as_table_mut()
        .ok_or_else(|| parse_err(format!("[{table}] is not a table")))?;
    for (key, value) in values {
        match value {
            Some(v) => t[key] = toml_edit::Item::Value(v),
            None => {
                t.remove(key);
            }
        }
    }
    write_config(path, doc.to_string(), parse_err)
}

/// Writes `new` after checking it parses, atomically.
fn write_config(
    path: &Path,
    new: String,
    parse_err: impl Fn(String) -> ConfigError,
) -> Result<Config, ConfigError> {
    let config = Config::parse(&new).map_err(parse_err)?;
    skald_base::atomic::write_atomic(path, new.as_bytes()).map_err(|e| ConfigError::Write {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    crate::paths::keep_private(path);
    Ok(config)
}

impl Config {
    /// Reads `path`, first writing the commented defaults there if it does not exist.
    pub fn load_or_create(path: &Path) -> Result<Config, ConfigError> {
        if !path.exists() {
            // Atomic, so a crash never leaves a half-written config.
            skald_base::atomic::write_atomic(path, DEFAULT_CONFIG_TOML.as_bytes()).map_err(
                |e| ConfigError::Write {
                    path: path.to_path_buf(),
                    message: e.to_string(),
                },
            )?;
            crate::paths::keep_private(path);
        }
        Config::load(path)
    }

    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Config::parse(&text).map_err(|message| ConfigError::Parse {
            path: path.to_path_buf(),
            message,
        })
    }

    /// Parses TOML text; the error names the line and the key.
    pub fn parse(text: &str) -> Result<Config, String> {
        toml::from_str(text).map_err(|e| e.to_string().trim_end().to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setting_the_default_model_keeps_the_rest_of_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(
            &path,
            "# my settings\n[agent]\nmax_rounds = 7 # enough\n\n[models]\nfallbacks = [\"ollama/m\"]\n",
        )
        .unwrap();
        let p = ProviderConfig {
            kind: "openai".into(),
            base_url: "http://127.0.0.1:9/v1".into(),
            api_key_env: Some("OPENAI_API_KEY".into()),
        };
        let cfg = set_default_model(&path, "openai", Some(&p), "gpt-x").unwrap();
        assert_eq!(cfg.models.default.as_deref(), Some("openai/gpt-x"));
        assert_eq!(cfg.providers["openai"], p);
        assert_eq!(cfg.agent.max_rounds, 7);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("# my settings\n"), "{text}");
        assert!(text.contains("max_rounds = 7 # enough"), "{text}");
        assert_eq!(Config::load(&path).unwrap(), cfg);
        // A bad provider kind is refused and the file is left alone.
        let bad = ProviderConfig {
            kind: "nope".into(),
            ..p
        };
        let err = set_default_model(&path, "x", Some(&bad), "m").unwrap_err();
        assert!(
            err.to_string()
                .contains("openai, anthropic, ollama or local"),
            "{err}"
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    }

    #[test]
    fn rendering_uses_the_gpu_only_where_a_driver_offers_a_render_node() {
        let dri = tempfile::tempdir().unwrap();
        let missing = dri.path().join("absent");
        // No /dev/dri at all (a VM without a GPU, a container), or one with only a
        // display node: software.
        assert!(!Rendering::Auto.uses_gpu(&missing));
        std::fs::write(dri.path().join("card0"), "").unwrap();
        assert!(!Rendering::Auto.uses_gpu(dri.path()));
        std::fs::write(dri.path().join("renderD128"), "").unwrap();
        assert!(Rendering::Auto.uses_gpu(dri.path()));
        // The person's choice wins either way.
        assert!(Rendering::Gpu.uses_gpu(&missing));
        assert!(!Rendering::Cpu.uses_gpu(dri.path()));
        let cfg = Config::parse("[desktop]\nrendering = \"cpu\"\n").unwrap();
        assert_eq!(cfg.desktop.rendering, Rendering::Cpu);
        let err = Config::parse("[desktop]\nrendering = \"fast\"\n").unwrap_err();
        assert!(err.contains("auto") && err.contains("cpu"), "{err}");
    }

    #[test]
    fn first_run_writes_commented_defaults_that_parse_to_default() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("config.toml");
        let cfg = Config::load_or_create(&path).unwrap();
        assert_eq!(cfg, Config::default());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), DEFAULT_CONFIG_TOML);
    }

    #[test]
    fn uncommenting_every_setting_gives_the_defaults() {
        // Lines of the form `# key = value` or `# [table]` are settings; indented ones are
        // examples; others are prose.
        let uncommented: String = DEFAULT_CONFIG_TOML
            .lines()
            .map(|line| match line.strip_prefix("# ") {
                Some(rest)
                    if !rest.starts_with(' ')
                        && (rest.starts_with('[') || rest.contains(" = ")) =>
                {
                    rest
                }
                _ => line,
            })
            .map(|l| format!("{l}\n"))
            .collect();
        assert!(uncommented.contains("\n[log]\n"));
        assert!(uncommented.contains("\n[models]\n"));
        assert_eq!(Config::parse(&uncommented).unwrap(), Config::default());
    }

    #[test]
    fn an_existing_file_is_not_overwritten() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("config.toml");
        std::fs::write(&path, "[log]\nlevel = \"debug\"\n").unwrap();
        let cfg = Config::load_or_create(&path).unwrap();
        assert_eq!(cfg.log.level, "debug");
        assert_eq!(cfg.log.max_files, 7);
    }

    #[test]
    fn models_and_providers_parse() {
        let cfg = Config::parse(
            "[models]\ndefault = \"openrouter/x/y\"\nfallbacks = [\"ollama/m\"]\n\
             [providers.openrouter]\nkind = \"openai\"\nbase_url = \"https://o/api/v1\"\napi_key_env = \"OR_KEY\"\n",
        )
        .unwrap();
        assert_eq!(cfg.models.default.as_deref(), Some("openrouter/x/y"));
        assert_eq!(cfg.models.fallbacks, ["ollama/m"]);
        assert_eq!(
            cfg.providers["openrouter"].api_key_env.as_deref(),
            Some("OR_KEY")
        );
        assert_eq!(cfg.agent.max_rounds, 20);
    }

    #[test]
    fn typos_and_bad_types_are_reported_with_location() {
        let err = Config::parse("[log]\nlevl = \"debug\"\n").unwrap_err();
        assert!(err.contains("levl"), "{err}");
        assert!(err.contains("line 2"), "{err}");
        let err = Config::parse("[log]\nmax_files = \"many\"\n").unwrap_err();
        assert!(err.contains("max_files") || err.contains("line 2"), "{err}");
    }

    #[test]
    fn one_value_is_set_and_removed_and_the_rest_of_the_file_stays() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("config.toml");
        Config::load_or_create(&path).unwrap();
        let c = set_value(&path, "agent", "compact_at", Some(60.into())).unwrap();
        assert_eq!(c.agent.compact_at, 60);
        let c = set_value(&path, "budget", "daily_usd", Some(2.5.into())).unwrap();
        assert_eq!((c.budget.daily_usd, c.agent.compact_at), (Some(2.5), 60));
        let text = std::fs::read_to_string(&path).unwrap();
        // The commented defaults are still there.
        assert!(text.contains("# max_rounds = 20"), "{text}");
        let c = set_value(&path, "budget", "daily_usd", None).unwrap();
        assert_eq!(c.budget.daily_usd, None);
        assert_eq!(Config::load(&path).unwrap(), c);
        // A value the key does not take is refused, and the file is left as it was.
        let before = std::fs::read_to_string(&path).unwrap();
        let err = set_value(&path, "agent", "compact_at", Some(300.into())).unwrap_err();
        assert!(err.to_string().contains("compact_at"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
    }
}
