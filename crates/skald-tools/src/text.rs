//! Reading and writing text files the way every file tool must: binary files recognised,
//! line endings kept, and writes atomic so a crash never leaves a half-written file.

use crate::fs::{Target, io_error};
use skald_api::{ToolError, ToolScope};
use std::io::Read;
use std::path::Path;

/// Bytes looked at to decide whether a file is binary (a NUL byte among them), as git
/// and ripgrep do.
pub const BINARY_SNIFF: usize = 8192;

/// Files larger than this are not loaded whole for editing.
pub const MAX_EDIT_BYTES: u64 = 64 * 1024 * 1024;

pub fn looks_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(BINARY_SNIFF)].contains(&0)
}

/// A text file loaded for editing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextFile {
    pub text: String,
    /// The file's line ending: CRLF when it has any `\r\n`, so edits keep Windows files
    /// Windows files.
    pub crlf: bool,
}

impl TextFile {
    /// A file's text as read, with its line ending noted.
    pub fn of(text: &str) -> TextFile {
        TextFile {
            crlf: text.contains("\r\n"),
            text: text.to_string(),
        }
    }

    pub fn newline(&self) -> &'static str {
        if self.crlf { "\r\n" } else { "\n" }
    }

    /// Converts `\n` line ends of text written by a model to the file's own ending.
    pub fn to_file_endings(&self, s: &str) -> String {
        if self.crlf {
            s.replace("\r\n", "\n").replace('\n', "\r\n")
        } else {
            s.to_string()
        }
    }

    /// The lines with their endings attached, so joining them gives the file back.
    pub fn lines_with_endings(&self) -> Vec<&str> {
        self.text.split_inclusive('\n').collect()
    }

    /// The file with `remove` lines from 0-based line `start` replaced by `content`
    /// (converted to the file's line endings). Inserted text always ends its last line,
    /// except at the very end of a file that had no final newline, which keeps having none.
    pub fn splice_lines(&self, start: usize, remove: usize, content: &str) -> String {
        let lines = self.lines_with_endings();
        let nl = self.newline();
        let start = start.min(lines.len());
        let end = (start + remove).min(lines.len());
        let had_final_newline = self.text.is_empty() || self.text.ends_with('\n');
        let mut insert = self.to_file_endings(content);
        let mut out = String::with_capacity(self.text.len() + insert.len() + 2);
        for l in &lines[..start] {
            out.push_str(l);
        }
        if !insert.is_empty() {
            // Appending after a last line that has no newline: end that line first.
            if start == lines.len() && !had_final_newline {
                out.push_str(nl);
            }
            let at_end = end == lines.len();
            if !insert.ends_with('\n') && (!at_end || had_final_newline) {
                insert.push_str(nl);
            }
            out.push_str(&insert);
        }
        for l in &lines[end..] {
            out.push_str(l);
        }
        out
    }

    pub fn line_count(&self) -> usize {
        self.text.split_inclusive('\n').count()
    }
}

/// Loads a text file to edit it. Binary files, invalid UTF-8 and huge files are refused:
/// rewriting them as text would corrupt them. Read from the target's canonical path, with
/// no link on it (`fs::open_regular`).
pub fn read_for_edit(t: &Target) -> Result<TextFile, ToolError> {
    let (mut file, meta) = open_editable(t)?;
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.read_to_end(&mut bytes)
        .map_err(|e| io_error("read", &t.shown, &e))?;
    refuse_binary(&t.shown, &bytes, bytes.len() as u64)?;
    text_file(&t.shown, bytes)
}

