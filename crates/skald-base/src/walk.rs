//! The one directory walk of every recursive tool, and of checkpoints: what the user
//! ignores (`.gitignore`) and what is noise or secret (`SKIP_DIRS`) is left out the same way
//! wherever a folder is walked.
//!
//! The walk goes through directory descriptors, never through paths (docs/security.md,
//! "Path policy"). A process a sandboxed command left running may swap any folder for a
//! link while Skald walks, so the root is opened with no link on its path
//! (`beneath::open_dir_exact`), every folder below is opened inside the one before with
//! `O_NOFOLLOW` and listed from its own descriptor, and every ignore file is read from its
//! folder's descriptor, refusing links, FIFOs and devices and reading at most
//! `MAX_IGNORE_FILE` bytes. Whatever the race, no name from outside the folder is listed,
//! and no file outside it (nor `/dev/zero`, nor a FIFO no one writes) is read as ignore
//! rules. `Entry::open` opens a found file the same way.
//!
//! The rules match the `ignore` crate's walk, whose matchers this uses (hidden files
//! included, `.gitignore` respected also outside git repositories, `.ignore` above
//! `.gitignore` above `.git/info/exclude` above the user's global excludes file, the
//! deepest folder's rule winning within each, and the ignore files of the folders above
//! the root applying too). One difference: a `.git` that is a file (a worktree's or a
//! submodule's) names a folder elsewhere, whose `info/exclude` is not read.

use cap_fs_ext::{DirExt, FollowSymlinks, OpenOptionsFollowExt};
use cap_std::fs::{Dir, OpenOptions};
use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::overrides::Override;
use std::ffi::{OsStr, OsString};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};

/// Names recursive tools never enter or list: noise (`.git`, `node_modules`, `target`) and
/// the user's `secrets` (docs/security.md, "1. Hostile model output"). Whatever the entry
/// is, as ripgrep's `-g '!NAME'` leaves it out: a `.git` that is a file (a git worktree's
/// or a submodule's pointer to its repository) is git's, not the folder's.
pub const SKIP_DIRS: &[&str] = &[".git", "node_modules", "target", "secrets"];

/// The most of one ignore file that is read; ignore files are a few kilobytes, and one
/// that is a link to `/dev/zero` must not fill the memory.
pub const MAX_IGNORE_FILE: u64 = 1 << 20;

/// The most threads a parallel walk uses, as the `ignore` crate does.
const MAX_THREADS: usize = 12;

/// Folders below the root a walk enters at most. Each level holds a descriptor open and
/// adds to the rules every name is matched against, so a tree nested thousands deep
/// (cheap to make) would otherwise use up the process's descriptors or take minutes; real
/// projects are a few dozen deep.
pub const MAX_WALK_DEPTH: usize = 256;

/// Ignore rules one walk reads at most, across all its ignore files, and the longest
/// rule it reads. Each rule becomes a compiled pattern; a megabyte of wildcard rules
/// linked into every folder could otherwise take gigabytes. Real projects have at most a
/// few thousand rules; past the budget, rules are not read and what they would leave out
/// is walked.
pub const MAX_RULES_PER_WALK: usize = 10_000;
const MAX_RULE_BYTES: usize = 4096;

/// What the walk does after an entry was visited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Go on, into the entry if it is a folder.
    Continue,
    /// Go on, but not into this folder.
    Skip,
    /// Stop the whole walk.
    Quit,
}

/// What an entry is, as its folder lists it; a link is never followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Dir,
    File,
    Symlink,
    /// A FIFO, socket or device.
    Other,
}

/// One thing the walk found: its path (the root as given, joined with the names below
/// it), and the descriptor of the folder that listed it, from which it is opened.
pub struct Entry {
    path: PathBuf,
    depth: usize,
    kind: Kind,
    parent: Arc<Dir>,
    /// Its name in `parent`; `.` for the root, which is its own parent.
    name: OsString,
}

impl Entry {
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn into_path(self) -> PathBuf {
        self.path
    }

    /// 0 for the root, 1 for what it holds, and so on.
    pub fn depth(&self) -> usize {
        self.depth
    }

    pub fn kind(&self) -> Kind {
        self.kind
    }

    pub fn is_dir(&self) -> bool {
        self.kind == Kind::Dir
    }

    pub fn is_file(&self) -> bool {
        self.kind == Kind::File
    }

    /// The entry's own name (the root's last component for the root).
    pub fn file_name(&self) -> &OsStr {
        if self.depth == 0 {
            self.path.file_name().unwrap_or(self.path.as_os_str())
        } else {
            &self.name
        }
    }

    /// The entry's own metadata (a link's, not its target's), read from its folder's
    /// descriptor, so a folder on its path swapped for a link since does not lead the
    /// look elsewhere.
    pub fn metadata(&self) -> io::Result<std::fs::Metadata> {
        #[cfg(target_os = "linux")]
        {
            use rustix::fs::{Mode, OFlags, openat};
            let fd = openat(
                &*self.parent,
                self.name.as_os_str(),
                OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            )?;
            std::fs::File::from(fd).metadata()
        }
        // Elsewhere by path: the race is Linux's concern (the sandbox is Linux only).
        #[cfg(not(target_os = "linux"))]
        {
            self.path.symlink_metadata()
        }
    }

