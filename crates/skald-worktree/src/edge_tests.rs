//! Hostile worktrees (from an attack review of #50): committing and merging a git
//! worktree (docs/worktrees.md, "Commit and merge"), where the agent's worktree is
//! hostile; merging it must never destroy what the person has in their folder and did
//! not commit.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

use crate::git::tests::{commit_all, git};
use crate::git::{Merged, merge};
use crate::{Worktree, create};
use std::fs;
use std::path::Path;

/// A repository on `main` ignoring `.env` and `data/`, with `notes.md` committed, and a
/// worktree of it.
fn repo_and_worktree() -> (tempfile::TempDir, tempfile::TempDir, Worktree) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    git(d, &["init", "-q", "-b", "main"]);
    fs::write(d.join("notes.md"), "one\ntwo\nthree\n").unwrap();
    fs::write(d.join(".gitignore"), ".env\ndata/\n").unwrap();
    git(d, &["add", "."]);
    git(d, &["commit", "-q", "-m", "first"]);
    let source = fs::canonicalize(d).unwrap();
    let data = tempfile::tempdir().unwrap();
    let w = create(&source, &data.path().join("fix"), "fix", &[]).unwrap();
    (dir, data, w)
}

/// The person keeps secrets in `.env`, which their `.gitignore` ignores: never in git,
/// so nothing can bring it back. The agent un-ignores it in its worktree and commits a
/// `.env` of its own; merging must not replace the person's (docs: a merge never "add[s]
/// one where an untracked file of theirs is").
#[test]
fn a_merge_never_overwrites_the_person_s_ignored_file() {
    let (dir, _data, w) = repo_and_worktree();
    let d = dir.path();
    fs::write(d.join(".env"), "API_KEY=the-person-s-only-copy\n").unwrap();
    // The agent's work.
    fs::write(w.root.join(".gitignore"), "data/\n").unwrap();
    fs::write(w.root.join(".env"), "API_KEY=attacker\n").unwrap();
    commit_all(&w, "tidy").unwrap();
    let out = merge(&w);
    assert_eq!(
        fs::read_to_string(d.join(".env")).unwrap(),
        "API_KEY=the-person-s-only-copy\n",
        "the merge ({out:?}) replaced the person's ignored, never-committed .env"
    );
}

/// The person's ignored `data/` folder (their data sets, build outputs…): the agent
/// commits a file named `data`; the merge's checkout removes the whole folder to put the
/// file there.
#[test]
fn a_merge_never_removes_the_person_s_ignored_folder() {
    let (dir, _data, w) = repo_and_worktree();
    let d = dir.path();
    fs::create_dir_all(d.join("data/raw")).unwrap();
    fs::write(d.join("data/raw/survey.csv"), "months of work\n").unwrap();
    fs::write(w.root.join(".gitignore"), ".env\n").unwrap();
    fs::write(w.root.join("data"), "a file now\n").unwrap();
    commit_all(&w, "tidy").unwrap();
    let out = merge(&w);
    assert!(
        d.join("data/raw/survey.csv").exists(),
        "the merge ({out:?}) removed the person's ignored folder data/ and everything in it"
    );
}

/// A file the person staged (`git add`) and did not commit stays staged and on disk.
#[test]
fn merge_keeps_the_person_s_staged_files() {
    let (dir, _data, w) = repo_and_worktree();
    let d = dir.path();
    fs::write(d.join("staged-new.md"), "staged, not committed\n").unwrap();
    fs::write(d.join("notes.md"), "one\ntwo\nthree\nfour\n").unwrap();
    git(d, &["add", "staged-new.md", "notes.md"]);
    fs::write(w.root.join("agent.md"), "agent\n").unwrap();
    commit_all(&w, "agent").unwrap();
    let out = merge(&w).unwrap();
    assert!(matches!(out.merged, Merged::FastForward { .. }), "{out:?}");
    assert_eq!(
        fs::read_to_string(d.join("staged-new.md")).unwrap(),
        "staged, not committed\n"
    );
    let status = git(d, &["status", "--porcelain"]);
    assert!(status.contains("A  staged-new.md"), "{status}");
    assert!(status.contains("M  notes.md"), "{status}");
}

/// A merge commit (the person's branch moved) with a staged file: the staged file must
/// be neither committed by the merge nor lost.
#[test]
fn merge_commit_keeps_the_person_s_staged_files() {
    let (dir, _data, w) = repo_and_worktree();
    let d = dir.path();
    fs::write(w.root.join("agent.md"), "agent\n").unwrap();
    commit_all(&w, "agent").unwrap();
    fs::write(d.join("mine.md"), "mine\n").unwrap();
    git(d, &["add", "mine.md"]);
    git(d, &["commit", "-q", "-m", "mine"]);
    fs::write(d.join("staged-new.md"), "staged, not committed\n").unwrap();
    git(d, &["add", "staged-new.md"]);
    let out = merge(&w).unwrap();
    assert!(matches!(out.merged, Merged::Commit { .. }), "{out:?}");
    let in_merge = git(d, &["ls-tree", "-r", "--name-only", "HEAD"]);
    assert!(!in_merge.contains("staged-new.md"), "{in_merge}");
    assert_eq!(
        fs::read_to_string(d.join("staged-new.md")).unwrap(),
        "staged, not committed\n"
    );
    let status = git(d, &["status", "--porcelain"]);
    assert!(status.contains("A  staged-new.md"), "{status}");
}

