//! The crash suite: `skald exec` turns against a scripted model, killed with SIGKILL at
//! chosen points — while the model streams, while a file is written, while a call waits for
//! approval, while a command runs, while a sub-agent works — 50 times (`SKALD_CRASH_KILLS`),
//! at random offsets from those points (`SKALD_CRASH_SEED`). After every kill:
//! - the database passes `PRAGMA integrity_check`;
//! - every piece of answer text the run showed, every user message it echoed and every
//!   result it reported is in the store;
//! - the file the agent writes is absent or exactly one of the versions it wrote, never a
//!   mix or a prefix;
//! - when the chat goes on, every call the kill left unfinished has been re-run or marked
//!   interrupted before the new turn starts.
//!
//! At the end every chat is continued once more without a kill: nothing is left running,
//! pending or streaming, and no temporary file of an interrupted write is left behind.

#![cfg(unix)]

use crate::common::{skald, spawn_json};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::{Value, json};
use skald_store::{MessageStatus, Store};
use skald_testkit::{Reply, ScriptedServer, answer, dripped, sse, tool_call};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Child;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// The researcher's system prompt contains this; its requests are routed by it.
const RESEARCHER: &str = "meticulous researcher";
/// How many bytes each version of the written file has.
const DOC_BYTES: usize = 200_000;
/// The scripted command creates this file when it starts and removes it when it ends.
const RUNNING: &str = "command.running";

/// A small deterministic generator, so a failing run can be repeated from its seed.
struct Rng(u64);

/// How many kills the suite makes (`SKALD_CRASH_KILLS`, 50 by default).
fn crash_kills() -> usize {
    std::env::var("SKALD_CRASH_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50)
}

/// The seed of the kills' offsets (`SKALD_CRASH_SEED`): the same one repeats a run.
fn crash_seed() -> u64 {
    std::env::var("SKALD_CRASH_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5EED_C0FFEE)
}

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The file's k-th version: one line repeated, so a prefix or a mix is never a version.
fn version(k: usize) -> String {
    let line = format!("version {k:04} of the document\n");
    line.repeat(DOC_BYTES / line.len() + 1)
}

/// A text answer sent one word every 15 ms; every word is unique to this answer, so each
/// piece the run showed can be looked for in the store.
fn slow_answer(tag: &str, words: usize) -> Reply {
    let chunks: Vec<Value> = (0..words)
        .map(|j| json!({"choices": [{"index": 0, "delta": {"content": format!("{tag}w{j} ")}}]}))
        .chain([json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})])
        .collect();
    dripped(15, (200, "text/event-stream", sse(&chunks)))
}

/// The chat's model: a write, a command (which waits for approval), a delegation to the
/// researcher, a streamed answer — over and over. Kills put the script out of step with
/// the turns, which is the point: any reply may meet any state.
fn chat_replies(n: usize) -> Vec<Reply> {
    (0..n)
        .map(|k| match k % 4 {
            0 => tool_call(
                &format!("w{k}"),
                "write_file",
                &json!({"path": "doc.txt", "content": version(k)}).to_string(),
            ),
            1 => tool_call(
                &format!("x{k}"),
                "execute_cmd",
                &json!({"command": format!("touch {RUNNING}; sleep 0.4; echo {k} >> log.txt; rm {RUNNING}")})
                    .to_string(),
            ),
            2 => tool_call(
                &format!("t{k}"),
                "execute_task",
                &json!({"mode": "sync", "title": "Check the document", "agent_id": "researcher",
                        "prompt": "What does doc.txt say?"})
                .to_string(),
            ),
            _ => slow_answer(&format!("a{k}"), 40),
        })
        .collect()
}

/// The researcher reads the file, then answers slowly.
fn researcher_replies(n: usize) -> Vec<Reply> {
    (0..n)
        .map(|k| match k % 2 {
            0 => tool_call(
                &format!("r{k}"),
                "read_file",
                r#"{"path": "doc.txt", "max_lines": 2}"#,
            ),
            _ => slow_answer(&format!("s{k}"), 20),
        })
        .collect()
}

/// Where a run is killed: after the first event `at` accepts, plus a random delay of up to
/// `jitter_ms`.
struct KillPoint {
    name: &'static str,
    at: fn(&Value) -> bool,
    /// Then also wait until this file appears in the folder (a command's own marker).
    then_file: Option<&'static str>,
    jitter_ms: u64,
}

