//! An agent's own copy of a folder (docs/worktrees.md): for a folder in a git repository,
//! a git worktree of that repository on a new branch `skald/<name>`, starting at its
//! `HEAD`; for any other folder, a copy of what a walk of it finds. Either lives outside
//! the folder (in Skald's data directory), so the sandbox can make it the one place the
//! agent may write: the person's folder is out of reach by construction.
//!
//! Git worktrees are made with libgit2 (`git2`, which Skald already links for checkpoints)
//! rather than the `git` CLI: it needs no git installed, and it runs none of the
//! repository's hooks — a folder's `post-checkout` hook is code its author chose, and
//! making a worktree must not run it.

pub mod git;
pub mod review;

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// What a worktree is a copy of, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// A git worktree of `repo` (its main folder) on `branch`, which started at `base`.
    Git {
        repo: PathBuf,
        branch: String,
        base: String,
    },
    /// A copy of the folder's files.
    Copy,
}

/// An agent's copy of a folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Worktree {
    pub name: String,
    /// The person's folder it copies.
    pub source: PathBuf,
    /// The copy's own folder.
    pub root: PathBuf,
    /// Where in it the agent works: the root, or for a folder inside a repository, the
    /// same folder inside the worktree.
    pub working_dir: PathBuf,
    pub kind: Kind,
}

#[derive(Debug, thiserror::Error)]
pub enum WorktreeError {
    #[error(
        "`{0}` cannot name a worktree: use 1 to 48 letters, digits, `.`, `_` or `-`, \
         starting with a letter or digit"
    )]
    Name(String),
    #[error("{0} exists already; discard that worktree or choose another name")]
    Exists(String),
    #[error("git: {0}")]
    Git(#[from] git2::Error),
    #[error("cannot copy {path}: {reason}")]
    Copy { path: PathBuf, reason: String },
    #[error("{0}")]
    Io(String),
}

/// The branch prefix of every worktree Skald makes in a repository.
pub const BRANCH_PREFIX: &str = "skald/";

/// `name` if it can name a worktree: a branch `skald/<name>` git takes and a folder name
/// on every system.
pub fn check_name(name: &str) -> Result<&str, WorktreeError> {
    let ok = !name.is_empty()
        && name.len() <= 48
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        && name.as_bytes()[0].is_ascii_alphanumeric()
        && !name.contains("..")
        && !name.ends_with('.')
        && !name.ends_with(".lock");
    if ok {
        Ok(name)
    } else {
        Err(WorktreeError::Name(name.to_string()))
    }
}

/// Makes a worktree of `source` (absolute, canonical) named `name` at `root` (which must
/// not exist; its parent is created). `excluded` are paths a copy leaves out (the user's
/// deny rules, Skald's data directory when it lies inside the folder).
pub fn create(
    source: &Path,
    root: &Path,
    name: &str,
    excluded: &[PathBuf],
) -> Result<Worktree, WorktreeError> {
    check_name(name)?;
    if root.exists() {
        return Err(WorktreeError::Exists(root.display().to_string()));
    }
    if let Some(parent) = root.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| WorktreeError::Io(format!("cannot make {}: {e}", parent.display())))?;
    }
    if let Some((repo, commit)) = git_base(source)?
        // A repository that tracks what the agent may not read (a home folder kept as a
        // repository, with `.ssh/` in it) is copied instead: a checkout would hand over
        // every tracked file, and the masks name the person's paths, not the worktree's.
        && !tracks_any(&repo, commit, excluded)?
    {
        let made = git_worktree(&repo, commit, source, root, name)?;
        if made.working_dir.is_dir() {
            return Ok(made);
        }
        // The folder holds nothing the repository tracks (a folder of notes in a home
        // folder kept as a dotfiles repository): its files are copied instead.
        discard(&made)?;
    }
    copy_folder(source, root, excluded)?;
    Ok(Worktree {
        name: name.to_string(),
        source: source.to_path_buf(),
        root: root.to_path_buf(),
        working_dir: root.to_path_buf(),
        kind: Kind::Copy,
    })
}

