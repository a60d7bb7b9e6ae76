//! The MCP client against the reference server `@modelcontextprotocol/server-everything`
//! (installed by `scripts/setup.sh --test` into tests/mcp), over stdio and streamable HTTP
//! on 127.0.0.1.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers may panic

use futures::future::BoxFuture;
use serde_json::{Value, json};
use skald_api::CancellationToken;
use skald_mcp::{Elicited, Host, McpError, McpManager, Progress, ServerSpec, Status, Transport};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn servers_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp");
    assert!(
        dir.join("node_modules/@modelcontextprotocol/server-everything")
            .exists(),
        "the reference MCP servers are not installed: run `bash scripts/setup.sh --test`"
    );
    dir
}

fn everything_js() -> String {
    servers_dir()
        .join("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
        .display()
        .to_string()
}

#[derive(Default)]
struct TestHost {
    statuses: Mutex<Vec<(String, Status)>>,
    forms: Mutex<Vec<(String, Value)>>,
}

impl Host for TestHost {
    fn status_changed(&self, server: &str, status: &Status) {
        self.statuses
            .lock()
            .unwrap()
            .push((server.to_string(), status.clone()));
    }
    fn elicit(
        &self,
        _server: &str,
        message: String,
        schema: Value,
        _cancel: CancellationToken,
    ) -> BoxFuture<'static, Elicited> {
        self.forms.lock().unwrap().push((message, schema));
        Box::pin(async { Elicited::Accept(json!({"name": "Ada Lovelace"})) })
    }
}

fn spec(name: &str, transport: Transport, connect: Duration) -> ServerSpec {
    ServerSpec {
        name: name.to_string(),
        transport,
        connect_timeout: connect,
        call_timeout: Duration::from_secs(30),
        log_path: None,
    }
}

fn stdio() -> Transport {
    Transport::Stdio {
        command: "node".into(),
        args: vec![everything_js(), "stdio".into()],
        env: Vec::new(),
        remove_env: Vec::new(),
        cwd: None,
        sandbox: None,
    }
}

fn args(v: Value) -> serde_json::Map<String, Value> {
    v.as_object().unwrap().clone()
}

async fn ready(mgr: &McpManager, name: &str) {
    let status = mgr.wait_ready(name, Duration::from_secs(30)).await.unwrap();
    assert!(matches!(status, Status::Ready { .. }), "{status:?}");
}

fn no_progress(_: Progress) {}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_tools_progress_cancel_and_elicitation() {
    let host = Arc::new(TestHost::default());
    let mgr = McpManager::new(host.clone());
    mgr.start(spec("everything", stdio(), Duration::from_secs(30)));
    // Starting never waits for the server.
    assert_eq!(mgr.status("everything"), Some(Status::Connecting));
    assert!(mgr.tools("everything").is_empty());
    ready(&mgr, "everything").await;
    let names: Vec<String> = mgr
        .tools("everything")
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert!(
        names.contains(&"echo".to_string()) && names.contains(&"get-sum".to_string()),
        "{names:?}"
    );
    let echo = mgr
        .tools("everything")
        .into_iter()
        .find(|t| t.name == "echo")
        .unwrap();
    assert_eq!(echo.input_schema["properties"]["message"]["type"], "string");

    let never = CancellationToken::new();
    let out = mgr
        .call(
            "everything",
            "echo",
            args(json!({"message": "hi there"})),
            &never,
            &no_progress,
        )
        .await
        .unwrap();
    assert!(out.text.contains("hi there") && !out.is_error, "{out:?}");
    let out = mgr
        .call(
            "everything",
            "get-sum",
            args(json!({"a": 2, "b": 3})),
            &never,
            &no_progress,
        )
        .await
        .unwrap();
    assert!(out.text.contains('5'), "{out:?}");

    // Progress notifications arrive while a long operation runs.
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let on_progress = move |p: Progress| sink.lock().unwrap().push(p.progress);
    let out = mgr
        .call(
            "everything",
            "trigger-long-running-operation",
            args(json!({"duration": 1, "steps": 3})),
            &never,
            &on_progress,
        )
        .await
        .unwrap();
    assert!(!out.is_error, "{out:?}");
    assert!(
        seen.lock().unwrap().len() >= 2,
        "{:?}",
        seen.lock().unwrap()
    );

    // A stop ends the call at once (the server is told).
    let stop = CancellationToken::new();
    let trigger = stop.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        trigger.cancel();
    });
    let started = std::time::Instant::now();
    let r = mgr
        .call(
            "everything",
            "trigger-long-running-operation",
            args(json!({"duration": 30, "steps": 30})),
            &stop,
            &no_progress,
        )
        .await;
    assert!(matches!(r, Err(McpError::Cancelled)), "{r:?}");
    assert!(started.elapsed() < Duration::from_secs(10));
    // The connection is still good.
    mgr.call(
        "everything",
        "echo",
        args(json!({"message": "still here"})),
        &never,
        &no_progress,
    )
    .await
    .unwrap();

    // The elicitation tool appears once the server knows we support forms.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !mgr
        .tools("everything")
        .iter()
        .any(|t| t.name == "trigger-elicitation-request")
    {
        assert!(std::time::Instant::now() < deadline, "no elicitation tool");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let out = mgr
        .call(
            "everything",
            "trigger-elicitation-request",
            args(json!({})),
            &never,
            &no_progress,
        )
        .await
        .unwrap();
    assert!(out.text.contains("Ada Lovelace"), "{out:?}");
    let forms = host.forms.lock().unwrap().clone();
    assert_eq!(forms.len(), 1);
    assert!(forms[0].1["properties"]["name"].is_object());
    mgr.stop_all();
}

