//! grep_files: search a tree for a regex, ripgrep-style, with stable output and paging.

use crate::fs::{self, in_range};
use crate::run_blocking;
use crate::search::{self, Entry, FileCount, WalkSpec};
use serde::Deserialize;
use schemars::JsonSchema;
use skald_api::tool_args;
use serde_json::Value;
use skald_api::{ToolKind, FileAccess, 
    BoxToolFuture, Tool, ToolCategory, ToolDescriptionLength, ToolError, ToolResult,
    tool_names as tn,
};
use std::path::Path;

pub struct GrepFiles;

// The arguments' doc comments are the descriptions the model reads.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Args {
    /// Regular expression to search for.
    pattern: String,
    /// Directory (or file) to search; default the working directory.
    path: Option<String>,
    /// Default true.
    case_sensitive: Option<bool>,
    /// Only search files matching this glob, e.g. `*.rs` or `src/**/*.ts`.
    include_glob: Option<String>,
    /// Default content.
    output_mode: Option<Mode>,
    /// Lines of context around each match (content mode). Default 0.
    #[schemars(range(min = 0, max = 10))]
    context_lines: Option<u64>,
    /// Results per page (matches, or files in files_only/count mode). Default 100.
    #[schemars(range(min = 1, max = MAX_MAX_RESULTS))]
    max_results: Option<u64>,
    /// Results to skip, for paging. Default 0.
    #[schemars(range(min = 0))]
    offset: Option<u64>,
}

impl GrepFiles {
    pub const NAME: &'static str = tn::GREP_FILES;
}

const DEFAULT_MAX_RESULTS: u64 = 100;
const MAX_MAX_RESULTS: u64 = 1000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Mode {
    Content,
    FilesOnly,
    Count,
}

impl<Cx: ?Sized + Sync> Tool<Cx> for GrepFiles {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn description(&self) -> &str {
        "Search file contents under a directory with a regular expression (Rust regex \
         syntax), respecting .gitignore and skipping binary files, .git, node_modules, target \
         and secrets. Output modes: `content` (path:line:text; context lines as \
         path-line-text), `files_only` (one path a line) or `count` (path:N). Results are \
         sorted by path then line and paged with `offset`. Use this instead of grep/rg."
    }

    fn parameters_schema(&self) -> Value {
        tool_args::schema_for::<Args>()
    }

    fn describe(&self, args: &Value, length: ToolDescriptionLength) -> String {
        let pattern = args.get("pattern").and_then(Value::as_str).unwrap_or("");
        let label = match args.get("path").and_then(Value::as_str) {
            Some(p) if p != "." && !p.is_empty() => {
                format!(
                    "{} `{}` in {}",
                    Tool::<Cx>::name(self),
                    fs::one_line(pattern),
                    p
                )
            }
            _ => format!("{} `{}`", Tool::<Cx>::name(self), fs::one_line(pattern)),
        };
        length.fit(&label)
    }

    fn execute_async<'a>(&'a self, _cx: &'a Cx, args: Value) -> BoxToolFuture<'a> {
        run_blocking(move |scope, stop| {
            let args: Args = tool_args::parse(args)?;
            let pattern = args.pattern.as_str();
            // Walked from the canonical folder the gate checked, so every file the walk
            // yields can be opened with no link on its path (`search::search_file`).
            let target = fs::target(scope, args.path.as_deref().unwrap_or("."));
            let root = target.opened;
            let case_sensitive = args.case_sensitive.unwrap_or(true);
            let include_glob = args.include_glob.as_deref();
            let mode = args.output_mode.unwrap_or(Mode::Content);
            let context = in_range("context_lines", args.context_lines, 0, 10)?.unwrap_or(0) as usize;
            let max = in_range("max_results", args.max_results, 1, MAX_MAX_RESULTS)?
                .unwrap_or(DEFAULT_MAX_RESULTS);
            let offset = args.offset.unwrap_or(0);
            if !root.exists() {
                return Err(ToolError::failed(format!(
                    "cannot search {}: no such file or directory",
                    target.shown.display()
                )));
            }
            let matcher = search::matcher(pattern, case_sensitive, false)?;
            let spec = WalkSpec {
                root: &root,
                include_glob,
                excluded: scope.excluded(),
            };
            let files = search::count_matches(&spec, &matcher, mode == Mode::FilesOnly, stop)?;
            let page = Page { offset, max };
            match mode {
                Mode::FilesOnly | Mode::Count => Ok(render_files(&root, &files, mode, page)),
                Mode::Content => render_content(&root, &files, &matcher, context, page, pattern),
            }
        })
    }

