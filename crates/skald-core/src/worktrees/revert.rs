//! The same hunk-by-hunk review for a chat that works in the person's own folder
//! (docs/worktrees.md, "A chat's own changes"): what the chat's own steps changed — each
//! file it touched, from before the chat's first change of it to after its last — file by
//! file and hunk by hunk, and any of those hunks taken back. Only files the chat's steps
//! changed are shown: what another chat or the person changed meanwhile in other files is
//! theirs, not the chat's to take back.
//!
//! Taking back is the apply of a worktree turned round: the chosen hunks undone in the
//! file as the chat left it, merged with the folder as it is now, written in one step
//! through the checkpoint store, and recorded as a checkpoint (so a revert is itself
//! undone like a restore).

use super::review::{Choice, Hunks, Place, ReviewError, Step, Theirs, file_review, merge_into};
use skald_api::checkpoint::{ChangeStatus, CheckpointInfo};
use skald_api::worktree::{ApplyReport, FileReview};
use skald_store::Store;
use skald_worktree::review;
use std::collections::BTreeMap;
use std::path::Path;

/// What a chat's steps changed in its folder: per file, the commit before the chat's
/// first change of it and the commit after its last; and the chat's latest commit, which
/// names the review.
struct Touched {
    folder: String,
    files: BTreeMap<String, (String, String)>,
    latest: String,
}

fn touched(store: &Store, session_id: i64) -> Result<Touched, ReviewError> {
    let rows: Vec<CheckpointInfo> = store.checkpoints(session_id)?;
    let Some((folder, latest)) = rows
        .iter()
        .rev()
        .find_map(|r| r.after.clone().map(|a| (r.folder.clone(), a)))
    else {
        return Err(ReviewError::Invalid(format!(
            "chat {session_id} has changed no file (or its changes were not recorded)"
        )));
    };
    let mut files: BTreeMap<String, (String, String)> = BTreeMap::new();
    for r in rows.iter().filter(|r| r.folder == folder) {
        let (Some(before), Some(after)) = (&r.before, &r.after) else {
            continue;
        };
        if r.changes.total > r.changes.files.len() {
            return Err(ReviewError::Invalid(format!(
                "one step of chat {session_id} changed {} files: more than a review lists; \
                 restore a checkpoint instead",
                r.changes.total
            )));
        }
        for f in &r.changes.files {
            files
                .entry(f.path.clone())
                .and_modify(|(_, last)| last.clone_from(after))
                .or_insert_with(|| (before.clone(), after.clone()));
        }
    }
    Ok(Touched {
        folder,
        files,
        latest,
    })
}

fn status(before: &Option<Vec<u8>>, after: &Option<Vec<u8>>) -> ChangeStatus {
    match (before, after) {
        (None, _) => ChangeStatus::Added,
        (_, None) => ChangeStatus::Deleted,
        _ => ChangeStatus::Modified,
    }
}

/// What chat `session_id` changed, file by file and hunk by hunk, and the checkpoint it is
/// as of (what `revert` is told, so it takes back what was seen or nothing).
pub fn chat_changes(
    store: &Store,
    place: &Place<'_>,
    session_id: i64,
) -> Result<(Vec<FileReview>, String), ReviewError> {
    let t = touched(store, session_id)?;
    let shadow = place.open(Path::new(&t.folder))?;
    let mut out = Vec::new();
    for (path, (before_at, after_at)) in &t.files {
        let before = shadow.read(before_at, path)?;
        let after = shadow.read(after_at, path)?;
        // Changed and changed back.
        if before == after {
            continue;
        }
        out.push(file_review(
            path.clone(),
            status(&before, &after),
            before.as_deref().unwrap_or_default(),
            after.as_deref().unwrap_or_default(),
        ));
    }
    Ok((out, t.latest))
}

/// Takes back the chosen hunks of what chat `session_id` changed (`Choice::All`: all of
/// it), merged with what changed in the folder since; with any clash nothing is written.
pub fn revert(
    store: &Store,
    place: &Place<'_>,
    session_id: i64,
    choice: &Choice,
    reviewed: Option<&str>,
) -> Result<ApplyReport, ReviewError> {
    let t = touched(store, session_id)?;
    // Hunk numbers name the changes as they were reviewed; a chat that changed more since
    // has other hunks.
    if let Some(seen) = reviewed
        && seen != t.latest
    {
        return Err(ReviewError::Invalid(format!(
            "chat {session_id} changed files since its changes were reviewed; look at them \
             again before taking any back"
        )));
    }
    if let Choice::Files(map) = choice
        && let Some(unknown) = map.keys().find(|p| !t.files.contains_key(*p))
    {
        return Err(ReviewError::Invalid(format!(
            "{unknown} is not among the files chat {session_id} changed"
        )));
    }
    let shadow = place.open(Path::new(&t.folder))?;
    let mut theirs: Vec<Theirs> = Vec::new();
    for (path, (before_at, after_at)) in &t.files {
        let chosen: Option<&[usize]> = match choice {
            Choice::All => None,
            Choice::Files(map) => match map.get(path) {
                Some(Hunks::All) => None,
                Some(Hunks::Only(h)) if !h.is_empty() => Some(h),
                _ => continue,
            },
        };
        let before = shadow.read(before_at, path)?;
        let after = shadow.read(after_at, path)?;
        if before == after {
            continue;
        }
        // The file as the chat left it with the chosen hunks undone: the hunks not chosen
        // applied to how it was before.
        let wanted = match (chosen, status(&before, &after), &before, &after) {
            (Some(chosen), ChangeStatus::Modified, Some(b), Some(a)) => {
                let all = review::hunks(b, a).map_or(0, |h| h.len());
                let kept: Vec<usize> = (0..all).filter(|i| !chosen.contains(i)).collect();
                Some(review::with_hunks(b, a, &kept))
            }
            _ => before,
        };
        theirs.push((path.clone(), after, wanted));
    }
    // One holder of a folder's shadow at a time: the merge opens it again.
    drop(shadow);
    let note = match choice {
        Choice::All => "Took back the chat's changes".to_string(),
        Choice::Files(map) => format!(
            "Took back changes of {}",
            map.keys().cloned().collect::<Vec<_>>().join(", ")
        ),
    };
    merge_into(
        store,
        place,
        Path::new(&t.folder),
        Some(session_id),
        theirs,
        &Step {
            before: "before taking back a chat's changes",
            after: "took back a chat's changes",
            note: &note,
        },
    )
}
