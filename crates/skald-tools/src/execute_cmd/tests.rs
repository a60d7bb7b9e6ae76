//! Unit tests of `execute_cmd`, through the tool as a call runs it.

use super::*;
use serde_json::json;
use crate::test_support::{err, ok, run_in};
use skald_api::{CancellationToken, ExecutionOutcome, drive_execution};
use std::time::Instant;

#[tokio::test]
async fn runs_in_the_working_dir_with_labelled_output() {
    let d = tempfile::tempdir().unwrap();
    let dir = std::fs::canonicalize(d.path()).unwrap();
    let out = ok(
        &ExecuteCmd,
        &dir,
        json!({"command": "pwd; echo oops >&2; exit 3"}),
    )
    .await;
    assert_eq!(
        out,
        format!(
            "[exit code 3]\n--- stdout ---\n{}\n--- stderr ---\noops\n",
            dir.display()
        )
    );
    let out = ok(
        &ExecuteCmd,
        &dir,
        json!({"command": "true", "workdir": "/"}),
    )
    .await;
    assert_eq!(out, "[exit code 0]\n(no output)\n");
}

#[tokio::test]
async fn argument_errors() {
    let d = tempfile::tempdir().unwrap();
    let e = err(
        &ExecuteCmd,
        d.path(),
        json!({"command": "true", "workdir": "rel"}),
    )
    .await;
    assert_eq!(e, "invalid argument `workdir`: must be an absolute path");
    let e = err(
        &ExecuteCmd,
        d.path(),
        json!({"command": "true", "timeout": 0}),
    )
    .await;
    assert!(e.starts_with("invalid argument `timeout`"), "{e}");
    let e = err(&ExecuteCmd, d.path(), json!({"command": "  "})).await;
    assert!(e.starts_with("invalid argument `command`"), "{e}");
    let e = err(
        &ExecuteCmd,
        d.path(),
        json!({"command": "true", "workdir": "/no/such/dir"}),
    )
    .await;
    assert!(e.contains("is not a directory"), "{e}");
}

#[tokio::test]
async fn one_megabyte_of_output_is_truncated_correctly() {
    let d = tempfile::tempdir().unwrap();
    // 1,000,000 bytes on stdout, numbered lines so both ends can be recognised.
    let out = ok(
        &ExecuteCmd,
        d.path(),
        json!({"command": "seq -w 1 125000 | sed 's/$/xx/'"}),
    )
    .await;
    // Each line is "000001xx\n" = 9 bytes; 125000 lines = 1,125,000 bytes.
    assert!(out.starts_with("[exit code 0]\n--- stdout ---\n000001xx\n000002xx\n"));
    assert!(
        out.ends_with("124999xx\n125000xx\n"),
        "{}",
        &out[out.len() - 40..]
    );
    assert!(out.contains(&format!("[… {} bytes cut …]", 1_125_000 - OUTPUT_CAP)));
    assert!(out.len() < OUTPUT_CAP + 200);
}

#[cfg(target_os = "linux")]
fn alive(pid: i32) -> bool {
    // A killed child that nobody reaped yet is a zombie: it no longer runs.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

#[cfg(target_os = "linux")]
async fn wait_dead(pid: i32) -> bool {
    for _ in 0..100 {
        if !alive(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn background_children_do_not_survive_the_command() {
    let d = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let out = ok(
        &ExecuteCmd,
        d.path(),
        json!({"command": "sleep 100 & echo $!"}),
    )
    .await;
    let pid: i32 = out.lines().nth(2).unwrap().trim().parse().unwrap();
    assert!(wait_dead(pid).await, "background sleep {pid} survived");
    assert!(
        started.elapsed() < Duration::from_secs(50),
        "did not wait for the sleep"
    );
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn stop_kills_the_whole_process_group() {
    let d = tempfile::tempdir().unwrap();
    let pidfile = d.path().join("pid");
    let cmd = format!("sleep 100 & echo $! > {}; wait", pidfile.display());
    let exec = ExecuteCmd.run(&(), json!({"command": cmd}));
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let watch = pidfile.clone();
    tokio::spawn(async move {
        while std::fs::read_to_string(&watch)
            .map(|s| s.trim().is_empty())
            .unwrap_or(true)
        {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        trigger.cancel();
    });
    let outcome = ToolScope::new(d.path())
        .run(drive_execution(exec.as_ref(), &cancel))
        .await;
    assert_eq!(outcome, ExecutionOutcome::Cancelled);
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(wait_dead(pid).await, "grandchild {pid} survived the stop");
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn timeout_kills_the_whole_process_group() {
    let d = tempfile::tempdir().unwrap();
    let pidfile = d.path().join("pid");
    let cmd = format!(
        "sleep 100 & echo $! > {}; echo started; wait",
        pidfile.display()
    );
    let outcome = run_in(&ExecuteCmd, d.path(), json!({"command": cmd, "timeout": 1})).await;
    let ExecutionOutcome::Failed(msg) = outcome else {
        panic!("expected a timeout failure, got {outcome:?}");
    };
    assert!(msg.starts_with("the command timed out after 1 s"), "{msg}");
    assert!(
        msg.contains("started"),
        "output before the timeout is kept: {msg}"
    );
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        wait_dead(pid).await,
        "grandchild {pid} survived the timeout"
    );
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn output_is_kept_when_an_escaped_process_holds_the_pipe() {
    let d = tempfile::tempdir().unwrap();
    let pidfile = d.path().join("pid");
    let cmd = format!(
        "echo before; setsid sleep 30 & echo $! > {}; echo done",
        pidfile.display()
    );
    let out = ok(&ExecuteCmd, d.path(), json!({"command": cmd})).await;
    assert!(out.contains("before") && out.contains("done"), "{out}");
    // setsid took the sleep out of our group: clean it up ourselves.
    if let Ok(pid) = std::fs::read_to_string(&pidfile) {
        let _ = std::process::Command::new("kill").arg(pid.trim()).status();
    }
}

#[test]
fn label() {
    let l = Tool::<()>::describe(
        &ExecuteCmd,
        &json!({"command": "git\n status"}),
        ToolDescriptionLength::Short,
    );
    assert_eq!(l, "execute_cmd `git status`");
}
