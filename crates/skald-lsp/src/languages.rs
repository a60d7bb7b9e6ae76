//! The languages Skald asks a server about, and how their servers are found: configured
//! in config.toml (`[lsp.python] command = [...]`) or the first of the usual ones on PATH.

use std::path::{Path, PathBuf};

/// A language and the servers that speak for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Language {
    /// As config.toml names it: `[lsp.<name>]`.
    pub name: &'static str,
    /// File extensions, without the dot.
    pub extensions: &'static [&'static str],
    /// Servers tried in order, each as its command line.
    pub servers: &'static [&'static [&'static str]],
    /// How to get one, for the error that none was found.
    pub install: &'static str,
}

pub const LANGUAGES: &[Language] = &[
    Language {
        name: "python",
        extensions: &["py", "pyi"],
        servers: &[
            &["pyright-langserver", "--stdio"],
            &["basedpyright-langserver", "--stdio"],
        ],
        install: "npm install -g pyright",
    },
    Language {
        name: "typescript",
        extensions: &["ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs"],
        servers: &[&["typescript-language-server", "--stdio"]],
        install: "npm install -g typescript typescript-language-server",
    },
    Language {
        name: "rust",
        extensions: &["rs"],
        servers: &[&["rust-analyzer"]],
        install: "rustup component add rust-analyzer",
    },
    Language {
        name: "go",
        extensions: &["go"],
        servers: &[&["gopls"]],
        install: "go install golang.org/x/tools/gopls@latest",
    },
    Language {
        name: "c",
        extensions: &["c", "h", "cc", "cpp", "cxx", "hpp", "hh", "hxx"],
        servers: &[&["clangd"]],
        install: "apt install clangd",
    },
];

/// The language of a file, by its extension.
pub fn language_of(path: &Path) -> Option<&'static Language> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    LANGUAGES
        .iter()
        .find(|l| l.extensions.contains(&ext.as_str()))
}

/// The language named `name` (`python`, `typescript`, …).
pub fn language_named(name: &str) -> Option<&'static Language> {
    LANGUAGES.iter().find(|l| l.name == name)
}

/// The LSP language id of a file (`textDocument/didOpen`).
pub fn language_id(path: &Path) -> &'static str {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase()
        .as_str()
    {
        "py" | "pyi" => "python",
        "ts" | "mts" | "cts" => "typescript",
        "tsx" => "typescriptreact",
        "js" | "mjs" | "cjs" => "javascript",
        "jsx" => "javascriptreact",
        "rs" => "rust",
        "go" => "go",
        "c" | "h" => "c",
        _ => "cpp",
    }
}

/// The server command for `language`: `configured` when given (its program looked up on
/// `path` unless it is a path), else the first of the language's usual servers found on
/// `path`. The program comes back as the full path found.
pub fn find_server(
    language: &Language,
    configured: Option<&[String]>,
    path: Option<&std::ffi::OsStr>,
) -> Option<Vec<String>> {
    let resolve = |argv: Vec<String>| -> Option<Vec<String>> {
        let (program, args) = argv.split_first()?;
        let found = which(program, path)?;
        let mut out = vec![found.display().to_string()];
        out.extend(args.iter().cloned());
        Some(out)
    };
    match configured {
        Some(argv) if !argv.is_empty() => resolve(argv.to_vec()),
        _ => language
            .servers
            .iter()
            .find_map(|argv| resolve(argv.iter().map(|s| s.to_string()).collect())),
    }
}

/// `program` as the shell would find it on `path`; a program given as a path is taken as
/// it is, if it is an executable file.
pub fn which(program: &str, path: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    let executable = |p: &Path| {
        use std::os::unix::fs::PermissionsExt;
        p.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        let p = PathBuf::from(program);
        return executable(&p).then_some(p);
    }
    std::env::split_paths(path?)
        .map(|dir| dir.join(program))
        .find(|p| executable(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_map_to_their_languages() {
        assert_eq!(language_of(Path::new("a/b.py")).unwrap().name, "python");
        assert_eq!(language_of(Path::new("x.TSX")).unwrap().name, "typescript");
        assert_eq!(language_id(Path::new("x.tsx")), "typescriptreact");
        assert!(language_of(Path::new("README.md")).is_none());
    }

    #[test]
    fn a_server_is_found_on_path_or_as_configured() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("pyright-langserver");
        std::fs::write(&bin, "#!/bin/sh\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = dir.path().as_os_str();
        let python = language_named("python").unwrap();
        let found = find_server(python, None, Some(path)).unwrap();
        assert_eq!(found, [bin.display().to_string(), "--stdio".to_string()]);
        assert_eq!(
            find_server(language_named("go").unwrap(), None, Some(path)),
            None
        );
        let configured = vec![
            "pyright-langserver".to_string(),
            "--stdio".into(),
            "--x".into(),
        ];
        assert_eq!(
            find_server(python, Some(&configured), Some(path))
                .unwrap()
                .len(),
            3
        );
        let missing = vec!["basedpyright-langserver".to_string()];
        assert_eq!(find_server(python, Some(&missing), Some(path)), None);
    }
}
