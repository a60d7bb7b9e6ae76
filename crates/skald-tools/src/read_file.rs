//! read_file: a window of a text file with line numbers.

use crate::fs::{self, in_range, io_error, label, path_arg};
use crate::run_blocking;
use crate::text::{BINARY_SNIFF, looks_binary};
use serde::Deserialize;
use serde_json::Value;
use schemars::JsonSchema;
use skald_api::tool_args;
use skald_api::{ToolKind, FileAccess, 
    BoxToolFuture, Tool, ToolCategory, ToolDescriptionLength, ToolError, ToolResult, ToolScope,
    tool_names as tn,
};
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// Most lines one call returns.
pub const MAX_LINES: u64 = 2000;
/// Characters of one line shown before it is cut (minified files have megabyte lines).
const MAX_LINE_CHARS: usize = 2000;
/// Bytes of one line kept in memory: enough for `MAX_LINE_CHARS` of any UTF-8.
const MAX_LINE_BYTES: usize = MAX_LINE_CHARS * 4;
/// Files up to this size are scanned to the end to report their total line count.
const COUNT_ALL_BELOW: u64 = 32 * 1024 * 1024;

pub struct ReadFile;

// The arguments' doc comments are the descriptions the model reads.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Args {
    /// File path, relative to the working directory or absolute.
    path: String,
    /// First line to read (1-based). Default 1.
    #[schemars(range(min = 1))]
    start_line: Option<u64>,
    /// Last line to read, inclusive.
    #[schemars(range(min = 1))]
    end_line: Option<u64>,
    /// Most lines to return (default and maximum 2000).
    #[schemars(range(min = 1, max = MAX_LINES))]
    limit: Option<u64>,
}

impl ReadFile {
    pub const NAME: &'static str = tn::READ_FILE;
}

impl<Cx: ?Sized + Sync> Tool<Cx> for ReadFile {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn description(&self) -> &str {
        "Read a text file, with line numbers. Reads up to 2000 lines from `start_line` \
         (1-based); use `start_line`/`end_line` to page through larger files. An image (PNG, \
         JPEG, WebP, GIF) is shown to you when you can see images; other binary files are \
         reported with their size instead of dumped. Use this instead of cat/head/tail."
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
            let path = fs::target(scope, &args.path);
            let start = in_range("start_line", args.start_line, 1, u64::MAX)?.unwrap_or(1);
            let end = in_range("end_line", args.end_line, 1, u64::MAX)?;
            let limit = in_range("limit", args.limit, 1, MAX_LINES)?.unwrap_or(MAX_LINES);
            if let Some(end) = end
                && end < start
            {
                return Err(ToolError::invalid(
                    "end_line",
                    format!("{end} is before start_line {start}"),
                ));
            }
            let last = end.unwrap_or(u64::MAX).min(start.saturating_add(limit - 1));
            read_window(scope, &path, start, last)
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

    fn for_small_models(&self) -> bool {
        true
    }

    fn hook_alias(&self) -> Option<&'static str> {
        Some("Read")
    }
}

fn read_window(scope: &ToolScope, target: &fs::Target, start: u64, last: u64) -> ToolResult {
    let path = target.shown.as_path();
    // Opened without waiting (a FIFO would block until a writer appears), then judged by
    // what was opened.
    let (file, meta) = match fs::open_regular(target) {
        Err(_) if fs::metadata(target, "read").is_ok_and(|m| m.is_dir()) => {
            return Err(ToolError::failed(format!(
                "{} is a directory; use list_files",
                path.display()
            )));
        }
        other => other?,
    };
    let mut reader = BufReader::with_capacity(64 * 1024, file);
    let head = reader.fill_buf().map_err(|e| io_error("read", path, &e))?;
    if let Some(media_type) = skald_base::image_kind::image_media_type(head) {
        return show_image(scope, path, &meta, media_type, reader);
    }
    if looks_binary(&head[..head.len().min(BINARY_SNIFF)]) {
        return Ok(format!(
            "{} is a binary file ({} bytes); not shown",
            path.display(),
            meta.len()
        ));
    }

    // With an editor lending its file system, the lines are its copy's (unsaved changes
    // included); the checks above were the file's on disk.
    match crate::editor_fs::reader(scope) {
        Some(editor) => {
            let text = crate::editor_fs::read(editor, &target.opened)?;
            crate::text::still_the_same_file(target, &meta)?;
            window(
                path,
                &meta,
                std::io::Cursor::new(text.into_bytes()),
                start,
                last,
            )
        }
        None => window(path, &meta, reader, start, last),
    }
}

