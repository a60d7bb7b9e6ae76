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
    /// Files that send git elsewhere or add settings (`commondir`, `config.worktree`) that
    /// did not exist in the existing repositories' `.git`.
    redirects: Vec<PathBuf>,
    /// The folders the command may write.
    roots: Vec<PathBuf>,
    /// The `.git` folders and files there were before (the sandbox's scan), with their
    /// identity (device, inode): a folder renamed away and a new repository made in its
    /// place is not what was known.
    known: std::collections::HashMap<PathBuf, Identity>,
    /// The existing repositories' `.git` folders, whose index may name a new gitlink.
    repos: Vec<PathBuf>,
    /// When the command started, as a change time (seconds): what changed after may be
    /// its doing. A change time, not a modification time: a command can set the latter
    /// back (`touch -d`), but not the former.
    started: i64,
    /// Whether a walk already said it could not look at everything (said once).
    said_incomplete: std::sync::atomic::AtomicBool,
}

impl GitGuard {
    pub(crate) fn before(policy: &skald_sandbox::Policy) -> GitGuard {
        let known = policy
            .pinned
            .iter()
            .chain(policy.read_only.iter().filter(|p| p.ends_with(".git")))
            .filter_map(|p| identity(p).map(|id| (p.clone(), id)))
            .collect();
        let now = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
        GitGuard {
            redirects: policy
                .pinned
                .iter()
                .flat_map(|git| [git.join("commondir"), git.join("config.worktree")])
                .filter(|file| file.symlink_metadata().is_err())
                .collect(),
            roots: policy.writable.clone(),
            known,
            repos: policy.pinned.clone(),
            // A second early: a file system's clock may lag the system's a little.
            started: now - 1,
            said_incomplete: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Undoes what the command left for git; a line for its result per finding.
    pub(crate) fn check(&self) -> String {
        let mut said = self.undo_redirects();
        let (found, notes) = self.new_repositories();
        said.push_str(&notes);
        let mut seen = HashSet::new();
        for dot_git in found {
            if seen.insert(dot_git.clone()) {
                // A configuration git's own library cannot take must not end the check
                // with nothing said: the repository is then set aside whole.
                let done = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    self.defuse(&dot_git)
                }));
                said.push_str(&done.unwrap_or_else(|_| set_aside_whole(&dot_git)));
            }
        }
        said
    }

    /// Only the quick part of `check`: the redirects in the existing repositories.
    pub(crate) fn check_redirects(&self) -> String {
        self.undo_redirects()
    }

    /// Removes each `commondir` and `config.worktree` the command made.
    fn undo_redirects(&self) -> String {
        let mut said = String::new();
        for file in &self.redirects {
            let Ok(meta) = file.symlink_metadata() else {
                continue;
            };
            let removed = if meta.is_dir() {
                std::fs::remove_dir_all(file)
            } else {
                std::fs::remove_file(file)
            };
            tracing::warn!(path = %file.display(), "execute_cmd: the command made a git redirect");
            let what = if file.ends_with("commondir") {
                "git would have followed it to another repository's hooks and configuration"
            } else {
                "git would have read settings from it that run programs"
            };
            said.push_str(&match removed {
                Ok(()) => format!(
                    "\n[sandbox: removed {}, which the command made: {what}, outside the sandbox]",
                    file.display()
                ),
                Err(e) => format!(
                    "\n[sandbox: the command made {} and it could not be removed ({e}): remove it before running git here ({what})]",
                    file.display()
                ),
            });
        }
        said
    }

    /// The repositories in the writable folders that were not there before, or that the
    /// command changed: `.git` folders, files and links found by a walk (bounded, not
    /// entering build output, though a repository at the top of such a folder is seen),
    /// folders laid out as a bare repository, and gitlinks an index the command changed
    /// names. With lines to say when something could not be looked at.
    fn new_repositories(&self) -> (Vec<PathBuf>, String) {
        let mut found = Vec::new();
        let mut notes = String::new();
        let mut queue: std::collections::VecDeque<PathBuf> = self.roots.iter().cloned().collect();
        let mut seen = 0usize;
        let mut incomplete = false;
        'walk: while let Some(dir) = queue.pop_front() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            // What git takes for a repository folder itself (a bare layout).
            let (mut head, mut objects, mut refs, mut common) = (false, false, false, false);
            for entry in entries.flatten() {
                seen += 1;
                if seen > WALK_BUDGET {
                    incomplete = true;
                    break 'walk;
                }
                let name = entry.file_name();
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                // As git's own test (`is_git_directory`): any kind of entry will do, and
                // a `commondir` stands in for `objects` and `refs`.
                head |= name == "HEAD";
                objects |= name == "objects";
                refs |= name == "refs";
                common |= name == "commondir";
                if name == ".git" {
                    if !self.is_known(&entry.path()) {
                        found.push(entry.path());
                    }
                    continue;
                }
                if !kind.is_dir() {
                    continue;
                }
                if WALK_SKIP.iter().any(|s| name == *s) {
                    // Not entered, but it may be a repository itself.
                    let path = entry.path();
                    let dot_git = path.join(".git");
                    if dot_git.symlink_metadata().is_ok() && !self.is_known(&dot_git) {
                        found.push(dot_git);
                    } else if looks_bare(&path) && self.changed(&path) {
                        found.push(path);
                    }
                    continue;
                }
                queue.push_back(entry.path());
            }
            let layout = head && ((objects && refs) || common);
            if layout && !dir.ends_with(".git") && self.changed(&dir) {
                found.push(dir);
            }
        }
        if incomplete
            && !self
                .said_incomplete
                .swap(true, std::sync::atomic::Ordering::Relaxed)
        {
            notes.push_str(&format!(
                "\n[sandbox: the folders hold more than {WALK_BUDGET} entries, so repositories the command may have made past them were not looked at: before running git in a folder it made, check that folder's .git/config]"
            ));
        }
        for git in &self.repos {
            let index = git.join("index");
            if !changed_since(&index, self.started) {
                continue;
            }
            let Some(worktree) = git.parent() else {
                continue;
            };
            let paths = match gitlinks(git, &index) {
                Ok(paths) => paths,
                Err(why) => {
                    notes.push_str(&format!(
                        "\n[sandbox: the command changed {} and it could not be read ({why}), so the repositories it names were not looked at: check them before running git in {}]",
                        index.display(),
                        worktree.display()
                    ));
                    continue;
                }
            };
            for path in paths {
                let dot_git = worktree.join(path).join(".git");
                if dot_git.symlink_metadata().is_ok() && !self.is_known(&dot_git) {
                    found.push(dot_git);
                }
            }
        }
        (found, notes)
    }

    /// Whether `path` is a `.git` that was there before, and is still the same one.
    fn is_known(&self, path: &Path) -> bool {
        self.known
            .get(path)
            .is_some_and(|id| identity(path) == Some(*id))
    }

    /// Whether the command may have changed the repository folder `gitdir`: it, its
    /// configuration or its hooks changed after it started.
    fn changed(&self, gitdir: &Path) -> bool {
        ["", "config", "hooks"]
            .iter()
            .any(|name| changed_since(&gitdir.join(name), self.started))
    }

    /// Makes a repository the command made run nothing for git: its configuration cut to
    /// `KEPT`, its executable hooks and any redirect set aside. A `.git` file is followed to
    /// the folder it names when that is in the writable folders (elsewhere, the command
    /// could not have written it).
    fn defuse(&self, dot_git: &Path) -> String {
        let is_link = dot_git
            .symlink_metadata()
            .is_ok_and(|m| m.file_type().is_symlink());
        let gitdir = if dot_git.is_dir() && !is_link {
            dot_git.to_path_buf()
        } else {
            let target = if is_link {
                std::fs::canonicalize(dot_git).ok().filter(|d| d.is_dir())
            } else {
                pointed_to(dot_git)
            };
            match target {
                Some(dir) if self.roots.iter().any(|r| dir.starts_with(r)) => {
                    if self.is_known(&dir) {
                        return String::new();
                    }
                    dir
                }
                // Elsewhere: somewhere the command could write all the same (its own
                // temporary folder, which outlives it), or a repository of the person's
                // that the command has no business sending git to.
                Some(dir) => {
                    return match set_aside(dot_git) {
                        Ok(to) => format!(
                            "\n[sandbox: {} was made by the command and sends git to {}, outside the folders it may write; moved to {}]",
                            dot_git.display(),
                            dir.display(),
                            to.display()
                        ),
                        Err(e) => format!(
                            "\n[sandbox: {} was made by the command and sends git to {}; it could not be moved aside ({e}): remove it before running git here]",
                            dot_git.display(),
                            dir.display()
                        ),
                    };
                }
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

/// The folder a `.git` file names, made absolute, read exactly as git reads it: the whole
/// file after `gitdir: `, less the line breaks at its end (not the first line, not trimmed:
/// git would follow a name with a line break or a space in it where a trimmed reading
/// would not). `None` for anything else, a link or FIFO in its place included.
fn pointed_to(dot_git: &Path) -> Option<PathBuf> {
    if !regular(dot_git) {
        return None;
    }
    let bytes = std::fs::read(dot_git).ok()?;
    let end = bytes
        .iter()
        .rposition(|b| *b != b'\n' && *b != b'\r')
        .map_or(0, |i| i + 1);
    let target = bytes[..end].strip_prefix(b"gitdir: ")?;
    if target.is_empty() {
        return None;
    }
    // A name that is not UTF-8 is not followed: the `.git` file is set aside instead.
    let target = dot_git.parent()?.join(std::str::from_utf8(target).ok()?);
    std::fs::canonicalize(target).ok().filter(|d| d.is_dir())
}

/// The paths an index names as gitlinks (mode 160000): other repositories git enters.
/// Read with git's library, or, for what it cannot read (a split index, a newer format),
/// with `git ls-files` on the repository — whose configuration and hooks the sandbox kept
/// read-only, so it runs nothing the command wrote; it is not asked to recurse.
fn gitlinks(git: &Path, index: &Path) -> Result<Vec<PathBuf>, String> {
    const GITLINK: u32 = 0o160000;
    if !regular(index) {
        return Err("it is not a regular file".to_string());
    }
    if let Ok(index) = git2::Index::open(index) {
        return Ok(index
            .iter()
            .filter(|e| e.mode == GITLINK)
            .filter_map(|e| String::from_utf8(e.path).ok())
            .map(PathBuf::from)
            .collect());
    }
    let program = git_program().ok_or("git is not installed where it can be found")?;
    let worktree = git.parent().unwrap_or(git);
    let mut child = std::process::Command::new(program)
        .args(["-c", "core.fsmonitor=false", "--git-dir"])
        .arg(git)
        .arg("--work-tree")
        .arg(worktree)
        .args(["ls-files", "--stage", "-z"])
        .env("GIT_INDEX_FILE", index)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| format!("git could not be run: {e}"))?;
    // Read beside the wait, so a big listing cannot fill the pipe; given up on after
    // `GIT_TIMEOUT` (an index made to hang git must not hang the check).
    let mut stdout = child.stdout.take();
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        if let Some(pipe) = stdout.as_mut() {
            let _ = std::io::Read::read_to_end(pipe, &mut out);
        }
        out
    });
    let by = std::time::Instant::now() + GIT_TIMEOUT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if std::time::Instant::now() < by => {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "git ls-files did not answer within {} s",
                    GIT_TIMEOUT.as_secs()
                ));
            }
        }
    };
    let out = reader.join().unwrap_or_default();
    if !status.success() {
        return Err(format!("git ls-files failed ({status})"));
    }
    // `MODE OBJECT STAGE\tPATH`, each ended by a NUL.
    Ok(out
        .split(|b| *b == 0)
        .filter_map(|line| {
            let text = std::str::from_utf8(line).ok()?;
            let (meta, path) = text.split_once('\t')?;
            meta.starts_with("160000 ").then(|| PathBuf::from(path))
        })
        .collect())
}

