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
        ..Default::default()
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

/// Runs `script` through the spawner (`skald_sandbox::spawner`) with `env` as its whole
/// environment; its output (stdout then stderr) and status.
fn spawned(
    policy: &skald_sandbox::Policy,
    script: &str,
    env: &[(&str, &str)],
) -> Result<(String, std::process::ExitStatus), skald_sandbox::spawner::LaunchError> {
    spawned_with(policy, script, env, &std::env::temp_dir())
}

/// `spawned` with the command's working directory `cwd` and no environment.
fn spawned_in(
    policy: &skald_sandbox::Policy,
    script: &str,
    cwd: &std::path::Path,
) -> Result<(String, std::process::ExitStatus), skald_sandbox::spawner::LaunchError> {
    spawned_with(
        policy,
        script,
        &[("PATH", &std::env::var("PATH").unwrap())],
        cwd,
    )
}

/// Held (shared) by every spawned command, and alone by a test that needs its spawner to
/// stay the pool's between two commands: the pool keeps four, and the other tests running
/// at the same time would otherwise push it out.
static POOL_USE: std::sync::RwLock<()> = std::sync::RwLock::new(());

fn spawned_with(
    policy: &skald_sandbox::Policy,
    script: &str,
    env: &[(&str, &str)],
    cwd: &std::path::Path,
) -> Result<(String, std::process::ExitStatus), skald_sandbox::spawner::LaunchError> {
    let _shared = POOL_USE.read().unwrap_or_else(|e| e.into_inner());
    spawned_alone(policy, script, env, cwd)
}

fn spawned_alone(
    policy: &skald_sandbox::Policy,
    script: &str,
    env: &[(&str, &str)],
    cwd: &std::path::Path,
) -> Result<(String, std::process::ExitStatus), skald_sandbox::spawner::LaunchError> {
    use std::io::Read;
    let (mut out_r, out_w) = std::io::pipe().unwrap();
    let (mut err_r, err_w) = std::io::pipe().unwrap();
    let launched = skald_sandbox::spawner::launch(
        std::path::Path::new(HELPER),
        skald_sandbox::spawner::Launch {
            program: "sh".into(),
            args: vec!["-c".into(), script.into()],
            cwd: cwd.to_path_buf(),
            env: env.iter().map(|(k, v)| (k.into(), v.into())).collect(),
            policy: policy.clone(),
            stdout: out_w.into(),
            stderr: err_w.into(),
        },
    )?;
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        err_r.read_to_string(&mut s).unwrap();
        s
    });
    let mut text = String::new();
    out_r.read_to_string(&mut text).unwrap();
    text.push_str(&err.join().unwrap());
    Ok((text, launched.wait().unwrap()))
}

/// Starts `program ARGS…` through the spawner in `cwd` (its output discarded) and returns
/// it started, for a test to give up on by dropping it.
fn started_unwatched(
    program: &str,
    args: Vec<std::ffi::OsString>,
    cwd: &std::path::Path,
    policy: skald_sandbox::Policy,
) -> skald_sandbox::spawner::Launched {
    let (_, w) = std::io::pipe().unwrap();
    let (_, e) = std::io::pipe().unwrap();
    let requested = skald_sandbox::spawner::try_request(
        std::path::Path::new(HELPER),
        skald_sandbox::spawner::Launch {
            program: program.into(),
            args,
            cwd: cwd.to_path_buf(),
            env: vec![("PATH".into(), "/usr/bin:/bin".into())],
            policy,
            stdout: w.into(),
            stderr: e.into(),
        },
        true,
    )
    .ok()
    .unwrap()
    .unwrap();
    requested.started().unwrap_or_else(|e| panic!("{e}"))
}

/// The spawner's pid a command printed as `spawner=$PPID`.
fn spawner_of(text: &str) -> Option<String> {
    text.lines()
        .find_map(|l| l.strip_prefix("spawner="))
        .map(str::to_string)
}

/// Waits until `done` holds, for at most five seconds (in 10 ms steps); whether it does.
fn wait_until(mut done: impl FnMut() -> bool) -> bool {
    for _ in 0..500 {
        if done() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    done()
}

#[test]
fn the_spawner_gives_each_command_its_own_policy_in_one_namespace() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path().canonicalize().unwrap();
    let (a, b, hidden) = (root.join("a"), root.join("b"), root.join("hidden"));
    for d in [&a, &b, &hidden] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(hidden.join("key"), "SECRET").unwrap();
    let policy = |w: &std::path::Path| skald_sandbox::Policy {
        writable: vec![w.to_path_buf()],
        masked: vec![hidden.clone()],
        network: false,
        ..Default::default()
    };
    let script = |mine: &std::path::Path, theirs: &std::path::Path| {
        format!(
            "read -r _ _ _ pp _ < /proc/self/stat; echo ok > {m}/mine; echo no > {t}/theirs; cat {h}/key; umount {h}; \
             mount -t tmpfs x {t}; cat {h}/key; echo \"spawner=$pp\"; echo \"mark=$MARK\"",
            m = mine.display(),
            t = theirs.display(),
            h = hidden.display()
        )
    };
    let (first, status) = spawned(&policy(&a), &script(&a, &b), &[("MARK", "one")]).unwrap();
    assert!(status.success(), "{first}");
    let (second, _) = spawned(&policy(&b), &script(&b, &a), &[("MARK", "two")]).unwrap();
    for (text, mine, theirs) in [(&first, &a, &b), (&second, &b, &a)] {
        assert_eq!(std::fs::read_to_string(mine.join("mine")).unwrap(), "ok\n");
        assert!(!theirs.join("theirs").exists(), "{text}");
        assert!(!text.contains("SECRET"), "{text}");
    }
    // Each got the environment it was given, nothing else.
    assert!(first.contains("mark=one") && second.contains("mark=two"));
    // One spawner served both: the namespace and masks were made once.
    let spawner = |t: &str| {
        t.lines()
            .find_map(|l| l.strip_prefix("spawner="))
            .unwrap()
            .to_string()
    };
    assert_eq!(spawner(&first), spawner(&second), "{first}\n{second}");
    assert_eq!(
        std::fs::read_to_string(hidden.join("key")).unwrap(),
        "SECRET"
    );
}

