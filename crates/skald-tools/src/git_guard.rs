//! What a sandboxed command may leave in the chat's folder for git to act on later, outside
//! the sandbox. Git runs what a repository's configuration and hooks name
//! (`core.fsmonitor` on a plain `git status`, `core.hooksPath`, aliases, filters), and the
//! person's git — or their editor's, which runs `git status` by itself — runs it as them.
//! The sandbox keeps the existing repositories' configuration and hooks read-only; what it
//! cannot keep out by a mount is something new in a folder the command may write:
//!
//! - a `commondir` file in an existing `.git`, which sends git to another repository's
//!   configuration and hooks (removed);
//! - a repository the command made (`git init`, `cargo new`), whose configuration it wrote.
//!   A plain `git status` in the repository holding it runs that configuration's
//!   `core.fsmonitor` as soon as it is added as a gitlink (`git add sub`), and an editor
//!   opens such repositories by itself. Its configuration is cut down to settings that run
//!   nothing (the original kept beside it, unread by git), and executable hooks are set
//!   aside.
//!
//! Looked for when the command is over (and every few seconds while a background process
//! runs); each finding is a line of the command's result.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Entries one look at the folders reads, at most (as the sandbox's scan for `secrets/`).
const WALK_BUDGET: usize = 50_000;
/// Folders the walk does not enter: build output and package caches, big and written by
/// tools. A repository hidden in one is still found when a repository's index names it
/// (the way a plain `git status` reaches it).
const WALK_SKIP: &[&str] = &["node_modules", "target", ".cache", "__pycache__"];
/// Configuration a repository made in the sandbox keeps: settings that make git run
/// nothing. Everything else (`core.fsmonitor`, `core.hooksPath`, `core.pager`, aliases,
/// filters, `diff.*.textconv`, `include.path`, …) goes.
const KEPT: &[&str] = &[
    "core.repositoryformatversion",
    "core.filemode",
    "core.bare",
    "core.logallrefupdates",
    "core.ignorecase",
    "core.precomposeunicode",
    "core.symlinks",
    "core.autocrlf",
    "core.eol",
    "init.defaultbranch",
    "user.name",
    "user.email",
    "extensions.objectformat",
];
/// Kept in any `remote.<name>.` or `branch.<name>.` section.
const KEPT_REMOTE: &[&str] = &["url", "fetch", "pushurl"];
const KEPT_BRANCH: &[&str] = &["remote", "merge"];

/// The state of the folders before a sandboxed command: what was there may stay.
pub(crate) struct GitGuard {
    /// `commondir` files that did not exist in the existing repositories' `.git`.
    commondirs: Vec<PathBuf>,
    /// The folders the command may write.
    roots: Vec<PathBuf>,
    /// The `.git` folders and files there were before (the sandbox's scan).
    known: HashSet<PathBuf>,
    /// The existing repositories' `.git` folders, whose index may name a new gitlink.
    repos: Vec<PathBuf>,
    started: SystemTime,
}

impl GitGuard {
    pub(crate) fn before(policy: &skald_sandbox::Policy) -> GitGuard {
        let known: HashSet<PathBuf> = policy
            .pinned
            .iter()
            .chain(policy.read_only.iter().filter(|p| p.ends_with(".git")))
            .cloned()
            .collect();
        GitGuard {
            commondirs: policy
                .pinned
                .iter()
                .map(|git| git.join("commondir"))
                .filter(|file| file.symlink_metadata().is_err())
                .collect(),
            roots: policy.writable.clone(),
            known,
            repos: policy.pinned.clone(),
            // A second early: a file system's clock may lag the system's a little.
            started: SystemTime::now()
                .checked_sub(std::time::Duration::from_secs(1))
                .unwrap_or(SystemTime::UNIX_EPOCH),
        }
    }

    /// Undoes what the command left for git; a line for its result per finding.
    pub(crate) fn check(&self) -> String {
        let mut said = self.undo_commondirs();
        let mut seen = HashSet::new();
        for dot_git in self.new_repositories() {
            if seen.insert(dot_git.clone()) {
                said.push_str(&self.defuse(&dot_git));
            }
        }
        said
    }

    /// Removes each `commondir` the command made.
    fn undo_commondirs(&self) -> String {
        let mut said = String::new();
        for file in &self.commondirs {
            let Ok(meta) = file.symlink_metadata() else {
                continue;
            };
            let removed = if meta.is_dir() {
                std::fs::remove_dir_all(file)
            } else {
                std::fs::remove_file(file)
            };
            tracing::warn!(path = %file.display(), "execute_cmd: the command made a git redirect");
            said.push_str(&match removed {
                Ok(()) => format!(
                    "\n[sandbox: removed {}, which the command made: git would have followed it to another repository's hooks and configuration, outside the sandbox]",
                    file.display()
                ),
                Err(e) => format!(
                    "\n[sandbox: the command made {} and it could not be removed ({e}): remove it before running git here, or git runs another repository's hooks]",
                    file.display()
                ),
            });
        }
        said
    }

