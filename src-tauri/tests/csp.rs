//! The desktop window's Content-Security-Policy (tauri.conf.json) lets nothing load from or
//! talk to another origin: only the app, its IPC and its `skald-file` scheme.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers may panic

#[test]
fn the_window_has_a_strict_content_security_policy() {
    let conf: serde_json::Value = serde_json::from_str(include_str!("../tauri.conf.json")).unwrap();
    let csp = conf["app"]["security"]["csp"].as_object().unwrap();
    let policy: String = csp
        .iter()
        .map(|(k, v)| format!("{k} {}; ", v.as_str().unwrap()))
        .collect();
    assert_eq!(
        skald_testkit::csp_problems(&policy),
        Vec::<String>::new(),
        "{policy}"
    );
    // What IPC may reach is only the app's own bridge.
    assert!(
        policy.contains("connect-src ipc: http://ipc.localhost"),
        "{policy}"
    );
}
