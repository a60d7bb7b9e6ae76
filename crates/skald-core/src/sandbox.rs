//! The command sandbox as the engine sees it (docs/sandbox.md): the mode a run is in,
//! whether this machine can confine a command, and the policy each command gets. The
//! confinement itself is `skald-sandbox`'s; the gate's part is in `approval`.

use crate::approval::{RunContext, credential_paths};
pub use crate::config::SandboxSettings;
pub use skald_api::{CommandSandbox, SandboxInfo, SandboxMode};
use skald_base::path::canonicalize_for_policy;
use skald_sandbox::{Availability, Policy};
use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How one call's commands are confined: the run's sandbox for a command (it scans for
/// `secrets/` folders, so only a command gets one), with the network if the allow rule
/// that let it run gives it.
pub fn for_call(
    store: &skald_store::Store,
    run: &RunContext,
    tool: &str,
    args: &serde_json::Value,
) -> CommandSandbox {
    use skald_api::tool_names as tn;
    // A language server runs code of the project (rust-analyzer its build scripts): in
    // the chat's sandbox, without the network (docs/lsp.md).
    // A write tool asks the file's server afterwards (docs/lsp.md, "After an edit"): the
    // same sandbox.
    if crate::approval::starts_language_server(tool) || crate::approval::writes_files(tool) {
        let mut sandbox = command_sandbox(run);
        if let CommandSandbox::On { policy, .. } = &mut sandbox {
            policy.network = false;
        }
        return sandbox;
    }
    if tool != tn::EXECUTE_CMD {
        return CommandSandbox::Off;
    }
    let mut sandbox = command_sandbox(run);
    if let CommandSandbox::On { policy, .. } = &mut sandbox {
        // A planning chat's commands have no network, whatever a rule gives.
        policy.network |=
            !run.is_planning() && crate::approval::rule_gives_network(store, run, tool, args);
    }
    sandbox
}

/// How the commands of a call in this run are confined.
pub fn command_sandbox(run: &RunContext) -> CommandSandbox {
    let mode = run.sandbox.mode;
    if mode == SandboxMode::Off {
        return CommandSandbox::Off;
    }
    match skald_sandbox::availability() {
        Availability::Unavailable { why } => CommandSandbox::Unavailable {
            mode,
            why: why.clone(),
        },
        Availability::Ready { helper, .. } => CommandSandbox::On {
            mode,
            helper: helper.clone(),
            policy: policy(run),
        },
    }
}

/// The helper and policy of a stdio MCP server set to run in the sandbox: it writes only a
/// temporary folder of its own (added when it starts), cannot read what commands cannot,
/// and has the network only if `network`. Where the sandbox does not work the server is
/// not started: the user asked for it sandboxed.
pub fn server_sandbox(
    name: &str,
    withheld: &crate::withheld::Withheld,
    network: bool,
) -> Result<(PathBuf, Policy), String> {
    let helper = match skald_sandbox::availability() {
        Availability::Ready { helper, .. } => helper.clone(),
        Availability::Unavailable { why } => {
            return Err(format!(
                "`{name}` is set to run in the sandbox, which is not available here ({why}); \
                 it was not started"
            ));
        }
    };
    let masked = always_hidden(
        withheld
            .folders()
            .into_iter()
            .chain(withheld.from_commands()),
    );
    Ok((
        helper,
        Policy {
            masked,
            network,
            ..Policy::default()
        },
    ))
}

/// The policy of a run's commands: where they write, what they cannot read, the network.
pub fn policy(run: &RunContext) -> Policy {
    let canonical = |p: &Path| canonicalize_for_policy(p, &run.working_dir);
    // The grants are stored canonical when given and used as they are: resolving one again
    // would follow a link a command swapped in for a granted folder inside the chat's
    // folder, and make the link's target writable (the helper then also refuses a link on
    // any writable path, `confine::writable_exactly`).
    let granted = |dirs: &[PathBuf]| -> Vec<PathBuf> {
        dirs.iter().filter(|d| d.is_absolute()).cloned().collect()
    };
    // A chat in a worktree never writes the folder it copies: a write grant inside it, or
    // one holding it (the home folder), is not given to its commands.
    let reaches_source = |d: &PathBuf| {
        run.worktree_source.as_ref().is_some_and(|source| {
            skald_base::path::path_under(d, source) || skald_base::path::path_under(source, d)
        })
    };
    let writable: Vec<PathBuf> = match run.sandbox.mode {
        SandboxMode::WorkspaceWrite => std::iter::once(crate::approval::folder(&run.working_dir))
            .chain(
                granted(&run.allow_fs_writes)
                    .into_iter()
                    .filter(|d| !reaches_source(d)),
            )
            .collect(),
        SandboxMode::ReadOnly | SandboxMode::Off => Vec::new(),
    };
    let mut masked = always_hidden(
        run.protected
            .iter()
            .chain(&run.hidden_from_commands)
            .map(|p| canonical(p)),
    );
    let roots: Vec<PathBuf> = std::iter::once(crate::approval::folder(&run.working_dir))
        .chain(granted(&run.allow_fs_writes))
        .chain(granted(&run.allow_fs_reads))
        .collect();
    for root in roots {
        masked.extend(secrets_folders(&root));
    }
    masked.sort();
    masked.dedup();
    let (pinned, read_only) = run_later(&writable);
    Policy {
        writable,
        masked,
        network: run.sandbox.network,
        read_only,
        pinned,
    }
}

/// What no sandboxed process reads, wherever it runs: `own` (Skald's secrets and data
/// directory) with the credential folders and the escape sockets; sorted, once each.
fn always_hidden(own: impl IntoIterator<Item = PathBuf>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = own.into_iter().collect();
    out.extend(credential_paths().iter().cloned());
    out.extend(escape_sockets());
    out.sort();
    out.dedup();
    out
}

/// Local sockets a command could use to have something outside the sandbox act for it:
/// the session bus (`systemd-run --user`), the system bus, the container engines, the
/// display, the SSH and GPG agents, screen's sessions. Abstract sockets are Landlock's
/// (scoped); whatever listens in `/tmp` or `/var/tmp` (tmux, an editor's server, any
/// daemon) is out of sight, since commands see private ones (`skald_sandbox::PRIVATE_TMP`).
fn escape_sockets() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = [
        "/run/user",
        "/run/screen",
        "/var/run/screen",
        "/run/dbus",
        "/var/run/dbus",
        "/run/systemd/private",
        "/run/docker.sock",
        "/var/run/docker.sock",
        "/run/containerd",
        "/run/podman",
        "/tmp/.X11-unix",
        "/tmp/.ICE-unix",
    ]
    .iter()
    .map(PathBuf::from)
    .collect();
    for var in [
        "XDG_RUNTIME_DIR",
        "SSH_AUTH_SOCK",
        "GPG_AGENT_INFO",
        "DBUS_SESSION_BUS_ADDRESS",
    ] {
        let Some(value) = std::env::var_os(var) else {
            continue;
        };
        let value = value.to_string_lossy().to_string();
        // `unix:path=/run/user/1000/bus,guid=…` or a plain path (GPG's has `:pid:1`).
        let path = value
            .strip_prefix("unix:path=")
            .unwrap_or(&value)
            .split([',', ':'])
            .next()
            .unwrap_or_default()
            .to_string();
        if path.starts_with('/') {
            out.push(PathBuf::from(path));
        }
    }
    out.into_iter().filter(|p| p.exists()).collect()
}

