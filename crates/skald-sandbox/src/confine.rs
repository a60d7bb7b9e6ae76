//! The helper's side: confine this process to a policy, then exec the command (Linux).
//!
//! First, a session of its own ([`own_session`]): the command gets no controlling
//! terminal, so it cannot type into the terminal Skald runs in (`TIOCSTI`), read from it, or
//! be stopped by it. Then, in order, because each step needs the one before and the last
//! ones forbid the first:
//! 1. a new user and mount namespace, the user mapped to itself (so an exec drops the
//!    namespace's capabilities unless the user is root, see step 4);
//! 2. the masks: an empty read-only tmpfs over each hidden folder, `/dev/null` bound
//!    read-only over each hidden file, and a private `/dev/shm`;
//! 3. Landlock: read and execute beneath `/`, write only beneath the writable folders and
//!    a few devices; TCP bind and connect refused when the network is off; signals and
//!    abstract Unix sockets scoped to the sandbox; and, from Landlock itself, no ptrace or
//!    `/proc/<pid>/mem|environ` of any process outside it and no more mounts, so the masks
//!    stay;
//! 4. seccomp: with the network off, sockets of any family but Unix refused (UDP, raw,
//!    netlink: Landlock covers only TCP); io_uring always, since it opens and connects
//!    without the system calls the rest of the filter sees; and always the two ioctls that
//!    put input into a terminal or act on the console (`TIOCSTI`, `TIOCLINUX`), whatever
//!    descriptor they are tried on (one handed down open is not Landlock's to judge).

use crate::{Policy, plan_masks};
use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, LandlockStatus, PathBeneath, PathFd,
    Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope, path_beneath_rules,
};
use nix::mount::{MsFlags, mount};
use nix::sched::{CloneFlags, unshare};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Why the process could not be confined. The command must not run.
#[derive(Debug, thiserror::Error)]
pub enum ConfineError {
    #[error(
        "cannot create a user namespace ({0}); unprivileged user namespaces may be turned off \
         here (sysctl kernel.unprivileged_userns_clone, user.max_user_namespaces, or AppArmor's \
         kernel.apparmor_restrict_unprivileged_userns)"
    )]
    Namespace(nix::Error),
    #[error("cannot make a PID namespace for the command, so its processes could outlive it: {0}")]
    PidNamespace(nix::Error),
    #[error("cannot write {0}: {1}")]
    IdMap(String, std::io::Error),
    #[error("cannot make a session of its own: {0}")]
    Session(rustix::io::Errno),
    #[error("cannot close the descriptors it inherited: {0}")]
    Descriptors(std::io::Error),
    #[error("cannot keep {path} in the private temporary folder: {1}", path = .0.display())]
    Keep(PathBuf, std::io::Error),
    #[error("cannot hide {path}: {1}", path = .0.display())]
    Mount(PathBuf, nix::Error),
    #[error("cannot keep {path} read-only or in place: {1}", path = .0.display())]
    InPlace(PathBuf, nix::Error),
    #[error("Landlock: {0}")]
    Landlock(String),
    #[error("seccomp: {0}")]
    Seccomp(String),
}

/// The file-system rights Skald asks Landlock for: ABI 5's set (with truncate and device
/// ioctls), the newest this design is tested against; a newer kernel enforces it as is.
const FS_ABI: ABI = ABI::V5;
/// Devices any command writes to (`> /dev/null`), besides the writable folders. No terminal
/// is among them: a command has none of its own (see [`own_session`]), and writing to, or
/// using the ioctls of, any other is acting on someone else's.
const DEVICES: &[&str] = &["/dev/null", "/dev/zero", "/dev/full"];

/// Makes the calling process the leader of a new session, so that it and everything it
/// starts have no controlling terminal (as `bwrap --new-session` does): `/dev/tty` cannot be
/// opened, and the terminal's signals and input are not theirs.
///
/// The kernel refuses this to a process group's leader. The spawner (`required`) is started
/// by Skald as none, so there it is an error. The one-shot helper may have been made a
/// leader by whoever started it (an editor's terminal makes its command a session leader
/// on the terminal it made for it): it then keeps that session, and what still stands
/// between it and a terminal is the seccomp filter (no `TIOCSTI`, no `TIOCLINUX`) and
/// Landlock (no terminal device writable, no device ioctls).
pub fn own_session(required: bool) -> Result<(), ConfineError> {
    match rustix::process::setsid() {
        Ok(_) => Ok(()),
        Err(rustix::io::Errno::PERM) if !required => Ok(()),
        Err(e) => Err(ConfineError::Session(e)),
    }
}

