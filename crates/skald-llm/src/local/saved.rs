//! The context of a prompt's shared beginning, kept on disk so that a new process does not
//! read it again. Every chat with an agent starts with the same few thousand tokens (its
//! instructions and the tools' schemas); a small machine takes tens of seconds to read
//! them, and llama.cpp can save the state they leave (their KV cache) and load it back in
//! a fraction of that.
//!
//! A state is valid only for the same model file, context size and tokens, so all three
//! name its file. Files are written whole and renamed into place, and only the newest
//! few are kept: a state is as large as the tokens' KV cache (about 100 MB for a small
//! model's agent prompt). Everything here is best effort: a cache that cannot be read or
//! written costs time, never an answer.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The folder, inside the models folder, where states are kept.
pub const FOLDER: &str = ".prompt-cache";
/// States kept at most; the least recently used go first.
const KEEP: usize = 3;
/// Below this many shared tokens a state is not worth its file.
pub const MIN_TOKENS: usize = 256;

/// The saved states beside one folder of models.
#[derive(Debug, Clone)]
pub struct Saved {
    dir: PathBuf,
}

impl Saved {
    /// The states of the models in `models_dir`; none when no folder is known.
    pub fn new(models_dir: &str) -> Option<Saved> {
        (!models_dir.is_empty()).then(|| Saved {
            dir: Path::new(models_dir).join(FOLDER),
        })
    }

    /// The file of the state that `tokens` leave in a `n_ctx` context of `model`.
    /// The model is known by its real file: two links to one file share their states.
    pub fn file(&self, model: &Path, n_ctx: u32, tokens: &[i32]) -> PathBuf {
        let model = &std::fs::canonicalize(model).unwrap_or_else(|_| model.to_path_buf());
        let meta = std::fs::metadata(model).ok();
        let mtime = meta
            .as_ref()
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        let mut h = Sha256::new();
        h.update(model.as_os_str().as_encoded_bytes());
        h.update(meta.map_or(0, |m| m.len()).to_le_bytes());
        h.update(mtime.to_le_bytes());
        h.update(n_ctx.to_le_bytes());
        for t in tokens {
            h.update(t.to_le_bytes());
        }
        let digest = h.finalize();
        let hex: String = digest[..12].iter().map(|b| format!("{b:02x}")).collect();
        let stem = model
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        self.dir.join(format!("{stem}-{hex}.kv"))
    }

    /// Marks `file` as just used, so that pruning keeps it.
    pub fn touch(&self, file: &Path) {
        if let Ok(f) = std::fs::File::options().append(true).open(file) {
            let _ = f.set_modified(SystemTime::now());
        }
    }

    /// A fresh name to write a state under before it is renamed to `file`.
    pub fn scratch(&self, file: &Path) -> Option<PathBuf> {
        std::fs::create_dir_all(&self.dir).ok()?;
        private(&self.dir, 0o700);
        let name = file.file_name()?.to_string_lossy().into_owned();
        Some(self.dir.join(format!(
            ".{name}.{}.{}.part",
            std::process::id(),
            fastrand::u64(..)
        )))
    }

    /// Puts a written state in place with its checksum beside it, then forgets the oldest
    /// beyond the few kept.
    pub fn commit(&self, scratch: &Path, file: &Path) -> std::io::Result<()> {
        private(scratch, 0o600);
        let sum = sidecar(file);
        let sum_scratch = scratch.with_extension("sum.part");
        std::fs::write(&sum_scratch, digest_of(scratch)?)?;
        private(&sum_scratch, 0o600);
        std::fs::rename(&sum_scratch, &sum)?;
        std::fs::rename(scratch, file)?;
        self.prune();
        Ok(())
    }

    /// Whether `file` is whole: what llama.cpp wrote, byte for byte. Its loader trusts the
    /// file's own lengths (a state cut short aborts the process), so nothing reaches it
    /// unchecked. A state that is not whole is deleted.
    pub fn is_whole(&self, file: &Path) -> bool {
        let whole = match (std::fs::read(sidecar(file)), digest_of(file)) {
            (Ok(expected), Ok(actual)) => expected == actual,
            _ => false,
        };
        if !whole {
            self.forget(file);
        }
        whole
    }

