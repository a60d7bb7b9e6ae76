//! Watching the files people are viewing (and, for LaTeX, every input of the last build):
//! subscribe and unsubscribe per file, with a count, so a watch lasts exactly as long as
//! someone looks. Folders are watched rather than files, which catches editors that save
//! to a temporary file and rename it over the original; events are debounced, so one save
//! is one change.

use notify_debouncer_full::notify::event::ModifyKind;
use notify_debouncer_full::notify::{EventKind, RecommendedWatcher, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, Debouncer, RecommendedCache, new_debouncer};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Changes closer together than this are one change.
pub const DEBOUNCE: Duration = Duration::from_millis(150);

#[derive(Debug, thiserror::Error)]
#[error("cannot watch {path}: {message}")]
pub struct WatchError {
    pub path: String,
    pub message: String,
}

#[derive(Default)]
struct Subscriptions {
    /// Watched files and how many viewers each has.
    files: HashMap<PathBuf, usize>,
    /// Watched folders and how many watched files each holds.
    dirs: HashMap<PathBuf, usize>,
}

use skald_base::lock;

pub struct FileWatcher {
    debouncer: Mutex<Debouncer<RecommendedWatcher, RecommendedCache>>,
    subs: Arc<Mutex<Subscriptions>>,
}

impl FileWatcher {
    /// `on_change` gets the watched files that changed (once per debounced burst), on the
    /// watcher's own thread.
    pub fn new(
        on_change: impl Fn(Vec<PathBuf>) + Send + 'static,
    ) -> Result<FileWatcher, WatchError> {
        let subs: Arc<Mutex<Subscriptions>> = Arc::default();
        let seen = subs.clone();
        let debouncer = new_debouncer(DEBOUNCE, None, move |result: DebounceEventResult| {
            let Ok(events) = result else { return };
            let subs = lock(&seen);
            let changed: HashSet<PathBuf> = events
                .iter()
                // Writes, creations (a rename over the file), removals — not reads: a build
                // reading its inputs must not set itself off again.
                .filter(|e| {
                    matches!(
                        e.event.kind,
                        EventKind::Create(_)
                            | EventKind::Remove(_)
                            | EventKind::Modify(
                                ModifyKind::Data(_) | ModifyKind::Name(_) | ModifyKind::Any
                            )
                    )
                })
                .flat_map(|e| e.event.paths.iter())
                .filter(|p| subs.files.contains_key(*p))
                .cloned()
                .collect();
            drop(subs);
            if !changed.is_empty() {
                let mut changed: Vec<PathBuf> = changed.into_iter().collect();
                changed.sort();
                on_change(changed);
            }
        })
        .map_err(|e| WatchError {
            path: String::new(),
            message: e.to_string(),
        })?;
        Ok(FileWatcher {
            debouncer: Mutex::new(debouncer),
            subs,
        })
    }

    /// Starts (or adds a viewer to) watching each file. Paths should be absolute. All or
    /// nothing: when one cannot be watched (the system's watch limit, say), the counts of
    /// the others are rolled back, so a later attempt starts clean.
    pub fn subscribe(&self, files: &[PathBuf]) -> Result<(), WatchError> {
        let mut subs = lock(&self.subs);
        for (i, file) in files.iter().enumerate() {
            let count = subs.files.entry(file.clone()).or_insert(0);
            *count += 1;
            if *count > 1 {
                continue;
            }
            let dir = file.parent().unwrap_or(Path::new("/")).to_path_buf();
            let dirs = subs.dirs.entry(dir.clone()).or_insert(0);
            *dirs += 1;
            if *dirs == 1
                && let Err(e) = lock(&self.debouncer).watch(&dir, RecursiveMode::NonRecursive)
            {
                subs.files.remove(file);
                subs.dirs.remove(&dir);
                drop(subs);
                self.unsubscribe(&files[..i]);
                return Err(WatchError {
                    path: dir.display().to_string(),
                    message: e.to_string(),
                });
            }
        }
        Ok(())
    }

    /// Removes a viewer from each file; the last one out stops the watch.
    pub fn unsubscribe(&self, files: &[PathBuf]) {
        let mut subs = lock(&self.subs);
        for file in files {
            let Some(count) = subs.files.get_mut(file) else {
                continue;
            };
            *count -= 1;
            if *count > 0 {
                continue;
            }
            subs.files.remove(file);
            let dir = file.parent().unwrap_or(Path::new("/")).to_path_buf();
            if let Some(n) = subs.dirs.get_mut(&dir) {
                *n -= 1;
                if *n == 0 {
                    subs.dirs.remove(&dir);
                    let _ = lock(&self.debouncer).unwatch(&dir);
                }
            }
        }
    }

    /// Files being watched now.
    pub fn watched(&self) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = lock(&self.subs).files.keys().cloned().collect();
        v.sort();
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    /// The next change, and any repeats of it a busy machine splits one save into.
    fn next(rx: &mpsc::Receiver<Vec<PathBuf>>) -> Option<Vec<PathBuf>> {
        let first = rx.recv_timeout(Duration::from_secs(5)).ok()?;
        while let Ok(more) = rx.recv_timeout(Duration::from_millis(300)) {
            assert_eq!(more, first, "a different file changed");
        }
        Some(first)
    }

    #[test]
    fn in_place_writes_and_renames_are_seen_once_and_only_while_watched() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let (main, other) = (root.join("main.tex"), root.join("other.txt"));
        std::fs::write(&main, "a").unwrap();
        std::fs::write(&other, "b").unwrap();
        let (tx, rx) = mpsc::channel();
        let w = FileWatcher::new(move |files| {
            let _ = tx.send(files);
        })
        .unwrap();
        w.subscribe(std::slice::from_ref(&main)).unwrap();
        w.subscribe(std::slice::from_ref(&main)).unwrap();
        std::thread::sleep(Duration::from_millis(100));
        std::fs::write(&main, "changed").unwrap();
        assert_eq!(next(&rx), Some(vec![main.clone()]));
        // An editor's save: a temporary file renamed over the original.
        let tmp = root.join(".main.tex.swp");
        std::fs::write(&tmp, "saved").unwrap();
        std::fs::rename(&tmp, &main).unwrap();
        assert_eq!(next(&rx), Some(vec![main.clone()]));
        // Reading it is not a change.
        let _ = std::fs::read(&main).unwrap();
        assert_eq!(rx.recv_timeout(Duration::from_millis(600)).ok(), None);
        // A file nobody watches, in the same folder: nothing.
        std::fs::write(&other, "x").unwrap();
        assert_eq!(rx.recv_timeout(Duration::from_millis(600)).ok(), None);
        // Two viewers: the watch lasts until both have gone.
        w.unsubscribe(std::slice::from_ref(&main));
        assert_eq!(w.watched(), vec![main.clone()]);
        w.unsubscribe(std::slice::from_ref(&main));
        assert!(w.watched().is_empty());
        std::fs::write(&main, "unwatched").unwrap();
        assert_eq!(rx.recv_timeout(Duration::from_millis(600)).ok(), None);
    }
}
