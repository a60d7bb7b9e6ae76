//! What a folder's checkpoints keep in memory between two snapshots of one process, so
//! that a snapshot costs what changed rather than a walk of the folder.
//!
//! After a walk, every directory it entered is watched (Linux: inotify). The next snapshot
//! reads which paths changed since and lists only their directories, the way the walk
//! would (the same `.gitignore` rules, skip list and exclusions): a file whose stat data
//! is unchanged is not read, one an event named is, and what a listing no longer has is
//! removed. A directory that is new (or replaced, or renamed into place) is watched before
//! it is listed, so nothing written into it can be missed.
//!
//! The index itself is kept in memory between snapshots and written to the shadow
//! repository only now and then (after many changes, after half a minute, before a walk):
//! it is a cache, and one a crash left behind only costs the next walk the reading of
//! files changed since it was written.
//!
//! The folder is walked whole again whenever the shortcut could be wrong: the first
//! snapshot (and the one after, since a directory watched after the walk listed it could
//! have changed in between), after the kernel's queue overflowed, when an ignore file
//! changed, when another process wrote the shadow index, when the exclusions or limits
//! changed, when more than a few hundred directories changed, and every few minutes
//! regardless (a change the kernel does not report, as on a network file system, is found
//! then).

use crate::shadow::{Scan, Shadow};
use crate::{Limits, Result};
use git2::Oid;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long the shortcut is trusted before the folder is walked whole again.
const VERIFY_EVERY: Duration = Duration::from_secs(300);
/// More directories than this to list: walking the folder is as cheap.
#[cfg(target_os = "linux")]
const MAX_LISTED: usize = 256;
/// A folder with more directories than this is walked every time rather than watched
/// (each watch is kernel memory, and the user's watches are shared with every program).
#[cfg(target_os = "linux")]
const MAX_WATCHED: usize = 10_000;

/// One folder's checkpoint state in this process. Keep one per folder for as long as the
/// process checkpoints it; a new one costs a walk.
pub struct Live {
    watch: bool,
    root: Option<PathBuf>,
    #[cfg(target_os = "linux")]
    watcher: Option<crate::watch::Watcher>,
    known: Option<Known>,
    problem: Option<String>,
}

/// What the last snapshot left, true while the shadow index is the one it wrote.
pub(crate) struct Known {
    /// The index file's size and modification time when this was true.
    stamp: String,
    /// The index as it is now, ahead of the file by `unwritten` changes.
    entries: crate::shadow::Entries,
    unwritten: usize,
    written_at: Instant,
    tree: Oid,
    bytes: u64,
    files: usize,
    large: BTreeMap<Vec<u8>, u64>,
    excluded: Vec<PathBuf>,
    limits: Limits,
    walked_at: Instant,
    /// Whether every directory was watched before the walk listed it.
    settled: bool,
}

impl Live {
    /// `watch` false: every snapshot walks the folder (`[checkpoints] watch = false`).
    pub fn new(watch: bool) -> Live {
        Live {
            watch,
            root: None,
            #[cfg(target_os = "linux")]
            watcher: None,
            known: None,
            problem: None,
        }
    }

    /// Why the folder is walked on every snapshot, when it is.
    pub fn problem(&self) -> Option<&str> {
        if !self.watch {
            return Some("watching is turned off ([checkpoints] watch = false)");
        }
        if cfg!(not(target_os = "linux")) {
            return Some("watching folders is built for Linux only so far");
        }
        self.problem.as_deref()
    }

    /// How many directories are watched.
    pub fn watched(&self) -> usize {
        #[cfg(target_os = "linux")]
        {
            self.watcher.as_ref().map_or(0, |w| w.count())
        }
        #[cfg(not(target_os = "linux"))]
        {
            0
        }
    }

    fn forget(&mut self) {
        self.known = None;
    }
}

impl std::fmt::Debug for Live {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Live")
            .field("root", &self.root)
            .field("watched", &self.watched())
            .field("problem", &self.problem())
            .finish()
    }
}

impl Known {
    fn scan(&self) -> Scan {
        Scan {
            tree: self.tree,
            files: self.files,
            bytes: self.bytes,
            skipped_large: self
                .large
                .iter()
                .map(|(p, n)| (String::from_utf8_lossy(p).into_owned(), *n))
                .collect(),
            hashed: 0,
            dirs: Vec::new(),
            walked: false,
        }
    }
}

