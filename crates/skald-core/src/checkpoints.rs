//! Checkpoints in the engine (docs/checkpoints.md): the chat's folder is recorded before
//! and after every call of a tool that can change files, on the line of the call's own
//! session; a call that changed something gets a row (and a `checkpoint` event) naming
//! both points, so the chat can show the diff and restore to before it. A restore is
//! recorded the same way, so it can be undone.
//!
//! A checkpoint never blocks the call: one that fails or takes too long is skipped with a
//! note, and a folder over the limits is not walked again for a while.

use crate::approval::RunContext;
use skald_api::board::ChangeTally;
use skald_api::checkpoint::{CheckpointInfo, CheckpointKind, FileChanges};
use skald_base::lock;
use skald_checkpoint::{CheckpointError, Limits, Live, Shadow, Snapshot};
use skald_store::{NewCheckpoint, Store};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Tallies kept for the board; past it they are forgotten and counted again.
const TALLIES_KEPT: usize = 1024;
/// A checkpoint that takes longer is given up on; the call goes ahead without it.
const SNAPSHOT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a folder found too large is left alone before it is walked again.
const TOO_LARGE_FOR: Duration = Duration::from_secs(300);
/// The most of a diff the chat is sent at once.
pub const MAX_PATCH_BYTES: usize = 512 * 1024;
/// Folders whose state is kept between calls (each watched folder holds an inotify
/// instance, of which a user has 128 by default, shared with every program).
const LIVE_FOLDERS: usize = 8;

pub use crate::config::CheckpointSettings;

/// The engine's checkpointing: settings, and what it remembers between calls.
#[derive(Debug, Default)]
pub struct Checkpoints {
    pub settings: CheckpointSettings,
    /// Folders found too large, with when and why.
    too_large: Mutex<HashMap<PathBuf, (Instant, String)>>,
    /// Sessions already told that their folder is too large.
    told: Mutex<HashSet<(i64, PathBuf)>>,
    /// What each recently checkpointed folder's snapshots keep between calls (its
    /// watch), with when it was last used.
    live: Mutex<HashMap<PathBuf, (Instant, SharedLive)>>,
    /// What changed between two checkpoints of a folder, added up, as the board asked
    /// before (commits never change, so neither does their tally).
    tallies: Mutex<HashMap<(PathBuf, String, String), ChangeTally>>,
}

/// One folder's snapshot state, used by one snapshot at a time.
type SharedLive = Arc<Mutex<Live>>;

/// Where the shadow repositories are, when checkpoints are on.
fn store_dir(settings: &CheckpointSettings) -> Option<PathBuf> {
    settings.data_dir.as_ref().map(|d| d.join("checkpoints"))
}

/// A checkpoint taken before a call, to be finished after it.
pub struct Before {
    folder: PathBuf,
    excluded: Vec<PathBuf>,
    taken: Result<Snapshot, String>,
}

/// The line of a session in its folder's shadow repository.
pub fn line_of(session_id: i64) -> String {
    format!("session-{session_id}")
}

/// What a checkpoint leaves out besides what every walk does: what the agent may not read
/// (Skald's secrets, credential folders, the user's deny rules) and Skald's data directory.
pub fn excluded(store: &Store, run: &RunContext) -> Vec<PathBuf> {
    let mut out = crate::approval::denied_paths(store, run, skald_api::tool_names::READ_FILE);
    out.extend(run.hidden_from_commands.iter().cloned());
    out
}

impl Checkpoints {
    pub fn new(settings: CheckpointSettings) -> Checkpoints {
        Checkpoints {
            settings,
            ..Checkpoints::default()
        }
    }

    pub fn enabled(&self) -> bool {
        self.settings.data_dir.is_some()
    }

    /// The state of `folder`'s snapshots in this process; the least recently used
    /// folder's is let go when there are too many.
    fn live(&self, folder: &Path) -> SharedLive {
        let mut all = lock(&self.live);
        if !all.contains_key(folder) && all.len() >= LIVE_FOLDERS {
            let oldest = all
                .iter()
                .min_by_key(|(_, (used, _))| *used)
                .map(|(f, _)| f.clone());
            if let Some(f) = oldest {
                all.remove(&f);
            }
        }
        let watch = self.settings.watch;
        let entry = all
            .entry(folder.to_path_buf())
            .or_insert_with(|| (Instant::now(), Arc::new(Mutex::new(Live::new(watch)))));
        entry.0 = Instant::now();
        entry.1.clone()
    }

