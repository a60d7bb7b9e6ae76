//! search_file: find a text in one file, with context.

use crate::fs::{self, in_range, label, path_arg};
use crate::run_blocking;
use crate::search::{self, Entry};
use crate::text::looks_binary;
use serde::Deserialize;
use schemars::JsonSchema;
use skald_api::tool_args;
use serde_json::Value;
use skald_api::{ToolKind, FileAccess, 
    BoxToolFuture, Tool, ToolCategory, ToolDescriptionLength, ToolError, tool_names as tn,
};
use std::io::Read;

pub struct SearchFile;

// The arguments' doc comments are the descriptions the model reads.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Args {
    /// File path, relative to the working directory or absolute.
    path: String,
    /// Literal text to find.
    query: String,
    /// Default 3.
    #[schemars(range(min = 0, max = 20))]
    context_lines: Option<u64>,
}

impl SearchFile {
    pub const NAME: &'static str = tn::SEARCH_FILE;
}

/// Matching lines shown at most; the rest are counted.
const MAX_MATCHES: usize = 200;

impl<Cx: ?Sized + Sync> Tool<Cx> for SearchFile {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn description(&self) -> &str {
        "Find a literal text in one file and show each matching line with its line number and \
         `context_lines` lines around it (default 3). Case-insensitive unless `query` has an \
         upper-case letter. To search many files, use grep_files."
    }

    fn parameters_schema(&self) -> Value {
        tool_args::schema_for::<Args>()
    }

    fn describe(&self, args: &Value, length: ToolDescriptionLength) -> String {
        label(Tool::<Cx>::name(self), path_arg(args).as_deref(), length)
    }

    fn target_path(&self, args: &Value) -> Option<String> {
        path_arg(args)
    }

    fn execute_async<'a>(&'a self, _cx: &'a Cx, args: Value) -> BoxToolFuture<'a> {
        run_blocking(move |scope, _| {
            let args: Args = tool_args::parse(args)?;
            let target = fs::target(scope, &args.path);
            let path = target.shown.clone();
            let query = args.query.as_str();
            if query.is_empty() {
                return Err(ToolError::invalid("query", "must not be empty"));
            }
            let context = in_range("context_lines", args.context_lines, 0, 20)?.unwrap_or(3) as usize;
            let display = fs::relativize_for_display(&path, scope.working_dir());
            let mut head = [0u8; crate::text::BINARY_SNIFF];
            let (file, _) = fs::open_regular(&target)?;
            let n = (&file)
                .read(&mut head)
                .map_err(|e| fs::io_error("read", &path, &e))?;
            if looks_binary(&head[..n]) {
                return Ok(format!("{display} is a binary file; not searched"));
            }
            // Smart case, as people expect from editors: `foo` finds `Foo`, `Foo` does not
            // find `foo`.
            let case_sensitive = query.chars().any(char::is_uppercase);
            let matcher = search::matcher(query, case_sensitive, true)?;
            let entries = search::search_open_file(&file, &matcher, context)
                .map_err(|e| fs::io_error("read", &path, &e))?;
            let total = entries
                .iter()
                .filter(|e| matches!(e, Entry::Match { .. }))
                .count();
            if total == 0 {
                return Ok(format!("No match for `{query}` in {display}"));
            }
            let mut shown = 0;
            let cut = entries
                .iter()
                .position(|e| {
                    if matches!(e, Entry::Match { .. }) {
                        shown += 1;
                    }
                    shown > MAX_MATCHES
                })
                .unwrap_or(entries.len());
            let mut out = String::new();
            search::render(&entries[..cut], "", &mut out);
            let plural = if total == 1 { "" } else { "es" };
            if total > MAX_MATCHES {
                out.push_str(&format!(
                    "[{total} matching lines in {display}; the first {MAX_MATCHES} shown]\n"
                ));
            } else {
                out.push_str(&format!("[{total} match{plural} in {display}]\n"));
            }
            Ok(out)
        })
    }

    fn category(&self) -> ToolCategory {
        ToolCategory::Filesystem
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Search
    }

    fn file_access(&self) -> Option<FileAccess> {
        Some(FileAccess::reads(None))
    }

    fn for_small_models(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use crate::test_support::{err, ok};

    #[tokio::test]
    async fn finds_with_context_and_smart_case() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("a.txt"), "one\nTwo\nthree\nfour\ntwo again\n").unwrap();
        let out = ok(
            &SearchFile,
            d.path(),
            json!({"path": "a.txt", "query": "two", "context_lines": 1}),
        )
        .await;
        assert_eq!(
            out,
            "1-one\n2:Two\n3-three\n4-four\n5:two again\n[2 matches in a.txt]\n"
        );
        let out = ok(
            &SearchFile,
            d.path(),
            json!({"path": "a.txt", "query": "Two", "context_lines": 0}),
        )
        .await;
        assert_eq!(out, "2:Two\n[1 match in a.txt]\n");
        let out = ok(
            &SearchFile,
            d.path(),
            json!({"path": "a.txt", "query": "a.b"}),
        )
        .await;
        assert_eq!(
            out, "No match for `a.b` in a.txt",
            "the query is literal, not a regex"
        );
    }

    #[tokio::test]
    async fn errors_and_binary() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("b.bin"), b"x\x00y").unwrap();
        let out = ok(
            &SearchFile,
            d.path(),
            json!({"path": "b.bin", "query": "x"}),
        )
        .await;
        assert!(out.contains("binary"));
        let e = err(
            &SearchFile,
            d.path(),
            json!({"path": "none.txt", "query": "x"}),
        )
        .await;
        assert!(e.contains("no such file"), "{e}");
        let e = err(&SearchFile, d.path(), json!({"path": "b.bin", "query": ""})).await;
        assert!(e.starts_with("invalid argument `query`"), "{e}");
    }
}
