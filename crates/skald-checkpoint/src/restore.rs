//! Bringing a folder back to a checkpoint, in a way a crash cannot leave half done.

use crate::shadow::{Shadow, Snapshot, bytes_path};
use crate::{CheckpointError, Limits, Result};
use git2::{Delta, DiffOptions, Oid};
use serde::{Deserialize, Serialize};
use skald_api::checkpoint::FileChanges;
use skald_base::beneath::{Blocked, Kind};
use std::path::{Component, Path, PathBuf};

/// The name every temporary file of a restore starts with.
const TMP_PREFIX: &str = ".skald-restore-";
/// Present while a restore changes the folder; names where it is going.
const JOURNAL: &str = "skald-restore.json";

#[derive(Serialize, Deserialize)]
struct Journal {
    line: String,
    target: String,
    excluded: Vec<PathBuf>,
    max_files: usize,
    max_bytes: u64,
    max_file_bytes: u64,
}

/// A restore done.
#[derive(Debug, Clone)]
pub struct Restored {
    /// The folder just before: restoring to this undoes the restore.
    pub before: Snapshot,
    /// The folder after.
    pub after: Snapshot,
    /// What the restore changed.
    pub changes: FileChanges,
    /// Paths that could not be brought back, and why (a folder now where a file was, a
    /// link in the way): the rest of the restore is done.
    pub conflicts: Vec<String>,
}

impl Shadow {
    /// Brings the folder back to checkpoint `target`: files it had are written back, files
    /// it did not have are removed; files no checkpoint records (ignored, too large, in
    /// skipped folders) are left alone. The folder is checkpointed on `line` before and
    /// after, so the restore can itself be undone.
    pub fn restore(
        &mut self,
        line: &str,
        target: &str,
        limits: &Limits,
        excluded: &[PathBuf],
    ) -> Result<Restored> {
        // An unknown target is refused before anything is recorded.
        self.commit(target)?;
        let short = &target[..target.len().min(12)];
        let before = self.snapshot(
            line,
            &format!("before restoring to {short}"),
            limits,
            excluded,
        )?;
        self.go_to(
            line,
            before,
            target,
            &format!("restored to {short}"),
            limits,
            excluded,
        )
    }

    /// Brings the folder from `before` (a snapshot just taken) to checkpoint `target`,
    /// journalled, then checkpoints it with `message`.
    pub(crate) fn go_to(
        &mut self,
        line: &str,
        before: Snapshot,
        target: &str,
        message: &str,
        limits: &Limits,
        excluded: &[PathBuf],
    ) -> Result<Restored> {
        let target_tree = self.commit(target)?.tree_id();
        let mut conflicts = Vec::new();
        if before.tree != target_tree.to_string() {
            let journal = Journal {
                line: line.to_string(),
                target: target.to_string(),
                excluded: excluded.to_vec(),
                max_files: limits.max_files,
                max_bytes: limits.max_bytes,
                max_file_bytes: limits.max_file_bytes,
            };
            self.write_journal(&journal)?;
            let from = Oid::from_str(&before.tree).map_err(CheckpointError::Git)?;
            conflicts = self.apply(from, target_tree)?;
        }
        let after = self.snapshot(line, message, limits, excluded)?;
        self.remove_journal()?;
        let changes = self.changes(&before.commit, &after.commit)?;
        Ok(Restored {
            before,
            after,
            changes,
            conflicts,
        })
    }

    /// Finishes a restore that a crash interrupted: the folder is brought the rest of the
    /// way to where the journal says it was going.
    pub(crate) fn finish_interrupted_restore(&mut self) -> Result<()> {
        let path = self.dir.join(JOURNAL);
        let Ok(text) = std::fs::read(&path) else {
            return Ok(());
        };
        let Ok(journal) = serde_json::from_slice::<Journal>(&text) else {
            // A journal is written atomically, so an unreadable one is not ours to act on.
            return self.remove_journal();
        };
        let limits = Limits {
            max_files: journal.max_files,
            max_bytes: journal.max_bytes,
            max_file_bytes: journal.max_file_bytes,
        };
        let Ok(target) = self.commit(&journal.target).map(|c| c.tree_id()) else {
            return self.remove_journal();
        };
        self.remove_leftovers(&journal.excluded);
        let now = self.scan(&limits, &journal.excluded)?;
        self.apply(now.tree, target)?;
        let short = &journal.target[..journal.target.len().min(12)];
        self.snapshot(
            &journal.line,
            &format!("restored to {short} (finished after an interruption)"),
            &limits,
            &journal.excluded,
        )?;
        self.remove_journal()
    }

    /// Removes the temporary files of writes the crash cut short (only a restore makes
    /// them, only after its journal is written), so no checkpoint records them. Each is
    /// removed by its path inside the folder resolved again one folder at a time with no
    /// link followed (`Folder::remove_file`), so a link swapped in meanwhile is refused.
    fn remove_leftovers(&self, excluded: &[PathBuf]) {
        let mut excluded = excluded.to_vec();
        excluded.push(self.dir.clone());
        // A folder that cannot be opened is reported by the checkpoint that follows.
        let _ = skald_base::walk::walker(&self.root, &excluded).run(|entry| {
            let name = entry.file_name().to_string_lossy();
            if name.starts_with(TMP_PREFIX)
                && !entry.is_dir()
                && let Ok(rel) = entry.path().strip_prefix(&self.root)
            {
                let _ = self.folder.remove_file(rel);
            }
            skald_base::walk::Flow::Continue
        });
    }

