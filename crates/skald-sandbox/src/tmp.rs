//! The private temporary folders: which folders a command sees as empty ones of its own,
//! and which of its folders stay visible in them. The mounts are `confine.rs`'s; this part
//! is shared with the refusal reader, which names a path hidden this way.

use std::path::{Path, PathBuf};

/// Folders where any program of the user's keeps files and listens on sockets — tmux's
/// and screen's servers, an editor's, any daemon's — through which a command could have
/// something outside the sandbox act for it. Each is an empty private `tmpfs` for the
/// command (`/var/tmp` too: it is often the same kind of place), with only the command's
/// own folders inside it bound back in. The command's own temporary folder is `$TMPDIR`.
pub const PRIVATE_TMP: [&str; 2] = ["/tmp", "/var/tmp"];

/// The folders among `folders` (absolute, canonical) that a command must still see inside
/// the private temporary folders: those inside one (a chat's folder under `/tmp`), and those
/// holding one (a grant of `/var`, a command run in `/tmp`: that private folder is then not
/// made at all). The outermost ones only — a bind brings what is beneath it along, and a
/// command run in `/tmp` sees all of it whatever else it writes there —, sorted. Cheap
/// enough to run per command (no system call once the private folders are known).
pub fn seen_in_private_tmp<'a>(folders: impl IntoIterator<Item = &'a Path>) -> Vec<PathBuf> {
    let private = private_tmp_folders();
    let mut out: Vec<PathBuf> = folders
        .into_iter()
        .filter(|f| private.iter().any(|p| f.starts_with(p) || p.starts_with(f)))
        .map(Path::to_path_buf)
        .collect();
    out.sort();
    out.dedup();
    // Sorted, a folder comes after every folder holding it.
    let mut outermost: Vec<PathBuf> = Vec::with_capacity(out.len());
    for f in out {
        if !outermost.iter().any(|o| f.starts_with(o)) {
            outermost.push(f);
        }
    }
    outermost
}

/// [`PRIVATE_TMP`] with links resolved (`/var/tmp` may be a link to `/tmp`), once per
/// process; those that are not folders here are left out.
pub(crate) fn private_tmp_folders() -> &'static [PathBuf] {
    static FOLDERS: std::sync::OnceLock<Vec<PathBuf>> = std::sync::OnceLock::new();
    FOLDERS.get_or_init(|| {
        let mut out: Vec<PathBuf> = PRIVATE_TMP
            .iter()
            .filter_map(|p| std::fs::canonicalize(p).ok())
            .filter(|p| p.is_dir())
            .collect();
        out.sort();
        out.dedup();
        out
    })
}
