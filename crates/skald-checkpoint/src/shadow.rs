//! The shadow repository of one folder: opening it (and the lock that keeps two Skald
//! processes from writing it at once), and snapshots.

use crate::{CheckpointError, Limits, Result};
use git2::{Index, IndexEntry, IndexTime, ObjectType, Oid, Repository, Signature};
use skald_base::beneath::Folder;
use skald_base::lock;
use skald_base::walk::{Flow, Kind};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The index of the folder's last snapshot: the stat cache that makes the next one cheap.
pub(crate) const INDEX_FILE: &str = "skald-index";
/// The tree of the index as last written, so an unchanged folder's is not rebuilt.
pub(crate) const TREE_FILE: &str = "skald-index.tree";
/// Names the folder a shadow repository belongs to, for a person looking at the store.
const FOLDER_FILE: &str = "skald-folder";
/// How long `open` waits for another process's lock.
const LOCK_WAIT: Duration = Duration::from_secs(10);

/// One folder's checkpoints, open and locked for this process until dropped.
pub struct Shadow {
    pub(crate) repo: Repository,
    pub(crate) root: PathBuf,
    /// The folder held open: every file of it is read and written through this
    /// descriptor (see `beneath`), never through `root`.
    pub(crate) folder: Folder,
    pub(crate) dir: PathBuf,
    #[cfg(unix)]
    _lock: nix::fcntl::Flock<std::fs::File>,
}

/// A snapshot taken: the commit on the line, and what it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// The commit id (hex). The same as the line's previous one when nothing changed.
    pub commit: String,
    pub tree: String,
    /// Files recorded, and their total size.
    pub files: usize,
    pub bytes: u64,
    /// Files left out for their size: relative path and size.
    pub skipped_large: Vec<(String, u64)>,
    /// Files read and hashed this time (the rest were known from their stat data).
    pub hashed: usize,
    /// Whether the whole folder was walked, rather than only the directories the kernel
    /// said changed (see [`Live`](crate::Live)).
    pub walked: bool,
}

impl Snapshot {
    /// What a person should know about what was left out, or "".
    pub fn note(&self, limits: &Limits) -> String {
        if self.skipped_large.is_empty() {
            return String::new();
        }
        let names: Vec<&str> = self
            .skipped_large
            .iter()
            .take(5)
            .map(|(p, _)| p.as_str())
            .collect();
        let more = self.skipped_large.len().saturating_sub(names.len());
        format!(
            "not recorded, larger than {} MiB: {}{}",
            limits.max_file_bytes >> 20,
            names.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        )
    }
}

/// The result of walking the folder into the index.
pub(crate) struct Scan {
    pub tree: Oid,
    pub files: usize,
    pub bytes: u64,
    pub skipped_large: Vec<(String, u64)>,
    pub hashed: usize,
    /// The directories walked (the folder's own first), when the whole folder was.
    pub dirs: Vec<PathBuf>,
    pub walked: bool,
}

impl Shadow {
    /// Opens (creating if needed) the shadow repository of `folder` under `store`, waiting
    /// up to ten seconds for another process that holds it. A restore a crash interrupted
    /// is finished first.
    pub fn open(store: &Path, folder: &Path) -> Result<Shadow> {
        let root = std::fs::canonicalize(folder)
            .map_err(|e| CheckpointError::io("open the folder", folder, &e))?;
        if !root.is_dir() {
            return Err(CheckpointError::NotAFolder(root));
        }
        create_private_dir(store)?;
        let name = folder_key(&root);
        let dir = store.join(format!("{name}.git"));
        #[cfg(unix)]
        let lock = take_lock(&store.join(format!("{name}.lock")), &root)?;
        let repo = match Repository::open_bare(&dir) {
            Ok(r) => r,
            Err(_) => {
                let r = Repository::init_bare(&dir)?;
                let folder_file = dir.join(FOLDER_FILE);
                std::fs::write(&folder_file, root.to_string_lossy().as_bytes())
                    .map_err(|e| CheckpointError::io("write", &folder_file, &e))?;
                r
            }
        };
        remove_stale_locks(&dir);
        let folder =
            Folder::open(&root).map_err(|e| CheckpointError::io("open the folder", &root, &e))?;
        let mut shadow = Shadow {
            repo,
            root,
            folder,
            dir,
            #[cfg(unix)]
            _lock: lock,
        };
        shadow.finish_interrupted_restore()?;
        Ok(shadow)
    }

