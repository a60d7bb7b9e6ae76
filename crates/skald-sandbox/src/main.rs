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
    let usage = "usage: skald-sandbox --policy JSON -- PROGRAM [ARGS…] | skald-sandbox --probe \
                 | skald-sandbox --serve JSON TMP_BASE KEPT (standard input: Skald's socket; KEPT: \
                 a JSON list of the folders its commands see in the private /tmp)";
    match args.first().and_then(|a| a.to_str()) {
        Some("--probe") => {
            own_session()?;
            let how = confine(&skald_sandbox::Policy::default())?;
            println!("{how}");
            Ok(())
        }
        Some("--policy") => {
            let policy = policy_arg(&args, usage)?;
            if args.get(2).and_then(|a| a.to_str()) != Some("--") || args.len() < 4 {
                return Err(usage.to_string());
            }
            own_session()?;
            confine(&policy)?;
            Err(exec(&args[3], &args[4..]))
        }
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
