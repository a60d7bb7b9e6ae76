//! Files the UI may see, and the files it follows.
//!
//! The viewer's file route is reachable by anything the UI renders (a Markdown image, a
//! PDF), so it is policy-checked like a tool's read: a path must be under the server's
//! folder, a chat's folder or Skald's LaTeX cache, and no deny rule of the default group
//! (`secrets/` among the seeded ones) may cover it. Symlinks and `..` are resolved before
//! the check.
//!
//! Watching is counted per connection and per file: a file is watched while any UI views
//! it. A LaTeX document is followed through every input of its last build, and a change
//! of any of them is reported as a change of the document.

use skald_api::events::Event;
use skald_base::path::{canonicalize_for_policy, path_under};
use skald_core::approval::{self, RunContext};
use skald_store::{RuleAction, SessionKind, Store};
use skald_viewer::FileWatcher;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use skald_base::lock;

pub struct FilePolicy {
    store: Arc<Store>,
    /// The server's own folder: new chats work here.
    root: PathBuf,
    /// Built PDFs.
    latex_cache: PathBuf,
    /// Never served, whatever the rules say.
    secrets_dir: PathBuf,
}

impl FilePolicy {
    pub fn new(store: Arc<Store>, root: PathBuf, latex_cache: PathBuf, data_dir: &Path) -> Self {
        FilePolicy {
            store,
            root,
            latex_cache,
            secrets_dir: canonicalize_for_policy(&data_dir.join("secrets"), data_dir),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The absolute, resolved path of `raw` (relative to `base`), if the UI may read it.
    pub fn check(&self, raw: &str, base: &Path) -> Result<PathBuf, String> {
        if raw.trim().is_empty() {
            return Err("no path given".into());
        }
        let path = canonicalize_for_policy(Path::new(raw), base);
        if path_under(&path, &self.secrets_dir) {
            return Err(format!("{} is in Skald's secrets folder", path.display()));
        }
        let mut roots = vec![self.root.clone(), self.latex_cache.clone()];
        if let Ok(sessions) = self.store.list_sessions() {
            roots.extend(
                sessions
                    .into_iter()
                    .filter(|s| s.kind == SessionKind::Interactive)
                    .filter_map(|s| s.working_dir)
                    .map(PathBuf::from),
            );
        }
        let containing: Vec<PathBuf> = roots
            .iter()
            .map(|r| canonicalize_for_policy(r, r))
            .filter(|r| path_under(&path, r))
            .collect();
        if containing.is_empty() {
            return Err(format!(
                "{} is outside the folders Skald works in (the server's folder and the chats' \
                 folders)",
                path.display()
            ));
        }
        // The user's deny rules (the seeded ones keep `secrets/` folders unreadable) apply
        // to the viewer as to an agent working in any folder that holds the file: a
        // relative rule is read against each of them.
        let args = serde_json::json!({ "path": path.display().to_string() });
        for root in containing {
            let ctx = RunContext {
                group: "default".into(),
                agent_id: "user".into(),
                working_dir: root,
                protected: vec![self.secrets_dir.clone()],
                ..RunContext::default()
            };
            // The viewer cannot ask: what a file tool could read only with a person's
            // yes (a credential folder such as ~/.ssh in a chat working in the home
            // folder) is refused here, as what it may never read is.
            let approval::Checked {
                decision,
                path: checked,
            } = approval::check_call(&self.store, &ctx, "read_file", &args);
            // The gate works the path out again; a link swapped in since the one above
            // would make it judge another file than the one served.
            if checked.as_deref() != Some(path.as_path()) {
                return Err(format!(
                    "{} changed while it was being checked (a link was swapped in or out)",
                    path.display()
                ));
            }
            match decision.action {
                RuleAction::Allow => {}
                RuleAction::Deny => {
                    return Err(format!(
                        "{} is denied by an approval rule: {}",
                        path.display(),
                        decision.reason
                    ));
                }
                RuleAction::Require => {
                    return Err(format!(
                        "{} is not shown: a file tool would need approval to read it ({})",
                        path.display(),
                        decision.reason
                    ));
                }
            }
        }
        Ok(path)
    }
}

/// How the file route sends a file: its type, and the Content-Security-Policy that keeps
/// it from running as part of the app.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Served {
    pub mime: String,
    pub csp: Option<String>,
}

/// Only the types the viewer shows go out as themselves: images and PDFs; SVG sandboxed
/// with no scripts; HTML sandboxed in an opaque origin with no network (even opened on
/// its own); the rest as plain text or bytes, so nothing from the route runs as the app's
/// script. Reads the file's first bytes: call it off the async workers.
pub fn served_as(path: &Path) -> Served {
    use skald_viewer::Kind;
    let (mime, csp) = match skald_viewer::detect(path).ok() {
        Some(Kind::Image { mime } | Kind::Pdf { mime }) => (mime, None),
        Some(Kind::Svg { mime }) => (
            mime,
            Some("sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:".into()),
        ),
        Some(Kind::Html) => (
            "text/html; charset=utf-8".into(),
            Some(format!("sandbox allow-scripts; {}", skald_viewer::HTML_CSP)),
        ),
        Some(Kind::Binary) | None => ("application/octet-stream".into(), None),
        Some(_) => ("text/plain; charset=utf-8".into(), None),
    };
    Served { mime, csp }
}

/// Files larger than this are not sent by the file route: the desktop's scheme answers
/// with whole bodies, held in memory.
pub const FILE_LIMIT: u64 = 256 * 1024 * 1024;

/// A file the route may send: where it is, its length, and how it goes out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteFile {
    pub path: PathBuf,
    pub len: u64,
    pub served: Served,
}

