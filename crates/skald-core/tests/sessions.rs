//! The session manager against a scripted model server: one turn at a time per session,
//! messages sent during a turn joining it, /stop per session.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers may panic

use skald_api::events::{Event, TurnOutcome};
use skald_core::agents::Library;
use skald_core::inbox::Answer;
use skald_core::session::manager::{Sent, SessionEvent, SessionManager, TurnSettings};
use skald_core::turn::ApprovalMode;
use skald_store::{NewSession, Store};
use skald_testkit::{ScriptedServer, answer, delayed, tool_call};
use std::sync::Arc;
use std::time::Duration;

fn manager(
    server: &ScriptedServer,
    data: &std::path::Path,
    work: &std::path::Path,
) -> (Arc<SessionManager>, i64) {
    manager_with(server, data, work, ApprovalMode::All)
}

fn manager_with(
    server: &ScriptedServer,
    data: &std::path::Path,
    work: &std::path::Path,
    approval: ApprovalMode,
) -> (Arc<SessionManager>, i64) {
    manager_windowed(server, data, work, approval, 128_000)
}

fn manager_windowed(
    server: &ScriptedServer,
    data: &std::path::Path,
    work: &std::path::Path,
    approval: ApprovalMode,
    context_window: usize,
) -> (Arc<SessionManager>, i64) {
    let store = Arc::new(Store::open(data.join("skald.db")).unwrap());
    let session = store
        .create_session(&NewSession {
            working_dir: Some(work.display().to_string()),
            ..NewSession::default()
        })
        .unwrap();
    let base = server.base_url.clone();
    let model = skald_llm::from_env(Some("openai/scripted"), move |k| match k {
        "OPENAI_BASE_URL" => Some(base.clone()),
        "OPENAI_API_KEY" => Some("k".into()),
        _ => None,
    })
    .unwrap();
    let mgr = SessionManager::new(
        store,
        Arc::new(skald_core::builtin_registry().unwrap()),
        vec![model],
        Arc::new(Library::load(data).unwrap()),
        TurnSettings {
            max_rounds: 10,
            compact_at: 80,
            approval,
            context_window,
            mcp: Default::default(),
            // These tests are about the approval flow: commands ask, as with no sandbox.
            sandbox: Default::default(),
            checkpoints: Default::default(),
            hooks: Default::default(),
            cache_dir: None,
            vision: Default::default(),
            prices: Default::default(),
            daily_usd: None,
            at_once: 4,
            web: Default::default(),
            lsp: Default::default(),
        },
    );
    (mgr, session.id)
}