/// A request carries the environment only when it is not the one sent before on that
/// spawner's socket (the spawner keeps the last): each command still gets exactly its own,
/// one after the other and from several threads at once.
#[test]
fn each_command_gets_its_own_environment_whether_it_was_sent_again_or_not() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path().canonicalize().unwrap();
    let hidden = root.join("hidden-env"); // This test's own spawner.
    std::fs::create_dir_all(&hidden).unwrap();
    let policy = skald_sandbox::Policy {
        writable: vec![root.clone()],
        masked: vec![hidden],
        network: false,
        ..Default::default()
    };
    let script = "read -r _ _ _ pp _ < /proc/self/stat; echo \"seen=${MARK-unset}/${OTHER-unset}\"; echo \"spawner=$pp\"";
    let run = |env: &[(&str, &str)]| {
        let (text, status) = spawned(&policy, script, env).unwrap();
        assert!(status.success(), "{text}");
        let seen = text
            .lines()
            .find_map(|l| l.strip_prefix("seen="))
            .unwrap_or_default()
            .to_string();
        (seen, spawner_of(&text))
    };
    let turns: [(&[(&str, &str)], &str); 6] = [
        (&[("MARK", "one")], "one/unset"),
        (&[("MARK", "one")], "one/unset"),
        (&[("MARK", "two"), ("OTHER", "x")], "two/x"),
        (&[("MARK", "one")], "one/unset"),
        (&[], "unset/unset"),
        (&[], "unset/unset"),
    ];
    let mut spawners = std::collections::BTreeSet::new();
    for (env, expected) in turns {
        let (seen, spawner) = run(env);
        assert_eq!(seen, expected, "{env:?}");
        spawners.insert(spawner);
    }
    std::thread::scope(|s| {
        for t in 0..6 {
            let run = &run;
            s.spawn(move || {
                for i in 0..6 {
                    // Threads alternate between their own mark and one they all share.
                    let mark = if i % 2 == 0 {
                        format!("t{t}")
                    } else {
                        "shared".to_string()
                    };
                    let (seen, _) = run(&[("MARK", &mark)]);
                    assert_eq!(seen, format!("{mark}/unset"));
                }
            });
        }
    });
    assert_eq!(spawners.len(), 1, "{spawners:?}");
}

/// A command that runs long does not hold up the next one, whether the spawner's main
/// thread took it (the first command of a spawner) or a readied worker did (the ones
/// after): the next worker is readied shortly after a command started.
#[test]
fn a_command_that_runs_long_does_not_hold_up_the_next() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path().canonicalize().unwrap();
    let hidden = root.join("hidden-long"); // This test's own spawner.
    std::fs::create_dir_all(&hidden).unwrap();
    let policy = skald_sandbox::Policy {
        writable: vec![root.clone()],
        masked: vec![hidden],
        network: false,
        ..Default::default()
    };
    for round in 0..3 {
        let (started, go) = (
            root.join(format!("started{round}")),
            root.join(format!("go{round}")),
        );
        let long = format!(
            "touch {s}; i=0; while [ ! -e {g} ] && [ $i -lt 1000 ]; do sleep 0.01; i=$((i+1)); done; \
             [ -e {g} ] && echo released",
            s = started.display(),
            g = go.display()
        );
        let long = {
            let policy = policy.clone();
            std::thread::spawn(move || spawned(&policy, &long, &[]).unwrap())
        };
        assert!(
            wait_until(|| started.exists()),
            "round {round}: the long one did not start"
        );
        let (_, status) = spawned(&policy, &format!("touch {}", go.display()), &[]).unwrap();
        assert!(status.success());
        let (text, _) = long.join().unwrap();
        assert!(text.contains("released"), "round {round}: {text}");
    }
}

#[test]
fn a_hidden_folder_made_after_a_spawner_started_is_hidden_by_a_new_one() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path().canonicalize().unwrap();
    let (work, hidden) = (root.join("work"), root.join("late-secrets"));
    std::fs::create_dir_all(&work).unwrap();
    let policy = skald_sandbox::Policy {
        writable: vec![work.clone()],
        masked: vec![hidden.clone()],
        network: false,
        ..Default::default()
    };
    let script = format!(
        "read -r _ _ _ pp _ < /proc/self/stat; cat {}/key; echo \"spawner=$pp\"",
        hidden.display()
    );
    let (before, _) = spawned(&policy, &script, &[]).unwrap();
    std::fs::create_dir_all(&hidden).unwrap();
    std::fs::write(hidden.join("key"), "LATESECRET").unwrap();
    let (after, _) = spawned(&policy, &script, &[]).unwrap();
    assert!(!after.contains("LATESECRET"), "{after}");
    let spawner = |t: &str| {
        t.lines()
            .find_map(|l| l.strip_prefix("spawner="))
            .map(str::to_string)
    };
    assert_ne!(spawner(&before), spawner(&after), "{before}\n{after}");
}

#[test]
fn a_command_cannot_read_signal_or_trace_its_spawner() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path().canonicalize().unwrap();
    let policy = skald_sandbox::Policy {
        writable: vec![root.clone()],
        masked: Vec::new(),
        network: false,
        ..Default::default()
    };
    // The thread that started the command shares its Landlock domain; only the spawner
    // being non-dumpable keeps that thread's /proc entries (and so its memory) closed.
    let script = "read -r _ _ _ pp _ < /proc/self/stat; for t in /proc/$pp /proc/$pp/task/*; do \
                    for f in environ maps mem auxv stack; do \
                      cat $t/$f >/dev/null 2>&1 && echo \"read $t/$f\"; \
                    done; \
                  done; \
                  kill -0 $pp 2>/dev/null && echo signalled; \
                  ls /proc/$pp/task | wc -l";
    let (text, status) = spawned(&policy, script, &[]).unwrap();
    assert!(status.success(), "{text}");
    assert!(!text.contains("read "), "{text}");
    assert!(!text.contains("signalled"), "{text}");
}