/// The repository `source` is in and its `HEAD` commit, if it is in one with a commit; a
/// bare repository or one with no commit yet is copied like any folder.
fn git_base(source: &Path) -> Result<Option<(git2::Repository, git2::Oid)>, WorktreeError> {
    let Ok(repo) = git2::Repository::discover(source) else {
        return Ok(None);
    };
    if repo.is_bare() || !own_repository(&repo) {
        return Ok(None);
    }
    // The repository's working folder must hold the folder: a `.git` file can name one
    // elsewhere.
    let holds = repo
        .workdir()
        .and_then(|w| std::fs::canonicalize(w).ok())
        .is_some_and(|w| source.starts_with(&w));
    if !holds {
        return Ok(None);
    }
    let commit = match repo.head().and_then(|h| h.peel_to_commit()) {
        Ok(c) => c.id(),
        Err(_) => return Ok(None),
    };
    Ok(Some((repo, commit)))
}

/// Whether `commit`'s tree holds a path under any of `excluded` (canonical paths, read
/// against the repository's working folder).
fn tracks_any(
    repo: &git2::Repository,
    commit: git2::Oid,
    excluded: &[PathBuf],
) -> Result<bool, WorktreeError> {
    let Some(workdir) = repo.workdir().and_then(|w| std::fs::canonicalize(w).ok()) else {
        return Ok(true);
    };
    let inside: Vec<&Path> = excluded
        .iter()
        .filter(|e| e.starts_with(&workdir) || workdir.starts_with(e))
        .map(PathBuf::as_path)
        .collect();
    if inside.is_empty() {
        return Ok(false);
    }
    let tree = repo.find_commit(commit)?.tree()?;
    let mut hit = false;
    let walked = tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
        let path = workdir.join(dir).join(entry_name(entry.name_bytes()));
        if inside.iter().any(|e| path.starts_with(e)) {
            hit = true;
            return git2::TreeWalkResult::Abort;
        }
        git2::TreeWalkResult::Ok
    });
    match walked {
        Ok(()) => Ok(hit),
        // Stopped at the first hit.
        Err(_) if hit => Ok(true),
        Err(e) => Err(e.into()),
    }
}

#[cfg(unix)]
fn entry_name(bytes: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    PathBuf::from(std::ffi::OsStr::from_bytes(bytes))
}

#[cfg(not(unix))]
fn entry_name(bytes: &[u8]) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(bytes).into_owned())
}

/// Whether `repo` is the folder's own: a `.git` folder in its working folder, or a
/// linked worktree's (its `.git` file naming `<repository>/.git/worktrees/<name>`). A
/// `.git` file in a folder can name any repository on the machine; following one that
/// names another project would make the agent's worktree of that project.
fn own_repository(repo: &git2::Repository) -> bool {
    let canon = |p: &Path| std::fs::canonicalize(p).ok();
    let (Some(git), Some(workdir)) = (canon(repo.path()), repo.workdir().and_then(canon)) else {
        return false;
    };
    if git == workdir.join(".git") {
        return true;
    }
    repo.is_worktree()
        && canon(repo.commondir())
            .is_some_and(|common| git.parent() == Some(&common.join("worktrees")))
}

