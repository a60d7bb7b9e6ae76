//! Which directories of a folder changed since the last checkpoint, from the kernel
//! (inotify), so that a checkpoint lists those instead of walking the whole folder.
//!
//! The queue is read at the checkpoint itself, on the checkpoint's thread: the kernel
//! queues an event before the system call that caused it returns, so every change a
//! finished tool call made is in the queue by then. That is why there is no reader thread
//! and no barrier file (a watcher that reads on its own thread needs one to know it has
//! caught up). Opening and reading files is not watched: a grep over the folder must not
//! make the next checkpoint re-read what it read.
//!
//! The checkpoints' one module that names inotify (the sandbox's is
//! `skald-sandbox/src/presence.rs`, on the same crate).

use inotify::{EventMask, Inotify, WatchDescriptor, WatchMask};
use std::collections::{HashMap, HashSet};
use std::io;
use std::path::{Path, PathBuf};

/// More changed paths than this between two checkpoints: walking is cheaper.
const MAX_PENDING: usize = 100_000;

/// What changed since the queue was last read.
pub(crate) enum Changed {
    /// Paths named by events: a file or directory that was created, written, removed,
    /// renamed or had its mode changed, or a watched directory itself.
    Paths(HashSet<PathBuf>),
    /// The kernel's queue overflowed (or could not be read): anything may have changed.
    Rescan,
}

/// One inotify instance watching a folder's directories, each on its own (a watch per
/// directory the walk enters, so ignored trees such as `target/` cost nothing).
pub(crate) struct Watcher {
    inotify: Inotify,
    dirs: HashMap<PathBuf, WatchDescriptor>,
    paths: HashMap<i32, PathBuf>,
    buffer: Vec<u8>,
}

fn mask() -> WatchMask {
    WatchMask::CREATE
        | WatchMask::DELETE
        | WatchMask::MODIFY
        | WatchMask::CLOSE_WRITE
        | WatchMask::ATTRIB
        | WatchMask::MOVED_FROM
        | WatchMask::MOVED_TO
        | WatchMask::DELETE_SELF
        | WatchMask::MOVE_SELF
        | WatchMask::ONLYDIR
        | WatchMask::DONT_FOLLOW
        | WatchMask::EXCL_UNLINK
}

impl Watcher {
    pub fn start() -> io::Result<Watcher> {
        Ok(Watcher {
            inotify: Inotify::init()?,
            dirs: HashMap::new(),
            paths: HashMap::new(),
            buffer: vec![0; 64 * 1024],
        })
    }

    pub fn watches(&self, dir: &Path) -> bool {
        self.dirs.contains_key(dir)
    }

    pub fn count(&self) -> usize {
        self.dirs.len()
    }

    pub fn dirs(&self) -> impl Iterator<Item = &PathBuf> {
        self.dirs.keys()
    }

    /// Watches `dir`, or watches it again: a directory that replaced one of the same name
    /// is a new one, and one renamed into place keeps the watch it had under its old name.
    pub fn watch(&mut self, dir: &Path) -> io::Result<()> {
        let wd = self.inotify.watches().add(dir, mask())?;
        let id = wd.get_watch_descriptor_id();
        if let Some(other) = self.paths.get(&id).cloned()
            && other != dir
        {
            // The kernel gave the watch of another name: the same directory. Renamed, its
            // old name is gone; still there, it is one directory under two names (a bind
            // mount), whose events could not be told apart.
            if same_dir(&other, dir) {
                return Err(io::Error::other(format!(
                    "{} and {} are the same directory",
                    other.display(),
                    dir.display()
                )));
            }
            self.dirs.remove(&other);
        }
        self.paths.insert(id, dir.to_path_buf());
        self.dirs.insert(dir.to_path_buf(), wd);
        Ok(())
    }

    /// Stops watching `dir` and every directory under it.
    pub fn unwatch_under(&mut self, dir: &Path) {
        let gone: Vec<PathBuf> = self
            .dirs
            .keys()
            .filter(|d| d.starts_with(dir))
            .cloned()
            .collect();
        for d in gone {
            self.unwatch(&d);
        }
    }

    pub fn unwatch(&mut self, dir: &Path) {
        if let Some(wd) = self.dirs.remove(dir) {
            let id = wd.get_watch_descriptor_id();
            if self.paths.get(&id).is_some_and(|p| p == dir) {
                self.paths.remove(&id);
            }
            // The kernel may have dropped it already (the directory was removed).
            let _ = self.inotify.watches().remove(wd);
        }
    }

    /// Everything queued since the last call.
    pub fn changed(&mut self) -> Changed {
        let mut out = HashSet::new();
        let mut rescan = false;
        loop {
            let events = match self.inotify.read_events(&mut self.buffer) {
                Ok(events) => events,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(_) => {
                    rescan = true;
                    break;
                }
            };
            for event in events {
                if event.mask.contains(EventMask::Q_OVERFLOW) {
                    rescan = true;
                    continue;
                }
                let id = event.wd.get_watch_descriptor_id();
                let Some(dir) = self.paths.get(&id) else {
                    continue;
                };
                let path = match event.name {
                    Some(name) => dir.join(name),
                    None => dir.clone(),
                };
                if event.mask.contains(EventMask::IGNORED) {
                    // The kernel dropped the watch: its directory was removed.
                    if self.dirs.get(&path).is_some_and(|w| *w == event.wd) {
                        self.dirs.remove(&path);
                    }
                    self.paths.remove(&id);
                }
                if !rescan {
                    out.insert(path);
                    if out.len() > MAX_PENDING {
                        rescan = true;
                        out.clear();
                    }
                }
            }
        }
        if rescan {
            Changed::Rescan
        } else {
            Changed::Paths(out)
        }
    }
}

#[cfg(unix)]
fn same_dir(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}
