//! The one directory walk of every recursive tool, and of checkpoints: what the user
//! ignores (`.gitignore`) and what is noise or secret (`SKIP_DIRS`) is left out the same way
//! wherever a folder is walked.

use std::path::{Path, PathBuf};

/// Directories that recursive tools never enter: noise (`.git`, `node_modules`,
/// `target`) and the user's `secrets` (tools.md "Read auto-allow & secrets/ deny").
pub const SKIP_DIRS: &[&str] = &[".git", "node_modules", "target", "secrets"];

/// A directory walk as every recursive tool does it: hidden files included, .gitignore
/// respected (also outside git repositories), `SKIP_DIRS` never entered, and the scope's
/// `excluded` paths (the user's deny rules) skipped.
pub fn walker(root: &Path, excluded: &[PathBuf]) -> ignore::WalkBuilder {
    // The walk yields paths under `root` as given (links are not followed), while the
    // exclusions are canonical: map them onto `root`'s spelling once.
    let canonical_root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let skipped: Vec<PathBuf> = excluded
        .iter()
        .filter_map(|x| x.strip_prefix(&canonical_root).ok())
        .filter(|rel| !rel.as_os_str().is_empty())
        .map(|rel| root.join(rel))
        .collect();
    let mut b = ignore::WalkBuilder::new(root);
    b.hidden(false).require_git(false).filter_entry(move |e| {
        let noise = e.depth() > 0
            && e.file_type().is_some_and(|t| t.is_dir())
            && e.file_name()
                .to_str()
                .is_some_and(|n| SKIP_DIRS.contains(&n));
        !noise && !skipped.iter().any(|x| e.path().starts_with(x))
    });
    b
}
