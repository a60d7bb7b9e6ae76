//! Reading and changing files inside the folder through directory descriptors, never
//! through paths (docs/checkpoints.md, "Races").
//!
//! A sandboxed command may leave a process running while Skald snapshots or restores the
//! folder, and that process may swap any folder on the way for a link between Skald's
//! look and its act. So every read, write and removal here starts from the descriptor of
//! the folder opened once, and goes down one component at a time with `O_NOFOLLOW`
//! (`openat2` with `RESOLVE_BENEATH` where the kernel has it): a link anywhere on the way
//! is refused rather than followed, and the final name is created, renamed over or
//! unlinked relative to its parent's descriptor (`openat`, `renameat`, `unlinkat`).
//! Whatever the race, nothing outside the folder is read or touched.
//!
//! The file tools use the same walk from `/` for the very path the approval gate checked
//! (`open_file`, `atomic::write_atomic_exact`): that path is canonical, so no link may
//! appear on it, and one swapped in after the check is refused instead of followed.
//!
//! This module, and `atomic::write_atomic_exact` on top of it, are the only ones of ours
//! that name cap-std, the field's library for this.

use cap_fs_ext::{DirExt, FollowSymlinks, OpenOptionsFollowExt};
use cap_std::fs::{Dir, OpenOptions};
use std::ffi::{OsStr, OsString};
use std::io::{self, Read, Write};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A path's bytes as git stores them (`/` separators).
pub fn path_bytes(p: &Path) -> Vec<u8> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        p.as_os_str().as_bytes().to_vec()
    }
    #[cfg(not(unix))]
    {
        p.to_string_lossy().replace('\\', "/").into_bytes()
    }
}

/// The folder a shadow repository records, held open by descriptor.
pub struct Folder {
    root: Dir,
}

/// The folders from the root down to a path's parent, each opened from the one before.
pub struct Parents {
    /// `dirs[0]` is the root; `dirs[i]` is `names[i - 1]` inside `dirs[i - 1]`.
    dirs: Vec<Dir>,
    names: Vec<OsString>,
}

/// Why a path's parent folders could not all be opened.
pub enum Blocked {
    /// This part of the path (relative to the root) is a file or a link, not a folder.
    NotAFolder(PathBuf),
    /// A part is missing (and was not to be made).
    Missing,
    Io(io::Error),
}

