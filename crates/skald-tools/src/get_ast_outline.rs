//! get_ast_outline: the definitions of a file, or of every supported file under a
//! directory, without their bodies.

use crate::fs::{self, label, path_arg, str_arg};
use crate::{StopFlag, run_blocking};
use ignore::WalkState;
use serde_json::{Value, json};
use skald_api::{
    BoxToolFuture, Tool, ToolCategory, ToolDescriptionLength, ToolError, ToolResult,
    tool_names as tn,
};
use skald_outline::Lang;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

pub struct GetAstOutline;

/// Bytes of outline returned for a directory; past it, the remaining files are named
/// only, so the model can ask for a subdirectory.
const DIR_OUTPUT_CAP: usize = 100 * 1024;

impl<Cx: ?Sized + Sync> Tool<Cx> for GetAstOutline {
    fn name(&self) -> &str {
        tn::GET_AST_OUTLINE
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
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File or directory, relative to the working directory or absolute."}
            },
            "required": ["path"],
            "additionalProperties": false
        })
    }

    fn describe(&self, args: &Value, length: ToolDescriptionLength) -> String {
        label(Tool::<Cx>::name(self), path_arg(args).as_deref(), length)
    }

    fn execute_async<'a>(&'a self, _cx: &'a Cx, args: Value) -> BoxToolFuture<'a> {
        run_blocking(move |scope, stop| {
            let path = fs::resolve_in(str_arg(&args, "path")?, scope.working_dir());
            let meta = std::fs::metadata(&path).map_err(|e| fs::io_error("outline", &path, &e))?;
            if meta.is_dir() {
                outline_dir(&path, scope.excluded(), stop)
            } else {
                outline_file(&path)
            }
        })
    }

    fn category(&self) -> ToolCategory {
        ToolCategory::Filesystem
    }
}

fn outline_text(path: &Path, lang: Lang) -> Result<String, String> {
    let meta = fs::regular_file(path).map_err(|e| e.to_string())?;
    if meta.len() > skald_outline::MAX_FILE_BYTES as u64 {
        return Err(skald_outline::OutlineError::TooLarge(meta.len() as usize).to_string());
    }
    let bytes = std::fs::read(path).map_err(|e| fs::io_error("read", path, &e).to_string())?;
    let source = String::from_utf8_lossy(&bytes);
    skald_outline::outline(lang, &source)
        .map(|items| {
            if items.is_empty() {
                "(no definitions)\n".to_string()
            } else {
                skald_outline::format(&items)
            }
        })
        .map_err(|e| e.to_string())
}

fn outline_file(path: &Path) -> ToolResult {
    let lang = Lang::from_path(path).ok_or_else(|| {
        ToolError::failed(format!(
            "{} has no supported extension for an outline; read it with read_file",
            path.display()
        ))
    })?;
    outline_text(path, lang).map_err(ToolError::failed)
}

fn outline_dir(root: &Path, excluded: &[PathBuf], stop: &StopFlag) -> ToolResult {
    let found: Mutex<Vec<(PathBuf, Result<String, String>)>> = Mutex::new(Vec::new());
    fs::walker(root, excluded).build_parallel().run(|| {
        let found = &found;
        Box::new(move |entry| {
            if stop.is_stopped() {
                return WalkState::Quit;
            }
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return WalkState::Continue;
            }
            if let Some(lang) = Lang::from_path(entry.path()).filter(|l| !l.is_data()) {
                let text = outline_text(entry.path(), lang);
                found
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push((entry.into_path(), text));
            }
            WalkState::Continue
        })
    });
    if stop.is_stopped() {
        return Err(ToolError::failed("outline stopped"));
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
        let body = match text {
            Ok(t) => t.clone(),
            Err(e) => format!("({e})\n"),
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
}