/// Puts what the calling thread starts next in a PID namespace of its own, whose first
/// process the command is. When that process ends — it exits, its timeout or a stop kills
/// it, or Skald goes and the spawner kills it — the kernel kills every other process in the
/// namespace: a double fork or `setsid … &` cannot keep anything running after its command.
/// Per thread (the spawner's worker runs one command), and allowed by the capabilities the
/// spawner holds in its own user namespace.
pub fn own_pid_namespace() -> Result<(), ConfineError> {
    unshare(CloneFlags::CLONE_NEWPID).map_err(ConfineError::PidNamespace)
}

/// Confines the calling process to `policy`. Returns a line saying how (Landlock's ABI).
/// The process must be single-threaded: the kernel refuses a user namespace otherwise.
/// Its working directory stays visible in the private temporary folders, with the
/// writable folders.
pub fn confine(policy: &Policy) -> Result<String, ConfineError> {
    let cwd = std::env::current_dir().ok();
    let kept = crate::seen_in_private_tmp(policy.writable.iter().chain(&cwd).map(PathBuf::as_path));
    enter(policy, &kept)?;
    restrict(policy)
}

/// Steps 1 and 2, for the whole process: namespaces, the private temporary folders (in
/// which the folders of `kept` stay as they are: see [`crate::seen_in_private_tmp`]) and the masks
/// of `policy` (planned against its writable folders). The process must be
/// single-threaded.
pub fn enter(policy: &Policy, kept: &[PathBuf]) -> Result<(), ConfineError> {
    enter_namespaces()?;
    private_tmp(kept)?;
    hide(policy)
}

/// Mounts an empty private `tmpfs` over each of [`crate::PRIVATE_TMP`] and binds each folder of
/// `kept` inside it back at its own path (with what is mounted beneath it). A private
/// folder that is itself kept, or inside a kept folder, is left as it is.
fn private_tmp(kept: &[PathBuf]) -> Result<(), ConfineError> {
    use std::os::fd::AsRawFd;
    for dir in crate::tmp::private_tmp_folders() {
        if kept.iter().any(|k| dir.starts_with(k)) {
            continue;
        }
        // Outermost kept folders only: a bind brings what is beneath it along (the spawner's
        // list has its commands' temporary folders' base added to it).
        let inside: Vec<&PathBuf> = kept
            .iter()
            .filter(|k| k.starts_with(dir))
            .filter(|k| !kept.iter().any(|o| o != *k && k.starts_with(o)))
            .collect();
        // Held open before the tmpfs hides them: a bind's source can then be the
        // descriptor itself (`/proc/self/fd/N`), whatever the path shows afterwards.
        let held: Vec<(&PathBuf, std::fs::File)> = inside
            .into_iter()
            .filter_map(|k| std::fs::File::open(k).ok().map(|f| (k, f)))
            .collect();
        mount(
            Some("tmpfs"),
            dir,
            Some("tmpfs"),
            MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
            Some("mode=1777"),
        )
        .map_err(|e| ConfineError::Mount(dir.clone(), e))?;
        for (k, f) in held {
            std::fs::create_dir_all(k).map_err(|e| ConfineError::Keep(k.clone(), e))?;
            let source = format!("/proc/self/fd/{}", f.as_raw_fd());
            mount(
                Some(source.as_str()),
                k,
                None::<&str>,
                MsFlags::MS_BIND | MsFlags::MS_REC,
                None::<&str>,
            )
            .map_err(|e| ConfineError::Mount(k.clone(), e))?;
        }
    }
    Ok(())
}

/// Steps 3 and 4, for the calling thread only: Landlock and seccomp. What the thread starts
/// afterwards inherits both; the process's other threads keep none of it.
pub fn restrict(policy: &Policy) -> Result<String, ConfineError> {
    let landlock = restrict_files_and_tcp(policy)?;
    filter_syscalls(policy.network)?;
    Ok(landlock)
}

