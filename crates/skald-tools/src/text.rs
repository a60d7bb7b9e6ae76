//! Reading and writing text files the way every file tool must: binary files recognised,
//! line endings kept, and writes atomic so a crash never leaves a half-written file.

use crate::fs::io_error;
use skald_api::ToolError;
use std::io::Write;
use std::path::{Path, PathBuf};

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
/// rewriting them as text would corrupt them.
pub fn read_for_edit(path: &Path) -> Result<TextFile, ToolError> {
    // Only regular files: `/dev/zero` reports size 0 and never ends.
    let meta = crate::fs::regular_file(path)?;
    if meta.len() > MAX_EDIT_BYTES {
        return Err(ToolError::failed(format!(
            "{} is {} bytes, too large to edit as text (limit {MAX_EDIT_BYTES})",
            path.display(),
            meta.len()
        )));
    }
    let bytes = std::fs::read(path).map_err(|e| io_error("read", path, &e))?;
    if looks_binary(&bytes) {
        return Err(ToolError::failed(format!(
            "{} is a binary file ({} bytes); it cannot be edited as text",
            path.display(),
            bytes.len()
        )));
    }
    let text = String::from_utf8(bytes).map_err(|_| {
        ToolError::failed(format!(
            "{} is not valid UTF-8; editing it as text could corrupt it",
            path.display()
        ))
    })?;
    let crlf = text.contains("\r\n");
    Ok(TextFile { text, crlf })
}

/// Where a write to `path` must really go: through a symlink to its target, so that
/// replacing the file does not replace the link.
fn write_target(path: &Path) -> PathBuf {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
        }
        _ => path.to_path_buf(),
    }
}

/// Temporary files of writes are named `.skald-write-<pid>-<random>`: the writer's pid lets
/// a later write in the same folder remove what a killed Skald left behind.
const TMP_PREFIX: &str = ".skald-write-";

/// Removes the temporary files that writes by processes no longer running left in `dir`
/// (a kill between creating and renaming one). Best effort: a folder that cannot be
/// listed simply keeps them.
fn remove_leftovers(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(TMP_PREFIX))
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !process_alive(pid) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

#[cfg(unix)]
fn process_alive(pid: u32) -> bool {
    let Ok(pid) = i32::try_from(pid) else {
        return true;
    };
    // Signal 0 checks existence; EPERM means it exists but belongs to someone else.
    !matches!(
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None),
        Err(nix::errno::Errno::ESRCH)
    )
}

/// Without a cheap liveness check, nothing is assumed dead.
#[cfg(not(unix))]
fn process_alive(_pid: u32) -> bool {
    true
}

/// Writes `contents` to `path` atomically: a temporary file in the same directory is
/// written, flushed to disk and renamed over the target. An existing file keeps its
/// permissions. Parent directories are created. Returns whether the file existed.
pub fn write_atomic(path: &Path, contents: &[u8]) -> Result<bool, ToolError> {
    let target = write_target(path);
    let existing = match std::fs::metadata(&target) {
        Ok(m) if m.is_dir() => {
            return Err(ToolError::failed(format!(
                "{} is a directory",
                target.display()
            )));
        }
        Ok(m) => Some(m),
        Err(_) => None,
    };
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir).map_err(|e| io_error("create directory", &dir, &e))?;
    remove_leftovers(&dir);
    let prefix = format!("{TMP_PREFIX}{}-", std::process::id());
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix);
    // tempfile creates 0600 files; a new file should get the usual 0666 less the umask,
    // like any editor's. An existing file's mode is copied below instead.
    #[cfg(unix)]
    if existing.is_none() {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut tmp = builder
        .tempfile_in(&dir)
        .map_err(|e| io_error("create a temporary file in", &dir, &e))?;
    tmp.write_all(contents)
        .and_then(|_| tmp.as_file().sync_all())
        .map_err(|e| io_error("write", tmp.path(), &e))?;
    if let Some(meta) = &existing {
        std::fs::set_permissions(tmp.path(), meta.permissions())
            .map_err(|e| io_error("set permissions of", tmp.path(), &e))?;
    }
    // On failure the temporary file is removed when `tmp` drops; the target is untouched.
    tmp.persist(&target)
        .map_err(|e| io_error("replace", &target, &e.error))?;
    Ok(existing.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_write_removes_what_a_killed_writer_left_but_not_a_live_ones() {
        let dir = tempfile::tempdir().unwrap();
        // A pid that cannot be running: above the kernel's limit.
        let dead = dir.path().join(".skald-write-4194999-abc123");
        let live = dir.path().join(format!(
            ".skald-write-{}-xyz789",
            std::os::unix::process::parent_id()
        ));
        let other = dir.path().join(".skald-write-notes.txt");
        for p in [&dead, &live, &other] {
            std::fs::write(p, "partial").unwrap();
        }
        write_atomic(&dir.path().join("a.txt"), b"whole").unwrap();
        assert!(!dead.exists(), "a dead writer's leftover is removed");
        assert!(live.exists(), "a running writer's file is kept");
        assert!(other.exists(), "a file that only looks similar is kept");
        assert_eq!(std::fs::read(dir.path().join("a.txt")).unwrap(), b"whole");
    }

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

    #[test]
    fn atomic_write_creates_parents_and_keeps_permissions() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("a/b/c.txt");
        assert!(!write_atomic(&path, b"one").unwrap());
        assert_eq!(std::fs::read(&path).unwrap(), b"one");
        #[cfg(target_os = "linux")]
        {
            use std::os::unix::fs::PermissionsExt;
            let status = std::fs::read_to_string("/proc/self/status").unwrap();
            let umask = status
                .lines()
                .find_map(|l| l.strip_prefix("Umask:"))
                .map(|m| u32::from_str_radix(m.trim(), 8).unwrap())
                .unwrap();
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o666 & !umask, "a new file gets 0666 less the umask");
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o750)).unwrap();
            assert!(write_atomic(&path, b"two").unwrap());
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o750);
        }
        // No temporary files are left behind.
        let names: Vec<_> = std::fs::read_dir(tmp.path().join("a/b"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["c.txt"]);
    }

    #[cfg(unix)]
    #[test]
    fn writing_through_a_symlink_keeps_the_link() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().join("real.txt");
        let link = tmp.path().join("link.txt");
        std::fs::write(&real, "old").unwrap();
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_atomic(&link, b"new").unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
    }

    #[test]
    fn refusals() {
        let tmp = tempfile::tempdir().unwrap();
        let bin = tmp.path().join("x.bin");
        std::fs::write(&bin, b"\x00\x01\x02").unwrap();
        assert!(
            read_for_edit(&bin)
                .unwrap_err()
                .to_string()
                .contains("binary")
        );
        let bad = tmp.path().join("bad.txt");
        std::fs::write(&bad, b"ok \xff\xfe").unwrap();
        assert!(
            read_for_edit(&bad)
                .unwrap_err()
                .to_string()
                .contains("UTF-8")
        );
        assert!(
            read_for_edit(tmp.path())
                .unwrap_err()
                .to_string()
                .contains("directory")
        );
        assert!(
            write_atomic(tmp.path(), b"x")
                .unwrap_err()
                .to_string()
                .contains("directory")
        );
        let missing = tmp.path().join("nope.txt");
        assert!(
            read_for_edit(&missing)
                .unwrap_err()
                .to_string()
                .contains("no such file")
        );
    }
}