    /// The `.git` folders and files in the writable folders that were not there before:
    /// found by a walk (bounded, not entering build output), and named as gitlinks by an
    /// index the command changed.
    fn new_repositories(&self) -> Vec<PathBuf> {
        let mut found = Vec::new();
        let mut queue: std::collections::VecDeque<PathBuf> = self.roots.iter().cloned().collect();
        let mut seen = 0usize;
        'walk: while let Some(dir) = queue.pop_front() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                seen += 1;
                if seen > WALK_BUDGET {
                    break 'walk;
                }
                let name = entry.file_name();
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                if name == ".git" {
                    if !kind.is_symlink() && !self.known.contains(&entry.path()) {
                        found.push(entry.path());
                    }
                    continue;
                }
                if kind.is_dir() && !WALK_SKIP.iter().any(|s| name == *s) {
                    queue.push_back(entry.path());
                }
            }
        }
        for git in &self.repos {
            let index = git.join("index");
            let changed = index
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|t| t >= self.started);
            if !changed {
                continue;
            }
            let Some(worktree) = git.parent() else {
                continue;
            };
            for path in gitlinks(&index) {
                let dot_git = worktree.join(path).join(".git");
                if dot_git.symlink_metadata().is_ok() && !self.known.contains(&dot_git) {
                    found.push(dot_git);
                }
            }
        }
        found
    }

    /// Makes a repository the command made run nothing for git: its configuration cut to
    /// `KEPT`, its executable hooks and any redirect set aside. A `.git` file is followed to
    /// the folder it names when that is in the writable folders (elsewhere, the command
    /// could not have written it).
    fn defuse(&self, dot_git: &Path) -> String {
        let gitdir = if dot_git.is_dir() {
            dot_git.to_path_buf()
        } else {
            match pointed_to(dot_git) {
                Some(dir) if self.roots.iter().any(|r| dir.starts_with(r)) => {
                    if self.known.contains(&dir) {
                        return String::new();
                    }
                    dir
                }
                Some(_) => return String::new(),
                None => {
                    // Not a `gitdir:` line git could follow to a folder: out of git's way.
                    return match set_aside(dot_git) {
                        Ok(to) => format!(
                            "\n[sandbox: {} was made by the command and names no repository git could use; moved to {}]",
                            dot_git.display(),
                            to.display()
                        ),
                        Err(e) => format!(
                            "\n[sandbox: {} was made by the command and could not be moved aside ({e}): remove it before running git here]",
                            dot_git.display()
                        ),
                    };
                }
            }
        };
        let mut done = Vec::new();
        match cut_config(&gitdir.join("config")) {
            Ok(Some(dropped)) => done.push(format!(
                "its configuration was cut to settings that run nothing (dropped: {}; the original is config.sandboxed beside it)",
                dropped.join(", ")
            )),
            Ok(None) => {}
            Err(e) => done.push(format!("its configuration could not be checked ({e})")),
        }
        for name in ["commondir", "config.worktree"] {
            let file = gitdir.join(name);
            if file.symlink_metadata().is_ok() {
                match set_aside(&file) {
                    Ok(to) => done.push(format!("{name} was moved to {}", to.display())),
                    Err(e) => done.push(format!("{name} could not be moved aside ({e})")),
                }
            }
        }
        let hooks = gitdir.join("hooks");
        if has_runnable_hooks(&hooks) {
            match set_aside(&hooks) {
                Ok(to) => done.push(format!("its hooks were moved to {}", to.display())),
                Err(e) => done.push(format!("its hooks could not be moved aside ({e})")),
            }
        }
        if done.is_empty() {
            return String::new();
        }
        tracing::warn!(path = %gitdir.display(), "execute_cmd: the command made a repository that would run code");
        format!(
            "\n[sandbox: {} is a repository the command made; git run there later (by you, your editor, or a `git status` in a repository holding it) would run what it names outside the sandbox, so {}]",
            gitdir.display(),
            done.join("; ")
        )
    }
}

/// The folder a `.git` file's `gitdir:` line names, made absolute.
fn pointed_to(dot_git: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(dot_git).ok()?;
    let target = text.lines().next()?.strip_prefix("gitdir:")?.trim();
    if target.is_empty() {
        return None;
    }
    let target = dot_git.parent()?.join(target);
    std::fs::canonicalize(target).ok().filter(|d| d.is_dir())
}