impl Shadow {
    pub(crate) fn scan_live(
        &mut self,
        live: &mut Live,
        limits: &Limits,
        excluded: &[PathBuf],
    ) -> Result<Scan> {
        if live.root.as_deref() != Some(self.root.as_path()) {
            *live = Live::new(live.watch);
            live.root = Some(self.root.clone());
        }
        #[cfg(target_os = "linux")]
        match self.quick(live, limits, excluded) {
            Ok(Some(scan)) => return Ok(scan),
            Ok(None) => {}
            Err(e) => {
                live.forget();
                return Err(e);
            }
        }
        #[cfg(target_os = "linux")]
        self.before_walk(live);
        // The walk starts from the index file: bring it up to date first.
        if let Some(known) = live.known.as_mut()
            && known.unwritten > 0
        {
            let ours = crate::shadow::index_stamp(&self.dir.join(crate::shadow::INDEX_FILE))
                .as_deref()
                == Some(known.stamp.as_str());
            if ours && let Err(e) = self.write_index(known) {
                live.forget();
                return Err(e);
            }
        }
        let (scan, entries) = match self.scan_keeping(limits, excluded, true) {
            Ok(done) => done,
            Err(e) => {
                live.forget();
                return Err(e);
            }
        };
        #[cfg(target_os = "linux")]
        let settled = self.after_walk(live, &scan.dirs);
        #[cfg(not(target_os = "linux"))]
        let settled = false;
        let index = self.dir.join(crate::shadow::INDEX_FILE);
        live.known = crate::shadow::index_stamp(&index).map(|stamp| Known {
            stamp,
            entries: entries.unwrap_or_default(),
            unwritten: 0,
            written_at: Instant::now(),
            tree: scan.tree,
            bytes: scan.bytes,
            files: scan.files,
            large: scan
                .skipped_large
                .iter()
                .map(|(p, n)| (p.as_bytes().to_vec(), *n))
                .collect(),
            excluded: excluded.to_vec(),
            limits: *limits,
            walked_at: Instant::now(),
            settled,
        });
        Ok(scan)
    }
}

/// Written to the index file after this many changes, or when the oldest unwritten one
/// is this old.
#[cfg(target_os = "linux")]
const WRITE_AFTER: usize = 1_000;
#[cfg(target_os = "linux")]
const WRITE_EVERY: Duration = Duration::from_secs(30);

