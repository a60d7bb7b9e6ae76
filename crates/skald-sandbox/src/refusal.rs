//! Telling the model what the sandbox refused, from what the command printed.
//!
//! The kernel says only "Permission denied" or "Operation not permitted", and says it to the
//! command, not to Skald (Landlock's audit records need root and auditd). So this reads the
//! command's output the way a person would: an error that names a hidden path is a refused
//! read; a refusal that names a path outside the writable folders is a refused write; a
//! connection error while the network is off is the network. It can miss a refusal the
//! command did not print, and it only ever adds an explanation: the exit code and the
//! output reach the model unchanged.

use crate::Policy;
use std::path::{Path, PathBuf};

/// One thing the sandbox (probably) refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// A read of a hidden file or folder (a `secrets/` folder, credentials, Skald's data).
    Read(PathBuf),
    /// A write outside the folders the command may write.
    Write(PathBuf),
    /// A look into another process (`/proc/<pid>/environ`, `mem`): Skald's among them.
    Process(PathBuf),
    /// A path in `/tmp` or `/var/tmp` outside the command's own folders: each command sees
    /// private, empty ones (other programs' files and sockets are there).
    Private(PathBuf),
    /// A change to what runs later outside the sandbox (`Policy::read_only`, or moving a
    /// `Policy::pinned` folder): git's hooks and configuration, a project's `.skald`.
    RunsLater(PathBuf),
    /// A network connection while the network is off.
    Network,
}

impl Refusal {
    /// One line for the model and the user.
    pub fn describe(&self) -> String {
        match self {
            Refusal::Read(p) => format!(
                "reading {} was refused: it is hidden from commands (secrets, credentials or \
                 Skald's own data)",
                p.display()
            ),
            Refusal::Write(p) => format!(
                "writing {} was refused: it is outside the folders this command may write",
                p.display()
            ),
            Refusal::Process(p) => format!(
                "reading {} was refused: processes outside the sandbox are closed to commands",
                p.display()
            ),
            Refusal::Private(p) => format!(
                "{} is out of sight: each command sees its own empty /tmp and /var/tmp (other \
                 programs' files and sockets are there) with only its working folders in them",
                p.display()
            ),
            Refusal::RunsLater(p) => format!(
                "changing {} was refused: it is read-only for sandboxed commands because it \
                 runs later outside the sandbox (git hooks and configuration, a project's \
                 .skald); a change there needs the command run outside the sandbox, with \
                 approval",
                p.display()
            ),
            Refusal::Network => "a network connection was refused: the network is off for \
                                 this command"
                .to_string(),
        }
    }
}

const DENIED: &[&str] = &[
    "permission denied",
    "operation not permitted",
    "read-only file system",
    "eacces",
    "eperm",
    "erofs",
];
/// How a refused change to a read-only or pinned path shows besides `DENIED`.
const FAILED: &[&str] = &[
    "device or resource busy",
    "ebusy",
    "could not commit",
    "could not lock",
    "unable to",
    "cannot",
];
/// What a hidden path looks like from inside: an empty folder, or nothing at all.
const MISSING: &[&str] = &[
    "no such file or directory",
    "directory nonexistent",
    "not a directory",
    "enoent",
];
const NETWORK: &[&str] = &[
    "could not resolve host",
    "temporary failure in name resolution",
    "name or service not known",
    "network is unreachable",
    "failed to connect",
    "couldn't connect",
    "could not connect",
    "connection refused",
    "failed to create socket",
];

/// Most refusals one result names; a command that fails on every file says so enough.
const MAX: usize = 5;

