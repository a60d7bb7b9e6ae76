//! `skald-sandbox`: confines itself to the policy it is given, then execs the command.
//!
//! `skald-sandbox --policy JSON -- PROGRAM ARGS…` runs PROGRAM confined; `skald-sandbox
//! --probe` confines itself to an empty policy and says how (Skald runs it once to know
//! whether the sandbox works here). Its own failures go to stderr prefixed `skald-sandbox: `
//! with exit status 125, and the command does not run: there is no unconfined fallback.

use std::ffi::OsString;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    match close_inherited().and_then(|()| run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{}{e}", skald_sandbox::PREFIX);
            ExitCode::from(skald_sandbox::SETUP_FAILED as u8)
        }
    }
}

fn run(args: Vec<OsString>) -> Result<(), String> {
    let usage = "usage: skald-sandbox --policy JSON [--tied-to PID] -- PROGRAM [ARGS…] | skald-sandbox --probe \
                 | skald-sandbox --serve JSON TMP_BASE KEPT (standard input: Skald's socket; KEPT: \
                 a JSON list of the folders its commands see in the private /tmp)";
    match args.first().and_then(|a| a.to_str()) {
        Some("--probe") => {
            own_session()?;
            let how = confine(&skald_sandbox::Policy::default())?;
            // The spawner gives each command a PID namespace: where that is refused,
            // commands must ask rather than run with processes that outlive them.
            pid_namespace()?;
            println!("{how}");
            Ok(())
        }
        Some("--policy") => {
            let policy = policy_arg(&args, usage)?;
            // `--tied-to PID`: the command ends when that process (Skald) does.
            let (tied_to, rest) = match args.get(2).and_then(|a| a.to_str()) {
                Some("--tied-to") => {
                    let pid = args
                        .get(3)
                        .and_then(|a| a.to_str())
                        .and_then(|a| a.parse::<i32>().ok())
                        .ok_or_else(|| usage.to_string())?;
                    (Some(pid), args.get(4..).unwrap_or_default())
                }
                _ => (None, &args[2..]),
            };
            if rest.first().and_then(|a| a.to_str()) != Some("--") || rest.len() < 2 {
                return Err(usage.to_string());
            }
            // Taken before anything else: if that process is already gone, nothing runs.
            let tie = tied_to.map(tie).transpose()?;
            own_session()?;
            confine(&policy)?;
            contained(&rest[1], &rest[2..], tie)
        }
        Some("--init") => init(&args),
        Some("--nest") => nest(&args),
        Some("--serve") => {
            let base = args.get(2).ok_or_else(|| usage.to_string())?;
            let kept: Vec<std::path::PathBuf> = args
                .get(3)
                .and_then(|a| a.to_str())
                .ok_or_else(|| usage.to_string())
                .and_then(|k| {
                    serde_json::from_str(k).map_err(|e| format!("bad folder list: {e}"))
                })?;
            serve(
                &policy_arg(&args, usage)?,
                std::path::Path::new(base),
                &kept,
            )
        }
        _ => Err(usage.to_string()),
    }
}

/// The policy given as the argument after `--policy` or `--serve`.
fn policy_arg(args: &[OsString], usage: &str) -> Result<skald_sandbox::Policy, String> {
    let json = args
        .get(1)
        .and_then(|a| a.to_str())
        .ok_or_else(|| usage.to_string())?;
    serde_json::from_str(json).map_err(|e| format!("bad policy: {e}"))
}

#[cfg(target_os = "linux")]
fn serve(
    policy: &skald_sandbox::Policy,
    tmp_base: &std::path::Path,
    kept: &[std::path::PathBuf],
) -> Result<(), String> {
    skald_sandbox::zygote::serve(policy, tmp_base, kept)
}

#[cfg(not(target_os = "linux"))]
fn serve(
    _: &skald_sandbox::Policy,
    _: &std::path::Path,
    _: &[std::path::PathBuf],
) -> Result<(), String> {
    Err(format!(
        "there is no command sandbox on {} yet",
        std::env::consts::OS
    ))
}

