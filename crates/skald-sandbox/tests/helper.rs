//! The `skald-sandbox` helper as a real process: it confines a probe, refuses what it cannot
//! do without running the command, and a confined command has exactly the policy's rights.
//! (Building this test also puts the helper next to the other test binaries, where `skald`
//! and the engine's tests find it.)

#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Output};

const HELPER: &str = env!("CARGO_BIN_EXE_skald-sandbox");

fn run(policy: &skald_sandbox::Policy, script: &str) -> Output {
    let args = skald_sandbox::command_args(
        policy,
        std::ffi::OsStr::new("sh"),
        &["-c".into(), script.into()],
    )
    .unwrap();
    Command::new(HELPER).args(args).output().unwrap()
}

#[test]
fn the_probe_confines_a_process_and_says_with_what() {
    let out = Command::new(HELPER).arg("--probe").output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("Landlock"));
    assert!(skald_sandbox::probe().is_ready());
}

#[test]
fn bad_arguments_and_policies_run_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let script = format!("touch {}", marker.display());
    for args in [
        vec!["--policy", "{not json", "--", "sh", "-c", &script],
        vec!["--policy", "{}", "sh", "-c", &script],
        vec!["--policy", "{}", "--"],
        vec!["--bogus"],
        vec![],
    ] {
        let out = Command::new(HELPER).args(&args).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(skald_sandbox::SETUP_FAILED),
            "{args:?}"
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.starts_with(skald_sandbox::PREFIX), "{args:?}: {err}");
        assert!(!marker.exists(), "{args:?} ran the command");
    }
    // A program that cannot be started is the helper's error too, after confinement.
    let out = run(&skald_sandbox::Policy::default(), "exit 0");
    assert!(out.status.success());
    let out = Command::new(HELPER)
        .args(["--policy", "{}", "--", "/nonexistent/program"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(skald_sandbox::SETUP_FAILED));
}

#[test]
fn a_confined_command_writes_only_where_the_policy_says_and_cannot_lift_its_masks() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path().canonicalize().unwrap();
    let (w, other, hidden) = (root.join("w"), root.join("other"), root.join("w/hidden"));
    for d in [&w, &other, &hidden] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(hidden.join("key"), "SECRET").unwrap();
    std::fs::write(root.join("file-key"), "FILESECRET").unwrap();
    let policy = skald_sandbox::Policy {
        writable: vec![w.clone()],
        masked: vec![hidden.clone(), root.join("file-key")],
        network: false,
    };
    let script = format!(
        "echo ok > {w}/in; echo no > {o}/out; cat {h}/key; cat {r}/file-key; \
         touch {h}/new; umount {h}; mount -t tmpfs x {o}; ln -s / {w}/root-link; \
         echo no > {w}/root-link/x 2>&1; mv {h} {w}/moved; cat {h}/key; exit 0",
        w = w.display(),
        o = other.display(),
        h = hidden.display(),
        r = root.display()
    );
    let out = run(&policy, &script);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(w.join("in")).unwrap(),
        "ok\n",
        "{text}"
    );
    assert!(!other.join("out").exists(), "{text}");
    assert!(!text.contains("SECRET"), "{text}");
    assert!(!hidden.join("new").exists(), "{text}");
    assert!(!std::path::Path::new("/x").exists(), "{text}");
    // Outside the sandbox nothing changed.
    assert_eq!(
        std::fs::read_to_string(hidden.join("key")).unwrap(),
        "SECRET"
    );
}