/// Loads a text file to edit it as the person sees it: the editor's copy when an editor
/// lends its file system to the call, else the file on disk. The file on disk must be an
/// editable text file either way.
pub fn load(scope: &ToolScope, t: &Target) -> Result<TextFile, ToolError> {
    let Some(editor) = crate::editor_fs::reader(scope) else {
        return read_for_edit(t);
    };
    let (file, meta) = open_editable(t)?;
    let mut head = Vec::with_capacity(BINARY_SNIFF);
    file.take(BINARY_SNIFF as u64)
        .read_to_end(&mut head)
        .map_err(|e| io_error("read", &t.shown, &e))?;
    refuse_binary(&t.shown, &head, meta.len())?;
    let text = crate::editor_fs::read(editor, &t.opened)?;
    still_the_same_file(t, &meta)?;
    text_file(&t.shown, text.into_bytes())
}

/// An editor reads and writes by path, as it must: it is handed the checked path and, after
/// it answers, the file there must still be the one opened before (no link swapped in, not
/// replaced). What it read through a link swapped in for the moment of its read and back
/// is beyond Skald's reach (docs/security.md, gap 6).
pub(crate) fn still_the_same_file(t: &Target, before: &std::fs::Metadata) -> Result<(), ToolError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let now = skald_base::beneath::open_exact(&t.opened)
            .and_then(|f| f.metadata())
            .map_err(|e| io_error("read", &t.shown, &e))?;
        if (now.dev(), now.ino()) != (before.dev(), before.ino()) {
            return Err(ToolError::failed(format!(
                "{} was replaced while the editor read it; nothing was used",
                t.shown.display()
            )));
        }
    }
    #[cfg(not(unix))]
    let _ = (t, before);
    Ok(())
}

/// Saves an edited or written file: through the editor when one lends its file system,
/// else atomically on disk at the target's canonical path, refusing a link swapped in on
/// it (`write_atomic_exact`). Returns whether the file existed.
pub fn save(scope: &ToolScope, t: &Target, content: &str) -> Result<bool, ToolError> {
    let Some(editor) = crate::editor_fs::writer(scope) else {
        return skald_base::atomic::write_atomic_exact(&t.opened, content.as_bytes())
            .map_err(|e| ToolError::failed(e.to_string()));
    };
    let (path, opened) = (t.shown.as_path(), t.opened.as_path());
    let (Some(parent), Some(name)) = (opened.parent(), opened.file_name()) else {
        return Err(ToolError::failed(format!(
            "{} is not a file",
            path.display()
        )));
    };
    // As on disk, a new file's folders are made for it: one inside the other, with no
    // link on the way; and what is at the name now is looked at without following a link.
    let folder = skald_base::beneath::open_dir_exact(parent, true)
        .map_err(|e| io_error("create the folder of", path, &e))?;
    let existed = match folder.symlink_metadata(name) {
        Ok(m) if m.is_dir() => {
            return Err(ToolError::failed(format!(
                "{} is a directory",
                path.display()
            )));
        }
        Ok(m) if m.file_type().is_symlink() => {
            return Err(ToolError::failed(format!(
                "cannot write {}: it is a link now, not the file that was checked",
                path.display()
            )));
        }
        Ok(_) => true,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(e) => return Err(io_error("write", path, &e)),
    };
    crate::editor_fs::write(editor, opened, content)?;
    Ok(existed)
}

/// A regular file small enough to edit as text, opened.
fn open_editable(t: &Target) -> Result<(std::fs::File, std::fs::Metadata), ToolError> {
    // Only regular files: `/dev/zero` reports size 0 and never ends.
    let (file, meta) = crate::fs::open_regular(t)?;
    if meta.len() > MAX_EDIT_BYTES {
        return Err(ToolError::failed(format!(
            "{} is {} bytes, too large to edit as text (limit {MAX_EDIT_BYTES})",
            t.shown.display(),
            meta.len()
        )));
    }
    Ok((file, meta))
}

fn refuse_binary(path: &Path, head: &[u8], size: u64) -> Result<(), ToolError> {
    if looks_binary(head) {
        return Err(ToolError::failed(format!(
            "{} is a binary file ({size} bytes); it cannot be edited as text",
            path.display()
        )));
    }
    Ok(())
}

