#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

use super::*;
use crate::create;
use std::fs;

pub(crate) fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.invalid",
            "-c",
            "commit.gpgsign=false",
            // The test's own commits run none of the hooks set up to catch Skald's.
            "-c",
            "core.hooksPath=/nonexistent",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// `commit` of everything that differs in the worktree from its branch, as git sees it
/// (the engine commits a review's snapshot instead; these tests are about git's side).
pub(crate) fn commit_all(w: &Worktree, message: &str) -> Result<String, WorktreeError> {
    use std::os::unix::fs::PermissionsExt;
    // Through libgit2, as the engine works: git's own command would run filter drivers.
    let repo = Repository::open(&w.root).unwrap();
    let mut opts = git2::StatusOptions::new();
    opts.include_untracked(true).recurse_untracked_dirs(true);
    let listed: Vec<String> = repo
        .statuses(Some(&mut opts))
        .unwrap()
        .iter()
        .filter_map(|e| e.path().map(str::to_string))
        .collect();
    let mut files = Vec::new();
    for path in listed {
        let on_disk = w.root.join(&path);
        let content = match fs::symlink_metadata(&on_disk) {
            Ok(m) if m.file_type().is_symlink() => Some((
                fs::read_link(&on_disk)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
                    .into_bytes(),
                0o120000,
            )),
            Ok(m) if m.is_file() => Some((
                fs::read(&on_disk).unwrap(),
                if m.permissions().mode() & 0o111 != 0 {
                    0o100755
                } else {
                    0o100644
                },
            )),
            // A FIFO or a device is no file to commit.
            Ok(m) if !m.is_dir() => continue,
            _ => None,
        };
        files.push(CommitFile { path, content });
    }
    commit(w, message, &files)
}

/// A repository on `main` with `notes.md` (three lines) committed, and a worktree of it.
fn repo_and_worktree() -> (tempfile::TempDir, tempfile::TempDir, Worktree) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    git(d, &["init", "-q", "-b", "main"]);
    fs::write(d.join("notes.md"), "one\ntwo\nthree\n").unwrap();
    fs::write(d.join("old.txt"), "old\n").unwrap();
    git(d, &["add", "."]);
    git(d, &["commit", "-q", "-m", "first"]);
    // Hooks a merge or commit by git would run: Skald's must not.
    for hook in ["pre-commit", "post-commit", "post-merge", "post-checkout"] {
        let path = d.join(".git/hooks").join(hook);
        fs::write(
            &path,
            format!("#!/bin/sh\ntouch \"{}/hook-ran-{hook}\"\n", d.display()),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
    }
    let source = fs::canonicalize(d).unwrap();
    let data = tempfile::tempdir().unwrap();
    let w = create(&source, &data.path().join("fix"), "fix", &[]).unwrap();
    (dir, data, w)
}

fn no_hook_ran(d: &Path) {
    let ran: Vec<_> = fs::read_dir(d)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("hook-ran"))
        .map(|e| e.file_name())
        .collect();
    assert!(ran.is_empty(), "hooks ran: {ran:?}");
}

#[test]
fn the_agent_s_work_is_committed_on_its_branch_and_fast_forwarded_into_the_person_s() {
    let (dir, _data, w) = repo_and_worktree();
    let d = dir.path();
    assert!(
        matches!(commit_all(&w, "x"), Err(WorktreeError::Io(m)) if m.contains("nothing to commit"))
    );
    fs::write(w.root.join("notes.md"), "one\n2\nthree\n").unwrap();
    fs::write(w.root.join("new.md"), "new\n").unwrap();
    fs::remove_file(w.root.join("old.txt")).unwrap();
    let id = commit_all(&w, "Fix the notes").unwrap();
    assert_eq!(git(&w.root, &["status", "--porcelain"]), "");
    assert_eq!(git(d, &["rev-parse", "skald/fix"]), id);
    assert_eq!(
        git(d, &["log", "-1", "--format=%s", "skald/fix"]),
        "Fix the notes"
    );
    // The person's branch has not moved yet, nor their folder.
    assert_eq!(
        fs::read_to_string(d.join("notes.md")).unwrap(),
        "one\ntwo\nthree\n"
    );
    let before = git(d, &["rev-parse", "main"]);

    let out = merge(&w).unwrap();
    assert_eq!(out.into, "main");
    assert_eq!(out.merged, Merged::FastForward { commit: id.clone() });
    assert_eq!(git(d, &["rev-parse", "main"]), id);
    assert_eq!(
        fs::read_to_string(d.join("notes.md")).unwrap(),
        "one\n2\nthree\n"
    );
    assert_eq!(fs::read_to_string(d.join("new.md")).unwrap(), "new\n");
    assert!(!d.join("old.txt").exists());
    assert_eq!(git(d, &["status", "--porcelain"]), "");
    assert_eq!(git(d, &["rev-parse", "ORIG_HEAD"]), before);
    assert_eq!(merge(&w).unwrap().merged, Merged::UpToDate);
    no_hook_ran(d);
}

