//! diagnostics: what the language server of a file's language reports for it — type
//! errors, unknown names, unused imports — or for every file of the folder it knows
//! (docs/lsp.md). The server is started on demand for the chat's folder and kept.

use crate::fs::{self, label, path_arg};
use crate::lsp;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use skald_api::tool_args;
use skald_api::{
    BoxToolFuture, FileAccess, Tool, ToolCategory, ToolDescriptionLength, ToolError, ToolKind,
    ToolScope, tool_names as tn,
};
use skald_lsp::Diagnostic;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

/// Files of one language opened for a folder's diagnostics at most.
const MAX_FOLDER_FILES: usize = 200;
/// Diagnostics listed by default, and at most.
const DEFAULT_MAX: u64 = 50;
const MAX_MAX: u64 = 500;

pub struct Diagnostics;

impl Diagnostics {
    pub const NAME: &'static str = tn::DIAGNOSTICS;
}

// The arguments' doc comments are the descriptions the model reads.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Args {
    /// A file, or a folder for every file in it a language server knows. Default: the
    /// working directory.
    path: Option<String>,
    /// Most diagnostics listed (default 50, at most 500); errors come first.
    #[schemars(range(min = 1, max = MAX_MAX))]
    max: Option<u64>,
}

impl<Cx: ?Sized + Sync> Tool<Cx> for Diagnostics {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn description(&self) -> &str {
        "Type errors, unknown names and other problems a language server finds, in a file or \
         in every file of a folder (Python, TypeScript/JavaScript, Rust, Go, C/C++ where their \
         server is installed). Use it after changing code to check it compiles, instead of \
         running the whole build."
    }

    fn parameters_schema(&self) -> Value {
        tool_args::schema_for::<Args>()
    }

    fn describe(&self, args: &Value, length: ToolDescriptionLength) -> String {
        label("Check", Some(path_arg(args).as_deref().unwrap_or(".")), length)
    }

    fn target_path(&self, args: &Value) -> Option<String> {
        path_arg(args)
    }

    fn execute_async<'a>(&'a self, _cx: &'a Cx, args: Value) -> BoxToolFuture<'a> {
        Box::pin(async move {
            let args: Args = tool_args::parse(args)?;
            let max = args.max.unwrap_or(DEFAULT_MAX).clamp(1, MAX_MAX) as usize;
            let scope = ToolScope::current();
            let target = fs::target(&scope, args.path.as_deref().unwrap_or("."));
            let meta = fs::metadata(&target, "check")?;
            if meta.is_dir() {
                folder(&scope, &target, max).await
            } else {
                file(&scope, &target, max).await
            }
        })
    }

    fn category(&self) -> ToolCategory {
        ToolCategory::Filesystem
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Read
    }

    fn file_access(&self) -> Option<FileAccess> {
        Some(FileAccess::reads(Some(".")))
    }

    fn for_small_models(&self) -> bool {
        true
    }
}

async fn file(scope: &ToolScope, target: &fs::Target, max: usize) -> Result<String, ToolError> {
    let language = lsp::language(&target.shown)?;
    let text = lsp::read_text(target)?;
    let (server, started) = lsp::server(scope, language).await?;
    let wait = if started { lsp::COLD_WAIT } else { lsp::WARM_WAIT };
    let diags = lsp::diagnostics_of(&server, &target.opened, &text, wait)
        .await?
        .ok_or_else(|| {
            ToolError::failed(format!(
                "the {} language server said nothing about {} within {} s",
                language.name,
                target.shown.display(),
                wait.as_secs()
            ))
        })?;
    let shown = fs::slash_relative(&target.shown, scope.working_dir());
    Ok(report(&[(shown, text, diags)], 1, max))
}

