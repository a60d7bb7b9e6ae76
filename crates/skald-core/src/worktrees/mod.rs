//! Chats that work in a worktree of their own (docs/worktrees.md): made beside the data
//! directory, recorded in the store with the chat, discarded on request. The run context
//! of such a chat keeps the folder it copies out of its writes
//! (`RunContext::worktree_source`).

pub mod revert;
pub mod review;

use crate::approval::RunContext;
use skald_api::worktree::{MergeOutcome, MergeReport, WorktreeInfo, WorktreeKind};
use skald_store::{NewWorktree, Store, StoreError};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum WorktreesError {
    #[error(transparent)]
    Worktree(#[from] skald_worktree::WorktreeError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("there is a worktree named {0} already; discard it or choose another name")]
    Taken(String),
    #[error("the worktree cannot be recorded for review: {0}")]
    Review(#[from] review::ReviewError),
}

/// A worktree made for a new chat, with the checkpoint of how it started.
pub struct Made {
    pub worktree: skald_worktree::Worktree,
    pub base_snapshot: String,
}

/// Makes a worktree of `source` (canonical) for a new chat of permission group `group`:
/// named `name`, or after the folder with the first free number. What the chat could not
/// read is not copied (Skald's data directory, the credential folders, the group's deny
/// rules).
pub fn make(
    store: &Store,
    data_dir: &crate::DataDir,
    source: &Path,
    name: Option<&str>,
    group: &str,
    limits: skald_checkpoint::Limits,
) -> Result<Made, WorktreesError> {
    let dir = data_dir.worktrees_dir();
    let name = match name {
        Some(n) => {
            skald_worktree::check_name(n)?;
            if store.find_worktree(n)?.is_some() {
                return Err(WorktreesError::Taken(n.to_string()));
            }
            n.to_string()
        }
        None => free_name(store, &dir, source)?,
    };
    let reader = RunContext {
        group: group.to_string(),
        working_dir: source.to_path_buf(),
        protected: vec![data_dir.root().join("secrets")],
        hidden_from_commands: vec![data_dir.root().to_path_buf()],
        ..RunContext::default()
    };
    // Compared with canonical paths by the copy and by `create`'s look at what a
    // repository tracks: a data directory reached through a link must match too.
    let mut excluded: Vec<PathBuf> =
        crate::approval::denied_paths(store, &reader, skald_api::tool_names::READ_FILE)
            .into_iter()
            .chain([data_dir.root().to_path_buf()])
            .map(|p| std::fs::canonicalize(&p).unwrap_or(p))
            .collect();
    // A folder the chat may not read at all gets no copy it could read.
    if let Some(denied) = excluded.iter().find(|e| source.starts_with(e)) {
        return Err(skald_worktree::WorktreeError::Io(format!(
            "{} is inside {}, which agents may not read: it gets no worktree",
            source.display(),
            denied.display()
        ))
        .into());
    }
    // The copies may hold what the person's folder does: theirs alone to read.
    std::fs::create_dir_all(&dir).map_err(|e| {
        skald_worktree::WorktreeError::Io(format!("cannot make {}: {e}", dir.display()))
    })?;
    crate::paths::keep_private(&dir);
    // Stored as it resolves (a data directory reached through a link): a chat never
    // follows a folder whose path leads elsewhere.
    let dir = std::fs::canonicalize(&dir).map_err(|e| {
        skald_worktree::WorktreeError::Io(format!("cannot resolve {}: {e}", dir.display()))
    })?;
    // The worktrees themselves, when the folder holds them (the home folder): never
    // copied into a worktree.
    excluded.push(dir.clone());
    let worktree = skald_worktree::create(source, &dir.join(&name), &name, &excluded)?;
    // How it starts, for reviews; a worktree that cannot be reviewed is not kept.
    let place = review::Place { data_dir, limits };
    match review::base(&place, &worktree.working_dir) {
        Ok(base_snapshot) => Ok(Made {
            worktree,
            base_snapshot,
        }),
        Err(e) => {
            let _ = skald_worktree::discard(&worktree);
            Err(e.into())
        }
    }
}

/// The folder's name made fit for a worktree's, with the first number no worktree and no
/// folder has: `paper-1`, `paper-2`, …
fn free_name(store: &Store, dir: &Path, source: &Path) -> Result<String, WorktreesError> {
    let base: String = source
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .take(40)
        .collect();
    let base = base.trim_matches('-');
    let base = if base.is_empty() { "work" } else { base };
    let mut n = 1u32;
    loop {
        let name = format!("{base}-{n}");
        if skald_worktree::check_name(&name).is_ok()
            && store.find_worktree(&name)?.is_none()
            && !dir.join(&name).exists()
        {
            return Ok(name);
        }
        n += 1;
    }
}

/// Records `made` as the worktree of chat `session_id`.
pub fn record(store: &Store, made: &Made, session_id: i64) -> Result<WorktreeInfo, StoreError> {
    let w = &made.worktree;
    let s = |p: &Path| p.display().to_string();
    let (kind, repo, branch, base) = match &w.kind {
        skald_worktree::Kind::Git { repo, branch, base } => (
            WorktreeKind::Git,
            Some(s(repo)),
            Some(branch.clone()),
            Some(base.clone()),
        ),
        skald_worktree::Kind::Copy => (WorktreeKind::Copy, None, None, None),
    };
    store.add_worktree(&NewWorktree {
        name: &w.name,
        session_id: Some(session_id),
        source: &s(&w.source),
        root: &s(&w.root),
        working_dir: &s(&w.working_dir),
        kind,
        repo: repo.as_deref(),
        branch: branch.as_deref(),
        base_commit: base.as_deref(),
        base_snapshot: Some(&made.base_snapshot),
    })
}

/// Removes a worktree's folder (and its branch and entry in a repository) and marks it
/// discarded.
pub fn discard(store: &Store, info: &WorktreeInfo) -> Result<(), WorktreesError> {
    skald_worktree::discard(&as_worktree(info))?;
    store.discard_worktree(info.id)?;
    Ok(())
}

/// Folders in the worktrees' place that no worktree row names: made by a run that stopped
/// (a kill, a crash) before its chat was recorded. They are listed, and discarded by name.
pub fn unrecorded(store: &Store, data_dir: &crate::DataDir) -> Result<Vec<PathBuf>, StoreError> {
    let Ok(dir) = std::fs::canonicalize(data_dir.worktrees_dir()) else {
        return Ok(Vec::new());
    };
    let known: Vec<PathBuf> = store
        .list_worktrees()?
        .into_iter()
        .map(|w| PathBuf::from(w.root))
        .collect();
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(Vec::new());
    };
    let mut out: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .filter(|p| !known.contains(p))
        .collect();
    out.sort();
    Ok(out)
}

/// Removes an unrecorded worktree's folder by its name (see `unrecorded`). Its branch,
/// if it was a git worktree, stays in its repository (`git branch -D skald/NAME`).
pub fn discard_unrecorded(
    store: &Store,
    data_dir: &crate::DataDir,
    name: &str,
) -> Result<Option<PathBuf>, WorktreesError> {
    skald_worktree::check_name(name)?;
    let Some(folder) = unrecorded(store, data_dir)?
        .into_iter()
        .find(|p| p.file_name().is_some_and(|n| n == name))
    else {
        return Ok(None);
    };
    // Never follows a link out of the folder.
    std::fs::remove_dir_all(&folder).map_err(|e| {
        skald_worktree::WorktreeError::Io(format!("cannot remove {}: {e}", folder.display()))
    })?;
    Ok(Some(folder))
}

/// A stored worktree as `skald_worktree` takes it.
/// The space `root` takes on disk: every file's allocated blocks, links not followed.
/// What cannot be read counts for nothing.
pub fn disk_use(root: &Path) -> u64 {
    let mut total = 0u64;
    let mut folders = vec![root.to_path_buf()];
    while let Some(dir) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(meta) = entry.metadata() else { continue };
            total += allocated(&meta);
            if meta.is_dir() {
                folders.push(entry.path());
            }
        }
    }
    total
}

