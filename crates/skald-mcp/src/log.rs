//! A stdio server's stderr, kept in a small rotating file: the tail explains a failure
//! in the server's status, and the file is there to read when that is not enough.

use std::io::Write;
use std::path::PathBuf;

/// Past this size the log is moved to `<name>.1` (replacing the older one).
const ROTATE_AT: u64 = 512 * 1024;

pub(crate) struct Log {
    path: Option<PathBuf>,
    /// The last lines, kept in memory too: the file may be unwritable.
    recent: std::collections::VecDeque<String>,
}

const RECENT: usize = 50;

impl Log {
    pub(crate) fn new(path: Option<PathBuf>) -> Log {
        if let Some(dir) = path.as_ref().and_then(|p| p.parent()) {
            let _ = std::fs::create_dir_all(dir);
        }
        Log {
            path,
            recent: std::collections::VecDeque::new(),
        }
    }

    pub(crate) fn write_line(&mut self, line: &str) {
        if self.recent.len() == RECENT {
            self.recent.pop_front();
        }
        self.recent.push_back(line.to_string());
        let Some(path) = &self.path else { return };
        if std::fs::metadata(path).is_ok_and(|m| m.len() > ROTATE_AT) {
            let _ = std::fs::rename(path, path.with_extension("log.1"));
        }
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
        {
            let _ = writeln!(f, "{line}");
        }
    }

    /// The last `n` lines.
    pub(crate) fn tail(&self, n: usize) -> String {
        let skip = self.recent.len().saturating_sub(n);
        self.recent
            .iter()
            .skip(skip)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_a_tail_and_rotates() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mcp").join("srv.log");
        let mut log = Log::new(Some(path.clone()));
        let long = "x".repeat(1024);
        for i in 0..600 {
            log.write_line(&format!("{i} {long}"));
        }
        assert!(path.with_extension("log.1").exists());
        assert!(std::fs::metadata(&path).unwrap().len() <= ROTATE_AT + 2048);
        let tail = log.tail(2);
        assert!(
            tail.starts_with("598 ") && tail.contains("\n599 "),
            "{}",
            &tail[..10]
        );
    }
}
