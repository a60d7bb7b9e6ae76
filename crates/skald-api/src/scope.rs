//! The per-run facts a tool may need beyond its arguments.
//!
//! `Tool::execute` receives only its JSON arguments (docs/tools.md,
//! "The contract (`skald-api`)"), yet relative paths must resolve against the *run's*
//! working directory, not the process's: two sessions with different folders share one
//! registry. The driver therefore runs each execution inside `ToolScope::run`, and a tool
//! reads `ToolScope::current()` when it starts. A tool that moves work to a blocking thread
//! must read the scope first and move it along, because task-locals do not cross
//! `spawn_blocking`.

use std::future::Future;
use std::path::{Path, PathBuf};

tokio::task_local! {
    static SCOPE: ToolScope;
}

/// What a tool invocation knows about the run it belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolScope {
    working_dir: PathBuf,
    excluded: Vec<PathBuf>,
    hidden_env: Vec<String>,
    sandbox: crate::CommandSandbox,
    editor: Option<crate::editor::EditorAccess>,
    cache_dir: Option<PathBuf>,
    processes: Option<ProcessSlot>,
    checked_path: Option<PathBuf>,
    images: Option<ImageSink>,
    web: WebAccess,
    lsp: LspSetup,
}

/// How the language-server tools find and keep servers (docs/lsp.md): config.toml `[lsp]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LspSetup {
    /// `[lsp] enabled`: with it off, no server is started and edits carry no diagnostics.
    pub enabled: bool,
    /// A server command line per language (`[lsp.commands] python = [...]`), instead of
    /// the usual ones found on PATH.
    pub commands: std::collections::BTreeMap<String, Vec<String>>,
    /// How long an edit waits for the file's diagnostics before returning without them.
    pub edit_wait: std::time::Duration,
    /// How long a server may go unasked before it is stopped.
    pub idle: std::time::Duration,
    /// Whether a write may start the file's server to check what it wrote: only where the
    /// gate would let `diagnostics` on that file run unasked (the sandbox confines it, no
    /// rule denies or asks for it). Otherwise an edit uses a server already running.
    pub edits_may_start: bool,
}

impl Default for LspSetup {
    fn default() -> Self {
        LspSetup {
            enabled: true,
            commands: Default::default(),
            edit_wait: std::time::Duration::from_secs(3),
            idle: std::time::Duration::from_secs(600),
            edits_may_start: false,
        }
    }
}

/// What the web tools may do in this call (docs/web.md): set by the person in config.toml
/// `[web]` and by their rules, never by the model.
#[derive(Clone, PartialEq, Eq)]
pub struct WebAccess {
    /// Host patterns the rules that allow this call name (`--domain`), without a `*`:
    /// only these may be reached at a local, private or link-local address.
    pub named_hosts: Vec<String>,
    /// The longest one fetch may take, redirects included.
    pub timeout: std::time::Duration,
    /// Bytes of a page read at most.
    pub max_bytes: usize,
    /// The search API web_search uses, if one is set up.
    pub search: Option<WebSearchSetup>,
}

impl Default for WebAccess {
    fn default() -> Self {
        WebAccess {
            named_hosts: Vec::new(),
            timeout: std::time::Duration::from_secs(30),
            max_bytes: 5 * 1024 * 1024,
            search: None,
        }
    }
}

impl std::fmt::Debug for WebAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebAccess")
            .field("named_hosts", &self.named_hosts)
            .field("timeout", &self.timeout)
            .field("max_bytes", &self.max_bytes)
            .field("search", &self.search.as_ref().map(|s| &s.backend))
            .finish()
    }
}

/// A search API, set up: its name (`searxng`, `brave`, `tavily`), where it answers, and
/// its key from the secrets store (never shown: `WebAccess`'s Debug leaves it out).
#[derive(Clone, PartialEq, Eq)]
pub struct WebSearchSetup {
    pub backend: String,
    pub endpoint: String,
    pub key: Option<String>,
}

/// Where a tool shows the model an image (`read_file` of a PNG): the turn takes them when
/// the call ends, keeps them with its result and sends them with it (docs/images.md). A
/// scope has one only when the chat's model can see images.
#[derive(Clone, Default)]
pub struct ImageSink(std::sync::Arc<std::sync::Mutex<Vec<ToolImage>>>);

/// An image a tool shows: the file's bytes as read (the turn checks them) and its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolImage {
    pub data: Vec<u8>,
    pub name: Option<String>,
}

impl ImageSink {
    pub fn show(&self, image: ToolImage) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(image);
    }

    /// What the call showed, in order; the sink is empty after.
    pub fn take(&self) -> Vec<ToolImage> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

impl std::fmt::Debug for ImageSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ImageSink").finish_non_exhaustive()
    }
}

/// The same sink.
impl PartialEq for ImageSink {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for ImageSink {}

/// The engine's background processes and the chat a call runs in: where `execute_cmd`
/// with `background: true` lists what it starts, and `check_process` looks.
#[derive(Clone)]
pub struct ProcessSlot {
    pub table: std::sync::Arc<crate::processes::Processes>,
    pub session_id: i64,
}

impl std::fmt::Debug for ProcessSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProcessSlot")
            .field("session_id", &self.session_id)
            .finish_non_exhaustive()
    }
}

/// The same table and chat.
impl PartialEq for ProcessSlot {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.table, &other.table) && self.session_id == other.session_id
    }
}

impl Eq for ProcessSlot {}

