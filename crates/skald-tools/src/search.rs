//! The search machinery shared by grep_files and search_file, on ripgrep's own crates:
//! `grep-regex` for matching, `grep-searcher` for line-oriented search with context and
//! binary detection, and `skald_base::walk`'s parallel, .gitignore-aware walk through
//! folder descriptors.

use crate::StopFlag;
use crate::fs::Flow;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{
    BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkContextKind, SinkMatch,
};
use ignore::overrides::OverrideBuilder;
use skald_api::ToolError;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Characters of one matched line shown before it is cut.
pub const MAX_SHOWN_LINE_CHARS: usize = 500;

/// Builds the matcher. `literal` escapes the pattern; an invalid regex is a clear error
/// naming the `pattern` field.
pub fn matcher(
    pattern: &str,
    case_sensitive: bool,
    literal: bool,
) -> Result<RegexMatcher, ToolError> {
    RegexMatcherBuilder::new()
        .case_insensitive(!case_sensitive)
        .fixed_strings(literal)
        .line_terminator(Some(b'\n'))
        .build(pattern)
        .map_err(|e| ToolError::invalid("pattern", format!("invalid regular expression: {e}")))
}

fn searcher(context: usize, line_numbers: bool) -> Searcher {
    SearcherBuilder::new()
        .line_number(line_numbers)
        .before_context(context)
        .after_context(context)
        // As ripgrep does for recursive searches: stop at the first NUL byte.
        .binary_detection(BinaryDetection::quit(0))
        .build()
}

/// One line of search output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    Match {
        line: u64,
        text: String,
    },
    Context {
        line: u64,
        text: String,
    },
    /// Lines between the previous entry and the next one were skipped.
    Break,
}

/// Collects matches and context of one file.
struct Collect {
    entries: Vec<Entry>,
}

fn shown(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim_end_matches(['\n', '\r']);
    match text.char_indices().nth(MAX_SHOWN_LINE_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

impl Sink for Collect {
    type Error = io::Error;

    fn matched(&mut self, _: &Searcher, m: &SinkMatch<'_>) -> Result<bool, io::Error> {
        let line = m.line_number().unwrap_or(0);
        self.entries.push(Entry::Match {
            line,
            text: shown(m.bytes()),
        });
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, c: &SinkContext<'_>) -> Result<bool, io::Error> {
        if matches!(c.kind(), SinkContextKind::Other) {
            return Ok(true);
        }
        self.entries.push(Entry::Context {
            line: c.line_number().unwrap_or(0),
            text: shown(c.bytes()),
        });
        Ok(true)
    }

    fn context_break(&mut self, _: &Searcher) -> Result<bool, io::Error> {
        self.entries.push(Entry::Break);
        Ok(true)
    }
}

/// Every match of `matcher` in one file, with `context` lines around each. `path` is
/// canonical (a checked path, or one a walk from a canonical folder yielded): it is opened
/// with no link on it (`beneath::open_exact`), so one swapped in meanwhile is refused.
pub fn search_file(path: &Path, matcher: &RegexMatcher, context: usize) -> io::Result<Vec<Entry>> {
    let file = skald_base::beneath::open_exact(path)?;
    search_open_file(&file, matcher, context)
}

/// `search_file` for a file already open, from its start.
pub fn search_open_file(
    file: &std::fs::File,
    matcher: &RegexMatcher,
    context: usize,
) -> io::Result<Vec<Entry>> {
    let mut sink = Collect {
        entries: Vec::new(),
    };
    let mut file = file;
    io::Seek::rewind(&mut file)?;
    searcher(context, true).search_file(matcher, file, &mut sink)?;
    Ok(sink.entries)
}

/// Counts matching lines, stopping at the first one when `first_only`.
struct Count {
    n: u64,
    first_only: bool,
}

impl Sink for Count {
    type Error = io::Error;

    fn matched(&mut self, _: &Searcher, _: &SinkMatch<'_>) -> Result<bool, io::Error> {
        self.n += 1;
        Ok(!self.first_only)
    }
}

/// A file with at least one match, and how many matching lines it has (1 when only
/// presence was asked for).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileCount {
    pub path: PathBuf,
    pub count: u64,
}

/// What to walk.
pub struct WalkSpec<'a> {
    pub root: &'a Path,
    pub include_glob: Option<&'a str>,
    /// Canonical paths the walk skips (`ToolScope::excluded`).
    pub excluded: &'a [PathBuf],
}