/// Closes every descriptor above standard error, before anything else runs: whatever Skald's
/// own parent left open without close-on-exec (a socket to a listener, a terminal) would
/// otherwise reach the command past the network fence and the file rules, which judge only
/// what the command opens itself. The spawner's requests come on standard input; it opens
/// everything else itself.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn close_inherited() -> Result<(), String> {
    // SAFETY: this runs first in `main`, before this process has opened or wrapped any
    // descriptor, so nothing in it owns a descriptor above 2: closing them cannot pull one
    // from under an owner (the I/O-safety rule `close_range` is unsafe for). The system
    // call (Linux 5.9; Landlock needs 5.13) takes integers only; called directly, so no C
    // library version is needed for it.
    let closed = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            3 as libc::c_uint,
            libc::c_uint::MAX,
            0 as libc::c_uint,
        )
    };
    if closed == 0 {
        Ok(())
    } else {
        Err(
            skald_sandbox::confine::ConfineError::Descriptors(std::io::Error::last_os_error())
                .to_string(),
        )
    }
}

#[cfg(not(target_os = "linux"))]
fn close_inherited() -> Result<(), String> {
    Ok(())
}

/// A session of its own for the one-shot helper (`confine::own_session`); the spawner
/// makes its own in `zygote::serve`.
#[cfg(target_os = "linux")]
fn own_session() -> Result<(), String> {
    skald_sandbox::confine::own_session(false).map_err(|e| e.to_string())
}

#[cfg(not(target_os = "linux"))]
fn own_session() -> Result<(), String> {
    Ok(())
}

#[cfg(target_os = "linux")]
fn pid_namespace() -> Result<(), String> {
    skald_sandbox::confine::own_pid_namespace().map_err(|e| e.to_string())
}

#[cfg(not(target_os = "linux"))]
fn pid_namespace() -> Result<(), String> {
    Ok(())
}

#[cfg(target_os = "linux")]
fn confine(policy: &skald_sandbox::Policy) -> Result<String, String> {
    skald_sandbox::confine::confine(policy).map_err(|e| e.to_string())
}

#[cfg(not(target_os = "linux"))]
fn confine(_: &skald_sandbox::Policy) -> Result<String, String> {
    Err(format!(
        "there is no command sandbox on {} yet",
        std::env::consts::OS
    ))
}

/// Runs the command in a PID namespace of its own under a small first process
/// ([`init`]), and exits with its status. When that first process ends — the command
/// exited, or this helper was killed (Skald stops a hook, an MCP server, a command by
/// killing the helper's group, or only the helper) — the kernel kills everything else in
/// the namespace: a double fork or `setsid … &` cannot outlive its command.
///
/// With `tie` (`--tied-to`), it also ends when that process does: Skald may be killed
/// outright, with no chance to stop what it started, and a command it kept running in
/// the background would then run on with nobody to stop it.
#[cfg(target_os = "linux")]
fn contained(program: &OsString, args: &[OsString], tie: Option<Tie>) -> Result<(), String> {
    pid_namespace()?;
    // Itself again, as the namespace's first process: the command cannot be that, since
    // it would not die with this helper (only a process may ask to).
    let mut first = std::process::Command::new("/proc/self/exe")
        .arg("--init")
        .arg(std::process::id().to_string())
        .arg("--")
        .arg(program)
        .args(args)
        .spawn()
        .map_err(|e| format!("cannot start the command's first process: {e}"))?;
    if let Some(tie) = tie {
        end_with(&first, &tie);
    }
    let status = first
        .wait()
        .map_err(|e| format!("waiting for the command failed: {e}"))?;
    std::process::exit(exit_code(status))
}

#[cfg(not(target_os = "linux"))]
fn contained(program: &OsString, args: &[OsString], _: Option<Tie>) -> Result<(), String> {
    Err(exec(program, args))
}

/// The process a command is tied to, to wait on (see [`contained`]).
#[cfg(target_os = "linux")]
type Tie = std::os::fd::OwnedFd;
#[cfg(not(target_os = "linux"))]
type Tie = ();

#[cfg(target_os = "linux")]
fn tie(pid: i32) -> Result<Tie, String> {
    rustix::process::Pid::from_raw(pid)
        .ok_or_else(|| format!("bad process id {pid}"))
        .and_then(|p| {
            rustix::process::pidfd_open(p, rustix::process::PidfdFlags::empty())
                .map_err(|e| format!("the program that started the command ({pid}) is gone: {e}"))
        })
}

