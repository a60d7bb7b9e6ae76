//! Writes that a crash never leaves half done: a temporary file beside the target, flushed
//! to disk, then renamed over it.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Why a write did not happen; the target is untouched.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("{} is a directory", .0.display())]
    IsDirectory(PathBuf),
    #[error("cannot {action} {}: {}", path.display(), crate::io_reason(source))]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
}

fn failed(action: &'static str, path: &Path, source: std::io::Error) -> WriteError {
    WriteError::Io {
        action,
        path: path.to_path_buf(),
        source,
    }
}

/// Where a write to `path` must really go: through a symlink to its target, so that
/// replacing the file does not replace the link.
fn write_target(path: &Path) -> PathBuf {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
        }
        _ => path.to_path_buf(),
    }
}

/// Temporary files of writes are named `.skald-write-<pid>-<random>`: the writer's pid lets
/// a later write in the same folder remove what a killed Skald left behind.
const TMP_PREFIX: &str = ".skald-write-";

/// Removes the temporary files that writes by processes no longer running left in `dir`
/// (a kill between creating and renaming one). Best effort: a folder that cannot be
/// listed simply keeps them.
fn remove_leftovers(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if leftover_of_dead_writer(&entry.file_name()) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Whether `name` is a temporary file of a write whose process is no longer running.
fn leftover_of_dead_writer(name: &std::ffi::OsStr) -> bool {
    let Some(pid) = name
        .to_str()
        .and_then(|n| n.strip_prefix(TMP_PREFIX))
        .and_then(|rest| rest.split_once('-'))
        .and_then(|(pid, _)| pid.parse::<u32>().ok())
    else {
        return false;
    };
    pid != std::process::id() && !process_alive(pid)
}

#[cfg(unix)]
fn process_alive(pid: u32) -> bool {
    let Ok(pid) = i32::try_from(pid) else {
        return true;
    };
    // Signal 0 checks existence; EPERM means it exists but belongs to someone else.
    !matches!(
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None),
        Err(nix::errno::Errno::ESRCH)
    )
}

/// Without a cheap liveness check, nothing is assumed dead.
#[cfg(not(unix))]
fn process_alive(_pid: u32) -> bool {
    true
}

/// Writes `contents` to `path` atomically: a temporary file in the same directory is
/// written, flushed to disk and renamed over the target. An existing file keeps its
/// permissions. Parent directories are created. Returns whether the file existed.
pub fn write_atomic(path: &Path, contents: &[u8]) -> Result<bool, WriteError> {
    let target = write_target(path);
    let existing = match std::fs::metadata(&target) {
        Ok(m) if m.is_dir() => return Err(WriteError::IsDirectory(target)),
        Ok(m) => Some(m),
        Err(_) => None,
    };
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir).map_err(|e| failed("create directory", &dir, e))?;
    remove_leftovers(&dir);
    let prefix = format!("{TMP_PREFIX}{}-", std::process::id());
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix);
    // tempfile creates 0600 files; a new file should get the usual 0666 less the umask,
    // like any editor's. An existing file's mode is copied below instead.
    #[cfg(unix)]
    if existing.is_none() {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut tmp = builder
        .tempfile_in(&dir)
        .map_err(|e| failed("create a temporary file in", &dir, e))?;
    tmp.write_all(contents)
        .and_then(|_| tmp.as_file().sync_all())
        .map_err(|e| failed("write", tmp.path(), e))?;
    if let Some(meta) = &existing {
        std::fs::set_permissions(tmp.path(), meta.permissions())
            .map_err(|e| failed("set permissions of", tmp.path(), e))?;
    }
    // On failure the temporary file is removed when `tmp` drops; the target is untouched.
    tmp.persist(&target)
        .map_err(|e| failed("replace", &target, e.error))?;
    Ok(existing.is_some())
}

