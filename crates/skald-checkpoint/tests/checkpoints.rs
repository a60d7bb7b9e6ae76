//! Checkpoints against real folders: snapshots, what they leave out, diffs, restores (and
//! their undo), an interrupted restore finished on the next open, and the lock.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use skald_checkpoint::{ChangeStatus, CheckpointError, Limits, Live, Shadow, Snapshot};
use std::fs;
use std::path::Path;

fn setup() -> (tempfile::TempDir, tempfile::TempDir) {
    (
        tempfile::tempdir().expect("store"),
        tempfile::tempdir().expect("folder"),
    )
}

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    fs::write(p, text).expect("write");
}

fn read(root: &Path, rel: &str) -> Option<String> {
    fs::read_to_string(root.join(rel)).ok()
}

#[test]
fn an_unchanged_folder_gives_the_same_checkpoint_and_reads_no_file() {
    let (store, dir) = setup();
    for i in 0..50 {
        write(dir.path(), &format!("src/f{i}.txt"), &format!("file {i}\n"));
    }
    let mut shadow = Shadow::open(store.path(), dir.path()).expect("open");
    let limits = Limits::default();
    let first = shadow
        .snapshot("s1", "one", &limits, &[])
        .expect("snapshot");
    assert_eq!(first.files, 50);
    assert_eq!(first.hashed, 50);
    // Old enough that no file is racy against the index just written.
    std::thread::sleep(std::time::Duration::from_millis(20));
    let second = shadow
        .snapshot("s1", "two", &limits, &[])
        .expect("snapshot");
    assert_eq!(
        second.commit, first.commit,
        "nothing changed: the same commit"
    );
    assert!(second.hashed <= 50);
    let third = shadow
        .snapshot("s1", "three", &limits, &[])
        .expect("snapshot");
    assert_eq!(third.hashed, 0, "a stat pass, no file read");
    write(dir.path(), "src/f7.txt", "changed\n");
    let fourth = shadow
        .snapshot("s1", "four", &limits, &[])
        .expect("snapshot");
    assert_ne!(fourth.commit, first.commit);
    assert_eq!(fourth.hashed, 1, "only the changed file is read");
    let changes = shadow.changes(&first.commit, &fourth.commit).expect("diff");
    assert_eq!(changes.total, 1);
    assert_eq!(changes.files[0].path, "src/f7.txt");
    assert_eq!(changes.files[0].status, ChangeStatus::Modified);
    assert_eq!((changes.files[0].added, changes.files[0].removed), (1, 1));
    let patch = shadow
        .patch(&first.commit, &fourth.commit, &[], 1 << 20)
        .expect("patch");
    assert!(
        patch.contains("-file 7") && patch.contains("+changed"),
        "{patch}"
    );
}

#[test]
fn ignored_skipped_secret_and_large_files_are_not_recorded() {
    let (store, dir) = setup();
    write(dir.path(), ".gitignore", "build/\n*.log\n");
    write(dir.path(), "keep.txt", "keep\n");
    write(dir.path(), "build/out.bin", "ignored\n");
    write(dir.path(), "debug.log", "ignored\n");
    write(dir.path(), "secrets/token", "s3cret\n");
    write(dir.path(), "node_modules/x/index.js", "noise\n");
    write(dir.path(), ".git/config", "the user's own repository\n");
    write(dir.path(), "big.dat", &"x".repeat(2048));
    let limits = Limits {
        max_file_bytes: 1024,
        ..Limits::default()
    };
    let mut shadow = Shadow::open(store.path(), dir.path()).expect("open");
    let snap = shadow.snapshot("s", "m", &limits, &[]).expect("snapshot");
    assert_eq!(snap.files, 2, "keep.txt and .gitignore");
    assert_eq!(snap.skipped_large, vec![("big.dat".to_string(), 2048)]);
    assert!(
        snap.note(&limits).contains("big.dat"),
        "{}",
        snap.note(&limits)
    );
    let files = shadow.files(&snap.commit).expect("files");
    assert_eq!(
        files,
        vec![".gitignore".to_string(), "keep.txt".to_string()]
    );
    // A restore leaves what it never recorded alone.
    let before = snap.commit.clone();
    write(dir.path(), "keep.txt", "edited\n");
    write(dir.path(), "debug.log", "edited too\n");
    shadow.restore("s", &before, &limits, &[]).expect("restore");
    assert_eq!(read(dir.path(), "keep.txt").as_deref(), Some("keep\n"));
    assert_eq!(
        read(dir.path(), "debug.log").as_deref(),
        Some("edited too\n")
    );
    assert_eq!(
        read(dir.path(), "secrets/token").as_deref(),
        Some("s3cret\n")
    );
    assert_eq!(
        read(dir.path(), ".git/config").as_deref(),
        Some("the user's own repository\n")
    );
}

