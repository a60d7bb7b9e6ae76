//! What the language-server tools share (docs/lsp.md): the server for a file's language in
//! the chat's folder — found as config.toml says or on PATH, run in the chat's sandbox
//! without the network where there is one — a file's text as the server is given it, and
//! diagnostics as the model reads them.

use crate::fs::{self, Target};
use skald_api::{CommandSandbox, ToolError, ToolScope};
use skald_lsp::languages::find_server;
use skald_lsp::{Diagnostic, DiagnosticSeverity, Language, LspError, Server};
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// How long the first diagnostics of a server just started may take (it reads the
/// project first), and those of one already running.
pub const COLD_WAIT: Duration = Duration::from_secs(60);
pub const WARM_WAIT: Duration = Duration::from_secs(15);
/// Largest file given to a server.
const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;

pub fn lsp_error(e: LspError) -> ToolError {
    ToolError::failed(e.to_string())
}

/// The language of `path`, or why no server speaks for it.
pub fn language(path: &Path) -> Result<&'static Language, ToolError> {
    skald_lsp::language_of(path).ok_or_else(|| {
        let known: Vec<&str> = skald_lsp::LANGUAGES.iter().map(|l| l.name).collect();
        ToolError::failed(format!(
            "no language server speaks for {} (Skald asks servers about {})",
            path.display(),
            known.join(", ")
        ))
    })
}

/// The running server for `language` in the chat's folder, started if needed; and
/// whether it was started now (its first answers take longer).
pub async fn server(
    scope: &ToolScope,
    language: &'static Language,
) -> Result<(Arc<Server>, bool), ToolError> {
    let setup = scope.lsp();
    if !setup.enabled {
        return Err(ToolError::failed(
            "language servers are turned off ([lsp] enabled = false in config.toml)",
        ));
    }
    skald_lsp::pool().set_idle(setup.idle);
    let sandbox_key = sandbox_key(scope);
    let root = scope.working_dir().to_path_buf();
    skald_lsp::pool()
        .server(&root, language.name, &sandbox_key, || {
            launch(scope, language)
        })
        .await
        .map_err(lsp_error)
}

/// How to start `language`'s server for this call: its command, inside the sandbox's
/// helper when the chat's commands are sandboxed (the server then writes only a private
/// temporary folder and its chat's folder as the chat's commands may, and has no network).
fn launch(scope: &ToolScope, language: &'static Language) -> Result<skald_lsp::Launch, LspError> {
    let configured = scope.lsp().commands.get(language.name).map(Vec::as_slice);
    let path = std::env::var_os("PATH");
    let argv = find_server(language, configured, path.as_deref()).ok_or_else(|| {
        let tried: Vec<String> = match configured {
            Some(c) => vec![c.join(" ")],
            None => language.servers.iter().map(|s| s[0].to_string()).collect(),
        };
        LspError::NotFound {
            language: language.name,
            tried: tried.join(", "),
            install: language.install,
        }
    })?;
    let mut env_removed: Vec<String> = scope.hidden_env().to_vec();
    env_removed.extend(crate::execute_cmd::SECRET_ENV.iter().map(|s| s.to_string()));
    match scope.sandbox() {
        CommandSandbox::On { helper, policy, .. } => {
            let tmp = tempfile::Builder::new()
                .prefix("skald-lsp-")
                .tempdir()
                .map_err(|e| start_error(language, &argv, e.to_string()))?;
            // The server reads the project and writes nothing but its own temporary
            // folder: project code it runs (build scripts, plugins) must not plant what
            // git or Skald run later (a `.git/commondir`, hooks), and execute_cmd's git
            // guard does not follow a server. What the commands may not read stays hidden.
            let tmp_path = std::fs::canonicalize(tmp.path()).unwrap_or_else(|_| tmp.path().into());
            // A server installed under /tmp (a checkout there) would be hidden by the
            // sandbox's private /tmp: its package folder is kept visible, read-only.
            let own = installed_under_private_tmp(&argv);
            let mut writable = vec![tmp_path.clone()];
            writable.extend(own.iter().cloned());
            let policy = skald_sandbox::Policy {
                writable,
                masked: policy.masked.clone(),
                network: false,
                read_only: own.into_iter().collect(),
                pinned: Vec::new(),
            };
            // The server's own temporary folder, where it expects one (tsserver makes one
            // there): the rest of /tmp is private and not writable to it.
            let mut tmp_vars: Vec<(String, String)> = skald_sandbox::TMP_VARS
                .iter()
                .map(|v| (v.to_string(), tmp_path.display().to_string()))
                .collect();
            // rust-analyzer's `cargo check` builds there instead of the project's target/.
            tmp_vars.push((
                "CARGO_TARGET_DIR".into(),
                tmp_path.join("target").display().to_string(),
            ));
            let (program, args) = argv
                .split_first()
                .ok_or_else(|| start_error(language, &argv, "no command".into()))?;
            let args: Vec<std::ffi::OsString> = args.iter().map(Into::into).collect();
            let wrapped = skald_sandbox::command_args(&policy, program.as_ref(), &args)
                .map_err(|e| start_error(language, &argv, e))?;
            let mut full = vec![helper.display().to_string()];
            full.extend(
                wrapped
                    .into_iter()
                    .map(|a| a.to_string_lossy().into_owned()),
            );
            Ok(skald_lsp::Launch {
                argv: full,
                env_removed,
                env_set: tmp_vars,
                sandbox_key: String::new(),
                keep: Box::new(tmp),
                watches_parent: false,
            })
        }
        _ => Ok(skald_lsp::Launch {
            argv,
            env_removed,
            env_set: Vec::new(),
            sandbox_key: String::new(),
            keep: Box::new(()),
            watches_parent: true,
        }),
    }
}