fn git_worktree(
    repo: &git2::Repository,
    commit: git2::Oid,
    source: &Path,
    root: &Path,
    name: &str,
) -> Result<Worktree, WorktreeError> {
    let workdir = repo
        .workdir()
        .ok_or_else(|| WorktreeError::Io("the repository has no folder".into()))?;
    let workdir = std::fs::canonicalize(workdir)
        .map_err(|e| WorktreeError::Io(format!("cannot resolve {}: {e}", workdir.display())))?;
    let branch_name = format!("{BRANCH_PREFIX}{name}");
    let admin = admin_name(name);
    if repo.find_worktree(&admin).is_ok() {
        return Err(WorktreeError::Exists(format!("the worktree {admin}")));
    }
    let branch = match repo.branch(&branch_name, &repo.find_commit(commit)?, false) {
        Ok(b) => b,
        Err(e) if e.code() == git2::ErrorCode::Exists => {
            return Err(WorktreeError::Exists(format!("the branch {branch_name}")));
        }
        Err(e) => return Err(e.into()),
    };
    let mut opts = git2::WorktreeAddOptions::new();
    opts.reference(Some(branch.get()));
    if let Err(e) = repo.worktree(&admin, root, Some(&opts)) {
        // Nothing half made is left: the branch goes with the failed worktree.
        let _ = repo
            .find_branch(&branch_name, git2::BranchType::Local)
            .and_then(|mut b| b.delete());
        let _ = std::fs::remove_dir_all(root);
        return Err(e.into());
    }
    let inside = source.strip_prefix(&workdir).unwrap_or(Path::new(""));
    Ok(Worktree {
        name: name.to_string(),
        source: source.to_path_buf(),
        root: root.to_path_buf(),
        working_dir: root.join(inside),
        kind: Kind::Git {
            repo: workdir,
            branch: branch_name,
            base: commit.to_string(),
        },
    })
}

/// The name of a worktree's folder in the repository's `.git/worktrees`.
fn admin_name(name: &str) -> String {
    format!("skald-{name}")
}

/// How many files a copy made and their bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Copied {
    pub files: u64,
    pub bytes: u64,
}

/// Copies what a walk of `source` finds, on every core (skald_base::walk: hidden files, `.gitignore`
/// honoured, never `.git`, `node_modules`, `target` or `secrets`) into `root`, which is
/// made. Files are read from their folders' descriptors refusing links (the folder may be
/// changing under a command left running); links are made again as they are, so one that
/// points out of the folder still does, and the sandbox judges a write through it by where
/// it lands. Contents go through `std::io::copy`, which the kernel clones (reflinks) where
/// the file system can.
pub fn copy_folder(
    source: &Path,
    root: &Path,
    excluded: &[PathBuf],
) -> Result<Copied, WorktreeError> {
    std::fs::create_dir(root)
        .map_err(|e| WorktreeError::Io(format!("cannot make {}: {e}", root.display())))?;
    // Making files is the kernel's work, a folder at a time: every core takes folders.
    let files = AtomicU64::new(0);
    let bytes = AtomicU64::new(0);
    let failure: Mutex<Option<WorktreeError>> = Mutex::new(None);
    let walk = skald_base::walk::walker(source, excluded);
    let ran = walk.run_parallel(|| {
        |entry: skald_base::walk::Entry| {
            let Ok(rel) = entry.path().strip_prefix(source) else {
                return skald_base::walk::Flow::Continue;
            };
            if rel.as_os_str().is_empty() {
                return skald_base::walk::Flow::Continue;
            }
            let to = root.join(rel);
            match copy_entry(&entry, &to) {
                Ok(n) => {
                    if entry.is_file() {
                        files.fetch_add(1, Ordering::Relaxed);
                        bytes.fetch_add(n, Ordering::Relaxed);
                    }
                    skald_base::walk::Flow::Continue
                }
                Err(reason) => {
                    skald_base::lock(&failure).get_or_insert(WorktreeError::Copy {
                        path: entry.path().to_path_buf(),
                        reason,
                    });
                    skald_base::walk::Flow::Quit
                }
            }
        }
    });
    let copied = Copied {
        files: files.into_inner(),
        bytes: bytes.into_inner(),
    };
    let failure = failure.into_inner().unwrap_or_else(|p| p.into_inner());
    let failed = match (ran, failure) {
        (_, Some(f)) => Some(f),
        (Err(e), None) => Some(WorktreeError::Io(format!(
            "cannot walk {}: {e}",
            source.display()
        ))),
        (Ok(()), None) => None,
    };
    match failed {
        Some(e) => {
            // Never half a copy.
            let _ = std::fs::remove_dir_all(root);
            Err(e)
        }
        None => Ok(copied),
    }
}

