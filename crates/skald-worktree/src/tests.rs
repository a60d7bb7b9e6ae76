#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

use super::*;
use std::fs;

fn git(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.invalid",
            "-c",
            "commit.gpgsign=false",
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
}

fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    git(d, &["init", "-q", "-b", "main"]);
    fs::create_dir(d.join("src")).unwrap();
    fs::write(d.join("src/lib.rs"), "fn a() {}\n").unwrap();
    fs::write(d.join("README.md"), "hi\n").unwrap();
    git(d, &["add", "."]);
    git(d, &["commit", "-q", "-m", "first"]);
    dir
}

#[test]
fn names_git_and_every_system_take() {
    for ok in ["fix-42", "a", "Paper_v2.1"] {
        assert!(check_name(ok).is_ok(), "{ok}");
    }
    for bad in [
        "",
        "-x",
        ".x",
        "a..b",
        "a/b",
        "a b",
        "x.lock",
        "x.",
        "é",
        &"a".repeat(49),
    ] {
        assert!(check_name(bad).is_err(), "{bad}");
    }
}

#[test]
fn a_git_folder_gets_a_worktree_on_its_own_branch_from_head() {
    let src = repo();
    let source = fs::canonicalize(src.path()).unwrap();
    // Uncommitted work stays the person's: the worktree starts at HEAD.
    fs::write(source.join("README.md"), "changed, not committed\n").unwrap();
    let data = tempfile::tempdir().unwrap();
    let root = data.path().join("worktrees/fix");
    let w = create(&source, &root, "fix", &[]).unwrap();
    assert_eq!(w.working_dir, root);
    let Kind::Git { repo, branch, base } = &w.kind else {
        panic!("{w:?}")
    };
    assert_eq!((repo, branch.as_str()), (&source, "skald/fix"));
    let r = git2::Repository::open(&source).unwrap();
    assert_eq!(
        r.head().unwrap().peel_to_commit().unwrap().id().to_string(),
        *base
    );
    assert_eq!(fs::read_to_string(root.join("README.md")).unwrap(), "hi\n");
    assert_eq!(
        fs::read_to_string(root.join("src/lib.rs")).unwrap(),
        "fn a() {}\n"
    );
    // The worktree is on its branch; the person's folder is where it was.
    let wt = git2::Repository::open(&root).unwrap();
    assert_eq!(wt.head().unwrap().shorthand(), Some("skald/fix"));
    assert_eq!(r.head().unwrap().shorthand(), Some("main"));
    // The same name again is refused, and nothing is overwritten.
    let again = create(&source, &data.path().join("worktrees/fix2"), "fix", &[]).unwrap_err();
    assert!(matches!(again, WorktreeError::Exists(_)), "{again}");
    // Discarded: folder, worktree entry and branch gone; the person's folder untouched.
    discard(&w).unwrap();
    assert!(!root.exists());
    assert!(r.find_branch("skald/fix", git2::BranchType::Local).is_err());
    assert!(r.find_worktree("skald-fix").is_err());
    assert_eq!(
        fs::read_to_string(source.join("README.md")).unwrap(),
        "changed, not committed\n"
    );
    // And the name is free again.
    let w = create(&source, &root, "fix", &[]).unwrap();
    discard(&w).unwrap();
}

#[test]
fn a_folder_inside_a_repository_is_worked_on_inside_the_worktree() {
    let src = repo();
    let source = fs::canonicalize(src.path().join("src")).unwrap();
    let data = tempfile::tempdir().unwrap();
    let root = data.path().join("wt");
    let w = create(&source, &root, "sub", &[]).unwrap();
    assert_eq!(w.working_dir, root.join("src"));
    assert!(w.working_dir.join("lib.rs").is_file());
    discard(&w).unwrap();
}

