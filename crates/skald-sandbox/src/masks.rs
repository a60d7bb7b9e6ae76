//! Which paths get an empty stand-in mounted over them.

use std::path::{Component, Path, PathBuf};

/// The paths to cover so that nothing in `masked` is readable while every folder in
/// `writable` stays reachable. A masked folder that holds a writable one (a chat's folder
/// inside the data directory) is not covered whole: its children are, except the ones on
/// the way to the writable folder, level by level. Masks inside other masks are dropped;
/// paths that do not exist are kept (the helper skips them: nothing there to hide).
pub fn plan_masks(masked: &[PathBuf], writable: &[PathBuf]) -> Vec<PathBuf> {
    // Each path split into its components once: `Path::starts_with` splits both paths at
    // every call, and a chat's thirty masks are compared with one another before each
    // command.
    let (masks, writable_parts) = (split(masked), split(writable));
    let mut out = Vec::new();
    for (m, parts) in masked.iter().zip(&masks) {
        if masks
            .iter()
            .any(|other| other != parts && parts.starts_with(other))
        {
            continue;
        }
        cover(m, parts, writable, &writable_parts, &mut out, 0);
    }
    out.sort();
    out.dedup();
    out
}

fn split(paths: &[PathBuf]) -> Vec<Vec<Component<'_>>> {
    paths.iter().map(|p| p.components().collect()).collect()
}

/// Deep enough for any real layout; a bound because the walk reads the disk.
const MAX_DEPTH: usize = 16;

fn cover(
    m: &Path,
    parts: &[Component<'_>],
    writable: &[PathBuf],
    writable_parts: &[Vec<Component<'_>>],
    out: &mut Vec<PathBuf>,
    depth: usize,
) {
    let holds_writable = writable_parts.iter().any(|w| w.starts_with(parts));
    if !holds_writable {
        out.push(m.to_path_buf());
        return;
    }
    // The masked path is itself writable, or the walk went too deep: the mask wins, since
    // what is hidden here is Skald's own data or someone's keys.
    if writable_parts.iter().any(|w| w.as_slice() == parts) || depth >= MAX_DEPTH {
        out.push(m.to_path_buf());
        return;
    }
    let Ok(entries) = std::fs::read_dir(m) else {
        out.push(m.to_path_buf());
        return;
    };
    for entry in entries.flatten() {
        let child = entry.path();
        if writable.iter().any(|w| w == &child) {
            continue;
        }
        let child_parts: Vec<Component<'_>> = child.components().collect();
        cover(
            &child,
            &child_parts,
            writable,
            writable_parts,
            out,
            depth + 1,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mask_holding_a_writable_folder_covers_its_siblings_instead() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        for p in ["secrets/k", "logs/a", "chats/one/file", "chats/two/file"] {
            let path = data.join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x").unwrap();
        }
        let writable = vec![data.join("chats/one")];
        let planned = plan_masks(std::slice::from_ref(&data), &writable);
        assert_eq!(
            planned,
            vec![
                data.join("chats/two"),
                data.join("logs"),
                data.join("secrets")
            ]
        );
    }

    #[test]
    fn nested_masks_collapse_and_a_writable_mask_is_still_masked() {
        let a = PathBuf::from("/nonexistent/a");
        let planned = plan_masks(&[a.clone(), a.join("b")], std::slice::from_ref(&a));
        assert_eq!(planned, vec![a]);
    }
}