fn text_file(path: &Path, bytes: Vec<u8>) -> Result<TextFile, ToolError> {
    let text = String::from_utf8(bytes).map_err(|_| {
        ToolError::failed(format!(
            "{} is not valid UTF-8; editing it as text could corrupt it",
            path.display()
        ))
    })?;
    let crlf = text.contains("\r\n");
    Ok(TextFile { text, crlf })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_detection() {
        assert!(looks_binary(b"abc\0def"));
        assert!(!looks_binary("héllo\n".as_bytes()));
        let mut late_nul = vec![b'a'; BINARY_SNIFF + 10];
        late_nul.push(0);
        assert!(!looks_binary(&late_nul), "only the first 8 KiB are sniffed");
    }

    #[test]
    fn crlf_is_detected_and_applied() {
        let f = TextFile {
            text: "a\r\nb\r\n".into(),
            crlf: true,
        };
        assert_eq!(f.to_file_endings("x\ny\r\nz"), "x\r\ny\r\nz");
        assert_eq!(f.lines_with_endings(), ["a\r\n", "b\r\n"]);
    }

    fn tf(text: &str) -> TextFile {
        TextFile {
            text: text.into(),
            crlf: text.contains("\r\n"),
        }
    }

    #[test]
    fn splicing_lines() {
        let f = tf("a\nb\nc\n");
        assert_eq!(f.splice_lines(1, 0, "x"), "a\nx\nb\nc\n");
        assert_eq!(f.splice_lines(0, 0, "x\ny\n"), "x\ny\na\nb\nc\n");
        assert_eq!(f.splice_lines(3, 0, "d"), "a\nb\nc\nd\n");
        assert_eq!(f.splice_lines(1, 1, "B"), "a\nB\nc\n");
        assert_eq!(f.splice_lines(0, 3, ""), "");
        assert_eq!(f.splice_lines(1, 2, ""), "a\n");
        let no_final = tf("a\nb");
        assert_eq!(no_final.splice_lines(2, 0, "c"), "a\nb\nc");
        assert_eq!(no_final.splice_lines(1, 1, "B"), "a\nB");
        assert_eq!(no_final.splice_lines(0, 1, "A"), "A\nb");
        let crlf = tf("a\r\nb\r\n");
        assert_eq!(crlf.splice_lines(1, 0, "x\ny"), "a\r\nx\r\ny\r\nb\r\n");
        assert_eq!(tf("").splice_lines(0, 0, "new"), "new\n");
        assert_eq!(f.line_count(), 3);
        assert_eq!(no_final.line_count(), 2);
    }

    /// A path as a tool gets it from the gate: shown as given, opened canonical.
    fn exact(p: &Path) -> Target {
        Target {
            shown: p.to_path_buf(),
            opened: skald_base::path::canonicalize_for_policy(p, Path::new("/")),
        }
    }

    #[test]
    fn refusals() {
        let tmp = tempfile::tempdir().unwrap();
        let bin = tmp.path().join("x.bin");
        std::fs::write(&bin, b"\x00\x01\x02").unwrap();
        assert!(
            read_for_edit(&exact(&bin))
                .unwrap_err()
                .to_string()
                .contains("binary")
        );
        let bad = tmp.path().join("bad.txt");
        std::fs::write(&bad, b"ok \xff\xfe").unwrap();
        assert!(
            read_for_edit(&exact(&bad))
                .unwrap_err()
                .to_string()
                .contains("UTF-8")
        );
        assert!(
            read_for_edit(&exact(tmp.path()))
                .unwrap_err()
                .to_string()
                .contains("directory")
        );
        assert!(
            skald_base::atomic::write_atomic_exact(&exact(tmp.path()).opened, b"x")
                .unwrap_err()
                .to_string()
                .contains("directory")
        );
        let missing = tmp.path().join("nope.txt");
        assert!(
            read_for_edit(&exact(&missing))
                .unwrap_err()
                .to_string()
                .contains("no such file")
        );
    }
}
