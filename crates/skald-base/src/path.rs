//! Paths as policy sees them: joined to a base, `..` resolved without touching the disk,
//! then symlinks resolved for the part that exists, and compared by whole components.

use std::path::{Component, Path, PathBuf};

/// `path` against `base`: absolute paths as given, relative ones joined to it; then
/// lexically normalised. Touches no filesystem.
pub fn resolve_in(path: &str, base: &Path) -> PathBuf {
    let p = Path::new(path);
    let joined = if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    };
    normalize_lexically(&joined)
}

/// Removes `.` and resolves `..` against the preceding component, never climbing above the
/// root (`/..` is `/`). Touches no filesystem.
pub fn normalize_lexically(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for comp in path.components() {
        match comp {
            Component::Prefix(_) | Component::RootDir => out.push(comp.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => match out.components().next_back() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                // `/..` is `/`.
                Some(Component::RootDir | Component::Prefix(_)) => {}
                // A relative path that climbs above its start keeps its `..`.
                _ => out.push(".."),
            },
            Component::Normal(name) => out.push(name),
        }
    }
    out
}

/// The canonical absolute form of `path` for policy decisions: joined to `base` when
/// relative, `..` resolved lexically, then the longest existing ancestor canonicalised
/// (symlinks resolved) and the part that does not exist yet appended. A file that is
/// about to be created thus gets the same answer as after it exists.
pub fn canonicalize_for_policy(path: &Path, base: &Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    };
    let lexical = normalize_lexically(&joined);
    let mut existing = lexical.as_path();
    let mut tail: Vec<&std::ffi::OsStr> = Vec::new();
    loop {
        if let Ok(real) = std::fs::canonicalize(existing) {
            let mut out = real;
            for part in tail.iter().rev() {
                out.push(part);
            }
            // The tail may hold `..` only if the ancestor was a symlink whose target's
            // parent differs; the lexical pass already removed all of them, so the result
            // is normalised as it stands.
            return out;
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                tail.push(name);
                existing = parent;
            }
            // Nothing exists, not even the root (a relative base): lexical is the best.
            _ => return lexical,
        }
    }
}

/// Whether `child` is `base` or inside it, compared by whole components: `/a/bc` is not
/// under `/a/b`. Both should already be canonical (see `canonicalize_for_policy`).
pub fn path_under(child: &Path, base: &Path) -> bool {
    child.starts_with(base)
}

/// A path as the user should read it: relative to `root` when inside it, else absolute.
pub fn relativize_for_display(path: &Path, root: &Path) -> String {
    match path.strip_prefix(root) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
        Ok(rel) => rel.display().to_string(),
        Err(_) => path.display().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_joins_relative_paths_and_keeps_absolute_ones() {
        let base = Path::new("/work/proj");
        assert_eq!(
            resolve_in("src/main.rs", base),
            Path::new("/work/proj/src/main.rs")
        );
        assert_eq!(resolve_in("/etc/hosts", base), Path::new("/etc/hosts"));
        assert_eq!(resolve_in("./a/../b", base), Path::new("/work/proj/b"));
        assert_eq!(resolve_in("../../../..", base), Path::new("/"));
        assert_eq!(resolve_in(".", base), Path::new("/work/proj"));
    }

    #[test]
    fn lexical_normalisation() {
        assert_eq!(
            normalize_lexically(Path::new("/a/./b/../c")),
            Path::new("/a/c")
        );
        assert_eq!(normalize_lexically(Path::new("/..")), Path::new("/"));
        assert_eq!(
            normalize_lexically(Path::new("a/../../b")),
            Path::new("../b")
        );
        assert_eq!(
            normalize_lexically(Path::new("../../b")),
            Path::new("../../b")
        );
        assert_eq!(
            normalize_lexically(Path::new("secrets/../secrets/x")),
            Path::new("secrets/x")
        );
    }

    #[test]
    fn path_under_compares_components_not_strings() {
        assert!(path_under(Path::new("/a/b/c"), Path::new("/a/b")));
        assert!(path_under(Path::new("/a/b"), Path::new("/a/b")));
        assert!(!path_under(Path::new("/a/bc"), Path::new("/a/b")));
        assert!(!path_under(Path::new("/a"), Path::new("/a/b")));
    }

    #[cfg(unix)]
    #[test]
    fn canonicalize_resolves_dotdot_symlinks_and_missing_tails() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let work = root.join("work");
        let outside = root.join("outside");
        std::fs::create_dir_all(work.join("docs")).unwrap();
        std::fs::create_dir_all(work.join("secrets")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, work.join("escape")).unwrap();

        // `..` inside the tree.
        let p = canonicalize_for_policy(Path::new("docs/../secrets/key"), &work);
        assert_eq!(p, work.join("secrets/key"));
        assert!(path_under(&p, &work.join("secrets")));

        // secrets/../secrets/x is still under secrets.
        let p = canonicalize_for_policy(Path::new("secrets/../secrets/x"), &work);
        assert!(path_under(&p, &work.join("secrets")));

        // A symlink out of the working dir resolves to where it really points.
        let p = canonicalize_for_policy(Path::new("escape/new/file.txt"), &work);
        assert_eq!(p, outside.join("new/file.txt"));
        assert!(!path_under(&p, &work));

        // A file that does not exist yet gets its future canonical path.
        let p = canonicalize_for_policy(Path::new("docs/new.md"), &work);
        assert_eq!(p, work.join("docs/new.md"));

        // Climbing out lexically is seen as outside.
        let p = canonicalize_for_policy(Path::new("../outside/x"), &work);
        assert_eq!(p, outside.join("x"));
        assert!(!path_under(&p, &work));
    }

    #[cfg(unix)]
    #[test]
    fn unicode_look_alikes_are_different_paths() {
        let tmp = tempfile::tempdir().unwrap();
        let work = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::create_dir_all(work.join("secrets")).unwrap();
        // Cyrillic "ѕ" (U+0455) looks like Latin "s": a different directory, and not the
        // secrets one, so a rule on `secrets/` must not be fooled either way.
        let lookalike = canonicalize_for_policy(Path::new("ѕecrets/key"), &work);
        assert!(!path_under(&lookalike, &work.join("secrets")));
        let real = canonicalize_for_policy(Path::new("./secrets//key"), &work);
        assert!(path_under(&real, &work.join("secrets")));
    }
}