    /// The folder, canonical.
    pub fn folder(&self) -> &Path {
        &self.root
    }

    /// Records the folder as a commit on `line` (a session's), unless nothing changed
    /// since the line's last commit, which is then returned. `excluded` are canonical
    /// paths left out besides what the walk leaves out (the user's deny rules, Skald's own
    /// data directory when it lies inside the folder).
    pub fn snapshot(
        &mut self,
        line: &str,
        message: &str,
        limits: &Limits,
        excluded: &[PathBuf],
    ) -> Result<Snapshot> {
        let scan = self.scan(limits, excluded)?;
        self.commit_scan(line, message, scan)
    }

    /// As [`snapshot`](Self::snapshot), with what `live` remembers of the folder since
    /// the last one this process took: where the kernel can say which directories
    /// changed, only those are listed.
    pub fn snapshot_live(
        &mut self,
        live: &mut crate::Live,
        line: &str,
        message: &str,
        limits: &Limits,
        excluded: &[PathBuf],
    ) -> Result<Snapshot> {
        let scan = self.scan_live(live, limits, excluded)?;
        self.commit_scan(line, message, scan)
    }

    /// The commit of `scan` on `line`, or the line's last one when its tree is the same.
    fn commit_scan(&mut self, line: &str, message: &str, scan: Scan) -> Result<Snapshot> {
        let reference = line_ref(line);
        let parent = self
            .repo
            .find_reference(&reference)
            .ok()
            .and_then(|r| r.peel_to_commit().ok());
        let commit = match &parent {
            Some(p) if p.tree_id() == scan.tree => p.id(),
            _ => {
                let tree = self.repo.find_tree(scan.tree)?;
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_secs() as i64)
                    .unwrap_or(0);
                let sig = Signature::new("Skald", "checkpoints@skald", &git2::Time::new(now, 0))?;
                let parents: Vec<&git2::Commit> = parent.iter().collect();
                let id = self
                    .repo
                    .commit(None, &sig, &sig, message, &tree, &parents)?;
                self.repo.reference(&reference, id, true, message)?;
                id
            }
        };
        Ok(Snapshot {
            commit: commit.to_string(),
            tree: scan.tree.to_string(),
            files: scan.files,
            bytes: scan.bytes,
            skipped_large: scan.skipped_large,
            hashed: scan.hashed,
            walked: scan.walked,
        })
    }

    /// Whether `commit` is a checkpoint of this folder.
    pub fn has(&self, commit: &str) -> bool {
        self.commit(commit).is_ok()
    }

    pub(crate) fn commit(&self, id: &str) -> Result<git2::Commit<'_>> {
        Oid::from_str(id)
            .ok()
            .and_then(|oid| self.repo.find_commit(oid).ok())
            .ok_or_else(|| CheckpointError::Unknown(id.to_string()))
    }

    /// Walks the folder into the index and writes the tree: files whose stat data matches
    /// the index are not read.
    pub(crate) fn scan(&mut self, limits: &Limits, excluded: &[PathBuf]) -> Result<Scan> {
        self.scan_keeping(limits, excluded, false)
            .map(|(scan, _)| scan)
    }

    /// As `scan`, and with `keep` also the index's entries as the scan left them.
    pub(crate) fn scan_keeping(
        &mut self,
        limits: &Limits,
        excluded: &[PathBuf],
        keep: bool,
    ) -> Result<(Scan, Option<Entries>)> {
        let index_path = self.dir.join(INDEX_FILE);
        let mut index = Index::open(&index_path)?;
        // Git's "racy" rule: a file changed in the same clock tick as the index was
        // written can have the stat data of its older content, so it is read again.
        let index_written = std::fs::metadata(&index_path)
            .ok()
            .and_then(|m| m.modified().ok())
            .map(stamp);
        let mut excluded = excluded.to_vec();
        excluded.push(self.dir.clone());
        let mut walked = walk(&self.root, &excluded, limits)?;
        // In the index's order, so new entries are appended rather than inserted.
        walked.files.sort_unstable_by(|a, b| a.rel.cmp(&b.rel));
        // One pass over the index instead of a lookup per file.
        let mut known: HashMap<Vec<u8>, IndexEntry> =
            index.iter().map(|e| (e.path.clone(), e)).collect();
        let mut scan = Scan {
            tree: Oid::zero(),
            files: walked.files.len(),
            bytes: walked.bytes,
            skipped_large: walked.skipped_large,
            hashed: 0,
            dirs: walked.dirs,
            walked: true,
        };
        let mut changed = false;
        // What changed, to apply to the last tree instead of writing every tree again.
        let mut updates = git2::build::TreeUpdateBuilder::new();
        // A folder seen for the first time: its blobs go to the store as packs rather than
        // a loose file each (`bulk`).
        let bulk_repo = if known.is_empty() && walked.files.len() >= crate::bulk::FROM_FILES {
            Some(Repository::open_bare(&self.dir)?)
        } else {
            None
        };
        let bulk_odb = match &bulk_repo {
            Some(r) => Some(r.odb()?),
            None => None,
        };
        let mut bulk = match (&bulk_repo, &bulk_odb) {
            (Some(r), Some(o)) => Some(crate::bulk::Bulk::new(r, o)?),
            _ => None,
        };
        for file in walked.files {
            let fresh = entry_for(&file.meta, &file.rel);
            let old = known.remove(&file.rel);
            let unchanged = old.as_ref().is_some_and(|k| {
                same_stat(k, &fresh) && index_written.is_some_and(|w| stamp_of(&fresh) < w)
            });
            if unchanged {
                continue;
            }
            // Through the folder's descriptor: a folder on the way swapped for a link
            // since the walk is refused, so nothing outside is ever recorded.
            let content = self.folder.read(
                &bytes_path(&file.rel),
                file.meta.file_type().is_symlink(),
                limits.max_file_bytes,
            );
            // A file that vanished or became unreadable since the walk saw it is left as
            // the index had it.
            if let Ok(content) = content {
                scan.hashed += 1;
                let mut e = fresh;
                e.id = match &mut bulk {
                    Some(b) => b.blob(&content, &self.repo)?,
                    None => self.repo.blob(&content)?,
                };
                updates.upsert(bytes_path(&file.rel), e.id, file_mode(e.mode));
                // Also a racy file whose content is unchanged is added again: its entry
                // then postdates the index, so it is not read next time.
                index.add(&e)?;
                changed = true;
            }
        }
        // In the store before any tree or the index names them.
        if let Some(b) = bulk.take() {
            b.finish(&self.repo)?;
        }
        // What is left of the index was not found: removed (or now ignored or too large).
        for gone in known.keys() {
            let path = bytes_path(gone);
            index.remove_path(&path)?;
            updates.remove(path);
            changed = true;
        }
        let tree_file = self.dir.join(TREE_FILE);
        let remembered =
            remembered_tree(&tree_file, &index_path).and_then(|t| self.repo.find_tree(t).ok());
        scan.tree = match (changed, remembered) {
            (false, Some(tree)) => tree.id(),
            (true, Some(base)) => {
                // A file where a folder was (or the reverse) is not an update libgit2
                // applies to a tree; the index, which holds the change, writes it whole.
                let tree = match updates.create_updated(&self.repo, &base) {
                    Ok(tree) => tree,
                    Err(_) => index.write_tree_to(&self.repo)?,
                };
                index.write()?;
                remember_tree(&tree_file, &index_path, tree)?;
                tree
            }
            (_, None) => {
                let tree = index.write_tree_to(&self.repo)?;
                index.write()?;
                remember_tree(&tree_file, &index_path, tree)?;
                tree
            }
        };
        let entries = keep.then(|| {
            index
                .iter()
                .map(|e| (e.path.clone(), Entry::of(&e)))
                .collect::<Entries>()
        });
        Ok((scan, entries))
    }
}