async fn until(
    rx: &mut tokio::sync::broadcast::Receiver<SessionEvent>,
    pred: impl Fn(&Event) -> bool,
) -> Vec<Event> {
    let mut seen = Vec::new();
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(30), rx.recv())
            .await
            .unwrap_or_else(|_| panic!("timed out; saw {seen:?}"))
            .unwrap();
        let hit = pred(&ev.event);
        seen.push(ev.event);
        if hit {
            return seen;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_sent_during_a_turn_joins_its_next_round() {
    let server = ScriptedServer::new(vec![
        tool_call("c1", "execute_cmd", r#"{"command": "sleep 1; echo slept"}"#),
        answer("Both handled."),
    ]);
    let (data, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (mgr, sid) = manager(&server, data.path(), work.path());
    let mut rx = mgr.subscribe();
    assert_eq!(
        mgr.send_message(sid, "first".into()).unwrap(),
        Sent::Started
    );
    until(&mut rx, |e| matches!(e, Event::ToolStart { .. })).await;
    assert!(mgr.is_running(sid));
    assert_eq!(
        mgr.send_message(sid, "also this".into()).unwrap(),
        Sent::Queued
    );
    let events = until(&mut rx, |e| matches!(e, Event::Done { .. })).await;
    let Some(Event::Done { outcome, text, .. }) = events.last() else {
        panic!()
    };
    assert_eq!(
        (*outcome, text.as_str()),
        (TurnOutcome::Final, "Both handled.")
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::UserMessage { text, .. } if text == "also this"))
    );
    // One turn, two model calls; the second carries the queued message after the tool result.
    let requests = server.recorded();
    assert_eq!(requests.len(), 2);
    let msgs = requests[1].body["messages"].as_array().unwrap();
    let roles: Vec<&str> = msgs.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "tool", "user", "system"]
    );
    assert_eq!(msgs[4]["content"], "also this");
    for _ in 0..100 {
        if !mgr.is_running(sid) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(!mgr.is_running(sid));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_ends_the_turn_and_drops_the_queue() {
    let server = ScriptedServer::new(vec![tool_call(
        "c1",
        "execute_cmd",
        r#"{"command": "sleep 20"}"#,
    )]);
    let (data, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (mgr, sid) = manager(&server, data.path(), work.path());
    let mut rx = mgr.subscribe();
    mgr.send_message(sid, "go".into()).unwrap();
    until(&mut rx, |e| matches!(e, Event::ToolStart { .. })).await;
    assert_eq!(
        mgr.send_message(sid, "never answered".into()).unwrap(),
        Sent::Queued
    );
    assert!(mgr.stop(sid));
    let events = until(&mut rx, |e| matches!(e, Event::Done { .. })).await;
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::ToolCancelled { .. }))
    );
    assert!(matches!(
        events.last(),
        Some(Event::Done {
            outcome: TurnOutcome::Cancelled,
            ..
        })
    ));
    assert_eq!(
        server.recorded().len(),
        1,
        "the dropped message started nothing"
    );
    assert!(!mgr.stop(9999), "stopping an idle session is a no-op");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_sent_right_after_stop_starts_a_fresh_turn() {
    let server = ScriptedServer::new(vec![
        tool_call("c1", "execute_cmd", r#"{"command": "sleep 20"}"#),
        answer("Fresh turn."),
    ]);
    let (data, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (mgr, sid) = manager(&server, data.path(), work.path());
    let mut rx = mgr.subscribe();
    mgr.send_message(sid, "go".into()).unwrap();
    until(&mut rx, |e| matches!(e, Event::ToolStart { .. })).await;
    assert!(mgr.stop(sid));
    // Sent while the stopped turn may still be unwinding: it must not be lost.
    mgr.send_message(sid, "after stop".into()).unwrap();
    let first = until(&mut rx, |e| matches!(e, Event::Done { .. })).await;
    assert!(matches!(
        first.last(),
        Some(Event::Done {
            outcome: TurnOutcome::Cancelled,
            ..
        })
    ));
    let second = until(&mut rx, |e| matches!(e, Event::Done { .. })).await;
    let Some(Event::Done { outcome, text, .. }) = second.last() else {
        panic!()
    };
    assert_eq!(
        (*outcome, text.as_str()),
        (TurnOutcome::Final, "Fresh turn.")
    );
    let requests = server.recorded();
    assert_eq!(requests.len(), 2);
    let msgs = requests[1].body["messages"].as_array().unwrap();
    assert!(
        msgs.iter().any(|m| m["content"] == "after stop"),
        "the new turn carries the message: {msgs:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_does_not_wait_for_a_slow_summary() {
    // The summary request stalls for a minute; /stop must end the turn without it.
    let server = ScriptedServer::new(vec![delayed(60_000, answer("too late"))]);
    let (data, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (mgr, sid) = manager_windowed(&server, data.path(), work.path(), ApprovalMode::All, 300);
    let store = Store::open(data.path().join("skald.db")).unwrap();
    for (role, text) in [
        (skald_store::Role::User, "a long first question ".repeat(40)),
        (
            skald_store::Role::Assistant,
            "a long first answer ".repeat(40),
        ),
    ] {
        store
            .append_message(&skald_store::NewMessage::new(sid, role, &text))
            .unwrap();
    }
    let mut rx = mgr.subscribe();
    mgr.send_message(sid, "and now?".into()).unwrap();
    for _ in 0..1000 {
        if !server.recorded().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(server.recorded().len(), 1, "the summary was asked for");
    assert!(mgr.stop(sid));
    let events = until(&mut rx, |e| matches!(e, Event::Done { .. })).await;
    assert!(matches!(
        events.last(),
        Some(Event::Done {
            outcome: TurnOutcome::Cancelled,
            ..
        })
    ));
    assert!(store.latest_summary(sid).unwrap().is_none());
    assert_eq!(
        store.list_messages(sid).unwrap().len(),
        3,
        "nothing is lost"
    );
}

#[tokio::test]
async fn an_unknown_session_is_an_error() {
    let server = ScriptedServer::new(vec![]);
    let (data, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (mgr, _) = manager(&server, data.path(), work.path());
    assert!(mgr.send_message(424242, "hi".into()).is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_start_unfinished_sessions_are_resumed_and_continued() {
    let server = ScriptedServer::new(vec![answer("Continued after the restart.")]);
    let (data, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::write(work.path().join("notes.md"), "the notes\n").unwrap();
    let (mgr, sid) = manager(&server, data.path(), work.path());
    // What a killed Skald leaves: a call stored as running.
    {
        let store = Store::open(data.path().join("skald.db")).unwrap();
        store
            .append_message(&skald_store::NewMessage::new(
                sid,
                skald_store::Role::User,
                "read my notes",
            ))
            .unwrap();
        let msg = store
            .append_message(&skald_store::NewMessage::new(
                sid,
                skald_store::Role::Assistant,
                "",
            ))
            .unwrap();
        store
            .insert_tool_call(&skald_store::NewToolCall {
                tool_call_id: "c1".into(),
                session_id: sid,
                stack_id: None,
                message_id: Some(msg.id),
                name: "read_file".into(),
                args: serde_json::json!({"path": "notes.md"}),
                status: skald_api::ToolCallStatus::Running,
            })
            .unwrap();
    }
    let mut rx = mgr.subscribe();
    assert_eq!(mgr.resume_all().unwrap(), [sid]);
    let events = until(&mut rx, |e| matches!(e, Event::Done { .. })).await;
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::ToolDone { tool_call_id, .. } if tool_call_id == "c1"))
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::UserMessage { .. })),
        "no new user message"
    );
    let Some(Event::Done { text, .. }) = events.last() else {
        panic!()
    };
    assert_eq!(text, "Continued after the restart.");
    let msgs = server.recorded()[0].body["messages"].clone();
    assert!(
        msgs.as_array()
            .unwrap()
            .iter()
            .any(|m| m["role"] == "tool" && m["content"].as_str().unwrap().contains("the notes"))
    );
}

fn inbox_id(events: &[Event]) -> i64 {
    events
        .iter()
        .find_map(|e| match e {
            Event::ApprovalRequired { inbox_id, .. } => Some(*inbox_id),
            _ => None,
        })
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_wait_in_the_inbox_and_run_when_approved() {
    let server = ScriptedServer::new(vec![
        tool_call("c1", "execute_cmd", r#"{"command": "echo ok > out.txt"}"#),
        answer("Written."),
    ]);
    let (data, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (mgr, sid) = manager_with(&server, data.path(), work.path(), ApprovalMode::Inbox);
    let mut rx = mgr.subscribe();
    mgr.send_message(sid, "write it".into()).unwrap();
    let events = until(&mut rx, |e| matches!(e, Event::ApprovalRequired { .. })).await;
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::InboxRequested { .. }))
    );
    let id = inbox_id(&events);
    // It waits: nothing ran, the row is pending, the Inbox lists it.
    assert!(!work.path().join("out.txt").exists());
    let pending = mgr.inbox().unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].payload["tool"], "execute_cmd");
    mgr.answer(id, &Answer::Approve).unwrap();
    let events = until(&mut rx, |e| matches!(e, Event::Done { .. })).await;
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::InboxResolved { .. }))
    );
    assert!(events.iter().any(|e| matches!(e, Event::ToolDone { .. })));
    assert!(work.path().join("out.txt").exists());
    assert!(mgr.inbox().unwrap().is_empty());
    // A second answer to the same item is refused.
    assert!(mgr.answer(id, &Answer::Approve).is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejection_reaches_the_model_with_its_note() {
    let server = ScriptedServer::new(vec![
        tool_call(
            "c1",
            "write_file",
            r#"{"path": "plan.md", "content": "new plan"}"#,
        ),
        answer("Understood."),
    ]);
    let (data, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::write(work.path().join("plan.md"), "old plan").unwrap();
    let (mgr, sid) = manager_with(&server, data.path(), work.path(), ApprovalMode::Inbox);
    let mut rx = mgr.subscribe();
    mgr.send_message(sid, "rewrite the plan".into()).unwrap();
    let events = until(&mut rx, |e| matches!(e, Event::ApprovalRequired { .. })).await;
    let item = &mgr.inbox().unwrap()[0];
    // A write shows what it would change.
    assert_eq!(item.payload["write"]["old"], "old plan");
    assert_eq!(item.payload["write"]["new"], "new plan");
    mgr.answer(
        inbox_id(&events),
        &Answer::Reject {
            note: "keep the old plan".into(),
        },
    )
    .unwrap();
    until(&mut rx, |e| matches!(e, Event::Done { .. })).await;
    assert_eq!(
        std::fs::read_to_string(work.path().join("plan.md")).unwrap(),
        "old plan"
    );
    let msgs = server.recorded()[1].body["messages"].clone();
    let tool = msgs
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()
        .clone();
    assert_eq!(
        tool["content"],
        "User rejected this tool call. Reason: keep the old plan"
    );
}

/// What a Skald stopped while waiting leaves: a pending call and its pending item.
fn leave_pending_approval(data: &std::path::Path, sid: i64) -> (Store, skald_store::InboxItem) {
    let other = Store::open(data.join("skald.db")).unwrap();
    other
        .append_message(&skald_store::NewMessage::new(
            sid,
            skald_store::Role::User,
            "go",
        ))
        .unwrap();
    let msg = other
        .append_message(&skald_store::NewMessage::new(
            sid,
            skald_store::Role::Assistant,
            "",
        ))
        .unwrap();
    other
        .insert_tool_call(&skald_store::NewToolCall {
            tool_call_id: "c9".into(),
            session_id: sid,
            stack_id: None,
            message_id: Some(msg.id),
            name: "execute_cmd".into(),
            args: serde_json::json!({"command": "echo resumed > r.txt"}),
            status: skald_api::ToolCallStatus::Pending,
        })
        .unwrap();
    let item = other
        .add_inbox_item(&skald_store::NewInboxItem {
            session_id: sid,
            kind: skald_store::InboxKind::Approval,
            tool_call_id: Some("c9".into()),
            agent_id: "main".into(),
            depth: 0,
            title: "execute_cmd `echo resumed > r.txt`".into(),
            payload: serde_json::json!({"tool": "execute_cmd"}),
        })
        .unwrap();
    (other, item)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_left_pending_is_retired_when_a_resumed_run_decides_without_it() {
    let server = ScriptedServer::new(vec![answer("Ran it.")]);
    let (data, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (mgr, sid) = manager_with(&server, data.path(), work.path(), ApprovalMode::All);
    let (other, item) = leave_pending_approval(data.path(), sid);
    let mut rx = mgr.subscribe();
    mgr.resume_all().unwrap();
    let events = until(&mut rx, |e| matches!(e, Event::Done { .. })).await;
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::InboxResolved { id, .. } if *id == item.id)),
        "{events:?}"
    );
    assert_eq!(
        other.get_inbox_item(item.id).unwrap().status,
        skald_store::InboxStatus::Cancelled,
        "the Inbox stops asking about a call that already ran"
    );
    assert!(work.path().join("r.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_pending_across_a_restart_is_answered_by_id_from_another_process() {
    let server = ScriptedServer::new(vec![answer("Ran it after the restart.")]);
    let (data, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (mgr, sid) = manager_with(&server, data.path(), work.path(), ApprovalMode::Inbox);
    let (other, item) = leave_pending_approval(data.path(), sid);
    let mut rx = mgr.subscribe();
    mgr.resume_all().unwrap();
    let events = until(&mut rx, |e| matches!(e, Event::ApprovalRequired { .. })).await;
    assert_eq!(inbox_id(&events), item.id, "the same item, not a new one");
    // `skald inbox answer` from another process writes the store only.
    other
        .resolve_inbox_item(item.id, skald_store::InboxStatus::Approved, None)
        .unwrap();
    let events = until(&mut rx, |e| matches!(e, Event::Done { .. })).await;
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::ToolDone { tool_call_id, .. } if tool_call_id == "c9"))
    );
    assert!(work.path().join("r.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn always_allow_stores_the_proposed_rule_and_bypasses_cover_the_next_calls() {
    for always in [true, false] {
        let server = ScriptedServer::new(vec![
            tool_call("c1", "execute_cmd", r#"{"command": "touch one.txt"}"#),
            tool_call("c2", "execute_cmd", r#"{"command": "touch two.txt"}"#),
            answer("Both files made."),
        ]);
        let (data, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let work_path = std::fs::canonicalize(work.path()).unwrap();
        let (mgr, sid) = manager_with(&server, data.path(), &work_path, ApprovalMode::Inbox);
        let mut rx = mgr.subscribe();
        mgr.send_message(sid, "make two files".into()).unwrap();
        let events = until(&mut rx, |e| matches!(e, Event::ApprovalRequired { .. })).await;
        let id = inbox_id(&events);
        let answer_given = if always {
            let (spec, matched) = mgr.propose_rule(id).unwrap();
            assert_eq!(spec.command_pattern.as_deref(), Some("touch"));
            assert_eq!(
                spec.working_dir.as_deref(),
                Some(work_path.to_str().unwrap())
            );
            assert_eq!(matched.len(), 1, "the call being approved itself");
            Answer::AlwaysAllow { rule: spec }
        } else {
            Answer::ApproveWithBypass {
                scope: skald_core::approval::BypassScope::Category("shell".into()),
                minutes: Some(15),
            }
        };
        mgr.answer(id, &answer_given).unwrap();
        let events = until(&mut rx, |e| matches!(e, Event::Done { .. })).await;
        let asked = events
            .iter()
            .filter(|e| matches!(e, Event::ApprovalRequired { .. }))
            .count();
        assert_eq!(
            asked, 0,
            "the second call ran without asking (always: {always})"
        );
        assert!(work_path.join("one.txt").exists() && work_path.join("two.txt").exists());
    }
}

/// In a long-lived carrier a background task's result is delivered into its idle chat,
/// which is continued without anyone sending a message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_task_continues_its_idle_chat() {
    let server = ScriptedServer::routed(vec![
        (
            "meticulous researcher",
            vec![delayed(300, answer("Found it in notes.md."))],
        ),
        (
            "",
            vec![
                tool_call(
                    "t1",
                    "execute_task",
                    r#"{"mode": "async", "title": "Find it", "agent_id": "researcher", "prompt": "find it"}"#,
                ),
                answer("Working on it in the background."),
                answer("The researcher found it in notes.md."),
            ],
        ),
    ]);
    let (data, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (mgr, sid) = manager(&server, data.path(), work.path());
    let stop = skald_api::CancellationToken::new();
    tokio::spawn(mgr.clone().deliver(stop.clone()));
    let mut rx = mgr.subscribe();
    mgr.send_message(sid, "find it".into()).unwrap();
    let first = until(&mut rx, |e| matches!(e, Event::Done { .. })).await;
    assert!(
        first
            .iter()
            .any(|e| matches!(e, Event::TaskUpdate { status, .. } if status == "running"))
    );
    // Nobody sends anything: the delivery alone continues the chat.
    let later = until(
        &mut rx,
        |e| matches!(e, Event::Done { text, .. } if text.starts_with("The researcher found")),
    )
    .await;
    assert!(
        later
            .iter()
            .any(|e| matches!(e, Event::ToolStart { name, .. } if name == "read_agent_result"))
    );
    stop.cancel();
    let store = Store::open(data.path().join("skald.db")).unwrap();
    let task = store.get_task(1).unwrap();
    assert_eq!(task.status, skald_store::TaskStatus::Done);
    assert_eq!(task.result.as_deref(), Some("Found it in notes.md."));
}
