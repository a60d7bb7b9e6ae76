//! The OS keyring path, against a real Secret Service. `scripts/test.sh` runs this under
//! `dbus-run-session` with an unlocked gnome-keyring (installed by `scripts/setup.sh
//! --test`); elsewhere it is ignored, since it needs that session.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

use skald_secrets::{Backend, Secrets};

#[test]
#[ignore = "needs a Secret Service: scripts/test.sh runs it under dbus-run-session"]
fn values_go_to_the_keyring_and_never_to_disk() {
    let dir = tempfile::tempdir().unwrap();
    let secrets = Secrets::open(dir.path()).unwrap();
    assert_eq!(
        secrets.backend(),
        Backend::Keyring,
        "no Secret Service answered"
    );
    let name = format!("skald-test-{}", std::process::id());
    assert_eq!(
        secrets.set(&name, "kr-value-31337").unwrap(),
        Some(Backend::Keyring)
    );
    let again = Secrets::open(dir.path()).unwrap();
    assert_eq!(again.get(&name).unwrap().as_deref(), Some("kr-value-31337"));
    assert_eq!(
        again.list(Some("skald-test-*")).unwrap(),
        std::slice::from_ref(&name)
    );
    for entry in walk(dir.path()) {
        let text = String::from_utf8_lossy(&std::fs::read(entry).unwrap()).into_owned();
        assert!(!text.contains("kr-value-31337"));
    }
    assert!(again.delete(&name).unwrap());
    assert_eq!(again.get(&name).unwrap(), None);
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
