//! OAuth for HTTP MCP servers, end to end with the real `skald`: a server behind OAuth
//! (tests/mcp/oauth_server.py, MCP and its authorization server over real HTTP on
//! 127.0.0.1) is registered and shows `needs login`; `skald mcp login` signs in through
//! the browser (`$BROWSER`, which follows the redirect back to Skald's loopback port); a
//! chat then calls its tools while the tokens expire and are revoked — refreshed before
//! expiry and on a 401 without restarting anything — until refreshing is refused too,
//! when the call says the login expired. The tokens stay in the secrets store, never in
//! the database, and `skald mcp logout` forgets them.

use serde_json::Value;
use skald_testkit::{ScriptedServer, answer, delayed, tool_call};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use crate::common::{events, ok, result, skald};

struct OAuthServer {
    child: Child,
    url: String,
}

impl Drop for OAuthServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The server, its access tokens living `life` seconds.
fn oauth_server(life: u32) -> OAuthServer {
    oauth_server_as(life, "code")
}

/// The server in a mode of its own: "code" (a person signs in) or "enterprise" (cross-app
/// access through its identity provider).
fn oauth_server_as(life: u32, mode: &str) -> OAuthServer {
    oauth_server_slow(life, mode, 0.0)
}

/// The server, each refresh taking `refresh_delay` seconds after it spent the old token.
fn oauth_server_slow(life: u32, mode: &str, refresh_delay: f64) -> OAuthServer {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp/oauth_server.py");
    let mut child = Command::new("python3")
        .arg(script)
        .arg(life.to_string())
        .arg(mode)
        .arg(refresh_delay.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("python3 runs the OAuth test server");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port: u16 = line.trim().parse().unwrap();
    OAuthServer {
        child,
        url: format!("http://127.0.0.1:{port}/mcp"),
    }
}

fn browser() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp/browser.sh")
}

fn status_of(data: &Path) -> Value {
    let out = ok(&skald(data, None)
        .args(["mcp", "list", "--json"])
        .output()
        .unwrap());
    let list: Vec<Value> = serde_json::from_str(&out).unwrap();
    list[0]["status"].clone()
}