/// How long a scan of a folder for `secrets/` folders is reused: a command runs many
/// times a minute, and a new secrets folder made by hand shows up within this.
const SCAN_REUSE: Duration = Duration::from_secs(10);
/// Entries one scan looks at, at most: a home folder must not make every command slow.
const SCAN_BUDGET: usize = 50_000;
/// Folders the scan does not enter: build output and package caches, big and written
/// by tools, not by people keeping keys.
const SCAN_SKIP: &[&str] = &[".git", "node_modules", "target", ".cache", "__pycache__"];

/// What a scan of a folder found, breadth first so the shallow ones come first if the
/// budget runs out. Symlinks are not followed: a mask or a bind goes on the folder itself,
/// wherever it is reached from.
#[derive(Clone, Default)]
struct Scanned {
    /// `secrets/` folders (the root itself, if it is one).
    secrets: Vec<PathBuf>,
    /// Repositories' `.git` folders and projects' `.skald` folders: what programs outside
    /// the sandbox run later (git's hooks and configuration, a project's hooks).
    run_later: Vec<PathBuf>,
}

/// The `secrets/` folders in `root` (itself included): see `Scanned`.
pub fn secrets_folders(root: &Path) -> Vec<PathBuf> {
    scanned(root).secrets
}

/// The `.git` and `.skald` folders in `root` (itself included): see `Scanned`.
pub fn run_later_folders(root: &Path) -> Vec<PathBuf> {
    scanned(root).run_later
}

