//! `skald cron` end to end: jobs added and managed from the command line, run by
//! `skald cron run` processes against a scripted model server on 127.0.0.1.

use serde_json::{Value, json};
use skald_testkit::{ScriptedServer, answer};
use std::process::Stdio;

use crate::common::{events, ok, skald};

/// Adds a job for the researcher and returns its id.
fn add_job(data: &std::path::Path, work: &std::path::Path, cron: &str) -> i64 {
    let out = skald(data, None)
        .args([
            "cron",
            "add",
            "--agent",
            "researcher",
            "--name",
            "digest",
            "--tz",
            "UTC",
        ])
        .args([
            "--prompt",
            "Summarise the notes",
            "--cron",
            cron,
            "--json",
            "--cwd",
        ])
        .arg(work)
        .output()
        .unwrap();
    let job: Value = serde_json::from_str(&ok(&out)).unwrap();
    job["id"].as_i64().unwrap()
}

/// Moves a job's next run time into the past: Skald was down when it was due.
fn due_since(data: &std::path::Path, job: i64, at: i64) {
    let store = skald_store::Store::open(data.join("skald.db")).unwrap();
    let seen = store.get_job(job).unwrap().next_run_at.unwrap();
    assert!(store.advance_job(job, seen, Some(at)).unwrap());
}