const KILL_POINTS: &[KillPoint] = &[
    KillPoint {
        name: "model stream",
        at: |e| e["type"] == "token_delta",
        then_file: None,
        jitter_ms: 300,
    },
    KillPoint {
        name: "file write",
        at: |e| e["type"] == "tool_start" && e["name"] == "write_file",
        then_file: None,
        jitter_ms: 40,
    },
    KillPoint {
        name: "approval wait",
        at: |e| e["type"] == "approval_required",
        then_file: None,
        jitter_ms: 200,
    },
    KillPoint {
        name: "running command",
        at: |e| e["type"] == "approval_required",
        then_file: Some(RUNNING),
        jitter_ms: 350,
    },
    KillPoint {
        name: "sub-agent",
        at: |e| e["type"] == "agent_start",
        then_file: None,
        jitter_ms: 500,
    },
];

/// Answers every pending approval in the Inbox through `skald inbox`, each after a random
/// delay, until stopped — a person clicking Approve, sometimes while nobody waits.
fn approver(data: &Path, seed: u64, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    let data = data.to_path_buf();
    std::thread::spawn(move || {
        let mut rng = Rng(seed);
        while !stop.load(Ordering::Relaxed) {
            let out = skald(&data, None)
                .args(["inbox", "list", "--json"])
                .output()
                .unwrap();
            let items: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap_or_default();
            for item in items {
                if item["kind"] != "approval" {
                    continue;
                }
                std::thread::sleep(Duration::from_millis(rng.below(400)));
                let id = item["id"].as_i64().unwrap().to_string();
                // It may have been answered meanwhile, or its turn killed: both are fine.
                let _ = skald(&data, None)
                    .args(["inbox", "answer", &id, "approve"])
                    .output();
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    })
}

/// One `skald exec --json` run in `work`, continuing `session` if given.
fn start(
    server: &ScriptedServer,
    data: &Path,
    work: &Path,
    session: Option<i64>,
    prompt: &str,
) -> (Child, Receiver<Value>) {
    let mut cmd = skald(data, Some(server));
    cmd.args(["exec", "--json", "--approve", "inbox", "--cwd"])
        .arg(work);
    match session {
        Some(id) => {
            cmd.args(["--session", &id.to_string()]);
        }
        None => {
            // Writes in the folder without asking; commands still wait for approval.
            cmd.arg("--allow-write").arg(work);
        }
    }
    cmd.arg(prompt);
    spawn_json(cmd)
}

/// Everything one run showed before it ended or was killed.
#[derive(Default)]
struct Shown {
    /// The chat continued, if the run continued one.
    continued: Option<i64>,
    events: Vec<Value>,
}

impl Shown {
    /// The run's chat: the one continued, or the new one its events name. (A continued
    /// chat's resumed calls are reported before its turn's first event names it.)
    fn session(&self) -> Option<i64> {
        self.continued.or_else(|| {
            self.events
                .iter()
                .find_map(|e| e.get("session_id").and_then(Value::as_i64))
        })
    }
    fn started_turn(&self, prompt: &str) -> bool {
        self.events
            .iter()
            .any(|e| e["type"] == "user_message" && e["text"] == prompt)
    }
    fn finished(&self) -> bool {
        self.events.iter().any(|e| e["type"] == "done")
    }
}

/// Reads events until `point` is reached (then waits its jitter) or the run ends.
fn run_until(
    rx: &Receiver<Value>,
    work: &Path,
    shown: &mut Shown,
    point: &KillPoint,
    rng: &mut Rng,
) -> bool {
    // Armed once the event is seen; fires when the marker file (if any) is there too.
    let mut armed = false;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if armed && point.then_file.is_none_or(|f| work.join(f).exists()) {
            let until = Instant::now() + Duration::from_millis(rng.below(point.jitter_ms + 1));
            // Keep collecting what is shown until the moment of the kill.
            while let Some(left) = until.checked_duration_since(Instant::now()) {
                match rx.recv_timeout(left) {
                    Ok(ev) => shown.events.push(ev),
                    Err(_) => break,
                }
            }
            return !shown.finished();
        }
        assert!(
            Instant::now() < deadline,
            "the run stalled; saw {:?}",
            shown.events
        );
        match rx.recv_timeout(Duration::from_millis(20)) {
            Ok(ev) => {
                armed |= (point.at)(&ev);
                let done = ev["type"] == "done";
                shown.events.push(ev);
                if done {
                    return false;
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return false,
        }
    }
}

/// Kills `child` and collects what it had already written to its stdout.
fn kill_9(mut child: Child, rx: &Receiver<Value>, shown: &mut Shown) {
    kill(Pid::from_raw(child.id() as i32), Signal::SIGKILL).unwrap();
    child.wait().unwrap();
    // Lines the run wrote before it died are still in the pipe: they were shown.
    while let Ok(ev) = rx.recv_timeout(Duration::from_millis(200)) {
        shown.events.push(ev);
    }
}

/// Every message of every chat, by session.
fn all_messages(store: &Store) -> BTreeMap<i64, Vec<skald_store::Message>> {
    store
        .list_sessions()
        .unwrap()
        .into_iter()
        .map(|s| (s.id, store.list_messages(s.id).unwrap()))
        .collect()
}

/// The unfinished calls of every chat: (session, call id).
fn unfinished_calls(store: &Store) -> BTreeSet<(i64, String)> {
    let mut out = BTreeSet::new();
    for s in store.list_sessions().unwrap() {
        for c in store.list_tool_calls(s.id).unwrap() {
            if c.status.is_unfinished() {
                out.insert((s.id, c.tool_call_id));
            }
        }
    }
    out
}

/// The checks that hold after every kill.
fn check_after_kill(data: &Path, work: &Path, shown: &Shown, what: &str) {
    let store = Store::open(data.join("skald.db")).unwrap();
    store
        .integrity_check()
        .unwrap_or_else(|e| panic!("{what}: integrity check failed: {e}"));
    let messages = all_messages(&store);
    let stored_text: String = messages
        .values()
        .flatten()
        .map(|m| m.content.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    for ev in &shown.events {
        match ev["type"].as_str() {
            Some("token_delta") => {
                let piece = ev["text"].as_str().unwrap();
                assert!(
                    stored_text.contains(piece),
                    "{what}: the shown text {piece:?} is not in the store"
                );
            }
            Some("user_message") => {
                let (sid, mid) = (
                    ev["session_id"].as_i64().unwrap(),
                    ev["message_id"].as_i64().unwrap(),
                );
                assert!(
                    messages[&sid]
                        .iter()
                        .any(|m| m.id == mid && m.content == ev["text"]),
                    "{what}: the user's message {ev} is not in the store"
                );
            }
            Some("tool_done") | Some("tool_error") => {
                let id = ev["tool_call_id"].as_str().unwrap();
                let sid = shown.session().unwrap();
                let call = store
                    .list_tool_calls(sid)
                    .unwrap()
                    .into_iter()
                    .find(|c| c.tool_call_id == id)
                    .unwrap_or_else(|| panic!("{what}: the reported call {id} is not stored"));
                assert!(
                    !call.status.is_unfinished(),
                    "{what}: {id} was reported finished but is stored as {:?}",
                    call.status
                );
            }
            _ => {}
        }
    }
    check_files(work, what);
}

/// The written file is whole: absent, or exactly one version.
fn check_files(work: &Path, what: &str) {
    match std::fs::read_to_string(work.join("doc.txt")) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => panic!("{what}: doc.txt unreadable: {e}"),
        Ok(text) => {
            let k: usize = text
                .strip_prefix("version ")
                .and_then(|r| r.get(..4))
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| {
                    panic!(
                        "{what}: doc.txt is not a version: {:?}",
                        &text[..text.len().min(60)]
                    )
                });
            assert!(
                text == version(k),
                "{what}: doc.txt is a partial or mixed version {k}"
            );
        }
    }
}

#[test]
fn fifty_kills_lose_nothing_and_leave_no_half_written_file() {
    let (kills, seed) = (crash_kills(), crash_seed());
    eprintln!("crash suite: {kills} kills, seed {seed} (SKALD_CRASH_SEED repeats this run)");
    let mut rng = Rng(seed | 1);
    let server = ScriptedServer::routed(vec![
        (RESEARCHER, researcher_replies(40 * kills + 100)),
        ("", chat_replies(40 * kills + 100)),
    ]);
    let (data, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    // Histories carry every version written; no summarising should take model replies.
    std::fs::write(
        data.path().join("config.toml"),
        // Commands wait for approval (the kills land there too), as with no sandbox.
        "[models]\ncontext_window = 100000000\n[sandbox]\nask = \"always\"\n",
    )
    .unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let approving = approver(data.path(), seed ^ 0xA5A5, stop.clone());

    let mut done = 0;
    let mut by_point: BTreeMap<&str, usize> = BTreeMap::new();
    // The chat killed last, how often it was continued, and what the kill left unfinished.
    let mut chat: Option<(i64, usize)> = None;
    let mut left_unfinished: BTreeSet<(i64, String)> = BTreeSet::new();
    let mut ever_unfinished: BTreeSet<(i64, String)> = BTreeSet::new();
    let mut runs = 0;
    while done < kills {
        runs += 1;
        assert!(runs < kills * 4, "too few runs reached a kill point");
        // The next point is tried until a kill lands there, so each gets its share.
        let point = &KILL_POINTS[done % KILL_POINTS.len()];
        // A chat is continued up to three times, then a new one starts, so histories stay
        // well below the size where older turns would be summarised.
        let session = chat.filter(|(_, n)| *n < 3).map(|(id, _)| id);
        let prompt = format!("turn {runs}");
        // A command the last kill cut short left its marker behind.
        let _ = std::fs::remove_file(work.path().join(RUNNING));
        let (child, rx) = start(&server, data.path(), work.path(), session, &prompt);
        let mut shown = Shown {
            continued: session,
            ..Shown::default()
        };
        let hit = run_until(&rx, work.path(), &mut shown, point, &mut rng);
        let what = format!("run {runs} ({})", if hit { point.name } else { "finished" });
        if hit {
            kill_9(child, &rx, &mut shown);
        } else {
            let out = child.wait_with_output().unwrap();
            assert!(
                shown.finished(),
                "{what}: the run ended without `done`: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        // Resuming happens before the new turn starts: once the prompt was echoed, what the
        // last kill left unfinished is done, failed or marked interrupted.
        if session.is_some() && shown.started_turn(&prompt) {
            let store = Store::open(data.path().join("skald.db")).unwrap();
            let still = unfinished_calls(&store);
            for c in &left_unfinished {
                assert!(
                    !still.contains(c),
                    "{what}: {c:?} was neither resumed nor marked interrupted"
                );
            }
        }
        check_after_kill(data.path(), work.path(), &shown, &what);
        let store = Store::open(data.path().join("skald.db")).unwrap();
        left_unfinished = unfinished_calls(&store)
            .into_iter()
            .filter(|(sid, _)| Some(*sid) == shown.session())
            .collect();
        ever_unfinished.extend(left_unfinished.iter().cloned());
        if hit {
            done += 1;
            *by_point.entry(point.name).or_default() += 1;
        }
        chat = match (shown.session(), session) {
            (Some(id), Some(prev)) if id == prev => chat.map(|(id, n)| (id, n + 1)),
            (Some(id), _) => Some((id, 1)),
            (None, _) => chat,
        };
    }
    eprintln!("crash suite: {done} kills in {runs} runs: {by_point:?}");
    for p in KILL_POINTS {
        assert!(
            by_point.get(p.name).copied().unwrap_or(0) > 0,
            "no kill landed at {}: {by_point:?}",
            p.name
        );
    }

    // Every chat goes on once more, to the end.
    let store = Store::open(data.path().join("skald.db")).unwrap();
    let sessions: Vec<i64> = store
        .list_sessions()
        .unwrap()
        .iter()
        .map(|s| s.id)
        .collect();
    drop(store);
    for sid in sessions {
        let (child, rx) = start(&server, data.path(), work.path(), Some(sid), "finish up");
        let mut shown = Shown {
            continued: Some(sid),
            ..Shown::default()
        };
        let never = KillPoint {
            name: "never",
            at: |_| false,
            then_file: None,
            jitter_ms: 0,
        };
        assert!(!run_until(&rx, work.path(), &mut shown, &never, &mut rng));
        let out = child.wait_with_output().unwrap();
        assert!(
            shown.finished(),
            "chat {sid} could not go on: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        check_after_kill(
            data.path(),
            work.path(),
            &shown,
            &format!("final run of chat {sid}"),
        );
    }
    stop.store(true, Ordering::Relaxed);
    approving.join().unwrap();

    let store = Store::open(data.path().join("skald.db")).unwrap();
    store.integrity_check().unwrap();
    assert_eq!(
        unfinished_calls(&store),
        BTreeSet::new(),
        "calls left unfinished"
    );
    for (sid, msgs) in all_messages(&store) {
        for m in msgs {
            assert_ne!(
                m.status,
                MessageStatus::Streaming,
                "chat {sid}: message {} still streaming",
                m.id
            );
        }
    }
    assert!(
        !ever_unfinished.is_empty(),
        "no kill left a call unfinished: the suite tested nothing"
    );
    let leftovers: Vec<_> = std::fs::read_dir(work.path())
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".skald-write-"))
        .collect();
    assert!(
        leftovers.is_empty(),
        "temporary files of interrupted writes: {leftovers:?}"
    );
    check_files(work.path(), "at the end");
}

/// Files in the checkpoint crash test's folder: enough that a checkpoint and a restore take
/// long enough for kills to land inside them.
const CHECKPOINT_FILES: usize = 1500;

/// Writes every file of the folder in state `tag`.
fn write_state(work: &Path, tag: &str) {
    for i in 0..CHECKPOINT_FILES {
        let dir = work.join(format!("d{:02}", i % 30));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("f{i}.txt")), state_line(tag, i)).unwrap();
    }
}

fn state_line(tag: &str, i: usize) -> String {
    format!("{tag} {i}\n").repeat(40)
}

/// The one state every file of the folder is in, or what is wrong: a mix, a file missing
/// or extra, a restore's temporary file left behind.
fn state_of(work: &Path) -> Result<String, String> {
    let mut tags = BTreeSet::new();
    let mut count = 0;
    for d in std::fs::read_dir(work).unwrap().flatten() {
        if !d.path().is_dir() {
            return Err(format!("unexpected file {}", d.path().display()));
        }
        for f in std::fs::read_dir(d.path()).unwrap().flatten() {
            let name = f.file_name().to_string_lossy().into_owned();
            let Some(i) = name
                .strip_prefix('f')
                .and_then(|n| n.strip_suffix(".txt"))
                .and_then(|n| n.parse::<usize>().ok())
            else {
                return Err(format!("unexpected file {}", f.path().display()));
            };
            let text = std::fs::read_to_string(f.path()).unwrap();
            let tag = text.split(' ').next().unwrap_or_default().to_string();
            if text != state_line(&tag, i) {
                return Err(format!("{name} is cut or mixed"));
            }
            tags.insert(tag);
            count += 1;
        }
    }
    if count != CHECKPOINT_FILES {
        return Err(format!("{count} files, not {CHECKPOINT_FILES}"));
    }
    match tags.len() {
        1 => Ok(tags.into_iter().next().unwrap_or_default()),
        _ => Err(format!("files in states {tags:?}")),
    }
}

/// `skald checkpoints ARGS --json`, which must succeed.
fn checkpoints_json(data: &Path, args: &[&str]) -> Value {
    let out = skald(data, None)
        .arg("checkpoints")
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn kills_during_checkpoints_and_restores_leave_the_folder_wholly_old_or_wholly_new() {
    let (kills, seed) = (crash_kills().div_ceil(5).max(4), crash_seed());
    let mut rng = Rng(seed ^ 0xC4EC);
    let (data, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let w = work.path();
    write_state(w, "A");
    let exec = |server: &ScriptedServer, prompt: &str| {
        let mut cmd = skald(data.path(), Some(server));
        cmd.args([
            "exec",
            "--json",
            "--approve",
            "all",
            "--sandbox",
            "off",
            "--cwd",
        ])
        .arg(w)
        .arg(prompt);
        cmd
    };

    // Kills while the folder is checkpointed before and after a command (one that changes
    // nothing, so that whatever the kill cuts short, the folder must still be A).
    let mut landed = 0;
    for k in 0..kills {
        let server = ScriptedServer::new(vec![
            tool_call("c1", "execute_cmd", r#"{"command": "sleep 0.05"}"#),
            answer("done"),
        ]);
        let (child, rx) = spawn_json(exec(&server, &format!("kill {k}")));
        let mut shown = Shown::default();
        // Waits for the call to start, then kills at once or up to 0.3 s later.
        loop {
            match rx.recv_timeout(Duration::from_secs(60)) {
                Ok(ev) => {
                    let start = ev["type"] == "tool_start";
                    shown.events.push(ev);
                    if start {
                        break;
                    }
                }
                Err(e) => panic!("the run ended before its call started: {e}"),
            }
        }
        std::thread::sleep(Duration::from_micros(rng.below(300_000)));
        if !shown.events.iter().any(|e| e["type"] == "tool_done") {
            landed += 1;
        }
        kill_9(child, &rx, &mut shown);
        assert_eq!(state_of(w), Ok("A".to_string()), "kill {k}");
    }
    assert!(landed > 0, "no kill landed before the call ended");

    // After the kills the checkpoints still work: two commands, each a checkpoint.
    let server = ScriptedServer::new(vec![
        tool_call(
            "c1",
            "execute_cmd",
            r#"{"command": "sed -i 's/^A /B /' d*/*.txt"}"#,
        ),
        tool_call(
            "c2",
            "execute_cmd",
            r#"{"command": "sed -i 's/^B /C /' d*/*.txt"}"#,
        ),
        answer("done"),
    ]);
    let out = exec(&server, "change everything twice").output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cps: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "checkpoint")
        .map(|e| e["checkpoint"].clone())
        .collect();
    assert_eq!(cps.len(), 2, "{cps:?}");
    for cp in &cps {
        assert_eq!(cp["changes"]["total"], CHECKPOINT_FILES, "{cp}");
    }
    assert_eq!(state_of(w), Ok("C".to_string()));
    let session = cps[0]["session_id"].as_i64().unwrap().to_string();
    // Before c1 the folder was A, before c2 it was B.
    let targets = [
        (cps[0]["id"].to_string(), "A"),
        (cps[1]["id"].to_string(), "B"),
    ];

    // Kills during restores: after each, the next look at the checkpoints finishes an
    // interrupted restore, and the folder is wholly where it was or wholly the target.
    // One whole restore first, to spread the kills over how long one takes here.
    let started = Instant::now();
    checkpoints_json(data.path(), &["restore", &targets[1].0]);
    let window = started.elapsed().as_micros() as u64 * 5 / 4 + 1;
    let mut state = state_of(w).unwrap();
    assert_eq!(state, "B");
    let mut cut = 0;
    for k in 0..kills {
        let (id, target) = &targets[k % 2];
        let mut child = skald(data.path(), None)
            .args(["checkpoints", "restore", id])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(rng.below(window)));
        if child.try_wait().unwrap().is_none() {
            cut += 1;
        }
        let _ = kill(Pid::from_raw(child.id() as i32), Signal::SIGKILL);
        child.wait().unwrap();
        checkpoints_json(data.path(), &["list", &session]);
        let now = state_of(w).unwrap_or_else(|e| panic!("restore kill {k}: {e}"));
        assert!(
            now == state || now == *target,
            "restore kill {k}: the folder is {now}, neither {state} nor {target}"
        );
        state = now;
    }
    eprintln!(
        "checkpoint crash test: {landed} of {kills} kills before a call ended, {cut} of {kills} \
         during a restore"
    );
    assert!(cut > 0, "no kill landed during a restore");
    // A whole restore still works, and its undo.
    let done = checkpoints_json(data.path(), &["restore", &targets[0].0]);
    assert_eq!(state_of(w), Ok("A".to_string()));
    checkpoints_json(data.path(), &["restore", &done["id"].to_string()]);
    assert_eq!(state_of(w), Ok(state));
}

/// A thread swapping two names (`renameat2` with `RENAME_EXCHANGE`) as fast as it can, as
/// a process a sandboxed command left running would: a folder and a link to one outside.
struct Swapper {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<u64>,
}

impl Swapper {
    fn start(a: std::path::PathBuf, b: std::path::PathBuf) -> Swapper {
        use nix::fcntl::{AT_FDCWD, RenameFlags, renameat2};
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut swaps = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    if renameat2(AT_FDCWD, &a, AT_FDCWD, &b, RenameFlags::RENAME_EXCHANGE).is_ok() {
                        swaps += 1;
                    }
                }
                swaps
            })
        };
        Swapper { stop, thread }
    }

    /// Stops the swaps and says how many there were.
    fn stop(self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().unwrap()
    }
}

