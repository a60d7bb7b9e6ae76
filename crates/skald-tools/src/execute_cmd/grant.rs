//! What a call asks for beyond the sandbox (`sandbox_grant`): read from its arguments,
//! described to the user, and, once approved, the wider sandbox the command runs in.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use skald_api::{CommandSandbox, ToolError};
use std::path::PathBuf;

/// What `sandbox_grant` may hold (its descriptions are what the model reads).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct GrantArgs {
    /// Absolute folders it must also write.
    write: Option<Vec<String>>,
    /// It needs the network.
    network: Option<bool>,
    /// Absolute paths of local sockets the sandbox hides that it must reach (a docker socket); what listens there acts outside the sandbox.
    sockets: Option<Vec<String>>,
    /// It cannot work in the sandbox at all.
    unsandboxed: Option<bool>,
    /// Why, for the user.
    reason: Option<String>,
}

impl GrantArgs {
    /// The grant these ask for; None when they ask for nothing more.
    pub(super) fn into_grant(self) -> Result<Option<SandboxGrant>, ToolError> {
        let paths = |k: &str, list: Option<Vec<String>>| -> Result<Vec<PathBuf>, ToolError> {
            list.unwrap_or_default()
                .into_iter()
                .map(PathBuf::from)
                .map(|p| {
                    p.is_absolute().then_some(p).ok_or_else(|| {
                        ToolError::invalid("sandbox_grant", format!("`{k}` must list absolute paths"))
                    })
                })
                .collect()
        };
        let grant = SandboxGrant {
            write: paths("write", self.write)?,
            sockets: paths("sockets", self.sockets)?,
            network: self.network.unwrap_or(false),
            unsandboxed: self.unsandboxed.unwrap_or(false),
            reason: self.reason.unwrap_or_default(),
        };
        Ok((grant.unsandboxed
            || grant.network
            || !grant.write.is_empty()
            || !grant.sockets.is_empty())
        .then_some(grant))
    }
}

/// What a call asks for beyond the sandbox (`sandbox_grant`), approved by the user.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct SandboxGrant {
    pub write: Vec<PathBuf>,
    pub network: bool,
    /// Local sockets the sandbox hides (a docker socket, an agent's) that the command may
    /// reach: each unhidden by name, never by a folder holding it.
    pub sockets: Vec<PathBuf>,
    pub unsandboxed: bool,
    pub reason: String,
}

impl SandboxGrant {
    /// The grant a call's arguments ask for; None when they ask for nothing more. The
    /// approval gate reads it here, from the raw arguments, and the call from its own.
    pub fn from_args(args: &Value) -> Result<Option<SandboxGrant>, ToolError> {
        let Some(g) = args.get("sandbox_grant").filter(|g| !g.is_null()) else {
            return Ok(None);
        };
        let g: GrantArgs = serde_json::from_value(g.clone())
            .map_err(|e| ToolError::invalid("sandbox_grant", e.to_string()))?;
        g.into_grant()
    }

    /// Whether the grant asks for more than the network (which a rule can give).
    pub fn only_network(&self) -> bool {
        !self.unsandboxed && self.write.is_empty() && self.sockets.is_empty()
    }

    /// What the user is asked to allow, in one line.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if self.unsandboxed {
            parts.push("run with no sandbox".to_string());
        } else {
            if self.network {
                parts.push("use the network".to_string());
            }
            if !self.write.is_empty() {
                let list: Vec<String> =
                    self.write.iter().map(|p| p.display().to_string()).collect();
                parts.push(format!("also write {}", list.join(", ")));
            }
            if !self.sockets.is_empty() {
                let list: Vec<String> = self
                    .sockets
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect();
                parts.push(format!(
                    "reach the local socket{} {} (what listens there acts outside the sandbox)",
                    if list.len() == 1 { "" } else { "s" },
                    list.join(", ")
                ));
            }
        }
        let mut s = parts.join(" and ");
        if !self.reason.trim().is_empty() {
            s.push_str(&format!(" (the agent says: {})", self.reason.trim()));
        }
        s
    }

    /// The sandbox the command runs in once the grant is approved. The hidden paths stay
    /// hidden whatever folder is granted; a granted socket is unhidden by itself; only
    /// `unsandboxed` lifts them all.
    pub(super) fn widen(&self, sandbox: &CommandSandbox) -> Result<CommandSandbox, ToolError> {
        Ok(match sandbox {
            CommandSandbox::On { .. } if self.unsandboxed => CommandSandbox::Off,
            CommandSandbox::On {
                mode,
                helper,
                policy,
            } => {
                let mut policy = policy.clone();
                policy.network |= self.network;
                for w in &self.write {
                    let real = std::fs::canonicalize(w).unwrap_or_else(|_| w.clone());
                    if !policy.writable.contains(&real) {
                        policy.writable.push(real);
                    }
                }
                for socket in &self.sockets {
                    unhide_socket(&mut policy, socket)?;
                }
                CommandSandbox::On {
                    mode: *mode,
                    helper: helper.clone(),
                    policy,
                }
            }
            other => other.clone(),
        })
    }
}