#[test]
fn a_restore_brings_files_back_removes_new_ones_and_can_be_undone() {
    let (store, dir) = setup();
    write(dir.path(), "a.txt", "a1\n");
    write(dir.path(), "sub/b.txt", "b1\n");
    let limits = Limits::default();
    let mut shadow = Shadow::open(store.path(), dir.path()).expect("open");
    let start = shadow
        .snapshot("s", "start", &limits, &[])
        .expect("snapshot");
    // What an agent (or its shell command) does.
    write(dir.path(), "a.txt", "a2\n");
    fs::remove_file(dir.path().join("sub/b.txt")).expect("rm");
    write(dir.path(), "new/deep/c.txt", "c\n");
    #[cfg(unix)]
    std::os::unix::fs::symlink("/etc/passwd", dir.path().join("link")).expect("link");
    let restored = shadow
        .restore("s", &start.commit, &limits, &[])
        .expect("restore");
    assert!(restored.conflicts.is_empty(), "{:?}", restored.conflicts);
    assert_eq!(read(dir.path(), "a.txt").as_deref(), Some("a1\n"));
    assert_eq!(read(dir.path(), "sub/b.txt").as_deref(), Some("b1\n"));
    assert!(
        !dir.path().join("new").exists(),
        "emptied folders are removed"
    );
    assert!(dir.path().join("link").symlink_metadata().is_err());
    assert_eq!(restored.after.tree, start.tree);
    assert!(restored.changes.total >= 3, "{:?}", restored.changes);
    // The undo of the restore.
    shadow
        .restore("s", &restored.before.commit, &limits, &[])
        .expect("undo");
    assert_eq!(read(dir.path(), "a.txt").as_deref(), Some("a2\n"));
    assert!(read(dir.path(), "sub/b.txt").is_none());
    assert_eq!(read(dir.path(), "new/deep/c.txt").as_deref(), Some("c\n"));
    #[cfg(unix)]
    assert_eq!(
        fs::read_link(dir.path().join("link")).expect("link back"),
        Path::new("/etc/passwd")
    );
}

#[cfg(unix)]
#[test]
fn a_restore_never_writes_through_a_link_that_replaced_a_folder() {
    let (store, dir) = setup();
    let outside = tempfile::tempdir().expect("outside");
    write(dir.path(), "docs/readme.md", "hello\n");
    let limits = Limits::default();
    let mut shadow = Shadow::open(store.path(), dir.path()).expect("open");
    let start = shadow
        .snapshot("s", "start", &limits, &[])
        .expect("snapshot");
    // A command swaps the folder for a link to somewhere else, which is ignored so the
    // checkpoint before the restore does not record (and so remove) it.
    fs::remove_dir_all(dir.path().join("docs")).expect("rm");
    std::os::unix::fs::symlink(outside.path(), dir.path().join("docs")).expect("link");
    write(dir.path(), ".gitignore", "docs\n");
    let restored = shadow
        .restore("s", &start.commit, &limits, &[])
        .expect("restore");
    assert!(
        fs::read_dir(outside.path())
            .expect("outside")
            .next()
            .is_none(),
        "nothing written through the link"
    );
    assert_eq!(restored.conflicts.len(), 1, "{:?}", restored.conflicts);
    assert!(
        restored.conflicts[0].contains("docs"),
        "{:?}",
        restored.conflicts
    );
}