/// A stdio server in the command sandbox (docs/sandbox.md) still answers; its process is
/// the confined one (no new privileges, a seccomp filter), and what the policy hides it
/// cannot see.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sandboxed_stdio_server_answers_from_inside_the_sandbox() {
    let helper = skald_sandbox::find_helper().expect("cargo builds skald-sandbox beside the tests");
    // Outside /tmp: a sandboxed server sees a private /tmp, where a folder of the host's
    // would be out of sight anyway rather than masked.
    let hidden = skald_testkit::tempdir_seen_by_commands();
    let policy = skald_sandbox::Policy {
        writable: Vec::new(),
        masked: vec![hidden.path().canonicalize().unwrap()],
        network: false,
        ..Default::default()
    };
    let Transport::Stdio {
        command,
        args: server_args,
        env,
        remove_env,
        cwd,
        ..
    } = stdio()
    else {
        unreachable!()
    };
    // The server runs from the repository's folder, which the sandbox keeps in sight
    // (a command's working folder is bound back into its private /tmp, where a CI clone
    // may live).
    let _ = cwd;
    let transport = Transport::Stdio {
        command,
        args: server_args,
        env,
        remove_env,
        cwd: Some(servers_dir()),
        sandbox: Some((helper, policy)),
    };
    let host = Arc::new(TestHost::default());
    let mgr = McpManager::new(host.clone());
    mgr.start(spec("boxed", transport, Duration::from_secs(30)));
    ready(&mgr, "boxed").await;
    let out = mgr
        .call(
            "boxed",
            "echo",
            args(json!({"message": "from the box"})),
            &CancellationToken::new(),
            &no_progress,
        )
        .await
        .unwrap();
    assert!(
        out.text.contains("from the box") && !out.is_error,
        "{out:?}"
    );
    let pid = mgr.process_id("boxed").unwrap();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    assert!(status.contains("NoNewPrivs:\t1"), "{status}");
    assert!(status.contains("Seccomp:\t2"), "{status}");
    // Its mount namespace is its own: the hidden folder is an empty tmpfs there.
    let mounts = std::fs::read_to_string(format!("/proc/{pid}/mountinfo")).unwrap();
    let hidden_path = hidden.path().canonicalize().unwrap();
    assert!(
        mounts
            .lines()
            .any(|l| l.contains(&format!(" {} ", hidden_path.display())) && l.contains("tmpfs")),
        "{mounts}"
    );
    mgr.stop_all();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_mid_call_fails_the_call_and_the_server_comes_back() {
    let mgr = McpManager::new(Arc::new(TestHost::default()));
    mgr.start(spec("everything", stdio(), Duration::from_secs(30)));
    ready(&mgr, "everything").await;
    let pid = mgr.process_id("everything").unwrap();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid as i32),
            nix::sys::signal::Signal::SIGKILL,
        )
        .unwrap();
    });
    let never = CancellationToken::new();
    let r = mgr
        .call(
            "everything",
            "trigger-long-running-operation",
            args(json!({"duration": 20, "steps": 20})),
            &never,
            &no_progress,
        )
        .await;
    assert!(matches!(r, Err(McpError::Closed)), "{r:?}");
    // The supervisor reconnects after its backoff; the new process answers.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        if mgr.process_id("everything").is_some_and(|p| p != pid) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "never reconnected: {:?}",
            mgr.status("everything")
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    mgr.call(
        "everything",
        "echo",
        args(json!({"message": "back"})),
        &never,
        &no_progress,
    )
    .await
    .unwrap();
    mgr.stop_all();
}

