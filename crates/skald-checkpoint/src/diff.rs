//! What changed between two checkpoints: a list of files with line counts, and the patch.

use crate::shadow::Shadow;
use crate::{CheckpointError, Result};
use git2::{DiffFormat, DiffOptions, ObjectType, Oid, Patch, Tree};
use skald_api::checkpoint::{ChangeStatus, FileChange, FileChanges};

/// How many files get line counts; a change to more (an `npm install`) is listed by name
/// only, so that one call does not read every blob it touched.
const COUNTED: usize = 500;
/// How many files a change lists at most; `total` says how many there were.
const LISTED: usize = 2_000;

/// A file that differs: its blob before and after (none: added, or removed).
struct Change {
    path: String,
    old: Option<Oid>,
    new: Option<Oid>,
}

/// A tree entry, with the key git orders a tree's entries by.
struct Item {
    key: Vec<u8>,
    name: String,
    id: Oid,
    mode: i32,
    tree: bool,
}

/// Git orders a tree's entries by name, a folder's as if it ended in `/`: the same key
/// in both trees lines their entries up (a file and a folder of one name do not pair).
fn order_key(e: &git2::TreeEntry<'_>) -> Vec<u8> {
    let mut key = e.name_bytes().to_vec();
    if e.kind() == Some(ObjectType::Tree) {
        key.push(b'/');
    }
    key
}

impl Shadow {
    /// The files that differ from checkpoint `from` to checkpoint `to`, in the order of
    /// their paths. Only the trees along changed paths are read: a folder whose tree is
    /// the same in both is passed over whole (libgit2's tree diff reads every tree).
    pub fn changes(&self, from: &str, to: &str) -> Result<FileChanges> {
        let old = self.commit(from)?.tree()?;
        let new = self.commit(to)?.tree()?;
        let mut found = Vec::new();
        self.compare(Some(&old), Some(&new), "", &mut found)?;
        let total = found.len();
        let mut files = Vec::new();
        for (i, change) in found.into_iter().enumerate().take(LISTED) {
            let status = match (&change.old, &change.new) {
                (None, _) => ChangeStatus::Added,
                (_, None) => ChangeStatus::Deleted,
                _ => ChangeStatus::Modified,
            };
            let (mut added, mut removed, mut binary) = (0, 0, false);
            if i < COUNTED {
                let blob = |id: Option<Oid>| id.and_then(|id| self.repo.find_blob(id).ok());
                let (a, b) = (blob(change.old), blob(change.new));
                let path = std::path::Path::new(&change.path);
                let patch = Patch::from_buffers(
                    a.as_ref().map_or(&[][..], |b| b.content()),
                    Some(path),
                    b.as_ref().map_or(&[][..], |b| b.content()),
                    Some(path),
                    None,
                )?;
                binary = patch.delta().flags().is_binary();
                let (_, x, y) = patch.line_stats()?;
                (added, removed) = (x, y);
            }
            files.push(FileChange {
                path: change.path,
                status,
                added,
                removed,
                binary,
            });
        }
        Ok(FileChanges { files, total })
    }

    /// The files that differ between two trees (either may be absent: all added, or all
    /// removed), under `prefix`.
    fn compare(
        &self,
        old: Option<&Tree<'_>>,
        new: Option<&Tree<'_>>,
        prefix: &str,
        out: &mut Vec<Change>,
    ) -> Result<()> {
        let entries = |t: Option<&Tree<'_>>| -> Vec<Item> {
            t.map(|t| {
                t.iter()
                    .map(|e| Item {
                        key: order_key(&e),
                        name: String::from_utf8_lossy(e.name_bytes()).into_owned(),
                        id: e.id(),
                        mode: e.filemode(),
                        tree: e.kind() == Some(ObjectType::Tree),
                    })
                    .collect()
            })
            .unwrap_or_default()
        };
        let (a, b) = (entries(old), entries(new));
        let (mut i, mut j) = (0, 0);
        while i < a.len() || j < b.len() {
            let order = match (a.get(i), b.get(j)) {
                (Some(x), Some(y)) => x.key.cmp(&y.key),
                (Some(_), None) => std::cmp::Ordering::Less,
                _ => std::cmp::Ordering::Greater,
            };
            let (x, y) = match order {
                std::cmp::Ordering::Less => {
                    i += 1;
                    (a.get(i - 1), None)
                }
                std::cmp::Ordering::Greater => {
                    j += 1;
                    (None, b.get(j - 1))
                }
                std::cmp::Ordering::Equal => {
                    i += 1;
                    j += 1;
                    (a.get(i - 1), b.get(j - 1))
                }
            };
            if let (Some(x), Some(y)) = (x, y)
                && x.id == y.id
                && x.mode == y.mode
            {
                continue;
            }
            let name = x.or(y).map(|e| e.name.as_str()).unwrap_or_default();
            let path = format!("{prefix}{name}");
            let is_tree = x.or(y).is_some_and(|e| e.tree);
            if is_tree {
                let tree = |e: Option<&Item>| e.map(|e| self.repo.find_tree(e.id)).transpose();
                let (tx, ty) = (tree(x)?, tree(y)?);
                self.compare(tx.as_ref(), ty.as_ref(), &format!("{path}/"), out)?;
            } else {
                out.push(Change {
                    path,
                    old: x.map(|e| e.id),
                    new: y.map(|e| e.id),
                });
            }
        }
        Ok(())
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