/// A process the sandbox left running swaps a folder of the chat's with a link to another
/// folder (`renameat2` with `RENAME_EXCHANGE`, as fast as it can) while the user restores
/// back and forth: whatever lands between a look and an act, nothing outside is removed,
/// written or read into a checkpoint.
#[cfg(target_os = "linux")]
#[test]
fn restores_and_snapshots_racing_a_link_swapped_in_never_reach_outside() {
    use nix::fcntl::{AT_FDCWD, RenameFlags, renameat2};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    const FILES: usize = 200;
    let (store, dir) = setup();
    let outside = tempfile::tempdir().expect("outside");
    for i in 0..FILES {
        write(
            outside.path(),
            &format!("f{i}.txt"),
            &format!("outside {i}\n"),
        );
    }
    // The link's own name is ignored, so the folder behind it is sometimes out of the walk.
    write(dir.path(), ".gitignore", "l\n");
    let limits = Limits::default();
    let mut shadow = Shadow::open(store.path(), dir.path()).expect("open");
    let empty = shadow
        .snapshot("s", "empty", &limits, &[])
        .expect("snapshot");
    for i in 0..FILES {
        write(dir.path(), &format!("d/f{i}.txt"), &format!("inside {i}\n"));
    }
    let full = shadow
        .snapshot("s", "full", &limits, &[])
        .expect("snapshot");
    std::os::unix::fs::symlink(outside.path(), dir.path().join("l")).expect("link");
    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicUsize::new(0));
    let swapper = {
        let (stop, swaps) = (stop.clone(), swaps.clone());
        let (d, l) = (dir.path().join("d"), dir.path().join("l"));
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                if renameat2(AT_FDCWD, &d, AT_FDCWD, &l, RenameFlags::RENAME_EXCHANGE).is_ok() {
                    swaps.fetch_add(1, Ordering::Relaxed);
                }
            }
        })
    };
    let mut recorded_outside = Vec::new();
    let mut failed = Vec::new();
    for round in 0..12 {
        let to = if round % 2 == 0 { &empty } else { &full };
        let restored = match shadow.restore("s", &to.commit, &limits, &[]) {
            Ok(r) => r,
            Err(e) => {
                failed.push(format!("round {round}: {e}"));
                continue;
            }
        };
        for cp in [&restored.before, &restored.after] {
            let tree = shadow
                .patch(&empty.commit, &cp.commit, &[], usize::MAX)
                .expect("diff");
            if tree.contains("outside ") {
                recorded_outside.push(round);
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().expect("swapper");
    assert!(swaps.load(Ordering::Relaxed) > 0, "the swap never happened");
    let mut names: Vec<String> = fs::read_dir(outside.path())
        .expect("outside")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut expected: Vec<String> = (0..FILES).map(|i| format!("f{i}.txt")).collect();
    expected.sort();
    assert_eq!(
        names, expected,
        "files removed from or added to the outside folder"
    );
    for i in 0..FILES {
        assert_eq!(
            read(outside.path(), &format!("f{i}.txt")).as_deref(),
            Some(format!("outside {i}\n").as_str()),
            "f{i}.txt outside was changed"
        );
    }
    assert!(
        recorded_outside.is_empty(),
        "checkpoints recorded the outside folder's content in rounds {recorded_outside:?}"
    ); // The race may cost a conflict, never the restore.
    assert!(failed.is_empty(), "{failed:?}");
}

#[test]
fn a_folder_over_the_limits_is_refused_with_the_setting_to_change() {
    let (store, dir) = setup();
    for i in 0..30 {
        write(dir.path(), &format!("f{i}"), "x");
    }
    let mut shadow = Shadow::open(store.path(), dir.path()).expect("open");
    let few = Limits {
        max_files: 10,
        ..Limits::default()
    };
    let err = shadow
        .snapshot("s", "m", &few, &[])
        .expect_err("too many files");
    assert!(matches!(err, CheckpointError::TooLarge { .. }));
    assert!(err.to_string().contains("max_files"), "{err}");
    let small = Limits {
        max_bytes: 20,
        ..Limits::default()
    };
    let err = shadow
        .snapshot("s", "m", &small, &[])
        .expect_err("too many bytes");
    assert!(err.to_string().contains("max_mib"), "{err}");
    assert!(
        shadow.snapshot("s", "m", &Limits::default(), &[]).is_ok(),
        "a refusal leaves the store usable"
    );
}

#[test]
fn lines_are_separate_and_an_unknown_checkpoint_is_named() {
    let (store, dir) = setup();
    write(dir.path(), "a", "1");
    let limits = Limits::default();
    let mut shadow = Shadow::open(store.path(), dir.path()).expect("open");
    let a = shadow.snapshot("s1", "m", &limits, &[]).expect("s1");
    write(dir.path(), "a", "2");
    let b = shadow.snapshot("s2", "m", &limits, &[]).expect("s2");
    assert_ne!(a.commit, b.commit);
    assert!(shadow.has(&a.commit) && shadow.has(&b.commit));
    let err = shadow
        .restore(
            "s1",
            "0123456789abcdef0123456789abcdef01234567",
            &limits,
            &[],
        )
        .expect_err("unknown");
    assert!(err.to_string().contains("no checkpoint"), "{err}");
    assert!(shadow.changes("nonsense", &a.commit).is_err());
}

#[test]
fn an_interrupted_restore_is_finished_when_the_store_is_next_opened() {
    let (store, dir) = setup();
    write(dir.path(), "a.txt", "old a\n");
    write(dir.path(), "b.txt", "old b\n");
    let limits = Limits::default();
    let target = {
        let mut shadow = Shadow::open(store.path(), dir.path()).expect("open");
        shadow
            .snapshot("s", "m", &limits, &[])
            .expect("snapshot")
            .commit
    };
    // The state a kill leaves: the journal written, one file of two brought back.
    write(dir.path(), "a.txt", "new a\n");
    write(dir.path(), "b.txt", "new b\n");
    write(dir.path(), "c.txt", "new c\n");
    let repo_dir = fs::read_dir(store.path())
        .expect("store")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "git"))
        .expect("repo");
    fs::write(
        repo_dir.join("skald-restore.json"),
        serde_json::json!({
            "line": "s", "target": target, "excluded": [],
            "max_files": 50000, "max_bytes": 1u64 << 30, "max_file_bytes": 10u64 << 20
        })
        .to_string(),
    )
    .expect("journal");
    write(dir.path(), "a.txt", "old a\n");
    write(
        dir.path(),
        ".skald-restore-Xy12ab",
        "the half-written file a kill left",
    );
    let shadow = Shadow::open(store.path(), dir.path()).expect("reopen");
    assert!(!dir.path().join(".skald-restore-Xy12ab").exists());
    assert_eq!(read(dir.path(), "a.txt").as_deref(), Some("old a\n"));
    assert_eq!(read(dir.path(), "b.txt").as_deref(), Some("old b\n"));
    assert!(read(dir.path(), "c.txt").is_none());
    assert!(!repo_dir.join("skald-restore.json").exists());
    drop(shadow);
}

