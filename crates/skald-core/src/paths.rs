//! Where Skald keeps its data: the OS per-user data directory (`~/.local/share/skald` on
//! Linux, `~/Library/Application Support/skald` on macOS, `%APPDATA%\skald\data` on
//! Windows), unless `--data-dir` or `SKALD_DATA_DIR` says otherwise.

use std::path::{Path, PathBuf};

/// The environment variable that overrides the data directory.
pub const DATA_DIR_ENV: &str = "SKALD_DATA_DIR";

#[derive(Debug, thiserror::Error)]
pub enum DataDirError {
    #[error("cannot find a home directory for Skald's data; pass --data-dir or set {DATA_DIR_ENV}")]
    NoHome,
    #[error("cannot create the data directory {path}: {source}")]
    Create {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the data directory {0} exists but is not a directory")]
    NotADirectory(PathBuf),
}

/// The data directory and the well-known paths inside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataDir {
    root: PathBuf,
}

impl DataDir {
    /// Picks the directory: `explicit` first, then `SKALD_DATA_DIR`, then the OS default.
    /// Nothing is created yet.
    pub fn resolve(explicit: Option<&Path>) -> Result<DataDir, DataDirError> {
        if let Some(dir) = explicit {
            return Ok(DataDir::at(dir));
        }
        if let Some(dir) = std::env::var_os(DATA_DIR_ENV).filter(|v| !v.is_empty()) {
            return Ok(DataDir::at(PathBuf::from(dir)));
        }
        directories::ProjectDirs::from("", "", "skald")
            .map(|dirs| DataDir::at(dirs.data_dir()))
            .ok_or(DataDirError::NoHome)
    }

    /// A data directory at `root`, made absolute so that a later `chdir` cannot move it.
    pub fn at(root: impl AsRef<Path>) -> DataDir {
        let root = root.as_ref();
        let root = if root.is_absolute() {
            root.to_path_buf()
        } else {
            std::env::current_dir()
                .map(|cwd| cwd.join(root))
                .unwrap_or_else(|_| root.to_path_buf())
        };
        DataDir { root }
    }

    /// Creates the directory (and its `logs/`) if needed, readable by the user only: on
    /// Unix the folders are 0700 and Skald's files in them 0600 (chats, logs and settings
    /// are nobody else's business on a shared machine). An older data directory made
    /// with the umask's modes is tightened here too.
    pub fn ensure(&self) -> Result<(), DataDirError> {
        if self.root.exists() && !self.root.is_dir() {
            return Err(DataDirError::NotADirectory(self.root.clone()));
        }
        for dir in [self.root.clone(), self.logs_dir()] {
            std::fs::create_dir_all(&dir).map_err(|source| DataDirError::Create {
                path: dir.clone(),
                source,
            })?;
        }
        for name in ["", "logs", "secrets", "cache", "models", "tex", "plugins"] {
            let dir = self.root.join(name);
            if dir.is_dir() {
                keep_private(&dir);
            }
        }
        // The database first exists empty with the right mode: SQLite gives its journal,
        // WAL and shared-memory files the database file's mode.
        let db = self.db_path();
        if !db.exists() {
            create_private(&db).map_err(|source| DataDirError::Create {
                path: db.clone(),
                source,
            })?;
        }
        let logs = std::fs::read_dir(self.logs_dir())
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path());
        let own = [
            "skald.db",
            "skald.db-wal",
            "skald.db-shm",
            "skald.db-journal",
            "config.toml",
        ]
        .into_iter()
        .map(|n| self.root.join(n));
        for file in own.chain(logs).filter(|p| p.is_file()) {
            keep_private(&file);
        }
        Ok(())
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Skald's own secrets (when not in the OS keyring): no tool ever touches it.
    pub fn secrets_dir(&self) -> PathBuf {
        self.root.join("secrets")
    }

    /// The SQLite database.
    pub fn db_path(&self) -> PathBuf {
        self.root.join("skald.db")
    }

    /// The user's settings.
    pub fn config_path(&self) -> PathBuf {
        self.root.join("config.toml")
    }

