//! `config.toml` in the data directory: created on first run with every default written
//! out as a comment, so a user sees what can be changed without reading docs.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The file written on first run. Every setting is commented out at its default value; a
/// test checks that uncommenting all of them yields exactly `Config::default()`.
pub const DEFAULT_CONFIG_TOML: &str = r#"# Skald configuration.
# Every setting below is commented out at its default value: uncomment a line to change it.
# Unknown keys are refused, so a typo is reported instead of silently ignored.

# [log]
# Verbosity of the log files in <data dir>/logs: error, warn, info, debug or trace.
# The SKALD_LOG environment variable overrides it (same syntax as RUST_LOG).
# level = "info"
# How many daily log files to keep.
# max_files = 7
"#;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub log: LogConfig,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LogConfig {
    pub level: String,
    pub max_files: usize,
}

impl Default for LogConfig {
    fn default() -> Self {
        LogConfig {
            level: "info".to_string(),
            max_files: 7,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write {path}: {message}")]
    Write { path: PathBuf, message: String },
    #[error("{path} is not valid: {message}")]
    Parse { path: PathBuf, message: String },
}

impl Config {
    /// Reads `path`, first writing the commented defaults there if it does not exist.
    pub fn load_or_create(path: &Path) -> Result<Config, ConfigError> {
        if !path.exists() {
            // Atomic, so a crash never leaves a half-written config.
            skald_tools::text::write_atomic(path, DEFAULT_CONFIG_TOML.as_bytes()).map_err(|e| {
                ConfigError::Write {
                    path: path.to_path_buf(),
                    message: e.to_string(),
                }
            })?;
        }
        Config::load(path)
    }

    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Config::parse(&text).map_err(|message| ConfigError::Parse {
            path: path.to_path_buf(),
            message,
        })
    }

    /// Parses TOML text; the error names the line and the key.
    pub fn parse(text: &str) -> Result<Config, String> {
        toml::from_str(text).map_err(|e| e.to_string().trim_end().to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_run_writes_commented_defaults_that_parse_to_default() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("config.toml");
        let cfg = Config::load_or_create(&path).unwrap();
        assert_eq!(cfg, Config::default());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), DEFAULT_CONFIG_TOML);
    }

    #[test]
    fn uncommenting_every_setting_gives_the_defaults() {
        // Lines of the form `# key = value` or `# [table]` are settings; others are prose.
        let uncommented: String = DEFAULT_CONFIG_TOML
            .lines()
            .map(|line| match line.strip_prefix("# ") {
                Some(rest) if rest.starts_with('[') || rest.contains(" = ") => rest,
                _ => line,
            })
            .map(|l| format!("{l}\n"))
            .collect();
        assert!(uncommented.contains("\n[log]\n"));
        assert_eq!(Config::parse(&uncommented).unwrap(), Config::default());
    }

    #[test]
    fn an_existing_file_is_not_overwritten() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("config.toml");
        std::fs::write(&path, "[log]\nlevel = \"debug\"\n").unwrap();
        let cfg = Config::load_or_create(&path).unwrap();
        assert_eq!(cfg.log.level, "debug");
        assert_eq!(cfg.log.max_files, 7);
    }

    #[test]
    fn typos_and_bad_types_are_reported_with_location() {
        let err = Config::parse("[log]\nlevl = \"debug\"\n").unwrap_err();
        assert!(err.contains("levl"), "{err}");
        assert!(err.contains("line 2"), "{err}");
        let err = Config::parse("[log]\nmax_files = \"many\"\n").unwrap_err();
        assert!(err.contains("max_files") || err.contains("line 2"), "{err}");
    }
}