#[cfg(unix)]
#[test]
fn a_second_opener_waits_for_the_first() {
    let (store, dir) = setup();
    write(dir.path(), "a", "1");
    let first = Shadow::open(store.path(), dir.path()).expect("open");
    let (store_path, dir_path) = (store.path().to_path_buf(), dir.path().to_path_buf());
    let waiter = std::thread::spawn(move || Shadow::open(&store_path, &dir_path).map(|_| ()));
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(!waiter.is_finished(), "the lock is held");
    drop(first);
    waiter.join().expect("thread").expect("second open");
}

/// A change to the folder.
type Step = Box<dyn Fn(&Path)>;

#[test]
fn an_incremental_checkpoint_is_the_tree_a_full_one_writes() {
    let (store, dir) = setup();
    let limits = Limits::default();
    let mut shadow = Shadow::open(store.path(), dir.path()).expect("open");
    let steps: Vec<Step> = vec![
        Box::new(|r| {
            for i in 0..20 {
                write(r, &format!("a/b{}/f{i}.txt", i % 3), &format!("{i}"));
            }
        }),
        Box::new(|r| write(r, "a/b1/f1.txt", "changed")),
        Box::new(|r| fs::remove_file(r.join("a/b2/f2.txt")).expect("rm")),
        Box::new(|r| write(r, "new/deeper/still/x.txt", "x")),
        Box::new(|r| fs::remove_dir_all(r.join("a/b0")).expect("rm dir")),
        Box::new(|r| {
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                fs::set_permissions(r.join("a/b1/f4.txt"), fs::Permissions::from_mode(0o755))
                    .expect("chmod");
            }
            write(r, "z.txt", "last");
        }),
        Box::new(|r| fs::remove_dir_all(r.join("new")).expect("rm dir")),
        Box::new(|r| {
            fs::remove_dir_all(r.join("a/b1")).expect("rm");
            write(r, "a/b1", "a file where a folder was");
        }),
        Box::new(|r| {
            fs::remove_file(r.join("z.txt")).expect("rm");
            write(r, "z.txt/inside", "a folder where a file was");
        }),
    ];
    let mut last: Option<Snapshot> = None;
    for (i, step) in steps.iter().enumerate() {
        step(dir.path());
        let ours = shadow.snapshot("s", "m", &limits, &[]).expect("snapshot");
        let fresh_store = tempfile::tempdir().expect("store");
        let full = Shadow::open(fresh_store.path(), dir.path())
            .expect("open")
            .snapshot("s", "m", &limits, &[])
            .expect("full");
        assert_eq!(ours.tree, full.tree, "step {i}");
        if let Some(last) = last {
            same_changes_as_libgit2(&shadow, &last.commit, &ours.commit, i);
        }
        last = Some(ours);
    }
}