    /// Rotating log files.
    pub fn logs_dir(&self) -> PathBuf {
        self.root.join("logs")
    }

    /// Local models (`<name>.gguf`): `SKALD_MODELS_DIR` if set, else `models/` here.
    pub fn models_dir(&self) -> PathBuf {
        std::env::var_os(skald_llm::local::MODELS_DIR_ENV)
            .filter(|v| !v.is_empty())
            .map_or_else(|| self.root.join("models"), PathBuf::from)
    }

    /// Where agents' worktrees are made (docs/worktrees.md): beside the data directory, not
    /// in it, since no sandboxed command may see the data directory while a worktree's
    /// chat must write its worktree.
    pub fn worktrees_dir(&self) -> PathBuf {
        let mut name = self
            .root
            .file_name()
            .map(std::ffi::OsStr::to_os_string)
            .unwrap_or_else(|| "skald".into());
        name.push("-worktrees");
        self.root.with_file_name(name)
    }

    /// What tools derive from files and keep to save time (get_ast_outline's outlines):
    /// safe to delete at any time.
    pub fn cache_dir(&self) -> PathBuf {
        self.root.join("cache")
    }

    /// The offline TeX bundle (a zip) the LaTeX preview compiles with when present.
    pub fn tex_bundle_path(&self) -> PathBuf {
        self.root.join("tex").join("bundle.zip")
    }
}

/// Makes a file of Skald's 0600, a folder 0700 (Unix; elsewhere the user's profile
/// folder is already private). Best effort: a file system without modes keeps its own.
pub fn keep_private(path: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = if path.is_dir() { 0o700 } else { 0o600 };
        let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode));
    }
    #[cfg(not(unix))]
    let _ = path;
}

/// Creates an empty file readable by the user only (if it does not exist yet).
fn create_private(path: &Path) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn the_data_directory_is_the_users_alone() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("skald");
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        // An older data directory, made with a permissive umask.
        std::fs::create_dir_all(root.join("logs")).unwrap();
        std::fs::write(root.join("config.toml"), "").unwrap();
        std::fs::write(root.join("logs/skald.2026-01-01.log"), "").unwrap();
        for p in [&root, &root.join("logs")] {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        for p in [
            root.join("config.toml"),
            root.join("logs/skald.2026-01-01.log"),
        ] {
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
        }
        let dd = DataDir::at(&root);
        dd.ensure().unwrap();
        assert_eq!(mode(&root), 0o700);
        assert_eq!(mode(&dd.logs_dir()), 0o700);
        assert_eq!(mode(&dd.db_path()), 0o600, "the database starts private");
        assert_eq!(mode(&dd.config_path()), 0o600);
        assert_eq!(mode(&root.join("logs/skald.2026-01-01.log")), 0o600);
        // A new one too.
        let fresh = DataDir::at(tmp.path().join("new"));
        fresh.ensure().unwrap();
        assert_eq!(mode(fresh.root()), 0o700);
        assert_eq!(mode(&fresh.db_path()), 0o600);
    }

    #[test]
    fn explicit_dir_wins_and_paths_live_inside_it() {
        let tmp = tempfile::tempdir().unwrap();
        let dd = DataDir::resolve(Some(tmp.path())).unwrap();
        assert_eq!(dd.root(), tmp.path());
        assert_eq!(dd.db_path(), tmp.path().join("skald.db"));
        assert_eq!(dd.config_path(), tmp.path().join("config.toml"));
        dd.ensure().unwrap();
        assert!(dd.logs_dir().is_dir());
    }

    #[test]
    fn relative_dirs_become_absolute() {
        let dd = DataDir::at("some/relative");
        assert!(dd.root().is_absolute());
    }

    #[test]
    fn a_file_in_the_way_is_a_clear_error() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("file");
        std::fs::write(&file, "x").unwrap();
        let err = DataDir::at(&file).ensure().unwrap_err();
        assert!(matches!(err, DataDirError::NotADirectory(_)), "{err}");
    }
}