    /// Records `folder` before a call in `session_id`. None when checkpoints are off or
    /// the folder is known to be too large (and the session has been told).
    pub async fn before(&self, store: &Store, session_id: i64, run: &RunContext) -> Option<Before> {
        let dir = store_dir(&self.settings)?;
        let folder = run.working_dir.clone();
        if folder.as_os_str().is_empty() {
            return None;
        }
        if let Some(why) = self.known_too_large(&folder) {
            return self.tell_once(session_id, &folder, why);
        }
        let excluded = excluded(store, run);
        let taken = snapshot(
            self.live(&folder),
            dir,
            folder.clone(),
            line_of(session_id),
            "before a tool call".to_string(),
            self.settings.limits,
            excluded.clone(),
        )
        .await;
        if let Err(Failure::TooLarge(why)) = &taken {
            lock(&self.too_large).insert(folder.clone(), (Instant::now(), why.clone()));
            return self.tell_once(session_id, &folder, why.clone());
        }
        Some(Before {
            folder,
            excluded,
            taken: taken.map_err(|f| f.to_string()),
        })
    }

    /// Records the folder after the call `call_id` and, when it changed or could not be
    /// recorded, stores the row the chat shows.
    pub async fn after(
        &self,
        store: &Store,
        session_id: i64,
        call_id: &str,
        before: Before,
    ) -> Option<CheckpointInfo> {
        let dir = store_dir(&self.settings)?;
        let folder_text = before.folder.to_string_lossy().into_owned();
        // A call whose change is not known: a row with only the note (and the point before,
        // when there is one).
        let noted = |point: Option<&str>, note: String| {
            self.record(
                store,
                NewCheckpoint {
                    session_id,
                    tool_call_id: Some(call_id),
                    kind: CheckpointKind::Call,
                    folder: &folder_text,
                    before: point,
                    after: None,
                    changes: &FileChanges::default(),
                    note: &note,
                    restored_to: None,
                },
            )
        };
        let first = match before.taken {
            Ok(s) => s,
            // The reason was found before the call; there is no point to restore to.
            Err(note) if note.is_empty() => return None,
            Err(note) => {
                return noted(
                    None,
                    format!("No checkpoint was taken before this call: {note}"),
                );
            }
        };
        let line = line_of(session_id);
        let limits = self.settings.limits;
        let second = snapshot(
            self.live(&before.folder),
            dir.clone(),
            before.folder.clone(),
            line,
            format!("after tool call {call_id}"),
            limits,
            before.excluded,
        )
        .await;
        let second = match second {
            Ok(s) => s,
            Err(f) => {
                return noted(
                    Some(&first.commit),
                    format!("The folder could not be recorded after this call: {f}"),
                );
            }
        };
        if second.commit == first.commit {
            return None;
        }
        let (from, to) = (first.commit.clone(), second.commit.clone());
        let folder = before.folder.clone();
        let changes = blocking(move || {
            let shadow = Shadow::open(&dir, &folder)?;
            shadow.changes(&from, &to)
        })
        .await
        .unwrap_or_default();
        if changes.is_empty() {
            return None;
        }
        self.record(
            store,
            NewCheckpoint {
                session_id,
                tool_call_id: Some(call_id),
                kind: CheckpointKind::Call,
                folder: &folder_text,
                before: Some(&first.commit),
                after: Some(&second.commit),
                changes: &changes,
                note: &second.note(&limits),
                restored_to: None,
            },
        )
    }

    fn record(&self, store: &Store, row: NewCheckpoint<'_>) -> Option<CheckpointInfo> {
        match store.add_checkpoint(&row) {
            Ok(info) => Some(info),
            Err(e) => {
                tracing::warn!(error = %e, "could not store a checkpoint");
                None
            }
        }
    }

    fn known_too_large(&self, folder: &Path) -> Option<String> {
        let mut known = lock(&self.too_large);
        match known.get(folder) {
            Some((at, why)) if at.elapsed() < TOO_LARGE_FOR => Some(why.clone()),
            Some(_) => {
                known.remove(folder);
                None
            }
            None => None,
        }
    }

    /// The first call of a session in a folder too large gets a note; later calls none.
    fn tell_once(&self, session_id: i64, folder: &Path, why: String) -> Option<Before> {
        let first = lock(&self.told).insert((session_id, folder.to_path_buf()));
        Some(Before {
            folder: folder.to_path_buf(),
            excluded: Vec::new(),
            taken: Err(if first {
                format!("{why}. Changes in this folder cannot be undone from Skald.")
            } else {
                String::new()
            }),
        })
    }

