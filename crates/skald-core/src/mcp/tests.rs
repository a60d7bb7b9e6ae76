//! Unit tests of `mcp`.

use super::*;

#[test]
fn a_login_secret_is_never_handed_to_a_server() {
    assert!(is_login_secret("mcp-oauth.docs"));
    assert!(!is_login_secret("GITHUB_TOKEN"));
    let e = resolve("${secret:mcp-oauth.docs}", None).unwrap_err();
    assert!(e.contains("login"), "{e}");
    // Neighbours: another secret still resolves as before (here: no secrets in this run).
    assert!(
        resolve("${secret:GITHUB_TOKEN}", None)
            .unwrap_err()
            .contains("not available")
    );
}

#[test]
fn names_split_and_are_checked() {
    assert_eq!(
        tool_name("everything", "get-sum"),
        "mcp__everything__get-sum"
    );
    assert_eq!(
        split_name("mcp__everything__get-sum"),
        Some(("everything", "get-sum"))
    );
    assert_eq!(split_name("mcp__a_b__c__d"), Some(("a_b", "c__d")));
    assert_eq!(split_name("read_file"), None);
    assert!(check_server_name("github-work").is_ok());
    for bad in [
        "",
        "a__b",
        "has space",
        "config",
        "gh_",
        "_gh",
        &"x".repeat(33),
    ] {
        assert!(check_server_name(bad).is_err(), "{bad}");
    }
}

#[test]
fn registrations_are_checked() {
    let ok = record_from_args(&json!({"name": "everything", "command": "node", "args": ["x.js", "stdio"], "env": {"K": "${env:HOME}"}})).unwrap();
    assert_eq!(ok.transport, "stdio");
    assert_eq!(ok.args, ["x.js", "stdio"]);
    let http = record_from_args(
        &json!({"name": "gh", "url": "https://api.example/mcp", "api_key": "${env:GH_TOKEN}"}),
    )
    .unwrap();
    assert_eq!(http.transport, "http");
    for (bad, why) in [
        (json!({"command": "node"}), "`name` is required"),
        (json!({"name": "a b", "command": "node"}), "cannot name"),
        (json!({"name": "x"}), "needs a command"),
        (
            json!({"name": "x", "url": "ftp://h"}),
            "http:// or https://",
        ),
        (
            json!({"name": "x", "url": "https://h", "api_key": "ghp_secret"}),
            "never the token",
        ),
        (json!({"name": "x", "command": "c", "args": [1]}), "strings"),
        (
            json!({"name": "x", "command": "c", "transport": "carrier-pigeon"}),
            "unknown transport",
        ),
    ] {
        let e = record_from_args(&bad).unwrap_err();
        assert!(e.contains(why), "{bad}: {e}");
    }
}

#[test]
fn answers_fill_forms() {
    let schema = json!({"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}}, "required": ["name"]});
    assert_eq!(form_content("Ada", &schema), json!({"name": "Ada"}));
    assert_eq!(
        form_content(r#"{"name": "Ada", "age": 36}"#, &schema),
        json!({"name": "Ada", "age": 36})
    );
    let one = json!({"properties": {"city": {"type": "string"}}});
    assert_eq!(form_content("Oslo", &one), json!({"city": "Oslo"}));
}

#[test]
fn references_resolve_and_specs_are_checked() {
    let path = std::env::var("PATH").unwrap();
    let rec = McpServerRecord {
        name: "web".into(),
        transport: "http".into(),
        command: None,
        args: Vec::new(),
        env: serde_json::Map::new(),
        url: Some("http://127.0.0.1:1/mcp".into()),
        api_key: Some("${env:PATH}".into()),
        description: String::new(),
        friendly_name: None,
        enabled: true,
        sandbox: false,
        sandbox_network: false,
        created_at: 0,
        updated_at: 0,
    };
    let spec = spec_for(
        &rec,
        Duration::from_secs(1),
        Duration::from_secs(1),
        None,
        None,
        &Default::default(),
        &Default::default(),
    )
    .unwrap();
    assert_eq!(
        spec.transport,
        Transport::Http {
            url: "http://127.0.0.1:1/mcp".into(),
            bearer: Some(path),
            oauth: None
        }
    );
    let missing = McpServerRecord {
        api_key: Some("${env:SKALD_TEST_NOT_SET_ANYWHERE}".into()),
        ..rec.clone()
    };
    assert!(
        spec_for(
            &missing,
            Duration::ZERO,
            Duration::ZERO,
            None,
            None,
            &Default::default(),
            &Default::default()
        )
        .unwrap_err()
        .contains("SKALD_TEST_NOT_SET_ANYWHERE")
    );
    let no_url = McpServerRecord {
        url: Some("ftp://x".into()),
        ..rec
    };
    assert!(
        spec_for(
            &no_url,
            Duration::ZERO,
            Duration::ZERO,
            None,
            None,
            &Default::default(),
            &Default::default()
        )
        .is_err()
    );
}
