//! The desktop app's IPC through Tauri's mock runtime: the app's real configuration and
//! capabilities, the real engine behind them, no window.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers may panic

use serde_json::{Value, json};
use skald_service::{Service, ServiceConfig};
use std::sync::Arc;
use std::time::Duration;
use tauri::Listener;
use tauri::test::{INVOKE_KEY, MockRuntime, get_ipc_response, mock_builder};
use tauri::webview::InvokeRequest;

struct App {
    app: tauri::App<MockRuntime>,
    webview: tauri::WebviewWindow<MockRuntime>,
    _dir: tempfile::TempDir,
    root: std::path::PathBuf,
}

fn app() -> App {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let data_dir = skald_core::DataDir::at(root.join("data"));
    data_dir.ensure().unwrap();
    let config = skald_core::Config::load_or_create(&data_dir.config_path()).unwrap();
    let service: Arc<Service> = tauri::async_runtime::block_on(async {
        Service::start(ServiceConfig {
            data_dir,
            root: root.clone(),
            config,
            model: None,
            tex_bundle: None,
            file_route: skald_desktop::file_route().to_string(),
            restart: None,
            hidden_env: Vec::new(),
        })
    })
    .unwrap();
    let app = skald_desktop::with_engine(mock_builder(), service)
        .build(tauri::generate_context!())
        .unwrap();
    // The app's setup hook does this when it runs; the mock app is never run.
    skald_desktop::forward_events(app.handle());
    let webview = tauri::WebviewWindowBuilder::new(&app, "main", Default::default())
        .build()
        .unwrap();
    App {
        app,
        webview,
        _dir: dir,
        root,
    }
}

fn invoke(
    webview: &tauri::WebviewWindow<MockRuntime>,
    cmd: &str,
    body: Value,
) -> Result<Value, Value> {
    get_ipc_response(
        webview,
        InvokeRequest {
            cmd: cmd.into(),
            callback: tauri::ipc::CallbackFn(0),
            error: tauri::ipc::CallbackFn(1),
            url: "tauri://localhost".parse().unwrap(),
            body: tauri::ipc::InvokeBody::Json(body),
            headers: Default::default(),
            invoke_key: INVOKE_KEY.to_string(),
        },
    )
    .map(|b| b.deserialize::<Value>().unwrap())
}

fn request(a: &App, id: u64, command: Value) -> Value {
    invoke(
        &a.webview,
        "request",
        json!({"request": {"id": id, "command": command}}),
    )
    .unwrap()
}

#[test]
fn protocol_requests_round_trip_through_ipc() {
    let a = app();
    let created = request(
        &a,
        1,
        json!({"cmd": "create_session", "title": "From the desktop"}),
    );
    assert_eq!(created["type"], "reply");
    assert_eq!(created["id"], 1);
    let id = created["reply"]["session"]["id"].as_i64().unwrap();
    // New chats work in the app's folder.
    assert_eq!(
        created["reply"]["session"]["working_dir"],
        a.root.display().to_string()
    );
    let list = request(&a, 2, json!({"cmd": "list_sessions"}));
    assert_eq!(list["reply"]["sessions"][0]["id"], id);
    // A failure is a protocol failure, as over the WebSocket.
    let gone = request(&a, 3, json!({"cmd": "history", "session_id": 999}));
    assert_eq!(gone["type"], "failure");
    assert_eq!(gone["id"], 3);
    // Markdown links point at the app's file scheme, not at a web route.
    std::fs::write(a.root.join("pic.png"), b"\x89PNG\r\n\x1a\n").unwrap();
    let html = request(
        &a,
        4,
        json!({"cmd": "render_markdown", "text": "![p](pic.png)", "session_id": id}),
    );
    let html = html["reply"]["html"].as_str().unwrap();
    assert!(html.contains(skald_desktop::file_route()), "{html}");
    // A command the app does not offer is refused.
    assert!(invoke(&a.webview, "no_such_command", json!({})).is_err());
}

#[test]
fn engine_events_reach_the_window_as_skald_messages() {
    let a = app();
    let doc = a.root.join("notes.md");
    std::fs::write(&doc, "one").unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<Value>();
    a.app.listen_any(skald_desktop::MESSAGE_EVENT, move |e| {
        let _ = tx.send(serde_json::from_str(e.payload()).unwrap());
    });
    let sub = request(
        &a,
        1,
        json!({"cmd": "subscribe", "path": doc.display().to_string()}),
    );
    assert_eq!(sub["type"], "reply", "{sub}");
    std::thread::sleep(Duration::from_millis(300));
    std::fs::write(&doc, "two").unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let m = rx.recv_timeout(left).expect("no file_changed event");
        if m["type"] == "event" && m["event"]["type"] == "file_changed" {
            assert_eq!(m["event"]["path"], doc.display().to_string());
            assert!(m["session_id"].is_null());
            break;
        }
    }
}