    /// Opens the entry for reading from its folder's descriptor, refusing a link; a FIFO
    /// swapped in opens without waiting for a writer, and the caller looks at what kind of
    /// file it got.
    pub fn open(&self) -> io::Result<std::fs::File> {
        open_in(&self.parent, &self.name)
    }

    /// What a link found by the walk points to, read from its folder's descriptor.
    pub fn read_link(&self) -> io::Result<PathBuf> {
        self.parent.read_link_contents(&self.name)
    }
}

/// A walk of `root` (absolute, with no link on its path: a path the gate checked, or a
/// chat's stored folder), leaving out `SKIP_DIRS`, ignored files and `excluded`.
pub struct Walk {
    root: PathBuf,
    /// `excluded` below the root, relative to it.
    skipped: Vec<PathBuf>,
    max_depth: Option<usize>,
    only: Option<Override>,
}

/// A walker as every recursive tool makes it: hidden files included, .gitignore respected
/// (also outside git repositories), `SKIP_DIRS` never entered, and the scope's `excluded`
/// paths (the user's deny rules, canonical) skipped.
pub fn walker(root: &Path, excluded: &[PathBuf]) -> Walk {
    let skipped = excluded
        .iter()
        .filter_map(|x| x.strip_prefix(root).ok())
        .filter(|rel| !rel.as_os_str().is_empty())
        .map(Path::to_path_buf)
        .collect();
    Walk {
        root: root.to_path_buf(),
        skipped,
        max_depth: None,
        only: None,
    }
}

/// The rules of one folder's ignore files, and of the folders above it.
struct Rules {
    dot_ignore: Option<Gitignore>,
    gitignore: Option<Gitignore>,
    exclude: Option<Gitignore>,
    parent: Option<Arc<Rules>>,
}

/// What every folder of one walk shares.
struct Shared {
    root: PathBuf,
    skipped: Vec<PathBuf>,
    max_depth: Option<usize>,
    only: Option<Override>,
    global: Gitignore,
    /// Ignore rules this walk may still read (`MAX_RULES_PER_WALK`).
    rule_budget: AtomicUsize,
}

impl Shared {
    /// Whether the walk goes into a folder found at `depth`.
    fn enters(&self, depth: usize) -> bool {
        depth < MAX_WALK_DEPTH && self.max_depth.is_none_or(|d| depth < d)
    }
}

/// A folder still to be listed: its descriptor's folder and name, so that only the
/// folders being listed are open (a pending one holds its parent, not itself).
struct Job {
    parent: Arc<Dir>,
    name: OsString,
    path: PathBuf,
    rel: PathBuf,
    depth: usize,
    rules: Arc<Rules>,
}

impl Walk {
    /// Entries deeper than `depth` are not visited (the root is depth 0).
    pub fn max_depth(mut self, depth: Option<usize>) -> Walk {
        self.max_depth = depth;
        self
    }

    /// Only files these globs take are visited (a glob names files, as ripgrep's `-g`);
    /// a file they take is visited even when an ignore file leaves it out.
    pub fn only(mut self, globs: Override) -> Walk {
        self.only = Some(globs);
        self
    }

    /// Visits the root and everything below it on this thread, depth first, each folder's
    /// entries in the order of their names.
    pub fn run(self, mut visit: impl FnMut(Entry) -> Flow) -> io::Result<()> {
        let Some((shared, root, rules)) = self.begin(&mut visit)? else {
            return Ok(());
        };
        let mut stack = vec![Listing::read(
            &shared,
            root,
            &shared.root,
            Path::new(""),
            0,
            rules,
        )];
        while let Some(top) = stack.last_mut() {
            let Some(found) = top.entries.pop() else {
                stack.pop();
                continue;
            };
            let (dir, rules, depth) = (top.dir.clone(), top.rules.clone(), top.depth + 1);
            let path = top.path.join(&found.name);
            let rel = top.rel.join(&found.name);
            let entry = Entry {
                path: path.clone(),
                depth,
                kind: found.kind,
                parent: dir.clone(),
                name: found.name.clone(),
            };
            match visit(entry) {
                Flow::Quit => return Ok(()),
                Flow::Skip => continue,
                Flow::Continue => {}
            }
            if found.kind == Kind::Dir && shared.enters(depth) {
                // A folder swapped for a link (or removed) since it was listed is left out;
                // running out of descriptors ends the walk, which would otherwise miss
                // everything below without a word.
                match dir.open_dir_nofollow(&found.name) {
                    Ok(sub) => stack.push(Listing::read(
                        &shared,
                        Arc::new(sub),
                        &path,
                        &rel,
                        depth,
                        rules,
                    )),
                    Err(e) if out_of_descriptors(&e) => return Err(e),
                    Err(_) => {}
                }
            }
        }
        Ok(())
    }

