//! The same hunk-by-hunk review for a chat that works in the person's own folder
//! (docs/worktrees.md, "A chat's own changes"): what the chat changed — from before its
//! first checkpoint to after its last — file by file and hunk by hunk, and any of those
//! hunks taken back. Taking back is the apply of a worktree turned round: the chosen hunks
//! undone in the file as the chat left it, merged with the folder as it is now, written in
//! one step through the checkpoint store, and recorded as a checkpoint (so a revert is
//! itself undone like a restore).

use super::review::{Choice, Hunks, Place, ReviewError, Step, Theirs, file_reviews, merge_into};
use skald_api::checkpoint::{ChangeStatus, CheckpointInfo};
use skald_api::worktree::{ApplyReport, FileReview};
use skald_store::Store;
use skald_worktree::review;
use std::path::Path;

/// The span of a chat's changes: its folder, the commit before its first change there and
/// the commit after its last.
struct Span {
    folder: String,
    from: String,
    to: String,
}

fn span(store: &Store, session_id: i64) -> Result<Span, ReviewError> {
    let rows: Vec<CheckpointInfo> = store.checkpoints(session_id)?;
    let Some((folder, to)) = rows
        .iter()
        .rev()
        .find_map(|r| r.after.clone().map(|a| (r.folder.clone(), a)))
    else {
        return Err(ReviewError::Invalid(format!(
            "chat {session_id} has changed no file (or its changes were not recorded)"
        )));
    };
    let from = rows
        .iter()
        .filter(|r| r.folder == folder)
        .find_map(|r| r.before.clone())
        .ok_or_else(|| {
            ReviewError::Invalid(format!("chat {session_id}'s first change was not recorded"))
        })?;
    Ok(Span { folder, from, to })
}

/// What chat `session_id` changed, file by file and hunk by hunk, and the checkpoint it is
/// as of (what `revert` is told, so it takes back what was seen or nothing).
pub fn chat_changes(
    store: &Store,
    place: &Place<'_>,
    session_id: i64,
) -> Result<(Vec<FileReview>, String), ReviewError> {
    let s = span(store, session_id)?;
    let shadow = place.open(Path::new(&s.folder))?;
    let changes = shadow.changes(&s.from, &s.to)?;
    if changes.total > changes.files.len() {
        return Err(ReviewError::Invalid(format!(
            "chat {session_id} changed {} files: more than a review lists ({}); restore a \
             checkpoint instead",
            changes.total,
            changes.files.len()
        )));
    }
    let files = file_reviews(&shadow, &s.from, &s.to, changes)?;
    Ok((files, s.to))
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
    let s = span(store, session_id)?;
    // Hunk numbers name the changes as they were reviewed; a chat that changed more since
    // has other hunks.
    if let Some(seen) = reviewed
        && seen != s.to
    {
        return Err(ReviewError::Invalid(format!(
            "chat {session_id} changed files since its changes were reviewed; look at them \
             again before taking any back"
        )));
    }
    let shadow = place.open(Path::new(&s.folder))?;
    let changes = shadow.changes(&s.from, &s.to)?;
    if let Choice::Files(map) = choice
        && let Some(unknown) = map
            .keys()
            .find(|p| !changes.files.iter().any(|f| &f.path == *p))
    {
        return Err(ReviewError::Invalid(format!(
            "{unknown} is not among the files chat {session_id} changed"
        )));
    }
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
        let before = shadow.read(&s.from, &f.path)?;
        let after = shadow.read(&s.to, &f.path)?;
        // The file as the chat left it with the chosen hunks undone: the hunks not chosen
        // applied to how it was before.
        let wanted = match (chosen, f.status, &before, &after) {
            (Some(chosen), ChangeStatus::Modified, Some(b), Some(a)) => {
                let all = review::hunks(b, a).map_or(0, |h| h.len());
                let kept: Vec<usize> = (0..all).filter(|i| !chosen.contains(i)).collect();
                Some(review::with_hunks(b, a, &kept))
            }
            _ => before,
        };
        theirs.push((f.path.clone(), after, wanted));
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
        Path::new(&s.folder),
        Some(session_id),
        theirs,
        &Step {
            before: "before taking back a chat's changes",
            after: "took back a chat's changes",
            note: &note,
        },
    )
}