#[test]
fn what_the_spawner_cannot_carry_or_start_runs_nothing() {
    use skald_sandbox::spawner::LaunchError;
    let root = tempfile::tempdir().unwrap();
    let marker = root.path().join("ran");
    let script = format!("touch {}", marker.display());
    let policy = skald_sandbox::Policy {
        writable: vec![root.path().canonicalize().unwrap()],
        ..Default::default()
    };
    // A variable that is not UTF-8 cannot travel as JSON: the caller uses the helper.
    let (_, w) = std::io::pipe().unwrap();
    let (_, e) = std::io::pipe().unwrap();
    use std::os::unix::ffi::OsStringExt;
    let bad = skald_sandbox::spawner::launch(
        std::path::Path::new(HELPER),
        skald_sandbox::spawner::Launch {
            program: "sh".into(),
            args: vec!["-c".into(), script.clone().into()],
            cwd: root.path().to_path_buf(),
            env: vec![("X".into(), std::ffi::OsString::from_vec(vec![0xff, 0xfe]))],
            policy: policy.clone(),
            stdout: w.into(),
            stderr: e.into(),
        },
    );
    assert!(matches!(bad, Err(LaunchError::Unsupported(_))));
    // A folder that does not exist: the spawner says so, and nothing ran.
    let (_, w) = std::io::pipe().unwrap();
    let (_, e) = std::io::pipe().unwrap();
    let gone = skald_sandbox::spawner::launch(
        std::path::Path::new(HELPER),
        skald_sandbox::spawner::Launch {
            program: "sh".into(),
            args: vec!["-c".into(), script.into()],
            cwd: root.path().join("nowhere"),
            env: Vec::new(),
            policy,
            stdout: w.into(),
            stderr: e.into(),
        },
    );
    match gone {
        Err(LaunchError::Refused(why)) => assert!(why.contains("nowhere"), "{why}"),
        Err(other) => panic!("{other}"),
        Ok(_) => panic!("it started"),
    }
    assert!(!marker.exists());
}

/// The spawner readies the next command's thread for the same folders ahead of time; a
/// folder replaced in between (renamed away, made anew under its name) must not keep the
/// rights the ready thread took for the old one.
#[test]
fn a_folder_replaced_between_two_commands_gets_the_rights_not_its_old_self() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path().canonicalize().unwrap();
    let (work, old) = (root.join("work"), root.join("work-old"));
    std::fs::create_dir_all(&work).unwrap();
    // An existing hidden folder makes the masks this test's own, so is its spawner: no
    // other test's command takes the thread readied for the second command.
    std::fs::create_dir_all(root.join("hidden")).unwrap();
    let policy = skald_sandbox::Policy {
        writable: vec![work.clone()],
        masked: vec![root.join("hidden")],
        network: false,
        ..Default::default()
    };
    let first_script = format!("echo one > {}/first", work.display());
    let (first, status) = spawned(&policy, &first_script, &[]).unwrap_or_else(|e| panic!("{e}"));
    assert!(status.success(), "{first}");
    std::fs::rename(&work, &old).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    let script = format!(
        "cd {w} && echo two > second && echo wrote-new; echo three > {o}/third && echo wrote-old",
        w = work.display(),
        o = old.display()
    );
    let (text, _) = spawned(&policy, &script, &[]).unwrap_or_else(|e| panic!("{e}"));
    assert!(text.contains("wrote-new"), "{text}");
    assert!(work.join("second").exists(), "{text}");
    assert!(!text.contains("wrote-old"), "{text}");
    assert!(!old.join("third").exists(), "{text}");
}

/// Network off after network on, with the same folders: the thread readied for the first
/// command (network on) must not start the second.
#[test]
fn a_command_without_the_network_after_one_with_it_cannot_connect() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("hidden-net")).unwrap(); // This test's own spawner.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let connect = format!(
        "python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 5); \
         print('connected')\""
    );
    let policy = |network| skald_sandbox::Policy {
        writable: vec![root.clone()],
        masked: vec![root.join("hidden-net")],
        network,
        ..Default::default()
    };
    let (on, _) = spawned(&policy(true), &connect, &[("PATH", "/usr/bin:/bin")]).unwrap();
    assert!(on.contains("connected"), "{on}");
    for _ in 0..2 {
        let (off, status) =
            spawned(&policy(false), &connect, &[("PATH", "/usr/bin:/bin")]).unwrap();
        assert!(!status.success(), "{off}");
        assert!(!off.contains("connected"), "{off}");
    }
    let (on, _) = spawned(&policy(true), &connect, &[("PATH", "/usr/bin:/bin")]).unwrap();
    assert!(on.contains("connected"), "{on}");
}