/// Step 3 alone, for the calling thread: Landlock. The spawner (`zygote.rs`) restricts one
/// fresh thread per command this way; its seccomp filter (step 4) comes from the thread that
/// made it ([`filter_syscalls`]), since threads inherit filters.
pub fn restrict_files(policy: &Policy) -> Result<String, ConfineError> {
    restrict_files_and_tcp(policy)
}

fn enter_namespaces() -> Result<(), ConfineError> {
    let uid = nix::unistd::getuid();
    let gid = nix::unistd::getgid();
    unshare(CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWNS)
        .map_err(ConfineError::Namespace)?;
    let write = |file: &str, text: String| {
        std::fs::write(file, text).map_err(|e| ConfineError::IdMap(file.to_string(), e))
    };
    write("/proc/self/setgroups", "deny".to_string())?;
    write("/proc/self/uid_map", format!("{uid} {uid} 1"))?;
    write("/proc/self/gid_map", format!("{gid} {gid} 1"))?;
    // Mounts made from here on stay in this namespace.
    mount(
        None::<&str>,
        "/",
        None::<&str>,
        MsFlags::MS_REC | MsFlags::MS_PRIVATE,
        None::<&str>,
    )
    .map_err(|e| ConfineError::Mount(PathBuf::from("/"), e))
}

fn hide(policy: &Policy) -> Result<(), ConfineError> {
    let sealed = MsFlags::MS_RDONLY | MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC;
    let mut masks = plan_masks(&policy.masked, &policy.writable);
    masks.extend(readable_disks());
    for path in masks {
        let Ok(meta) = std::fs::metadata(&path) else {
            continue; // Nothing there, nothing to hide.
        };
        let done = if meta.is_dir() {
            mount(
                Some("tmpfs"),
                &path,
                Some("tmpfs"),
                sealed,
                Some("mode=000,size=4k,nr_inodes=2"),
            )
        } else {
            mount(
                Some("/dev/null"),
                &path,
                None::<&str>,
                MsFlags::MS_BIND,
                None::<&str>,
            )
            .and_then(|()| {
                mount(
                    None::<&str>,
                    &path,
                    None::<&str>,
                    MsFlags::MS_BIND | MsFlags::MS_REMOUNT | sealed,
                    None::<&str>,
                )
            })
        };
        done.map_err(|e| ConfineError::Mount(path.clone(), e))?;
    }
    // A private /dev/shm: programs need one (POSIX semaphores), and the machine's is shared
    // with everything outside.
    if Path::new("/dev/shm").is_dir() {
        mount(
            Some("tmpfs"),
            "/dev/shm",
            Some("tmpfs"),
            MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
            Some("mode=1777"),
        )
        .map_err(|e| ConfineError::Mount(PathBuf::from("/dev/shm"), e))?;
    }
    keep_in_place(policy)
}

