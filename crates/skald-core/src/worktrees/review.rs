//! Reviewing a worktree and applying it (docs/worktrees.md, "Review and apply"): what its
//! agent changed since it started — the worktree's folder against the checkpoint taken
//! when it was made — file by file and hunk by hunk, and the chosen part brought into the
//! person's folder by a three-way merge with that folder as it is now. The apply is one
//! step through the checkpoint store (`Shadow::write_files`): a crash leaves the folder
//! wholly before or after, it is a checkpoint of the chat that can be undone, and a file
//! the person changes while it is worked out is never overwritten.

use skald_api::checkpoint::{ChangeStatus, CheckpointKind};
use skald_api::worktree::{ApplyReport, ConflictInfo, FileReview, HunkInfo, WorktreeInfo};
use skald_checkpoint::{FileWrite, Limits, Shadow};
use skald_store::{NewCheckpoint, Store};
use skald_worktree::review::{self, Merge};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The line of a worktree's own snapshots in its folder's shadow repository.
const LINE: &str = "worktree";

#[derive(Debug, thiserror::Error)]
pub enum ReviewError {
    #[error(transparent)]
    Checkpoint(#[from] skald_checkpoint::CheckpointError),
    #[error(transparent)]
    Store(#[from] skald_store::StoreError),
    #[error("{0}")]
    Invalid(String),
}

/// Where the shadow repositories are (the checkpoints'), and what a snapshot leaves out
/// besides what every walk does: Skald's data directory.
pub struct Place<'a> {
    pub data_dir: &'a crate::DataDir,
    pub limits: Limits,
}

impl Place<'_> {
    fn store(&self) -> PathBuf {
        self.data_dir.root().join("checkpoints")
    }

    fn excluded(&self) -> Vec<PathBuf> {
        vec![self.data_dir.root().to_path_buf()]
    }

    pub(super) fn open(&self, folder: &Path) -> Result<Shadow, ReviewError> {
        Ok(Shadow::open(&self.store(), folder)?)
    }
}

/// Records the worktree's folder as it starts: the checkpoint reviews compare with.
pub fn base(place: &Place<'_>, working_dir: &Path) -> Result<String, ReviewError> {
    let mut shadow = place.open(working_dir)?;
    let snap = shadow.snapshot(
        LINE,
        "the worktree as it started",
        &place.limits,
        &place.excluded(),
    )?;
    Ok(snap.commit)
}

/// The worktree's base, and its folder now.
pub(super) fn now(
    place: &Place<'_>,
    w: &WorktreeInfo,
) -> Result<(Shadow, String, String), ReviewError> {
    let base = w.base_snapshot.clone().ok_or_else(|| {
        ReviewError::Invalid(format!(
            "worktree {} has no record of how it started, so it cannot be reviewed",
            w.name
        ))
    })?;
    let folder = Path::new(&w.working_dir);
    if !folder.is_dir() {
        return Err(ReviewError::Invalid(format!(
            "worktree {}'s folder {} is gone",
            w.name, w.working_dir
        )));
    }
    let mut shadow = place.open(folder)?;
    let now = shadow
        .snapshot(
            LINE,
            "the worktree reviewed",
            &place.limits,
            &place.excluded(),
        )?
        .commit;
    Ok((shadow, base, now))
}

/// What the worktree's agent changed since it started, file by file and hunk by hunk, and
/// the checkpoint of the worktree reviewed (what `apply` is told, so it applies what was
/// seen or nothing).
pub fn review(
    place: &Place<'_>,
    w: &WorktreeInfo,
) -> Result<(Vec<FileReview>, String), ReviewError> {
    let (shadow, base, now) = now(place, w)?;
    let changes = shadow.changes(&base, &now)?;
    if changes.total > changes.files.len() {
        return Err(ReviewError::Invalid(format!(
            "{} files changed in worktree {}: more than a review lists ({}); discard it or \
             apply it with git",
            changes.total,
            w.name,
            changes.files.len()
        )));
    }
    let out = file_reviews(&shadow, &base, &now, changes)?;
    Ok((out, now))
}

/// The files of `changes` (from commit `from` to `to` of `shadow`) with their hunks.
pub(super) fn file_reviews(
    shadow: &Shadow,
    base: &str,
    now: &str,
    changes: skald_api::checkpoint::FileChanges,
) -> Result<Vec<FileReview>, ReviewError> {
    let mut out = Vec::with_capacity(changes.files.len());
    for f in changes.files {
        let old = shadow.read(base, &f.path)?.unwrap_or_default();
        let new = shadow.read(now, &f.path)?.unwrap_or_default();
        out.push(file_review(f.path, f.status, &old, &new));
    }
    Ok(out)
}

/// One file's review: its hunks from `old` to `new`, or none for a binary file.
pub(super) fn file_review(
    path: String,
    status: ChangeStatus,
    old: &[u8],
    new: &[u8],
) -> FileReview {
    let hunks = review::hunks(old, new);
    FileReview {
        binary: hunks.is_none(),
        hunks: hunks
            .unwrap_or_default()
            .into_iter()
            .enumerate()
            .map(|(index, h)| HunkInfo {
                index,
                old_start: h.old_start,
                new_start: h.new_start,
                removed: h.removed,
                added: h.added,
            })
            .collect(),
        path,
        status,
    }
}

/// Which of a worktree's changes to apply: every one, or per file the hunks chosen (a
/// file left out, or with none chosen, is not applied; an added, removed or binary file is
/// whole, so any hunk of it chosen takes it).
pub enum Choice {
    All,
    Files(BTreeMap<String, Hunks>),
}