/// How long `git ls-files` may take on an index.
const GIT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// `git` on the absolute folders of `PATH` only: a relative one (`bin`) would find, from
/// the chat's folder, a `git` the command wrote.
fn git_program() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join("git"))
        .find(|candidate| {
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                std::fs::metadata(candidate)
                    .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            }
            #[cfg(not(unix))]
            {
                candidate.is_file()
            }
        })
}

/// Whether `path` changed (its inode: content, names in it, rights) at or after `since`.
fn changed_since(path: &Path, since: i64) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        path.symlink_metadata().is_ok_and(|m| m.ctime() >= since)
    }
    #[cfg(not(unix))]
    {
        let _ = since;
        path.symlink_metadata().is_ok()
    }
}

/// Whether `dir` is laid out as a repository folder (`HEAD`, `objects`, `refs`), which
/// git takes as one on its own.
fn looks_bare(dir: &Path) -> bool {
    let there = |name: &str| dir.join(name).symlink_metadata().is_ok();
    there("HEAD") && ((there("objects") && there("refs")) || there("commondir"))
}

/// A file's or folder's identity: its device and inode, not followed through a link.
type Identity = (u64, u64);

fn identity(path: &Path) -> Option<Identity> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        path.symlink_metadata().ok().map(|m| (m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        path.symlink_metadata().ok().map(|_| (0, 0))
    }
}

