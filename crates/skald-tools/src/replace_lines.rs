//! replace_lines: replace an inclusive range of lines.

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

pub struct ReplaceLines;

// The arguments' doc comments are the descriptions the model reads.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Args {
    /// File path, relative to the working directory or absolute.
    path: String,
    #[schemars(range(min = 1))]
    start_line: u64,
    /// Inclusive.
    #[schemars(range(min = 1))]
    end_line: u64,
    /// Replacement lines; empty deletes the range.
    content: String,
}

impl ReplaceLines {
    pub const NAME: &'static str = tn::REPLACE_LINES;
}

impl<Cx: ?Sized + Sync> Tool<Cx> for ReplaceLines {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn description(&self) -> &str {
        "Replace lines `start_line` to `end_line` (1-based, inclusive) of a file with \
         `content`; an empty `content` deletes them. Line numbers are those read_file shows; \
         re-read the file after an edit, since numbers shift."
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
            let line = |field: &str, n: u64| -> Result<usize, ToolError> {
                Ok(in_range(field, Some(n), 1, u64::MAX)?
                    .map_or(usize::MAX, |n| usize::try_from(n).unwrap_or(usize::MAX)))
            };
            let start = line("start_line", args.start_line)?;
            let end = line("end_line", args.end_line)?;
            let content = args.content.as_str();
            if end < start {
                return Err(ToolError::invalid(
                    "end_line",
                    format!("{end} is before start_line {start}"),
                ));
            }
            let file = load(scope, &target)?;
            let count = file.line_count();
            if end > count {
                return Err(ToolError::invalid(
                    "end_line",
                    format!("{end} is past the end: the file has {count} lines"),
                ));
            }
            let updated = file.splice_lines(start - 1, end - start + 1, content);
            save(scope, &target, &updated)?;
            let display = fs::relativize_for_display(&path, scope.working_dir());
            Ok(if content.is_empty() {
                format!("Deleted lines {start}-{end} of {display}")
            } else {
                format!(
                    "Replaced lines {start}-{end} of {display} with {} line(s)",
                    content.lines().count().max(1)
                )
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
        let line = |n: u64| usize::try_from(n).ok().filter(|&n| n >= 1);
        let (a, b) = (line(args.start_line)?, line(args.end_line)?);
        if b < a {
            return None;
        }
        let now = crate::text::TextFile::of(now?);
        Some(now.splice_lines(a - 1, b - a + 1, &args.content))
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
    async fn replaces_and_deletes_inclusive_ranges() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.txt");
        std::fs::write(&p, "1\n2\n3\n4\n").unwrap();
        let out = ok(
            &ReplaceLines,
            d.path(),
            json!({"path": "a.txt", "start_line": 2, "end_line": 3, "content": "two-three"}),
        )
        .await;
        assert_eq!(out, "Replaced lines 2-3 of a.txt with 1 line(s)");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "1\ntwo-three\n4\n");
        let out = ok(
            &ReplaceLines,
            d.path(),
            json!({"path": "a.txt", "start_line": 1, "end_line": 1, "content": ""}),
        )
        .await;
        assert_eq!(out, "Deleted lines 1-1 of a.txt");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "two-three\n4\n");
    }

    #[tokio::test]
    async fn bad_ranges_name_the_field() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("a.txt"), "1\n2\n").unwrap();
        let e = err(
            &ReplaceLines,
            d.path(),
            json!({"path": "a.txt", "start_line": 2, "end_line": 1, "content": ""}),
        )
        .await;
        assert!(
            e.starts_with("invalid argument `end_line`: 1 is before"),
            "{e}"
        );
        let e = err(
            &ReplaceLines,
            d.path(),
            json!({"path": "a.txt", "start_line": 1, "end_line": 9, "content": ""}),
        )
        .await;
        assert!(
            e.starts_with("invalid argument `end_line`: 9 is past the end"),
            "{e}"
        );
    }
}
