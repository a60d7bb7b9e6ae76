//! A project's hooks: `.skald/hooks.json` at its root, in Claude Code's shape
//! (`{"hooks": {"PreToolUse": [...]}}`). It is code from the repository, so it runs only
//! while its content is the one the person approved (`skald hooks approve`, the chat's
//! context view); a changed file waits for approval again.

use super::HooksConfig;
use sha2::{Digest, Sha256};
use skald_api::hook::ProjectHooks;
use std::path::{Path, PathBuf};

/// Where a project keeps its hooks, under its root.
pub const PROJECT_FILE: &str = ".skald/hooks.json";
/// A larger hooks file is not read.
const MAX_FILE: u64 = 256 * 1024;

/// The hooks file of the project at `root`, when there is one.
pub fn project_hooks_file(root: &Path) -> Option<PathBuf> {
    let path = root.join(PROJECT_FILE);
    path.is_file().then_some(path)
}

/// The folder approving a project's hooks covers, whole.
pub const PROJECT_FOLDER: &str = ".skald";
/// Files under `.skald/` one approval covers, at most; a larger folder is not loaded.
const MAX_FILES: usize = 64;
/// Their total size, at most.
const MAX_TOTAL: u64 = 1024 * 1024;

/// One file under the project's `.skald/`: its path there (`/`-separated) and what it
/// holds. A link is not followed: it is shown as `-> target`, so changing where it points
/// is a change too.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectFile {
    pub rel: String,
    pub bytes: Vec<u8>,
}

/// Every file under the project's `.skald/` folder, sorted by path: what approving its
/// hooks lets run (a hook's `sh .skald/fmt.sh` runs that script, so the script is part of
/// what is approved). `None` without a hooks file, or past the limits.
pub fn project_files(root: &Path) -> Option<Vec<ProjectFile>> {
    project_hooks_file(root)?;
    let base = root.join(PROJECT_FOLDER);
    // A `.skald` that is itself a link out of the project is not the project's.
    if std::fs::symlink_metadata(&base)
        .ok()?
        .file_type()
        .is_symlink()
    {
        return None;
    }
    let mut out = Vec::new();
    let mut total = 0u64;
    let mut queue = vec![base.clone()];
    while let Some(dir) = queue.pop() {
        for entry in std::fs::read_dir(&dir).ok()?.flatten() {
            let path = entry.path();
            let kind = entry.file_type().ok()?;
            if kind.is_dir() {
                queue.push(path);
                continue;
            }
            let rel = path
                .strip_prefix(&base)
                .ok()?
                .to_string_lossy()
                .replace('\\', "/");
            let bytes = if kind.is_symlink() {
                let target = std::fs::read_link(&path).ok()?;
                format!("-> {}", target.to_string_lossy()).into_bytes()
            } else if kind.is_file() {
                std::fs::read(&path).ok()?
            } else {
                continue;
            };
            total += bytes.len() as u64;
            out.push(ProjectFile { rel, bytes });
            if out.len() > MAX_FILES || total > MAX_TOTAL {
                return None;
            }
        }
    }
    out.sort_by(|a, b| a.rel.cmp(&b.rel));
    Some(out)
}

/// The hash approving names: SHA-256 over every file's path and content, each
/// length-prefixed so no two different folders hash alike.
pub fn files_sha256(files: &[ProjectFile]) -> String {
    let mut h = Sha256::new();
    for f in files {
        h.update((f.rel.len() as u64).to_le_bytes());
        h.update(f.rel.as_bytes());
        h.update((f.bytes.len() as u64).to_le_bytes());
        h.update(&f.bytes);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

#[derive(serde::Deserialize)]
struct File {
    #[serde(default)]
    hooks: HooksConfig,
}

/// The project's file, whether its content is approved, and its hooks. An unreadable or
/// malformed file is shown as having none (with nothing to approve). What is approved is
/// the whole `.skald/` folder (`files_sha256`), read once here: a script a hook runs is
/// covered like the hooks file.
pub(super) fn load(store: &skald_store::Store, root: &Path) -> Option<(ProjectHooks, HooksConfig)> {
    let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let path = project_hooks_file(&root)?;
    // A link out of the project is not the project's file.
    let real = std::fs::canonicalize(&path).ok()?;
    if !real.starts_with(&root) || std::fs::metadata(&real).ok()?.len() > MAX_FILE {
        return None;
    }
    let files = project_files(&root)?;
    let hooks_rel = PROJECT_FILE.strip_prefix(".skald/").unwrap_or(PROJECT_FILE);
    let bytes = &files.iter().find(|f| f.rel == hooks_rel)?.bytes;
    let sha256 = files_sha256(&files);
    let config = serde_json::from_slice::<File>(bytes)
        .map(|f| f.hooks)
        .unwrap_or_default();
    let shown = path.to_string_lossy().into_owned();
    let approved = store
        .approved_hooks(&shown)
        .ok()
        .flatten()
        .is_some_and(|a| a == sha256);
    Some((
        ProjectHooks {
            path: shown,
            sha256,
            approved,
            hooks: config.count(),
            files: files.iter().map(|f| format!(".skald/{}", f.rel)).collect(),
        },
        config,
    ))
}

/// The hash of one file's content, in hex.
pub fn content_sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