fn scanned(root: &Path) -> Scanned {
    /// A scan's answer and when it was made, by root.
    type Scans = HashMap<PathBuf, (Instant, Scanned)>;
    static CACHE: Mutex<Option<Scans>> = Mutex::new(None);
    if let Some((at, found)) = crate::lock(&CACHE)
        .get_or_insert_with(HashMap::new)
        .get(root)
        && at.elapsed() < SCAN_REUSE
    {
        return found.clone();
    }
    let found = scan(root);
    crate::lock(&CACHE)
        .get_or_insert_with(HashMap::new)
        .insert(root.to_path_buf(), (Instant::now(), found.clone()));
    found
}

/// The names of the folders `Scanned::run_later` holds.
const RUN_LATER: &[&str] = &[".git", ".skald"];

fn scan(root: &Path) -> Scanned {
    let mut found = Scanned::default();
    if crate::approval::secrets_folder_of(root, Path::new("/")).is_some() {
        found.secrets.push(root.to_path_buf());
        return found;
    }
    let mut queue = VecDeque::from([root.to_path_buf()]);
    let mut seen = 0usize;
    while let Some(dir) = queue.pop_front() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > SCAN_BUDGET {
                return found;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let name = entry.file_name();
            // A checkout of a submodule or a worktree has a `.git` file naming its
            // repository: repointed, it would send git to one the command made.
            if kind.is_file() && name == ".git" {
                found.run_later.push(entry.path());
            }
            if !kind.is_dir() {
                continue;
            }
            if RUN_LATER.iter().any(|s| name == *s) {
                found.run_later.push(entry.path());
            }
            if crate::approval::is_secrets_name(&name) {
                found.secrets.push(entry.path());
            } else if !SCAN_SKIP.iter().any(|s| name == *s) && name != ".skald" {
                queue.push_back(entry.path());
            }
        }
    }
    found
}