/// The list of changed files against libgit2's own tree diff (through the patch): the
/// same files, and the same lines added and removed.
fn same_changes_as_libgit2(shadow: &Shadow, from: &str, to: &str, step: usize) {
    let changes = shadow.changes(from, to).expect("changes");
    let patch = shadow.patch(from, to, &[], usize::MAX).expect("patch");
    let mut theirs: Vec<String> = patch
        .lines()
        .filter_map(|l| l.strip_prefix("diff --git a/"))
        .filter_map(|l| l.split(" b/").next())
        .map(str::to_string)
        .collect();
    theirs.dedup();
    let ours: Vec<String> = changes.files.iter().map(|f| f.path.clone()).collect();
    assert_eq!(ours, theirs, "step {step}: the changed files");
    assert_eq!(changes.total, ours.len());
    let plus = patch
        .lines()
        .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
        .count();
    let minus = patch
        .lines()
        .filter(|l| l.starts_with('-') && !l.starts_with("---"))
        .count();
    let added: usize = changes.files.iter().map(|f| f.added).sum();
    let removed: usize = changes.files.iter().map(|f| f.removed).sum();
    assert_eq!((added, removed), (plus, minus), "step {step}: lines");
}

/// A snapshot of the folder from nothing: every file walked and read.
fn full_snapshot(dir: &Path, limits: &Limits, excluded: &[std::path::PathBuf]) -> Snapshot {
    let fresh_store = tempfile::tempdir().expect("store");
    Shadow::open(fresh_store.path(), dir)
        .expect("open")
        .snapshot("s", "m", limits, excluded)
        .expect("full")
}

fn sorted(mut v: Vec<(String, u64)>) -> Vec<(String, u64)> {
    v.sort();
    v
}

#[cfg(target_os = "linux")]
#[test]
fn a_watched_folder_lists_only_what_changed_and_records_what_a_walk_does() {
    use std::os::unix::fs::PermissionsExt;
    let (store, dir) = setup();
    let root = dir.path().canonicalize().expect("canonical");
    let limits = Limits {
        max_file_bytes: 4096,
        ..Limits::default()
    };
    let excluded = vec![root.join("private")];
    write(&root, ".gitignore", "*.log\nbuild/\n");
    for i in 0..30 {
        write(&root, &format!("a/b{}/f{i}.txt", i % 3), &format!("{i}\n"));
    }
    write(&root, "private/key", "hidden\n");
    let mut live = Live::new(true);
    let mut snap = |why: &str| {
        let mut shadow = Shadow::open(store.path(), &root).expect("open");
        let s = shadow
            .snapshot_live(&mut live, "s", why, &limits, &excluded)
            .expect("snapshot");
        (s, live.problem().map(str::to_string))
    };
    // The first walks; so does the second (a directory watched after the first listed it
    // could have changed in between); from then on only what changed is listed.
    assert!(snap("first").0.walked);
    assert!(snap("second").0.walked);
    let (third, problem) = snap("third");
    assert!(!third.walked, "{problem:?}");
    assert_eq!(third.hashed, 0);

    // (what a step does, whether the folder must be walked for it)
    let steps: Vec<(Step, bool)> = vec![
        (Box::new(|r| write(r, "a/b1/f1.txt", "changed\n")), false),
        (Box::new(|r| write(r, "top.txt", "new at the top\n")), false),
        (
            Box::new(|r| write(r, "new/deeper/still/x.txt", "made with its folders\n")),
            false,
        ),
        (
            Box::new(|r| fs::rename(r.join("a/b2"), r.join("moved")).expect("mv")),
            false,
        ),
        (
            Box::new(|r| write(r, "moved/after.txt", "in the renamed folder\n")),
            false,
        ),
        (
            Box::new(|r| {
                fs::remove_dir_all(r.join("a/b0")).expect("rm");
                write(r, "a/b0/other.txt", "a new folder of the old name\n");
            }),
            false,
        ),
        (
            Box::new(|r| {
                fs::remove_dir_all(r.join("new")).expect("rm");
                write(r, "new", "a file where a folder was\n");
            }),
            false,
        ),
        (
            Box::new(|r| {
                fs::remove_file(r.join("top.txt")).expect("rm");
                write(r, "top.txt/inside.txt", "a folder where a file was\n");
            }),
            false,
        ),
        (
            Box::new(|r| {
                fs::set_permissions(r.join("a/b1/f4.txt"), fs::Permissions::from_mode(0o755))
                    .expect("chmod")
            }),
            false,
        ),
        (
            Box::new(|r| std::os::unix::fs::symlink("a/b1/f1.txt", r.join("link")).expect("ln")),
            false,
        ),
        (Box::new(|r| write(r, "debug.log", "ignored\n")), false),
        (
            Box::new(|r| write(r, "build/out/x.o", "ignored folder\n")),
            false,
        ),
        (
            Box::new(|r| write(r, "private/key", "changed, excluded\n")),
            false,
        ),
        (
            Box::new(|r| write(r, "a/b1/big.dat", &"x".repeat(5000))),
            false,
        ),
        (
            Box::new(|r| write(r, "a/b1/big.dat", "small again\n")),
            false,
        ),
        (
            Box::new(|r| write(r, "a/b1/big2.dat", &"y".repeat(5000))),
            false,
        ),
        (
            Box::new(|r| fs::remove_dir_all(r.join("a/b1")).expect("rm")),
            false,
        ),
        (
            Box::new(|r| {
                // The same size and modification time, other content: only the event
                // tells (a walk would trust the stat data).
                let p = r.join("moved/after.txt");
                let old = fs::metadata(&p).expect("meta").modified().expect("mtime");
                fs::write(&p, "IN THE RENAMED FOLDER\n").expect("write");
                fs::File::options()
                    .write(true)
                    .open(&p)
                    .expect("open")
                    .set_modified(old)
                    .expect("set mtime");
            }),
            false,
        ),
        (
            Box::new(|r| fs::create_dir_all(r.join("empty/dirs")).expect("mkdir")),
            false,
        ),
        (
            Box::new(|r| write(r, "empty/dirs/late.txt", "late\n")),
            false,
        ),
        (Box::new(|r| write(r, ".gitignore", "*.log\n")), true),
        (
            Box::new(|r| write(r, "build/out/y.o", "no longer ignored\n")),
            false,
        ),
    ];
    let mut last: Option<Snapshot> = None;
    for (i, (step, walks)) in steps.iter().enumerate() {
        step(&root);
        let (ours, problem) = snap("step");
        let full = full_snapshot(&root, &limits, &excluded);
        assert_eq!(ours.tree, full.tree, "step {i}: the tree");
        assert_eq!(ours.files, full.files, "step {i}: files");
        assert_eq!(ours.bytes, full.bytes, "step {i}: bytes");
        assert_eq!(
            sorted(ours.skipped_large.clone()),
            sorted(full.skipped_large.clone()),
            "step {i}: large files"
        );
        assert_eq!(ours.walked, *walks, "step {i}: walked ({problem:?})");
        if let Some(last) = &last {
            let shadow = Shadow::open(store.path(), &root).expect("open");
            same_changes_as_libgit2(&shadow, &last.commit, &ours.commit, i);
        }
        if *walks {
            // The walk after an ignore file changed watches what it now enters.
            let (next, _) = snap("settle");
            assert_eq!(next.tree, full.tree, "step {i}: settled");
        }
        last = Some(ours);
    }
}