impl Shadow {
    /// Writes the index `known` holds to the index file (a new file renamed over the old,
    /// so a reader sees one or the other), with the tree it makes.
    fn write_index(&self, known: &mut Known) -> Result<()> {
        use crate::shadow::{INDEX_FILE, TREE_FILE, index_stamp, remember_tree};
        let path = self.dir.join(INDEX_FILE);
        let next = self.dir.join(format!("{INDEX_FILE}.next"));
        let _ = std::fs::remove_file(&next);
        let mut index = git2::Index::open(&next)?;
        for (p, e) in &known.entries {
            index.add(&e.index_entry(p))?;
        }
        index.write()?;
        drop(index);
        std::fs::rename(&next, &path)
            .map_err(|e| crate::CheckpointError::io("replace", &path, &e))?;
        remember_tree(&self.dir.join(TREE_FILE), &path, known.tree)?;
        if let Some(stamp) = index_stamp(&path) {
            known.stamp = stamp;
        }
        known.unwritten = 0;
        known.written_at = Instant::now();
        Ok(())
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use super::*;
    use crate::CheckpointError;
    use crate::shadow::{Entry, INDEX_FILE, bytes_path, entry_for, file_mode, path_bytes};
    use crate::watch::{Changed, Watcher};
    use skald_base::walk::{Flow, Kind};
    use std::collections::{HashMap, HashSet, VecDeque};
    use std::ffi::OsString;

    /// Names whose change changes what the walk leaves out.
    const IGNORE_FILES: &[&str] = &[".gitignore", ".ignore"];

    impl Shadow {
        /// The snapshot from what changed since the last one, or None when the folder
        /// must be walked.
        pub(super) fn quick(
            &mut self,
            live: &mut Live,
            limits: &Limits,
            excluded: &[PathBuf],
        ) -> Result<Option<Scan>> {
            let (Some(known), Some(watcher)) = (live.known.as_mut(), live.watcher.as_mut()) else {
                return Ok(None);
            };
            let index_path = self.dir.join(INDEX_FILE);
            if !known.settled
                || known.excluded != excluded
                || known.limits != *limits
                || known.walked_at.elapsed() > VERIFY_EVERY
                || crate::shadow::index_stamp(&index_path).as_deref() != Some(&known.stamp)
            {
                return Ok(None);
            }
            let paths = match watcher.changed() {
                Changed::Rescan => return Ok(None),
                Changed::Paths(p) => p,
            };
            if paths.is_empty() {
                return Ok(Some(known.scan()));
            }
            let root = self.root.clone();
            let walk_instead = paths.iter().any(|p| {
                *p == root
                    || !p.starts_with(&root)
                    || p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| IGNORE_FILES.contains(&n))
            });
            if walk_instead {
                return Ok(None);
            }
            let mut excluded_all = excluded.to_vec();
            excluded_all.push(self.dir.clone());
            // Worked on a copy of the entries: a listing that gives up leaves them as they were.
            let mut work = Listing {
                shadow: self,
                watcher,
                entries: known.entries.clone(),
                large: known.large.clone(),
                files: known.files,
                bytes: known.bytes,
                limits,
                excluded: &excluded_all,
                updates: git2::build::TreeUpdateBuilder::new(),
                tree_changed: false,
                changed: 0,
                hashed: 0,
            };
            if !work.run(paths)? {
                return Ok(None);
            }
            let hashed = work.hashed;
            work.finish(known)?;
            if known.unwritten >= WRITE_AFTER
                || (known.unwritten > 0 && known.written_at.elapsed() >= WRITE_EVERY)
            {
                self.write_index(known)?;
            }
            let mut scan = known.scan();
            scan.hashed = hashed;
            Ok(Some(scan))
        }

        /// Starts watching (when it can), and empties the queue: the walk sees all of it.
        pub(super) fn before_walk(&self, live: &mut Live) {
            if !live.watch {
                return;
            }
            if live.watcher.is_none() {
                match Watcher::start() {
                    Ok(w) => live.watcher = Some(w),
                    Err(e) => live.problem = Some(format!("cannot watch the folder: {e}")),
                }
            }
            if let Some(w) = live.watcher.as_mut() {
                let _ = w.changed();
            }
        }

        /// Watches every directory the walk entered and no other. Returns whether all of
        /// them were watched already (so the walk saw everything since).
        pub(super) fn after_walk(&self, live: &mut Live, dirs: &[PathBuf]) -> bool {
            let Some(w) = live.watcher.as_mut() else {
                return false;
            };
            if dirs.len() > MAX_WATCHED {
                live.problem = Some(format!(
                    "the folder has more than {MAX_WATCHED} directories, too many to watch"
                ));
                live.watcher = None;
                return false;
            }
            let mut added = false;
            for d in dirs {
                if !w.watches(d) {
                    if let Err(e) = w.watch(d) {
                        live.problem = Some(format!("cannot watch {}: {e}", d.display()));
                        live.watcher = None;
                        return false;
                    }
                    added = true;
                }
            }
            let walked: HashSet<&PathBuf> = dirs.iter().collect();
            let stale: Vec<PathBuf> = w.dirs().filter(|d| !walked.contains(d)).cloned().collect();
            for d in stale {
                w.unwatch(&d);
            }
            live.problem = None;
            !added
        }
    }

