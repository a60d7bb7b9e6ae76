//! edit_file: replace an exact piece of text in a file.

use crate::fs::{self, label, path_arg};
use crate::run_blocking;
use crate::text::{load, save};
use serde::Deserialize;
use schemars::JsonSchema;
use skald_api::tool_args;
use serde_json::Value;
use skald_api::{ToolKind, FileAccess, 
    BoxToolFuture, Tool, ToolCategory, ToolDescriptionLength, ToolError, tool_names as tn,
};

pub struct EditFile;

// The arguments' doc comments are the descriptions the model reads.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Args {
    /// File path, relative to the working directory or absolute.
    path: String,
    /// The exact text to replace.
    old: String,
    /// The replacement text.
    new: String,
    /// Replace every occurrence (default false).
    replace_all: Option<bool>,
}

impl EditFile {
    pub const NAME: &'static str = tn::EDIT_FILE;
}

/// Line numbers reported in an "ambiguous match" error, at most.
const MAX_REPORTED_LINES: usize = 20;

impl<Cx: ?Sized + Sync> Tool<Cx> for EditFile {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn description(&self) -> &str {
        "Replace the exact text `old` with `new` in a file. `old` must match exactly once \
         (include surrounding lines to make it unique) unless `replace_all` is true. Line \
         endings of the file are kept. Use this instead of sed/awk."
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
            let (old, new) = (args.old.as_str(), args.new.as_str());
            let replace_all = args.replace_all.unwrap_or(false);
            if old.is_empty() {
                return Err(ToolError::invalid("old", "must not be empty"));
            }
            if old == new {
                return Err(ToolError::invalid(
                    "new",
                    "is the same as `old`; nothing to change",
                ));
            }
            let file = load(scope, &target)?;
            let display = fs::relativize_for_display(&path, scope.working_dir());
            // The model writes `\n`; a CRLF file holds `\r\n`. Match and write in the
            // file's own endings (converting is idempotent on text that has them already),
            // so an `old` of "\nfoo" cannot match the `\n` of a `\r\n`.
            let old_f = file.to_file_endings(old);
            let new_f = file.to_file_endings(new);
            let (count, lines) = match_lines(&file.text, &old_f);
            match count {
                0 => Err(ToolError::failed(format!(
                    "`old` was not found in {display}{}",
                    near_miss_hint(&file.text, old)
                ))),
                n if n > 1 && !replace_all => {
                    let shown: Vec<String> = lines.iter().map(usize::to_string).collect();
                    let more = if n > MAX_REPORTED_LINES { ", …" } else { "" };
                    Err(ToolError::failed(format!(
                        "`old` matches {n} times in {display} (lines {}{more}); include more \
                         surrounding text to make it unique, or set replace_all",
                        shown.join(", ")
                    )))
                }
                n => {
                    let updated = file.text.replace(&old_f, &new_f);
                    save(scope, &target, &updated)?;
                    let more = if n > MAX_REPORTED_LINES { ", …" } else { "" };
                    let at = lines
                        .iter()
                        .map(usize::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                        + more;
                    let noun = if n == 1 { "occurrence" } else { "occurrences" };
                    let plural = if n == 1 { "" } else { "s" };
                    Ok(format!(
                        "Replaced {n} {noun} in {display} (line{plural} {at})"
                    ))
                }
            }
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

    fn content_after(&self, args: &Value, now: Option<&str>, max_bytes: usize) -> Option<String> {
        let (now, args) = (now?, tool_args::parse::<Args>(args.clone()).ok()?);
        let (from, to) = (args.old.as_str(), args.new.as_str());
        if from.is_empty() {
            return None;
        }
        // Counted before it is built: `old` of " " with replace_all could otherwise build
        // gigabytes before anyone saw the call.
        let all = args.replace_all == Some(true);
        let hits = if all { now.matches(from).count() } else { 1 };
        let size = now.len().saturating_add(hits.saturating_mul(to.len()));
        (size <= max_bytes).then(|| {
            if all {
                now.replace(from, to)
            } else {
                now.replacen(from, to, 1)
            }
        })
    }

    fn for_small_models(&self) -> bool {
        true
    }

    fn hook_alias(&self) -> Option<&'static str> {
        Some("Edit")
    }