    fn category(&self) -> ToolCategory {
        ToolCategory::Filesystem
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Search
    }

    fn file_access(&self) -> Option<FileAccess> {
        Some(FileAccess::reads(Some(".")))
    }

    fn for_small_models(&self) -> bool {
        true
    }

    fn hook_alias(&self) -> Option<&'static str> {
        Some("Grep")
    }
}

#[derive(Clone, Copy)]
struct Page {
    offset: u64,
    max: u64,
}

fn display(root: &Path, path: &Path) -> String {
    fs::slash_relative(path, root)
}

fn footer(out: &mut String, total: u64, shown_until: u64, what: &str) {
    if shown_until < total {
        out.push_str(&format!(
            "[{} more {what}; use offset={shown_until} to see them]\n",
            total - shown_until
        ));
    }
}

fn render_files(root: &Path, files: &[FileCount], mode: Mode, page: Page) -> String {
    if files.is_empty() {
        return "No matches.".to_string();
    }
    let mut out = String::new();
    let start = usize::try_from(page.offset).unwrap_or(usize::MAX);
    let take = usize::try_from(page.max).unwrap_or(usize::MAX);
    for f in files.iter().skip(start).take(take) {
        match mode {
            Mode::Count => out.push_str(&format!("{}:{}\n", display(root, &f.path), f.count)),
            _ => out.push_str(&format!("{}\n", display(root, &f.path))),
        }
    }
    let total = files.len() as u64;
    if out.is_empty() {
        out.push_str(&format!(
            "No results at offset {} (there are {total}).\n",
            page.offset
        ));
    }
    footer(
        &mut out,
        total,
        page.offset.saturating_add(page.max).min(total),
        "files",
    );
    out
}

fn render_content(
    root: &Path,
    files: &[FileCount],
    matcher: &grep_regex::RegexMatcher,
    context: usize,
    page: Page,
    pattern: &str,
) -> ToolResult {
    let total: u64 = files.iter().map(|f| f.count).sum();
    if total == 0 {
        return Ok(format!("No matches for `{pattern}`."));
    }
    let (first, last) = (page.offset, page.offset.saturating_add(page.max).min(total));
    let mut out = String::new();
    let mut seen: u64 = 0;
    let mut printed_any = false;
    for f in files {
        let (lo, hi) = (seen, seen + f.count);
        seen = hi;
        if hi <= first || lo >= last {
            continue;
        }
        // Only the files on this page are searched a second time, for their lines.
        let entries = search::search_file(&f.path, matcher, context)
            .map_err(|e| fs::io_error("read", &f.path, &e))?;
        let wanted = (first.saturating_sub(lo), (last - lo).min(f.count));
        let slice = page_slice(&entries, wanted.0, wanted.1);
        if slice.is_empty() {
            continue;
        }
        if printed_any && context > 0 {
            out.push_str("--\n");
        }
        search::render(slice, &display(root, &f.path), &mut out);
        printed_any = true;
    }
    if !printed_any {
        out.push_str(&format!(
            "No results at offset {} (there are {total}).\n",
            page.offset
        ));
    }
    footer(&mut out, total, last, "matches");
    Ok(out)
}