#[cfg(unix)]
fn allocated(meta: &std::fs::Metadata) -> u64 {
    use std::os::unix::fs::MetadataExt;
    meta.blocks() * 512
}

#[cfg(not(unix))]
fn allocated(meta: &std::fs::Metadata) -> u64 {
    meta.len()
}

/// Every chat that works in worktree `w`: its own, and any other whose folder is inside it
/// (a fork, a task or a scheduled run given its folder).
pub fn sessions_working_in(store: &Store, w: &WorktreeInfo) -> Result<Vec<i64>, StoreError> {
    let mut ids = store.sessions_in_folder(&w.root)?;
    if let Some(id) = w.session_id
        && !ids.contains(&id)
    {
        ids.push(id);
    }
    Ok(ids)
}

/// Whether a live process holds chat `session_id` (runs its turn), this one or another.
pub fn held_live(store: &Store, session_id: i64) -> bool {
    store
        .session_holder(session_id)
        .ok()
        .flatten()
        .is_some_and(|h| !crate::session::lease::owner_is_dead(&h.owner))
}

/// Whether any chat works in worktree `w` in a live process now.
pub fn in_use(store: &Store, w: &WorktreeInfo) -> Result<bool, StoreError> {
    Ok(sessions_working_in(store, w)?
        .into_iter()
        .any(|id| held_live(store, id)))
}