/// Takes a granted socket out of the paths the sandbox hides. Only a socket, and only one
/// hidden by itself: a credential folder or Skald's data is not a socket, and a socket in a
/// hidden folder (`/run/user`, where the session bus runs anything unconfined) stays
/// hidden with the rest of it. One in `/tmp` or `/var/tmp` is out of sight in any case
/// (each command has its own), unless a folder bound back holds it.
pub(super) fn unhide_socket(
    policy: &mut skald_sandbox::Policy,
    socket: &std::path::Path,
) -> Result<(), ToolError> {
    let bad = |why: String| ToolError::invalid("sandbox_grant", why);
    let shown = socket.display();
    let real = std::fs::canonicalize(socket)
        .map_err(|e| bad(format!("`sockets`: {shown} cannot be reached ({e})")))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let kind = std::fs::metadata(&real)
            .map_err(|e| bad(format!("`sockets`: {shown} cannot be reached ({e})")))?
            .file_type();
        if !kind.is_socket() {
            return Err(bad(format!(
                "`sockets`: {shown} is not a socket; only a socket can be granted this way"
            )));
        }
    }
    let same = |m: &PathBuf| m == socket || std::fs::canonicalize(m).is_ok_and(|c| c == real);
    if let Some(folder) = policy
        .masked
        .iter()
        .find(|m| !same(m) && (real.starts_with(m) || socket.starts_with(m)))
    {
        return Err(bad(format!(
            "`sockets`: {shown} is inside {}, which stays hidden whole (what else is there \
             could act outside the sandbox too); it cannot be granted by itself",
            folder.display()
        )));
    }
    let private = skald_sandbox::PRIVATE_TMP
        .iter()
        .any(|t| real.starts_with(t));
    if private && !policy.writable.iter().any(|w| real.starts_with(w)) {
        return Err(bad(format!(
            "`sockets`: {shown} is in a temporary folder each sandboxed command sees empty, \
             its own; grant the folder holding it with `write` to reach it"
        )));
    }
    policy.masked.retain(|m| !same(m));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_socket_is_unhidden_by_name_and_nothing_else_is() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path().canonicalize().unwrap();
        let sock = dir.join("agent.sock");
        let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
        let hidden_dir = dir.join("hidden");
        std::fs::create_dir(&hidden_dir).unwrap();
        let inner = hidden_dir.join("bus");
        let _inner = std::os::unix::net::UnixListener::bind(&inner).unwrap();
        let keys = dir.join("keys");
        std::fs::write(&keys, "k").unwrap();
        let policy = || skald_sandbox::Policy {
            writable: vec![dir.clone()],
            masked: vec![sock.clone(), hidden_dir.clone(), keys.clone()],
            ..Default::default()
        };
        let mut p = policy();
        unhide_socket(&mut p, &sock).unwrap();
        assert_eq!(p.masked, vec![hidden_dir.clone(), keys.clone()]);
        for (path, why) in [
            (&keys, "is not a socket"),
            (&hidden_dir, "is not a socket"),
            (&inner, "stays hidden whole"),
        ] {
            let mut p = policy();
            let e = unhide_socket(&mut p, path).unwrap_err().to_string();
            assert!(e.contains(why), "{path:?}: {e}");
            assert_eq!(p.masked, policy().masked);
        }
        let e = unhide_socket(&mut policy(), &dir.join("none")).unwrap_err();
        assert!(e.to_string().contains("cannot be reached"), "{e}");
    }
}