/// The restore race (docs/checkpoints.md, "Races"): a process a sandboxed command left
/// running swaps one of the chat's folders with a link to a folder outside, as fast as it
/// can, while `skald checkpoints restore` goes back and forth over that folder's files.
/// Nothing outside is removed, written, or read into a checkpoint, and every restore ends
/// normally (a file the race put in the way is a conflict it names).
#[test]
fn a_restore_racing_a_folder_swapped_for_a_link_touches_nothing_outside() {
    const FILES: usize = 300;
    let (data, work, outside) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let w = work.path();
    for i in 0..FILES {
        std::fs::write(
            outside.path().join(format!("f{i}.txt")),
            format!("outside {i}\n"),
        )
        .unwrap();
    }
    // The link's name is ignored, so the folder behind it is at times out of the walk.
    std::fs::write(w.join(".gitignore"), "l\n").unwrap();
    let server = ScriptedServer::new(vec![
        tool_call(
            "c1",
            "execute_cmd",
            &json!({"command": format!(
                "mkdir d && for i in $(seq 0 {}); do echo inside $i > d/f$i.txt; done",
                FILES - 1
            )})
            .to_string(),
        ),
        answer("done"),
    ]);
    let out = skald(data.path(), Some(&server))
        .args([
            "exec",
            "--json",
            "--approve",
            "all",
            "--sandbox",
            "off",
            "--cwd",
        ])
        .arg(w)
        .arg("make the files")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let before_files = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|e| e["type"] == "checkpoint")
        .map(|e| e["checkpoint"]["id"].to_string())
        .expect("a checkpoint before the command");
    assert_eq!(std::fs::read_dir(w.join("d")).unwrap().count(), FILES);
    std::os::unix::fs::symlink(outside.path(), w.join("l")).unwrap();
    let swapper = Swapper::start(w.join("d"), w.join("l"));
    // Back and forth: each restore's answer names the checkpoint that undoes it.
    let mut to = before_files;
    let mut restores = Vec::new();
    for _ in 0..8 {
        let done = checkpoints_json(data.path(), &["restore", &to]);
        to = done["id"].to_string();
        restores.push(to.clone());
    }
    let swaps = swapper.stop();
    assert!(swaps > 0, "the swap never happened");
    let mut names: Vec<String> = std::fs::read_dir(outside.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut expected: Vec<String> = (0..FILES).map(|i| format!("f{i}.txt")).collect();
    expected.sort();
    assert_eq!(
        names, expected,
        "files removed from or added to the outside folder"
    );
    for i in 0..FILES {
        assert_eq!(
            std::fs::read_to_string(outside.path().join(format!("f{i}.txt"))).unwrap(),
            format!("outside {i}\n"),
            "f{i}.txt outside was changed"
        );
    }
    // No restore recorded the outside folder's content in its checkpoints.
    for id in &restores {
        let out = skald(data.path(), None)
            .args(["checkpoints", "diff", id])
            .output()
            .unwrap();
        assert!(
            !crate::common::ok(&out).contains("outside "),
            "restore {id} recorded a file of the outside folder"
        );
    }
}