impl Folder {
    /// Opens `root`, a canonical path, and makes sure what was opened is the folder at
    /// that path: a process that can write `root`'s parent may swap it (or a folder above
    /// it) for a link between the caller resolving the path and this open, which would
    /// follow the link. Refused as `InvalidData` when the two differ.
    pub fn open(root: &Path) -> io::Result<Folder> {
        #[cfg(unix)]
        let seen = std::fs::symlink_metadata(root)?;
        let dir = Dir::open_ambient_dir(root, cap_std::ambient_authority())?;
        let folder = Folder { root: dir };
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let opened = folder.root.try_clone()?.into_std_file().metadata()?;
            let same = seen.is_dir() && (seen.dev(), seen.ino()) == (opened.dev(), opened.ino());
            // Where the system can say, the folder must also still be at `root` after the
            // open: a folder above it swapped before the check above and back is caught.
            #[cfg(target_os = "linux")]
            let same = same && folder.is_at(root);
            if !same {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "the folder was replaced (by a link or another folder) while it was being opened",
                ));
            }
        }
        Ok(folder)
    }

    /// The root folder, from which an absolute path is walked.
    fn at_root() -> io::Result<Folder> {
        Ok(Folder {
            root: Dir::open_ambient_dir("/", cap_std::ambient_authority())?,
        })
    }

    /// Whether the held folder is at `path` now, as the kernel names its descriptor.
    #[cfg(target_os = "linux")]
    fn is_at(&self, path: &Path) -> bool {
        use std::os::fd::{AsFd, AsRawFd};
        let fd = self.root.as_fd().as_raw_fd();
        std::fs::read_link(format!("/proc/self/fd/{fd}")).is_ok_and(|p| p == path)
    }

    /// Opens the folders on the way to `rel`'s parent, refusing links; with `create`,
    /// missing ones are made.
    pub fn parents(&self, rel: &Path, create: bool) -> Result<Parents, Blocked> {
        match rel.parent() {
            Some(parent) => self.folders(parent, create),
            None => Ok(Parents {
                dirs: vec![self.root.try_clone().map_err(Blocked::Io)?],
                names: Vec::new(),
            }),
        }
    }

    /// Opens every folder of `rel` in turn, from the root down, refusing links; with
    /// `create`, missing ones are made.
    pub fn folders(&self, rel: &Path, create: bool) -> Result<Parents, Blocked> {
        let mut dirs = vec![self.root.try_clone().map_err(Blocked::Io)?];
        let mut names = Vec::new();
        let mut seen = PathBuf::new();
        for c in rel.components() {
            let Component::Normal(name) = c else {
                return Err(Blocked::NotAFolder(seen.join(c)));
            };
            seen.push(name);
            let here = dirs.last().ok_or(Blocked::Missing)?;
            let next = match here.open_dir_nofollow(name) {
                Ok(d) => d,
                Err(e) if e.kind() == io::ErrorKind::NotFound && create => {
                    match here.create_dir(name) {
                        Ok(()) => {}
                        // Made meanwhile by someone else: opened below like any other.
                        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                        Err(e) => return Err(Blocked::Io(e)),
                    }
                    here.open_dir_nofollow(name)
                        .map_err(|_| Blocked::NotAFolder(seen.clone()))?
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(Blocked::Missing),
                // A link (ELOOP) or a file (ENOTDIR), or gone odd meanwhile.
                Err(_) => return Err(Blocked::NotAFolder(seen.clone())),
            };
            dirs.push(next);
            names.push(name.to_os_string());
        }
        Ok(Parents { dirs, names })
    }

    /// The content of the file at `rel` (a regular file of at most `max_bytes`), or the
    /// target of the link there; a link on the way is an error, never followed.
    pub fn read(&self, rel: &Path, link: bool, max_bytes: u64) -> io::Result<Vec<u8>> {
        let parents = self.parents(rel, false).map_err(Blocked::into_io)?;
        let name = file_name(rel)?;
        if link {
            let target = parents.last().read_link_contents(name)?;
            return Ok(path_bytes(&target));
        }
        let mut options = OpenOptions::new();
        options.read(true).follow(FollowSymlinks::No);
        // A file swapped for a FIFO since the walk saw it must not hold the read forever.
        #[cfg(unix)]
        {
            use cap_std::fs::OpenOptionsExt;
            options.custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits());
        }
        let file = parents.last().open_with(name, &options)?;
        // Judged by what was opened: a FIFO or a device swapped in is no file to keep, and
        // one grown past `max_bytes` since it was listed is not read whole.
        if !file.metadata()?.is_file() {
            return Err(io::Error::other("not a regular file"));
        }
        let mut bytes = Vec::new();
        file.take(max_bytes.saturating_add(1))
            .read_to_end(&mut bytes)?;
        if bytes.len() as u64 > max_bytes {
            return Err(io::Error::other("grew past the size limit"));
        }
        Ok(bytes)
    }

    /// Removes the file or link at `rel` (never what a link points to), if its parents are
    /// all real folders.
    pub fn remove_file(&self, rel: &Path) -> io::Result<()> {
        let parents = self.parents(rel, false).map_err(Blocked::into_io)?;
        parents.last().remove_file(file_name(rel)?)
    }
}

impl Blocked {
    pub fn into_io(self) -> io::Error {
        match self {
            Blocked::NotAFolder(p) => io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("{} is a file or a link, not a folder", p.display()),
            ),
            Blocked::Missing => io::Error::from(io::ErrorKind::NotFound),
            Blocked::Io(e) => e,
        }
    }
}

/// What is at a name inside a folder, not following a link.
pub enum Kind {
    Missing,
    Folder,
    Other,
}

impl Parents {
    /// The folder the path's own name is in.
    pub fn last(&self) -> &Dir {
        // `parents` always holds the root first, so this is never empty.
        &self.dirs[self.dirs.len() - 1]
    }