#[cfg(not(target_os = "linux"))]
fn tie(_: i32) -> Result<Tie, String> {
    Ok(())
}

/// Returns once `first` (the command's first process) has exited, or once `tie` has,
/// after killing `first`: as the first process of the command's PID namespace, its end
/// ends every process the command started.
#[cfg(target_os = "linux")]
fn end_with(first: &std::process::Child, tie: &Tie) {
    use rustix::event::{PollFd, PollFlags, poll};
    // Not yet reaped, so its pid is its own.
    let Some(own) = rustix::process::Pid::from_raw(first.id() as i32)
        .and_then(|p| rustix::process::pidfd_open(p, rustix::process::PidfdFlags::empty()).ok())
    else {
        return;
    };
    loop {
        let mut fds = [
            PollFd::new(&own, PollFlags::IN),
            PollFd::new(tie, PollFlags::IN),
        ];
        match poll(&mut fds, None) {
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => return,
            Ok(_) => {}
        }
        if !fds[0].revents().is_empty() {
            return;
        }
        if !fds[1].revents().is_empty() {
            let _ = rustix::process::pidfd_send_signal(&own, rustix::process::Signal::KILL);
            return;
        }
    }
}

/// `--init HELPER_PID -- PROGRAM ARGS…`: the first process of a command's PID namespace.
/// It dies with the helper that started it (checked after asking, in case the helper went
/// first), runs the command and exits with its status, which ends the namespace.
#[cfg(target_os = "linux")]
fn init(args: &[OsString]) -> Result<(), String> {
    let usage = "usage: skald-sandbox --init HELPER_PID -- PROGRAM [ARGS…]";
    let helper = args.get(1).and_then(|a| a.to_str()).ok_or(usage)?;
    if args.get(2).and_then(|a| a.to_str()) != Some("--") || args.len() < 4 {
        return Err(usage.to_string());
    }
    rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))
        .map_err(|e| format!("cannot tie the command to its helper: {e}"))?;
    // `getppid` is 0 for a namespace's first process; /proc (the system's) names the
    // parent as the helper sees itself.
    let stat = std::fs::read_to_string("/proc/self/stat")
        .map_err(|e| format!("cannot read /proc/self/stat: {e}"))?;
    let parent = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().nth(1));
    if parent != Some(helper) {
        return Err("its helper ended before the command started".to_string());
    }
    // The command in a Landlock domain nested in this one (`--nest`), so it cannot trace
    // this process to take back what ties it to the helper.
    let status = std::process::Command::new("/proc/self/exe")
        .arg("--nest")
        .arg("--")
        .args(&args[3..])
        .status()
        .map_err(|e| format!("cannot run {}: {e}", args[3].to_string_lossy()))?;
    std::process::exit(exit_code(status))
}

/// `--nest -- PROGRAM ARGS…`: a nested Landlock domain (`confine::nested_domain`), then
/// the command in this process's place.
#[cfg(target_os = "linux")]
fn nest(args: &[OsString]) -> Result<(), String> {
    if args.get(1).and_then(|a| a.to_str()) != Some("--") || args.len() < 3 {
        return Err("usage: skald-sandbox --nest -- PROGRAM [ARGS…]".to_string());
    }
    skald_sandbox::confine::nested_domain().map_err(|e| e.to_string())?;
    Err(exec(&args[2], &args[3..]))
}

#[cfg(not(target_os = "linux"))]
fn nest(_: &[OsString]) -> Result<(), String> {
    Err("--nest is for Linux".to_string())
}

#[cfg(not(target_os = "linux"))]
fn init(_: &[OsString]) -> Result<(), String> {
    Err("--init is for Linux".to_string())
}

/// The status to exit with for a command that ended with `status`: its code, or 128 plus
/// the signal that killed it, as a shell reports it.
#[cfg(target_os = "linux")]
fn exit_code(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1)
}

/// Replaces this process with the command; returns only if that failed.
fn exec(program: &OsString, args: &[OsString]) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        let e = std::process::Command::new(program).args(args).exec();
        format!("cannot run {}: {e}", program.to_string_lossy())
    }
    #[cfg(not(unix))]
    {
        let _ = args;
        format!("cannot run {} here", program.to_string_lossy())
    }
}