/// The spawner finds a command's program on that command's own `PATH`, even though a
/// readied worker looked up the program of the command before it ahead of time: another
/// `PATH` is looked up afresh, and a program that is gone since is not run from where it was.
#[test]
fn a_program_is_found_on_each_commands_own_path() {
    use std::io::Read;
    use std::os::unix::fs::PermissionsExt;
    let root = tempfile::tempdir().unwrap();
    let root = root.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("hidden-path")).unwrap(); // This test's own spawner.
    let (a, b) = (root.join("a"), root.join("b"));
    for (dir, says) in [(&a, "from-a"), (&b, "from-b")] {
        std::fs::create_dir_all(dir).unwrap();
        let tool = dir.join("tool");
        std::fs::write(&tool, format!("#!/bin/sh\necho {says}\n")).unwrap();
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let policy = skald_sandbox::Policy {
        writable: vec![root.clone()],
        masked: vec![root.join("hidden-path")],
        network: false,
        ..Default::default()
    };
    let run = |path: String| -> String {
        let (mut out_r, out_w) = std::io::pipe().unwrap();
        let (_, err_w) = std::io::pipe().unwrap();
        let launched = skald_sandbox::spawner::launch(
            std::path::Path::new(HELPER),
            skald_sandbox::spawner::Launch {
                program: "tool".into(),
                args: Vec::new(),
                cwd: root.clone(),
                env: vec![("PATH".into(), path.into())],
                policy: policy.clone(),
                stdout: out_w.into(),
                stderr: err_w.into(),
            },
        );
        let Ok(launched) = launched else {
            return "did not start".to_string();
        };
        let mut text = String::new();
        out_r.read_to_string(&mut text).unwrap();
        launched.wait().unwrap();
        text
    };
    let ab = format!("{}:{}:/usr/bin:/bin", a.display(), b.display());
    let ba = format!("{}:{}:/usr/bin:/bin", b.display(), a.display());
    assert_eq!(run(ab.clone()), "from-a\n");
    assert_eq!(run(ba.clone()), "from-b\n");
    assert_eq!(run(ba.clone()), "from-b\n");
    assert_eq!(run(ba.clone()), "from-b\n");
    std::fs::remove_file(b.join("tool")).unwrap();
    assert_eq!(run(ba), "from-a\n");
    assert_eq!(run(ab), "from-a\n");
}

/// A command's seccomp filter comes from the spawner thread that made its worker, one per
/// network setting: each command has exactly its setting's filter, whatever ran before it
/// in the same spawner. UDP (which Landlock does not cover) is refused without the network
/// and allowed with it; io_uring is refused either way.
#[test]
fn each_command_has_the_system_call_filter_of_its_own_network_setting() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("hidden-filter")).unwrap(); // This test's own spawner.
    let probe = r#"grep '^Seccomp_filters:' /proc/self/status; python3 -c "
import ctypes, socket
try:
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM); print('udp-open')
except OSError as e:
    print('udp-refused', e.errno)
libc = ctypes.CDLL(None, use_errno=True)
params = ctypes.create_string_buffer(120)
fd = libc.syscall(425, 1, params)
print('uring-open' if fd >= 0 else 'uring-refused %d' % ctypes.get_errno())
""#;
    let policy = |network| skald_sandbox::Policy {
        writable: vec![root.clone()],
        masked: vec![root.join("hidden-filter")],
        network,
        ..Default::default()
    };
    for network in [false, true, true, false, false, true] {
        let (text, status) =
            spawned(&policy(network), probe, &[("PATH", "/usr/bin:/bin")]).unwrap();
        assert!(status.success(), "{text}");
        // One filter, the worker's: made by a thread that had none itself.
        assert!(text.contains("Seccomp_filters:\t1"), "{text}");
        assert!(text.contains("uring-refused 1"), "{text}");
        if network {
            assert!(text.contains("udp-open"), "{text}");
        } else {
            assert!(text.contains("udp-refused 1"), "{text}");
        }
    }
}

/// Each command through the spawner gets a temporary folder of its own: writable, named by
/// every variable programs look for, closed to another command while both run, and gone
/// once it ended.
#[test]
fn each_spawned_command_has_a_private_temporary_folder_removed_after_it() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("hidden-tmp")).unwrap(); // This test's own spawner.
    let policy = skald_sandbox::Policy {
        writable: vec![root.clone()],
        masked: vec![root.join("hidden-tmp")],
        network: false,
        ..Default::default()
    };
    // The first command says where its folder is and waits, so the second runs beside it.
    let first_script = format!(
        "[ \"$TMP\" = \"$TMPDIR\" ] && [ \"$TEMP\" = \"$TMPDIR\" ] && [ \"$TEMPDIR\" = \"$TMPDIR\" ] \
         && echo same; echo x > \"$TMPDIR/f\" && echo wrote; \
         echo y > \"$TMPDIR/../beside\" || echo refused-beside; \
         echo \"$TMPDIR\" > {r}/first-tmp; i=0; \
         while [ ! -e {r}/go ] && [ $i -lt 1000 ]; do sleep 0.01; i=$((i+1)); done",
        r = root.display()
    );
    let first = {
        let policy = policy.clone();
        std::thread::spawn(move || spawned(&policy, &first_script, &[]).unwrap())
    };
    let mark = root.join("first-tmp");
    wait_until(|| std::fs::read_to_string(&mark).is_ok_and(|t| t.ends_with('\n')));
    let one = std::path::PathBuf::from(std::fs::read_to_string(&mark).unwrap().trim());
    assert!(one.is_dir(), "{}", one.display());
    let second_script = format!(
        "echo \"tmp=$TMPDIR\"; echo x > \"$TMPDIR/f\" && echo wrote; \
         echo z > {p}/g && echo wrote-theirs; touch {r}/go; exit 0",
        p = one.display(),
        r = root.display()
    );
    let (second, _) = spawned(&policy, &second_script, &[]).unwrap();
    let (first, status) = first.join().unwrap();
    assert!(status.success(), "{first}");
    assert!(first.contains("same") && first.contains("wrote"), "{first}");
    assert!(first.contains("refused-beside"), "{first}");
    let two = second
        .lines()
        .find_map(|l| l.strip_prefix("tmp="))
        .map(std::path::PathBuf::from)
        .unwrap();
    assert_ne!(one, two);
    assert!(second.contains("wrote"), "{second}");
    assert!(!second.contains("wrote-theirs"), "{second}");
    // Removed by the spawner once each command ended: wait for it, boundedly.
    for dir in [&one, &two] {
        assert!(
            wait_until(|| !dir.exists()),
            "{} is still there",
            dir.display()
        );
    }
}