impl RouteFile {
    /// Opens the file to send: exactly the checked path, refusing a link on it
    /// (`skald_base::beneath::open_exact`), so one swapped in after the check is not
    /// followed out of the folders the route serves.
    pub fn open(&self) -> std::io::Result<std::fs::File> {
        skald_base::beneath::open_exact(&self.path)
    }
}

/// Why the file route sends nothing, with its HTTP status.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RouteRefusal {
    #[error("no path given")]
    NoPath,
    /// The path policy refused it (outside the folders, a credential folder, secrets).
    #[error("{0}")]
    Forbidden(String),
    #[error("{0}")]
    NotFound(String),
    #[error("the file is too large to show")]
    TooLarge,
}

impl RouteRefusal {
    pub fn status(&self) -> u16 {
        match self {
            RouteRefusal::NoPath => 400,
            RouteRefusal::Forbidden(_) => 403,
            RouteRefusal::NotFound(_) => 404,
            RouteRefusal::TooLarge => 413,
        }
    }
}

impl crate::Service {
    /// What the file route answers for its `path` parameter, for every carrier (`skald
    /// serve`'s `/api/file`, the desktop's `skald-file:` scheme): the path policy, the
    /// size limit, the type and the Content-Security-Policy are decided here once. Reads
    /// the store and the disk: call it off the async workers.
    pub fn file_route(&self, raw: Option<&str>) -> Result<RouteFile, RouteRefusal> {
        let raw = raw.ok_or(RouteRefusal::NoPath)?;
        let path = self.file_for_route(raw).map_err(RouteRefusal::Forbidden)?;
        let meta = match skald_base::beneath::open_exact(&path).and_then(|f| f.metadata()) {
            Ok(m) if m.is_file() => m,
            Ok(_) => return Err(RouteRefusal::NotFound("not a file".into())),
            Err(e) => return Err(RouteRefusal::NotFound(format!("{}: {e}", path.display()))),
        };
        if meta.len() > FILE_LIMIT {
            return Err(RouteRefusal::TooLarge);
        }
        let served = served_as(&path);
        Ok(RouteFile {
            path,
            len: meta.len(),
            served,
        })
    }
}

/// What is followed: per document, the files whose change means it changed.
#[derive(Default)]
struct Follow {
    /// document -> its watched files, while anyone follows it
    docs: HashMap<PathBuf, Vec<PathBuf>>,
    /// document -> how many viewers follow it
    viewers: HashMap<PathBuf, usize>,
    /// document -> the inputs of its last LaTeX build, followed or not: a build may end
    /// before its viewer subscribes, and a viewer may come back after a reconnect
    inputs: HashMap<PathBuf, Vec<PathBuf>>,
}

impl Follow {
    /// The files that stand for `doc`: its last build's inputs (with itself), or itself.
    fn files_of(&self, doc: &Path) -> Vec<PathBuf> {
        let mut files = self.inputs.get(doc).cloned().unwrap_or_default();
        if !files.iter().any(|p| p == doc) {
            files.push(doc.to_path_buf());
        }
        files
    }
}

pub struct Watches {
    watcher: FileWatcher,
    follow: Arc<Mutex<Follow>>,
}

