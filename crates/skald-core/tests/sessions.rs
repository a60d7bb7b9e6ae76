//! The session manager against a scripted model server: one turn at a time per session,
//! messages sent during a turn joining it, /stop per session.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers may panic

use skald_api::events::{Event, TurnOutcome};
use skald_core::agents::Library;
use skald_core::sessions::{Sent, SessionEvent, SessionManager, TurnSettings};
use skald_core::turn::HeadlessApproval;
use skald_store::{NewSession, Store};
use skald_testkit::{ScriptedServer, answer, tool_call};
use std::sync::Arc;
use std::time::Duration;

fn manager(
    server: &ScriptedServer,
    data: &std::path::Path,
    work: &std::path::Path,
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
            approval: HeadlessApproval::All,
            context_window: 128_000,
            mcp_list: "No MCP servers are configured.".into(),
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