/// The largest image file `read_file` shows the model (it is scaled down before it is sent).
pub const MAX_IMAGE_BYTES: u64 = 30 * 1024 * 1024;

/// An image file (PNG, JPEG, WebP, GIF): shown to the model with the result when the chat's
/// model can see images (docs/images.md), else described.
fn show_image(
    scope: &ToolScope,
    path: &Path,
    meta: &std::fs::Metadata,
    media_type: &str,
    mut reader: impl Read,
) -> ToolResult {
    let kind = media_type.trim_start_matches("image/").to_uppercase();
    let size = meta.len();
    let Some(sink) = scope.images() else {
        return Ok(format!(
            "{} is a {kind} image ({size} bytes); not shown: images reach the model only in \
             a chat whose model can see them",
            path.display()
        ));
    };
    if size > MAX_IMAGE_BYTES {
        return Ok(format!(
            "{} is a {kind} image of {size} bytes, more than the {MAX_IMAGE_BYTES} an image \
             shown to the model may have; not shown",
            path.display()
        ));
    }
    let mut data = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    // One byte over the cap tells a file that grew since it was measured.
    (&mut reader)
        .take(MAX_IMAGE_BYTES + 1)
        .read_to_end(&mut data)
        .map_err(|e| io_error("read", path, &e))?;
    if data.len() as u64 > MAX_IMAGE_BYTES {
        return Ok(format!(
            "{} is a {kind} image of more than {MAX_IMAGE_BYTES} bytes; not shown",
            path.display()
        ));
    }
    let bytes = data.len();
    sink.show(skald_api::ToolImage {
        data,
        name: path.file_name().map(|n| n.to_string_lossy().into_owned()),
    });
    Ok(format!(
        "{} is a {kind} image ({bytes} bytes); it is shown to you with this result.",
        path.display()
    ))
}

/// Lines `start` to `last` of `reader`, numbered, with a note on where they stand in it.
fn window(
    path: &Path,
    meta: &std::fs::Metadata,
    mut reader: impl BufRead,
    start: u64,
    last: u64,
) -> ToolResult {
    let mut out = String::new();
    let mut line_no: u64 = 0;
    let mut invalid_utf8 = false;
    let mut buf = Vec::new();
    let mut shown = 0u64;
    loop {
        buf.clear();
        let n = read_line_capped(&mut reader, &mut buf, MAX_LINE_BYTES)
            .map_err(|e| io_error("read", path, &e))?;
        if n == 0 {
            break;
        }
        line_no += 1;
        if line_no < start {
            continue;
        }
        if line_no > last {
            break;
        }
        let raw = if n > buf.len() {
            &buf[..]
        } else {
            strip_eol(&buf)
        };
        let text = match std::str::from_utf8(raw) {
            Ok(s) => std::borrow::Cow::Borrowed(s),
            Err(_) => {
                invalid_utf8 = true;
                String::from_utf8_lossy(raw)
            }
        };
        push_line(&mut out, line_no, &text, n);
        shown += 1;
    }
    // `line_no` is now the last line read; past the window there may be more.
    let more_after = line_no > last;
    let total = if more_after && meta.len() <= COUNT_ALL_BELOW {
        let rest = count_lines(&mut reader).map_err(|e| io_error("read", path, &e))?;
        Some(line_no + rest)
    } else if !more_after {
        Some(line_no)
    } else {
        None
    };

    if shown == 0 {
        return Ok(match total {
            Some(0) => format!("{} is empty", path.display()),
            Some(t) => format!(
                "{} has {t} lines; start_line {start} is past the end",
                path.display()
            ),
            None => format!("no lines from {start} in {}", path.display()),
        });
    }
    let first = start;
    let shown_last = start + shown - 1;
    match total {
        Some(t) if shown_last < t => out.push_str(&format!(
            "[lines {first}-{shown_last} of {t}; read on with start_line={}]\n",
            shown_last + 1
        )),
        None => out.push_str(&format!(
            "[lines {first}-{shown_last}; the file continues, read on with start_line={}]\n",
            shown_last + 1
        )),
        Some(_) if first > 1 => {
            out.push_str(&format!("[lines {first}-{shown_last}, end of file]\n"))
        }
        Some(_) => {}
    }
    if invalid_utf8 {
        out.push_str("[note: the file is not valid UTF-8; invalid bytes are shown as �]\n");
    }
    Ok(out)
}

