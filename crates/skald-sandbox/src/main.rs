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
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{}{e}", skald_sandbox::PREFIX);
            ExitCode::from(skald_sandbox::SETUP_FAILED as u8)
        }
    }
}

fn run(args: Vec<OsString>) -> Result<(), String> {
    let usage = "usage: skald-sandbox --policy JSON -- PROGRAM [ARGS…] | skald-sandbox --probe \
                 | skald-sandbox --serve JSON TMP_BASE (standard input: Skald's socket)";
    match args.first().and_then(|a| a.to_str()) {
        Some("--probe") => {
            let how = confine(&skald_sandbox::Policy::default())?;
            println!("{how}");
            Ok(())
        }
        Some("--policy") => {
            let policy = policy_arg(&args, usage)?;
            if args.get(2).and_then(|a| a.to_str()) != Some("--") || args.len() < 4 {
                return Err(usage.to_string());
            }
            confine(&policy)?;
            Err(exec(&args[3], &args[4..]))
        }
        Some("--serve") => {
            let base = args.get(2).ok_or_else(|| usage.to_string())?;
            serve(&policy_arg(&args, usage)?, std::path::Path::new(base))
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
fn serve(policy: &skald_sandbox::Policy, tmp_base: &std::path::Path) -> Result<(), String> {
    skald_sandbox::zygote::serve(policy, tmp_base)
}

#[cfg(not(target_os = "linux"))]
fn serve(_: &skald_sandbox::Policy, _: &std::path::Path) -> Result<(), String> {
    Err(format!(
        "there is no command sandbox on {} yet",
        std::env::consts::OS
    ))
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