/// A command can signal the threads of its own Landlock domain. The thread that started it
/// hands it to one outside and ends, so killing every thread of its spawner it can see
/// harms nothing: the spawner serves the next command.
#[test]
fn a_command_cannot_kill_its_spawner_through_the_thread_that_started_it() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("hidden-kill")).unwrap(); // This test's own spawner.
    let policy = skald_sandbox::Policy {
        writable: vec![root.clone()],
        masked: vec![root.join("hidden-kill")],
        network: false,
        ..Default::default()
    };
    let script = "read -r _ _ _ pp _ < /proc/self/stat; sleep 0.1; for t in /proc/$pp/task/*; do kill -KILL ${t##*/} 2>/dev/null \
                  && echo \"killed ${t##*/}\"; done; echo \"spawner=$pp\"";
    let _alone = POOL_USE.write().unwrap_or_else(|e| e.into_inner());
    let tmp = std::env::temp_dir();
    let (first, _) = spawned_alone(&policy, script, &[], &tmp).unwrap();
    assert!(!first.contains("killed"), "{first}");
    let (second, status) = spawned_alone(
        &policy,
        "read -r _ _ _ pp _ < /proc/self/stat; echo \"spawner=$pp\"",
        &[],
        &tmp,
    )
    .unwrap();
    assert!(status.success(), "{second}");
    assert_eq!(spawner_of(&first), spawner_of(&second), "{first}\n{second}");
}

/// When Skald stops listening for a command's answers (it gave up, was stopped, or died),
/// the command does not run on unseen: it does not start, or its group is killed.
#[test]
fn a_command_nobody_listens_to_any_more_is_killed() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path().canonicalize().unwrap();
    let policy = skald_sandbox::Policy {
        writable: vec![root.clone()],
        ..Default::default()
    };
    let pid_file = root.join("pid");
    // Started, then given up on.
    let launched = started_unwatched(
        "sh",
        vec![
            "-c".into(),
            format!(
                "read -r pid _ < /proc/self/stat; echo $pid > {}.tmp; mv {0}.tmp {0}; sleep 30",
                pid_file.display()
            )
            .into(),
        ],
        &root,
        policy,
    );
    wait_until(|| pid_file.exists());
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    drop(launched);
    let proc_dir = std::path::PathBuf::from(format!("/proc/{pid}"));
    assert!(
        wait_until(|| !proc_dir.exists()),
        "the command {pid} still runs"
    );
}

#[test]
fn a_confined_command_cannot_type_into_the_terminal_it_was_started_from() {
    use skald_testkit::terminal::{
        THEN_READ_THE_TERMINAL, TYPE_INTO_THE_TERMINAL, assert_nothing_typed, in_a_terminal,
    };
    let args = skald_sandbox::command_args(
        &skald_sandbox::Policy::default(),
        std::ffi::OsStr::new("python3"),
        &["-c".into(), TYPE_INTO_THE_TERMINAL.into()],
    )
    .unwrap();
    // Started by a shell without job control (as Skald and MCP clients start it), it makes
    // a session of its own: no controlling terminal at all. Started as a process group's
    // leader (a shell with job control, `set -m`), the kernel refuses it a new session: the
    // terminal is still its controlling one, and the filter and Landlock must hold alone.
    for (job_control, no_tty) in [("", true), ("set -m; ", false)] {
        let script = format!("{job_control}{THEN_READ_THE_TERMINAL}");
        let mut line: Vec<&std::ffi::OsStr> = vec!["-c".as_ref(), script.as_ref(), "bash".as_ref()];
        line.push(HELPER.as_ref());
        line.extend(args.iter().map(|a| a.as_os_str()));
        let out = in_a_terminal("bash", &line).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert_nothing_typed(&text, no_tty);
    }
}

#[test]
fn a_confined_command_gets_no_descriptor_it_was_not_handed() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("inherited");
    std::fs::write(&file, "").unwrap();
    // A descriptor left open without close-on-exec by whoever started Skald (here the
    // shell's `exec 7>>`): the command may not write through it, nor find it open.
    let args = skald_sandbox::command_args(
        &skald_sandbox::Policy::default(),
        std::ffi::OsStr::new("sh"),
        &[
            "-c".into(),
            "echo leaked >&7; ls /proc/self/fd; exit 0".into(),
        ],
    )
    .unwrap();
    let out = Command::new("sh")
        .arg("-c")
        .arg(r#"exec 7>>"$0"; exec "$@""#)
        .arg(&file)
        .arg(HELPER)
        .args(&args)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "", "{text}");
    // `ls` sees 0-2 and the folder it reads, nothing more.
    let stdout = String::from_utf8_lossy(&out.stdout);
    let open: Vec<&str> = stdout.split_whitespace().collect();
    assert!(!open.contains(&"7"), "{text}");
    assert!(open.len() <= 4, "{text}");
}

/// A program of the user's that listens on a Unix socket in a shared temporary folder and
/// acts for whoever connects (tmux's server, an editor's, any daemon): here, a listener that
/// records each connection. Removed with its folder.
struct Listener {
    dir: tempfile::TempDir,
    socket: std::os::unix::net::UnixListener,
}

impl Listener {
    fn in_folder(base: &str) -> Listener {
        let dir = tempfile::Builder::new()
            .prefix("skald-test-daemon-")
            .tempdir_in(base)
            .unwrap();
        let socket =
            std::os::unix::net::UnixListener::bind(dir.path().join("daemon.sock")).unwrap();
        socket.set_nonblocking(true).unwrap();
        Listener { dir, socket }
    }

    fn path(&self) -> std::path::PathBuf {
        self.dir.path().canonicalize().unwrap().join("daemon.sock")
    }

    /// Whether anyone connected so far.
    fn reached(&self) -> bool {
        self.socket.accept().is_ok()
    }
}