    /// Visits the root and everything below it on every core, in no particular order;
    /// `make` gives each thread its own visitor.
    pub fn run_parallel<M, F>(self, make: M) -> io::Result<()>
    where
        M: Fn() -> F + Sync,
        F: FnMut(Entry) -> Flow + Send,
    {
        let Some((shared, root, rules)) = self.begin(&mut make())? else {
            return Ok(());
        };
        let queue = Queue {
            state: Mutex::new(QueueState {
                jobs: Vec::new(),
                // The root's listing, which the first thread is given.
                busy: 1,
            }),
            ready: Condvar::new(),
            quit: AtomicBool::new(false),
            error: Mutex::new(None),
        };
        let first = Listing::read(&shared, root, &shared.root, Path::new(""), 0, rules);
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(MAX_THREADS);
        // A visitor that panics ends the walk (`EndOnPanic`); the scope then passes the
        // panic on, to the tool's own catch.
        std::thread::scope(|s| {
            let (queue, shared, make) = (&queue, &shared, &make);
            let mut first = Some(first);
            for _ in 0..threads {
                let mine = first.take();
                s.spawn(move || {
                    let _end = EndOnPanic(queue);
                    worker(queue, shared, make(), mine)
                });
            }
        });
        match crate::lock(&queue.error).take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Opens the root and visits it: the folder left to walk below it, or None when the
    /// walk is over already (a root that is a file, a visitor that skips or quits, a depth
    /// of 0).
    fn begin(self, visit: &mut dyn FnMut(Entry) -> Flow) -> io::Result<Option<Begun>> {
        let (shared, root, rules) = match self.start()? {
            Start::Folder(shared, root, rules) => (shared, root, rules),
            Start::File(entry) => {
                visit(entry);
                return Ok(None);
            }
        };
        let root_entry = Entry {
            path: shared.root.clone(),
            depth: 0,
            kind: Kind::Dir,
            parent: root.clone(),
            name: OsString::from("."),
        };
        match visit(root_entry) {
            Flow::Continue if shared.max_depth != Some(0) => Ok(Some((shared, root, rules))),
            _ => Ok(None),
        }
    }

    /// Opens the root exactly and reads the rules of every folder from `/` down to it; a
    /// root that is not a folder is the one entry of the walk, opened from its own folder.
    fn start(self) -> io::Result<Start> {
        let root = match crate::beneath::open_dir_exact(&self.root, false) {
            Ok(root) => root,
            Err(e) if e.raw_os_error() == Some(nix::libc::ENOTDIR) => {
                return Self::file_root(&self.root).ok_or(e).map(Start::File);
            }
            Err(e) => return Err(e),
        };
        let rule_budget = AtomicUsize::new(MAX_RULES_PER_WALK);
        let rules = rules_above(&self.root, &rule_budget);
        let (global, _) = Gitignore::global();
        let shared = Shared {
            root: self.root,
            skipped: self.skipped,
            max_depth: self.max_depth,
            only: self.only,
            global,
            rule_budget,
        };
        Ok(Start::Folder(Box::new(shared), Arc::new(root), rules))
    }

    /// The root as a file (or a FIFO, a device: the caller looks at its kind), from its
    /// folder opened exactly; None when that folder cannot be opened or the root is a
    /// folder after all (replaced since).
    fn file_root(root: &Path) -> Option<Entry> {
        let (parent, name) = (root.parent()?, root.file_name()?);
        let dir = crate::beneath::open_dir_exact(parent, false).ok()?;
        let kind = kind_of(&dir.symlink_metadata(name).ok()?.file_type());
        (kind != Kind::Dir).then(|| Entry {
            path: root.to_path_buf(),
            depth: 0,
            kind,
            parent: Arc::new(dir),
            name: name.to_os_string(),
        })
    }
}

/// What kind of thing a file type (a link's own, never its target's) is.
fn kind_of(t: &cap_std::fs::FileType) -> Kind {
    if t.is_dir() {
        Kind::Dir
    } else if t.is_file() {
        Kind::File
    } else if t.is_symlink() {
        Kind::Symlink
    } else {
        Kind::Other
    }
}

/// A walk under way: what its folders share, the root's descriptor and the rules above it.
type Begun = (Box<Shared>, Arc<Dir>, Arc<Rules>);

/// How a walk begins: in a folder (the usual case), or at one file.
enum Start {
    Folder(Box<Shared>, Arc<Dir>, Arc<Rules>),
    File(Entry),
}

/// A folder listed: what it holds that the walk visits (in reverse order of names, so
/// that popping gives them in order), and the rules for what is below it.
struct Listing {
    dir: Arc<Dir>,
    path: PathBuf,
    rel: PathBuf,
    depth: usize,
    rules: Arc<Rules>,
    entries: Vec<Found>,
}

struct Found {
    name: OsString,
    kind: Kind,
}

impl Listing {
    /// Lists `dir` (at `path`, `rel` below the root, `depth`) from its descriptor, leaving
    /// out what is skipped or ignored. An unreadable folder lists as empty, as a walk
    /// reports and passes over it.
    fn read(
        shared: &Shared,
        dir: Arc<Dir>,
        path: &Path,
        rel: &Path,
        depth: usize,
        above: Arc<Rules>,
    ) -> Listing {
        let rules = Rules::of(&dir, path, above, &shared.rule_budget);
        let mut entries = Vec::new();
        if let Ok(list) = dir.entries() {
            for e in list.flatten() {
                let name = e.file_name();
                let Ok(kind) = e.file_type().map(|t| kind_of(&t)) else {
                    continue;
                };
                if shared.left_out(&rules, &path.join(&name), &rel.join(&name), kind) {
                    continue;
                }
                entries.push(Found { name, kind });
            }
        }
        entries.sort_unstable_by(|a, b| b.name.cmp(&a.name));
        Listing {
            dir,
            path: path.to_path_buf(),
            rel: rel.to_path_buf(),
            depth,
            rules,
            entries,
        }
    }
}

impl Shared {
    /// Whether the walk leaves out the entry at `path` (`rel` below the root).
    fn left_out(&self, rules: &Rules, path: &Path, rel: &Path, kind: Kind) -> bool {
        let is_dir = kind == Kind::Dir;
        if rel
            .file_name()
            .and_then(OsStr::to_str)
            .is_some_and(|n| SKIP_DIRS.contains(&n))
        {
            return true;
        }
        if self.skipped.iter().any(|x| rel.starts_with(x)) {
            return true;
        }
        // The root as stored is canonical, so `path` is both how the entry is shown and
        // how the rules of the folders above match it.
        if let Some(only) = &self.only {
            match only.matched(path, is_dir) {
                Match::Ignore(_) => return true,
                Match::Whitelist(_) => return false,
                Match::None => {}
            }
        }
        rules
            .ignores(path, is_dir)
            .unwrap_or_else(|| self.global.matched(path, is_dir).is_ignore())
    }
}

impl Rules {
    /// The rules of the folder `dir`, at `path`, below `parent`'s; `parent`'s own when the
    /// folder has no ignore file, so a deep tree does not make a long chain of empty ones.
    fn of(dir: &Dir, path: &Path, parent: Arc<Rules>, budget: &AtomicUsize) -> Arc<Rules> {
        let exclude = dir
            .open_dir_nofollow(".git")
            .and_then(|git| git.open_dir_nofollow("info"))
            .ok()
            .and_then(|info| read_rules(&info, "exclude", path, budget));
        let rules = Rules {
            dot_ignore: read_rules(dir, ".ignore", path, budget),
            gitignore: read_rules(dir, ".gitignore", path, budget),
            exclude,
            parent: Some(parent.clone()),
        };
        if rules.dot_ignore.is_none() && rules.gitignore.is_none() && rules.exclude.is_none() {
            parent
        } else {
            Arc::new(rules)
        }
    }