    fn changes_files(&self) -> bool {
        true
    }
}

/// How many times `needle` occurs, and the 1-based lines of the first
/// `MAX_REPORTED_LINES` occurrences, in one pass over the text.
fn match_lines(text: &str, needle: &str) -> (usize, Vec<usize>) {
    let mut count = 0;
    let mut lines = Vec::new();
    let (mut line, mut scanned) = (1, 0);
    for (at, _) in text.match_indices(needle) {
        count += 1;
        if lines.len() < MAX_REPORTED_LINES {
            line += text.as_bytes()[scanned..at]
                .iter()
                .filter(|&&b| b == b'\n')
                .count();
            scanned = at;
            lines.push(line);
        }
    }
    (count, lines)
}

/// When `old` only differs from the file in whitespace, say so: it is the usual mistake.
fn near_miss_hint(text: &str, old: &str) -> &'static str {
    let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    if squash(text).contains(&squash(old)) {
        " (a match exists that differs only in whitespace or indentation; copy the text \
         exactly as read_file shows it, without the line-number prefix)"
    } else {
        ""
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use crate::test_support::{err, ok};

    #[tokio::test]
    async fn replaces_a_unique_match() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("a.rs"), "fn a() {}\nfn b() {}\n").unwrap();
        let out = ok(
            &EditFile,
            d.path(),
            json!({"path": "a.rs", "old": "fn b", "new": "fn c"}),
        )
        .await;
        assert_eq!(out, "Replaced 1 occurrence in a.rs (line 2)");
        assert_eq!(
            std::fs::read_to_string(d.path().join("a.rs")).unwrap(),
            "fn a() {}\nfn c() {}\n"
        );
    }

    #[tokio::test]
    async fn several_matches_need_replace_all() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("a.txt"), "x\ny\nx\nx\n").unwrap();
        let e = err(
            &EditFile,
            d.path(),
            json!({"path": "a.txt", "old": "x", "new": "z"}),
        )
        .await;
        assert!(
            e.contains("matches 3 times") && e.contains("lines 1, 3, 4"),
            "{e}"
        );
        assert_eq!(
            std::fs::read_to_string(d.path().join("a.txt")).unwrap(),
            "x\ny\nx\nx\n"
        );
        let out = ok(
            &EditFile,
            d.path(),
            json!({"path": "a.txt", "old": "x", "new": "z", "replace_all": true}),
        )
        .await;
        assert_eq!(out, "Replaced 3 occurrences in a.txt (lines 1, 3, 4)");
        assert_eq!(
            std::fs::read_to_string(d.path().join("a.txt")).unwrap(),
            "z\ny\nz\nz\n"
        );
    }

    #[tokio::test]
    async fn no_match_is_an_error_with_a_hint() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("a.py"), "def f():\n    return 1\n").unwrap();
        let e = err(
            &EditFile,
            d.path(),
            json!({"path": "a.py", "old": "nothing", "new": "x"}),
        )
        .await;
        assert_eq!(e, "`old` was not found in a.py");
        let e = err(
            &EditFile,
            d.path(),
            json!({"path": "a.py", "old": "def f():\n  return 1", "new": "x"}),
        )
        .await;
        assert!(e.contains("differs only in whitespace"), "{e}");
    }

    #[tokio::test]
    async fn crlf_files_stay_crlf() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("w.txt"), "one\r\ntwo\r\nthree\r\n").unwrap();
        ok(
            &EditFile,
            d.path(),
            json!({"path": "w.txt", "old": "one\ntwo", "new": "1\n2\n2.5"}),
        )
        .await;
        assert_eq!(
            std::fs::read_to_string(d.path().join("w.txt")).unwrap(),
            "1\r\n2\r\n2.5\r\nthree\r\n"
        );
    }

    #[tokio::test]
    async fn an_old_starting_with_a_newline_does_not_split_a_crlf() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("w.rs"), "fn a() {}\r\nfn b() {}\r\n").unwrap();
        ok(
            &EditFile,
            d.path(),
            json!({"path": "w.rs", "old": "\nfn b", "new": "\nfn c"}),
        )
        .await;
        assert_eq!(
            std::fs::read_to_string(d.path().join("w.rs")).unwrap(),
            "fn a() {}\r\nfn c() {}\r\n"
        );
    }

    #[test]
    fn match_lines_counts_all_and_numbers_the_first() {
        let text = "x\n".repeat(100);
        let (count, lines) = match_lines(&text, "x");
        assert_eq!(count, 100);
        assert_eq!(lines, (1..=20).collect::<Vec<_>>());
    }

    #[tokio::test]
    async fn argument_errors_name_the_field() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("a.txt"), "a").unwrap();
        let e = err(
            &EditFile,
            d.path(),
            json!({"path": "a.txt", "old": "", "new": "x"}),
        )
        .await;
        assert!(e.starts_with("invalid argument `old`"), "{e}");
        let e = err(
            &EditFile,
            d.path(),
            json!({"path": "a.txt", "old": "a", "new": "a"}),
        )
        .await;
        assert!(e.starts_with("invalid argument `new`"), "{e}");
        let e = err(
            &EditFile,
            d.path(),
            json!({"path": "nope.txt", "old": "a", "new": "b"}),
        )
        .await;
        assert!(e.contains("no such file"), "{e}");
    }
}
