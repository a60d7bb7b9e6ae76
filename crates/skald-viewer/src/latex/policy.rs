//! What a LaTeX build may read and write: the names TeX, BibTeX and xdvipdfmx ask for
//! are judged here before anything is opened.
//!
//! - Every name must be relative and free of `..`: `/etc/passwd`, `../x` and
//!   `sub/../../x` are refused, for reading and for writing alike.
//! - Writes go to the build's memory, later its work folder, and nowhere else.
//! - Reads come from the document's folder tree — the name joined to the folder, then
//!   canonicalised, so a symlink pointing out is judged by where it points — and never
//!   from a `secrets/` folder at any depth below it (the name's or the target's), nor
//!   from under a folder of the deny list (credential folders, Skald's own secrets);
//!   else from the build's own intermediates and the TeX bundle.

use std::path::{Component, Path, PathBuf};

/// Why a name was refused; the message says it for the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Reason {
    Absolute,
    ParentDir,
    Outside,
    Secrets,
    Denied(PathBuf),
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Reason::Absolute => f.write_str("refused: absolute path"),
            Reason::ParentDir => f.write_str("refused: `..` leaves the document's folder"),
            Reason::Outside => f.write_str("refused: outside the document's folder"),
            Reason::Secrets => f.write_str("refused: in a secrets/ folder"),
            Reason::Denied(dir) => {
                write!(f, "refused: in a protected folder ({})", dir.display())
            }
        }
    }
}

/// A name as TeX asked for it, and why it was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    pub name: String,
    pub write: bool,
    pub reason: Reason,
}

impl Refusal {
    pub fn message(&self) -> String {
        let action = if self.write { "write" } else { "read" };
        format!("cannot {action} `{}`: {}", self.name, self.reason)
    }
}

fn is_secrets(c: Component<'_>) -> bool {
    matches!(c, Component::Normal(n) if n.to_str().is_some_and(|s| s.eq_ignore_ascii_case("secrets")))
}

/// Any name: relative, no `..`.
pub(crate) fn check_name(name: &str) -> Result<(), Reason> {
    let path = Path::new(name);
    // `has_root` also catches `\x` on Windows; a prefix is a drive (`C:`).
    if path.is_absolute() || path.has_root() || name.starts_with('/') || name.starts_with('\\') {
        return Err(Reason::Absolute);
    }
    for c in path.components() {
        match c {
            Component::ParentDir => return Err(Reason::ParentDir),
            Component::Prefix(_) | Component::RootDir => return Err(Reason::Absolute),
            _ => {}
        }
    }
    // `..` between backslashes is a parent on Windows only, but never a name TeX needs.
    if name.split(['/', '\\']).any(|part| part == "..") {
        return Err(Reason::ParentDir);
    }
    Ok(())
}

/// A name to read: also no `secrets` component.
pub(crate) fn check_read_name(name: &str) -> Result<(), Reason> {
    check_name(name)?;
    if Path::new(name).components().any(is_secrets) {
        return Err(Reason::Secrets);
    }
    Ok(())
}

/// The folders a build reads from, canonical.
#[derive(Debug, Clone)]
pub(crate) struct ReadPolicy {
    root: PathBuf,
    deny: Vec<PathBuf>,
}

