//! Skald's built-in tools that act on the user's files and shell, one file per tool, named
//! after it; the engine's registry lists them with its own tools (skald-core `tools`).
//! Paths resolve against the run's working directory (`fs::resolve`); file I/O runs on the
//! blocking pool so a large file never stalls the engine's event loop, and a stopped call
//! stops walking.

pub mod fs;
pub mod search;
pub mod text;

mod check_process;
mod edit_file;
pub mod execute_cmd;
mod get_ast_outline;
mod git_guard;
mod grep_files;
mod insert_at_line;
mod lent;
mod list_files;
mod outline_cache;
mod read_file;
mod replace_lines;
mod restart;
mod search_file;
mod write_file;

pub use check_process::CheckProcess;
pub use edit_file::EditFile;
pub use execute_cmd::ExecuteCmd;
pub use get_ast_outline::GetAstOutline;
pub use grep_files::GrepFiles;
pub use insert_at_line::InsertAtLine;
pub use list_files::ListFiles;
pub use read_file::ReadFile;
pub use replace_lines::ReplaceLines;
pub use restart::{Restart, RestartSignal};
pub use search_file::SearchFile;
pub use write_file::WriteFile;

use skald_api::{BoxToolFuture, ToolError, ToolResult, ToolScope};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set when the call that started some blocking work is stopped or dropped, so long
/// walks can end early instead of running on unobserved.
#[derive(Clone, Default)]
pub struct StopFlag(Arc<AtomicBool>);

impl StopFlag {
    pub fn is_stopped(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

struct StopOnDrop(StopFlag);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.0.store(true, Ordering::Relaxed);
    }
}

/// Runs `work` on the blocking pool with the caller's scope. Dropping the returned future
/// (a /stop) raises the flag `work` receives.
pub(crate) fn run_blocking<'a, F>(work: F) -> BoxToolFuture<'a>
where
    F: FnOnce(&ToolScope, &StopFlag) -> ToolResult + Send + 'static,
{
    Box::pin(async move {
        let scope = ToolScope::current();
        let flag = StopFlag::default();
        let _stop_on_drop = StopOnDrop(flag.clone());
        tokio::task::spawn_blocking(move || work(&scope, &flag))
            .await
            .map_err(|e| ToolError::failed(format!("the tool crashed: {e}")))?
    })
}

#[cfg(test)]
pub(crate) mod test_support {
    use serde_json::Value;
    use skald_api::{ExecutionOutcome, Tool, ToolScope};
    use std::path::Path;

    /// Runs `tool` with `args` in `dir` the way the engine does and returns its outcome.
    pub async fn run_in(tool: &dyn Tool, dir: &Path, args: Value) -> ExecutionOutcome {
        let exec = tool.run(&(), args);
        ToolScope::new(dir).run(exec.wait()).await
    }

    pub async fn ok(tool: &dyn Tool, dir: &Path, args: Value) -> String {
        match run_in(tool, dir, args).await {
            ExecutionOutcome::Completed(text) => text,
            other => panic!("expected success, got {other:?}"),
        }
    }

    pub async fn err(tool: &dyn Tool, dir: &Path, args: Value) -> String {
        match run_in(tool, dir, args).await {
            ExecutionOutcome::Failed(msg) => msg,
            other => panic!("expected failure, got {other:?}"),
        }
    }
}