#[cfg(target_os = "linux")]
#[test]
fn another_openers_snapshot_makes_the_next_one_walk() {
    let (store, dir) = setup();
    let root = dir.path().canonicalize().expect("canonical");
    let limits = Limits::default();
    write(&root, "a.txt", "a\n");
    let mut live = Live::new(true);
    let snap = |live: &mut Live| {
        Shadow::open(store.path(), &root)
            .expect("open")
            .snapshot_live(live, "s", "m", &limits, &[])
            .expect("snapshot")
    };
    snap(&mut live);
    snap(&mut live);
    assert!(!snap(&mut live).walked);
    // Another process (here: a snapshot without this state) writes the shadow index.
    write(&root, "b.txt", "b\n");
    Shadow::open(store.path(), &root)
        .expect("open")
        .snapshot("other", "m", &limits, &[])
        .expect("other");
    write(&root, "c.txt", "c\n");
    let next = snap(&mut live);
    assert!(next.walked, "the index is not the one this state wrote");
    assert_eq!(next.tree, full_snapshot(&root, &limits, &[]).tree);
    // Changes listed but not yet written to the index file are written before a walk
    // (here: the exclusions changed), with their stat data: a walk from the file reads
    // nothing again.
    let mut live = Live::new(true);
    snap(&mut live);
    snap(&mut live);
    for i in 0..5 {
        write(&root, &format!("d/n{i}.txt"), &format!("{i}\n"));
        assert!(!snap(&mut live).walked);
    }
    std::thread::sleep(std::time::Duration::from_millis(20));
    let walked = Shadow::open(store.path(), &root)
        .expect("open")
        .snapshot_live(&mut live, "s", "m", &limits, &[root.join("nothing")])
        .expect("snapshot");
    assert!(walked.walked);
    assert_eq!(
        walked.hashed, 0,
        "the listed files were written to the index first"
    );
    std::thread::sleep(std::time::Duration::from_millis(20));
    let plain = Shadow::open(store.path(), &root)
        .expect("open")
        .snapshot("other", "m", &limits, &[])
        .expect("plain");
    assert_eq!(
        plain.hashed, 0,
        "the written index has every file's stat data"
    );
    assert_eq!(plain.tree, full_snapshot(&root, &limits, &[]).tree);
    // Turned off, every snapshot walks.
    let mut off = Live::new(false);
    for _ in 0..3 {
        assert!(snap(&mut off).walked);
    }
    assert!(off.problem().is_some());
}