#[test]
fn a_confined_command_sees_private_temporary_folders_with_only_its_own_folders_in_them() {
    let work = tempfile::tempdir().unwrap();
    let work = work.path().canonicalize().unwrap();
    let neighbour = tempfile::tempdir().unwrap();
    std::fs::write(neighbour.path().join("note"), "NEIGHBOUR").unwrap();
    let listeners = [Listener::in_folder("/tmp"), Listener::in_folder("/var/tmp")];
    let connect = listeners
        .iter()
        .map(|l| {
            format!(
                "python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); \
                 s.connect(sys.argv[1]); print(\"connected\")' {}; ",
                l.path().display()
            )
        })
        .collect::<String>();
    let script = format!(
        "{connect}cat {n}/note; ls -a /tmp /var/tmp; echo mine > {w}/mine && cat {w}/mine; exit 0",
        n = neighbour.path().display(),
        w = work.display()
    );
    let policy = skald_sandbox::Policy {
        writable: vec![work.clone()],
        masked: Vec::new(),
        network: false,
        ..Default::default()
    };
    // Through the spawner (the chat's commands) and the one-shot helper (MCP servers,
    // editors' terminals), each from the chat's folder.
    let (spawned_text, _) = spawned_in(&policy, &script, &work).unwrap();
    let helper_out = Command::new(HELPER)
        .args(
            skald_sandbox::command_args(
                &policy,
                std::ffi::OsStr::new("sh"),
                &["-c".into(), script.clone().into()],
            )
            .unwrap(),
        )
        .current_dir(&work)
        .output()
        .unwrap();
    let helper_text = format!(
        "{}{}",
        String::from_utf8_lossy(&helper_out.stdout),
        String::from_utf8_lossy(&helper_out.stderr)
    );
    for text in [&spawned_text, &helper_text] {
        assert!(!text.contains("connected"), "{text}");
        assert!(!text.contains("NEIGHBOUR"), "{text}");
        // Its own folder is there, writable, as it was.
        assert!(text.contains("mine"), "{text}");
        // `ls` lists neither the neighbour nor the daemons' folders.
        let listed = |dir: &std::path::Path| {
            let name = dir.file_name().unwrap().to_string_lossy().into_owned();
            text.lines().any(|l| l.trim() == name)
        };
        assert!(!listed(neighbour.path()), "{text}");
        assert!(!listeners.iter().any(|l| listed(l.dir.path())), "{text}");
    }
    for l in &listeners {
        assert!(!l.reached(), "a daemon's socket was reached");
    }
    // Outside, nothing moved: the daemons' folders and the neighbour are still there.
    assert!(listeners.iter().all(|l| l.path().exists()));
    assert_eq!(
        std::fs::read_to_string(neighbour.path().join("note")).unwrap(),
        "NEIGHBOUR"
    );
}

/// Item 5 of the sandbox review: what runs later outside the sandbox — a repository's
/// hooks and configuration (`core.hooksPath`, `core.fsmonitor`, aliases), a project's
/// `.skald` scripts — is read-only inside it, and cannot be renamed away and made anew,
/// while git itself still commits.
#[test]
fn what_runs_later_outside_the_sandbox_is_read_only_inside_it() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path().canonicalize().unwrap();
    let repo = root.join("repo");
    std::fs::create_dir_all(repo.join(".skald")).unwrap();
    std::fs::write(repo.join(".skald/fmt.sh"), "echo formatted\n").unwrap();
    std::fs::write(repo.join("f"), "one\n").unwrap();
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t", "-C"])
            .arg(&repo)
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
    };
    git(&["init", "-q"]);
    git(&["add", "f"]);
    git(&["commit", "-qm", "one"]);
    let dot_git = repo.join(".git");
    let config = std::fs::read(dot_git.join("config")).unwrap();
    let hooks_before: Vec<_> = std::fs::read_dir(dot_git.join("hooks"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    let policy = skald_sandbox::Policy {
        writable: vec![repo.clone()],
        read_only: vec![
            dot_git.join("hooks"),
            dot_git.join("config"),
            repo.join(".skald"),
        ],
        pinned: vec![dot_git.clone()],
        ..Default::default()
    };
    for attack in [
        "printf '#!/bin/sh\\nid > x\\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit",
        "printf '[core]\\n\\tfsmonitor = id\\n' >> .git/config",
        "git config core.hooksPath /tmp",
        "git config alias.st '!id'",
        "rm -rf .git/hooks",
        "mv .git/hooks .git/old-hooks; mkdir .git/hooks; echo id > .git/hooks/pre-commit",
        "mv .git/config .git/old-config; echo '[core]' > .git/config",
        "rm -f .git/config",
        "ln -sfn /tmp .git/hooks",
        "mv .git .git-old; mkdir .git; echo id > .git/hooks",
        "python3 -c \"import os; os.rename('.git', '.g')\"",
        "echo 'id > x' >> .skald/fmt.sh",
        "rm -rf .skald",
        "mv .skald .old-skald; mkdir .skald; echo id > .skald/fmt.sh",
        "echo id > .skald/new.sh",
    ] {
        let out = run(&policy, &format!("cd {} && {attack}", repo.display()));
        let said = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            std::fs::read(dot_git.join("config")).unwrap(),
            config,
            "{attack}: {said}"
        );
        let hooks: Vec<_> = std::fs::read_dir(dot_git.join("hooks"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(hooks, hooks_before, "{attack}: {said}");
        assert!(
            dot_git.join("HEAD").is_file(),
            "{attack}: .git moved: {said}"
        );
        assert_eq!(
            std::fs::read_to_string(repo.join(".skald/fmt.sh")).unwrap(),
            "echo formatted\n",
            "{attack}: {said}"
        );
        assert!(!repo.join(".skald/new.sh").exists(), "{attack}: {said}");
        assert!(!repo.join("x").exists(), "{attack} ran something: {said}");
    }
    // Git itself still works in the sandbox: a commit writes objects, refs and the index.
    let out = run(
        &policy,
        &format!(
            "cd {} && echo two >> f && git add f && git -c user.name=t -c user.email=t@t \
             commit -qm two && git log --oneline | wc -l",
            repo.display()
        ),
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "2");
    // A path that is not there is skipped, not an error.
    let mut missing = policy.clone();
    missing.read_only.push(repo.join("no-such-folder"));
    assert!(run(&missing, "true").status.success());
}

/// Item 12 of the sandbox review, as root: a disk read raw holds every file on it, hidden
/// or not, and root may read the disks' device nodes (Landlock lets reads through beneath
/// `/`). Every block device this process could read is covered inside the sandbox; the
/// devices a command needs still work. As another user there is none to cover.
#[test]
fn the_disks_a_process_could_read_raw_are_covered_in_the_sandbox() {
    use std::os::unix::fs::FileTypeExt;
    let readable: Vec<String> = std::fs::read_dir("/dev")
        .unwrap()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_block_device()))
        .map(|e| e.path())
        .filter(|p| nix::unistd::access(p, nix::unistd::AccessFlags::R_OK).is_ok())
        .map(|p| p.display().to_string())
        .collect();
    let out = run(
        &skald_sandbox::Policy::default(),
        "cat /proc/self/mountinfo; echo x > /dev/null && head -c 1 /dev/urandom > /dev/null && echo devices-ok",
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("devices-ok"), "{text}");
    for disk in &readable {
        assert!(
            text.lines()
                .any(|l| l.split(' ').nth(4) == Some(disk.as_str())),
            "{disk} is not covered: {text}"
        );
        let read = run(
            &skald_sandbox::Policy::default(),
            &format!("head -c 1 {disk}"),
        );
        assert!(!read.status.success(), "{disk} was read");
    }
    eprintln!("{} readable block devices covered", readable.len());
}