    /// Listing the directories that changed into the index.
    struct Listing<'a> {
        shadow: &'a Shadow,
        watcher: &'a mut Watcher,
        entries: crate::shadow::Entries,
        large: BTreeMap<Vec<u8>, u64>,
        files: usize,
        bytes: u64,
        limits: &'a Limits,
        excluded: &'a [PathBuf],
        updates: git2::build::TreeUpdateBuilder,
        tree_changed: bool,
        /// Entries added, changed or removed.
        changed: usize,
        hashed: usize,
    }

    impl Listing<'_> {
        /// Lists every directory an event named a child of, and every directory new to the
        /// watch under them. False when the folder should be walked instead.
        fn run(&mut self, paths: HashSet<std::path::PathBuf>) -> Result<bool> {
            let mut named: HashMap<PathBuf, HashSet<OsString>> = HashMap::new();
            for p in paths {
                if let (Some(dir), Some(name)) = (p.parent(), p.file_name()) {
                    named
                        .entry(dir.to_path_buf())
                        .or_default()
                        .insert(name.to_os_string());
                }
            }
            // The directories events came from first, so that a directory renamed away is
            // unwatched before its new name is watched.
            let mut queue: VecDeque<(PathBuf, bool)> = named
                .keys()
                .filter(|d| self.watcher.watches(d))
                .map(|d| (d.clone(), false))
                .collect();
            let mut listed = 0;
            while let Some((dir, fresh)) = queue.pop_front() {
                listed += 1;
                if listed > MAX_LISTED {
                    return Ok(false);
                }
                let names = named.remove(&dir).unwrap_or_default();
                if !std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
                    // Gone: the listing of its parent removes it.
                    continue;
                }
                if fresh && self.watcher.watch(&dir).is_err() {
                    return Ok(false);
                }
                for sub in self.list(&dir, &names, fresh)? {
                    queue.push_back((sub, true));
                }
            }
            Ok(true)
        }

        /// Lists `dir` as the walk would and brings the index's entries for its files in
        /// line. Returns the subdirectories to list: new ones, ones an event named, and all
        /// of a `fresh` directory's (new, so nothing under it is known).
        fn list(
            &mut self,
            dir: &Path,
            names: &HashSet<OsString>,
            fresh: bool,
        ) -> Result<Vec<PathBuf>> {
            let root = self.shadow.root.clone();
            let rel_dir = dir.strip_prefix(&root).unwrap_or(Path::new(""));
            let mut prefix = path_bytes(rel_dir);
            if !prefix.is_empty() {
                prefix.push(b'/');
            }
            let mut seen_files: HashSet<Vec<u8>> = HashSet::new();
            let mut seen_dirs: HashSet<Vec<u8>> = HashSet::new();
            let mut subdirs = Vec::new();
            // Large files directly in `dir` are found again by this listing, or are gone.
            let direct_large: Vec<Vec<u8>> = under(&self.large, &prefix)
                .filter(|k| !k[prefix.len()..].contains(&b'/'))
                .collect();
            for k in direct_large {
                self.large.remove(&k);
            }
            // Listed first, then brought in line (which needs `self`). A folder that cannot
            // be opened now (gone, or a link swapped in) lists as empty: what the index
            // has under it is gone.
            let mut listed = Vec::new();
            let _ = skald_base::walk::walker(dir, self.excluded)
                .max_depth(Some(1))
                .run(|entry| {
                    if entry.depth() == 1 {
                        listed.push(entry);
                    }
                    Flow::Continue
                });
            for entry in listed {
                let kind = entry.kind();
                let name = path_bytes(Path::new(entry.file_name()));
                let evented = names.contains(entry.file_name());
                if kind == Kind::Dir {
                    let path = entry.into_path();
                    if fresh || evented || !self.watcher.watches(&path) {
                        subdirs.push(path);
                    }
                    seen_dirs.insert(name);
                    continue;
                }
                if !matches!(kind, Kind::File | Kind::Symlink) {
                    continue;
                }
                // From the folder's descriptor (not by path, which a swap could lead out).
                let Ok(meta) = entry.metadata() else {
                    continue;
                };
                let rel = [prefix.as_slice(), &name].concat();
                if meta.len() > self.limits.max_file_bytes {
                    self.large.insert(rel.clone(), meta.len());
                    self.remove(&rel)?;
                    continue;
                }
                seen_files.insert(name);
                self.file(&rel, &meta, evented)?;
            }
            // What the index has under `dir` that the listing did not find.
            let mut gone_files = Vec::new();
            let mut gone_dirs: Vec<Vec<u8>> = Vec::new();
            for path in self.entries.range(prefix.clone()..).map(|(p, _)| p) {
                if !path.starts_with(&prefix) {
                    break;
                }
                let rest = &path[prefix.len()..];
                match rest.iter().position(|b| *b == b'/') {
                    Some(slash) => {
                        let sub = &rest[..slash];
                        if !seen_dirs.contains(sub)
                            && gone_dirs.last().map(|d| d.as_slice()) != Some(sub)
                        {
                            gone_dirs.push(sub.to_vec());
                        }
                    }
                    None if !seen_files.contains(rest) => gone_files.push(path.clone()),
                    None => {}
                }
            }
            for f in gone_files {
                self.remove(&f)?;
            }
            for sub in gone_dirs {
                let rel = [prefix.as_slice(), &sub].concat();
                self.remove_under(&rel)?;
                self.watcher.unwatch_under(&dir.join(bytes_path(&sub)));
            }
            // A directory the index has no file of, but that was watched and is gone.
            for sub in names {
                let path = dir.join(sub);
                if self.watcher.watches(&path) && !seen_dirs.contains(&path_bytes(Path::new(sub))) {
                    let rel = [prefix.as_slice(), &path_bytes(Path::new(sub))].concat();
                    self.remove_under(&rel)?;
                    self.watcher.unwatch_under(&path);
                }
            }
            Ok(subdirs)
        }

        /// Brings one listed file's entry in line: read again when an event named it or
        /// its stat data differs from the index's. (Git's racy rule is not needed: the
        /// directory was watched before its files' stat data was taken, so a change in the
        /// same clock tick is an event.)
        fn file(&mut self, rel: &[u8], meta: &std::fs::Metadata, evented: bool) -> Result<()> {
            let mut fresh = Entry::of(&entry_for(meta, rel));
            let old = self.entries.get(rel);
            if !evented && old.is_some_and(|k| k.same_stat(&fresh)) {
                return Ok(());
            }
            // Through the folder's descriptor, refusing links on the way (see `beneath`).
            let content = self.shadow.folder.read(
                &bytes_path(rel),
                meta.file_type().is_symlink(),
                self.limits.max_file_bytes,
            );
            // Vanished or unreadable since the listing: its event is in the queue for the
            // next snapshot.
            let Ok(content) = content else {
                return Ok(());
            };
            self.hashed += 1;
            fresh.id = self.shadow.repo.blob(&content)?;
            if old.is_some_and(|o| *o == fresh) {
                return Ok(());
            }
            if !old.is_some_and(|o| o.id == fresh.id && o.mode == fresh.mode) {
                self.updates
                    .upsert(bytes_path(rel), fresh.id, file_mode(fresh.mode));
                self.tree_changed = true;
            }
            let old_size = match old {
                Some(o) => u64::from(o.file_size),
                None => {
                    self.files += 1;
                    0
                }
            };
            self.bytes = self.bytes.saturating_sub(old_size) + meta.len();
            self.entries.insert(rel.to_vec(), fresh);
            self.changed += 1;
            Ok(())
        }

        fn remove(&mut self, rel: &[u8]) -> Result<()> {
            if let Some(old) = self.entries.remove(rel) {
                self.updates.remove(bytes_path(rel));
                self.files = self.files.saturating_sub(1);
                self.bytes = self.bytes.saturating_sub(u64::from(old.file_size));
                self.tree_changed = true;
                self.changed += 1;
            }
            Ok(())
        }

        /// Removes every entry under the directory `rel`.
        fn remove_under(&mut self, rel: &[u8]) -> Result<()> {
            let mut prefix = rel.to_vec();
            prefix.push(b'/');
            let gone: Vec<Vec<u8>> = self
                .entries
                .range(prefix.clone()..)
                .map(|(p, _)| p)
                .take_while(|p| p.starts_with(&prefix))
                .cloned()
                .collect();
            for p in gone {
                self.remove(&p)?;
            }
            let large: Vec<Vec<u8>> = under(&self.large, &prefix).collect();
            for k in large {
                self.large.remove(&k);
            }
            Ok(())
        }

        /// Writes the tree along the changed paths and hands the entries to `known`.
        fn finish(mut self, known: &mut Known) -> Result<()> {
            if self.files > self.limits.max_files {
                return Err(CheckpointError::TooLarge {
                    limit: self.limits.max_files.to_string(),
                    what: "files",
                    setting: "max_files",
                });
            }
            if self.bytes > self.limits.max_bytes {
                return Err(CheckpointError::TooLarge {
                    limit: format!("{} MiB", self.limits.max_bytes >> 20),
                    what: "of files",
                    setting: "max_mib",
                });
            }
            let repo = &self.shadow.repo;
            if self.tree_changed {
                let base = repo.find_tree(known.tree)?;
                // A file where a folder was (or the reverse) is not an update libgit2
                // applies to a tree; an index of the entries writes it whole.
                known.tree = match self.updates.create_updated(repo, &base) {
                    Ok(tree) => tree,
                    Err(_) => {
                        let mut index = git2::Index::new()?;
                        for (p, e) in &self.entries {
                            index.add(&e.index_entry(p))?;
                        }
                        index.write_tree_to(repo)?
                    }
                };
            }
            known.entries = self.entries;
            known.large = self.large;
            known.files = self.files;
            known.bytes = self.bytes;
            known.unwritten += self.changed;
            Ok(())
        }
    }

    /// The keys of `map` that start with `prefix`.
    fn under<'m>(
        map: &'m BTreeMap<Vec<u8>, u64>,
        prefix: &'m [u8],
    ) -> impl Iterator<Item = Vec<u8>> + 'm {
        map.range(prefix.to_vec()..)
            .take_while(move |(k, _)| k.starts_with(prefix))
            .map(|(k, _)| k.clone())
    }
}