#[test]
fn a_server_behind_oauth_is_signed_in_to_refreshed_and_signed_out_of() {
    let server = oauth_server(2);
    let data = tempfile::tempdir().unwrap();
    let added = ok(&skald(data.path(), None)
        .args(["mcp", "add", "docs", "--url", &server.url])
        .output()
        .unwrap());
    assert!(added.contains("`docs`: needs login"), "{added}");
    assert_eq!(
        status_of(data.path()),
        serde_json::json!({"state": "needs_login", "expired": false})
    );
    let doctor = ok(&skald(data.path(), None)
        .args(["doctor", "--json"])
        .output()
        .unwrap());
    let checks: Vec<Value> = serde_json::from_str(&doctor).unwrap();
    let logins = checks.iter().find(|c| c["name"] == "MCP logins").unwrap();
    assert_eq!(logins["status"], "missing", "{logins}");
    assert!(
        logins["hint"]
            .as_str()
            .unwrap()
            .contains("skald mcp login docs"),
        "{logins}"
    );

    let login = skald(data.path(), None)
        .args(["mcp", "login", "docs"])
        .env("BROWSER", browser())
        .output()
        .unwrap();
    let said = ok(&login);
    assert!(
        said.contains("signed in to `docs` (registered client; access: notes:read)"),
        "{said}"
    );
    assert!(said.contains("`docs` is ready with 2 tools"), "{said}");
    let stderr = String::from_utf8_lossy(&login.stderr);
    assert!(
        stderr.contains("/authorize?"),
        "the sign-in address is shown: {stderr}"
    );

    // A chat: the token expires between the first two calls (refreshed before the
    // request), then the server refuses the third call's token (refreshed on the 401 and
    // the call made again), then refuses refreshing too: the login has expired.
    let model = ScriptedServer::new(vec![
        tool_call("a1", "activate_tools", r#"{"groups": ["docs"]}"#),
        tool_call("w1", "mcp__docs__whoami", "{}"),
        delayed(2600, tool_call("w2", "mcp__docs__whoami", "{}")),
        tool_call("r1", "mcp__docs__revoke", "{}"),
        tool_call("w3", "mcp__docs__whoami", "{}"),
        tool_call("r2", "mcp__docs__revoke", r#"{"everything": true}"#),
        tool_call("w4", "mcp__docs__whoami", "{}"),
        answer("done"),
    ]);
    let out = skald(data.path(), Some(&model))
        .args(["exec", "--json", "--approve", "all", "who am I?"])
        .output()
        .unwrap();
    let ev = events(&ok(&out));
    let (w1, w2, w3, w4) = (
        result(&ev, "w1"),
        result(&ev, "w2"),
        result(&ev, "w3"),
        result(&ev, "w4"),
    );
    assert!(
        w1.contains("called with at-1; refreshes granted: 0"),
        "{w1}"
    );
    assert!(
        w2.contains("called with at-2; refreshes granted: 1"),
        "{w2}"
    );
    assert!(
        w3.contains("called with at-3; refreshes granted: 2"),
        "{w3}"
    );
    assert!(
        w4.starts_with("tool_error")
            && w4.contains("login expired")
            && w4.contains("skald mcp login docs"),
        "{w4}"
    );
    assert_eq!(
        status_of(data.path()),
        serde_json::json!({"state": "needs_login", "expired": true})
    );

    // The tokens live in the secrets store (here its encrypted file), nowhere else, and
    // never in what the model read.
    let names = ok(&skald(data.path(), None)
        .args(["secrets", "list"])
        .output()
        .unwrap());
    assert!(names.contains("mcp-oauth.docs"), "{names}");
    for entry in walk(data.path()) {
        let bytes = std::fs::read(&entry).unwrap_or_default();
        let text = String::from_utf8_lossy(&bytes);
        assert!(
            !text.contains("secretvalue"),
            "a token is readable in {}",
            entry.display()
        );
    }

    // Signing in again works from where it stands; signing out forgets the login.
    ok(&skald(data.path(), None)
        .args(["mcp", "login", "docs"])
        .env("BROWSER", browser())
        .output()
        .unwrap());
    let out = ok(&skald(data.path(), None)
        .args(["mcp", "logout", "docs"])
        .output()
        .unwrap());
    assert!(out.contains("signed out of `docs`"), "{out}");
    // Not "expired": no tokens are left to have run out.
    assert_eq!(
        status_of(data.path()),
        serde_json::json!({"state": "needs_login", "expired": false})
    );
}

/// A login the browser never completes ends with a clear error, and a server that takes
/// a bearer token or speaks stdio does not log in.
#[test]
fn a_login_that_cannot_happen_says_why() {
    let server = oauth_server(60);
    let data = tempfile::tempdir().unwrap();
    ok(&skald(data.path(), None)
        .args(["mcp", "add", "docs", "--url", &server.url, "--no-check"])
        .output()
        .unwrap());
    // The authorization server refuses a client it does not know: the browser comes back
    // with its error, which the login reports.
    let refused = skald(data.path(), None)
        .args(["mcp", "login", "docs", "--client-id", "nobody"])
        .env("BROWSER", browser())
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(1));
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        err.contains("logging in to `docs` failed: the authorization server refused: unauthorized_client: unknown client"),
        "{err}"
    );
    ok(&skald(data.path(), None)
        .args([
            "mcp",
            "add",
            "tokened",
            "--url",
            &server.url,
            "--token-env",
            "SOME_TOKEN",
            "--no-check",
        ])
        .output()
        .unwrap());
    let out = skald(data.path(), None)
        .args(["mcp", "login", "tokened"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("bearer token"));
}

/// The bearer tokens a server was sent.
fn presented(server: &OAuthServer) -> Vec<String> {
    let at = server.url.replace("/mcp", "/presented");
    let out = Command::new("curl")
        .args(["--silent", "--max-time", "10", &at])
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A login belongs to the server's address, not its name: a name pointed elsewhere — a
/// server on another port, another path of the same one — does not carry the tokens
/// there (the login is dropped with the old address).
#[test]
fn a_login_is_never_sent_to_another_address_of_the_same_name() {
    let (a, b) = (oauth_server(60), oauth_server(60));
    let data = tempfile::tempdir().unwrap();
    let add = |url: &str| {
        ok(&skald(data.path(), None)
            .args(["mcp", "add", "docs", "--url", url])
            .output()
            .unwrap())
    };
    add(&a.url);
    ok(&skald(data.path(), None)
        .args(["mcp", "login", "docs"])
        .env("BROWSER", browser())
        .output()
        .unwrap());
    assert!(presented(&a).iter().any(|t| t.starts_with("at-1")));
    // Another server: it asks for a login of its own, and never sees a's token.
    let said = add(&b.url);
    assert!(said.contains("`docs`: needs login"), "{said}");
    assert!(presented(&b).is_empty(), "b was sent {:?}", presented(&b));
    // Another path of the same server: no token goes with the request either.
    let sent_to_a = presented(&a).len();
    add(&a.url.replace("/mcp", "/other"));
    assert_eq!(presented(&a).len(), sent_to_a, "{:?}", presented(&a));
    // The login went with the old address: pointed back, the name asks for a new one.
    let said = add(&a.url);
    assert!(said.contains("`docs`: needs login"), "{said}");
    assert_eq!(presented(&a).len(), sent_to_a);
}

/// Two processes refreshing one login at once (the app and `skald` in a terminal, both
/// finding the token run out) take turns: the refresh token rotates, and the second would
/// otherwise spend the one the first already had — refused, and told to log in again.
#[test]
fn two_processes_refreshing_one_login_at_once_both_get_through() {
    let server = oauth_server_slow(1, "code", 0.6);
    let data = tempfile::tempdir().unwrap();
    ok(&skald(data.path(), None)
        .args(["mcp", "add", "docs", "--url", &server.url, "--no-check"])
        .output()
        .unwrap());
    ok(&skald(data.path(), None)
        .args(["mcp", "login", "docs"])
        .env("BROWSER", browser())
        .output()
        .unwrap());
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let both: Vec<Child> = (0..2)
        .map(|_| {
            skald(data.path(), None)
                .args(["mcp", "tools", "docs"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in both {
        let out = child.wait_with_output().unwrap();
        let said = ok(&out);
        assert!(said.contains("whoami"), "{said}");
    }
}

/// A user's ID token from the identity provider, valid for `secs` more seconds (the test
/// identity provider does not check signatures).
fn id_token(secs: i64) -> String {
    use base64::Engine;
    let b64 = |v: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let claims = serde_json::json!({"sub": "ada", "exp": now + secs, "nonce": "idtokensecret"});
    format!(
        "{}.{}.{}",
        b64(r#"{"alg":"ES256"}"#),
        b64(&claims.to_string()),
        b64("signature")
    )
}

/// The number after `what: ` in a tool's answer.
fn count(text: &str, what: &str) -> u32 {
    let at = text.find(&format!("{what}: ")).unwrap() + what.len() + 2;
    text[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .unwrap()
}

/// Cross-app access (SEP-990): the login exchanges the user's ID token at their identity
/// provider for a grant the server's authorization server redeems — no browser. The
/// server's tokens have no refresh token; when one runs out, Skald exchanges the ID token
/// again before the request, without a person. The ID token is a secret like the tokens,
/// and one that has expired is refused with what to do.
#[test]
fn an_enterprise_login_exchanges_the_id_token_again_when_the_servers_token_runs_out() {
    let server = oauth_server_as(2, "enterprise");
    let data = tempfile::tempdir().unwrap();
    ok(&skald(data.path(), None)
        .args(["mcp", "add", "docs", "--url", &server.url])
        .output()
        .unwrap());
    let idp = server.url.replace("/mcp", "/idp");
    let login = |token: &str| {
        skald(data.path(), None)
            .args([
                "mcp",
                "login",
                "docs",
                "--idp",
                &idp,
                "--idp-client-id",
                "skald-idp",
            ])
            .args(["--id-token-env", "ID_TOKEN", "--client-id", "skald-xaa"])
            .args(["--client-secret-env", "XAA_SECRET"])
            .env("ID_TOKEN", token)
            .env("XAA_SECRET", "xaa-secret")
            // No browser takes part: one that ran would fail the login.
            .env("BROWSER", "false")
            .output()
            .unwrap()
    };
    let token = id_token(600);
    let said = ok(&login(&token));
    assert!(
        said.contains("signed in to `docs` (identity provider client; access: notes:read)"),
        "{said}"
    );

    let model = ScriptedServer::new(vec![
        tool_call("a1", "activate_tools", r#"{"groups": ["docs"]}"#),
        tool_call("w1", "mcp__docs__whoami", "{}"),
        delayed(2600, tool_call("w2", "mcp__docs__whoami", "{}")),
        answer("done"),
    ]);
    let out = skald(data.path(), Some(&model))
        .args(["exec", "--json", "--approve", "all", "who am I?"])
        .output()
        .unwrap();
    let ev = events(&ok(&out));
    let (w1, w2) = (result(&ev, "w1"), result(&ev, "w2"));
    assert!(w1.contains("refreshes granted: 0"), "{w1}");
    assert!(
        count(&w2, "exchanges") > count(&w1, "exchanges") && count(&w2, "refreshes granted") == 0,
        "the ID token was exchanged again, nothing refreshed: {w1} / {w2}"
    );
    assert_eq!(
        status_of(data.path()),
        serde_json::json!({"state": "ready", "tools": 2})
    );
    for entry in walk(data.path()) {
        let text = String::from_utf8_lossy(&std::fs::read(&entry).unwrap_or_default()).into_owned();
        assert!(
            !text.contains(&token) && !text.contains("secretvalue") && !text.contains("xaa-secret"),
            "a credential is readable in {}",
            entry.display()
        );
    }

    ok(&skald(data.path(), None)
        .args(["mcp", "logout", "docs"])
        .output()
        .unwrap());
    let expired = login(&id_token(-60));
    assert_eq!(expired.status.code(), Some(1));
    let err = String::from_utf8_lossy(&expired.stderr);
    assert!(
        err.contains("the identity provider's ID token has expired"),
        "{err}"
    );
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}