impl ToolScope {
    pub fn new(working_dir: impl Into<PathBuf>) -> Self {
        Self {
            working_dir: working_dir.into(),
            excluded: Vec::new(),
            hidden_env: Vec::new(),
            sandbox: crate::CommandSandbox::Off,
            editor: None,
            cache_dir: None,
            processes: None,
            checked_path: None,
            images: None,
            web: WebAccess::default(),
            lsp: LspSetup::default(),
        }
    }

    /// Adds the canonical files and folders the user's deny rules keep this call away from.
    /// The gate checks only the path a call names; a recursive tool walking a folder skips
    /// these inside it, so a denied subfolder stays unread however it is reached.
    pub fn with_excluded(mut self, excluded: Vec<PathBuf>) -> Self {
        self.excluded = excluded;
        self
    }

    /// See `with_excluded`.
    pub fn excluded(&self) -> &[PathBuf] {
        &self.excluded
    }

    /// Adds environment variables a process the call starts must not inherit: the keys of
    /// the model providers the user configured, a restarted server's handed-over token.
    /// Each engine has its own list; two engines in one process do not share it.
    pub fn with_hidden_env(mut self, names: Vec<String>) -> Self {
        self.hidden_env = names;
        self
    }

    /// See `with_hidden_env`.
    pub fn hidden_env(&self) -> &[String] {
        &self.hidden_env
    }

    /// Sets how the commands this call starts are confined (docs/sandbox.md).
    pub fn with_sandbox(mut self, sandbox: crate::CommandSandbox) -> Self {
        self.sandbox = sandbox;
        self
    }

    /// See `with_sandbox`.
    pub fn sandbox(&self) -> &crate::CommandSandbox {
        &self.sandbox
    }

    /// Lends the call an editor's file system and terminals (docs/acp.md).
    pub fn with_editor(mut self, editor: Option<crate::editor::EditorAccess>) -> Self {
        self.editor = editor;
        self
    }

    /// See `with_editor`.
    pub fn editor(&self) -> Option<&crate::editor::EditorAccess> {
        self.editor.as_ref()
    }

    /// Gives the call a folder to keep what it derives from files in (`<data dir>/cache`:
    /// get_ast_outline's outlines). Without one, nothing is kept across calls.
    pub fn with_cache_dir(mut self, dir: Option<PathBuf>) -> Self {
        self.cache_dir = dir;
        self
    }

    /// See `with_cache_dir`.
    pub fn cache_dir(&self) -> Option<&Path> {
        self.cache_dir.as_deref()
    }

    /// Gives the call the chat's background processes (docs/processes.md). Without them
    /// (a direct `skald tool` run), nothing can be started in the background.
    pub fn with_processes(mut self, slot: Option<ProcessSlot>) -> Self {
        self.processes = slot;
        self
    }

    /// See `with_processes`.
    pub fn processes(&self) -> Option<&ProcessSlot> {
        self.processes.as_ref()
    }

    /// Sets the canonical path the approval gate decided this call on (the file or folder
    /// its `path` names). The file tools open exactly that path with no link on it rather
    /// than resolving the argument again, so a link swapped in between the decision (maybe
    /// minutes earlier, in the Inbox) and the act is refused, not followed.
    pub fn with_checked_path(mut self, path: Option<PathBuf>) -> Self {
        self.checked_path = path;
        self
    }

    /// See `with_checked_path`. `None` outside a turn (a direct `skald tool` run): the tool
    /// then resolves the argument itself, the way the gate would.
    pub fn checked_path(&self) -> Option<&Path> {
        self.checked_path.as_deref()
    }

    /// Lets the call show the model images (`ImageSink`): only where the chat's model can
    /// see them.
    pub fn with_images(mut self, sink: Option<ImageSink>) -> Self {
        self.images = sink;
        self
    }

    /// See `with_images`. `None`: the model cannot see images, or there is no chat (a
    /// direct `skald tool` run).
    pub fn images(&self) -> Option<&ImageSink> {
        self.images.as_ref()
    }

    /// Sets what the web tools may do in this call (`WebAccess`).
    pub fn with_web(mut self, web: WebAccess) -> Self {
        self.web = web;
        self
    }

    /// See `with_web`.
    pub fn web(&self) -> &WebAccess {
        &self.web
    }

    /// Sets how the language-server tools find and keep servers (`LspSetup`).
    pub fn with_lsp(mut self, lsp: LspSetup) -> Self {
        self.lsp = lsp;
        self
    }

    /// See `with_lsp`.
    pub fn lsp(&self) -> &LspSetup {
        &self.lsp
    }

    /// The directory relative paths resolve against.
    pub fn working_dir(&self) -> &Path {
        &self.working_dir
    }

    /// Runs `fut` with this scope as the current one.
    pub async fn run<F: Future>(self, fut: F) -> F::Output {
        SCOPE.scope(self, fut).await
    }

    /// The scope of the running execution. Outside any run (a unit test, a direct call) it
    /// falls back to the process's current directory, which is what a user at a shell means.
    pub fn current() -> ToolScope {
        SCOPE
            .try_with(Clone::clone)
            .unwrap_or_else(|_| ToolScope::new(std::env::current_dir().unwrap_or_default()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn scope_is_visible_inside_and_not_outside() {
        let inside = ToolScope::new("/tmp/project")
            .run(async { ToolScope::current() })
            .await;
        assert_eq!(inside.working_dir(), Path::new("/tmp/project"));
        let outside = ToolScope::current();
        assert_eq!(outside.working_dir(), std::env::current_dir().unwrap());
    }
}