/// The folder a server's program is installed in (the `node_modules` holding it, else its
/// own folder), when that lies in one of the private temporary folders the sandbox gives
/// commands: it must stay visible there for the server to start.
fn installed_under_private_tmp(argv: &[String]) -> Option<std::path::PathBuf> {
    let program = std::fs::canonicalize(argv.first()?).ok()?;
    let private: Vec<std::path::PathBuf> = skald_sandbox::PRIVATE_TMP
        .iter()
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .collect();
    if !private.iter().any(|p| program.starts_with(p)) {
        return None;
    }
    program
        .ancestors()
        .find(|a| a.file_name().is_some_and(|n| n == "node_modules"))
        .or_else(|| program.parent())
        .map(Path::to_path_buf)
}

fn start_error(language: &Language, argv: &[String], reason: String) -> LspError {
    LspError::Start {
        language: language.name,
        program: argv.first().cloned().unwrap_or_default(),
        reason,
    }
}

/// A file's text as it is on disk, for the server (a file's own checks: regular, not too
/// large, text).
pub fn read_text(target: &Target) -> Result<String, ToolError> {
    let (mut file, meta) = fs::open_regular(target)?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(ToolError::failed(format!(
            "{} is {} bytes, larger than a language server is given ({MAX_FILE_BYTES})",
            target.shown.display(),
            meta.len()
        )));
    }
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut file, &mut bytes)
        .map_err(|e| fs::io_error("read", &target.shown, &e))?;
    String::from_utf8(bytes)
        .map_err(|_| ToolError::failed(format!("{} is not UTF-8 text", target.shown.display())))
}

/// The diagnostics of `path` after giving its server `text`.
pub async fn diagnostics_of(
    server: &Server,
    path: &Path,
    text: &str,
    wait: Duration,
) -> Result<Option<Vec<Diagnostic>>, ToolError> {
    let before = server.sync(path, text).map_err(lsp_error)?;
    server
        .diagnostics_after(path, before, wait)
        .await
        .map_err(lsp_error)
}

pub fn severity(d: &Diagnostic) -> &'static str {
    match d.severity {
        Some(DiagnosticSeverity::ERROR) | None => "error",
        Some(DiagnosticSeverity::WARNING) => "warning",
        Some(DiagnosticSeverity::INFORMATION) => "info",
        _ => "hint",
    }
}

/// One diagnostic on one line: `LINE:COL severity: message (source code)`, its message
/// on one line, control characters out (a server repeats what the file says).
pub fn line(d: &Diagnostic, text: &str) -> String {
    let (l, c) = skald_lsp::text::line_column(text, d.range.start);
    let mut out = format!("{l}:{c} {}: {}", severity(d), one_line(&d.message));
    let code = d.code.as_ref().map(|c| match c {
        lsp_code::Number(n) => n.to_string(),
        lsp_code::String(s) => s.clone(),
    });
    match (d.source.as_deref(), code) {
        (Some(s), Some(c)) => {
            let _ = write!(out, " ({s} {c})");
        }
        (Some(s), None) => {
            let _ = write!(out, " ({s})");
        }
        (None, Some(c)) => {
            let _ = write!(out, " ({c})");
        }
        (None, None) => {}
    }
    out
}

use skald_lsp::NumberOrString as lsp_code;

pub fn one_line(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .filter(|c| !c.is_control())
        .collect()
}