/// The entries covering matches `from..to` (indices among the file's matches) with their
/// leading and trailing context, and no other match.
fn page_slice(entries: &[Entry], from: u64, to: u64) -> &[Entry] {
    let match_positions: Vec<usize> = entries
        .iter()
        .enumerate()
        .filter(|(_, e)| matches!(e, Entry::Match { .. }))
        .map(|(i, _)| i)
        .collect();
    let (Some(&a), Some(&b)) = (
        match_positions.get(from as usize),
        to.checked_sub(1)
            .and_then(|t| match_positions.get(t as usize)),
    ) else {
        return &[];
    };
    let mut start = a;
    while start > 0 && matches!(entries[start - 1], Entry::Context { .. }) {
        start -= 1;
    }
    let mut end = b;
    while end + 1 < entries.len() && matches!(entries[end + 1], Entry::Context { .. }) {
        end += 1;
    }
    &entries[start..=end]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use crate::test_support::{err, ok};

    fn tree() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        let w = |p: &str, s: &str| {
            let path = d.path().join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, s).unwrap();
        };
        w("src/main.rs", "fn main() {\n    let needle = 1;\n}\n");
        w(
            "src/lib.rs",
            "// Needle in caps\npub fn needle() {}\nneedle again\n",
        );
        w("README.md", "no match here\n");
        w("target/debug/x.rs", "needle in target\n");
        w("node_modules/m/index.js", "needle in node_modules\n");
        w("secrets/key.txt", "needle secret\n");
        w("ignored/file.txt", "needle ignored\n");
        w(".gitignore", "ignored/\n");
        w(".hidden/h.txt", "needle hidden\n");
        std::fs::write(d.path().join("bin.dat"), b"needle\x00\x01").unwrap();
        d
    }

    #[tokio::test]
    async fn content_mode_is_sorted_and_skips_what_it_must() {
        let d = tree();
        let out = ok(&GrepFiles, d.path(), json!({"pattern": "needle"})).await;
        assert_eq!(
            out,
            ".hidden/h.txt:1:needle hidden\n\
             src/lib.rs:2:pub fn needle() {}\n\
             src/lib.rs:3:needle again\n\
             src/main.rs:2:    let needle = 1;\n"
        );
    }

    #[tokio::test]
    async fn case_insensitive_files_only_and_count() {
        let d = tree();
        let out = ok(
            &GrepFiles,
            d.path(),
            json!({"pattern": "needle", "case_sensitive": false, "output_mode": "count"}),
        )
        .await;
        assert_eq!(out, ".hidden/h.txt:1\nsrc/lib.rs:3\nsrc/main.rs:1\n");
        let out = ok(
            &GrepFiles,
            d.path(),
            json!({"pattern": "needle", "output_mode": "files_only", "include_glob": "*.rs"}),
        )
        .await;
        assert_eq!(out, "src/lib.rs\nsrc/main.rs\n");
    }

    #[tokio::test]
    async fn paging_with_offset() {
        let d = tree();
        let out = ok(
            &GrepFiles,
            d.path(),
            json!({"pattern": "needle", "max_results": 2}),
        )
        .await;
        assert_eq!(
            out,
            ".hidden/h.txt:1:needle hidden\nsrc/lib.rs:2:pub fn needle() {}\n\
             [2 more matches; use offset=2 to see them]\n"
        );
        let out = ok(
            &GrepFiles,
            d.path(),
            json!({"pattern": "needle", "max_results": 2, "offset": 2}),
        )
        .await;
        assert_eq!(
            out,
            "src/lib.rs:3:needle again\nsrc/main.rs:2:    let needle = 1;\n"
        );
    }

    #[tokio::test]
    async fn context_lines_and_subdirectory_paths() {
        let d = tree();
        let out = ok(
            &GrepFiles,
            d.path(),
            json!({"pattern": "let", "path": "src", "context_lines": 1}),
        )
        .await;
        assert_eq!(
            out,
            "main.rs-1-fn main() {\nmain.rs:2:    let needle = 1;\nmain.rs-3-}\n"
        );
        let out = ok(
            &GrepFiles,
            d.path(),
            json!({"pattern": "let", "path": "src/main.rs"}),
        )
        .await;
        assert_eq!(out, "main.rs:2:    let needle = 1;\n");
    }

    #[tokio::test]
    async fn errors_are_clear() {
        let d = tree();
        let e = err(&GrepFiles, d.path(), json!({"pattern": "(oops"})).await;
        assert!(
            e.starts_with("invalid argument `pattern`: invalid regular expression"),
            "{e}"
        );
        let e = err(
            &GrepFiles,
            d.path(),
            json!({"pattern": "x", "path": "nope"}),
        )
        .await;
        assert!(e.contains("no such file"), "{e}");
        let out = ok(&GrepFiles, d.path(), json!({"pattern": "zzz_absent"})).await;
        assert_eq!(out, "No matches for `zzz_absent`.");
    }

    #[tokio::test]
    async fn a_huge_offset_does_not_overflow() {
        let d = tree();
        let out = ok(
            &GrepFiles,
            d.path(),
            json!({"pattern": "needle", "offset": u64::MAX}),
        )
        .await;
        assert!(out.starts_with("No results at offset"), "{out}");
        let out = ok(
            &GrepFiles,
            d.path(),
            json!({"pattern": "needle", "output_mode": "count", "offset": u64::MAX}),
        )
        .await;
        assert!(out.starts_with("No results at offset"), "{out}");
    }

    #[test]
    fn labels() {
        let l = Tool::<()>::describe(
            &GrepFiles,
            &json!({"pattern": "fn main", "path": "src"}),
            ToolDescriptionLength::Short,
        );
        assert_eq!(l, "grep_files `fn main` in src");
    }
}