/// A folder's files as the index records them, by path.
pub(crate) type Entries = std::collections::BTreeMap<Vec<u8>, Entry>;

/// An index entry without its path: stat data, mode and blob.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    ctime: IndexTime,
    mtime: IndexTime,
    dev: u32,
    ino: u32,
    pub mode: u32,
    uid: u32,
    gid: u32,
    pub file_size: u32,
    pub id: Oid,
}

impl Entry {
    pub fn of(e: &IndexEntry) -> Entry {
        Entry {
            ctime: e.ctime,
            mtime: e.mtime,
            dev: e.dev,
            ino: e.ino,
            mode: e.mode,
            uid: e.uid,
            gid: e.gid,
            file_size: e.file_size,
            id: e.id,
        }
    }

    pub fn index_entry(&self, path: &[u8]) -> IndexEntry {
        IndexEntry {
            ctime: self.ctime,
            mtime: self.mtime,
            dev: self.dev,
            ino: self.ino,
            mode: self.mode,
            uid: self.uid,
            gid: self.gid,
            file_size: self.file_size,
            id: self.id,
            flags: path.len().min(0xfff) as u16,
            flags_extended: 0,
            path: path.to_vec(),
        }
    }

    /// Whether the stat data is the same (the blob aside).
    pub fn same_stat(&self, other: &Entry) -> bool {
        self.mtime == other.mtime
            && self.ctime == other.ctime
            && self.file_size == other.file_size
            && self.ino == other.ino
            && self.mode == other.mode
    }
}