/// A file's hunks chosen: all of them, or those numbered (as `review` numbers them).
pub enum Hunks {
    All,
    Only(Vec<usize>),
}

/// A file to bring over: its path, the worktree's base of it and the chosen new content
/// (`None`: no such file).
pub(super) type Theirs = (String, Option<Vec<u8>>, Option<Vec<u8>>);

/// Brings the chosen changes of worktree `w` into the person's folder (`w.source`), as
/// one step recorded as a checkpoint of the worktree's chat. When any file clashes,
/// nothing is written and the report lists the clashes.
pub fn apply(
    store: &Store,
    place: &Place<'_>,
    w: &WorktreeInfo,
    choice: &Choice,
    reviewed: Option<&str>,
) -> Result<ApplyReport, ReviewError> {
    let (wt, base, now) = now(place, w)?;
    // Hunks are numbered in the worktree as it was reviewed: if the agent changed it
    // since, the numbers (and "all of this file") would name other changes.
    if let Some(seen) = reviewed
        && seen != now
    {
        return Err(ReviewError::Invalid(format!(
            "worktree {} changed since it was reviewed; look at it again before applying",
            w.name
        )));
    }
    let changes = wt.changes(&base, &now)?;
    if let Choice::Files(map) = choice
        && let Some(unknown) = map
            .keys()
            .find(|p| !changes.files.iter().any(|f| &f.path == *p))
    {
        return Err(ReviewError::Invalid(format!(
            "{unknown} is not among the files worktree {} changed",
            w.name
        )));
    }
    // Per chosen file: its path, where it started, and what is brought over.
    let mut theirs: Vec<Theirs> = Vec::new();
    for f in &changes.files {
        let chosen: Option<&[usize]> = match choice {
            Choice::All => None,
            Choice::Files(map) => match map.get(&f.path) {
                Some(Hunks::All) => None,
                Some(Hunks::Only(h)) if !h.is_empty() => Some(h),
                _ => continue,
            },
        };
        let b = wt.read(&base, &f.path)?;
        let t = wt.read(&now, &f.path)?;
        let t = match (chosen, f.status, &b, &t) {
            (Some(chosen), ChangeStatus::Modified, Some(b), Some(t)) => {
                Some(review::with_hunks(b, t, chosen))
            }
            _ => t,
        };
        theirs.push((f.path.clone(), b, t));
    }
    merge_into(
        store,
        place,
        Path::new(&w.source),
        w.session_id,
        theirs,
        &Step {
            before: "before applying a worktree",
            after: &format!("applied worktree {}", w.name),
            note: &format!("Applied from worktree {}", w.name),
        },
    )
}

/// How a step through the checkpoint store is named: its two snapshots, and its row.
pub(super) struct Step<'a> {
    pub before: &'a str,
    pub after: &'a str,
    pub note: &'a str,
}

/// Brings `theirs` (per file: the version it was made against, and the one wanted) into
/// `folder` by a three-way merge with the folder as it is now, as one step of chat
/// `session_id`'s checkpoints, undone as a restore. With any clash nothing is written and
/// the report lists them.
pub(super) fn merge_into(
    store: &Store,
    place: &Place<'_>,
    folder: &Path,
    session_id: Option<i64>,
    theirs: Vec<Theirs>,
    step: &Step<'_>,
) -> Result<ApplyReport, ReviewError> {
    let mut person = place.open(folder)?;
    let line = crate::checkpoints::line_of(session_id.unwrap_or(0));
    let before = person
        .snapshot(&line, step.before, &place.limits, &place.excluded())?
        .commit;
    let mut report = ApplyReport::default();
    let mut writes = Vec::new();
    for (path, b, t) in theirs {
        let o = person.read(&before, &path)?;
        // A file of the person's that checkpoints do not record (ignored, too large, in a
        // skipped folder) where this would write one: theirs, and nothing brings it back.
        if o.is_none() && t.is_some() && person.occupied(&path) {
            report.conflicts.push(ConflictInfo {
                path,
                markers: None,
            });
            continue;
        }
        match review::merge(b.as_deref(), o.as_deref(), t.as_deref()) {
            Merge::Write(content) => {
                writes.push(FileWrite {
                    path: path.clone(),
                    expected: o,
                    content,
                });
                report.written.push(path);
            }
            Merge::Unchanged => report.unchanged.push(path),
            Merge::Conflict { markers } => report.conflicts.push(ConflictInfo {
                path,
                markers: markers.map(|m| String::from_utf8_lossy(&m).into_owned()),
            }),
        }
    }
    if !report.conflicts.is_empty() {
        report.written.clear();
        return Ok(report);
    }
    if writes.is_empty() {
        return Ok(report);
    }
    let done = person.write_files(&line, step.after, &writes, &place.limits, &place.excluded())?;
    if let Some(session_id) = session_id {
        let folder = folder.display().to_string();
        let row = store.add_checkpoint(&NewCheckpoint {
            session_id,
            tool_call_id: None,
            // A step made for the person is a restore to a state made for it: undone
            // the same way.
            kind: CheckpointKind::Restore,
            folder: &folder,
            before: Some(&done.before.commit),
            after: Some(&done.after.commit),
            changes: &done.changes,
            note: step.note,
            restored_to: None,
        })?;
        report.checkpoint_id = Some(row.id);
    }
    Ok(report)
}
