//! For a worktree of a git repository: committing the agent's work on its branch
//! `skald/<name>`, and merging that branch into the branch the person has checked out
//! (docs/worktrees.md, "Commit and merge").
//!
//! Through libgit2, as worktrees are made: no hook of the repository runs, and no
//! external filter driver a `.gitattributes` names (libgit2 knows only its built-in
//! ones) — the worktree's files are the agent's, and committing them must not run code.
//!
//! A commit holds what the person reviewed (the files and contents of the review's
//! snapshot), not whatever the worktree holds: a command the agent left running may have
//! changed it since, and its skipped folders (`node_modules`, `target`) and large files
//! are never shown in a review.
//!
//! A merge never overwrites what the person changed: it refuses a repository in the
//! middle of another operation and any clash (the same lines changed on both sides, or a
//! file the person changed and not committed, or one git ignores, that the merge would
//! write); then nothing is written.

use crate::{Kind, Worktree, WorktreeError};
use git2::{MergeAnalysis, Oid, Repository, Signature};
use std::path::Path;

/// How a merge went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Merged {
    /// The person's branch already has everything of the worktree's.
    UpToDate,
    /// The person's branch had not moved: it now points at the worktree's last commit.
    FastForward { commit: String },
    /// A merge commit joins both.
    Commit { commit: String },
    /// These files were changed on both sides; nothing was written.
    Conflicts { paths: Vec<String> },
}

/// The branch merged into, and how it went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeOutcome {
    /// The person's branch (`main`).
    pub into: String,
    pub merged: Merged,
}

/// Why a worktree is no git worktree, as an error.
fn git_parts(w: &Worktree) -> Result<(&Path, &str), WorktreeError> {
    match &w.kind {
        Kind::Git { repo, branch, .. } => Ok((repo, branch)),
        Kind::Copy => Err(WorktreeError::Io(format!(
            "worktree {} is a copy of a folder that is no git repository: apply its \
             changes instead",
            w.name
        ))),
    }
}

/// Who commits: the repository's configured person, else Skald.
fn signature(repo: &Repository) -> Result<Signature<'static>, WorktreeError> {
    match repo.signature() {
        Ok(s) => Ok(s.to_owned()),
        Err(_) => Ok(Signature::now("Skald", "skald@localhost")?),
    }
}

/// One file of a commit: its path in the repository (`/`-separated) and its content
/// and git file mode, or `None` when the commit removes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitFile {
    pub path: String,
    pub content: Option<(Vec<u8>, u32)>,
}

/// Commits `files` — what the person reviewed, not whatever the worktree holds now — on
/// the worktree's branch, over its last commit. Returns the commit; an error when that
/// changes nothing.
pub fn commit(w: &Worktree, message: &str, files: &[CommitFile]) -> Result<String, WorktreeError> {
    git_parts(w)?;
    let repo = Repository::open(&w.root)?;
    let head = repo.head()?.peel_to_commit()?;
    // Built on the branch's last commit, not on what the worktree's index held (a command
    // of the agent's may have filled it).
    let mut index = repo.index()?;
    index.read_tree(&head.tree()?)?;
    for f in files {
        let path = Path::new(&f.path);
        match &f.content {
            Some((bytes, mode)) => {
                let entry = git2::IndexEntry {
                    ctime: git2::IndexTime::new(0, 0),
                    mtime: git2::IndexTime::new(0, 0),
                    dev: 0,
                    ino: 0,
                    mode: *mode,
                    uid: 0,
                    gid: 0,
                    file_size: 0,
                    id: git2::Oid::zero(),
                    flags: 0,
                    flags_extended: 0,
                    path: f.path.as_bytes().to_vec(),
                };
                index.add_frombuffer(&entry, bytes)?;
            }
            None => match index.remove_path(path) {
                Ok(()) => {}
                Err(e) if e.code() == git2::ErrorCode::NotFound => {}
                Err(e) => return Err(e.into()),
            },
        }
    }
    let tree_id = index.write_tree_to(&repo)?;
    if head.tree_id() == tree_id {
        return Err(WorktreeError::Io(format!(
            "worktree {} has nothing to commit",
            w.name
        )));
    }
    let tree = repo.find_tree(tree_id)?;
    let who = signature(&repo)?;
    let message = if message.trim().is_empty() {
        format!("Work of Skald's agent in worktree {}", w.name)
    } else {
        message.trim().to_string()
    };
    let id = repo.commit(Some("HEAD"), &who, &who, &message, &tree, &[&head])?;
    // The worktree's index follows its branch, so `git status` there shows what is left
    // uncommitted.
    index.write()?;
    Ok(id.to_string())
}

/// The paths (in the repository) its branch changed since the worktree started: what a
/// merge would bring in.
pub fn branch_changes(w: &Worktree) -> Result<Vec<String>, WorktreeError> {
    let (repo_dir, branch) = git_parts(w)?;
    let Kind::Git { base, .. } = &w.kind else {
        return Ok(Vec::new());
    };
    let repo = Repository::open(repo_dir)?;
    let from = repo.find_commit(git2::Oid::from_str(base)?)?.tree()?;
    let to = repo
        .find_branch(branch, git2::BranchType::Local)?
        .get()
        .peel_to_tree()?;
    let diff = repo.diff_tree_to_tree(Some(&from), Some(&to), None)?;
    let mut paths = Vec::new();
    for d in diff.deltas() {
        for f in [d.old_file(), d.new_file()] {
            if let Some(p) = f.path_bytes() {
                let p = String::from_utf8_lossy(p).into_owned();
                if !paths.contains(&p) {
                    paths.push(p);
                }
            }
        }
    }
    Ok(paths)
}