pub(crate) fn file_mode(mode: u32) -> git2::FileMode {
    match mode {
        0o120000 => git2::FileMode::Link,
        0o100755 => git2::FileMode::BlobExecutable,
        _ => git2::FileMode::Blob,
    }
}

/// The index file's identity: its size and modification time.
pub(crate) fn index_stamp(index: &Path) -> Option<String> {
    let meta = std::fs::metadata(index).ok()?;
    let (s, n) = stamp(meta.modified().ok()?);
    Some(format!("{} {s}.{n:09}", meta.len()))
}

/// The tree of the index as last written, if the index is still the one it was written
/// for (a kill between the two writes leaves them apart, and the tree is made again).
fn remembered_tree(tree_file: &Path, index: &Path) -> Option<Oid> {
    let text = std::fs::read_to_string(tree_file).ok()?;
    let (tree, stamp) = text.trim().split_once(' ')?;
    (Some(stamp) == index_stamp(index).as_deref())
        .then(|| Oid::from_str(tree).ok())
        .flatten()
}

pub(crate) fn remember_tree(tree_file: &Path, index: &Path, tree: Oid) -> Result<()> {
    let Some(stamp) = index_stamp(index) else {
        return Ok(());
    };
    skald_base::atomic::write_atomic(tree_file, format!("{tree} {stamp}").as_bytes())
        .map(|_| ())
        .map_err(|e| CheckpointError::Io {
            action: "write",
            path: tree_file.to_path_buf(),
            reason: e.to_string(),
        })
}

/// Files a walker thread found, handed to the shared list in batches and when the thread
/// ends (the walker drops its visitor then).
struct Batch<'a> {
    mine: Vec<Found>,
    into: &'a Mutex<Vec<Found>>,
}

impl Batch<'_> {
    fn push(&mut self, f: Found) {
        self.mine.push(f);
        if self.mine.len() >= 256 {
            lock(self.into).append(&mut self.mine);
        }
    }
}

impl Drop for Batch<'_> {
    fn drop(&mut self) {
        lock(self.into).append(&mut self.mine);
    }
}

/// A file the walk found, with its stat data.
struct Found {
    rel: Vec<u8>,
    meta: std::fs::Metadata,
}

struct Walked {
    files: Vec<Found>,
    dirs: Vec<PathBuf>,
    bytes: u64,
    skipped_large: Vec<(String, u64)>,
}

