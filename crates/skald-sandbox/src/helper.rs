//! Finding the helper, checking once that it can confine a process here, and the argument
//! list that runs a command through it.

use crate::Policy;
use std::ffi::{OsStr, OsString};
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The helper's file name; it is installed next to `skald` and the desktop app.
pub const HELPER_NAME: &str = "skald-sandbox";
/// Where to find the helper when it is not next to the running program (a packaged app
/// that keeps its binaries elsewhere, a test).
pub const ENV_HELPER: &str = "SKALD_SANDBOX_HELPER";
/// The helper's exit status when it could not confine itself: the command did not run.
pub const SETUP_FAILED: i32 = 125;
/// How the helper's own messages start on stderr, so Skald can tell them from the command's.
pub const PREFIX: &str = "skald-sandbox: ";

/// How long the start-up probe may take before the sandbox counts as unavailable.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// Whether commands can run sandboxed on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Availability {
    /// The helper confined a probe process; `detail` says with what (for `skald doctor`).
    Ready { helper: PathBuf, detail: String },
    /// Why not, in words a user can act on.
    Unavailable { why: String },
}

impl Availability {
    pub fn is_ready(&self) -> bool {
        matches!(self, Availability::Ready { .. })
    }
}

/// The helper: `$SKALD_SANDBOX_HELPER`, else next to the running program, else one folder
/// up (a test binary runs from `target/<profile>/deps`, the helper is in `target/<profile>`).
pub fn find_helper() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os(ENV_HELPER) {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!(
                "{ENV_HELPER} names {}, which is not a file",
                p.display()
            ))
        };
    }
    let exe = std::env::current_exe()
        .map_err(|e| format!("cannot find the running program to look beside it: {e}"))?;
    let name = format!("{HELPER_NAME}{}", std::env::consts::EXE_SUFFIX);
    let dir = exe.parent().map(PathBuf::from).unwrap_or_default();
    let candidates = [Some(dir.join(&name)), dir.parent().map(|d| d.join(&name))];
    candidates
        .into_iter()
        .flatten()
        .find(|p| p.is_file())
        .ok_or_else(|| {
            format!(
                "the sandbox helper `{name}` is not installed next to {}",
                exe.display()
            )
        })
}

/// Whether commands can be sandboxed here, checked once per process by confining a real
/// probe process (namespaces, masks, Landlock, seccomp) with the helper.
pub fn availability() -> &'static Availability {
    static AVAILABLE: OnceLock<Availability> = OnceLock::new();
    AVAILABLE.get_or_init(probe)
}

/// One probe, uncached: see `availability`.
pub fn probe() -> Availability {
    if !cfg!(target_os = "linux") {
        return Availability::Unavailable {
            why: format!(
                "the command sandbox is built for Linux only so far; on {} every command asks \
                 for approval",
                std::env::consts::OS
            ),
        };
    }
    let helper = match find_helper() {
        Ok(h) => h,
        Err(why) => return Availability::Unavailable { why },
    };
    match run_probe(&helper) {
        Ok(detail) => Availability::Ready { helper, detail },
        Err(why) => Availability::Unavailable { why },
    }
}

fn run_probe(helper: &std::path::Path) -> Result<String, String> {
    let mut child = std::process::Command::new(helper)
        .arg("--probe")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", helper.display()))?;
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if started.elapsed() > PROBE_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "the sandbox helper did not answer within {} s",
                    PROBE_TIMEOUT.as_secs()
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(2)),
            Err(e) => return Err(format!("waiting for the sandbox helper failed: {e}")),
        }
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("reading the sandbox helper's answer failed: {e}"))?;
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).trim().to_string());
    }
    let err = String::from_utf8_lossy(&out.stderr);
    let why = err.trim().trim_start_matches(PREFIX.trim_end());
    Err(if why.is_empty() {
        format!("the sandbox helper failed ({})", out.status)
    } else {
        why.trim().to_string()
    })
}

/// The helper's arguments that run `program args…` confined to `policy`, tied to this
/// process: when it ends in any way (killed outright included), the command and all it
/// started end too. Fails for a path that is not UTF-8 (the policy travels as JSON): the
/// command must then not run, since dropping the path could drop a mask.
pub fn command_args(
    policy: &Policy,
    program: &OsStr,
    args: &[OsString],
) -> Result<Vec<OsString>, String> {
    let json = serde_json::to_string(policy)
        .map_err(|e| format!("the sandbox policy cannot be written down: {e}"))?;
    let mut out = vec![
        OsString::from("--policy"),
        OsString::from(json),
        "--tied-to".into(),
        std::process::id().to_string().into(),
        "--".into(),
    ];
    out.push(program.to_os_string());
    out.extend(args.iter().cloned());
    Ok(out)
}