/// A call waits for a server that is being started again, but not for one that keeps
/// failing: it is refused once the restart fails too, long before the connect timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_to_a_server_that_keeps_failing_is_refused_without_waiting_it_out() {
    let mgr = McpManager::new(Arc::new(TestHost::default()));
    let broken = Transport::Stdio {
        command: "sh".into(),
        args: vec!["-c".into(), "echo broken >&2; exit 1".into()],
        env: Vec::new(),
        remove_env: Vec::new(),
        cwd: None,
        sandbox: None,
    };
    mgr.start(spec("broken", broken, Duration::from_secs(120)));
    let status = mgr.wait_ready("broken", Duration::from_secs(30)).await;
    assert!(matches!(status, Some(Status::Failed { .. })), "{status:?}");
    let never = CancellationToken::new();
    // Far below the 120 s connect timeout: a wait for "ready" would run into it.
    let r = tokio::time::timeout(
        Duration::from_secs(60),
        mgr.call("broken", "x", serde_json::Map::new(), &never, &no_progress),
    )
    .await
    .expect("the call waited for a server that cannot start");
    assert!(matches!(r, Err(McpError::NotReady { .. })), "{r:?}");
    mgr.stop_all();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_answers_fails_without_blocking() {
    let host = Arc::new(TestHost::default());
    let mgr = McpManager::new(host.clone());
    let silent = Transport::Stdio {
        command: "sh".into(),
        args: vec!["-c".into(), "echo starting >&2; sleep 60".into()],
        env: Vec::new(),
        remove_env: Vec::new(),
        cwd: None,
        sandbox: None,
    };
    let started = std::time::Instant::now();
    mgr.start(spec("silent", silent, Duration::from_millis(800)));
    assert!(
        started.elapsed() < Duration::from_millis(200),
        "start never waits"
    );
    assert_eq!(mgr.status("silent"), Some(Status::Connecting));
    let status = mgr
        .wait_ready("silent", Duration::from_secs(10))
        .await
        .unwrap();
    let Status::Failed { error, log_tail } = status else {
        panic!("{status:?}")
    };
    assert!(error.contains("no answer to initialize"), "{error}");
    assert!(log_tail.contains("starting"), "{log_tail}");
    let never = CancellationToken::new();
    let r = mgr
        .call("silent", "x", serde_json::Map::new(), &never, &no_progress)
        .await;
    assert!(matches!(r, Err(McpError::NotReady { .. })), "{r:?}");
    mgr.stop_all();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streamable_http() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut server = tokio::process::Command::new("node")
        .arg("-r")
        .arg(servers_dir().join("loopback.cjs"))
        .arg(everything_js())
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .kill_on_drop(true)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait for it to listen.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "the HTTP server never listened"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mgr = McpManager::new(Arc::new(TestHost::default()));
    mgr.start(spec(
        "web",
        Transport::Http {
            url: format!("http://127.0.0.1:{port}/mcp"),
            bearer: None,
            oauth: None,
        },
        Duration::from_secs(30),
    ));
    ready(&mgr, "web").await;
    let never = CancellationToken::new();
    let out = mgr
        .call(
            "web",
            "echo",
            args(json!({"message": "over http"})),
            &never,
            &no_progress,
        )
        .await
        .unwrap();
    assert!(out.text.contains("over http"), "{out:?}");
    mgr.stop_all();
    let _ = server.kill().await;
}