    fn write_journal(&self, journal: &Journal) -> Result<()> {
        let path = self.dir.join(JOURNAL);
        let text = serde_json::to_vec(journal).map_err(|e| CheckpointError::Io {
            action: "write",
            path: path.clone(),
            reason: e.to_string(),
        })?;
        skald_base::atomic::write_atomic(&path, &text).map_err(|e| CheckpointError::Io {
            action: "write",
            path: path.clone(),
            reason: e.to_string(),
        })?;
        Ok(())
    }

    fn remove_journal(&self) -> Result<()> {
        let path = self.dir.join(JOURNAL);
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(CheckpointError::io("remove", path, &e)),
        }
    }

    /// Changes the folder from tree `from` to tree `to`: removals first (a file may be
    /// where a folder must go), then each written file replaced in one rename. Returns what
    /// could not be done.
    fn apply(&self, from: Oid, to: Oid) -> Result<Vec<String>> {
        let old = self.repo.find_tree(from)?;
        let new = self.repo.find_tree(to)?;
        let mut opts = DiffOptions::new();
        opts.ignore_submodules(true);
        let diff = self
            .repo
            .diff_tree_to_tree(Some(&old), Some(&new), Some(&mut opts))?;
        let mut removals = Vec::new();
        let mut writes = Vec::new();
        for delta in diff.deltas() {
            match delta.status() {
                Delta::Deleted => {
                    if let Some(p) = delta.old_file().path() {
                        removals.push(p.to_path_buf());
                    }
                }
                _ => {
                    let f = delta.new_file();
                    if let Some(p) = f.path() {
                        writes.push((p.to_path_buf(), f.id(), u32::from(f.mode())));
                    }
                }
            }
        }
        let mut conflicts = Vec::new();
        for rel in removals {
            if !plain(&rel) {
                continue;
            }
            if let Some(why) = self.remove_entry(&rel)? {
                conflicts.push(format!("{}: {why}", rel.display()));
            }
        }
        for (rel, id, mode) in writes {
            if !plain(&rel) {
                continue;
            }
            if let Err(why) = self.write_entry(&rel, id, mode)? {
                conflicts.push(format!("{}: {why}", rel.display()));
            }
        }
        Ok(conflicts)
    }

    /// Removes one file the target does not have, and the folders that leaves empty.
    /// Returns a conflict, if any. Everything is done through descriptors of the folders
    /// on the way (see `beneath`): a folder swapped for a link, even between two steps
    /// here, is never followed.
    fn remove_entry(&self, rel: &Path) -> Result<Option<String>> {
        let parents = match self.folder.parents(rel, false) {
            Ok(p) => p,
            // Already gone with its folder, or a link in the way: nothing of ours to remove.
            Err(Blocked::Missing | Blocked::NotAFolder(_)) => return Ok(None),
            Err(Blocked::Io(e)) => {
                return Err(CheckpointError::io("open", self.root.join(rel), &e));
            }
        };
        let Some(name) = rel.file_name() else {
            return Ok(None);
        };
        match parents
            .kind(name)
            .map_err(|e| CheckpointError::io("look at", self.root.join(rel), &e))?
        {
            Kind::Folder => Ok(Some("a folder is there now".to_string())),
            Kind::Missing => Ok(None),
            Kind::Other => {
                match parents.last().remove_file(name) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    // Made a folder since the look above (a racing process).
                    Err(e) if e.kind() == std::io::ErrorKind::IsADirectory => {
                        return Ok(Some("a folder is there now".to_string()));
                    }
                    Err(e) => return Err(CheckpointError::io("remove", self.root.join(rel), &e)),
                }
                parents.prune_empty();
                Ok(None)
            }
        }
    }

    /// Writes one recorded file back. `Ok(Err(why))` is a conflict, not a failure. Each
    /// folder on the way must be a real folder inside the root (a link there could send
    /// the write anywhere); they are opened one from the other, never by path.
    fn write_entry(
        &self,
        rel: &Path,
        id: Oid,
        mode: u32,
    ) -> Result<std::result::Result<(), String>> {
        let Some(name) = rel.file_name() else {
            return Ok(Err("not a file path".to_string()));
        };
        let path = self.root.join(rel);
        let parents = match self.folder.parents(rel, true) {
            Ok(p) => p,
            Err(Blocked::NotAFolder(at)) => {
                return Ok(Err(format!(
                    "{} is a file or a link, not a folder",
                    at.display()
                )));
            }
            Err(Blocked::Missing) => return Ok(Err("its folder could not be made".to_string())),
            Err(Blocked::Io(e)) => return Err(CheckpointError::io("create", &path, &e)),
        };
        if matches!(
            parents
                .kind(name)
                .map_err(|e| CheckpointError::io("look at", &path, &e))?,
            Kind::Folder
        ) {
            return Ok(Err("a folder is there now".to_string()));
        }
        let blob = self.repo.find_blob(id)?;
        let written = if mode == 0o120000 {
            parents.replace_link(name, &bytes_path(blob.content()), TMP_PREFIX)
        } else {
            parents.replace_file(name, blob.content(), mode == 0o100755, TMP_PREFIX)
        };
        match written {
            Ok(()) => Ok(Ok(())),
            // Made a folder since the look above (a racing process).
            Err(e) if e.kind() == std::io::ErrorKind::IsADirectory => {
                Ok(Err("a folder is there now".to_string()))
            }
            Err(e) => Err(CheckpointError::io("replace", &path, &e)),
        }
    }
}

/// Only plain relative paths are acted on (git's trees hold no others; this makes sure).
fn plain(rel: &Path) -> bool {
    rel.components().all(|c| matches!(c, Component::Normal(_)))
}