/// An untracked (not ignored) folder of the person's where the agent adds a file.
#[test]
fn merge_refuses_a_file_over_the_person_s_untracked_folder() {
    let (dir, _data, w) = repo_and_worktree();
    let d = dir.path();
    fs::create_dir_all(d.join("drafts")).unwrap();
    fs::write(d.join("drafts/ch1.md"), "chapter one\n").unwrap();
    fs::write(w.root.join("drafts"), "a file\n").unwrap();
    commit_all(&w, "agent").unwrap();
    let _ = merge(&w);
    assert_eq!(
        fs::read_to_string(d.join("drafts/ch1.md")).unwrap(),
        "chapter one\n"
    );
}

/// Filter drivers and a nested repository in the worktree: committing and merging runs
/// nothing and writes nothing into the person's `.git`.
#[test]
fn filters_and_nested_git_run_nothing() {
    let (dir, _data, w) = repo_and_worktree();
    let d = dir.path();
    let marker = d.join("driver-ran");
    // A driver in the person's own config too (libgit2 must not run it).
    git(
        d,
        &[
            "config",
            "filter.evil.clean",
            &format!("touch {}; cat", marker.display()),
        ],
    );
    git(
        d,
        &[
            "config",
            "filter.evil.smudge",
            &format!("touch {}; cat", marker.display()),
        ],
    );
    git(d, &["config", "filter.evil.required", "true"]);
    fs::write(w.root.join(".gitattributes"), "* filter=evil diff=evil\n").unwrap();
    fs::write(w.root.join("a.md"), "a\n").unwrap();
    // A folder with a `.git` file naming the person's repository.
    fs::create_dir_all(w.root.join("sub")).unwrap();
    fs::write(
        w.root.join("sub/.git"),
        format!("gitdir: {}\n", d.join(".git").display()),
    )
    .unwrap();
    fs::write(w.root.join("sub/x.md"), "x\n").unwrap();
    let c = commit_all(&w, "agent");
    if c.is_ok() {
        let _ = merge(&w);
    }
    assert!(!marker.exists(), "a filter driver ran");
    assert!(!d.join(".git/x.md").exists());
}

/// A FIFO the agent leaves in its worktree: committing must not wait on it forever.
#[test]
fn commit_does_not_hang_on_a_fifo() {
    let (_dir, _data, w) = repo_and_worktree();
    fs::write(w.root.join("a.md"), "a\n").unwrap();
    let fifo = w.root.join("pipe");
    let st = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(st.success());
    let (tx, rx) = std::sync::mpsc::channel();
    let w2 = w.clone();
    std::thread::spawn(move || {
        let r = commit_all(&w2, "agent").map(|_| ());
        let _ = tx.send(r.map_err(|e| e.to_string()));
    });
    let got = rx.recv_timeout(std::time::Duration::from_secs(20));
    assert!(got.is_ok(), "commit hung on a FIFO in the worktree");
}

/// The person's ignored link `out` to a folder elsewhere (a build output on another
/// disk): the agent commits `out/evil.sh`. The merge must not write through the link.
#[test]
fn merge_does_not_write_through_the_person_s_ignored_link() {
    let (dir, _data, w) = repo_and_worktree();
    let d = dir.path();
    let outside = tempfile::tempdir().unwrap();
    fs::write(d.join(".gitignore"), ".env\ndata/\nout\n").unwrap();
    git(d, &["commit", "-q", "-am", "ignore out"]);
    std::os::unix::fs::symlink(outside.path(), d.join("out")).unwrap();
    // The worktree started before; the agent's branch is behind: merge commit.
    fs::create_dir_all(w.root.join("out")).unwrap();
    fs::write(w.root.join("out/evil.sh"), "evil\n").unwrap();
    commit_all(&w, "agent").unwrap();
    let out = merge(&w);
    assert!(
        !outside.path().join("evil.sh").exists(),
        "the merge ({out:?}) wrote through the person's link out of the folder"
    );
}

/// The same with an untracked (not ignored) link.
#[test]
fn merge_does_not_write_through_the_person_s_untracked_link() {
    let (dir, _data, w) = repo_and_worktree();
    let d = dir.path();
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), d.join("out")).unwrap();
    fs::create_dir_all(w.root.join("out")).unwrap();
    fs::write(w.root.join("out/evil.sh"), "evil\n").unwrap();
    commit_all(&w, "agent").unwrap();
    let out = merge(&w);
    assert!(
        !outside.path().join("evil.sh").exists(),
        "the merge ({out:?}) wrote through the person's link out of the folder"
    );
}