/// The paths an index names as gitlinks (mode 160000): other repositories git enters.
fn gitlinks(index: &Path) -> Vec<PathBuf> {
    let Ok(index) = git2::Index::open(index) else {
        return Vec::new();
    };
    index
        .iter()
        .filter(|e| e.mode == 0o160000)
        .filter_map(|e| String::from_utf8(e.path).ok())
        .map(PathBuf::from)
        .collect()
}

/// Rewrites `config` with only the `KEPT` settings, the original moved to
/// `config.sandboxed`. `Some(dropped keys)` when anything went; `None` when nothing had to.
fn cut_config(config: &Path) -> Result<Option<Vec<String>>, String> {
    if config.symlink_metadata().is_err() {
        return Ok(None);
    }
    // libgit2 reads it without running anything; a file it cannot read is set aside whole.
    let entries: Result<Vec<(String, String)>, git2::Error> =
        git2::Config::open(config).and_then(|c| {
            let mut out = Vec::new();
            let mut all = c.entries(None)?;
            while let Some(entry) = all.next() {
                let entry = entry?;
                out.push((
                    entry.name().unwrap_or_default().to_string(),
                    entry.value().unwrap_or_default().to_string(),
                ));
            }
            Ok(out)
        });
    let (kept, dropped): (Vec<_>, Vec<_>) = match entries {
        Ok(e) => e.into_iter().partition(|(k, _)| kept_key(k)),
        Err(e) => (
            Vec::new(),
            vec![(format!("all (unreadable: {})", e.message()), String::new())],
        ),
    };
    let is_symlink = config
        .symlink_metadata()
        .is_ok_and(|m| m.file_type().is_symlink());
    if dropped.is_empty() && !is_symlink {
        return Ok(None);
    }
    set_aside(config).map_err(|e| e.to_string())?;
    std::fs::write(config, render(&kept)).map_err(|e| e.to_string())?;
    let mut names: Vec<String> = dropped.into_iter().map(|(k, _)| k).collect();
    if is_symlink {
        names.push("a link to another file".to_string());
    }
    names.dedup();
    Ok(Some(names))
}

fn kept_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    if KEPT.contains(&key.as_str()) {
        return true;
    }
    let parts: Vec<&str> = key.split('.').collect();
    match (parts.first(), parts.last()) {
        (Some(&"remote"), Some(last)) if parts.len() >= 3 => KEPT_REMOTE.contains(last),
        (Some(&"branch"), Some(last)) if parts.len() >= 3 => KEPT_BRANCH.contains(last),
        _ => false,
    }
}

/// `[section "sub"]\n\tkey = "value"` lines for the kept settings, in their order.
fn render(entries: &[(String, String)]) -> String {
    let mut out = String::new();
    let mut current = String::new();
    for (key, value) in entries {
        let Some((head, name)) = key.rsplit_once('.') else {
            continue;
        };
        let header = match head.split_once('.') {
            Some((section, sub)) => format!("[{section} \"{}\"]", escape(sub)),
            None => format!("[{head}]"),
        };
        if header != current {
            out.push_str(&header);
            out.push('\n');
            current = header;
        }
        out.push_str(&format!("\t{name} = \"{}\"\n", escape(value)));
    }
    out
}

/// A value or subsection in double quotes: backslashes and quotes escaped, line breaks
/// written as `\n` (a raw one would end the value).
fn escape(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
        .replace('\r', "")
}

/// Whether `hooks` holds a file git would run: executable, not a `.sample`.
fn has_runnable_hooks(hooks: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let Ok(entries) = std::fs::read_dir(hooks) else {
            // A link or file in its place is set aside too: git would follow it.
            return hooks.symlink_metadata().is_ok();
        };
        entries.flatten().any(|e| {
            let name = e.file_name();
            !name.to_string_lossy().ends_with(".sample")
                && std::fs::metadata(e.path()).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
        })
    }
    #[cfg(not(unix))]
    {
        hooks.exists()
    }
}

/// Renames `path` to `path.sandboxed` (or `.sandboxed-2`, … when taken), where git never
/// looks; the new path.
fn set_aside(path: &Path) -> std::io::Result<PathBuf> {
    let base = path.as_os_str().to_os_string();
    for n in 1..100 {
        let mut to = base.clone();
        to.push(if n == 1 {
            ".sandboxed".to_string()
        } else {
            format!(".sandboxed-{n}")
        });
        let to = PathBuf::from(to);
        if to.symlink_metadata().is_err() {
            std::fs::rename(path, &to)?;
            return Ok(to);
        }
    }
    Err(std::io::Error::other("too many set-aside copies already"))
}