/// The worktrees not discarded, newest first, each with when it was last used (the latest
/// activity of any chat working in it, or when it was made) and its disk use.
pub fn described(store: &Store) -> Result<Vec<WorktreeInfo>, StoreError> {
    let mut all = store.list_worktrees()?;
    for w in &mut all {
        let mut last = w.created_at;
        for id in sessions_working_in(store, w)? {
            if let Some(t) = store.agent_activity(id)? {
                last = last.max(t);
            }
        }
        w.last_used_at = Some(last);
        w.in_use = in_use(store, w)?;
        w.disk_bytes = Some(disk_use(Path::new(&w.root)));
    }
    Ok(all)
}

/// Of `described` worktrees, those unused for `days` days or more at `now` (Unix ms) in
/// which no chat works in a live process: what the app offers to clean up. None when
/// `days` is 0.
pub fn old(store: &Store, all: Vec<WorktreeInfo>, days: u32, now: i64) -> Vec<WorktreeInfo> {
    if days == 0 {
        return Vec::new();
    }
    let since = now.saturating_sub(i64::from(days) * 24 * 3600 * 1000);
    all.into_iter()
        .filter(|w| w.last_used_at.unwrap_or(w.created_at) < since)
        .filter(|w| !w.in_use && !in_use(store, w).unwrap_or(true))
        .collect()
}

/// Commits what the agent changed in git worktree `info`, as reviewed — the files and
/// contents of the review's snapshot `reviewed`, or of one taken now — on its branch; the
/// commit. Refused when the worktree changed since `reviewed`.
pub fn commit(
    place: &review::Place<'_>,
    info: &WorktreeInfo,
    message: &str,
    reviewed: Option<&str>,
) -> Result<String, WorktreesError> {
    let (shadow, base, now) = review::now(place, info)?;
    if let Some(seen) = reviewed
        && seen != now
    {
        return Err(review::ReviewError::Invalid(format!(
            "worktree {} changed since it was reviewed; look at it again before committing",
            info.name
        ))
        .into());
    }
    let changes = shadow
        .changes(&base, &now)
        .map_err(review::ReviewError::from)?;
    if changes.total > changes.files.len() {
        return Err(review::ReviewError::Invalid(format!(
            "{} files changed in worktree {}: more than a review lists; commit it with git",
            changes.total, info.name
        ))
        .into());
    }
    let inside = in_repository(info);
    let mut files = Vec::with_capacity(changes.files.len());
    for f in &changes.files {
        files.push(skald_worktree::git::CommitFile {
            path: repo_path(&inside, &f.path),
            content: shadow
                .file(&now, &f.path)
                .map_err(review::ReviewError::from)?,
        });
    }
    Ok(skald_worktree::git::commit(
        &as_worktree(info),
        message,
        &files,
    )?)
}