/// Item 4 of the report: whatever a command leaves running — a `setsid` process, a double
/// fork, a `nohup` — ends with it, whether it exits by itself or is given up on (a timeout,
/// a stop, Skald going): each command is the first process of a PID namespace of its own.
#[test]
fn nothing_a_command_starts_outlives_it() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path().canonicalize().unwrap();
    let policy = skald_sandbox::Policy {
        writable: vec![root.clone()],
        ..Default::default()
    };
    // Each leftover writes its pid as Skald sees it (its shell reads /proc/self/stat
    // itself; `exec` keeps the pid), then sleeps on; the command waits until all three have.
    let leftovers = |tag: &str| {
        let note = |name: &str| {
            format!(
                "read -r p _ < /proc/self/stat; echo $p > {d}/{tag}-{name}.tmp; \
                 mv {d}/{tag}-{name}.tmp {d}/{tag}-{name}; exec sleep 300",
                d = root.display()
            )
        };
        format!(
            "setsid sh -c '{a}' </dev/null >/dev/null 2>&1 & \
             (sh -c '{b}' </dev/null >/dev/null 2>&1 &) ; \
             nohup sh -c '{c}' </dev/null >/dev/null 2>&1 & \
             for f in setsid fork nohup; do \
               while [ ! -s {d}/{tag}-$f ]; do sleep 0.01; done; \
             done; echo started",
            a = note("setsid"),
            b = note("fork"),
            c = note("nohup"),
            d = root.display()
        )
    };
    let pids = |tag: &str| -> Vec<(String, std::path::PathBuf)> {
        ["setsid", "fork", "nohup"]
            .iter()
            .map(|f| {
                let pid = std::fs::read_to_string(root.join(format!("{tag}-{f}"))).unwrap();
                (f.to_string(), format!("/proc/{}", pid.trim()).into())
            })
            .collect()
    };
    let all_gone = |tag: &str| {
        for (how, proc_dir) in pids(tag) {
            assert!(
                wait_until(|| !proc_dir.exists()),
                "the {how} leftover {} outlived its command",
                proc_dir.display()
            );
        }
    };
    // The command exits by itself.
    let (text, status) =
        spawned(&policy, &leftovers("exited"), &[("PATH", "/usr/bin:/bin")]).unwrap();
    assert!(status.success() && text.contains("started"), "{text}");
    all_gone("exited");

    // The command is given up on while it runs.
    let launched = started_unwatched(
        "sh",
        vec![
            "-c".into(),
            format!("{}; sleep 300", leftovers("stopped")).into(),
        ],
        &root,
        policy.clone(),
    );
    assert!(wait_until(|| root.join("stopped-nohup").exists()
        && root.join("stopped-fork").exists()
        && root.join("stopped-setsid").exists()));
    drop(launched);
    all_gone("stopped");

    // The same through the one-shot helper (hooks, MCP servers): the command exits…
    let o = run(&policy, &leftovers("one-shot"));
    assert!(o.status.success(), "{o:?}");
    all_gone("one-shot");
    // …or only the helper is killed, not its group.
    let mut helper = Command::new(HELPER)
        .args(
            skald_sandbox::command_args(
                &policy,
                std::ffi::OsStr::new("sh"),
                &[
                    "-c".into(),
                    format!("{}; sleep 300", leftovers("killed")).into(),
                ],
            )
            .unwrap(),
        )
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    assert!(wait_until(|| root.join("killed-nohup").exists()
        && root.join("killed-fork").exists()
        && root.join("killed-setsid").exists()));
    helper.kill().unwrap();
    helper.wait().unwrap();
    all_gone("killed");
}