impl Watches {
    /// `emit` gets a `file_changed` for each followed document that changed.
    pub fn new(emit: impl Fn(Event) + Send + Sync + 'static) -> Result<Watches, String> {
        let follow: Arc<Mutex<Follow>> = Arc::default();
        let seen = follow.clone();
        let watcher = FileWatcher::new(move |changed| {
            let changed: HashSet<PathBuf> = changed.into_iter().collect();
            let docs: Vec<PathBuf> = lock(&seen)
                .docs
                .iter()
                .filter(|(_, files)| files.iter().any(|f| changed.contains(f)))
                .map(|(doc, _)| doc.clone())
                .collect();
            for doc in docs {
                emit(Event::FileChanged {
                    path: doc.display().to_string(),
                });
            }
        })
        .map_err(|e| e.to_string())?;
        Ok(Watches { watcher, follow })
    }

    /// One more viewer of `doc`. On failure nothing is counted.
    pub fn follow(&self, doc: &Path) -> Result<(), String> {
        let mut f = lock(&self.follow);
        let n = f.viewers.get(doc).copied().unwrap_or(0);
        if n == 0 {
            let files = f.files_of(doc);
            self.watcher.subscribe(&files).map_err(|e| e.to_string())?;
            f.docs.insert(doc.to_path_buf(), files);
        }
        f.viewers.insert(doc.to_path_buf(), n + 1);
        Ok(())
    }

    /// One viewer fewer; the watches go with the last one.
    pub fn unfollow(&self, doc: &Path) {
        let mut f = lock(&self.follow);
        let Some(n) = f.viewers.get_mut(doc) else {
            return;
        };
        *n -= 1;
        if *n == 0 {
            f.viewers.remove(doc);
            if let Some(files) = f.docs.remove(doc) {
                self.watcher.unsubscribe(&files);
            }
        }
    }

    /// A LaTeX build of `doc` read `inputs`: they stand for the document from now on, and
    /// replace what is watched if anyone follows it.
    pub fn set_inputs(&self, doc: &Path, inputs: &[PathBuf]) {
        let mut f = lock(&self.follow);
        f.inputs.insert(doc.to_path_buf(), inputs.to_vec());
        if !f.viewers.contains_key(doc) {
            return;
        }
        let files = f.files_of(doc);
        if f.docs.get(doc) == Some(&files) {
            return;
        }
        // The new set first: on failure the old one stays, and nothing is counted twice.
        match self.watcher.subscribe(&files) {
            Ok(()) => {
                if let Some(old) = f.docs.insert(doc.to_path_buf(), files) {
                    self.watcher.unsubscribe(&old);
                }
            }
            Err(e) => tracing::warn!("cannot watch the inputs of {}: {e}", doc.display()),
        }
    }

    /// The files watched now (for tests and diagnostics).
    pub fn watched(&self) -> Vec<PathBuf> {
        self.watcher.watched()
    }
}

#[cfg(test)]
mod policy_tests {
    use super::*;

    /// The viewer's folder may contain Skald's data directory (a home folder does); its
    /// `secrets/` is never served, by any spelling of the path.
    #[test]
    fn skalds_secrets_are_never_served_even_inside_the_served_folder() {
        let home = tempfile::tempdir().unwrap();
        let home = std::fs::canonicalize(home.path()).unwrap();
        let data = home.join(".local/share/skald");
        std::fs::create_dir_all(data.join("secrets")).unwrap();
        std::fs::write(data.join("secrets/vault.key"), "key").unwrap();
        std::fs::write(home.join("notes.txt"), "notes").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(data.join("secrets"), home.join("shortcut")).unwrap();
        let store = Arc::new(Store::open_in_memory().unwrap());
        let policy = FilePolicy::new(store, home.clone(), home.join(".cache"), &data);
        assert!(policy.check("notes.txt", &home).is_ok());
        let mut tries = vec![
            data.join("secrets/vault.key").display().to_string(),
            ".local/share/skald/secrets/vault.key".to_string(),
            ".local/share/skald/x/../secrets/vault.key".to_string(),
            ".local/share/skald/secrets".to_string(),
        ];
        if cfg!(unix) {
            tries.push("shortcut/vault.key".to_string());
        }
        for raw in tries {
            let err = policy.check(&raw, &home).unwrap_err();
            assert!(err.contains("secrets folder"), "{raw}: {err}");
        }
    }
}