/// The file tools' race (docs/security.md, "Check, then open"): a process swaps one of the
/// chat's folders with a link to a folder outside, as fast as it can, while the file tools
/// write, edit, read, search and outline in it through the real gate (`skald tool`; a rule
/// allows writes in that folder, nothing allows them outside). Whatever the timing, no tool
/// writes or makes anything outside or reads a byte of it: the gate decides on the
/// canonical path, and the tool opens exactly that path, refusing a link swapped in since.
#[test]
fn file_tools_racing_a_folder_swapped_for_a_link_touch_nothing_outside() {
    const ROUNDS: usize = 25;
    let (data, work, outside) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let w = work.path();
    std::fs::create_dir(w.join("d")).unwrap();
    std::fs::write(w.join("d/f.txt"), "inside\n").unwrap();
    std::fs::write(w.join("d/g.rs"), "fn inside() {}\n").unwrap();
    // The last name is in no call: it may reach the output only through a listing or a
    // search that went outside.
    let theirs: [(&str, &str); 4] = [
        ("f.txt", "outside secret\n"),
        ("g.rs", "fn outside_secret() {}\n"),
        ("only_outside.txt", "outside secret\n"),
        ("name_only_outside.txt", "outside secret\n"),
    ];
    for (name, text) in theirs {
        std::fs::write(outside.path().join(name), text).unwrap();
    }
    std::os::unix::fs::symlink(outside.path(), w.join("l")).unwrap();
    let rule = skald(data.path(), None)
        .args(["rules", "add", "--tool", "@fs_write", "--path", "d/*"])
        .args(["--action", "allow", "--working-dir"])
        .arg(w)
        .output()
        .unwrap();
    assert_eq!(
        rule.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&rule.stderr)
    );
    let calls = [
        (
            "write_file",
            json!({"path": "d/f.txt", "content": "written\n"}),
        ),
        (
            "write_file",
            json!({"path": "d/new.txt", "content": "made\n"}),
        ),
        (
            "write_file",
            json!({"path": "d/sub/deep.txt", "content": "made\n"}),
        ),
        (
            "insert_at_line",
            json!({"path": "d/f.txt", "line": 1, "content": "inserted"}),
        ),
        (
            "replace_lines",
            json!({"path": "d/g.rs", "start_line": 1, "end_line": 1, "content": "fn replaced() {}"}),
        ),
        (
            "edit_file",
            json!({"path": "d/g.rs", "old": "fn ", "new": "pub fn "}),
        ),
        ("read_file", json!({"path": "d/f.txt"})),
        ("read_file", json!({"path": "d/only_outside.txt"})),
        ("search_file", json!({"path": "d/g.rs", "query": "fn"})),
        ("grep_files", json!({"path": "d", "pattern": "secret|fn"})),
        ("get_ast_outline", json!({"path": "d"})),
        ("get_ast_outline", json!({"path": "d/g.rs"})),
        ("list_files", json!({"path": ".", "depth": 3})),
        (
            "grep_files",
            json!({"path": ".", "pattern": "secret|fn|inside"}),
        ),
        ("get_ast_outline", json!({"path": "."})),
    ];
    let swapper = Swapper::start(w.join("d"), w.join("l"));
    let mut done = 0;
    for _ in 0..ROUNDS {
        for (tool, args) in &calls {
            let out = skald(data.path(), None)
                .args(["tool", tool, "--cwd"])
                .arg(w)
                .args(["--args", &args.to_string()])
                .output()
                .unwrap();
            let said = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(
                !said.contains("outside secret")
                    && !said.contains("outside_secret")
                    && !said.contains("name_only_outside"),
                "{tool} read the outside folder: {said}"
            );
            if out.status.success() {
                done += 1;
            }
        }
    }
    let swaps = swapper.stop();
    assert!(swaps > 0, "the swap never happened");
    assert!(done > 0, "no call ever ran, so nothing was raced");
    let mut names: Vec<String> = std::fs::read_dir(outside.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["f.txt", "g.rs", "name_only_outside.txt", "only_outside.txt"],
        "a file or folder was made in the outside folder"
    );
    for (name, text) in theirs {
        assert_eq!(
            std::fs::read_to_string(outside.path().join(name)).unwrap(),
            text,
            "{name} outside was changed"
        );
    }
}

