//! What changed between two checkpoints: a list of files with line counts, and the patch.

use crate::shadow::Shadow;
use crate::{CheckpointError, Result};
use git2::{Delta, DiffFormat, DiffOptions, Patch};
use skald_api::checkpoint::{ChangeStatus, FileChange, FileChanges};

/// How many files get line counts; a change to more (an `npm install`) is listed by name
/// only, so that one call does not read every blob it touched.
const COUNTED: usize = 500;
/// How many files a change lists at most; `total` says how many there were.
const LISTED: usize = 2_000;

impl Shadow {
    /// The files that differ from checkpoint `from` to checkpoint `to`.
    pub fn changes(&self, from: &str, to: &str) -> Result<FileChanges> {
        let diff = self.tree_diff(from, to, &[])?;
        let total = diff.deltas().len();
        let mut files = Vec::new();
        for (i, delta) in diff.deltas().enumerate().take(LISTED) {
            let status = match delta.status() {
                Delta::Added => ChangeStatus::Added,
                Delta::Deleted => ChangeStatus::Deleted,
                _ => ChangeStatus::Modified,
            };
            let file = match status {
                ChangeStatus::Deleted => delta.old_file(),
                _ => delta.new_file(),
            };
            let path = file
                .path()
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_default();
            let (mut added, mut removed, mut binary) = (0, 0, false);
            if i < COUNTED
                && let Some(patch) = Patch::from_diff(&diff, i)?
            {
                binary = patch.delta().flags().is_binary();
                let (_, a, r) = patch.line_stats()?;
                (added, removed) = (a, r);
            }
            files.push(FileChange {
                path,
                status,
                added,
                removed,
                binary,
            });
        }
        Ok(FileChanges { files, total })
    }

    /// The unified diff from `from` to `to`, of `paths` only when some are given, cut at
    /// `max_bytes` with a line saying so.
    pub fn patch(
        &self,
        from: &str,
        to: &str,
        paths: &[String],
        max_bytes: usize,
    ) -> Result<String> {
        let diff = self.tree_diff(from, to, paths)?;
        let mut out = String::new();
        let mut cut = false;
        diff.print(DiffFormat::Patch, |_, _, line| {
            if out.len() >= max_bytes {
                cut = true;
                return false;
            }
            let text = String::from_utf8_lossy(line.content());
            match line.origin() {
                c @ ('+' | '-' | ' ') => {
                    out.push(c);
                    out.push_str(&text);
                }
                _ => out.push_str(&text),
            }
            true
        })
        .or_else(|e| if cut { Ok(()) } else { Err(e) })?;
        if cut {
            out.push_str(&format!("\n[diff cut at {max_bytes} bytes]\n"));
        }
        Ok(out)
    }

    /// The paths a checkpoint records, in order.
    pub fn files(&self, commit: &str) -> Result<Vec<String>> {
        let tree = self.commit(commit)?.tree()?;
        let mut out = Vec::new();
        tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
            if entry.kind() == Some(git2::ObjectType::Blob) {
                out.push(format!(
                    "{dir}{}",
                    String::from_utf8_lossy(entry.name_bytes())
                ));
            }
            git2::TreeWalkResult::Ok
        })?;
        Ok(out)
    }

    fn tree_diff(&self, from: &str, to: &str, paths: &[String]) -> Result<git2::Diff<'_>> {
        let old = self.commit(from)?.tree()?;
        let new = self.commit(to)?.tree()?;
        let mut opts = DiffOptions::new();
        opts.ignore_submodules(true);
        for p in paths {
            opts.pathspec(p);
        }
        if !paths.is_empty() {
            opts.disable_pathspec_match(true);
        }
        self.repo
            .diff_tree_to_tree(Some(&old), Some(&new), Some(&mut opts))
            .map_err(CheckpointError::Git)
    }
}