#[test]
fn a_folder_the_repository_does_not_track_is_copied() {
    let src = repo();
    let notes = src.path().join("notes");
    fs::create_dir(&notes).unwrap();
    fs::write(notes.join("a.md"), "untracked\n").unwrap();
    let source = fs::canonicalize(&notes).unwrap();
    let data = tempfile::tempdir().unwrap();
    let root = data.path().join("wt");
    let w = create(&source, &root, "notes", &[]).unwrap();
    assert_eq!(
        (w.kind.clone(), w.working_dir.clone()),
        (Kind::Copy, root.clone())
    );
    assert_eq!(
        fs::read_to_string(root.join("a.md")).unwrap(),
        "untracked\n"
    );
    // No branch was left behind by the worktree tried first.
    let r = git2::Repository::open(src.path()).unwrap();
    assert!(
        r.find_branch("skald/notes", git2::BranchType::Local)
            .is_err()
    );
    discard(&w).unwrap();
    assert!(!root.exists() && notes.join("a.md").exists());
}

#[cfg(unix)]
#[test]
fn any_other_folder_is_copied_as_a_walk_finds_it() {
    use std::os::unix::fs::PermissionsExt;
    let src = tempfile::tempdir().unwrap();
    let s = fs::canonicalize(src.path()).unwrap();
    fs::create_dir_all(s.join("chapters/one")).unwrap();
    fs::write(s.join("chapters/one/intro.tex"), "\\section{Intro}\n").unwrap();
    fs::write(s.join(".hidden"), "kept\n").unwrap();
    fs::write(s.join("run.sh"), "#!/bin/sh\n").unwrap();
    fs::set_permissions(s.join("run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
    fs::write(s.join(".gitignore"), "build/\n").unwrap();
    fs::create_dir(s.join("build")).unwrap();
    fs::write(s.join("build/out.pdf"), "pdf").unwrap();
    fs::create_dir(s.join("node_modules")).unwrap();
    fs::write(s.join("node_modules/x.js"), "x").unwrap();
    fs::create_dir(s.join("private")).unwrap();
    fs::write(s.join("private/key"), "k").unwrap();
    std::os::unix::fs::symlink("/etc/hostname", s.join("outside")).unwrap();
    let data = tempfile::tempdir().unwrap();
    let root = data.path().join("copy");
    let w = create(&s, &root, "draft", &[s.join("private")]).unwrap();
    assert_eq!(w.kind, Kind::Copy);
    assert_eq!(
        fs::read_to_string(root.join("chapters/one/intro.tex")).unwrap(),
        "\\section{Intro}\n"
    );
    assert!(root.join(".hidden").is_file());
    let mode = fs::metadata(root.join("run.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o755);
    // What the walk leaves out is not copied: ignored, noise, denied.
    for gone in ["build", "node_modules", "private"] {
        assert!(!root.join(gone).exists(), "{gone}");
    }
    // A link is made again as it was, not followed.
    assert_eq!(
        fs::read_link(root.join("outside")).unwrap(),
        Path::new("/etc/hostname")
    );
    assert!(
        fs::symlink_metadata(root.join("outside"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    // Writing the copy leaves the folder alone.
    fs::write(root.join("chapters/one/intro.tex"), "changed").unwrap();
    assert_eq!(
        fs::read_to_string(s.join("chapters/one/intro.tex")).unwrap(),
        "\\section{Intro}\n"
    );
    discard(&w).unwrap();
    assert!(!root.exists());
    // A root that exists is refused.
    fs::create_dir(&root).unwrap();
    assert!(matches!(
        create(&s, &root, "draft", &[]),
        Err(WorktreeError::Exists(_))
    ));
}

#[cfg(unix)]
#[test]
fn discarding_never_follows_a_link_out_of_the_worktree() {
    let src = tempfile::tempdir().unwrap();
    let s = fs::canonicalize(src.path()).unwrap();
    fs::write(s.join("a.txt"), "a").unwrap();
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("precious"), "keep").unwrap();
    let data = tempfile::tempdir().unwrap();
    let root = data.path().join("copy");
    let w = create(&s, &root, "x", &[]).unwrap();
    // An agent's command links a folder outside into its worktree.
    std::os::unix::fs::symlink(outside.path(), root.join("escape")).unwrap();
    discard(&w).unwrap();
    assert_eq!(
        fs::read_to_string(outside.path().join("precious")).unwrap(),
        "keep"
    );
}

#[test]
fn a_git_worktree_s_own_git_file_is_no_file_of_the_folder() {
    let src = repo();
    let source = fs::canonicalize(src.path()).unwrap();
    let data = tempfile::tempdir().unwrap();
    let root = data.path().join("wt");
    let w = create(&source, &root, "walk", &[]).unwrap();
    // The worktree's `.git` is a file pointing at the repository: the walk every tool,
    // checkpoint and copy uses leaves it out, as it leaves a `.git` folder out.
    assert!(root.join(".git").is_file());
    let mut seen = Vec::new();
    skald_base::walk::walker(&root, &[])
        .run(|e| {
            seen.push(e.path().strip_prefix(&root).unwrap().to_path_buf());
            skald_base::walk::Flow::Continue
        })
        .unwrap();
    assert!(!seen.iter().any(|p| p.as_os_str() == ".git"), "{seen:?}");
    assert!(seen.iter().any(|p| p == Path::new("README.md")), "{seen:?}");
    discard(&w).unwrap();
}

#[test]
fn a_git_file_naming_another_project_is_not_followed() {
    let other = repo();
    let src = tempfile::tempdir().unwrap();
    let source = fs::canonicalize(src.path()).unwrap();
    fs::write(source.join("mine.txt"), "mine\n").unwrap();
    fs::write(
        source.join(".git"),
        format!("gitdir: {}\n", other.path().join(".git").display()),
    )
    .unwrap();
    let data = tempfile::tempdir().unwrap();
    let w = create(&source, &data.path().join("wt"), "x", &[]).unwrap();
    // The folder is copied; the other project gets no branch and no worktree.
    assert_eq!(w.kind, Kind::Copy);
    assert!(w.root.join("mine.txt").is_file());
    let r = git2::Repository::open(other.path()).unwrap();
    assert!(r.find_branch("skald/x", git2::BranchType::Local).is_err());
    assert!(r.worktrees().unwrap().is_empty());
    // A real linked worktree of a repository is its own.
    let linked_parent = tempfile::tempdir().unwrap();
    let linked = linked_parent.path().join("linked");
    git(
        other.path(),
        &["worktree", "add", "-q", linked.to_str().unwrap()],
    );
    let linked = fs::canonicalize(&linked).unwrap();
    let w2 = create(&linked, &data.path().join("wt2"), "y", &[]).unwrap();
    assert!(matches!(w2.kind, Kind::Git { .. }), "{w2:?}");
    discard(&w2).unwrap();
}

/// A repository that tracks what the agent may not read (a home folder kept as a
/// repository, `.ssh/` in it) is copied without it rather than checked out whole; one
/// that tracks nothing of it is a git worktree as usual.
#[test]
fn a_repository_tracking_excluded_paths_is_copied_without_them() {
    let src = repo();
    let source = fs::canonicalize(src.path()).unwrap();
    fs::create_dir_all(source.join(".ssh")).unwrap();
    fs::write(source.join(".ssh/id_ed25519"), "SECRET\n").unwrap();
    git(&source, &["add", "-f", ".ssh"]);
    git(&source, &["commit", "-q", "-m", "keys"]);
    let data = tempfile::tempdir().unwrap();
    // Excluded by its own path, and by a folder above a tracked file.
    for excluded in [source.join(".ssh"), source.join(".ssh/id_ed25519")] {
        let root = data
            .path()
            .join(format!("w{}", excluded.components().count()));
        let w = create(&source, &root, "w", std::slice::from_ref(&excluded)).unwrap();
        assert_eq!(w.kind, Kind::Copy, "{excluded:?}");
        assert!(!root.join(".ssh/id_ed25519").exists());
        assert!(root.join("README.md").is_file());
    }
    // Nothing excluded is tracked: a git worktree.
    let other = data.path().join("plain");
    let w = create(&source, &other, "plain", &[source.join("not-tracked")]).unwrap();
    assert!(matches!(w.kind, Kind::Git { .. }));
}