/// Searches every file under `spec.root` in parallel and returns the files that match,
/// sorted by path. `first_only` stops each file at its first match.
pub fn count_matches(
    spec: &WalkSpec<'_>,
    matcher: &RegexMatcher,
    first_only: bool,
    stop: &StopFlag,
) -> Result<Vec<FileCount>, ToolError> {
    let mut walk = crate::fs::walker(spec.root, spec.excluded);
    if let Some(glob) = spec.include_glob {
        let mut ov = OverrideBuilder::new(spec.root);
        ov.add(glob)
            .map_err(|e| ToolError::invalid("include_glob", e.to_string()))?;
        walk = walk.only(
            ov.build()
                .map_err(|e| ToolError::invalid("include_glob", e.to_string()))?,
        );
    }
    let found: Mutex<Vec<FileCount>> = Mutex::new(Vec::new());
    walk.run_parallel(|| {
        let mut searcher = searcher(0, false);
        let found = &found;
        move |entry: crate::fs::Entry| {
            if stop.is_stopped() {
                return Flow::Quit;
            }
            if !entry.is_file() {
                return Flow::Continue;
            }
            let mut sink = Count { n: 0, first_only };
            // Unreadable files are skipped, as ripgrep does (it prints a warning); so is
            // one a link was swapped in for since its folder was listed (it is opened from
            // that folder's descriptor, and no link is followed).
            // What was opened must be a regular file: one swapped for a FIFO since it was
            // listed could otherwise feed the search for as long as a writer likes.
            if entry
                .open()
                .and_then(|file| {
                    if file.metadata()?.is_file() {
                        Ok(file)
                    } else {
                        Err(std::io::Error::other("not a regular file"))
                    }
                })
                .and_then(|file| searcher.search_file(matcher, &file, &mut sink))
                .is_ok()
                && sink.n > 0
            {
                let hit = FileCount {
                    path: entry.into_path(),
                    count: sink.n,
                };
                found.lock().unwrap_or_else(|p| p.into_inner()).push(hit);
            }
            Flow::Continue
        }
    })
    .map_err(|e| {
        ToolError::failed(format!(
            "cannot search {}: {}",
            spec.root.display(),
            skald_base::io_reason(&e)
        ))
    })?;
    if stop.is_stopped() {
        return Err(ToolError::failed("search stopped"));
    }
    let mut found = found.into_inner().unwrap_or_else(|p| p.into_inner());
    found.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(found)
}

/// Renders entries as `prefix:line:text` for matches and `prefix-line-text` for context,
/// ripgrep's notation; `--` marks skipped lines.
pub fn render(entries: &[Entry], prefix: &str, out: &mut String) {
    let sep = if prefix.is_empty() { "" } else { ":" };
    let csep = if prefix.is_empty() { "" } else { "-" };
    for e in entries {
        match e {
            Entry::Match { line, text } => out.push_str(&format!("{prefix}{sep}{line}:{text}\n")),
            Entry::Context { line, text } => {
                out.push_str(&format!("{prefix}{csep}{line}-{text}\n"))
            }
            Entry::Break => out.push_str("--\n"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_and_breaks() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f.txt");
        std::fs::write(&p, "a\nhit 1\nb\nc\nd\ne\nhit 2\nf\n").unwrap();
        let m = matcher("hit", true, false).unwrap();
        let entries = search_file(&p, &m, 1).unwrap();
        let mut out = String::new();
        render(&entries, "f.txt", &mut out);
        assert_eq!(
            out,
            "f.txt-1-a\nf.txt:2:hit 1\nf.txt-3-b\n--\nf.txt-6-e\nf.txt:7:hit 2\nf.txt-8-f\n"
        );
    }

    #[test]
    fn invalid_regex_names_the_field() {
        let e = matcher("(unclosed", true, false).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("invalid argument `pattern`: invalid regular expression")
        );
        assert!(
            matcher("(unclosed", true, true).is_ok(),
            "literal mode escapes"
        );
    }
}