/// A file's content at the tip of the worktree's branch (`path` in the repository), or
/// `None` when the branch has no such file.
pub fn branch_file(w: &Worktree, path: &str) -> Result<Option<Vec<u8>>, WorktreeError> {
    let (repo_dir, branch) = git_parts(w)?;
    let repo = Repository::open(repo_dir)?;
    let tip = repo
        .find_branch(branch, git2::BranchType::Local)?
        .get()
        .peel_to_tree()?;
    let entry = match tip.get_path(Path::new(path)) {
        Ok(e) => e,
        Err(e) if e.code() == git2::ErrorCode::NotFound => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    Ok(entry
        .to_object(&repo)?
        .into_blob()
        .ok()
        .map(|b| b.content().to_vec()))
}

/// Merges the worktree's branch into the branch checked out in the person's repository
/// (what is committed on it: the caller makes sure the reviewed work is).
pub fn merge(w: &Worktree) -> Result<MergeOutcome, WorktreeError> {
    let (repo_dir, branch) = git_parts(w)?;
    let repo = Repository::open(repo_dir)?;
    if repo.state() != git2::RepositoryState::Clean {
        return Err(WorktreeError::Io(format!(
            "{} is in the middle of another operation ({:?}); finish it first",
            repo_dir.display(),
            repo.state()
        )));
    }
    let head = repo.head()?;
    if !head.is_branch() {
        return Err(WorktreeError::Io(format!(
            "{} has no branch checked out (a detached HEAD); check one out to merge into",
            repo_dir.display()
        )));
    }
    let into = head.shorthand().unwrap_or("HEAD").to_string();
    if head.name() == Some(format!("refs/heads/{branch}").as_str()) {
        return Err(WorktreeError::Io(format!(
            "{branch} itself is checked out in {}",
            repo_dir.display()
        )));
    }
    let ours = head.peel_to_commit()?;
    let theirs_ref = repo.find_branch(branch, git2::BranchType::Local)?;
    let theirs = theirs_ref.get().peel_to_commit()?;
    let annotated = repo.reference_to_annotated_commit(theirs_ref.get())?;
    let (analysis, _) = repo.merge_analysis(&[&annotated])?;
    if analysis.contains(MergeAnalysis::ANALYSIS_UP_TO_DATE) {
        return Ok(MergeOutcome {
            into,
            merged: Merged::UpToDate,
        });
    }
    let message = format!("Merge {branch} (Skald worktree {})", w.name);
    let (tree_id, fast_forward) = if analysis.contains(MergeAnalysis::ANALYSIS_FASTFORWARD) {
        (theirs.tree_id(), true)
    } else {
        let mut index = repo.merge_commits(&ours, &theirs, None)?;
        if index.has_conflicts() {
            let mut paths: Vec<String> = index
                .conflicts()?
                .filter_map(Result::ok)
                .filter_map(|c| c.our.or(c.their).or(c.ancestor))
                .map(|e| String::from_utf8_lossy(&e.path).into_owned())
                .collect();
            paths.sort();
            paths.dedup();
            return Ok(MergeOutcome {
                into,
                merged: Merged::Conflicts { paths },
            });
        }
        (index.write_tree_to(&repo)?, false)
    };
    let tree = repo.find_tree(tree_id)?;
    // A safe checkout writes only files that are as the person's last commit has them,
    // and fails before writing anything when one the merge needs was changed.
    let mut checkout = git2::build::CheckoutBuilder::new();
    // Nor a file or folder the person's `.gitignore` keeps out of git (a `.env`, a data
    // folder): never committed, nothing could bring it back.
    checkout.safe().overwrite_ignored(false);
    repo.checkout_tree(tree.as_object(), Some(&mut checkout))
        .map_err(|e| {
            WorktreeError::Io(format!(
                "the merge would write files you changed and did not commit, or files git \
                 ignores, in {}; commit or put them aside first ({})",
                repo_dir.display(),
                e.message()
            ))
        })?;
    // `git reset --keep ORIG_HEAD` undoes it, as after git's own merges.
    repo.reference("ORIG_HEAD", ours.id(), true, "before a Skald merge")?;
    let commit: Oid = if fast_forward {
        let mut reference = repo.head()?;
        reference.set_target(theirs.id(), &message)?;
        theirs.id()
    } else {
        let who = signature(&repo)?;
        repo.commit(Some("HEAD"), &who, &who, &message, &tree, &[&ours, &theirs])?
    };
    let commit = commit.to_string();
    Ok(MergeOutcome {
        into,
        merged: if fast_forward {
            Merged::FastForward { commit }
        } else {
            Merged::Commit { commit }
        },
    })
}

#[cfg(test)]
#[path = "git_tests.rs"]
pub(crate) mod tests;