    /// Brings a chat's folder back to before checkpoint `id`, as `restore` does, and with
    /// `rewind` also the conversation: a new chat holds the messages before the call (the
    /// original keeps every message, those after it included). Returns the restore's row
    /// and the new chat, or why the chat could not be rewound although the folder was
    /// restored.
    pub async fn restore_and_rewind(
        &self,
        store: &Store,
        id: i64,
        rewind: bool,
    ) -> Result<(CheckpointInfo, Result<Option<skald_store::Session>, String>), String> {
        let fork = if rewind {
            let row = store
                .checkpoint(id)
                .map_err(|e| e.to_string())?
                .ok_or_else(|| format!("there is no checkpoint {id}"))?;
            let call = row.tool_call_id.as_deref().ok_or(
                "a restore is undone by restoring; it has no point in the chat to go back to",
            )?;
            let message = store
                .list_tool_calls(row.session_id)
                .map_err(|e| e.to_string())?
                .into_iter()
                .find(|c| c.tool_call_id == call)
                .and_then(|c| c.message_id)
                .ok_or_else(|| format!("the call of checkpoint {id} is no longer in its chat"))?;
            Some((row.session_id, message))
        } else {
            None
        };
        let done = self.restore(store, id).await?;
        let fork = match fork {
            Some((session, message)) => {
                let title = store
                    .get_session(session)
                    .map(|s| s.title)
                    .unwrap_or_default();
                let title = if title.trim().is_empty() {
                    "Rewound chat".to_string()
                } else {
                    format!("{title} (rewound)")
                };
                store
                    .fork_session(session, message, &title)
                    .map(Some)
                    .map_err(|e| {
                        format!("the folder is restored, but the chat could not be rewound: {e}")
                    })
            }
            None => Ok(None),
        };
        Ok((done, fork))
    }

    /// Brings a chat's folder back to before checkpoint `id` and records that as a
    /// restore (which can itself be restored, undoing it).
    pub async fn restore(&self, store: &Store, id: i64) -> Result<CheckpointInfo, String> {
        let dir = store_dir(&self.settings)
            .ok_or("checkpoints are turned off ([checkpoints] enabled = false)")?;
        let row = store
            .checkpoint(id)
            .map_err(|e| e.to_string())?
            .ok_or_else(|| format!("there is no checkpoint {id}"))?;
        let target = row.before.clone().ok_or_else(|| {
            format!(
                "checkpoint {id} has no recorded state to go back to: {}",
                row.note
            )
        })?;
        let folder = PathBuf::from(&row.folder);
        let line = line_of(row.session_id);
        let limits = self.settings.limits;
        let excluded = self.restore_exclusions(store, row.session_id, &folder);
        let done = blocking(move || {
            let mut shadow = Shadow::open(&dir, &folder)?;
            shadow.restore(&line, &target, &limits, &excluded)
        })
        .await
        .map_err(|e| e.to_string())?;
        let note = if done.conflicts.is_empty() {
            String::new()
        } else {
            format!("Not restored: {}", done.conflicts.join("; "))
        };
        store
            .add_checkpoint(&NewCheckpoint {
                session_id: row.session_id,
                tool_call_id: None,
                kind: CheckpointKind::Restore,
                folder: &row.folder,
                before: Some(&done.before.commit),
                after: Some(&done.after.commit),
                changes: &done.changes,
                note: &note,
                restored_to: Some(id),
            })
            .map_err(|e| e.to_string())
    }

    /// What a restore in chat `session_id`'s folder leaves out: what its calls'
    /// checkpoints left out (credential folders, its group's deny rules, Skald's data
    /// directory). Left out of the restore's own "before" too, a file the target never
    /// recorded for that reason is not taken for one the target lacks — and removed.
    fn restore_exclusions(&self, store: &Store, session_id: i64, folder: &Path) -> Vec<PathBuf> {
        let group = store
            .get_session(session_id)
            .ok()
            .and_then(|s| s.run_context_id)
            .and_then(|id| store.get_run_context(id).ok())
            .map_or_else(|| "default".to_string(), |r| r.permission_group);
        let run = RunContext {
            group,
            working_dir: folder.to_path_buf(),
            hidden_from_commands: self.settings.data_dir.iter().cloned().collect(),
            ..RunContext::default()
        };
        excluded(store, &run)
    }

    /// Opens the shadow repository of each folder a chat's checkpoints name, which
    /// finishes a restore a crash interrupted there. Returns what could not be opened.
    pub async fn recover(&self, rows: &[CheckpointInfo]) -> Vec<String> {
        let Some(dir) = store_dir(&self.settings) else {
            return Vec::new();
        };
        let folders: std::collections::BTreeSet<String> =
            rows.iter().map(|r| r.folder.clone()).collect();
        let mut problems = Vec::new();
        for folder in folders {
            let dir = dir.clone();
            let path = PathBuf::from(&folder);
            if !path.is_dir() {
                continue;
            }
            if let Err(e) = blocking(move || Shadow::open(&dir, &path).map(|_| ())).await {
                problems.push(format!("{folder}: {e}"));
            }
        }
        problems
    }