/// Binds each pinned folder over itself (a mount point cannot be renamed or removed), then
/// each read-only path over itself read-only: ancestors first, so a folder's own bind does
/// not hide the binds made inside it. Each path is opened without following a link and
/// bound from and onto that descriptor, so a link a process outside swaps in cannot send
/// the bind elsewhere; the remount that makes it read-only is checked to act on the same
/// file, and the command does not run if it does not.
fn keep_in_place(policy: &Policy) -> Result<(), ConfineError> {
    use nix::fcntl::{OFlag, open};
    use nix::sys::stat::{Mode, SFlag, fstat};
    use std::os::fd::AsRawFd;
    let mut all: Vec<(&PathBuf, bool)> = policy
        .pinned
        .iter()
        .map(|p| (p, false))
        .chain(policy.read_only.iter().map(|p| (p, true)))
        .collect();
    all.sort();
    let look = |path: &Path| {
        let fd = open(
            path,
            OFlag::O_PATH | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
            Mode::empty(),
        )?;
        let st = fstat(&fd)?;
        if SFlag::from_bits_truncate(st.st_mode) & SFlag::S_IFMT == SFlag::S_IFLNK {
            return Err(nix::Error::ELOOP);
        }
        Ok((fd, (st.st_dev, st.st_ino)))
    };
    for (path, read_only) in all {
        let fail = |e| ConfineError::InPlace(path.clone(), e);
        let (fd, id) = match look(path) {
            Ok(found) => found,
            Err(nix::Error::ENOENT) => continue,
            Err(e) => return Err(fail(e)),
        };
        let at = format!("/proc/self/fd/{}", fd.as_raw_fd());
        mount(
            Some(at.as_str()),
            at.as_str(),
            None::<&str>,
            MsFlags::MS_BIND | MsFlags::MS_REC,
            None::<&str>,
        )
        .map_err(fail)?;
        if !read_only {
            continue;
        }
        // The bind is on top now: the path opened again is its root, the same file.
        let (bound, again) = look(path).map_err(fail)?;
        if again != id {
            return Err(fail(nix::Error::ESTALE));
        }
        // The mount's locked flags (from outside the namespace) must be kept: noexec is
        // the one not always added here.
        let vfs = nix::sys::statvfs::fstatvfs(&bound).map_err(fail)?;
        let mut flags = MsFlags::MS_BIND
            | MsFlags::MS_REMOUNT
            | MsFlags::MS_RDONLY
            | MsFlags::MS_NOSUID
            | MsFlags::MS_NODEV;
        if vfs.flags().contains(nix::sys::statvfs::FsFlags::ST_NOEXEC) {
            flags |= MsFlags::MS_NOEXEC;
        }
        let at = format!("/proc/self/fd/{}", bound.as_raw_fd());
        mount(None::<&str>, at.as_str(), None::<&str>, flags, None::<&str>).map_err(fail)?;
    }
    Ok(())
}

/// The block devices under `/dev` this process could read: a disk read raw holds every
/// file on it, masks or not. Only root (or the `disk` group) can, and Landlock lets reads
/// through beneath `/`, so each is covered like a hidden file. (Raw access by ioctl, as
/// `/dev/sg*` gives, is refused by Landlock's device-ioctl rule; `/dev/mem` needs a
/// capability the namespace does not have.)
fn readable_disks() -> Vec<PathBuf> {
    use std::os::unix::fs::FileTypeExt;
    let mut found = Vec::new();
    let mut queue = vec![(PathBuf::from("/dev"), 0)];
    while let Some((dir, depth)) = queue.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if kind.is_dir()
                && depth < 3
                && !matches!(entry.file_name().to_str(), Some("shm" | "pts"))
            {
                queue.push((path, depth + 1));
            } else if kind.is_block_device()
                && nix::unistd::access(&path, nix::unistd::AccessFlags::R_OK).is_ok()
            {
                found.push(path);
            }
        }
    }
    found
}

/// The writable folders Skald worked out (canonical: the chat's folder and its grants),
/// each opened with no link anywhere on its path (`openat2` with `RESOLVE_NO_SYMLINKS`),
/// with whether it is a folder. Landlock's own `PathFd` follows links: a granted folder
/// inside the chat's folder that an earlier command swapped for a link to the home folder
/// would make the home folder writable. One that is a link now, or gone, is left out (not
/// writable), as landlock leaves out a path it cannot open. Where the kernel refuses
/// `openat2`, it is opened as landlock would.
fn writable_exactly(paths: &[PathBuf]) -> Vec<(std::os::fd::OwnedFd, bool)> {
    use rustix::fs::{CWD, Mode, OFlags, ResolveFlags};
    let mut out = Vec::new();
    for path in paths {
        let opened = rustix::fs::openat2(
            CWD,
            path,
            OFlags::PATH | OFlags::CLOEXEC,
            Mode::empty(),
            ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS,
        );
        let fd = match opened {
            Ok(fd) => fd,
            // Opened the ordinary way, then kept only if the kernel names what was opened
            // by the very path asked for: a link followed on the way would name another.
            Err(rustix::io::Errno::NOSYS | rustix::io::Errno::PERM) => {
                match rustix::fs::open(path, OFlags::PATH | OFlags::CLOEXEC, Mode::empty()) {
                    Ok(fd)
                        if std::fs::read_link(format!(
                            "/proc/self/fd/{}",
                            std::os::fd::AsRawFd::as_raw_fd(&fd)
                        ))
                        .is_ok_and(|p| p == *path) =>
                    {
                        fd
                    }
                    _ => continue,
                }
            }
            Err(_) => continue,
        };
        let folder = rustix::fs::fstat(&fd)
            .map(|st| rustix::fs::FileType::from_raw_mode(st.st_mode).is_dir())
            .unwrap_or(true);
        out.push((fd, folder));
    }
    out
}