/// What of the writable folders runs later outside the sandbox, kept from commands:
/// `(pinned, read_only)` for the policy. Each repository's `.git` is pinned (a command
/// may commit, but not rename it and make another), its `hooks` and `config` are
/// read-only (`core.hooksPath`, `core.fsmonitor`, aliases and filters live there); a
/// project's `.skald` is read-only whole. A `.git` without a `hooks` folder gets an empty
/// one first, as `git init` makes, so a command cannot make it.
fn run_later(writable: &[PathBuf]) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let (mut pinned, mut read_only) = (Vec::new(), Vec::new());
    for root in writable {
        for dir in run_later_folders(root) {
            if dir.file_name().is_some_and(|n| n == ".git") && !dir.is_dir() {
                read_only.push(dir);
            } else if dir.file_name().is_some_and(|n| n == ".git") {
                // Submodules' and worktrees' repositories have their own hooks and
                // configuration (git reads a submodule's on a plain `git status`). Each
                // is made if missing, so that there is a folder to bind read-only: one the
                // command made would hold configuration it wrote.
                for name in ["hooks", "modules", "worktrees"] {
                    let sub = dir.join(name);
                    if !sub.exists() {
                        let _ = std::fs::create_dir(&sub);
                    }
                    read_only.push(sub);
                }
                read_only.push(dir.join("config"));
                // Read too when `extensions.worktreeConfig` is on; one the command makes
                // where there was none is removed after it (`GitGuard`).
                let worktree_config = dir.join("config.worktree");
                if worktree_config.exists() {
                    read_only.push(worktree_config);
                }
                pinned.push(dir);
            } else {
                read_only.push(dir);
            }
        }
    }
    for list in [&mut pinned, &mut read_only] {
        list.sort();
        list.dedup();
    }
    (pinned, read_only)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_secrets_folder_under_the_roots_is_found_and_symlinks_are_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for p in [
            "secrets/k",
            "app/config/secrets/db",
            "deep/a/b/c/d/secrets/x",
        ] {
            let path = root.join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x").unwrap();
        }
        std::os::unix::fs::symlink(root.join("app"), root.join("link")).unwrap();
        let mut found = secrets_folders(&root);
        found.sort();
        assert_eq!(
            found,
            vec![
                root.join("app/config/secrets"),
                root.join("deep/a/b/c/d/secrets"),
                root.join("secrets"),
            ]
        );
    }

    #[test]
    fn a_workspace_write_policy_writes_the_folder_and_grants_and_hides_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("chat/secrets")).unwrap();
        std::fs::create_dir_all(root.join("grant")).unwrap();
        let mut run = RunContext {
            working_dir: root.join("chat"),
            allow_fs_writes: vec![root.join("grant")],
            hidden_from_commands: vec![root.join("data")],
            ..RunContext::default()
        };
        run.sandbox.mode = SandboxMode::WorkspaceWrite;
        let p = policy(&run);
        assert_eq!(p.writable, vec![root.join("chat"), root.join("grant")]);
        assert!(p.masked.contains(&root.join("chat/secrets")));
        assert!(p.masked.contains(&root.join("data")));
        assert!(!p.network);
        run.sandbox.mode = SandboxMode::ReadOnly;
        assert!(policy(&run).writable.is_empty());
    }

    #[test]
    fn every_repository_and_project_hooks_folder_in_the_writable_folders_is_kept_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for d in [
            "chat/.git/hooks",
            "chat/.skald",
            "chat/libs/dep/.git",
            "chat/node_modules/pkg/.git/hooks",
            "grant/.git/hooks",
            "elsewhere/.git/hooks",
            "chat/sub",
        ] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        // A submodule's checkout: a `.git` file naming its repository.
        std::fs::write(root.join("chat/sub/.git"), "gitdir: ../.git/modules/sub\n").unwrap();
        let mut run = RunContext {
            working_dir: root.join("chat"),
            allow_fs_writes: vec![root.join("grant")],
            ..RunContext::default()
        };
        run.sandbox.mode = SandboxMode::WorkspaceWrite;
        let p = policy(&run);
        assert_eq!(
            p.pinned,
            vec![
                root.join("chat/.git"),
                root.join("chat/libs/dep/.git"),
                root.join("grant/.git"),
            ]
        );
        assert_eq!(
            p.read_only,
            vec![
                root.join("chat/.git/config"),
                root.join("chat/.git/hooks"),
                root.join("chat/.git/modules"),
                root.join("chat/.git/worktrees"),
                root.join("chat/.skald"),
                root.join("chat/libs/dep/.git/config"),
                root.join("chat/libs/dep/.git/hooks"),
                root.join("chat/libs/dep/.git/modules"),
                root.join("chat/libs/dep/.git/worktrees"),
                root.join("chat/sub/.git"),
                root.join("grant/.git/config"),
                root.join("grant/.git/hooks"),
                root.join("grant/.git/modules"),
                root.join("grant/.git/worktrees"),
            ]
        );
        // The nested repository had no hooks folder: it has an empty one now.
        assert!(root.join("chat/libs/dep/.git/hooks").is_dir());
        // Nothing is writable read-only: nothing to keep.
        run.sandbox.mode = SandboxMode::ReadOnly;
        let p = policy(&run);
        assert!(p.pinned.is_empty() && p.read_only.is_empty());
    }
}