    /// Deletes a state and its checksum.
    pub fn forget(&self, file: &Path) {
        let _ = std::fs::remove_file(file);
        let _ = std::fs::remove_file(sidecar(file));
    }

    fn prune(&self) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let mut states: Vec<(SystemTime, PathBuf)> = entries
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "kv"))
            .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
            .collect();
        states.sort_by_key(|s| std::cmp::Reverse(s.0));
        for (_, path) in states.into_iter().skip(KEEP) {
            self.forget(&path);
        }
    }
}

/// The checksum's file beside a state's.
fn sidecar(file: &Path) -> PathBuf {
    file.with_extension("kv.sha256")
}

/// The SHA-256 of a file's bytes, read in pieces (a state is about 100 MB).
fn digest_of(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut f = std::fs::File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(h.finalize().to_vec())
}

/// Owner-only: the state holds what the prompt said.
fn private(path: &Path, mode: u32) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode));
    }
    #[cfg(not(unix))]
    let _ = (path, mode);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_is_named_by_its_model_context_and_tokens_and_only_the_newest_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let model = dir.path().join("smol.gguf");
        std::fs::write(&model, b"GGUF one").unwrap();
        let saved = Saved::new(dir.path().to_str().unwrap()).unwrap();
        let a = saved.file(&model, 8192, &[1, 2, 3]);
        assert!(a.starts_with(dir.path().join(FOLDER)));
        assert!(
            a.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("smol-")
        );
        assert_eq!(a, saved.file(&model, 8192, &[1, 2, 3]));
        assert_ne!(a, saved.file(&model, 8192, &[1, 2, 4]));
        assert_ne!(a, saved.file(&model, 4096, &[1, 2, 3]));
        std::fs::write(&model, b"GGUF two, longer").unwrap();
        assert_ne!(a, saved.file(&model, 8192, &[1, 2, 3]));

        let mut files = Vec::new();
        for i in 0..(KEEP as i32 + 2) {
            let file = saved.file(&model, 8192, &[i]);
            let scratch = saved.scratch(&file).unwrap();
            std::fs::write(&scratch, b"state").unwrap();
            saved.commit(&scratch, &file).unwrap();
            // Distinct times, oldest first; the first one is used again last.
            let f = std::fs::File::options().append(true).open(&file).unwrap();
            f.set_modified(
                SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1000 + i as u64),
            )
            .unwrap();
            files.push(file);
        }
        saved.touch(&files[0]);
        let scratch = saved.scratch(&files[0]).unwrap();
        std::fs::write(&scratch, b"state").unwrap();
        saved.commit(&scratch, &files[0]).unwrap();
        let left: Vec<bool> = files.iter().map(|f| f.exists()).collect();
        assert_eq!(left.iter().filter(|x| **x).count(), KEEP);
        assert!(left[0], "the one used last stays");
        assert!(!left[1] && !left[2], "the oldest go");
        // No scratch files are left behind.
        let parts = std::fs::read_dir(dir.path().join(FOLDER))
            .unwrap()
            .flatten()
            .filter(|e| e.path().to_string_lossy().ends_with(".part"))
            .count();
        assert_eq!(parts, 0);
        // A state is used only whole: cut short or changed, it is deleted with its sum.
        assert!(saved.is_whole(&files[0]));
        std::fs::write(&files[0], b"stat").unwrap();
        assert!(!saved.is_whole(&files[0]));
        assert!(!files[0].exists() && !sidecar(&files[0]).exists());
        assert!(saved.is_whole(&files[3]));
        std::fs::remove_file(sidecar(&files[4])).unwrap();
        assert!(!saved.is_whole(&files[4]), "no checksum, no trust");
        assert!(!files[4].exists());
        assert_eq!(Saved::new("").map(|s| s.dir), None);
    }
}
