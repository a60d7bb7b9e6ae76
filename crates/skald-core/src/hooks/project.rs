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

#[derive(serde::Deserialize)]
struct File {
    #[serde(default)]
    hooks: HooksConfig,
}

/// The project's file, whether its content is approved, and its hooks. An unreadable or
/// malformed file is shown as having none (with nothing to approve).
pub(super) fn load(store: &skald_store::Store, root: &Path) -> Option<(ProjectHooks, HooksConfig)> {
    let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let path = project_hooks_file(&root)?;
    // A link out of the project is not the project's file.
    let real = std::fs::canonicalize(&path).ok()?;
    if !real.starts_with(&root) || std::fs::metadata(&real).ok()?.len() > MAX_FILE {
        return None;
    }
    let bytes = std::fs::read(&real).ok()?;
    let sha256 = content_sha256(&bytes);
    let config = serde_json::from_slice::<File>(&bytes)
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
        },
        config,
    ))
}

/// The hash a project's hooks file is approved by: its content's sha256, in hex.
pub fn content_sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