async fn folder(scope: &ToolScope, target: &fs::Target, max: usize) -> Result<String, ToolError> {
    // The folder's source files, by language, as the walk of grep_files finds them.
    let mut by_language: BTreeMap<&'static str, Vec<PathBuf>> = BTreeMap::new();
    let root = target.opened.clone();
    let excluded = scope.excluded().to_vec();
    let files = tokio::task::spawn_blocking(move || {
        let mut found = Vec::new();
        let _ = skald_base::walk::walker(&root, &excluded).run(|entry| {
            if entry.is_file() && skald_lsp::language_of(entry.path()).is_some() {
                found.push(entry.path().to_path_buf());
            }
            skald_base::walk::Flow::Continue
        });
        found.sort();
        found
    })
    .await
    .map_err(|e| ToolError::failed(format!("the walk crashed: {e}")))?;
    for f in files {
        if let Some(l) = skald_lsp::language_of(&f) {
            by_language.entry(l.name).or_default().push(f);
        }
    }
    if by_language.is_empty() {
        return Ok(format!(
            "{} has no source files a language server knows.",
            target.shown.display()
        ));
    }
    let mut results = Vec::new();
    let mut notes = Vec::new();
    let mut checked = 0;
    for (name, files) in by_language {
        let Some(language) = skald_lsp::languages::language_named(name) else {
            continue;
        };
        let (server, started) = match lsp::server(scope, language).await {
            Ok(s) => s,
            Err(e) => {
                notes.push(format!("{name}: {e}"));
                continue;
            }
        };
        let wait = if started { lsp::COLD_WAIT } else { lsp::WARM_WAIT };
        if files.len() > MAX_FOLDER_FILES {
            notes.push(format!(
                "{name}: {} files, the first {MAX_FOLDER_FILES} checked",
                files.len()
            ));
        }
        // Every file given to the server first, then its answers gathered: it checks them
        // together.
        let mut sent = Vec::new();
        for path in files.into_iter().take(MAX_FOLDER_FILES) {
            let shown_target = fs::Target {
                shown: path.clone(),
                opened: path.clone(),
            };
            let Ok(text) = lsp::read_text(&shown_target) else {
                continue;
            };
            let before = server.sync(&path, &text).map_err(lsp::lsp_error)?;
            sent.push((path, text, before));
        }
        let asked: Vec<(PathBuf, u64)> = sent.iter().map(|(p, _, b)| (p.clone(), *b)).collect();
        let answers = server
            .diagnostics_after_all(&asked, wait)
            .await
            .map_err(lsp::lsp_error)?;
        for ((path, text, _), diags) in sent.into_iter().zip(answers) {
            checked += 1;
            if let Some(d) = diags.or_else(|| server.published(&path)).filter(|d| !d.is_empty()) {
                results.push((fs::slash_relative(&path, scope.working_dir()), text, d));
            }
        }
    }
    let mut out = report(&results, checked, max);
    for n in notes {
        let _ = write!(out, "\n{n}");
    }
    Ok(out)
}

/// The diagnostics of files: a count, then each file's, errors first, at most `max`.
fn report(files: &[(String, String, Vec<Diagnostic>)], checked: usize, max: usize) -> String {
    let all: Vec<Diagnostic> = files.iter().flat_map(|(_, _, d)| d.iter().cloned()).collect();
    let with = files.iter().filter(|(_, _, d)| !d.is_empty()).count();
    let mut out = if files.len() == 1 && checked == 1 {
        format!("{}: {}", files[0].0, lsp::counts(&all))
    } else {
        format!(
            "{} in {with} of {checked} file{} checked",
            lsp::counts(&all),
            if checked == 1 { "" } else { "s" }
        )
    };
    let mut listed = 0;
    for (shown, text, diags) in files {
        if diags.is_empty() {
            continue;
        }
        if files.len() > 1 || checked > 1 {
            let _ = write!(out, "\n{shown}:");
        }
        for d in lsp::sorted(diags.clone()) {
            if listed == max {
                let _ = write!(out, "\n… {} more not listed (max)", all.len() - listed);
                return out;
            }
            let _ = write!(out, "\n  {}", lsp::line(&d, text));
            listed += 1;
        }
    }
    out
}