    /// Whether these rules and those above leave out `path` (`Some(false)`: a rule
    /// takes it back): the first rule that matches, from this folder up, of `.ignore`
    /// files, else of `.gitignore` files, else of `.git/info/exclude`; `None` when none
    /// matches.
    fn ignores(&self, path: &Path, is_dir: bool) -> Option<bool> {
        type Pick = fn(&Rules) -> Option<&Gitignore>;
        let kinds: [Pick; 3] = [
            |r| r.dot_ignore.as_ref(),
            |r| r.gitignore.as_ref(),
            |r| r.exclude.as_ref(),
        ];
        for pick in kinds {
            let mut at = Some(self);
            while let Some(rules) = at {
                if let Some(m) = pick(rules) {
                    match m.matched(path, is_dir) {
                        Match::Ignore(_) => return Some(true),
                        Match::Whitelist(_) => return Some(false),
                        Match::None => {}
                    }
                }
                at = rules.parent.as_deref();
            }
        }
        None
    }
}

/// The rules of every folder from `/` down to `root`'s parent, each read from the one
/// before, so that a `.gitignore` above the walked folder applies as git applies it. A
/// folder that cannot be opened (or is a link) adds no rules.
fn rules_above(root: &Path, budget: &AtomicUsize) -> Arc<Rules> {
    let mut rules = Arc::new(Rules {
        dot_ignore: None,
        gitignore: None,
        exclude: None,
        parent: None,
    });
    let Ok(mut dir) = Dir::open_ambient_dir("/", cap_std::ambient_authority()) else {
        return rules;
    };
    let mut path = PathBuf::from("/");
    let names: Vec<&OsStr> = root
        .parent()
        .into_iter()
        .flat_map(|p| p.components())
        .filter_map(|c| match c {
            std::path::Component::Normal(n) => Some(n),
            _ => None,
        })
        .collect();
    rules = Rules::of(&dir, &path, rules, budget);
    for name in names {
        let Ok(next) = dir.open_dir_nofollow(name) else {
            break;
        };
        dir = next;
        path.push(name);
        rules = Rules::of(&dir, &path, rules, budget);
    }
    rules
}

/// Reads the ignore file `name` in `dir` (at `path`) exactly: a link, a FIFO or a device
/// there adds no rules, only its first `MAX_IGNORE_FILE` bytes are read, and each rule
/// read is taken from the walk's `budget`.
fn read_rules(dir: &Dir, name: &str, path: &Path, budget: &AtomicUsize) -> Option<Gitignore> {
    let file = open_in(dir, OsStr::new(name)).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut text = Vec::new();
    file.take(MAX_IGNORE_FILE).read_to_end(&mut text).ok()?;
    let mut builder = GitignoreBuilder::new(path);
    let text = String::from_utf8_lossy(&text);
    // As git, a byte-order mark before the first rule is not part of it.
    for line in text.trim_start_matches('\u{feff}').lines() {
        if line.trim_end().is_empty() || line.starts_with('#') || line.len() > MAX_RULE_BYTES {
            continue;
        }
        if budget
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
            .is_err()
        {
            break;
        }
        // A rule that does not parse is passed over, as git does.
        let _ = builder.add_line(None, line);
    }
    builder.build().ok().filter(|g| !g.is_empty())
}

/// Opens `name` in `dir` for reading, refusing a link, without waiting on a FIFO and
/// without making a terminal the controlling one.
fn open_in(dir: &Dir, name: &OsStr) -> io::Result<std::fs::File> {
    let mut options = OpenOptions::new();
    options.read(true).follow(FollowSymlinks::No);
    #[cfg(unix)]
    {
        use cap_std::fs::OpenOptionsExt;
        options.custom_flags(
            nix::fcntl::OFlag::O_NONBLOCK.bits() | nix::fcntl::OFlag::O_NOCTTY.bits(),
        );
    }
    Ok(dir.open_with(name, &options)?.into_std())
}

struct Queue {
    state: Mutex<QueueState>,
    ready: Condvar,
    quit: AtomicBool,
    /// Why the walk ended early, if not by a visitor's `Quit`.
    error: Mutex<Option<io::Error>>,
}

/// Ends the walk when its thread panics: the others, waiting for folders the panicking
/// one would have queued, would otherwise wait for ever, and the panic never reach the
/// caller.
struct EndOnPanic<'a>(&'a Queue);