impl ReadPolicy {
    /// `root` is the document's folder; `deny` the folders (or files) never read, which
    /// are canonicalised here so that they compare with canonical targets.
    pub fn new(root: &Path, deny: &[PathBuf]) -> std::io::Result<ReadPolicy> {
        let root = std::fs::canonicalize(root)?;
        let deny = deny
            .iter()
            .map(|d| std::fs::canonicalize(d).unwrap_or_else(|_| d.clone()))
            .collect();
        Ok(ReadPolicy { root, deny })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether `path` (canonical) may be read at all: under no denied folder.
    pub fn check_denied(&self, path: &Path) -> Result<(), Reason> {
        match self.deny.iter().find(|d| path.starts_with(d)) {
            Some(d) => Err(Reason::Denied(d.clone())),
            None => Ok(()),
        }
    }

    /// The file in the document's folder that `name` names: `Ok(None)` when there is
    /// none (the bundle may have it), `Err` when there is one it may not read.
    pub fn resolve(&self, name: &str) -> Result<Option<PathBuf>, Reason> {
        check_read_name(name)?;
        let joined = self.root.join(name);
        let Ok(target) = std::fs::canonicalize(&joined) else {
            return Ok(None);
        };
        let Ok(below) = target.strip_prefix(&self.root) else {
            return Err(Reason::Outside);
        };
        if below.components().any(is_secrets) {
            return Err(Reason::Secrets);
        }
        self.check_denied(&target)?;
        // Directories, FIFOs and devices are not files TeX can use (a FIFO would block).
        match std::fs::metadata(&target) {
            Ok(m) if m.is_file() => Ok(Some(target)),
            _ => Ok(None),
        }
    }
}

/// A file in one of the build's own folders (the last build's intermediates): the name
/// checked, the target a regular file inside `dir`.
pub(crate) fn resolve_own(dir: &Path, name: &str) -> Option<PathBuf> {
    check_name(name).ok()?;
    let dir = std::fs::canonicalize(dir).ok()?;
    let target = std::fs::canonicalize(dir.join(name)).ok()?;
    (target.starts_with(&dir) && std::fs::metadata(&target).is_ok_and(|m| m.is_file()))
        .then_some(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absolute_and_parent_names_are_refused() {
        assert_eq!(check_name("/tmp/x.sh"), Err(Reason::Absolute));
        assert_eq!(check_name("../x"), Err(Reason::ParentDir));
        assert_eq!(check_name("sub/../../x"), Err(Reason::ParentDir));
        assert_eq!(check_name("sub/..\\x"), Err(Reason::ParentDir));
        assert_eq!(check_name("chapter.tex"), Ok(()));
        assert_eq!(check_name("chapters/one.aux"), Ok(()));
        assert_eq!(check_read_name("deep/Secrets/x.tex"), Err(Reason::Secrets));
        assert_eq!(check_name("deep/secrets/x.aux"), Ok(()));
    }

    #[cfg(unix)]
    #[test]
    fn reads_stay_in_the_folder_out_of_secrets_and_denied_folders() {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let root = base.join("doc");
        let denied = root.join("keys");
        for d in [&root.join("sub"), &root.join("secrets"), &denied] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(base.join("outside.tex"), "x").unwrap();
        std::fs::write(root.join("sub/ok.tex"), "x").unwrap();
        std::fs::write(root.join("secrets/x.tex"), "x").unwrap();
        std::fs::write(denied.join("id"), "x").unwrap();
        std::os::unix::fs::symlink(base.join("outside.tex"), root.join("link.tex")).unwrap();
        std::os::unix::fs::symlink(root.join("secrets"), root.join("innocent")).unwrap();
        let p = ReadPolicy::new(&root, std::slice::from_ref(&denied)).unwrap();
        assert_eq!(p.resolve("sub/ok.tex"), Ok(Some(root.join("sub/ok.tex"))));
        assert_eq!(p.resolve("missing.tex"), Ok(None));
        assert_eq!(p.resolve("sub"), Ok(None));
        assert_eq!(p.resolve("link.tex"), Err(Reason::Outside));
        assert_eq!(p.resolve("secrets/x.tex"), Err(Reason::Secrets));
        assert_eq!(p.resolve("innocent/x.tex"), Err(Reason::Secrets));
        assert_eq!(p.resolve("keys/id"), Err(Reason::Denied(denied.clone())));
        assert_eq!(p.resolve("../outside.tex"), Err(Reason::ParentDir));
        assert_eq!(
            p.resolve(&base.join("outside.tex").display().to_string()),
            Err(Reason::Absolute)
        );
        assert_eq!(
            resolve_own(&root, "sub/ok.tex"),
            Some(root.join("sub/ok.tex"))
        );
        assert_eq!(resolve_own(&root, "link.tex"), None);
    }
}