/// Copies one entry to `to`, returning the bytes of a file.
fn copy_entry(entry: &skald_base::walk::Entry, to: &Path) -> Result<u64, String> {
    use skald_base::walk::Kind as K;
    let reason = skald_base::io_reason;
    match entry.kind() {
        K::Dir => std::fs::create_dir(to).map(|_| 0).map_err(|e| reason(&e)),
        K::File => {
            let mut from = entry.open().map_err(|e| reason(&e))?;
            let meta = from.metadata().map_err(|e| reason(&e))?;
            if !meta.is_file() {
                // Swapped for something else since it was listed: left out.
                return Ok(0);
            }
            let mut out = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(to)
                .map_err(|e| reason(&e))?;
            let bytes = copy_contents(&mut from, &mut out, &meta).map_err(|e| reason(&e))?;
            out.set_permissions(meta.permissions())
                .map_err(|e| reason(&e))?;
            Ok(bytes)
        }
        K::Symlink => {
            let target = entry.read_link().map_err(|e| reason(&e))?;
            symlink(&target, to).map(|_| 0).map_err(|e| reason(&e))
        }
        // FIFOs, sockets and devices are not files to work on.
        K::Other => Ok(0),
    }
}

/// A file's contents: a sparse one (a disk image, a preallocated database) only its data,
/// its holes left holes — written out they could fill the disk; any other through
/// `std::io::copy`, which the kernel clones where it can.
#[cfg(target_os = "linux")]
fn copy_contents(
    from: &mut std::fs::File,
    to: &mut std::fs::File,
    meta: &std::fs::Metadata,
) -> std::io::Result<u64> {
    use nix::unistd::{Whence, lseek};
    use std::io::{Read, Seek, SeekFrom};
    use std::os::unix::fs::MetadataExt;
    let len = meta.len();
    if meta.blocks().saturating_mul(512) >= len {
        return std::io::copy(from, to);
    }
    let mut pos: i64 = 0;
    let end = i64::try_from(len).unwrap_or(i64::MAX);
    let mut copied = 0u64;
    while pos < end {
        let data = match lseek(&*from, pos, Whence::SeekData) {
            Ok(d) => d,
            // No data after `pos`: the rest is a hole.
            Err(nix::errno::Errno::ENXIO) => break,
            Err(e) => return Err(e.into()),
        };
        let hole = lseek(&*from, data, Whence::SeekHole).map_err(std::io::Error::from)?;
        let at = u64::try_from(data).unwrap_or(0);
        from.seek(SeekFrom::Start(at))?;
        to.seek(SeekFrom::Start(at))?;
        let n = u64::try_from(hole - data).unwrap_or(0);
        copied += std::io::copy(&mut Read::by_ref(from).take(n), to)?;
        pos = hole;
    }
    to.set_len(len)?;
    Ok(copied)
}

#[cfg(not(target_os = "linux"))]
fn copy_contents(
    from: &mut std::fs::File,
    to: &mut std::fs::File,
    _meta: &std::fs::Metadata,
) -> std::io::Result<u64> {
    std::io::copy(from, to)
}

#[cfg(unix)]
fn symlink(target: &Path, link: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

#[cfg(not(unix))]
fn symlink(_target: &Path, _link: &Path) -> std::io::Result<()> {
    // Links need privileges on Windows; a copy goes without them.
    Ok(())
}

/// Removes a worktree: its folder, and for a git worktree its entry in the repository and
/// its branch. What is already gone is not an error (a worktree whose folder someone
/// deleted is discarded all the same).
pub fn discard(w: &Worktree) -> Result<(), WorktreeError> {
    // Rust's remove_dir_all never follows a link out of the folder.
    match std::fs::remove_dir_all(&w.root) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => {
            return Err(WorktreeError::Io(format!(
                "cannot remove {}: {e}",
                w.root.display()
            )));
        }
    }
    if let Kind::Git { repo, branch, .. } = &w.kind {
        let repo = git2::Repository::open(repo)?;
        if let Ok(wt) = repo.find_worktree(&admin_name(&w.name)) {
            let mut opts = git2::WorktreePruneOptions::new();
            opts.valid(true).working_tree(false);
            wt.prune(Some(&mut opts))?;
        }
        if let Ok(mut b) = repo.find_branch(branch, git2::BranchType::Local) {
            b.delete()?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod edge_tests;
