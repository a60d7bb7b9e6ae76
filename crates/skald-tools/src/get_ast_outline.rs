//! get_ast_outline: the definitions of a file, or of every supported file under a
//! directory, without their bodies.

use crate::fs::{self, Flow, label, path_arg};
use crate::outline_cache::{self, Fresh, Outcome, OutlineCache, Stamp};
use crate::{StopFlag, run_blocking};
use serde::Deserialize;
use schemars::JsonSchema;
use skald_api::tool_args;
use serde_json::Value;
use skald_api::{ToolKind, FileAccess, 
    BoxToolFuture, Tool, ToolCategory, ToolDescriptionLength, ToolError, ToolResult,
    tool_names as tn,
};
use skald_outline::Lang;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

pub struct GetAstOutline;

// The arguments' doc comments are the descriptions the model reads.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Args {
    /// File or directory, relative to the working directory or absolute.
    path: String,
}

impl GetAstOutline {
    pub const NAME: &'static str = tn::GET_AST_OUTLINE;
}

/// Bytes of outline returned for a directory; past it, the remaining files are named
/// only, so the model can ask for a subdirectory.
const DIR_OUTPUT_CAP: usize = 100 * 1024;

impl<Cx: ?Sized + Sync> Tool<Cx> for GetAstOutline {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn description(&self) -> &str {
        "Outline source code: top-level definitions (functions, classes, structs, traits, \
         impls, modules…) with methods indented under their type, one per line as \
         `START-END | kind: name` (1-based, inclusive lines), without bodies. `path` may be \
         a file or a directory (every supported file below it, each after a `== path ==` \
         line; data files — .json .yaml .yml .toml — are outlined only when named). Supports \
         .py .js .mjs .ts .tsx .go .java .c .h .cpp .cc .hpp .swift .lua .rb .sh .ex .exs \
         .json .yaml .yml .html .css .rs .kt .toml .md .sql. Read the lines you need with \
         read_file afterwards."
    }

    fn parameters_schema(&self) -> Value {
        tool_args::schema_for::<Args>()
    }

    fn describe(&self, args: &Value, length: ToolDescriptionLength) -> String {
        label(Tool::<Cx>::name(self), path_arg(args).as_deref(), length)
    }