#[test]
fn when_the_person_s_branch_moved_a_merge_commit_joins_both() {
    let (dir, _data, w) = repo_and_worktree();
    let d = dir.path();
    fs::write(w.root.join("notes.md"), "one\ntwo\nthree\nfour\n").unwrap();
    commit_all(&w, "").unwrap();
    fs::write(d.join("notes.md"), "zero\none\ntwo\nthree\n").unwrap();
    git(d, &["commit", "-q", "-am", "mine"]);
    let mine = git(d, &["rev-parse", "main"]);
    let out = merge(&w).unwrap();
    let Merged::Commit { commit } = out.merged else {
        panic!("{out:?}")
    };
    assert_eq!(git(d, &["rev-parse", "main"]), commit);
    let parents = git(d, &["log", "-1", "--format=%P"]);
    assert_eq!(
        parents,
        format!("{mine} {}", git(d, &["rev-parse", "skald/fix"]))
    );
    assert_eq!(
        fs::read_to_string(d.join("notes.md")).unwrap(),
        "zero\none\ntwo\nthree\nfour\n"
    );
    assert_eq!(git(d, &["status", "--porcelain"]), "");
    assert!(git(d, &["log", "-1", "--format=%s"]).contains("skald/fix"));
    // The default message says whose work it is.
    assert!(git(d, &["log", "-1", "--format=%s", "skald/fix"]).contains("worktree fix"));
    for hook in ["pre-commit", "post-commit", "post-merge", "post-checkout"] {
        assert!(!d.join(format!("hook-ran-{hook}")).exists(), "{hook} ran");
    }
}

#[test]
fn a_clash_or_the_person_s_uncommitted_change_leaves_everything_as_it_was() {
    let (dir, _data, w) = repo_and_worktree();
    let d = dir.path();
    fs::write(w.root.join("notes.md"), "one\nagent\nthree\n").unwrap();
    commit_all(&w, "agent").unwrap();
    // The same line changed on both sides.
    fs::write(d.join("notes.md"), "one\nperson\nthree\n").unwrap();
    git(d, &["commit", "-q", "-am", "person"]);
    let head = git(d, &["rev-parse", "main"]);
    let out = merge(&w).unwrap();
    assert_eq!(
        out.merged,
        Merged::Conflicts {
            paths: vec!["notes.md".to_string()]
        }
    );
    assert_eq!(git(d, &["rev-parse", "main"]), head);
    assert_eq!(
        fs::read_to_string(d.join("notes.md")).unwrap(),
        "one\nperson\nthree\n"
    );
    assert_eq!(git(d, &["status", "--porcelain"]), "");

    // A file the merge would write that the person changed and did not commit.
    let (dir, _data, w) = repo_and_worktree();
    let d = dir.path();
    fs::write(w.root.join("notes.md"), "one\nagent\nthree\n").unwrap();
    fs::write(w.root.join("added.md"), "agent\n").unwrap();
    commit_all(&w, "agent").unwrap();
    fs::write(d.join("notes.md"), "one\nunsaved\nthree\n").unwrap();
    // And a file of their own where the merge would add one.
    fs::write(d.join("added.md"), "mine, not committed\n").unwrap();
    let head = git(d, &["rev-parse", "main"]);
    let err = merge(&w).unwrap_err();
    assert!(err.to_string().contains("did not commit"), "{err}");
    assert_eq!(git(d, &["rev-parse", "main"]), head);
    assert_eq!(
        fs::read_to_string(d.join("notes.md")).unwrap(),
        "one\nunsaved\nthree\n"
    );
    assert_eq!(
        fs::read_to_string(d.join("added.md")).unwrap(),
        "mine, not committed\n"
    );

    // Only the untracked file in the way: refused as well.
    fs::write(d.join("notes.md"), "one\ntwo\nthree\n").unwrap();
    let err = merge(&w).unwrap_err();
    assert!(err.to_string().contains("did not commit"), "{err}");
    assert_eq!(
        fs::read_to_string(d.join("added.md")).unwrap(),
        "mine, not committed\n"
    );
    assert_eq!(git(d, &["rev-parse", "main"]), head);
    no_hook_ran(d);
}

#[test]
fn a_repository_mid_operation_or_a_copy_is_not_merged() {
    let (dir, _data, w) = repo_and_worktree();
    let d = dir.path();
    fs::write(w.root.join("new.md"), "x\n").unwrap();
    commit_all(&w, "x").unwrap();
    fs::write(
        d.join(".git/MERGE_HEAD"),
        git(d, &["rev-parse", "HEAD"]) + "\n",
    )
    .unwrap();
    let err = merge(&w).unwrap_err();
    assert!(
        err.to_string().contains("middle of another operation"),
        "{err}"
    );
    fs::remove_file(d.join(".git/MERGE_HEAD")).unwrap();
    git(d, &["checkout", "-q", "--detach"]);
    let err = merge(&w).unwrap_err();
    assert!(err.to_string().contains("detached"), "{err}");

    let plain = tempfile::tempdir().unwrap();
    fs::write(plain.path().join("a.txt"), "a\n").unwrap();
    let source = fs::canonicalize(plain.path()).unwrap();
    let data = tempfile::tempdir().unwrap();
    let copy = create(&source, &data.path().join("c"), "c", &[]).unwrap();
    assert!(
        merge(&copy)
            .unwrap_err()
            .to_string()
            .contains("no git repository")
    );
    assert!(commit(&copy, "x", &[]).is_err());
}
