//! Skald's built-in tools that act on the user's files, shell and the web, one file per tool, named
//! after it; the engine's registry lists them with its own tools (skald-core `tools`).
//! Paths resolve against the run's working directory (`fs::resolve`); file I/O runs on the
//! blocking pool so a large file never stalls the engine's event loop, and a stopped call
//! stops walking.

pub mod fs;
pub mod search;
pub mod text;

mod editor_fs;
mod git_guard;
pub mod lsp;
mod outline_cache;
mod restart;

pub use restart::{Restart, RestartSignal};

/// This crate's tools in the order they are offered, each as `module::Type`: besides its
/// own file, the one line a new file tool adds. `file_tools!(callback)` hands the list to
/// a macro of the caller's: here it declares the modules, `NAMES` and the lookup by name;
/// in skald-core it is the first part of the one list of tools (`tools::all`).
#[macro_export]
macro_rules! file_tools {
    ($callback:ident) => {
        $callback! {
            list_files::ListFiles,
            read_file::ReadFile,
            write_file::WriteFile,
            edit_file::EditFile,
            insert_at_line::InsertAtLine,
            replace_lines::ReplaceLines,
            search_file::SearchFile,
            grep_files::GrepFiles,
            get_ast_outline::GetAstOutline,
            execute_cmd::ExecuteCmd,
            check_process::CheckProcess,
            web_fetch::WebFetch,
            web_search::WebSearch,
            diagnostics::Diagnostics,
            go_to_definition::GoToDefinition,
            find_references::FindReferences,
        }
    };
}

macro_rules! declare_tools {
    ($($module:ident :: $tool:ident),* $(,)?) => {
        $(pub mod $module; pub use $module::$tool;)*

        /// This crate's tools, to read what each declares about itself where no turn is at
        /// hand (`tool_named`).
        static TOOLS: &[&dyn Tool<()>] = &[$(&$tool),*];

        /// The names of this crate's tools; skald-core refuses to build when one of its
        /// own tools has one of them.
        pub const NAMES: &[&str] = &[$($tool::NAME),*];
    };
}

file_tools!(declare_tools);

const _: () = assert!(
    !skald_api::kind::has_duplicate(&[NAMES, &[Restart::NAME]]),
    "two file tools have one name"
);

/// The tool of this crate called `name`, to read what it declares about itself (whether it
/// reads or writes files, through which argument, what a write would leave): the approval
/// gate asks here, by name.
pub fn tool_named(name: &str) -> Option<&'static dyn Tool<()>> {
    TOOLS.iter().copied().find(|t| t.name() == name)
}

use skald_api::{BoxToolFuture, Tool, ToolError, ToolResult, ToolScope};
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

/// A write tool's work, then what the language server says of the file it wrote
/// (`lsp::after_edit`), added to its result.
pub(crate) fn then_diagnostics<'a>(
    path: Option<String>,
    work: BoxToolFuture<'a>,
) -> BoxToolFuture<'a> {
    Box::pin(async move {
        let result = work.await?;
        let Some(path) = path else {
            return Ok(result);
        };
        let scope = ToolScope::current();
        Ok(match lsp::after_edit(&scope, &path).await {
            Some(note) => format!("{result}\n\n{note}"),
            None => result,
        })
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
