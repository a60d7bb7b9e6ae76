//! What a tool declares about itself beyond its schema: what kind of action it is, whether
//! it reads or writes the user's files (and through which argument), and whether a small
//! local model is offered it. The approval gate, the hooks' matchers, editors speaking ACP
//! and the small-model offer read these from the tool, so a new tool is known to all of
//! them by what its own file says (docs/tools.md, "Adding a tool").

use serde::Serialize;

/// The kind of action a call is, as the Agent Client Protocol names them, so an editor can
/// pick an icon and a way to show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolKind {
    /// Reads files or data.
    Read,
    /// Changes files.
    Edit,
    /// Removes files.
    Delete,
    /// Moves or renames files.
    Move,
    /// Searches for something.
    Search,
    /// Runs a command or a process.
    Execute,
    /// Plans or delegates: the agent's own thinking made visible.
    Think,
    /// Fetches something from outside.
    Fetch,
    /// Anything else.
    Other,
}

impl ToolKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ToolKind::Read => "read",
            ToolKind::Edit => "edit",
            ToolKind::Delete => "delete",
            ToolKind::Move => "move",
            ToolKind::Search => "search",
            ToolKind::Execute => "execute",
            ToolKind::Think => "think",
            ToolKind::Fetch => "fetch",
            ToolKind::Other => "other",
        }
    }
}

/// Whether a file tool reads or writes: the `@fs_read` and `@fs_write` rule groups, the
/// grants a call may use and the write preview follow this.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FileUse {
    Read,
    Write,
}

/// How a tool reaches the user's files: the approval gate judges the path in `path_arg`
/// (or `default_path` when the call leaves it out) against the rules and the chat's folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct FileAccess {
    pub uses: FileUse,
    /// The argument that names the file or folder.
    pub path_arg: &'static str,
    /// The path a call without `path_arg` acts on (a recursive tool's working directory).
    pub default_path: Option<&'static str>,
}

impl FileAccess {
    /// A tool that reads the file or folder named by its `path` argument.
    pub const fn reads(default_path: Option<&'static str>) -> Self {
        FileAccess {
            uses: FileUse::Read,
            path_arg: "path",
            default_path,
        }
    }

    /// A tool that writes the file named by its `path` argument.
    pub const fn writes() -> Self {
        FileAccess {
            uses: FileUse::Write,
            path_arg: "path",
            default_path: None,
        }
    }

    pub fn is_write(&self) -> bool {
        self.uses == FileUse::Write
    }
}

/// Whether a name appears twice in `lists` taken together, for the lists of tools to refuse
/// at compile time (`const _: () = assert!(!has_duplicate(...))`), so two tools can never
/// answer to one name.
pub const fn has_duplicate(lists: &[&[&str]]) -> bool {
    let mut a = 0;
    while a < lists.len() {
        let mut i = 0;
        while i < lists[a].len() {
            // Every later name: the rest of this list, then the lists after it.
            let mut b = a;
            let mut j = i + 1;
            while b < lists.len() {
                while j < lists[b].len() {
                    if same(lists[a][i], lists[b][j]) {
                        return true;
                    }
                    j += 1;
                }
                b += 1;
                j = 0;
            }
            i += 1;
        }
        a += 1;
    }
    false
}

const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_listed_twice_is_found() {
        assert!(!has_duplicate(&[]));
        assert!(!has_duplicate(&[&[], &[]]));
        assert!(!has_duplicate(&[&[
            "read_file",
            "read_files",
            "write_file"
        ]]));
        assert!(!has_duplicate(&[&["read_file"], &["write_file", "grep"]]));
        assert!(has_duplicate(&[&["read_file", "write_file", "read_file"]]));
        assert!(has_duplicate(&[&["a", "a"]]));
        assert!(has_duplicate(&[&["a", "b"], &["c", "b"]]));
        assert!(has_duplicate(&[&["a"], &[], &["b", "a"]]));
    }
}