/// The folder's files and their stat data, on every core (the stat calls are most of an
/// unchanged folder's checkpoint). Stops as soon as a limit is passed.
fn walk(root: &Path, excluded: &[PathBuf], limits: &Limits) -> Result<Walked> {
    let files = AtomicUsize::new(0);
    let bytes = AtomicU64::new(0);
    let over: Mutex<Option<CheckpointError>> = Mutex::new(None);
    let found: Mutex<Vec<Found>> = Mutex::new(Vec::new());
    let dirs: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
    let large: Mutex<Vec<(String, u64)>> = Mutex::new(Vec::new());
    skald_base::walk::walker(root, excluded)
        .run_parallel(|| {
            let (large, over, files, bytes, dirs) = (&large, &over, &files, &bytes, &dirs);
            let mut mine = Batch {
                mine: Vec::new(),
                into: &found,
            };
            move |entry: skald_base::walk::Entry| {
                let kind = entry.kind();
                if kind == Kind::Dir {
                    lock(dirs).push(entry.into_path());
                    return Flow::Continue;
                }
                if entry.depth() == 0 || !matches!(kind, Kind::File | Kind::Symlink) {
                    return Flow::Continue;
                }
                // Stat data from the folder's descriptor, as the walk listed it: by path, a
                // folder swapped for a link since would count an outside file's size.
                let (Ok(rel), Ok(meta)) = (entry.path().strip_prefix(root), entry.metadata())
                else {
                    return Flow::Continue;
                };
                let rel = path_bytes(rel);
                if meta.len() > limits.max_file_bytes {
                    lock(large).push((String::from_utf8_lossy(&rel).into_owned(), meta.len()));
                    return Flow::Continue;
                }
                let n = files.fetch_add(1, Ordering::Relaxed) + 1;
                let b = bytes.fetch_add(meta.len(), Ordering::Relaxed) + meta.len();
                let too_large = if n > limits.max_files {
                    Some(CheckpointError::TooLarge {
                        limit: limits.max_files.to_string(),
                        what: "files",
                        setting: "max_files",
                    })
                } else if b > limits.max_bytes {
                    Some(CheckpointError::TooLarge {
                        limit: format!("{} MiB", limits.max_bytes >> 20),
                        what: "of files",
                        setting: "max_mib",
                    })
                } else {
                    None
                };
                if let Some(e) = too_large {
                    lock(over).get_or_insert(e);
                    return Flow::Quit;
                }
                mine.push(Found { rel, meta });
                Flow::Continue
            }
        })
        .map_err(|e| CheckpointError::io("walk", root, &e))?;
    if let Some(e) = lock(&over).take() {
        return Err(e);
    }
    let mut dirs = std::mem::take(&mut *lock(&dirs));
    dirs.sort_unstable();
    Ok(Walked {
        files: std::mem::take(&mut *lock(&found)),
        dirs,
        bytes: bytes.into_inner(),
        skipped_large: std::mem::take(&mut *lock(&large)),
    })
}