    /// What chat `session_id` changed, added up (the board's "files ±"): for a chat in a
    /// worktree, the worktree against how it started; otherwise from before its first
    /// checkpoint to after its last, in the folder of its last. Nothing when checkpoints
    /// are off or unreadable: the board is a view, never a reason to fail.
    pub async fn tally(
        &self,
        store: &Store,
        session_id: i64,
        worktree: Option<&skald_api::worktree::WorktreeInfo>,
    ) -> ChangeTally {
        let Some(dir) = store_dir(&self.settings) else {
            return ChangeTally::default();
        };
        let rows = store.checkpoints(session_id).unwrap_or_default();
        let Some((folder, to)) = rows
            .iter()
            .rev()
            .find_map(|r| r.after.clone().map(|a| (r.folder.clone(), a)))
        else {
            return ChangeTally::default();
        };
        let from = worktree.and_then(|w| w.base_snapshot.clone()).or_else(|| {
            rows.iter()
                .filter(|r| r.folder == folder)
                .find_map(|r| r.before.clone())
        });
        let Some(from) = from else {
            return ChangeTally::default();
        };
        let key = (PathBuf::from(&folder), from.clone(), to.clone());
        if let Some(t) = lock(&self.tallies).get(&key) {
            return *t;
        }
        let path = key.0.clone();
        let counted = blocking(move || {
            let shadow = Shadow::open(&dir, &path)?;
            shadow.changes(&from, &to)
        })
        .await;
        let tally = match counted {
            Ok(c) => ChangeTally {
                files: c.total,
                added: c.files.iter().map(|f| f.added).sum(),
                removed: c.files.iter().map(|f| f.removed).sum(),
            },
            Err(e) => {
                tracing::debug!(session_id, "cannot count the chat's changes: {e}");
                return ChangeTally::default();
            }
        };
        let mut kept = lock(&self.tallies);
        if kept.len() >= TALLIES_KEPT {
            kept.clear();
        }
        kept.insert(key, tally);
        tally
    }

    /// The unified diff of what checkpoint `id`'s step changed, of `paths` only when some
    /// are given, cut at `max_bytes`.
    pub async fn diff(
        &self,
        store: &Store,
        id: i64,
        paths: Vec<String>,
        max_bytes: usize,
    ) -> Result<String, String> {
        let dir = store_dir(&self.settings)
            .ok_or("checkpoints are turned off ([checkpoints] enabled = false)")?;
        let row = store
            .checkpoint(id)
            .map_err(|e| e.to_string())?
            .ok_or_else(|| format!("there is no checkpoint {id}"))?;
        let (Some(from), Some(to)) = (row.before.clone(), row.after.clone()) else {
            return Err(format!("checkpoint {id} recorded no change: {}", row.note));
        };
        let folder = PathBuf::from(&row.folder);
        blocking(move || {
            let shadow = Shadow::open(&dir, &folder)?;
            shadow.patch(&from, &to, &paths, max_bytes)
        })
        .await
        .map_err(|e| e.to_string())
    }
}

/// Why a snapshot was not taken.
#[derive(Debug)]
enum Failure {
    TooLarge(String),
    Other(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::TooLarge(s) | Failure::Other(s) => f.write_str(s),
        }
    }
}

async fn snapshot(
    live: SharedLive,
    dir: PathBuf,
    folder: PathBuf,
    line: String,
    message: String,
    limits: Limits,
    excluded: Vec<PathBuf>,
) -> Result<Snapshot, Failure> {
    let work = tokio::task::spawn_blocking(move || {
        let mut live = lock(&live);
        let mut shadow = Shadow::open(&dir, &folder)?;
        let taken = shadow.snapshot_live(&mut live, &line, &message, &limits, &excluded);
        if let (Ok(s), Some(why)) = (&taken, live.problem())
            && s.walked
        {
            tracing::debug!(folder = %folder.display(), why, "checkpoint walked the folder");
        }
        taken
    });
    match tokio::time::timeout(SNAPSHOT_TIMEOUT, work).await {
        Ok(Ok(Ok(s))) => Ok(s),
        Ok(Ok(Err(e @ CheckpointError::TooLarge { .. }))) => {
            let text = e.to_string();
            Err(Failure::TooLarge(capitalise(&text)))
        }
        Ok(Ok(Err(e))) => Err(Failure::Other(e.to_string())),
        Ok(Err(e)) => Err(Failure::Other(format!("the checkpoint stopped: {e}"))),
        Err(_) => Err(Failure::Other(format!(
            "recording the folder took over {} seconds",
            SNAPSHOT_TIMEOUT.as_secs()
        ))),
    }
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, CheckpointError> + Send + 'static,
) -> Result<T, CheckpointError> {
    match tokio::task::spawn_blocking(f).await {
        Ok(r) => r,
        Err(e) => Err(CheckpointError::Io {
            action: "finish",
            path: PathBuf::from("the checkpoint"),
            reason: e.to_string(),
        }),
    }
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}