    pub fn kind(&self, name: &OsStr) -> io::Result<Kind> {
        match self.last().symlink_metadata(name) {
            Ok(m) if m.is_dir() => Ok(Kind::Folder),
            Ok(_) => Ok(Kind::Other),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Kind::Missing),
            Err(e) => Err(e),
        }
    }

    /// Replaces `name` with a file holding `content`, in one rename (a link there is
    /// replaced, never followed). The content is on disk before the rename.
    pub fn replace_file(
        &self,
        name: &OsStr,
        content: &[u8],
        executable: bool,
        tmp_prefix: &str,
    ) -> io::Result<()> {
        let dir = self.last();
        let (tmp, file) = create_new(dir, tmp_prefix)?;
        let mut file = file.into_std();
        let written = file
            .write_all(content)
            .and_then(|_| set_mode(&file, executable))
            .and_then(|_| file.sync_all())
            .and_then(|_| dir.rename(&tmp, dir, name));
        if written.is_err() {
            let _ = dir.remove_file(&tmp);
        }
        written
    }

    /// Replaces `name` with a link to `target`, in one rename.
    #[cfg(unix)]
    pub fn replace_link(&self, name: &OsStr, target: &Path, tmp_prefix: &str) -> io::Result<()> {
        let dir = self.last();
        for _ in 0..100 {
            let tmp = temp_name(tmp_prefix);
            match dir.symlink_contents(target, &tmp) {
                Ok(()) => {
                    let renamed = dir.rename(&tmp, dir, name);
                    if renamed.is_err() {
                        let _ = dir.remove_file(&tmp);
                    }
                    return renamed;
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::from(io::ErrorKind::AlreadyExists))
    }

    /// Without symbolic links the link's target is written as the file's text, as git
    /// does on such systems.
    #[cfg(not(unix))]
    pub fn replace_link(&self, name: &OsStr, target: &Path, tmp_prefix: &str) -> io::Result<()> {
        self.replace_file(name, target.to_string_lossy().as_bytes(), false, tmp_prefix)
    }

    /// Removes the folders on the way that are now empty, deepest first, up to the root.
    pub fn prune_empty(&self) {
        for i in (0..self.names.len()).rev() {
            if self.dirs[i].remove_dir(&self.names[i]).is_err() {
                break;
            }
        }
    }
}

/// Opens `path` for reading: an absolute path in which no part, the last included, may be
/// a link. It is meant for a path a check approved in its canonical form (links resolved):
/// a link on it now was swapped in since, and is refused (`ELOOP`, or not a folder)
/// instead of followed. A FIFO opens without waiting for a writer and no terminal becomes
/// the controlling one; the caller looks at what kind of file it got.
pub fn open_exact(path: &Path) -> io::Result<std::fs::File> {
    #[cfg(target_os = "linux")]
    match linux::open(path, false) {
        Err(e) if linux::unsupported(&e) => {}
        other => return other,
    }
    open_by_walk(path)
}

/// `open_exact` one folder at a time, each opened inside the one before with `O_NOFOLLOW`.
fn open_by_walk(path: &Path) -> io::Result<std::fs::File> {
    let rel = below_root(path)?;
    let root = Folder::at_root()?;
    let Some(name) = rel.file_name() else {
        return Ok(root.root.try_clone()?.into_std_file());
    };
    let parents = root.parents(rel, false).map_err(Blocked::into_io)?;
    let mut options = OpenOptions::new();
    options.read(true).follow(FollowSymlinks::No);
    #[cfg(unix)]
    {
        use cap_std::fs::OpenOptionsExt;
        options.custom_flags(
            nix::fcntl::OFlag::O_NONBLOCK.bits() | nix::fcntl::OFlag::O_NOCTTY.bits(),
        );
    }
    Ok(parents.last().open_with(name, &options)?.into_std())
}

/// Opens the folder at `path`, absolute, with no link on it (see `open_exact`); with
/// `create`, the missing folders are made one at a time, each inside the one opened before,
/// so a link swapped in on the way is refused, never followed.
pub fn open_dir_exact(path: &Path, create: bool) -> io::Result<Dir> {
    #[cfg(target_os = "linux")]
    match linux::open(path, true) {
        Err(e) if linux::unsupported(&e) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound && create => {}
        Ok(file) => return Ok(Dir::from_std_file(file)),
        Err(e) => return Err(e),
    }
    open_dir_by_walk(path, create)
}

/// `open_dir_exact` one folder at a time.
fn open_dir_by_walk(path: &Path, create: bool) -> io::Result<Dir> {
    let rel = below_root(path)?;
    let mut folders = Folder::at_root()?
        .folders(rel, create)
        .map_err(|b| match b {
            Blocked::NotAFolder(p) => io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("/{} is a link or a file, not a folder", p.display()),
            ),
            other => other.into_io(),
        })?;
    folders
        .dirs
        .pop()
        .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))
}

/// `path` relative to `/`; refused unless absolute (a relative path would be read from
/// wherever the process happens to be).
fn below_root(path: &Path) -> io::Result<&Path> {
    path.strip_prefix("/").map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not an absolute path", path.display()),
        )
    })
}

#[cfg(target_os = "linux")]
mod linux {
    use rustix::fs::{CWD, Mode, OFlags, ResolveFlags};
    use std::io;
    use std::path::Path;

