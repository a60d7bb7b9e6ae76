//! Path resolution and the path policy primitives every tool and every policy check use
//! (docs/architecture.md, "Path policy primitives").
//!
//! The rule that keeps checks and actions in agreement: a tool opens exactly the path
//! that `resolve` returns, which is lexically normalised (no `.` or `..` left), and a
//! policy check canonicalises that same path. A `link/../x` can therefore not be checked
//! as one file and opened as another.

use serde_json::Value;
use skald_api::{ToolDescriptionLength, ToolError, ToolScope};
pub use skald_base::path::{
    canonicalize_for_policy, normalize_lexically, path_under, relativize_for_display, resolve_in,
};
pub use skald_base::walk::{Entry, Flow, Kind, SKIP_DIRS, walker};
use std::path::{Path, PathBuf};

/// `path` relative to `root` with `/` separators, as listings show it; the file name when
/// `path` is `root` itself.
pub fn slash_relative(path: &Path, root: &Path) -> String {
    match path.strip_prefix(root) {
        Ok(rel) if !rel.as_os_str().is_empty() => rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/"),
        _ => path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| path.display().to_string()),
    }
}

/// The file or folder a call acts on, named two ways.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// As the model and the person name it: the argument resolved against the working
    /// folder, lexically. Results and errors show this one.
    pub shown: PathBuf,
    /// As it is opened: canonical, links resolved — the very path the approval gate
    /// decided on (`ToolScope::checked_path`). Opened with `beneath::open_exact` and
    /// written with `write_atomic_exact`, which refuse a link anywhere on it, so a link
    /// swapped in after the decision is refused instead of followed.
    pub opened: PathBuf,
}

/// Resolves a tool's `path` argument (or the folder default of a recursive tool) into the
/// path it shows and the path it opens (see `Target`). Outside a turn no gate checked a
/// path; the tool works it out the way the gate would.
pub fn target(scope: &ToolScope, raw: &str) -> Target {
    let shown = resolve_in(raw, scope.working_dir());
    let opened = match scope.checked_path() {
        Some(p) => p.to_path_buf(),
        None => canonicalize_for_policy(Path::new(raw), scope.working_dir()),
    };
    Target { shown, opened }
}

/// Opens a target for reading and refuses anything but a regular file (a FIFO or a device
/// would block or never end). What is opened is what is checked: the kind of file is read
/// from the open descriptor.
pub fn open_regular(t: &Target) -> Result<(std::fs::File, std::fs::Metadata), ToolError> {
    let file =
        skald_base::beneath::open_exact(&t.opened).map_err(|e| io_error("read", &t.shown, &e))?;
    let meta = file
        .metadata()
        .map_err(|e| io_error("read", &t.shown, &e))?;
    kind_check(&t.shown, &meta)?;
    Ok((file, meta))
}

/// What a target is, read through a descriptor opened with no link on its path: a file,
/// a folder, or something else.
pub fn metadata(t: &Target, action: &str) -> Result<std::fs::Metadata, ToolError> {
    skald_base::beneath::open_exact(&t.opened)
        .and_then(|f| f.metadata())
        .map_err(|e| io_error(action, &t.shown, &e))
}

/// Refuses anything but a regular file (a FIFO or a device would block or never end).
fn kind_check(path: &Path, meta: &std::fs::Metadata) -> Result<(), ToolError> {
    if meta.is_dir() {
        return Err(ToolError::failed(format!(
            "{} is a directory",
            path.display()
        )));
    }
    if !meta.is_file() {
        return Err(ToolError::failed(format!(
            "{} is not a regular file (a device, socket or pipe)",
            path.display()
        )));
    }
    Ok(())
}

/// Resolves a tool's `path` argument against the run's working directory: absolute paths
/// as given, relative ones joined to it; then lexically normalised.
pub fn resolve(path: &str) -> PathBuf {
    resolve_in(path, ToolScope::current().working_dir())
}

/// The string `path` argument of a call, if any: what single-file tools show as their
/// target.
pub fn path_arg(args: &Value) -> Option<String> {
    args.get("path").and_then(Value::as_str).map(str::to_string)
}

/// An optional whole-number argument, checked against its range (the schema says it too,
/// but a tool may be called without the schema check).
pub fn in_range(
    field: &str,
    value: Option<u64>,
    min: u64,
    max: u64,
) -> Result<Option<u64>, ToolError> {
    match value {
        Some(n) if !(min..=max).contains(&n) => Err(ToolError::invalid(
            field,
            format!("must be an integer from {min} to {max}"),
        )),
        _ => Ok(value),
    }
}

/// A one-line `tool \`path\`` label within the length's budget.
pub fn label(tool: &str, target: Option<&str>, length: ToolDescriptionLength) -> String {
    match target {
        Some(t) if !t.is_empty() => length.fit(&format!("{tool} `{}`", one_line(t))),
        _ => tool.to_string(),
    }
}

/// Collapses whitespace runs (newlines included) to single spaces, for labels.
pub fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// An I/O error as a sentence naming the path.
pub fn io_error(action: &str, path: &Path, err: &std::io::Error) -> ToolError {
    ToolError::failed(format!(
        "cannot {action} {}: {}",
        path.display(),
        skald_base::io_reason(err)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argument_helpers_name_the_field() {
        // What the removed raw readers (`str_arg`, `opt_uint`, `opt_bool`) checked is
        // `tool_args::parse`'s now (skald-api `tool_args::tests`); the range stays here.
        assert!(
            in_range("n", Some(5000), 1, 2000)
                .unwrap_err()
                .to_string()
                .contains("`n`")
        );
        assert_eq!(in_range("absent", None, 1, 2).unwrap(), None);
        assert_eq!(in_range("n", Some(2), 1, 2).unwrap(), Some(2));
    }

    #[test]
    fn display_and_labels() {
        let root = Path::new("/w");
        assert_eq!(relativize_for_display(Path::new("/w/a/b"), root), "a/b");
        assert_eq!(relativize_for_display(Path::new("/w"), root), ".");
        assert_eq!(relativize_for_display(Path::new("/x/y"), root), "/x/y");
        let short = ToolDescriptionLength::Short;
        assert_eq!(
            label("read_file", Some("src/main.rs"), short),
            "read_file `src/main.rs`"
        );
        assert_eq!(
            label("execute_cmd", Some("git\n  status"), short),
            "execute_cmd `git status`"
        );
        assert_eq!(label("list_files", None, short), "list_files");
        let long = "ж".repeat(200);
        assert_eq!(label("read_file", Some(&long), short).chars().count(), 60);
    }
}