fn strip_eol(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// Reads one line into `out`, keeping at most `cap` bytes of it (a 2 GB single-line file
/// must not become a 2 GB allocation). Returns the bytes the line really had, its end of
/// line included.
fn read_line_capped(r: &mut impl BufRead, out: &mut Vec<u8>, cap: usize) -> std::io::Result<usize> {
    let mut total = 0;
    loop {
        let avail = r.fill_buf()?;
        if avail.is_empty() {
            return Ok(total);
        }
        let (len, done) = match avail.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (avail.len(), false),
        };
        let room = cap.saturating_sub(out.len());
        out.extend_from_slice(&avail[..len.min(room)]);
        r.consume(len);
        total += len;
        if done {
            return Ok(total);
        }
    }
}

/// `line_bytes` is the line's real length, which may exceed what was kept of it.
fn push_line(out: &mut String, n: u64, text: &str, line_bytes: usize) {
    out.push_str(&format!("{n:>6}\t"));
    match text.char_indices().nth(MAX_LINE_CHARS) {
        Some((cut, _)) => {
            out.push_str(&text[..cut]);
            out.push_str(&format!("… [line cut: {line_bytes} bytes]"));
        }
        None => out.push_str(text),
    }
    out.push('\n');
}

fn count_lines(reader: &mut impl Read) -> std::io::Result<u64> {
    let mut buf = vec![0u8; 64 * 1024];
    let mut count = 0u64;
    let mut last = b'\n';
    loop {
        let n = reader.read(&mut buf)?;
        if n == 0 {
            break;
        }
        count += buf[..n].iter().filter(|&&b| b == b'\n').count() as u64;
        last = buf[n - 1];
    }
    // A last line without a newline still counts.
    if last != b'\n' {
        count += 1;
    }
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use crate::test_support::{err, ok};

    fn fixture() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let body: String = (1..=2500).map(|i| format!("line {i}\n")).collect();
        std::fs::write(dir.path().join("big.txt"), body).unwrap();
        std::fs::write(dir.path().join("crlf.txt"), "a\r\nb\r\n").unwrap();
        std::fs::write(dir.path().join("bin.dat"), b"\x7fELF\x00\x01").unwrap();
        std::fs::write(dir.path().join("latin1.txt"), b"caf\xe9\n").unwrap();
        std::fs::write(dir.path().join("empty.txt"), "").unwrap();
        std::fs::write(dir.path().join("nonl.txt"), "one\ntwo").unwrap();
        dir
    }

    #[tokio::test]
    async fn reads_with_line_numbers_and_pages() {
        let d = fixture();
        let out = ok(&ReadFile, d.path(), json!({"path": "big.txt"})).await;
        assert!(out.starts_with("     1\tline 1\n"));
        assert!(out.contains("  2000\tline 2000\n"));
        assert!(!out.contains("line 2001"));
        assert!(
            out.ends_with("[lines 1-2000 of 2500; read on with start_line=2001]\n"),
            "{out}"
        );

        let out = ok(
            &ReadFile,
            d.path(),
            json!({"path": "big.txt", "start_line": 2499}),
        )
        .await;
        assert_eq!(
            out,
            "  2499\tline 2499\n  2500\tline 2500\n[lines 2499-2500, end of file]\n"
        );

        let out = ok(
            &ReadFile,
            d.path(),
            json!({"path": "big.txt", "start_line": 10, "end_line": 12}),
        )
        .await;
        assert!(out.starts_with(
            "    10\tline 10\n    11\tline 11\n    12\tline 12\n[lines 10-12 of 2500"
        ));

        let out = ok(&ReadFile, d.path(), json!({"path": "big.txt", "limit": 2})).await;
        assert!(out.starts_with("     1\tline 1\n     2\tline 2\n[lines 1-2 of 2500"));
    }

    #[tokio::test]
    async fn special_files() {
        let d = fixture();
        assert_eq!(
            ok(&ReadFile, d.path(), json!({"path": "crlf.txt"})).await,
            "     1\ta\n     2\tb\n"
        );
        let out = ok(&ReadFile, d.path(), json!({"path": "bin.dat"})).await;
        assert!(out.contains("binary file (6 bytes)"), "{out}");
        let out = ok(&ReadFile, d.path(), json!({"path": "latin1.txt"})).await;
        assert!(out.starts_with("     1\tcaf�\n"), "{out}");
        assert!(out.contains("not valid UTF-8"));
        let out = ok(&ReadFile, d.path(), json!({"path": "empty.txt"})).await;
        assert!(out.ends_with("is empty"), "{out}");
        assert_eq!(
            ok(&ReadFile, d.path(), json!({"path": "nonl.txt"})).await,
            "     1\tone\n     2\ttwo\n"
        );
        let out = ok(
            &ReadFile,
            d.path(),
            json!({"path": "nonl.txt", "start_line": 9}),
        )
        .await;
        assert!(
            out.contains("has 2 lines; start_line 9 is past the end"),
            "{out}"
        );
    }

    #[tokio::test]
    async fn long_lines_are_cut() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("min.js"), "é".repeat(5000)).unwrap();
        let out = ok(&ReadFile, d.path(), json!({"path": "min.js"})).await;
        assert!(out.contains("… [line cut: 10000 bytes]"), "{out}");
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_fifo_is_refused_instead_of_blocking() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("pipe");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        let e = err(&ReadFile, d.path(), json!({"path": "pipe"})).await;
        assert!(e.contains("not a regular file"), "{e}");
    }

    #[tokio::test]
    async fn errors() {
        let d = fixture();
        let e = err(&ReadFile, d.path(), json!({"path": "missing.txt"})).await;
        assert!(
            e.contains("missing.txt") && e.contains("no such file"),
            "{e}"
        );
        let e = err(&ReadFile, d.path(), json!({"path": "."})).await;
        assert!(e.contains("is a directory"), "{e}");
        let e = err(
            &ReadFile,
            d.path(),
            json!({"path": "big.txt", "start_line": 5, "end_line": 2}),
        )
        .await;
        assert!(e.starts_with("invalid argument `end_line`"), "{e}");
        let e = err(
            &ReadFile,
            d.path(),
            json!({"path": "big.txt", "limit": 5000}),
        )
        .await;
        assert!(e.starts_with("invalid argument `limit`"), "{e}");
    }

    #[test]
    fn label_and_target() {
        let args = json!({"path": "src/main.rs"});
        assert_eq!(
            Tool::<()>::describe(&ReadFile, &args, ToolDescriptionLength::Short),
            "read_file `src/main.rs`"
        );
        assert_eq!(
            Tool::<()>::target_path(&ReadFile, &args).as_deref(),
            Some("src/main.rs")
        );
    }

    #[tokio::test]
    async fn an_image_is_shown_to_a_model_that_can_see_and_described_otherwise() {
        let d = tempfile::tempdir().unwrap();
        let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR and the rest".to_vec();
        std::fs::write(d.path().join("shot.png"), &png).unwrap();
        let args = json!({"path": "shot.png"});
        // No sink: a direct run, or a model that cannot see.
        let out = ok(&ReadFile, d.path(), args.clone()).await;
        assert!(out.contains("shot.png is a PNG image (29 bytes); not shown"), "{out}");
        let sink = skald_api::ImageSink::default();
        let exec = Tool::<()>::run(&ReadFile, &(), args);
        let outcome = skald_api::ToolScope::new(d.path())
            .with_images(Some(sink.clone()))
            .run(exec.wait())
            .await;
        let skald_api::ExecutionOutcome::Completed(out) = outcome else {
            panic!("{outcome:?}");
        };
        assert!(out.ends_with("shot.png is a PNG image (29 bytes); it is shown to you with this result."), "{out}");
        assert_eq!(
            sink.take(),
            [skald_api::ToolImage { data: png, name: Some("shot.png".into()) }]
        );
        // Any other binary file is still only described.
        std::fs::write(d.path().join("blob.bin"), b"\0\x01\x02").unwrap();
        let exec = Tool::<()>::run(&ReadFile, &(), json!({"path": "blob.bin"}));
        let outcome = skald_api::ToolScope::new(d.path())
            .with_images(Some(sink.clone()))
            .run(exec.wait())
            .await;
        assert!(matches!(&outcome, skald_api::ExecutionOutcome::Completed(t) if t.contains("binary file")), "{outcome:?}");
        assert!(sink.take().is_empty());
    }
}