    /// One `openat2` that refuses a link anywhere on the path (`RESOLVE_NO_SYMLINKS`, and
    /// `/proc`'s magic links too): the kernel walks it, so there is no window to race.
    pub fn open(path: &Path, folder: bool) -> io::Result<std::fs::File> {
        let mut flags = OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOCTTY | OFlags::NONBLOCK;
        if folder {
            flags |= OFlags::DIRECTORY;
        }
        let fd = rustix::fs::openat2(
            CWD,
            path,
            flags,
            Mode::empty(),
            ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS,
        )?;
        Ok(std::fs::File::from(fd))
    }

    /// Kernels before 5.6 lack `openat2`, and some containers' filters refuse it: the walk
    /// one folder at a time does the same there.
    pub fn unsupported(e: &io::Error) -> bool {
        [rustix::io::Errno::NOSYS, rustix::io::Errno::PERM]
            .iter()
            .any(|n| e.raw_os_error() == Some(n.raw_os_error()))
    }
}

fn file_name(rel: &Path) -> io::Result<&OsStr> {
    match rel.components().next_back() {
        Some(Component::Normal(name)) => Ok(name),
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a file path", rel.display()),
        )),
    }
}

/// A new file, made here and nowhere else (`O_EXCL`), under a name no other is using.
fn create_new(dir: &Dir, prefix: &str) -> io::Result<(OsString, cap_std::fs::File)> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use cap_std::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    for _ in 0..100 {
        let name = temp_name(prefix);
        match dir.open_with(&name, &options) {
            Ok(file) => return Ok((name, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::from(io::ErrorKind::AlreadyExists))
}

fn temp_name(prefix: &str) -> OsString {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    OsString::from(format!("{prefix}{}-{n}", std::process::id()))
}

#[cfg(unix)]
fn set_mode(file: &std::fs::File, executable: bool) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    // The umask is not applied to an explicit chmod; the usual 0644/0755 are.
    file.set_permissions(std::fs::Permissions::from_mode(if executable {
        0o755
    } else {
        0o644
    }))
}

#[cfg(not(unix))]
fn set_mode(_file: &std::fs::File, _executable: bool) -> io::Result<()> {
    Ok(())
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// The kernel's `openat2` and the walk one folder at a time, side by side.
    type Open = fn(&Path) -> io::Result<std::fs::File>;
    const OPENS: [(&str, Open); 2] = [("open_exact", open_exact), ("walk", open_by_walk)];

    fn tree() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::create_dir_all(root.join("d/sub")).unwrap();
        std::fs::write(root.join("d/sub/f.txt"), "inside").unwrap();
        symlink(root.join("d"), root.join("l")).unwrap();
        symlink("f.txt", root.join("d/sub/lf")).unwrap();
        (tmp, root)
    }

    #[test]
    fn the_path_opens_and_a_link_anywhere_on_it_is_refused() {
        let (_tmp, root) = tree();
        for (how, open) in OPENS {
            let mut text = String::new();
            open(&root.join("d/sub/f.txt"))
                .unwrap()
                .read_to_string(&mut text)
                .unwrap();
            assert_eq!(text, "inside", "{how}");
            assert!(
                open(&root.join("d/sub"))
                    .unwrap()
                    .metadata()
                    .unwrap()
                    .is_dir()
            );
            for linked in ["l/sub/f.txt", "d/sub/lf", "l"] {
                assert!(open(&root.join(linked)).is_err(), "{how} followed {linked}");
            }
            assert!(open(Path::new("d/sub/f.txt")).is_err(), "{how}: relative");
        }
        for (how, open) in [
            (
                "open_dir_exact",
                open_dir_exact as fn(&Path, bool) -> io::Result<Dir>,
            ),
            ("walk", open_dir_by_walk),
        ] {
            assert!(open(&root.join("d/sub"), false).is_ok(), "{how}");
            assert!(open(&root.join("l/sub"), false).is_err(), "{how}");
            assert!(open(&root.join("l/new"), true).is_err(), "{how}");
            assert!(
                !root.join("d/new").exists(),
                "{how} made a folder through a link"
            );
            assert!(
                open(&root.join("d/sub/f.txt"), false).is_err(),
                "{how}: a file"
            );
            assert!(open(&root.join("d/made/deep"), true).is_ok(), "{how}");
            assert!(root.join("d/made/deep").is_dir(), "{how}");
            std::fs::remove_dir_all(root.join("d/made")).unwrap();
        }
    }

    #[test]
    fn a_fifo_opens_without_waiting_for_a_writer() {
        let (_tmp, root) = tree();
        let fifo = root.join("d/pipe");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        for (how, open) in OPENS {
            // Without O_NONBLOCK this would wait forever.
            let file = open(&fifo).unwrap();
            assert!(!file.metadata().unwrap().is_file(), "{how}");
        }
    }
}