/// Whether `path` is a regular file (not a link, a FIFO that would hang a read, a device).
fn regular(path: &Path) -> bool {
    path.symlink_metadata()
        .is_ok_and(|m| m.file_type().is_file())
}

/// After a check that could not finish on `found` (a repository folder, or a `.git`
/// file or link): its configuration set aside whole, or else the `.git` entry itself.
fn set_aside_whole(found: &Path) -> String {
    let config = found.join("config");
    let target = if found.is_dir() && config.symlink_metadata().is_ok() {
        config
    } else {
        found.to_path_buf()
    };
    match set_aside(&target) {
        Ok(to) => format!(
            "\n[sandbox: {} could not be checked, so it was moved to {} whole: git there runs nothing the command wrote]",
            target.display(),
            to.display()
        ),
        Err(e) => format!(
            "\n[sandbox: {} could not be checked nor moved aside ({e}): do not run git there before looking at it]",
            target.display()
        ),
    }
}

/// Rewrites `config` with only the `KEPT` settings, as git's library read them — always,
/// even when nothing had to go: git and the library do not read every file alike (a
/// quote and a backslash can make the library take a line git reads as a setting for
/// part of a value), and the rewritten file is one both read the same. The original is
/// moved to `config.sandboxed` when anything went. `Some(dropped keys)` then; `None`
/// when the file held only kept settings.
fn cut_config(config: &Path) -> Result<Option<Vec<String>>, String> {
    let Ok(meta) = config.symlink_metadata() else {
        return Ok(None);
    };
    let is_symlink = meta.file_type().is_symlink();
    // Not opened unless a regular file: a FIFO would hang the read, a link lead elsewhere.
    let entries: Result<Vec<(String, String)>, String> = if meta.file_type().is_file() {
        // libgit2 reads it without running anything.
        git2::Config::open(config)
            .and_then(|c| {
                let mut out = Vec::new();
                let mut all = c.entries(None)?;
                while let Some(entry) = all.next() {
                    let entry = entry?;
                    // A key with no value (`[x] flag`) is git's shorthand for true.
                    let value = if entry.has_value() {
                        String::from_utf8_lossy(entry.value_bytes()).into_owned()
                    } else {
                        "true".to_string()
                    };
                    out.push((
                        String::from_utf8_lossy(entry.name_bytes()).into_owned(),
                        value,
                    ));
                }
                Ok(out)
            })
            .map_err(|e| e.message().to_string())
    } else {
        Err("not a regular file".to_string())
    };
    let (kept, dropped): (Vec<_>, Vec<_>) = match entries {
        Ok(e) => e.into_iter().partition(|(k, _)| kept_key(k)),
        Err(why) => (Vec::new(), vec![(format!("all ({why})"), String::new())]),
    };
    let rendered = render(&kept);
    if dropped.is_empty() && !is_symlink {
        // Nothing went; the file is still made the one both read alike.
        let same = std::fs::read(config).is_ok_and(|now| now == rendered.as_bytes());
        if !same {
            write_replacing(config, &rendered).map_err(|e| e.to_string())?;
        }
        return Ok(None);
    }
    set_aside(config).map_err(|e| e.to_string())?;
    write_replacing(config, &rendered).map_err(|e| e.to_string())?;
    let mut names: Vec<String> = dropped.into_iter().map(|(k, _)| k).collect();
    if is_symlink {
        names.push("a link to another file".to_string());
    }
    names.dedup();
    Ok(Some(names))
}

/// Writes `text` to a new file beside `path` and renames it over `path`: never a file
/// half written, and never through a link or FIFO put in its place.
fn write_replacing(path: &Path, text: &str) -> std::io::Result<()> {
    let mut name = path.as_os_str().to_os_string();
    name.push(".skald-new");
    let tmp = PathBuf::from(name);
    let _ = std::fs::remove_file(&tmp);
    {
        use std::io::Write;
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        file.write_all(text.as_bytes())?;
    }
    std::fs::rename(&tmp, path)
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
