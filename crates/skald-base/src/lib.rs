//! The ground every Skald layer stands on: how a path is judged (lexically normalised,
//! symlinks resolved, compared by whole components), how a file is written so a crash
//! never leaves half of it, how a checked path is opened so that a link swapped in since
//! is refused, and how a lock is taken after a panic elsewhere. The tools, the engine,
//! the service and the configuration all use these, so they live below all of them
//! instead of in one of them.

pub mod atomic;
pub mod beneath;
pub mod image_kind;
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
        // What `beneath` answers for a link where a checked path had none.
        #[cfg(unix)]
        _ if err.raw_os_error() == Some(nix::errno::Errno::ELOOP as i32) => {
            "a part of the path is a symbolic link, refused here rather than followed".to_string()
        }
        _ => err.to_string(),
    }
}