/// Writes `contents` to `path` atomically, as `write_atomic` does, when `path` is the
/// canonical path a check approved (the file tools' writes): no part of it may be a link.
/// Its folder is opened with links refused (`beneath::open_dir_exact`; missing folders are
/// made one inside the other), and the temporary file is made, renamed over the target and
/// cleaned up relative to that folder's descriptor. A link swapped in anywhere on the path
/// after the check, the last part included, is refused and nothing is written; a process
/// racing the write cannot point it outside. Returns whether the file existed.
pub fn write_atomic_exact(path: &Path, contents: &[u8]) -> Result<bool, WriteError> {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(failed(
            "write",
            path,
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file path"),
        ));
    };
    let dir = crate::beneath::open_dir_exact(parent, true)
        .map_err(|e| failed("open the folder", parent, e))?;
    let existing = match dir.symlink_metadata(name) {
        Ok(m) if m.is_dir() => return Err(WriteError::IsDirectory(path.to_path_buf())),
        Ok(m) if m.file_type().is_symlink() => {
            return Err(failed(
                "write",
                path,
                std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "it is a link now, not the file that was checked (it was swapped since)",
                ),
            ));
        }
        Ok(m) => Some(m),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(failed("read", path, e)),
    };
    remove_leftovers_in(&dir);
    let mut options = cap_std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use cap_std::fs::OpenOptionsExt;
        // A new file gets 0666 less the umask, like any editor's; an existing file's mode
        // is copied below.
        options.mode(0o666);
    }
    let mut made = None;
    for n in 0..100u32 {
        let tmp = format!("{TMP_PREFIX}{}-{n}-{}", std::process::id(), unique());
        match dir.open_with(&tmp, &options) {
            Ok(file) => {
                made = Some((tmp, file.into_std()));
                break;
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(failed("create a temporary file in", parent, e)),
        }
    }
    let Some((tmp, mut file)) = made else {
        return Err(failed(
            "create a temporary file in",
            parent,
            std::io::Error::from(std::io::ErrorKind::AlreadyExists),
        ));
    };
    let written = file
        .write_all(contents)
        .and_then(|_| match &existing {
            Some(meta) => file.set_permissions(meta.permissions().into_std(&file)?),
            None => Ok(()),
        })
        .and_then(|_| file.sync_all())
        .map_err(|e| failed("write", &parent.join(&tmp), e))
        .and_then(|_| {
            dir.rename(&tmp, &dir, name)
                .map_err(|e| failed("replace", path, e))
        });
    if written.is_err() {
        let _ = dir.remove_file(&tmp);
    }
    written.map(|_| existing.is_some())
}

