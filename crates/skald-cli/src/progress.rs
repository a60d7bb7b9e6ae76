//! A progress line on stderr for long work (a download, reading a prompt, bundling TeX):
//! live on a terminal, one line per tenth in a log, so neither a person nor a log file gets
//! a wall of carriage returns.

use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A progress line on stderr: live on a terminal (at most ten times a second), one line per
/// tenth in a log. `line` writes it from (done, total, percent).
pub fn line<F: Fn(u64, u64, u64) -> String>(line: F) -> Progress<F> {
    Progress {
        tty: std::io::stderr().is_terminal(),
        last: Mutex::new((Instant::now(), u64::MAX)),
        line,
    }
}

pub struct Progress<F> {
    tty: bool,
    last: Mutex<(Instant, u64)>,
    line: F,
}

impl<F: Fn(u64, u64, u64) -> String> Progress<F> {
    pub fn report(&self, done: u64, total: u64) {
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        let pct = done.saturating_mul(100) / total.max(1);
        let due = if self.tty {
            last.0.elapsed() >= Duration::from_millis(100) || done == total
        } else if total == 0 {
            // No total to take tenths of: a line every few seconds.
            last.1 == u64::MAX || last.0.elapsed() >= Duration::from_secs(5)
        } else {
            pct / 10 != last.1 / 10 || (done == total && pct != last.1)
        };
        if !due {
            return;
        }
        *last = (Instant::now(), pct);
        let line = (self.line)(done, total, pct);
        let mut err = std::io::stderr().lock();
        let _ = if self.tty {
            write!(err, "\r{line}\x1b[K")
        } else {
            writeln!(err, "{line}")
        };
        let _ = err.flush();
    }

    /// Ends a live line, once the work is over.
    pub fn end(&self) {
        let last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        if self.tty && last.1 != u64::MAX {
            eprintln!();
        }
    }
}