/// Kills during an apply of a worktree (docs/worktrees.md, "Review and apply"): whatever
/// the kill cuts short, the next apply finishes or redoes it and the person's folder is
/// wholly the worktree's — never a mix, never a temporary file left (the apply is a
/// journalled restore).
#[test]
fn kills_during_a_worktree_apply_leave_the_folder_whole() {
    let (kills, seed) = (crash_kills().div_ceil(5).max(4), crash_seed());
    let mut rng = Rng(seed ^ 0xA991);
    let top = tempfile::tempdir().unwrap();
    let (data, work) = (top.path().join("data"), top.path().join("work"));
    std::fs::create_dir_all(&work).unwrap();
    let w = std::fs::canonicalize(&work).unwrap();
    write_state(&w, "A");
    // The agent turns every file to B in its worktree.
    let server = ScriptedServer::new(vec![
        tool_call(
            "c1",
            "execute_cmd",
            r#"{"command": "sed -i 's/^A /B /' d*/*.txt"}"#,
        ),
        answer("done"),
    ]);
    let out = skald(&data, Some(&server))
        .args([
            "exec",
            "--json",
            "--approve",
            "all",
            "--sandbox",
            "off",
            "--worktree",
            "all-b",
            "--cwd",
        ])
        .arg(&w)
        .arg("turn everything to B")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(state_of(&w), Ok("A".to_string()));
    let apply = || {
        let out = skald(&data, None)
            .args(["worktrees", "apply", "all-b", "--json"])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    // One whole apply, to spread the kills over how long one takes here.
    let started = Instant::now();
    apply();
    let window = started.elapsed().as_micros() as u64 * 5 / 4 + 1;
    assert_eq!(state_of(&w), Ok("B".to_string()));
    let mut cut = 0;
    for k in 0..kills {
        // The person's folder back at A (as the person might have it), then an apply
        // killed somewhere.
        write_state(&w, "A");
        let mut child = skald(&data, None)
            .args(["worktrees", "apply", "all-b"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(rng.below(window)));
        if child.try_wait().unwrap().is_none() {
            cut += 1;
        }
        let _ = kill(Pid::from_raw(child.id() as i32), Signal::SIGKILL);
        child.wait().unwrap();
        // Right after the kill the folder is wholly A or wholly B, unless a restore's
        // journal says where it was going (the next opener finishes it).
        let journal = std::fs::read_dir(data.join("checkpoints"))
            .unwrap()
            .flatten()
            .any(|e| e.path().join("skald-restore.json").exists());
        let now = state_of(&w);
        assert!(
            journal || matches!(now.as_deref(), Ok("A") | Ok("B")),
            "apply kill {k}: {now:?} with no journal"
        );
        // The next apply finishes what was cut short (or does it whole).
        apply();
        assert_eq!(state_of(&w), Ok("B".to_string()), "apply kill {k}");
    }
    eprintln!("worktree apply crash test: {cut} of {kills} kills during an apply");
    assert!(cut > 0, "no kill landed during an apply");
}