/// Errors first, then warnings, then the rest; by line within each.
pub fn sorted(mut diags: Vec<Diagnostic>) -> Vec<Diagnostic> {
    let rank = |d: &Diagnostic| match severity(d) {
        "error" => 0,
        "warning" => 1,
        "info" => 2,
        _ => 3,
    };
    diags.sort_by_key(|d| (rank(d), d.range.start.line, d.range.start.character));
    diags
}

/// How many errors and warnings, in words.
pub fn counts(diags: &[Diagnostic]) -> String {
    let errors = diags.iter().filter(|d| severity(d) == "error").count();
    let warnings = diags.iter().filter(|d| severity(d) == "warning").count();
    format!(
        "{errors} error{}, {warnings} warning{}",
        if errors == 1 { "" } else { "s" },
        if warnings == 1 { "" } else { "s" }
    )
}

/// The text of a file a server named, if the chat may be shown it: inside the chat's
/// folder once links are resolved, not in anything the gate keeps the tool from (deny
/// rules, credential folders, Skald's data), not in a `secrets/` folder, a regular file of
/// at most `MAX_FILE_BYTES`, opened with no link on its path.
fn readable_line_source(scope: &ToolScope, path: &Path) -> Option<String> {
    let folder = fs::canonicalize_for_policy(scope.working_dir(), Path::new("/"));
    let canonical = std::fs::canonicalize(path).ok()?;
    let inside = canonical.strip_prefix(&folder).ok()?;
    if inside.components().any(|c| c.as_os_str() == "secrets")
        || scope
            .excluded()
            .iter()
            .any(|x| fs::path_under(&canonical, x))
    {
        return None;
    }
    let target = Target {
        shown: path.to_path_buf(),
        opened: canonical,
    };
    read_text(&target).ok()
}

/// A symbol's place in a file, given to its server.
pub struct SymbolAt {
    pub server: Arc<Server>,
    pub target: Target,
    pub shown: String,
    pub position: skald_lsp::Position,
    /// The symbol in words: "`area`" or "the symbol at 3:7".
    pub what: String,
}

/// Finds the place `args` name, gives the file's text to its server and waits for it to
/// have read it (its diagnostics come once it has).
pub(crate) async fn symbol_at(
    scope: &ToolScope,
    args: &crate::go_to_definition::Args,
) -> Result<SymbolAt, ToolError> {
    let target = fs::target(scope, &args.path);
    let language = language(&target.shown)?;
    let text = read_text(&target)?;
    let lines = u32::try_from(text.lines().count()).unwrap_or(u32::MAX);
    if args.line == 0 || args.line > lines.max(1) {
        return Err(ToolError::invalid(
            "line",
            format!(
                "{} has {lines} lines, not {}",
                target.shown.display(),
                args.line
            ),
        ));
    }
    let column = match (&args.symbol, args.column) {
        (_, Some(c)) => c.max(1),
        (Some(s), None) => skald_lsp::text::column_of(&text, args.line, s).ok_or_else(|| {
            ToolError::invalid(
                "symbol",
                format!(
                    "`{s}` is not on line {} of {}",
                    args.line,
                    target.shown.display()
                ),
            )
        })?,
        (None, None) => {
            return Err(ToolError::invalid(
                "symbol",
                "give the symbol (or its column)",
            ));
        }
    };
    let position = skald_lsp::text::position(&text, args.line, column);
    let (server, started) = server(scope, language).await?;
    let wait = if started { COLD_WAIT } else { WARM_WAIT };
    // Read by the server before it is asked: its answer is about this text.
    diagnostics_of(&server, &target.opened, &text, wait).await?;
    let what = match &args.symbol {
        Some(s) => format!("`{s}`"),
        None => format!("the symbol at {}:{column}", args.line),
    };
    Ok(SymbolAt {
        server,
        shown: fs::slash_relative(&target.shown, scope.working_dir()),
        target,
        position,
        what,
    })
}

/// Places as `path:line:column: the line`, paths relative to the chat's folder when in it,
/// at most `max`.
pub fn locations(scope: &ToolScope, found: &[skald_lsp::Location], max: usize) -> String {
    let mut out = String::new();
    let mut texts: std::collections::HashMap<std::path::PathBuf, Option<String>> =
        Default::default();
    for loc in found.iter().take(max) {
        let Some(path) = skald_lsp::text::path_of(&loc.uri) else {
            let _ = writeln!(out, "{}", loc.uri);
            continue;
        };
        // The server names the places; only those a read_file of the chat could show
        // have their line shown (a server may name any file: a link to /proc, a key).
        let Some(text) = texts
            .entry(path.clone())
            .or_insert_with(|| readable_line_source(scope, &path))
            .clone()
        else {
            let _ = writeln!(
                out,
                "{} (outside the chat's folder; not shown)",
                path.display()
            );
            continue;
        };
        let (l, c) = skald_lsp::text::line_column(&text, loc.range.start);
        let content = text
            .lines()
            .nth(loc.range.start.line as usize)
            .unwrap_or("");
        let _ = writeln!(
            out,
            "{}:{l}:{c}: {}",
            fs::slash_relative(&path, scope.working_dir()),
            one_line(content)
        );
    }
    if found.len() > max {
        let _ = writeln!(out, "… {} more", found.len() - max);
    }
    out.trim_end().to_string()
}

