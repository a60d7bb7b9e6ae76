//! insert_at_line: insert text before a given line.

use crate::fs::{self, in_range, label, path_arg};
use crate::run_blocking;
use crate::text::{load, save};
use serde::Deserialize;
use schemars::JsonSchema;
use skald_api::tool_args;
use serde_json::Value;
use skald_api::{ToolKind, FileAccess, 
    BoxToolFuture, Tool, ToolCategory, ToolDescriptionLength, ToolError, tool_names as tn,
};

pub struct InsertAtLine;

// The arguments' doc comments are the descriptions the model reads.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Args {
    /// File path, relative to the working directory or absolute.
    path: String,
    /// The new text goes before this line.
    #[schemars(range(min = 1))]
    line: u64,
    /// The lines to insert.
    content: String,
}

impl InsertAtLine {
    pub const NAME: &'static str = tn::INSERT_AT_LINE;
}

impl<Cx: ?Sized + Sync> Tool<Cx> for InsertAtLine {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn description(&self) -> &str {
        "Insert `content` before line `line` (1-based) of a file; `line` = number of lines + 1 \
         appends at the end. Line numbers are those read_file shows. The file's line endings \
         are kept."
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
        let written = crate::fs::path_arg(&args);
        crate::then_diagnostics(written, run_blocking(move |scope, _| {
            let args: Args = tool_args::parse(args)?;
            let target = fs::target(scope, &args.path);
            let path = target.shown.clone();
            let line = in_range("line", Some(args.line), 1, u64::MAX)?.unwrap_or(1);
            let content = args.content.as_str();
            if content.is_empty() {
                return Err(ToolError::invalid("content", "must not be empty"));
            }
            let file = load(scope, &target)?;
            let count = file.line_count();
            let line = usize::try_from(line).unwrap_or(usize::MAX);
            if line > count + 1 {
                return Err(ToolError::invalid(
                    "line",
                    format!(
                        "{line} is past the end: the file has {count} lines (use {} to append)",
                        count + 1
                    ),
                ));
            }
            let updated = file.splice_lines(line - 1, 0, content);
            save(scope, &target, &updated)?;
            let added = content.lines().count().max(1);
            let display = fs::relativize_for_display(&path, scope.working_dir());
            Ok(if line == count + 1 {
                format!("Appended {added} line(s) to {display}")
            } else {
                format!("Inserted {added} line(s) before line {line} of {display}")
            })
        }))
    }

    fn category(&self) -> ToolCategory {
        ToolCategory::Filesystem
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Edit
    }

    fn file_access(&self) -> Option<FileAccess> {
        Some(FileAccess::writes())
    }

    fn content_after(&self, args: &Value, now: Option<&str>, _max_bytes: usize) -> Option<String> {
        let args = tool_args::parse::<Args>(args.clone()).ok()?;
        let line = usize::try_from(args.line).ok().filter(|&n| n >= 1)?;
        let now = crate::text::TextFile::of(now?);
        Some(now.splice_lines(line - 1, 0, &args.content))
    }

    fn hook_alias(&self) -> Option<&'static str> {
        Some("Edit")
    }

    fn changes_files(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use crate::test_support::{err, ok};

    #[tokio::test]
    async fn inserts_and_appends() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.txt");
        std::fs::write(&p, "one\nthree\n").unwrap();
        let out = ok(
            &InsertAtLine,
            d.path(),
            json!({"path": "a.txt", "line": 2, "content": "two"}),
        )
        .await;
        assert_eq!(out, "Inserted 1 line(s) before line 2 of a.txt");
        let out = ok(
            &InsertAtLine,
            d.path(),
            json!({"path": "a.txt", "line": 4, "content": "four\nfive\n"}),
        )
        .await;
        assert_eq!(out, "Appended 2 line(s) to a.txt");
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            "one\ntwo\nthree\nfour\nfive\n"
        );
    }

    #[tokio::test]
    async fn past_the_end_is_refused() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("a.txt"), "one\n").unwrap();
        let e = err(
            &InsertAtLine,
            d.path(),
            json!({"path": "a.txt", "line": 5, "content": "x"}),
        )
        .await;
        assert!(
            e.starts_with("invalid argument `line`: 5 is past the end: the file has 1 lines"),
            "{e}"
        );
    }

    #[tokio::test]
    async fn crlf_is_kept() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("w.txt"), "a\r\nc\r\n").unwrap();
        ok(
            &InsertAtLine,
            d.path(),
            json!({"path": "w.txt", "line": 2, "content": "b"}),
        )
        .await;
        assert_eq!(
            std::fs::read_to_string(d.path().join("w.txt")).unwrap(),
            "a\r\nb\r\nc\r\n"
        );
    }
}