fn restrict_files_and_tcp(policy: &Policy) -> Result<String, ConfineError> {
    let ll = |e: landlock::RulesetError| ConfineError::Landlock(e.to_string());
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(FS_ABI))
        .map_err(ll)?;
    if !policy.network {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(ABI::V4))
            .map_err(ll)?;
    }
    let ruleset = ruleset.scope(Scope::from_all(ABI::V6)).map_err(ll)?;
    let root = PathFd::new("/").map_err(|e| ConfineError::Landlock(e.to_string()))?;
    let mut devices: Vec<PathBuf> = DEVICES.iter().map(PathBuf::from).collect();
    if Path::new("/dev/shm").is_dir() {
        devices.push(PathBuf::from("/dev/shm"));
    }
    let mut created = ruleset
        .create()
        .map_err(ll)?
        .add_rule(PathBeneath::new(root, AccessFs::from_read(FS_ABI)))
        .map_err(ll)?;
    for (fd, folder) in writable_exactly(&policy.writable) {
        let access = if folder {
            AccessFs::from_all(FS_ABI)
        } else {
            AccessFs::from_file(FS_ABI)
        };
        created = created.add_rule(PathBeneath::new(fd, access)).map_err(ll)?;
    }
    let status = created
        .add_rules(path_beneath_rules(&devices, AccessFs::from_all(FS_ABI)))
        .map_err(ll)?
        .restrict_self()
        .map_err(ll)?;
    if status.ruleset == RulesetStatus::NotEnforced {
        return Err(ConfineError::Landlock(
            "this kernel does not enforce it (it needs Linux 5.13 or later with Landlock \
             enabled: lsm=landlock)"
                .to_string(),
        ));
    }
    let abi = match status.landlock {
        LandlockStatus::Available { effective_abi, .. } => Some(effective_abi),
        _ => None,
    };
    // Part of the boundary missing is no boundary: a kernel without signal scoping lets a
    // command signal Skald, one without TCP rules lets it reach the network. The command
    // does not run, and the probe says why, so commands ask as with no sandbox.
    if status.ruleset != RulesetStatus::FullyEnforced {
        return Err(ConfineError::Landlock(partly_enforced(abi)));
    }
    Ok(format!(
        "Landlock {}, fully enforced",
        abi.map_or_else(|| "?".to_string(), |a| format!("{a:?}"))
    ))
}

/// Puts the calling thread in a Landlock domain nested in the one it has, with the same
/// rights (it only handles execution, allowed beneath `/`; the outer domain still bounds
/// everything). Landlock lets no process ptrace one in an outer domain, so a command started
/// this way cannot trace the first process of its PID namespace (`skald-sandbox --init`,
/// which is in the outer one) to untie it from its helper. A user namespace's root keeps
/// `CAP_SYS_PTRACE` there, so being non-dumpable would not be enough.
pub fn nested_domain() -> Result<(), ConfineError> {
    let ll = |e: landlock::RulesetError| ConfineError::Landlock(e.to_string());
    let root = PathFd::new("/").map_err(|e| ConfineError::Landlock(e.to_string()))?;
    let status = Ruleset::default()
        .handle_access(AccessFs::Execute)
        .map_err(ll)?
        .create()
        .map_err(ll)?
        .add_rule(PathBeneath::new(root, AccessFs::Execute))
        .map_err(ll)?
        .restrict_self()
        .map_err(ll)?;
    if status.ruleset == RulesetStatus::NotEnforced {
        return Err(ConfineError::Landlock(
            "cannot nest the command's domain: this kernel does not enforce it".to_string(),
        ));
    }
    Ok(())
}