/// A number no other write of this process is using.
fn unique() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// `remove_leftovers` for a folder held open.
fn remove_leftovers_in(dir: &cap_std::fs::Dir) {
    let Ok(entries) = dir.entries() else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if leftover_of_dead_writer(&name) {
            let _ = dir.remove_file(&name);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_write_removes_what_a_killed_writer_left_but_not_a_live_ones() {
        let dir = tempfile::tempdir().unwrap();
        // A pid that cannot be running: above the kernel's limit.
        let dead = dir.path().join(".skald-write-4194999-abc123");
        let live = dir.path().join(format!(
            ".skald-write-{}-xyz789",
            std::os::unix::process::parent_id()
        ));
        let other = dir.path().join(".skald-write-notes.txt");
        for p in [&dead, &live, &other] {
            std::fs::write(p, "partial").unwrap();
        }
        write_atomic(&dir.path().join("a.txt"), b"whole").unwrap();
        assert!(!dead.exists(), "a dead writer's leftover is removed");
        assert!(live.exists(), "a running writer's file is kept");
        assert!(other.exists(), "a file that only looks similar is kept");
        assert_eq!(std::fs::read(dir.path().join("a.txt")).unwrap(), b"whole");
    }

    #[test]
    fn atomic_write_creates_parents_and_keeps_permissions() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("a/b/c.txt");
        assert!(!write_atomic(&path, b"one").unwrap());
        assert_eq!(std::fs::read(&path).unwrap(), b"one");
        #[cfg(target_os = "linux")]
        {
            use std::os::unix::fs::PermissionsExt;
            let status = std::fs::read_to_string("/proc/self/status").unwrap();
            let umask = status
                .lines()
                .find_map(|l| l.strip_prefix("Umask:"))
                .map(|m| u32::from_str_radix(m.trim(), 8).unwrap())
                .unwrap();
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o666 & !umask, "a new file gets 0666 less the umask");
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o750)).unwrap();
            assert!(write_atomic(&path, b"two").unwrap());
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o750);
        }
        // No temporary files are left behind.
        let names: Vec<_> = std::fs::read_dir(tmp.path().join("a/b"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["c.txt"]);
    }

    #[cfg(unix)]
    #[test]
    fn writing_through_a_symlink_keeps_the_link() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().join("real.txt");
        let link = tmp.path().join("link.txt");
        std::fs::write(&real, "old").unwrap();
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_atomic(&link, b"new").unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
    }

    #[cfg(unix)]
    #[test]
    fn an_exact_write_makes_folders_keeps_modes_and_refuses_links() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let outside = tempfile::tempdir().unwrap();
        let path = root.join("a/b/c.txt");
        assert!(!write_atomic_exact(&path, b"one").unwrap());
        assert_eq!(std::fs::read(&path).unwrap(), b"one");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o750)).unwrap();
        assert!(write_atomic_exact(&path, b"two").unwrap());
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o750, "an existing file keeps its mode");
        let names: Vec<_> = std::fs::read_dir(root.join("a/b"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["c.txt"], "no temporary file is left");
        // A link where a folder was, on the way or at the end: refused, nothing written.
        std::fs::write(outside.path().join("c.txt"), "theirs").unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("l")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("c.txt"), root.join("a/lc")).unwrap();
        for via in ["l/c.txt", "l/new.txt", "l/x/y.txt", "a/lc"] {
            let e = write_atomic_exact(&root.join(via), b"mine").unwrap_err();
            assert!(!e.to_string().is_empty(), "{via}");
        }
        let theirs: Vec<_> = std::fs::read_dir(outside.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(theirs, ["c.txt"]);
        assert_eq!(
            std::fs::read_to_string(outside.path().join("c.txt")).unwrap(),
            "theirs"
        );
        assert!(matches!(
            write_atomic_exact(&root.join("a"), b"x"),
            Err(WriteError::IsDirectory(_))
        ));
    }

    /// A thread swaps the folder a write names with a link to another folder, as fast as it
    /// can, while the same path is written over and over: the other folder never changes.
    #[cfg(target_os = "linux")]
    #[test]
    fn an_exact_write_racing_a_swapped_folder_never_writes_outside() {
        use nix::fcntl::{AT_FDCWD, RenameFlags, renameat2};
        use std::sync::atomic::{AtomicBool, Ordering};
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.join("d")).unwrap();
        std::fs::write(outside.path().join("f.txt"), "theirs").unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("l")).unwrap();
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let swapper = {
            let stop = stop.clone();
            let (d, l) = (root.join("d"), root.join("l"));
            std::thread::spawn(move || {
                let mut swaps = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    if renameat2(AT_FDCWD, &d, AT_FDCWD, &l, RenameFlags::RENAME_EXCHANGE).is_ok() {
                        swaps += 1;
                    }
                }
                swaps
            })
        };
        let mut written = 0;
        for i in 0..2000 {
            let name = if i % 2 == 0 { "d/f.txt" } else { "d/n/g.txt" };
            if write_atomic_exact(&root.join(name), b"mine").is_ok() {
                written += 1;
            }
        }
        stop.store(true, Ordering::Relaxed);
        assert!(swapper.join().unwrap() > 0);
        assert!(written > 0, "no write ever got through, so nothing raced");
        let theirs: Vec<_> = std::fs::read_dir(outside.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(theirs, ["f.txt"], "a file or folder was made outside");
        assert_eq!(
            std::fs::read_to_string(outside.path().join("f.txt")).unwrap(),
            "theirs"
        );
    }
}