/// The neighbours the attack review found of the case above. A command that leaves its own
/// process group (it joins a child's, so killing the group it led finds nobody) still ends
/// when Skald gives up on it: its spawner kills it itself, and with it its namespace.
#[test]
fn a_command_that_leaves_its_own_group_still_ends_when_given_up_on() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path().canonicalize().unwrap();
    let pid_file = root.join("pid");
    let script = format!(
        "import os, time\n\
         child = os.fork()\n\
         if child == 0:\n    os.setpgid(0, 0)\n    time.sleep(300)\n    os._exit(0)\n\
         time.sleep(0.2)\n\
         os.setpgid(0, child)\n\
         me = open('/proc/self/stat').read().split()[0]\n\
         open('{f}.tmp', 'w').write(me)\n\
         os.rename('{f}.tmp', '{f}')\n\
         time.sleep(300)\n",
        f = pid_file.display()
    );
    let launched = started_unwatched(
        "python3",
        vec!["-c".into(), script.into()],
        &root,
        skald_sandbox::Policy {
            writable: vec![root.clone()],
            ..Default::default()
        },
    );
    assert!(
        wait_until(|| pid_file.exists()),
        "the command never left its group"
    );
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    drop(launched);
    // Gone, or a husk: a namespace's first process that joined another group of its
    // namespace is killed but never reaped (the kernel waits, at its exit, for a pid that
    // its own group membership holds), with its memory gone and nothing of it running.
    let cmdline = format!("/proc/{}/cmdline", pid.trim());
    assert!(
        wait_until(|| std::fs::read(&cmdline).map_or(true, |c| c.is_empty())),
        "the command {pid} outlived being given up on"
    );
}

/// And through the one-shot helper, the command cannot trace the first process of its
/// PID namespace (which could then be made to outlive the helper): it runs in a Landlock
/// domain nested below it.
#[test]
fn a_command_cannot_trace_the_first_process_of_its_namespace() {
    let script = "import ctypes, os\n\
                  libc = ctypes.CDLL(None, use_errno=True)\n\
                  print('attach', libc.ptrace(16, 1, 0, 0), ctypes.get_errno())\n\
                  try:\n    open('/proc/1/mem', 'rb').read(1)\n    print('mem read')\n\
                  except OSError as e:\n    print('mem', e.errno)\n";
    let args = skald_sandbox::command_args(
        &skald_sandbox::Policy::default(),
        std::ffi::OsStr::new("python3"),
        &["-c".into(), script.into()],
    )
    .unwrap();
    let o = Command::new(HELPER).args(args).output().unwrap();
    let text =
        String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{text}");
    assert!(
        text.contains("attach -1 1\n"),
        "ptrace of its first process: {text}"
    );
    assert!(!text.contains("mem read"), "{text}");
}

/// Skald killed outright (SIGKILL) has no chance to stop what it started. Every command it
/// started through the spawner, and one through the one-shot helper, ends with it anyway:
/// the spawner kills its commands before it exits (it does not wait for its watchers), and
/// the helper is tied to Skald's process. Skald is played by this test binary, run again
/// as `stand_in_for_skald`.
#[test]
fn what_skald_started_ends_when_skald_is_killed_outright() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path().canonicalize().unwrap();
    let mut skald = Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--exact", "stand_in_for_skald", "--nocapture"])
        .env(STAND_IN, &root)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let ready = root.join("ready");
    let started = (0..60).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(250));
        ready.exists()
    });
    if !started {
        let _ = skald.kill();
        panic!("the stand-in for Skald did not start its commands");
    }
    let pids: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("pid-"))
        .map(|e| {
            std::fs::read_to_string(e.path())
                .unwrap()
                .trim()
                .to_string()
        })
        .collect();
    assert_eq!(pids.len(), STAND_IN_COMMANDS + 2, "{pids:?}");
    skald.kill().unwrap();
    skald.wait().unwrap();
    for pid in pids {
        let cmdline = format!("/proc/{pid}/cmdline");
        assert!(
            wait_until(|| std::fs::read(&cmdline).map_or(true, |c| c.is_empty())),
            "{pid} outlived the Skald that started it"
        );
    }
}

/// Where `stand_in_for_skald` notes its commands' pids.
const STAND_IN: &str = "SKALD_TEST_STAND_IN";
/// How many commands it starts through the spawner.
const STAND_IN_COMMANDS: usize = 6;

/// Not a test: Skald's part in the one above. Starts commands that run on, through the
/// spawner and through the one-shot helper (one of them leaving a `setsid` process), notes
/// their pids, and waits to be killed.
#[test]
#[ignore = "run by what_skald_started_ends_when_skald_is_killed_outright"]
fn stand_in_for_skald() {
    let Some(root) = std::env::var_os(STAND_IN).map(std::path::PathBuf::from) else {
        return;
    };
    let policy = skald_sandbox::Policy {
        writable: vec![root.clone()],
        ..Default::default()
    };
    let note = |name: &str| {
        format!(
            "read -r p _ < /proc/self/stat; echo $p > {d}/{name}.tmp; mv {d}/{name}.tmp {d}/pid-{name}; exec sleep 300",
            d = root.display()
        )
    };
    let mut kept = Vec::new();
    for i in 0..STAND_IN_COMMANDS {
        kept.push(started_unwatched(
            "sh",
            vec!["-c".into(), note(&format!("spawned-{i}")).into()],
            &root,
            policy.clone(),
        ));
    }
    let script = format!(
        "setsid sh -c '{}' </dev/null >/dev/null 2>&1 & {}",
        note("left"),
        note("helper")
    );
    let mut helper = Command::new(HELPER)
        .args(
            skald_sandbox::command_args(
                &policy,
                std::ffi::OsStr::new("sh"),
                &["-c".into(), script.into()],
            )
            .unwrap(),
        )
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let all = STAND_IN_COMMANDS + 2;
    assert!(wait_until(|| std::fs::read_dir(&root)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("pid-"))
        .count()
        == all));
    std::fs::write(root.join("ready"), "").unwrap();
    std::thread::sleep(std::time::Duration::from_secs(300));
    drop(kept);
    let _ = helper.kill();
    let _ = helper.wait();
}