/// The same race one level up: a process that can write the folder's parent swaps the folder
/// itself for a link to another folder while the shadow repository is being opened. What is
/// opened is the folder its path names, or nothing: a snapshot of the chat's folder never
/// holds the other folder's files.
#[cfg(target_os = "linux")]
#[test]
fn a_folder_swapped_for_a_link_while_its_shadow_opens_is_refused_not_followed() {
    use nix::fcntl::{AT_FDCWD, RenameFlags, renameat2};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let store = tempfile::tempdir().expect("store");
    let parent = tempfile::tempdir().expect("parent");
    let outside = tempfile::tempdir().expect("outside");
    write(outside.path(), "secret.txt", "outside\n");
    let folder = parent.path().join("chat");
    write(&folder, "mine.txt", "inside\n");
    let folder = folder.canonicalize().expect("canonical");
    let link = parent.path().join("l");
    std::os::unix::fs::symlink(outside.path(), &link).expect("link");
    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicUsize::new(0));
    let swapper = {
        let (stop, swaps) = (stop.clone(), swaps.clone());
        let (d, l) = (folder.clone(), link.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                if renameat2(AT_FDCWD, &d, AT_FDCWD, &l, RenameFlags::RENAME_EXCHANGE).is_ok() {
                    swaps.fetch_add(1, Ordering::Relaxed);
                }
            }
        })
    };
    let limits = Limits::default();
    let (mut opened, mut refused, mut leaked) = (0, 0, Vec::new());
    for round in 0..400 {
        let mut shadow = match Shadow::open(store.path(), &folder) {
            Ok(s) => s,
            Err(_) => {
                refused += 1;
                continue;
            }
        };
        if shadow.folder() != folder {
            continue; // The link was followed before anything was opened: another folder's.
        }
        opened += 1;
        let Ok(snap) = shadow.snapshot("s", "race", &limits, &[]) else {
            continue;
        };
        let files = shadow.files(&snap.commit).expect("files");
        if files.iter().any(|f| f.contains("secret")) {
            leaked.push(round);
        }
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().expect("swapper");
    assert!(swaps.load(Ordering::Relaxed) > 0, "the swap never happened");
    assert!(
        leaked.is_empty(),
        "the chat's snapshot held the outside folder's files in rounds {leaked:?} \
         ({opened} opened, {refused} refused)"
    );
}