/// A folder holding a sparse file (a VM disk image, a database's preallocated file): the
/// copy must not turn its holes into zeros on disk — a 1 GiB image that takes nothing
/// becomes 1 GiB written, and a 100 GiB one fills the disk.
#[test]
fn a_copy_keeps_a_sparse_file_sparse() {
    use std::os::unix::fs::MetadataExt;
    let src = tempfile::tempdir().unwrap();
    let source = fs::canonicalize(src.path()).unwrap();
    let f = fs::File::create(source.join("disk.img")).unwrap();
    f.set_len(1 << 30).unwrap();
    drop(f);
    let on_disk = |p: &Path| fs::metadata(p).unwrap().blocks() * 512;
    assert!(on_disk(&source.join("disk.img")) < (1 << 20));
    let data = tempfile::tempdir().unwrap();
    let root = data.path().join("copy");
    crate::copy_folder(&source, &root, &[]).unwrap();
    let copied = on_disk(&root.join("disk.img"));
    assert!(
        copied < (64 << 20),
        "the copy of a 1 GiB sparse file that takes nothing takes {copied} bytes on disk"
    );
}

/// A raw tree object: `(mode, name, id)` entries in the order given, not checked.
fn raw_tree(repo: &git2::Repository, entries: &[(&str, &[u8], git2::Oid)]) -> git2::Oid {
    let mut bytes = Vec::new();
    for (mode, name, id) in entries {
        bytes.extend_from_slice(mode.as_bytes());
        bytes.push(b' ');
        bytes.extend_from_slice(name);
        bytes.push(0);
        bytes.extend_from_slice(id.as_bytes());
    }
    repo.odb()
        .unwrap()
        .write(git2::ObjectType::Tree, &bytes)
        .unwrap()
}

/// An agent's commands can make a repository in a folder it writes (`git init`, then git's
/// plumbing: any tree it likes as `HEAD`); the sandbox's git guard neuters its
/// configuration and hooks, not its objects. Making a worktree of that folder (an
/// `execute_task` with `worktree: true`, unasked) checks that `HEAD` out with libgit2,
/// outside the sandbox. A tree holding both a link `a` to a folder outside and a folder
/// `a/` (or a name with a `/` or `..`) must not write anything outside the worktree.
#[test]
fn a_crafted_head_does_not_write_outside_the_worktree() {
    // Both orders of the two entries named `a`.
    for link_first in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let outside = tempfile::tempdir().unwrap();
        let repo = git2::Repository::init(d).unwrap();
        let link = repo
            .blob(outside.path().to_string_lossy().as_bytes())
            .unwrap();
        let payload = repo.blob(b"written outside\n").unwrap();
        let sub = raw_tree(&repo, &[("100644", b"x", payload)]);
        let (first, second) = if link_first {
            (("120000", &b"a"[..], link), ("40000", &b"a"[..], sub))
        } else {
            (("40000", &b"a"[..], sub), ("120000", &b"a"[..], link))
        };
        let root = raw_tree(&repo, &[("100644", b"README.md", payload), first, second]);
        let sig = git2::Signature::now("a", "a@example.invalid").unwrap();
        let tree = repo.find_tree(root).unwrap();
        repo.commit(Some("HEAD"), &sig, &sig, "crafted", &tree, &[])
            .unwrap();
        let source = fs::canonicalize(d).unwrap();
        let data = tempfile::tempdir().unwrap();
        let made = create(&source, &data.path().join("w"), "w", &[]);
        assert!(
            !outside.path().join("x").exists(),
            "making a worktree ({made:?}) wrote through the crafted link outside it"
        );
    }
}

/// The same with names git never makes: `..`, a `/` inside a name.
#[test]
fn a_crafted_head_with_odd_names_does_not_write_outside() {
    let top = tempfile::tempdir().unwrap();
    let d = top.path().join("repo");
    fs::create_dir(&d).unwrap();
    let repo = git2::Repository::init(&d).unwrap();
    let payload = repo.blob(b"written outside\n").unwrap();
    let root = raw_tree(
        &repo,
        &[
            ("100644", b"..", payload),
            ("100644", b"README.md", payload),
            ("100644", b"../../escaped-slash", payload),
        ],
    );
    let sig = git2::Signature::now("a", "a@example.invalid").unwrap();
    let tree = repo.find_tree(root).unwrap();
    repo.commit(Some("HEAD"), &sig, &sig, "crafted", &tree, &[])
        .unwrap();
    let source = fs::canonicalize(&d).unwrap();
    let data = top.path().join("data");
    fs::create_dir(&data).unwrap();
    let made = create(&source, &data.join("w"), "w", &[]);
    assert!(
        !top.path().join("escaped-slash").exists() && !data.join("escaped-slash").exists(),
        "{made:?}"
    );
}