/// We hold the lock, so a lock file libgit2 left (the index's, a ref's) is from a process
/// that was killed while writing it; what it guarded was replaced atomically or not at all.
fn remove_stale_locks(dir: &Path) {
    let _ = std::fs::remove_file(dir.join(format!("{INDEX_FILE}.lock")));
    let _ = std::fs::remove_file(dir.join("packed-refs.lock"));
    let _ = std::fs::remove_file(dir.join("HEAD.lock"));
    let refs = dir.join("refs").join("skald");
    for entry in std::fs::read_dir(&refs).into_iter().flatten().flatten() {
        if entry.file_name().to_string_lossy().ends_with(".lock") {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The ref of a line.
fn line_ref(line: &str) -> String {
    let clean: String = line
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("refs/skald/{clean}")
}

/// A stable file name for a folder's shadow repository: its last component (for a person
/// browsing the store) and a hash of its whole path.
fn folder_key(root: &Path) -> String {
    let id = Oid::hash_object(ObjectType::Blob, &path_bytes(root))
        .map(|o| o.to_string())
        .unwrap_or_default();
    let base: String = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .take(32)
        .collect();
    format!("{base}-{}", &id[..16.min(id.len())])
}

fn create_private_dir(dir: &Path) -> Result<()> {
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(0o700);
    }
    b.create(dir)
        .map_err(|e| CheckpointError::io("create", dir, &e))
}

#[cfg(unix)]
fn take_lock(path: &Path, root: &Path) -> Result<nix::fcntl::Flock<std::fs::File>> {
    use nix::fcntl::{Flock, FlockArg};
    let started = Instant::now();
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(|e| CheckpointError::io("open", path, &e))?;
    loop {
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(lock) => return Ok(lock),
            Err((f, nix::errno::Errno::EWOULDBLOCK)) if started.elapsed() < LOCK_WAIT => {
                file = f;
                std::thread::sleep(Duration::from_millis(20));
            }
            Err((_, nix::errno::Errno::EWOULDBLOCK)) => {
                return Err(CheckpointError::Busy(root.to_path_buf()));
            }
            Err((_, e)) => {
                return Err(CheckpointError::io(
                    "lock",
                    path,
                    &std::io::Error::from_raw_os_error(e as i32),
                ));
            }
        }
    }
}

/// A path inside the folder as the index spells it: `/`-separated bytes.
pub(crate) use skald_base::beneath::path_bytes;

pub(crate) fn bytes_path(b: &[u8]) -> PathBuf {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        PathBuf::from(std::ffi::OsStr::from_bytes(b))
    }
    #[cfg(not(unix))]
    {
        PathBuf::from(String::from_utf8_lossy(b).into_owned())
    }
}

/// A timestamp as (seconds, nanoseconds), comparable.
pub(crate) fn stamp(t: std::time::SystemTime) -> (i64, u32) {
    match t.duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => (d.as_secs() as i64, d.subsec_nanos()),
        Err(_) => (0, 0),
    }
}

pub(crate) fn stamp_of(e: &IndexEntry) -> (i64, u32) {
    (i64::from(e.mtime.seconds()), e.mtime.nanoseconds())
}

pub(crate) fn same_stat(a: &IndexEntry, b: &IndexEntry) -> bool {
    a.mtime == b.mtime
        && a.ctime == b.ctime
        && a.file_size == b.file_size
        && a.ino == b.ino
        && a.mode == b.mode
}

/// An index entry with the stat data of `meta`; its id is filled in once hashed.
pub(crate) fn entry_for(meta: &std::fs::Metadata, path: &[u8]) -> IndexEntry {
    let mode = if meta.file_type().is_symlink() {
        0o120000
    } else if is_executable(meta) {
        0o100755
    } else {
        0o100644
    };
    #[cfg(unix)]
    let (ctime, mtime, dev, ino, uid, gid) = {
        use std::os::unix::fs::MetadataExt;
        (
            IndexTime::new(meta.ctime() as i32, meta.ctime_nsec() as u32),
            IndexTime::new(meta.mtime() as i32, meta.mtime_nsec() as u32),
            meta.dev() as u32,
            meta.ino() as u32,
            meta.uid(),
            meta.gid(),
        )
    };
    #[cfg(not(unix))]
    let (ctime, mtime, dev, ino, uid, gid) = {
        let (s, n) = meta.modified().map(stamp).unwrap_or((0, 0));
        let t = IndexTime::new(s as i32, n);
        (t, t, 0, 0, 0, 0)
    };
    IndexEntry {
        ctime,
        mtime,
        dev,
        ino,
        mode,
        uid,
        gid,
        // Git keeps the low 32 bits; a change of size by a multiple of 4 GiB is still
        // caught by the modification time.
        file_size: meta.len() as u32,
        id: Oid::zero(),
        flags: path.len().min(0xfff) as u16,
        flags_extended: 0,
        path: path.to_vec(),
    }
}

#[cfg(unix)]
fn is_executable(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn is_executable(_meta: &std::fs::Metadata) -> bool {
    false
}