impl Drop for EndOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.quit.store(true, Ordering::Relaxed);
            // Taken so that a thread between its look at `quit` and its wait is waiting
            // before it is woken.
            drop(crate::lock(&self.0.state));
            self.0.ready.notify_all();
        }
    }
}

/// Whether `e` says the process (or the system) has no descriptor left.
fn out_of_descriptors(e: &io::Error) -> bool {
    #[cfg(unix)]
    {
        matches!(
            e.raw_os_error(),
            Some(nix::libc::EMFILE | nix::libc::ENFILE)
        )
    }
    #[cfg(not(unix))]
    {
        let _ = e;
        false
    }
}

struct QueueState {
    /// Last in, first out, so the walk goes deep before wide and few folders are open.
    jobs: Vec<Job>,
    /// Threads listing a folder now, which may add jobs.
    busy: usize,
}

/// One thread of a parallel walk: takes a folder, visits what it holds, queues the
/// folders in it, until no folder is left and no thread can add one, or a visitor quits.
fn worker(
    queue: &Queue,
    shared: &Shared,
    mut visit: impl FnMut(Entry) -> Flow,
    mut first: Option<Listing>,
) {
    loop {
        let listing = match first.take() {
            Some(l) => l,
            None => {
                let Some(job) = next_job(queue) else {
                    return;
                };
                match job.parent.open_dir_nofollow(&job.name) {
                    Ok(dir) => Listing::read(
                        shared,
                        Arc::new(dir),
                        &job.path,
                        &job.rel,
                        job.depth,
                        job.rules,
                    ),
                    // As in `run`: a folder swapped or removed is left out, running out of
                    // descriptors ends the walk with the error.
                    Err(e) => {
                        if out_of_descriptors(&e) {
                            crate::lock(&queue.error).get_or_insert(e);
                            queue.quit.store(true, Ordering::Relaxed);
                        }
                        done_with_job(queue, Vec::new());
                        continue;
                    }
                }
            }
        };
        let mut jobs = Vec::new();
        let depth = listing.depth + 1;
        for found in listing.entries.into_iter().rev() {
            if queue.quit.load(Ordering::Relaxed) {
                break;
            }
            let path = listing.path.join(&found.name);
            let entry = Entry {
                path: path.clone(),
                depth,
                kind: found.kind,
                parent: listing.dir.clone(),
                name: found.name.clone(),
            };
            match visit(entry) {
                Flow::Quit => {
                    queue.quit.store(true, Ordering::Relaxed);
                    break;
                }
                Flow::Skip => continue,
                Flow::Continue => {}
            }
            if found.kind == Kind::Dir && shared.enters(depth) {
                jobs.push(Job {
                    parent: listing.dir.clone(),
                    rel: listing.rel.join(&found.name),
                    name: found.name,
                    path,
                    depth,
                    rules: listing.rules.clone(),
                });
            }
        }
        done_with_job(queue, jobs);
    }
}

/// Waits for a folder to list; `None` once the walk is over. The caller is busy with the
/// job it gets until it calls `done_with_job`.
fn next_job(queue: &Queue) -> Option<Job> {
    let mut state = crate::lock(&queue.state);
    loop {
        if queue.quit.load(Ordering::Relaxed) {
            return None;
        }
        if let Some(job) = state.jobs.pop() {
            state.busy += 1;
            return Some(job);
        }
        if state.busy == 0 {
            return None;
        }
        state = queue.ready.wait(state).unwrap_or_else(|p| p.into_inner());
    }
}

