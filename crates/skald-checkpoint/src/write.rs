//! Writing chosen files into a folder as one step: what an applied review writes
//! (docs/worktrees.md). It is a restore to a checkpoint made for it — the folder as it is,
//! with those files replaced or removed — so a crash leaves the folder wholly before or
//! wholly after (the restore's journal), and the step can be undone like any restore.

use crate::restore::Restored;
use crate::shadow::Shadow;
use crate::{CheckpointError, Limits, Result};
use git2::{FileMode, Oid};
use std::path::PathBuf;

/// One file to write: its path in the folder (`/`-separated), what the caller saw there
/// when it worked out the new content (`None`: no file), and the new content (`None`:
/// removed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileWrite {
    pub path: String,
    pub expected: Option<Vec<u8>>,
    pub content: Option<Vec<u8>>,
}

impl Shadow {
    /// A file's content in checkpoint `commit`, or `None` when it holds no such file.
    pub fn read(&self, commit: &str, path: &str) -> Result<Option<Vec<u8>>> {
        let tree = self.commit(commit)?.tree()?;
        let entry = match tree.get_path(std::path::Path::new(path)) {
            Ok(e) => e,
            Err(e) if e.code() == git2::ErrorCode::NotFound => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        match entry.to_object(&self.repo)?.into_blob() {
            Ok(blob) => Ok(Some(blob.content().to_vec())),
            // A folder where a file was asked for.
            Err(_) => Ok(None),
        }
    }

    /// A file's content in checkpoint `commit` with its git file mode (plain, executable
    /// or link), or `None` when it holds no such file.
    pub fn file(&self, commit: &str, path: &str) -> Result<Option<(Vec<u8>, u32)>> {
        let tree = self.commit(commit)?.tree()?;
        let entry = match tree.get_path(std::path::Path::new(path)) {
            Ok(e) => e,
            Err(e) if e.code() == git2::ErrorCode::NotFound => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        let mode = u32::try_from(entry.filemode()).unwrap_or(0o100644);
        match entry.to_object(&self.repo)?.into_blob() {
            Ok(blob) => Ok(Some((blob.content().to_vec(), mode))),
            Err(_) => Ok(None),
        }
    }

    /// Writes `writes` into the folder as one step on `line`, checkpointed before and
    /// after. Each file must still be what its `expected` says (else nothing is written:
    /// `CheckpointError::Moved`), so a change the person made meanwhile is never
    /// overwritten unseen.
    pub fn write_files(
        &mut self,
        line: &str,
        message: &str,
        writes: &[FileWrite],
        limits: &Limits,
        excluded: &[PathBuf],
    ) -> Result<Restored> {
        let before = self.snapshot(line, &format!("before {message}"), limits, excluded)?;
        let mut update = git2::build::TreeUpdateBuilder::new();
        for w in writes {
            if !plain(&w.path) {
                return Err(CheckpointError::Io {
                    action: "write",
                    path: self.root.join(&w.path),
                    reason: "not a plain path inside the folder".into(),
                });
            }
            let recorded = self.read(&before.commit, &w.path)?;
            if recorded != w.expected {
                return Err(CheckpointError::Moved(w.path.clone()));
            }
            // No file in the checkpoint is not no file on disk: one the walk leaves out
            // (ignored by `.gitignore`, too large, in a skipped folder) was never
            // recorded, so nothing could bring it back once written over.
            if recorded.is_none() && self.occupied(&w.path) {
                return Err(CheckpointError::Moved(w.path.clone()));
            }
            match &w.content {
                Some(bytes) => {
                    let blob = self.repo.blob(bytes)?;
                    update.upsert(&w.path, blob, self.mode_of(&before.commit, &w.path)?);
                }
                None => {
                    update.remove(&w.path);
                }
            }
        }
        let target: Oid = {
            let base = self.commit(&before.commit)?;
            let tree_id = update.create_updated(&self.repo, &base.tree()?)?;
            let tree = self.repo.find_tree(tree_id)?;
            let sig = git2::Signature::now("Skald", "checkpoints@skald")?;
            // Not on the line: the restore below records where the folder ends up there.
            self.repo
                .commit(None, &sig, &sig, message, &tree, &[&base])?
        };
        self.go_to(line, before, &target.to_string(), message, limits, excluded)
    }

    /// Whether anything is at `path` in the folder (or a file or link where one of its
    /// folders would be), looked at through the folder's descriptors.
    pub fn occupied(&self, path: &str) -> bool {
        use skald_base::beneath::{Blocked, Kind};
        let rel = std::path::Path::new(path);
        let Some(name) = rel.file_name() else {
            return true;
        };
        match self.folder.parents(rel, false) {
            Ok(parents) => !matches!(parents.kind(name), Ok(Kind::Missing)),
            Err(Blocked::Missing) => false,
            Err(_) => true,
        }
    }

    /// The mode a written file keeps: its own if it exists (an executable stays one), a
    /// plain file's otherwise.
    fn mode_of(&self, commit: &str, path: &str) -> Result<FileMode> {
        let tree = self.commit(commit)?.tree()?;
        Ok(match tree.get_path(std::path::Path::new(path)) {
            Ok(e) if e.filemode() == i32::from(FileMode::BlobExecutable) => {
                FileMode::BlobExecutable
            }
            _ => FileMode::Blob,
        })
    }
}

/// A relative path of plain names: no root, no `..`, no `.`, nothing empty, and no
/// `.git` however a file system may spell it (`.GIT` on a case-insensitive one, `.git.`
/// or `git~1` on Windows'): a file written there would be git's configuration, run by
/// the person's next `git`.
fn plain(path: &str) -> bool {
    !path.is_empty()
        && !path.starts_with('/')
        && path.split('/').all(|c| {
            let bare = c.trim_end_matches(['.', ' ']).to_ascii_lowercase();
            !c.is_empty()
                && c != "."
                && c != ".."
                && !c.contains('\0')
                && bare != ".git"
                && bare != "git~1"
        })
}