/// What the sandbox refused a command, as far as its `output` shows. `workdir` resolves
/// the relative paths it printed. A script can go on after a refusal and end well, so
/// paths are looked for whatever the exit; connection errors only when it failed (a
/// successful test run may well log "connection refused").
pub fn explain(policy: &Policy, workdir: &Path, success: bool, output: &str) -> Vec<Refusal> {
    let mut out: Vec<Refusal> = Vec::new();
    // Planned only when a line needs it: most commands end with nothing refused.
    let mut masks: Option<Vec<std::path::PathBuf>> = None;
    let mut kept: Option<Vec<std::path::PathBuf>> = None;
    let whole = output.to_lowercase();
    let about_sockets = whole.contains("socket") || whole.contains("connect");
    let mut network = false;
    for line in output.lines() {
        let lower = line.to_lowercase();
        let denied = DENIED.iter().any(|w| lower.contains(w));
        // Renaming over or removing a mount point is "busy"; git says it could not
        // commit or lock its configuration.
        let failed = denied || FAILED.iter().any(|w| lower.contains(w));
        let missing = MISSING.iter().any(|w| lower.contains(w));
        let mut named = false;
        let runs_later = |p: &Path| {
            policy.read_only.iter().any(|r| p.starts_with(r))
                || policy.pinned.iter().any(|r| p == r.as_path())
        };
        // Git names its files relative and bare, before a colon (`error: could not write
        // config file .git/config: …`): looked for here only, where the paths are known.
        if failed {
            for token in line
                .split_whitespace()
                .filter(|t| t.ends_with(':') && t.contains('/'))
            {
                let p = normalize(&workdir.join(token.trim_end_matches(':')));
                let refusal = Refusal::RunsLater(p.clone());
                if runs_later(&p) && !out.contains(&refusal) {
                    out.push(refusal);
                    named = true;
                }
            }
        }
        for p in paths_in(line, workdir) {
            let refusal = if failed && runs_later(&p) {
                Refusal::RunsLater(p)
            } else if (denied || missing)
                && masks
                    .get_or_insert_with(|| crate::plan_masks(&policy.masked, &policy.writable))
                    .iter()
                    .any(|m| p.starts_with(m))
            {
                Refusal::Read(p)
            } else if (denied || missing)
                && crate::tmp::private_tmp_folders()
                    .iter()
                    .any(|t| p.starts_with(t))
                && !kept
                    .get_or_insert_with(|| {
                        crate::seen_in_private_tmp(
                            policy
                                .writable
                                .iter()
                                .map(PathBuf::as_path)
                                .chain([workdir]),
                        )
                    })
                    .iter()
                    .any(|k| p.starts_with(k))
            {
                Refusal::Private(p)
            } else if denied && (p.starts_with("/proc") || p.starts_with("/sys")) {
                // Not a write: a look into another process, or a kernel setting.
                if p.starts_with("/proc")
                    && p.components().nth(2).is_some_and(|c| {
                        c.as_os_str()
                            .to_string_lossy()
                            .chars()
                            .all(|ch| ch.is_ascii_digit())
                    })
                {
                    Refusal::Process(p)
                } else {
                    continue;
                }
            } else if denied && !policy.writable.iter().any(|w| p.starts_with(w)) {
                Refusal::Write(p)
            } else {
                continue;
            };
            named = true;
            if !out.contains(&refusal) {
                out.push(refusal);
            }
        }
        // A connection error, or a bare refusal in output about sockets (Python prints the
        // `socket(...)` call and the `Operation not permitted` on different lines).
        network |=
            !named && (NETWORK.iter().any(|w| lower.contains(w)) || (denied && about_sockets));
    }
    if network && !policy.network && !success {
        out.push(Refusal::Network);
    }
    out.truncate(MAX);
    out
}

/// The paths a line of error output names: absolute ones anywhere, relative ones when
/// quoted or before a colon (`touch: cannot touch 'x'`, `sh: 1: cannot create x: …`).
fn paths_in(line: &str, workdir: &Path) -> Vec<PathBuf> {
    let trim = |t: &str| {
        t.trim_matches(|c: char| {
            matches!(
                c,
                '\'' | '"' | '`' | '‘' | '’' | '“' | '”' | ':' | ',' | ';' | '(' | ')' | '[' | ']'
            )
        })
        .to_string()
    };
    let mut out = Vec::new();
    let mut push = |raw: &str| {
        let p = if let Some(rest) = raw.strip_prefix("~/") {
            match std::env::var_os("HOME") {
                Some(h) => PathBuf::from(h).join(rest),
                None => return,
            }
        } else {
            workdir.join(raw)
        };
        let p = normalize(&p);
        if !out.contains(&p) {
            out.push(p);
        }
    };
    for token in line.split_whitespace() {
        let quoted = token.starts_with(['\'', '"', '`', '‘', '“']);
        let t = trim(token);
        if t.is_empty() || t.contains("://") {
            continue;
        }
        if t.starts_with('/') || t.starts_with("~/") || (quoted && t != ".") {
            push(&t);
        }
    }
    // `sh: 1: cannot create out.txt: Permission denied`: the name before the last colon.
    if let Some((before, _)) = line.rsplit_once(": ")
        && let Some(last) = before.rsplit(": ").next()
        && let Some(name) = last.strip_prefix("cannot create ")
    {
        push(&trim(name));
    }
    out
}

fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> Policy {
        Policy {
            writable: vec![
                PathBuf::from("/work/chat"),
                PathBuf::from("/tmp/skald-cmd-1"),
            ],
            masked: vec![
                PathBuf::from("/home/u/.ssh"),
                PathBuf::from("/work/chat/secrets"),
            ],
            network: false,
            ..Policy::default()
        }
    }

    fn explained(out: &str) -> Vec<Refusal> {
        explain(&policy(), Path::new("/work/chat"), false, out)
    }

    #[test]
    fn writes_outside_are_named_whatever_tool_printed_them() {
        assert_eq!(
            explained("sh: 1: cannot create /home/u/x: Permission denied"),
            vec![Refusal::Write("/home/u/x".into())]
        );
        assert_eq!(
            explained("touch: cannot touch '/etc/passwd': Read-only file system"),
            vec![Refusal::Write("/etc/passwd".into())]
        );
        assert_eq!(
            explained("sh: 1: cannot create ../up.txt: Permission denied"),
            vec![Refusal::Write("/work/up.txt".into())]
        );
        // Inside the chat's folder a permission error is the file's own, not the sandbox's.
        assert!(explained("cat: /work/chat/locked: Permission denied").is_empty());
    }

    #[test]
    fn paths_in_the_private_temporary_folders_outside_its_own_are_named() {
        let Some(tmp) = crate::tmp::private_tmp_folders().first() else {
            return; // No /tmp on this machine: nothing is made private.
        };
        let other = tmp.join("tmux-1000/default");
        assert_eq!(
            explained(&format!(
                "error connecting to {} (No such file or directory)",
                other.display()
            )),
            vec![Refusal::Private(other.clone())]
        );
        assert_eq!(
            explained(&format!(
                "sh: 1: cannot create {}/x: Directory nonexistent",
                tmp.join("elsewhere").display()
            )),
            vec![Refusal::Private(tmp.join("elsewhere/x"))]
        );
        // Its own temporary folder (a writable one) is there, as it was.
        assert!(explained("cat: /tmp/skald-cmd-1/gone: No such file or directory").is_empty());
    }

    #[test]
    fn reads_of_hidden_paths_are_named_even_when_they_look_missing() {
        assert_eq!(
            explained("cat: /home/u/.ssh/id_ed25519: No such file or directory"),
            vec![Refusal::Read("/home/u/.ssh/id_ed25519".into())]
        );
        assert_eq!(explained("cat: secrets/key: Permission denied"), vec![]);
        assert_eq!(
            explained("cat: 'secrets/key': Permission denied"),
            vec![Refusal::Read("/work/chat/secrets/key".into())]
        );
    }

    #[test]
    fn connection_errors_are_the_network_only_while_it_is_off() {
        let curl = "curl: (7) Failed to connect to 127.0.0.1 port 8080: Couldn't connect to server";
        assert_eq!(explained(curl), vec![Refusal::Network]);
        let python = "  File \"socket.py\", line 232, in __init__\n    _socket.socket.__init__(self)\n\
                      PermissionError: [Errno 1] Operation not permitted";
        assert_eq!(explained(python), vec![Refusal::Network]);
        assert_eq!(
            explained("cat: /proc/4242/environ: Permission denied"),
            vec![Refusal::Process("/proc/4242/environ".into())]
        );
        let on = Policy {
            network: true,
            ..policy()
        };
        assert!(explain(&on, Path::new("/work/chat"), false, curl).is_empty());
    }

    #[test]
    fn a_command_that_succeeded_is_told_about_paths_but_not_about_connection_errors() {
        assert_eq!(
            explain(
                &policy(),
                Path::new("/w"),
                true,
                "sh: 1: cannot create /etc/x: Permission denied"
            ),
            vec![Refusal::Write("/etc/x".into())]
        );
        assert!(
            explain(
                &policy(),
                Path::new("/w"),
                true,
                "retrying: connection refused"
            )
            .is_empty()
        );
    }
}