/// Queues the folders a listing found and marks its thread idle; wakes the others.
fn done_with_job(queue: &Queue, jobs: Vec<Job>) {
    let mut state = crate::lock(&queue.state);
    state.jobs.extend(jobs.into_iter().rev());
    state.busy = state.busy.saturating_sub(1);
    drop(state);
    queue.ready.notify_all();
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use super::*;
    use std::fs;

    fn write(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }

    /// What the walk visits, relative to the root, in its order.
    fn walked(root: &Path, excluded: &[PathBuf], depth: Option<usize>) -> Vec<String> {
        let mut seen = Vec::new();
        walker(root, excluded)
            .max_depth(depth)
            .run(|e| {
                if e.depth() > 0 {
                    let rel = e.path().strip_prefix(root).unwrap();
                    seen.push(rel.to_string_lossy().into_owned());
                }
                Flow::Continue
            })
            .unwrap();
        seen
    }

    /// What the `ignore` crate's walk, set up as this one was before it walked through
    /// descriptors, visits.
    fn reference(root: &Path, excluded: &[PathBuf], depth: Option<usize>) -> Vec<String> {
        let skipped: Vec<PathBuf> = excluded
            .iter()
            .filter_map(|x| x.strip_prefix(root).ok())
            .map(|r| root.join(r))
            .collect();
        let mut b = ignore::WalkBuilder::new(root);
        b.hidden(false)
            .require_git(false)
            .max_depth(depth)
            .sort_by_file_path(|a, b| a.cmp(b))
            .filter_entry(move |e| {
                let noise = e.depth() > 0
                    && e.file_name()
                        .to_str()
                        .is_some_and(|n| SKIP_DIRS.contains(&n));
                !noise && !skipped.iter().any(|x| e.path().starts_with(x))
            });
        b.build()
            .flatten()
            .filter(|e| e.depth() > 0)
            .map(|e| {
                let rel = e.path().strip_prefix(root).unwrap();
                rel.to_string_lossy().into_owned()
            })
            .collect()
    }

    /// A tree with every kind of rule: nested `.gitignore`s taking names back, `.ignore`
    /// over `.gitignore`, `.git/info/exclude`, a rule in the folder above the root, the
    /// noise folders, a deny rule's exclusion, and links that are listed, not followed.
    fn tree() -> (tempfile::TempDir, PathBuf) {
        let top = tempfile::tempdir().unwrap();
        let top_path = fs::canonicalize(top.path()).unwrap();
        write(&top_path, ".gitignore", "*.above\n");
        let root = top_path.join("root");
        for rel in [
            "a.rs",
            "b.log",
            "keep.log",
            "x.above",
            "src/main.rs",
            "src/gen/out.rs",
            "src/deep/er/est.txt",
            "src/deep/er/drop.tmp",
            "docs/readme.md",
            "docs/build/index.html",
            "docs/build/keep.html",
            "local/only-here.txt",
            "excluded/secret.txt",
            "node_modules/x.js",
            "target/debug/y",
            "secrets/key",
            ".git/HEAD",
            ".hidden/file",
            "by-ignore.txt",
            "back-by-ignore.log",
        ] {
            write(&root, rel, "x\n");
        }
        write(
            &root,
            ".gitignore",
            "*.log\n!keep.log\nby-ignore.txt\n/local/\n",
        );
        write(&root, ".ignore", "!back-by-ignore.log\n");
        write(&root, "src/.gitignore", "gen/\n**/*.tmp\n");
        write(&root, "docs/.gitignore", "build/*\n!build/keep.html\n");
        write(&root, ".git/info/exclude", "*.md\n");
        std::os::unix::fs::symlink(&top_path, root.join("up")).unwrap();
        std::os::unix::fs::symlink("src/main.rs", root.join("link.rs")).unwrap();
        (top, root)
    }

    #[test]
    fn it_visits_what_the_ignore_crates_walk_visits_in_the_same_order() {
        let (_top, root) = tree();
        let excluded = [root.join("excluded")];
        for depth in [None, Some(1), Some(2), Some(3)] {
            let ours = walked(&root, &excluded, depth);
            assert_eq!(ours, reference(&root, &excluded, depth), "depth {depth:?}");
        }
        let all = walked(&root, &excluded, None);
        for gone in [
            "b.log",
            "x.above",
            "src/gen",
            "docs/readme.md",
            "local",
            "excluded",
        ] {
            assert!(
                !all.iter().any(|p| p == gone),
                "{gone} was visited: {all:?}"
            );
        }
        for kept in [
            "keep.log",
            "back-by-ignore.log",
            "docs/build/keep.html",
            "up",
            ".hidden/file",
        ] {
            assert!(
                all.iter().any(|p| p == kept),
                "{kept} was left out: {all:?}"
            );
        }
        // A walk from a folder below applies the rules of the folders above it.
        let sub = walked(&root.join("src"), &[], None);
        assert_eq!(sub, reference(&root.join("src"), &[], None));
        assert!(!sub.iter().any(|p| p.ends_with(".tmp")), "{sub:?}");
    }

    #[test]
    fn the_parallel_walk_visits_what_the_ordered_walk_visits() {
        let (_top, root) = tree();
        let excluded = [root.join("excluded")];
        let seen = Mutex::new(Vec::new());
        walker(&root, &excluded)
            .run_parallel(|| {
                let (seen, root) = (&seen, &root);
                move |e: Entry| {
                    if e.depth() > 0 {
                        let rel = e.path().strip_prefix(root).unwrap();
                        crate::lock(seen).push(rel.to_string_lossy().into_owned());
                    }
                    Flow::Continue
                }
            })
            .unwrap();
        let mut parallel = seen.into_inner().unwrap();
        parallel.sort();
        let mut ordered = walked(&root, &excluded, None);
        ordered.sort();
        assert_eq!(parallel, ordered);
    }

    #[test]
    fn a_visitor_skips_a_folder_or_ends_the_walk() {
        let (_top, root) = tree();
        let mut seen = Vec::new();
        walker(&root, &[])
            .run(|e| {
                seen.push(e.path().to_path_buf());
                if e.file_name() == "src" {
                    Flow::Skip
                } else {
                    Flow::Continue
                }
            })
            .unwrap();
        assert!(seen.contains(&root.join("src")));
        assert!(!seen.iter().any(|p| p.starts_with(root.join("src/deep"))));
        let mut n = 0;
        walker(&root, &[])
            .run(|_| {
                n += 1;
                if n == 3 { Flow::Quit } else { Flow::Continue }
            })
            .unwrap();
        assert_eq!(n, 3);
        let n = std::sync::atomic::AtomicUsize::new(0);
        walker(&root, &[])
            .run_parallel(|| {
                let n = &n;
                move |_: Entry| {
                    if n.fetch_add(1, Ordering::Relaxed) >= 2 {
                        Flow::Quit
                    } else {
                        Flow::Continue
                    }
                }
            })
            .unwrap();
        // Each thread stops at its next entry once one has quit.
        assert!(n.into_inner() < 3 + MAX_THREADS);
    }

    #[test]
    fn an_ignore_file_that_is_a_fifo_a_device_or_a_link_adds_no_rules_and_never_blocks() {
        let top = tempfile::tempdir().unwrap();
        let top = fs::canonicalize(top.path()).unwrap();
        let outside = top.join("outside");
        write(&outside, "rules", "*.txt\n");
        let root = top.join("root");
        for (dir, how) in [("fifo", 0), ("zero", 1), ("link", 2), ("big", 3)] {
            write(&root, &format!("{dir}/kept.txt"), "x");
            let at = root.join(dir).join(".gitignore");
            match how {
                0 => nix::unistd::mkfifo(&at, nix::sys::stat::Mode::S_IRWXU).unwrap(),
                1 => std::os::unix::fs::symlink("/dev/zero", &at).unwrap(),
                2 => std::os::unix::fs::symlink(outside.join("rules"), &at).unwrap(),
                // A real file past the cap: its first megabyte of rules apply.
                _ => {
                    let mut text = "other.txt\n".repeat((MAX_IGNORE_FILE as usize) / 10);
                    text.push_str("kept.txt\n");
                    fs::write(&at, text).unwrap();
                }
            }
        }
        // `/dev/zero` itself, as a folder's `.ignore`, is read no more than the cap; a
        // FIFO no one writes would block a plain open forever.
        let seen = walked(&root, &[], None);
        for dir in ["fifo", "zero", "link", "big"] {
            assert!(seen.contains(&format!("{dir}/kept.txt")), "{dir}: {seen:?}");
        }
    }

    #[test]
    fn a_root_that_is_a_file_is_the_walks_one_entry() {
        let top = tempfile::tempdir().unwrap();
        let top = fs::canonicalize(top.path()).unwrap();
        write(&top, "d/f.txt", "text");
        write(&top, "d/.gitignore", "f.txt\n");
        let root = top.join("d/f.txt");
        let mut seen = Vec::new();
        walker(&root, &[])
            .run(|e| {
                let mut text = String::new();
                std::io::Read::read_to_string(&mut e.open().unwrap(), &mut text).unwrap();
                seen.push((e.path().to_path_buf(), e.depth(), e.kind(), text));
                Flow::Continue
            })
            .unwrap();
        // Named, so visited whatever the ignore files say (as the `ignore` crate does).
        assert_eq!(seen, [(root.clone(), 0, Kind::File, "text".to_string())]);
        let visits = std::sync::atomic::AtomicUsize::new(0);
        walker(&root, &[])
            .run_parallel(|| {
                |e: Entry| {
                    assert!(e.is_file() && e.depth() == 0);
                    visits.fetch_add(1, Ordering::Relaxed);
                    Flow::Continue
                }
            })
            .unwrap();
        assert_eq!(visits.load(Ordering::Relaxed), 1);
        // A file reached through a link, or a link to a file, is refused like a folder.
        std::os::unix::fs::symlink(top.join("d"), top.join("dlink")).unwrap();
        std::os::unix::fs::symlink(&root, top.join("flink")).unwrap();
        for root in [top.join("dlink/f.txt"), top.join("flink")] {
            let mut n = 0;
            let outcome = walker(&root, &[]).run(|_| {
                n += 1;
                Flow::Continue
            });
            assert!(outcome.is_err() && n == 0, "{}", root.display());
        }
    }

    /// A visitor that panics on one thread ends the parallel walk and its panic reaches
    /// the caller, instead of leaving the other threads waiting for ever.
    #[test]
    fn a_visitor_that_panics_ends_the_parallel_walk() {
        let top = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(top.path()).unwrap();
        for i in 0..50 {
            write(&root, &format!("d{i}/sub/f.txt"), "x");
        }
        write(&root, "d7/boom", "x");
        let (done, finished) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let outcome = std::panic::catch_unwind(|| {
                walker(&root, &[]).run_parallel(|| {
                    |e: Entry| {
                        assert!(e.file_name() != "boom", "the visitor's own panic");
                        Flow::Continue
                    }
                })
            });
            let _ = done.send(outcome.is_err());
        });
        let panicked = finished
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("the walk never ended after its visitor panicked");
        assert!(panicked, "the panic did not reach the caller");
    }

    /// Folders nested deeper than `MAX_WALK_DEPTH` are listed but not entered, and a
    /// walk reads at most `MAX_RULES_PER_WALK` ignore rules.
    #[test]
    fn a_walk_stops_at_its_depth_and_its_rule_budget() {
        let top = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(top.path()).unwrap();
        let mut deep = root.clone();
        for _ in 0..MAX_WALK_DEPTH + 20 {
            deep.push("n");
        }
        fs::create_dir_all(&deep).unwrap();
        let mut deepest = 0;
        walker(&root, &[])
            .run(|e| {
                deepest = deepest.max(e.depth());
                Flow::Continue
            })
            .unwrap();
        assert_eq!(deepest, MAX_WALK_DEPTH);

        let top = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(top.path()).unwrap();
        let mut rules = String::from("first.txt\n# a comment is no rule\n\n");
        for i in 0..MAX_RULES_PER_WALK {
            rules.push_str(&format!("other{i}.txt\n"));
        }
        rules.push_str("late.txt\n");
        write(&root, ".gitignore", &rules);
        write(&root, "first.txt", "x");
        write(&root, "late.txt", "x");
        let seen = walked(&root, &[], None);
        assert!(!seen.contains(&"first.txt".to_string()), "{seen:?}");
        assert!(seen.contains(&"late.txt".to_string()), "{seen:?}");
    }

    #[test]
    fn a_root_that_is_a_link_or_holds_one_is_refused() {
        let top = tempfile::tempdir().unwrap();
        let top = fs::canonicalize(top.path()).unwrap();
        write(&top, "real/f.txt", "x");
        std::os::unix::fs::symlink(top.join("real"), top.join("link")).unwrap();
        for root in [top.join("link"), top.join("link/.")] {
            let mut n = 0;
            let err = walker(&root, &[])
                .run(|_| {
                    n += 1;
                    Flow::Continue
                })
                .unwrap_err();
            assert_eq!(n, 0, "{}: {err}", root.display());
        }
        assert!(
            walker(Path::new("relative"), &[])
                .run(|_| Flow::Continue)
                .is_err()
        );
    }

    /// A process swaps a folder below the root with a link to a folder outside, as fast
    /// as it can, while the root is walked: no name from outside is ever visited, and no
    /// entry's metadata is an outside file's (the outside folder has files of the same
    /// names, larger).
    #[test]
    #[cfg(target_os = "linux")]
    fn a_folder_swapped_for_a_link_while_it_is_walked_lists_nothing_outside() {
        use rustix::fs::{CWD, RenameFlags, renameat_with};
        let top = tempfile::tempdir().unwrap();
        let top = fs::canonicalize(top.path()).unwrap();
        let root = top.join("root");
        for i in 0..20 {
            write(&root, &format!("d/in{i}.txt"), "x");
            write(&top, &format!("outside/out{i}.txt"), "x");
            write(&top, &format!("outside/in{i}.txt"), &"o".repeat(5000));
        }
        std::os::unix::fs::symlink(top.join("outside"), root.join("l")).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let swapper = {
            let (stop, a, b) = (stop.clone(), root.join("d"), root.join("l"));
            std::thread::spawn(move || {
                let mut swaps = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    if renameat_with(CWD, &a, CWD, &b, RenameFlags::EXCHANGE).is_ok() {
                        swaps += 1;
                    }
                }
                swaps
            })
        };
        let mut listed_inside = 0;
        for round in 0..400 {
            let seen = Mutex::new(Vec::new());
            let visit = |e: Entry| {
                crate::lock(&seen).push(e.file_name().to_string_lossy().into_owned());
                if let Ok(meta) = e.metadata() {
                    assert_ne!(meta.len(), 5000, "{} looked outside", e.path().display());
                }
                Flow::Continue
            };
            if round % 2 == 0 {
                walker(&root, &[]).run(visit).unwrap();
            } else {
                walker(&root, &[]).run_parallel(|| visit).unwrap();
            }
            let seen = seen.into_inner().unwrap();
            assert!(
                !seen.iter().any(|n| n.starts_with("out")),
                "round {round} listed the outside folder: {seen:?}"
            );
            listed_inside += seen.iter().filter(|n| n.starts_with("in")).count();
        }
        stop.store(true, Ordering::Relaxed);
        assert!(swapper.join().unwrap() > 0, "the swap never happened");
        assert!(
            listed_inside > 0,
            "the folder was never walked, so nothing was raced"
        );
    }
}