/// Merges git worktree `info`'s branch into the branch checked out in the person's
/// repository; a clash writes nothing. Refused while the worktree holds changes a review
/// shows that its branch does not have (they would be left behind).
pub fn merge(
    place: &review::Place<'_>,
    info: &WorktreeInfo,
) -> Result<MergeReport, WorktreesError> {
    use skald_worktree::git::Merged;
    let w = as_worktree(info);
    let (shadow, base, now) = review::now(place, info)?;
    let changes = shadow
        .changes(&base, &now)
        .map_err(review::ReviewError::from)?;
    if changes.total > changes.files.len() {
        return Err(review::ReviewError::Invalid(format!(
            "{} files changed in worktree {}: more than a review lists; merge it with git",
            changes.total, info.name
        ))
        .into());
    }
    let inside = in_repository(info);
    // Both ways: the branch brings in nothing a review does not show (a branch moved by
    // something else, an earlier commit of files since removed from the worktree) …
    let reviewed: std::collections::HashSet<String> = changes
        .files
        .iter()
        .map(|f| repo_path(&inside, &f.path))
        .collect();
    if let Some(unseen) = skald_worktree::git::branch_changes(&w)?
        .into_iter()
        .find(|p| !reviewed.contains(p))
    {
        return Err(review::ReviewError::Invalid(format!(
            "{} changes {unseen}, which no review of worktree {} shows; merge it with git \
             if you mean to",
            info.branch.as_deref().unwrap_or("its branch"),
            info.name
        ))
        .into());
    }
    // … and has every change a review shows.
    for f in &changes.files {
        let wanted = shadow
            .read(&now, &f.path)
            .map_err(review::ReviewError::from)?;
        if skald_worktree::git::branch_file(&w, &repo_path(&inside, &f.path))? != wanted {
            return Err(review::ReviewError::Invalid(format!(
                "worktree {} has changes not committed on {} ({} and maybe more): commit \
                 them first, or apply them instead",
                info.name,
                info.branch.as_deref().unwrap_or("its branch"),
                f.path
            ))
            .into());
        }
    }
    let out = skald_worktree::git::merge(&w)?;
    let (outcome, commit, conflicts) = match out.merged {
        Merged::UpToDate => (MergeOutcome::UpToDate, None, Vec::new()),
        Merged::FastForward { commit } => (MergeOutcome::FastForward, Some(commit), Vec::new()),
        Merged::Commit { commit } => (MergeOutcome::MergeCommit, Some(commit), Vec::new()),
        Merged::Conflicts { paths } => (MergeOutcome::Conflicts, None, paths),
    };
    Ok(MergeReport {
        into: out.into,
        outcome,
        commit,
        conflicts,
    })
}

/// Where in its repository a worktree's agent works (`""`: at the top), `/`-separated.
fn in_repository(info: &WorktreeInfo) -> String {
    Path::new(&info.working_dir)
        .strip_prefix(&info.root)
        .map(|p| p.to_string_lossy().replace('\\', "/"))
        .unwrap_or_default()
}

/// A review's path (relative to where the agent works) as a path in the repository.
fn repo_path(inside: &str, path: &str) -> String {
    if inside.is_empty() {
        path.to_string()
    } else {
        format!("{inside}/{path}")
    }
}

pub fn as_worktree(info: &WorktreeInfo) -> skald_worktree::Worktree {
    let p = |s: &str| PathBuf::from(s);
    skald_worktree::Worktree {
        name: info.name.clone(),
        source: p(&info.source),
        root: p(&info.root),
        working_dir: p(&info.working_dir),
        kind: match (info.kind, &info.repo, &info.branch, &info.base_commit) {
            (WorktreeKind::Git, Some(repo), Some(branch), Some(base)) => {
                skald_worktree::Kind::Git {
                    repo: p(repo),
                    branch: branch.clone(),
                    base: base.clone(),
                }
            }
            _ => skald_worktree::Kind::Copy,
        },
    }
}