    fn execute_async<'a>(&'a self, _cx: &'a Cx, args: Value) -> BoxToolFuture<'a> {
        run_blocking(move |scope, stop| {
            // The canonical path the gate checked: a folder is walked from it and every
            // file is opened with no link on its path.
            let args: Args = tool_args::parse(args)?;
            let target = fs::target(scope, &args.path);
            let meta = fs::metadata(&target, "outline")?;
            let path = target.opened;
            let cache = scope.cache_dir().and_then(outline_cache::open);
            if meta.is_dir() {
                outline_dir(&path, scope.excluded(), stop, cache.as_deref())
            } else {
                outline_file(&path, cache.as_deref())
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
        Some(FileAccess::reads(None))
    }
}

/// Outlines one file, or finds its outline kept by `known` (the cache) under the stamp
/// its metadata gives now. Returns what a parse made, to keep, when the file can be kept.
fn outline_text(
    path: &Path,
    lang: Lang,
    cache: Option<&OutlineCache>,
    known: &dyn Fn(&Path, &Stamp) -> Option<Outcome>,
) -> (Outcome, Option<Fresh>) {
    let exact = fs::Target {
        shown: path.to_path_buf(),
        opened: path.to_path_buf(),
    };
    let (mut file, meta) = match fs::open_regular(&exact) {
        Ok(opened) => opened,
        Err(e) => return (Err(e.to_string()), None),
    };
    if meta.len() > skald_outline::MAX_FILE_BYTES as u64 {
        let e = skald_outline::OutlineError::TooLarge(meta.len() as usize);
        return (Err(e.to_string()), None);
    }
    let stamp = Stamp::of(&meta);
    if let Some(kept) = known(path, &stamp) {
        return (kept, None);
    }
    let read_at = SystemTime::now();
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    if let Err(e) = std::io::Read::read_to_end(&mut file, &mut bytes) {
        return (Err(fs::io_error("read", path, &e).to_string()), None);
    }
    let source = String::from_utf8_lossy(&bytes);
    // A `.h` header may be C++ (the name says C).
    let lang = Lang::from_path_and_text(path, &source).unwrap_or(lang);
    let outcome = skald_outline::outline(lang, &source)
        .map(|items| {
            if items.is_empty() {
                "(no definitions)\n".to_string()
            } else {
                skald_outline::format(&items)
            }
        })
        .map_err(|e| e.to_string());
    let fresh = cache.and_then(|c| Fresh::new(c, path, stamp, read_at, &outcome));
    (outcome, fresh)
}

fn outline_file(path: &Path, cache: Option<&OutlineCache>) -> ToolResult {
    let lang = Lang::from_path(path).ok_or_else(|| {
        ToolError::failed(format!(
            "{} has no supported extension for an outline; read it with read_file",
            path.display()
        ))
    })?;
    let (outcome, fresh) = outline_text(path, lang, cache, &|p, stamp| {
        cache.and_then(|c| c.get(p, stamp))
    });
    if let (Some(c), Some(f)) = (cache, fresh) {
        c.put(&[f]);
    }
    outcome.map_err(ToolError::failed)
}

fn outline_dir(
    root: &Path,
    excluded: &[PathBuf],
    stop: &StopFlag,
    cache: Option<&OutlineCache>,
) -> ToolResult {
    // What the cache holds under this folder, read in one query rather than one per file.
    // Each is taken out as its file is met, not copied: together they are the size of the
    // outline of the whole tree.
    let kept = Mutex::new(cache.map(|c| c.under(root)).unwrap_or_default());
    let known = |p: &Path, stamp: &Stamp| {
        let mut kept = kept.lock().unwrap_or_else(|p| p.into_inner());
        match kept.remove(p) {
            Some((s, outcome)) if s == *stamp => Some(outcome),
            _ => None,
        }
    };
    let found: Mutex<Vec<(PathBuf, Outcome)>> = Mutex::new(Vec::new());
    let fresh: Mutex<Vec<Fresh>> = Mutex::new(Vec::new());
    fs::walker(root, excluded)
        .run_parallel(|| {
            let (found, fresh, known) = (&found, &fresh, &known);
            move |entry: fs::Entry| {
                if stop.is_stopped() {
                    return Flow::Quit;
                }
                if !entry.is_file() {
                    return Flow::Continue;
                }
                if let Some(lang) = Lang::from_path(entry.path()).filter(|l| !l.is_data()) {
                    let (text, made) = outline_text(entry.path(), lang, cache, known);
                    if let Some(made) = made {
                        fresh.lock().unwrap_or_else(|p| p.into_inner()).push(made);
                    }
                    found
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .push((entry.into_path(), text));
                }
                Flow::Continue
            }
        })
        .map_err(|e| {
            ToolError::failed(format!(
                "cannot outline {}: {}",
                root.display(),
                skald_base::io_reason(&e)
            ))
        })?;
    if stop.is_stopped() {
        return Err(ToolError::failed("outline stopped"));
    }
    if let Some(c) = cache {
        c.put(&fresh.into_inner().unwrap_or_else(|p| p.into_inner()));
    }
    let mut found = found.into_inner().unwrap_or_else(|p| p.into_inner());
    if found.is_empty() {
        return Ok(format!(
            "No supported source files under {}",
            root.display()
        ));
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    let mut out = String::new();
    let mut omitted = Vec::new();
    for (path, text) in &found {
        let rel = fs::slash_relative(path, root);
        let body: std::borrow::Cow<'_, str> = match text {
            Ok(t) => t.into(),
            Err(e) => format!("({e})\n").into(),
        };
        if out.len() + body.len() > DIR_OUTPUT_CAP {
            omitted.push(rel);
            continue;
        }
        out.push_str(&format!("== {rel} ==\n{body}"));
    }
    if !omitted.is_empty() {
        out.push_str(&format!(
            "[{} more files not outlined to keep this short; outline a subdirectory or one \
             of: {}]\n",
            omitted.len(),
            omitted
                .iter()
                .take(20)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use crate::test_support::{err, ok};

    #[tokio::test]
    async fn outlines_a_file() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(
            d.path().join("a.py"),
            "class A:\n    def m(self):\n        pass\n\ndef f():\n    pass\n",
        )
        .unwrap();
        let out = ok(&GetAstOutline, d.path(), json!({"path": "a.py"})).await;
        assert_eq!(
            out,
            "1-3 | class: A\n  2-3 | method: m\n5-6 | function: f\n"
        );
    }

    #[tokio::test]
    async fn outlines_a_directory_sorted_skipping_noise() {
        let d = tempfile::tempdir().unwrap();
        for (p, body) in [
            ("src/b.rs", "fn b() {}\n"),
            ("src/a.go", "package a\nfunc A() {}\n"),
            ("notes.txt", "not code"),
            ("node_modules/x/i.js", "function hidden() {}\n"),
            ("empty.py", "x = 1\n"),
            ("package.json", "{\"name\": \"skipped in directories\"}"),
        ] {
            let path = d.path().join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, body).unwrap();
        }
        let out = ok(&GetAstOutline, d.path(), json!({"path": "."})).await;
        assert_eq!(
            out,
            "== empty.py ==\n(no definitions)\n== src/a.go ==\n2-2 | function: A\n== src/b.rs ==\n1-1 | function: b\n"
        );
    }

    #[tokio::test]
    async fn errors_are_clear() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("x.unknown"), "?").unwrap();
        let e = err(&GetAstOutline, d.path(), json!({"path": "x.unknown"})).await;
        assert!(e.contains("no supported extension"), "{e}");
        let e = err(&GetAstOutline, d.path(), json!({"path": "missing.rs"})).await;
        assert!(e.contains("no such file"), "{e}");
        std::fs::write(d.path().join("bad.rs"), "fn (").unwrap();
        let e = err(&GetAstOutline, d.path(), json!({"path": "bad.rs"})).await;
        assert!(e.starts_with("cannot parse: line 1"), "{e}");
    }

    /// Runs the tool in `dir` with a cache in `cache_dir` that keeps files however recently
    /// they changed (a test cannot wait out the two seconds for every file it writes).
    async fn cached(dir: &Path, cache_dir: &Path, excluded: Vec<PathBuf>, path: &str) -> String {
        outline_cache::open_for_test(cache_dir).unwrap();
        let exec = Tool::<()>::run(&GetAstOutline, &(), json!({ "path": path }));
        let scope = skald_api::ToolScope::new(dir)
            .with_cache_dir(Some(cache_dir.to_path_buf()))
            .with_excluded(excluded);
        match scope.run(exec.wait()).await {
            skald_api::ExecutionOutcome::Completed(text) => text,
            other => panic!("expected success, got {other:?}"),
        }
    }

    fn stamp(path: &Path) -> Stamp {
        Stamp::of(&std::fs::metadata(path).unwrap())
    }

    fn keep(cache: &OutlineCache, path: &Path, text: &str) {
        let fresh = Fresh::new(
            cache,
            path,
            stamp(path),
            SystemTime::now(),
            &Ok(text.into()),
        );
        cache.put(&fresh.into_iter().collect::<Vec<_>>());
    }

    #[tokio::test]
    async fn outlines_are_kept_and_served_while_the_file_is_unchanged() {
        let d = tempfile::tempdir().unwrap();
        let (work, cache_dir) = (d.path().join("work"), d.path().join("cache"));
        std::fs::create_dir_all(work.join("src")).unwrap();
        std::fs::write(work.join("a.py"), "def a():\n    pass\n").unwrap();
        std::fs::write(work.join("src/b.go"), "package b\nfunc B() {}\n").unwrap();
        let first = cached(&work, &cache_dir, vec![], ".").await;
        assert_eq!(
            first,
            "== a.py ==\n1-2 | function: a\n== src/b.go ==\n2-2 | function: B\n"
        );
        let cache = outline_cache::open_for_test(&cache_dir).unwrap();
        assert_eq!(cache.under(&work).len(), 2, "both files kept");

        // What is kept under the file's stamp is what the tool answers: nothing is parsed.
        keep(
            &cache,
            &work.join("a.py"),
            "1-2 | function: from_the_cache\n",
        );
        let second = cached(&work, &cache_dir, vec![], ".").await;
        assert!(second.contains("function: from_the_cache"), "{second}");
        let single = cached(&work, &cache_dir, vec![], "a.py").await;
        assert_eq!(single, "1-2 | function: from_the_cache\n");

        // A changed file is parsed again, in a directory and alone.
        std::fs::write(
            work.join("a.py"),
            "def a():\n    pass\n\ndef changed():\n    pass\n",
        )
        .unwrap();
        let third = cached(&work, &cache_dir, vec![], ".").await;
        assert!(third.contains("4-5 | function: changed"), "{third}");
        assert!(!third.contains("from_the_cache"), "{third}");
        keep(&cache, &work.join("src/b.go"), "2-2 | function: kept\n");
        std::fs::write(work.join("src/b.go"), "package b\nfunc C() {}\n").unwrap();
        let alone = cached(&work, &cache_dir, vec![], "src/b.go").await;
        assert_eq!(alone, "2-2 | function: C\n");
    }

    #[tokio::test]
    async fn a_kept_outline_never_reaches_a_call_that_may_not_read_the_file() {
        let d = tempfile::tempdir().unwrap();
        let (work, cache_dir) = (d.path().join("work"), d.path().join("cache"));
        for dir in ["private", "secrets", "node_modules/x"] {
            std::fs::create_dir_all(work.join(dir)).unwrap();
        }
        std::fs::write(work.join("open.py"), "def visible():\n    pass\n").unwrap();
        std::fs::write(work.join("private/p.py"), "def hidden():\n    pass\n").unwrap();
        std::fs::write(work.join("secrets/s.py"), "def hidden():\n    pass\n").unwrap();
        std::fs::write(work.join("node_modules/x/n.js"), "function hidden() {}\n").unwrap();
        // Kept by an earlier call (or planted): each of these is still left out.
        let cache = outline_cache::open_for_test(&cache_dir).unwrap();
        for f in ["private/p.py", "secrets/s.py", "node_modules/x/n.js"] {
            keep(&cache, &work.join(f), "1-1 | function: hidden\n");
        }
        let denied = vec![std::fs::canonicalize(work.join("private")).unwrap()];
        let out = cached(&work, &cache_dir, denied, ".").await;
        assert_eq!(out, "== open.py ==\n1-2 | function: visible\n");
    }

    #[tokio::test]
    async fn without_a_usable_cache_outlines_are_made_as_before() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("a.py"), "def a():\n    pass\n").unwrap();
        // The cache folder is a file: it cannot be opened.
        let blocked = d.path().join("cache");
        std::fs::write(&blocked, "not a folder").unwrap();
        assert!(outline_cache::open(&blocked).is_none());
        let exec = Tool::<()>::run(&GetAstOutline, &(), json!({ "path": "." }));
        let out = skald_api::ToolScope::new(d.path())
            .with_cache_dir(Some(blocked))
            .run(exec.wait())
            .await;
        assert_eq!(
            out,
            skald_api::ExecutionOutcome::Completed("== a.py ==\n1-2 | function: a\n".into())
        );
    }
}
