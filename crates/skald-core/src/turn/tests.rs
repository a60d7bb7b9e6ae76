//! The turn's unit tests: offered tools, delegation limits, stops while asking.

use super::offer::offered_tools;
use super::*;
use crate::agents::Library;
use crate::approval::RunContext;
use crate::engine::registry::ToolRegistry;
use crate::engine::tool_context::{Call, ToolCx};
use crate::models::ModelHealth;
use skald_api::{ExecutionOutcome, tool_names as tn};

/// What a turn borrows, owned by the test.
struct Fixture {
    data: tempfile::TempDir,
    store: Store,
    session_id: i64,
    registry: ToolRegistry,
    models: crate::models::ModelList,
    health: ModelHealth,
}

impl Fixture {
    fn new() -> Self {
        let store = Store::open_in_memory().unwrap();
        let session_id = store
            .create_session(&skald_store::NewSession::default())
            .unwrap()
            .id;
        Fixture {
            data: tempfile::tempdir().unwrap(),
            store,
            session_id,
            registry: crate::builtin_registry().unwrap(),
            models: crate::models::ModelList::new(vec![
                skald_llm::from_env(Some("openai/unused"), |_| None).unwrap(),
            ]),
            health: ModelHealth::default(),
        }
    }

    fn cfg(&self, approval: ApprovalMode, agent_id: &str) -> TurnConfig {
        TurnConfig {
            max_rounds: 1,
            context_window: 128_000,
            approval,
            run: RunContext {
                group: "default".into(),
                agent_id: agent_id.into(),
                working_dir: self.data.path().to_path_buf(),
                ..RunContext::default()
            },
            system_prompt: String::new(),
            background: false,
            first_tool_choice: skald_llm::ToolChoice::Auto,
            instructions: Default::default(),
            hooks: Default::default(),
            effort: None,
            compact_at: 80,
        }
    }

    fn env<'a>(&'a self, cfg: &'a TurnConfig) -> TurnEnv<'a> {
        TurnEnv {
            store: &self.store,
            registry: &self.registry,
            models: &self.models,
            health: &self.health,
            cfg,
            queued: None,
            ask: None,
            inbox: None,
            frame: Frame::default(),
            library: None,
            mcp_list: "",
            engine: None,
        }
    }
}

#[tokio::test]
async fn delegation_stops_at_the_depth_limit() {
    let fx = Fixture::new();
    let library = Library::load(fx.data.path()).unwrap();
    let cfg = fx.cfg(ApprovalMode::Never, "software-engineer");
    let mut env = TurnEnv {
        frame: Frame {
            stack_id: Some(1),
            depth: MAX_DEPTH - 1,
        },
        library: Some(&library),
        ..fx.env(&cfg)
    };
    let names = |env: &TurnEnv<'_>| {
        offered_tools(env, false)
            .into_iter()
            .map(|t| t.name)
            .collect::<Vec<_>>()
    };
    assert!(names(&env).contains(&tn::EXECUTE_SUBTASK.to_string()));
    assert!(!names(&env).contains(&tn::EXECUTE_TASK.to_string()));
    env.frame.depth = MAX_DEPTH;
    assert!(
        !names(&env).contains(&tn::EXECUTE_SUBTASK.to_string()),
        "not offered at the limit"
    );
    // Called anyway, it is refused before anything runs.
    let cancel = CancellationToken::new();
    let cx = ToolCx::new(Call {
        store: env.store,
        session_id: fx.session_id,
        stack_id: env.frame.stack_id,
        library: env.library,
        engine: None,
        call_id: "d",
        cancel: &cancel,
        emit: &|_| {},
        turn: Some(&env),
    });
    let args = serde_json::json!({"agent_id": "researcher", "prompt": "go"});
    let exec = env.registry.run(tn::EXECUTE_SUBTASK, &cx, args).unwrap();
    let out = exec.wait().await;
    assert!(matches!(out, ExecutionOutcome::Failed(m) if m.contains("at most 5 levels")));
}

#[tokio::test]
async fn stop_while_the_prompt_waits_cancels_the_call() {
    let fx = Fixture::new();
    let cfg = fx.cfg(ApprovalMode::Ask, "main");
    // A person who never answers.
    let ask = |_req: AskRequest| -> futures::future::BoxFuture<'static, bool> {
        Box::pin(futures::future::pending())
    };
    let env = TurnEnv {
        ask: Some(&ask),
        ..fx.env(&cfg)
    };
    let (store, session) = (&fx.store, fx.session_id);
    store
        .insert_tool_call(&skald_store::NewToolCall {
            tool_call_id: "c1".into(),
            session_id: session,
            stack_id: None,
            message_id: None,
            name: tn::EXECUTE_CMD.into(),
            args: serde_json::json!({"command": "touch made"}),
            status: ToolCallStatus::Running,
        })
        .unwrap();
    let call = ToolCall {
        id: "c1".into(),
        name: tn::EXECUTE_CMD.into(),
        arguments: r#"{"command": "touch made"}"#.into(),
    };
    let cancel = CancellationToken::new();
    let stopper = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        stopper.cancel();
    });
    let stopped = tokio::time::timeout(
        std::time::Duration::from_secs(30),
        run_call(&env, session, &call, &cancel, &|_| {}),
    )
    .await
    .expect("the prompt gave way to the stop")
    .unwrap();
    assert!(stopped);
    let calls = store.list_tool_calls(session).unwrap();
    assert_eq!(calls[0].status, ToolCallStatus::Cancelled);
    assert!(!fx.data.path().join("made").exists());
}