fn runs(data: &std::path::Path, job: i64) -> Vec<Value> {
    let out = skald(data, None)
        .args(["cron", "runs", &job.to_string(), "--json"])
        .output()
        .unwrap();
    serde_json::from_str::<Value>(&ok(&out))
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn jobs_are_added_listed_toggled_and_removed_with_clear_errors() {
    let (data, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let id = add_job(data.path(), work.path(), "0 30 9 * * MON-FRI");
    let list = |d: &std::path::Path| -> Value {
        serde_json::from_str(&ok(&skald(d, None)
            .args(["cron", "list", "--json"])
            .output()
            .unwrap()))
        .unwrap()
    };
    let jobs = list(data.path());
    assert_eq!(jobs[0]["cron"], "0 30 9 * * MON-FRI");
    assert_eq!(jobs[0]["timezone"], "UTC");
    assert_eq!(jobs[0]["missed_policy"], "once");
    assert!(jobs[0]["next_run_at"].as_i64().unwrap() > skald_store::now_ms());
    ok(&skald(data.path(), None)
        .args(["cron", "disable", &id.to_string()])
        .output()
        .unwrap());
    assert_eq!(list(data.path())[0]["enabled"], false);
    let text = ok(&skald(data.path(), None)
        .args(["cron", "enable", &id.to_string()])
        .output()
        .unwrap());
    assert!(text.contains("next run"), "{text}");
    assert_eq!(list(data.path())[0]["enabled"], true);
    let text = ok(&skald(data.path(), None)
        .args(["cron", "list"])
        .output()
        .unwrap());
    assert!(
        text.contains("digest") && text.contains("agent researcher"),
        "{text}"
    );

    let fails = |args: &[&str], needle: &str| {
        let out = skald(data.path(), None).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
    };
    let base = [
        "cron",
        "add",
        "--agent",
        "researcher",
        "--prompt",
        "p",
        "--cron",
    ];
    fails(
        &[&base[..], &["61 * * * *"]].concat(),
        "invalid cron expression",
    );
    fails(
        &[&base[..], &["* * * * *", "--tz", "Mars/Olympus"]].concat(),
        "unknown time zone",
    );
    fails(
        &[
            "cron",
            "add",
            "--agent",
            "main",
            "--prompt",
            "p",
            "--cron",
            "* * * * *",
        ],
        "not a task agent",
    );
    fails(
        &[&base[..], &["* * * * *", "--missed", "sometimes"]].concat(),
        "--missed",
    );
    fails(&["cron", "rm", "999"], "does not exist");
    ok(&skald(data.path(), None)
        .args(["cron", "rm", &id.to_string()])
        .output()
        .unwrap());
    assert_eq!(list(data.path()), json!([]));
}

/// Two scheduler processes on one database: the due occurrence runs once.
#[test]
fn two_schedulers_fire_a_job_once() {
    let server = ScriptedServer::new(vec![answer("Digest ready."), answer("(a second run)")]);
    let (data, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    // Yearly: only the occurrence made due below can run during the test.
    let job = add_job(data.path(), work.path(), "0 0 0 1 1 *");
    due_since(data.path(), job, skald_store::now_ms() - 1000);
    let spawn = || {
        skald(data.path(), Some(&server))
            .args(["cron", "run", "--once"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    ok(&a.wait_with_output().unwrap());
    ok(&b.wait_with_output().unwrap());
    let runs = runs(data.path(), job);
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0]["status"], "done");
    assert_eq!(runs[0]["result"], "Digest ready.");
    assert_eq!(server.recorded().len(), 1);
    // The run had a fresh background session with the job's agent.
    let store = skald_store::Store::open(data.path().join("skald.db")).unwrap();
    let s = store
        .get_session(runs[0]["session_id"].as_i64().unwrap())
        .unwrap();
    assert_eq!(s.kind, skald_store::SessionKind::Background);
    assert_eq!(s.agent_id, "researcher");
    assert_eq!(
        s.working_dir.as_deref(),
        Some(
            std::fs::canonicalize(work.path())
                .unwrap()
                .to_str()
                .unwrap()
        )
    );
    // And the job moved on to next year.
    let next = store.get_job(job).unwrap().next_run_at.unwrap();
    assert!(next > skald_store::now_ms() + 86_400_000);
}

/// After a downtime, an hourly job that missed several occurrences runs once for all.
#[test]
fn missed_runs_after_a_downtime_run_once() {
    let server = ScriptedServer::new(vec![answer("Caught up."), answer("(a second run)")]);
    let (data, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let job = add_job(data.path(), work.path(), "0 0 * * * *");
    let hour = 3_600_000;
    let now = skald_store::now_ms();
    due_since(data.path(), job, now - now % hour - 4 * hour);
    ok(&skald(data.path(), Some(&server))
        .args(["cron", "run", "--once"])
        .output()
        .unwrap());
    let runs = runs(data.path(), job);
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert!(runs[0]["occurrences"].as_i64().unwrap() >= 5, "{runs:?}");
    // The agent is told it stands for the missed runs.
    let prompt = server.recorded()[0].body["messages"].to_string();
    assert!(
        prompt.contains("this one run stands for all of them"),
        "{prompt}"
    );
    // Running again finds nothing due.
    ok(&skald(data.path(), Some(&server))
        .args(["cron", "run", "--once"])
        .output()
        .unwrap());
    assert_eq!(server.recorded().len(), 1);
}

/// Ctrl-C stops a running job; the next start takes the interrupted run over and
/// finishes it in the same session.
#[cfg(unix)]
#[test]
fn a_run_interrupted_by_shutdown_is_rerun_at_start() {
    let stalled = format!(
        "data: {}\n\nHOLD",
        json!({"choices": [{"index": 0, "delta": {"content": "Working"}}]})
    );
    let server = ScriptedServer::new(vec![
        (200, "text/event-stream", stalled),
        answer("Finished after the restart."),
    ]);
    let (data, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let job = add_job(data.path(), work.path(), "0 0 0 1 1 *");
    due_since(data.path(), job, skald_store::now_ms() - 1000);
    let child = skald(data.path(), Some(&server))
        .args(["cron", "run"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while server.recorded().is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the job never called the model"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    use nix::sys::signal::{Signal, kill};
    kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        Signal::SIGINT,
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let before = runs(data.path(), job);
    assert_eq!(before[0]["status"], "interrupted");

    ok(&skald(data.path(), Some(&server))
        .args(["cron", "run", "--once"])
        .output()
        .unwrap());
    let after = runs(data.path(), job);
    assert_eq!(after.len(), 1, "the same run, not a new one");
    assert_eq!(after[0]["status"], "done");
    assert_eq!(after[0]["result"], "Finished after the restart.");
    assert_eq!(after[0]["session_id"], before[0]["session_id"]);
    // The model saw what the interrupted run had said.
    let second = server.recorded()[1].body["messages"].to_string();
    assert!(second.contains("Working"), "{second}");
}

/// An agent lists jobs and agents, activates the config group, then turns a job off and
/// deletes it; before activating, the config tools are neither offered nor run.
#[test]
fn an_agent_manages_jobs_after_activating_the_config_group() {
    use skald_testkit::{tool_call, tool_calls};
    let (data, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let job = add_job(data.path(), work.path(), "0 30 9 * * *");
    let toggle = format!(r#"{{"kind": "cron", "id": {job}, "enabled": false}}"#);
    let delete = format!(r#"{{"job_id": {job}}}"#);
    let server = ScriptedServer::new(vec![
        tool_calls(&[
            ("l1", "list_items", r#"{"type": "cron"}"#),
            ("l2", "list_items", r#"{"type": "agents"}"#),
            ("x1", "toggle_item", &toggle),
        ]),
        tool_call("a1", "activate_tools", r#"{"groups": ["config"]}"#),
        tool_call("x2", "toggle_item", &toggle),
        tool_call("x3", "delete_cron_job", &delete),
        answer("The digest job is gone."),
    ]);
    let out = skald(data.path(), Some(&server))
        .args(["exec", "--json", "--approve", "all", "--cwd"])
        .arg(work.path())
        .arg("stop the digest job")
        .output()
        .unwrap();
    let stdout = ok(&out);
    let ev = events(&stdout);
    let result = |id: &str| crate::common::result(&ev, id);
    assert!(result("l1").contains("digest"), "{}", result("l1"));
    assert!(result("l2").contains("Researcher") && result("l2").contains("instructions"));
    assert!(
        result("x1").starts_with("tool_error") && result("x1").contains("activate_tools"),
        "{}",
        result("x1")
    );
    assert!(result("a1").starts_with("tool_done"));
    assert!(result("x2").contains("is off"), "{}", result("x2"));
    assert!(
        result("x3").contains("Deleted scheduled job"),
        "{}",
        result("x3")
    );
    let offered = |i: usize| -> Vec<String> {
        server.recorded()[i].body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(!offered(1).contains(&"toggle_item".to_string()));
    assert!(offered(2).contains(&"toggle_item".to_string()));
    assert!(offered(2).contains(&"delete_cron_job".to_string()));
    let store = skald_store::Store::open(data.path().join("skald.db")).unwrap();
    assert!(store.list_jobs().unwrap().is_empty());
}

/// A scheduled run's notification lands in the home chat as one read_notification call,
/// and the chat is continued with it.
#[test]
fn a_runs_notification_reaches_the_home_chat() {
    use skald_testkit::tool_call;
    let server = ScriptedServer::routed(vec![
        (
            "meticulous researcher",
            vec![
                tool_call(
                    "n1",
                    "notify",
                    r#"{"source": "digest", "event_type": "digest_ready", "summary": "3 new notes", "refs": ["notes/a.md"]}"#,
                ),
                answer("Digest sent."),
            ],
        ),
        ("", vec![answer("You have a digest: 3 new notes.")]),
    ]);
    let (data, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let job = add_job(data.path(), work.path(), "0 0 0 1 1 *");
    due_since(data.path(), job, skald_store::now_ms() - 1000);
    ok(&skald(data.path(), Some(&server))
        .args(["cron", "run", "--once"])
        .output()
        .unwrap());
    let store = skald_store::Store::open(data.path().join("skald.db")).unwrap();
    let run = &runs(data.path(), job)[0];
    let bg = store
        .get_session(run["session_id"].as_i64().unwrap())
        .unwrap();
    let home = bg.home_session_id.expect("a run has a home chat");
    assert_eq!(store.get_session(home).unwrap().title, "Home");
    let calls = store.list_tool_calls(home).unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].name, "read_notification");
    let v: Value = serde_json::from_str(calls[0].result.as_deref().unwrap()).unwrap();
    assert_eq!(v["notifications"][0]["summary"], "3 new notes");
    assert_eq!(v["notifications"][0]["refs"], json!(["notes/a.md"]));
    let last = store.list_messages(home).unwrap().pop().unwrap();
    assert_eq!(last.content, "You have a digest: 3 new notes.");
}

#[test]
fn a_runs_changes_are_restorable_from_the_run() {
    use skald_testkit::tool_call;
    let server = ScriptedServer::routed(vec![
        (
            "meticulous researcher",
            vec![
                tool_call(
                    "w1",
                    "write_file",
                    r##"{"path": "digest.md", "content": "# Digest\n"}"##,
                ),
                answer("Digest written."),
            ],
        ),
        ("", vec![answer("ok")]),
    ]);
    let (data, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::write(work.path().join("digest.md"), "last week's digest\n").unwrap();
    let job = add_job(data.path(), work.path(), "0 0 0 1 1 *");
    due_since(data.path(), job, skald_store::now_ms() - 1000);
    ok(&skald(data.path(), Some(&server))
        .args(["cron", "run", "--once", "--approve", "all"])
        .output()
        .unwrap());
    assert_eq!(
        std::fs::read_to_string(work.path().join("digest.md")).unwrap(),
        "# Digest\n"
    );
    let text = ok(&skald(data.path(), None)
        .args(["cron", "runs", &job.to_string()])
        .output()
        .unwrap());
    let session = runs(data.path(), job)[0]["session_id"].as_i64().unwrap();
    assert!(
        text.contains(&format!("skald checkpoints list {session}")),
        "{text}"
    );
    let out = ok(&skald(data.path(), None)
        .args(["checkpoints", "list", &session.to_string(), "--json"])
        .output()
        .unwrap());
    let cps: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(cps[0]["changes"]["files"][0]["path"], "digest.md");
    ok(&skald(data.path(), None)
        .args(["checkpoints", "restore", &cps[0]["id"].to_string()])
        .output()
        .unwrap());
    assert_eq!(
        std::fs::read_to_string(work.path().join("digest.md")).unwrap(),
        "last week's digest\n"
    );
}