/// Most problems an edit's result lists.
const EDIT_LISTED: usize = 10;

/// What the pool keys a server by besides its folder and language: whether it runs in the
/// sandbox, and what it may not read there (its writes are its own temporary folder
/// whatever the chat's grants).
fn sandbox_key(scope: &ToolScope) -> String {
    match scope.sandbox() {
        CommandSandbox::On { policy, .. } => {
            format!(
                "sandboxed {}",
                serde_json::to_string(&policy.masked).unwrap_or_default()
            )
        }
        _ => String::new(),
    }
}

/// What the language server says of a file a write tool just wrote (docs/lsp.md, "After
/// an edit"): its errors and warnings now, those the edit brought marked `new` when the
/// server knew the file before, at most `EDIT_LISTED`. Nothing when the file is clean and
/// was, when no server speaks for it, or when an editor holds the file (its buffer, not
/// the disk, is the truth). A server is started for it only where the sandbox confines
/// one (starting one elsewhere asks the person, which an edit must not do); otherwise
/// one already running for the folder is used.
pub async fn after_edit(scope: &ToolScope, raw_path: &str) -> Option<String> {
    let setup = scope.lsp().clone();
    if !setup.enabled || scope.editor().is_some() {
        return None;
    }
    let target = fs::target(scope, raw_path);
    let language = skald_lsp::language_of(&target.shown)?;
    // Everything, a server's start included, within the edit's wait.
    let limit = setup.edit_wait.max(Duration::from_secs(10)) + Duration::from_secs(1);
    tokio::time::timeout(limit, after_edit_in(scope, &setup, target, language))
        .await
        .ok()
        .flatten()
}

async fn after_edit_in(
    scope: &ToolScope,
    setup: &skald_api::LspSetup,
    target: Target,
    language: &'static Language,
) -> Option<String> {
    let (server, started) =
        if setup.edits_may_start && matches!(scope.sandbox(), CommandSandbox::On { .. }) {
            server(scope, language).await.ok()?
        } else {
            let running = skald_lsp::pool()
                .running_server(scope.working_dir(), language.name, &sandbox_key(scope))
                .await?;
            (running, false)
        };
    let text = read_text(&target).ok()?;
    let earlier = server.published(&target.opened);
    // A server just started reads the project first: a little longer for its first answer.
    let wait = if started {
        setup.edit_wait.max(Duration::from_secs(10))
    } else {
        setup.edit_wait
    };
    let diags = match diagnostics_of(&server, &target.opened, &text, wait).await {
        Ok(Some(d)) => d,
        Ok(None) => {
            return Some(format!(
                "(The {} language server did not answer within {} s; call diagnostics to \
                 check this file.)",
                language.name,
                wait.as_secs()
            ));
        }
        Err(_) => return None,
    };
    let serious = |d: &Diagnostic| matches!(severity(d), "error" | "warning");
    let problems: Vec<Diagnostic> = sorted(diags).into_iter().filter(serious).collect();
    let before: Vec<&Diagnostic> = earlier.iter().flatten().filter(|d| serious(d)).collect();
    if problems.is_empty() {
        return (!before.is_empty()).then(|| {
            format!(
                "Language server ({}): no errors or warnings left in this file.",
                language.name
            )
        });
    }
    let is_new = |d: &Diagnostic| {
        earlier.is_some()
            && !before
                .iter()
                .any(|e| e.message == d.message && severity(e) == severity(d))
    };
    let new = problems.iter().filter(|d| is_new(d)).count();
    let mut out = format!(
        "Language server ({}): {} in this file{}:",
        language.name,
        counts(&problems),
        if new > 0 {
            format!(", {new} new with this edit")
        } else {
            String::new()
        }
    );
    for d in problems.iter().take(EDIT_LISTED) {
        let mark = if is_new(d) { "new " } else { "" };
        let _ = write!(out, "\n  {mark}{}", line(d, &text));
    }
    if problems.len() > EDIT_LISTED {
        let _ = write!(
            out,
            "\n  … {} more (diagnostics lists them)",
            problems.len() - EDIT_LISTED
        );
    }
    Some(out)
}