/// A write asks, and while the person is being asked, a process swaps the folder it names
/// for a link to a folder outside. The yes was given for the path the gate showed: the
/// tool opens exactly that one, refuses the link, and writes nothing anywhere.
#[cfg(unix)]
#[tokio::test]
async fn a_link_swapped_in_while_the_person_is_asked_is_refused_not_followed() {
    let fx = Fixture::new();
    let work = fx.data.path().join("work");
    let outside = fx.data.path().join("outside");
    std::fs::create_dir_all(work.join("sub")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(work.join("sub/notes.txt"), "inside\n").unwrap();
    std::fs::write(outside.join("notes.txt"), "outside\n").unwrap();
    let mut cfg = fx.cfg(ApprovalMode::Ask, "main");
    cfg.run.working_dir = work.clone();
    let asked = std::sync::atomic::AtomicUsize::new(0);
    let (sub, link_to) = (work.join("sub"), outside.clone());
    let ask = |_req: AskRequest| -> futures::future::BoxFuture<'static, bool> {
        asked.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        // The swap, as a racing process would make it between the question and the yes.
        let real = sub.with_file_name("sub.real");
        if sub.is_dir() && !sub.is_symlink() {
            std::fs::rename(&sub, &real).unwrap();
        } else {
            std::fs::remove_file(&sub).unwrap();
        }
        std::os::unix::fs::symlink(&link_to, &sub).unwrap();
        Box::pin(async { true })
    };
    let env = TurnEnv {
        ask: Some(&ask),
        ..fx.env(&cfg)
    };
    let (store, session) = (&fx.store, fx.session_id);
    let cases = [
        (
            tn::WRITE_FILE,
            serde_json::json!({"path": "sub/notes.txt", "content": "written\n"}),
        ),
        (
            tn::WRITE_FILE,
            serde_json::json!({"path": "sub/new/made.txt", "content": "made\n"}),
        ),
        (
            tn::EDIT_FILE,
            serde_json::json!({"path": "sub/notes.txt", "old": "inside", "new": "edited"}),
        ),
        (
            tn::INSERT_AT_LINE,
            serde_json::json!({"path": "sub/notes.txt", "line": 1, "content": "first"}),
        ),
    ];
    for (i, (name, args)) in cases.iter().enumerate() {
        // Each call starts from the real folder.
        if sub.is_symlink() {
            std::fs::remove_file(&sub).unwrap();
            std::fs::rename(sub.with_file_name("sub.real"), &sub).unwrap();
        }
        let id = format!("w{i}");
        store
            .insert_tool_call(&skald_store::NewToolCall {
                tool_call_id: id.clone(),
                session_id: session,
                stack_id: None,
                message_id: None,
                name: (*name).into(),
                args: args.clone(),
                status: ToolCallStatus::Running,
            })
            .unwrap();
        let call = ToolCall {
            id: id.clone(),
            name: (*name).into(),
            arguments: args.to_string(),
        };
        let cancel = CancellationToken::new();
        run_call(&env, session, &call, &cancel, &|_| {})
            .await
            .unwrap();
        assert_eq!(
            asked.load(std::sync::atomic::Ordering::SeqCst),
            i + 1,
            "{name} did not ask, so nothing raced it"
        );
        let record = store
            .list_tool_calls(session)
            .unwrap()
            .into_iter()
            .find(|c| c.tool_call_id == id)
            .unwrap();
        assert_eq!(record.status, ToolCallStatus::Failed, "{name}: {record:?}");
        assert_eq!(
            std::fs::read_to_string(outside.join("notes.txt")).unwrap(),
            "outside\n",
            "{name} wrote through the link"
        );
        assert!(
            !outside.join("new").exists(),
            "{name} made a folder outside"
        );
    }
    std::fs::remove_file(&sub).unwrap();
    std::fs::rename(sub.with_file_name("sub.real"), &sub).unwrap();
    assert_eq!(
        std::fs::read_to_string(work.join("sub/notes.txt")).unwrap(),
        "inside\n"
    );
}

#[test]
fn a_message_whose_image_is_gone_is_kept_saying_so() {
    let f = Fixture::new();
    let cfg = f.cfg(ApprovalMode::Never, "main");
    let env = f.env(&cfg);
    let kept = skald_store::ImageBlob {
        sha256: "ab".repeat(32),
        media_type: "image/png".into(),
        width: 1,
        height: 1,
        data: vec![1, 2, 3],
    };
    f.store.put_image(&kept).unwrap();
    let prompt = Prompt {
        text: "look at these".into(),
        images: vec![
            skald_store::ImageRef {
                sha256: kept.sha256.clone(),
                name: None,
            },
            // Removed since it was attached (another chat deleted, a day gone by).
            skald_store::ImageRef {
                sha256: "cd".repeat(32),
                name: None,
            },
        ],
    };
    let m = append_prompt(&env, f.session_id, &prompt).unwrap();
    assert_eq!(
        m.content,
        "look at these\n\n[1 attached image could not be kept and is missing]"
    );
    let shown = f.store.session_images(f.session_id).unwrap();
    assert_eq!(
        shown[&skald_store::ImageOwner::Message(m.id)][0].sha256,
        kept.sha256
    );
}