/// What a kernel whose Landlock is `abi` lacks of what the sandbox asks for, in words.
pub fn partly_enforced(abi: Option<ABI>) -> String {
    let n = abi.map_or(0, |a| a as i32);
    let missing: Vec<&str> = [
        (4, "TCP connect and bind rules (ABI 4, Linux 6.7)"),
        (5, "device ioctl rules (ABI 5, Linux 6.10)"),
        (6, "signal and abstract-socket scoping (ABI 6, Linux 6.12)"),
    ]
    .iter()
    .filter(|(need, _)| n < *need)
    .map(|(_, what)| *what)
    .collect();
    format!(
        "this kernel enforces Landlock only in part (ABI {n}); missing: {}. Commands ask \
         before they run, as with no sandbox",
        if missing.is_empty() {
            "a right this kernel does not name".to_string()
        } else {
            missing.join("; ")
        }
    )
}

/// Which calls of a system call the filter refuses.
#[derive(Clone, Copy)]
enum Refused {
    Always,
    /// Sockets of any family but Unix (argument 0).
    NonUnix,
    /// `TIOCSTI` and `TIOCLINUX` (argument 1).
    TerminalInput,
}

/// Step 4 alone, for the calling thread and every thread or process it starts afterwards:
/// seccomp, for a policy with or without the network.
pub fn filter_syscalls(network: bool) -> Result<(), ConfineError> {
    let sc = |e: seccompiler::BackendError| ConfineError::Seccomp(e.to_string());
    let arch = TargetArch::try_from(std::env::consts::ARCH)
        .map_err(|e| ConfineError::Seccomp(e.to_string()))?;
    let mut numbers: Vec<(i64, Refused)> = vec![
        (libc::SYS_io_uring_setup, Refused::Always),
        (libc::SYS_io_uring_enter, Refused::Always),
        (libc::SYS_io_uring_register, Refused::Always),
        (libc::SYS_ioctl, Refused::TerminalInput),
    ];
    if !network {
        numbers.push((libc::SYS_socket, Refused::NonUnix));
        numbers.push((libc::SYS_socketpair, Refused::NonUnix));
    }
    // x86-64 also takes the x32 numbering: the same calls with bit 30 set.
    if std::env::consts::ARCH == "x86_64" {
        let x32: Vec<(i64, Refused)> = numbers.iter().map(|&(n, r)| (n | 0x4000_0000, r)).collect();
        numbers.extend(x32);
    }
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for (number, refused) in numbers {
        // A rule's conditions must all hold; a call is refused when any rule does.
        let rule = |arg: u8, op: SeccompCmpOp, value: u64| {
            SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value)
                .and_then(|c| SeccompRule::new(vec![c]))
                .map_err(sc)
        };
        let list = match refused {
            Refused::Always => Vec::new(),
            Refused::NonUnix => vec![rule(0, SeccompCmpOp::Ne, libc::AF_UNIX as u64)?],
            // The kernel reads an ioctl's request as 32 bits, so the upper half of the
            // register cannot be used to slip past a 32-bit comparison. (The constants'
            // type is the C library's and differs between targets, hence the casts.)
            #[allow(clippy::unnecessary_cast)]
            Refused::TerminalInput => vec![
                rule(1, SeccompCmpOp::Eq, libc::TIOCSTI as u64)?,
                rule(1, SeccompCmpOp::Eq, libc::TIOCLINUX as u64)?,
            ],
        };
        rules.insert(number, list);
    }
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(sc)?;
    let program: BpfProgram = filter
        .try_into()
        .map_err(|e: seccompiler::BackendError| ConfineError::Seccomp(e.to_string()))?;
    seccompiler::apply_filter(&program).map_err(|e| ConfineError::Seccomp(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partly_enforcing_kernel_is_told_what_it_lacks() {
        let v3 = partly_enforced(Some(ABI::V3));
        assert!(
            v3.contains("ABI 3") && v3.contains("TCP") && v3.contains("scoping"),
            "{v3}"
        );
        let v5 = partly_enforced(Some(ABI::V5));
        assert!(
            !v5.contains("TCP") && v5.contains("signal and abstract-socket"),
            "{v5}"
        );
        assert!(v5.contains("Commands ask"), "{v5}");
        assert!(partly_enforced(None).contains("ABI 0"));
    }
}
