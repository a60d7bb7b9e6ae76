//! An editor that drives a chat (through the Agent Client Protocol, docs/acp.md) and lends
//! the tools its own file system and terminals: a file is read as the person sees it in
//! the editor, unsaved changes included; an edit lands in the editor's buffer, which it
//! saves; a command runs in one of its terminals, shown live in the editor. The carrier
//! that speaks to the editor implements [`Editor`]; the engine hands it to the calls of
//! the chats that editor opened (`ToolScope::editor`).
//!
//! Only the carrier of the I/O changes: every check before it (the approval gate, the
//! path policy, the sandbox a command runs in) is the same as without an editor.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

/// How long a file request to the editor may take before the call fails: a person's
/// editor answers in milliseconds, and a call must not hang on one that stopped reading.
pub const FILE_TIMEOUT: Duration = Duration::from_secs(30);

/// What an editor's request comes to: its answer, or why there is none.
pub type EditorFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, String>> + Send + 'a>>;

/// What the editor offers, as it said when it connected.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EditorOffers {
    pub read_files: bool,
    pub write_files: bool,
    pub terminals: bool,
}

/// A command for one of the editor's terminals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TerminalCommand {
    /// The program and its arguments (no shell is added).
    pub program: String,
    pub args: Vec<String>,
    /// Set on top of the editor's environment.
    pub env: Vec<(String, String)>,
    pub cwd: PathBuf,
    /// Bytes of output the editor keeps (it drops the start first).
    pub output_limit: usize,
    /// After this the command is killed.
    pub timeout: Duration,
}

/// How a terminal's command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TerminalExit {
    Code(i32),
    Signal(String),
    /// Still running at the timeout: it was killed.
    TimedOut,
    /// The editor gave neither a code nor a signal.
    Unknown,
}

/// What came of a command in a terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TerminalOutcome {
    /// Its output as the terminal shows it (standard output and error together).
    pub output: String,
    /// The editor dropped the start of it to keep within `output_limit`.
    pub truncated: bool,
    pub exit: TerminalExit,
}

/// The editor side, implemented by the carrier that talks to it. Every method speaks for
/// the one chat the editor opened.
pub trait Editor: Send + Sync {
    fn offers(&self) -> EditorOffers;

    /// The text of `path` (absolute) as the editor has it.
    fn read_text_file<'a>(&'a self, path: &'a Path) -> EditorFuture<'a, String>;

    /// Replaces the text of `path` (absolute), creating it if need be.
    fn write_text_file<'a>(&'a self, path: &'a Path, content: &'a str) -> EditorFuture<'a, ()>;

    /// Runs `command` in a new terminal shown with the tool call `call_id`, waits for it
    /// (killing it at its timeout), and releases the terminal. Dropping the future (a
    /// stopped call) kills and releases it too.
    fn run_in_terminal<'a>(
        &'a self,
        call_id: &'a str,
        command: TerminalCommand,
    ) -> EditorFuture<'a, TerminalOutcome>;
}

/// The editor as one tool call may use it: the calls to it are bounded in time, and its
/// terminal is shown with this call.
#[derive(Clone)]
pub struct EditorAccess {
    editor: Arc<dyn Editor>,
    call_id: String,
}

impl EditorAccess {
    pub fn new(editor: Arc<dyn Editor>, call_id: impl Into<String>) -> Self {
        Self {
            editor,
            call_id: call_id.into(),
        }
    }

    pub fn offers(&self) -> EditorOffers {
        self.editor.offers()
    }

    pub async fn read_text_file(&self, path: &Path) -> Result<String, String> {
        bounded(self.editor.read_text_file(path)).await
    }

    pub async fn write_text_file(&self, path: &Path, content: &str) -> Result<(), String> {
        bounded(self.editor.write_text_file(path, content)).await
    }

    pub async fn run_in_terminal(
        &self,
        command: TerminalCommand,
    ) -> Result<TerminalOutcome, String> {
        // The command's own timeout is the editor's to apply (it kills the command); this
        // one only covers an editor that stops answering altogether.
        let limit = command.timeout + FILE_TIMEOUT;
        match tokio::time::timeout(limit, self.editor.run_in_terminal(&self.call_id, command)).await
        {
            Ok(outcome) => outcome,
            Err(_) => Err(format!(
                "the editor did not report the command's end within {} s",
                limit.as_secs()
            )),
        }
    }
}

async fn bounded<T>(request: EditorFuture<'_, T>) -> Result<T, String> {
    tokio::time::timeout(FILE_TIMEOUT, request)
        .await
        .unwrap_or_else(|_| {
            Err(format!(
                "the editor did not answer within {} s",
                FILE_TIMEOUT.as_secs()
            ))
        })
}

impl std::fmt::Debug for EditorAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EditorAccess")
            .field("offers", &self.offers())
            .field("call_id", &self.call_id)
            .finish()
    }
}

/// The same editor for the same call.
impl PartialEq for EditorAccess {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.editor, &other.editor) && self.call_id == other.call_id
    }
}

impl Eq for EditorAccess {}