#[cfg(unix)]
#[test]
fn chosen_files_are_written_as_one_step_that_can_be_undone_and_never_over_a_change() {
    use std::os::unix::fs::PermissionsExt;
    let (store, dir) = setup();
    let d = dir.path();
    write(d, "a.txt", "a\n");
    write(d, "run.sh", "#!/bin/sh\n");
    fs::set_permissions(d.join("run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
    write(d, "gone.txt", "bye\n");
    let mut shadow = Shadow::open(store.path(), d).unwrap();
    let limits = Limits::default();
    let w =
        |path: &str, expected: Option<&str>, content: Option<&str>| skald_checkpoint::FileWrite {
            path: path.into(),
            expected: expected.map(|e| e.as_bytes().to_vec()),
            content: content.map(|c| c.as_bytes().to_vec()),
        };
    let done = shadow
        .write_files(
            "s1",
            "applying",
            &[
                w("a.txt", Some("a\n"), Some("A\n")),
                w("run.sh", Some("#!/bin/sh\n"), Some("#!/bin/sh\necho hi\n")),
                w("new/deep.txt", None, Some("new\n")),
                w("gone.txt", Some("bye\n"), None),
            ],
            &limits,
            &[],
        )
        .unwrap();
    assert_eq!(read(d, "a.txt").as_deref(), Some("A\n"));
    assert_eq!(read(d, "new/deep.txt").as_deref(), Some("new\n"));
    assert_eq!(read(d, "gone.txt"), None);
    // An executable stays one.
    let mode = fs::metadata(d.join("run.sh")).unwrap().permissions().mode();
    assert_eq!(mode & 0o111, 0o111);
    assert_eq!(done.changes.total, 4);
    assert_eq!(
        shadow.read(&done.after.commit, "a.txt").unwrap().as_deref(),
        Some(&b"A\n"[..])
    );
    assert_eq!(shadow.read(&done.after.commit, "nothing").unwrap(), None);
    // Undone like any restore.
    shadow
        .restore("s1", &done.before.commit, &limits, &[])
        .unwrap();
    assert_eq!(read(d, "a.txt").as_deref(), Some("a\n"));
    assert_eq!(read(d, "gone.txt").as_deref(), Some("bye\n"));
    assert_eq!(read(d, "new/deep.txt"), None);
    // A file that changed since the caller looked: nothing is written, not even the rest.
    write(d, "a.txt", "edited by the person\n");
    let err = shadow
        .write_files(
            "s1",
            "applying",
            &[
                w("gone.txt", Some("bye\n"), None),
                w("a.txt", Some("a\n"), Some("A\n")),
            ],
            &limits,
            &[],
        )
        .unwrap_err();
    assert!(
        matches!(err, CheckpointError::Moved(ref p) if p == "a.txt"),
        "{err}"
    );
    assert_eq!(read(d, "a.txt").as_deref(), Some("edited by the person\n"));
    assert_eq!(read(d, "gone.txt").as_deref(), Some("bye\n"));
    // Paths that leave the folder are refused.
    for bad in ["../x", "/etc/x", "a/../../x", "", "./a.txt"] {
        let err = shadow
            .write_files("s1", "applying", &[w(bad, None, Some("x"))], &limits, &[])
            .unwrap_err();
        assert!(err.to_string().contains("plain path"), "{bad}: {err}");
    }
}

/// A folder's first checkpoint writes its blobs as a pack, not a file each; what it
/// recorded reads back, diffs and restores as any checkpoint's, and later checkpoints
/// add to it.
#[test]
fn a_first_checkpoint_of_many_files_is_one_pack_and_reads_back_whole() {
    let (store, dir) = setup();
    for i in 0..300 {
        write(
            dir.path(),
            &format!("d{}/f{i}.txt", i % 7),
            &format!("file {i}\n"),
        );
    }
    let limits = Limits::default();
    let first = {
        let mut shadow = Shadow::open(store.path(), dir.path()).expect("open");
        shadow
            .snapshot("s", "first", &limits, &[])
            .expect("snapshot")
    };
    assert_eq!(first.hashed, 300);
    let repo_dir = fs::read_dir(store.path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "git"))
        .unwrap();
    let objects = repo_dir.join("objects");
    let packs: Vec<_> = fs::read_dir(objects.join("pack"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(packs.iter().any(|p| p.ends_with(".pack")), "{packs:?}");
    assert!(packs.iter().any(|p| p.ends_with(".idx")), "{packs:?}");
    // Loose: the trees and the commit, not 300 blobs.
    let loose: usize = fs::read_dir(&objects)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().len() == 2)
        .map(|e| fs::read_dir(e.path()).unwrap().count())
        .sum();
    assert!(loose < 20, "{loose} loose objects");

    write(dir.path(), "d3/f3.txt", "changed\n");
    fs::remove_file(dir.path().join("d4/f4.txt")).unwrap();
    let mut shadow = Shadow::open(store.path(), dir.path()).expect("open");
    let second = shadow
        .snapshot("s", "second", &limits, &[])
        .expect("snapshot");
    assert_eq!(second.hashed, 1);
    let changes = shadow.changes(&first.commit, &second.commit).unwrap();
    assert_eq!(changes.total, 2);
    assert_eq!(
        shadow.read(&first.commit, "d3/f3.txt").unwrap().as_deref(),
        Some(&b"file 3\n"[..])
    );
    shadow.restore("s", &first.commit, &limits, &[]).unwrap();
    assert_eq!(read(dir.path(), "d3/f3.txt").as_deref(), Some("file 3\n"));
    assert_eq!(read(dir.path(), "d4/f4.txt").as_deref(), Some("file 4\n"));
    assert_eq!(
        read(dir.path(), "d5/f299.txt").as_deref(),
        Some("file 299\n")
    );
}

/// No written path may be git's own, however a file system spells it: on a
/// case-insensitive one `.GIT/config` is `.git/config`.
#[test]
fn written_files_never_name_git_s_own_folder_in_any_spelling() {
    use skald_checkpoint::FileWrite;
    let (store, dir) = setup();
    write(dir.path(), "a.txt", "a\n");
    let mut shadow = Shadow::open(store.path(), dir.path()).expect("open");
    let limits = Limits::default();
    for path in [
        ".git/config",
        ".GIT/config",
        "sub/.Git/HEAD",
        ".git./config",
        ".git /config",
        "GIT~1/config",
        ".git",
    ] {
        let err = shadow
            .write_files(
                "s",
                "write",
                &[FileWrite {
                    path: path.to_string(),
                    expected: None,
                    content: Some(b"[core]\n\tfsmonitor = evil\n".to_vec()),
                }],
                &limits,
                &[],
            )
            .unwrap_err();
        assert!(
            err.to_string().contains("not a plain path"),
            "{path}: {err}"
        );
    }
    assert!(!dir.path().join(".git").exists());
    assert!(!dir.path().join("sub").exists());
}
