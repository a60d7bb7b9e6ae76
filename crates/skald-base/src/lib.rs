//! The ground every Skald layer stands on: how a path is judged (lexically normalised,
//! symlinks resolved, compared by whole components), how a file is written so a crash
//! never leaves half of it, and how a lock is taken after a panic elsewhere. The tools,
//! the engine, the service and the configuration all use these, so they live below all
//! of them instead of in one of them.

pub mod atomic;
pub mod path;
pub mod tex;
pub mod walk;

use std::sync::{Mutex, MutexGuard};

/// Locks `m`, also after a thread panicked while holding it: the data behind Skald's locks
/// stays consistent between statements, so a panic elsewhere is no reason to stop.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// An I/O error's reason as a person reads it.
pub fn io_reason(err: &std::io::Error) -> String {
    match err.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".to_string(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        _ => err.to_string(),
    }
}
