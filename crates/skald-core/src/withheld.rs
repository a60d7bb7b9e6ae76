//! What an engine keeps from its tools whatever the rules, grants or bypasses say: the
//! folders no file tool touches (Skald's own secrets) and the environment variables no
//! process an agent starts inherits (model-provider keys). Each engine has its own, so two
//! engines in one process (a test harness, a desktop window and its server) never widen or
//! narrow each other's.

use crate::lock;
use skald_base::path::canonicalize_for_policy;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Variables holding the keys of the providers Skald knows by name: always withheld.
pub use skald_tools::execute_cmd::SECRET_ENV;

#[derive(Debug, Default)]
pub struct Withheld {
    folders: Mutex<Vec<PathBuf>>,
    env: Mutex<Vec<String>>,
    from_commands: Mutex<Vec<PathBuf>>,
}

impl Withheld {
    /// What a process working on `data_dir` with `config` withholds before any engine
    /// runs (`skald tool`, a LaTeX build): the secrets folder, the declared providers' keys.
    pub fn for_data_dir(data_dir: &crate::DataDir, config: &crate::Config) -> Withheld {
        let w = Withheld::default();
        w.protect(&data_dir.secrets_dir());
        w.hide_from_commands(data_dir.root());
        w.hide_env(crate::models::key_envs(config));
        w
    }

    /// Hides `dir` from sandboxed commands (Skald's data directory: the conversations,
    /// the configuration, the logs). File tools refuse it too, whatever the rules say,
    /// except reads inside a read grant that lies in it (its skill folders): see
    /// `approval::data_dir_reached`.
    pub fn hide_from_commands(&self, dir: &Path) {
        let dir = canonicalize_for_policy(dir, dir);
        let mut list = lock(&self.from_commands);
        if !list.contains(&dir) {
            list.push(dir);
        }
    }

    /// See `hide_from_commands`.
    pub fn from_commands(&self) -> Vec<PathBuf> {
        lock(&self.from_commands).clone()
    }

    /// Keeps file tools out of `dir` (canonical, so a link to it is refused too).
    pub fn protect(&self, dir: &Path) {
        let dir = canonicalize_for_policy(dir, dir);
        let mut list = lock(&self.folders);
        if !list.contains(&dir) {
            list.push(dir);
        }
    }

    /// Keeps these variables out of every command and MCP server started from now on.
    pub fn hide_env(&self, names: impl IntoIterator<Item = String>) {
        let mut list = lock(&self.env);
        for name in names {
            if !name.is_empty() && !list.contains(&name) {
                list.push(name);
            }
        }
    }

    /// The protected folders, canonical.
    pub fn folders(&self) -> Vec<PathBuf> {
        lock(&self.folders).clone()
    }

    /// Every variable withheld: the known provider keys and those added with `hide_env`.
    pub fn env(&self) -> Vec<String> {
        let mut out: Vec<String> = SECRET_ENV.iter().map(|s| s.to_string()).collect();
        for name in lock(&self.env).iter() {
            if !out.contains(name) {
                out.push(name.clone());
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_engines_keep_their_own_lists() {
        let dir = tempfile::tempdir().unwrap();
        let a = Withheld::default();
        let b = Withheld::default();
        a.protect(&dir.path().join("secrets"));
        a.hide_env(["MINE_KEY".to_string()]);
        assert_eq!(a.folders().len(), 1);
        assert!(a.env().contains(&"MINE_KEY".to_string()));
        assert!(b.folders().is_empty());
        assert!(!b.env().contains(&"MINE_KEY".to_string()));
        // The known provider keys are withheld by every engine.
        assert!(b.env().contains(&"OPENAI_API_KEY".to_string()));
        // Adding twice keeps one entry.
        a.protect(&dir.path().join("secrets"));
        a.hide_env(["MINE_KEY".to_string()]);
        assert_eq!(a.folders().len(), 1);
        assert_eq!(a.env().iter().filter(|n| *n == "MINE_KEY").count(), 1);
    }
}
