//! Logging with `tracing` to daily files in the data directory's `logs/`.

use crate::config::LogConfig;
use std::path::Path;
use tracing_appender::non_blocking::WorkerGuard;
use tracing_appender::rolling::{RollingFileAppender, Rotation};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// Overrides the configured level, with `RUST_LOG` syntax (`skald_core=debug,info`).
pub const LOG_ENV: &str = "SKALD_LOG";

/// Keeps the background log writer alive; logs written after it is dropped are lost, so
/// hold it for the life of the program.
pub struct LogGuard {
    _file: WorkerGuard,
}

#[derive(Debug, thiserror::Error)]
pub enum LogError {
    #[error("cannot open log files in {dir}: {message}")]
    Open { dir: String, message: String },
    #[error("invalid log level `{level}`: {message}")]
    Level { level: String, message: String },
    #[error("logging was already initialised")]
    AlreadyInitialised,
}

/// Lines waiting for the log-writing thread. The appender's default, 128,000, is a queue
/// of 4 MB made and touched at start; this many lines cover any burst Skald writes at its
/// levels, and past them lines are dropped rather than the app waiting on the disk.
const LOG_QUEUE_LINES: usize = 8192;

/// Installs the global subscriber: files in `logs_dir` at the configured level (or
/// `SKALD_LOG`), and, when `stderr_level` is given, human-readable lines on stderr too.
pub fn init(
    logs_dir: &Path,
    config: &LogConfig,
    stderr_level: Option<&str>,
) -> Result<LogGuard, LogError> {
    let appender = RollingFileAppender::builder()
        .rotation(Rotation::DAILY)
        .filename_prefix("skald")
        .filename_suffix("log")
        .max_log_files(config.max_files.max(1))
        .build(logs_dir)
        .map_err(|e| LogError::Open {
            dir: logs_dir.display().to_string(),
            message: e.to_string(),
        })?;
    // The appender has just opened today's file: it is the user's alone, like the folder.
    for file in std::fs::read_dir(logs_dir).into_iter().flatten().flatten() {
        crate::paths::keep_private(&file.path());
    }
    let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .buffered_lines_limit(LOG_QUEUE_LINES)
        .finish(appender);

    let level = std::env::var(LOG_ENV).unwrap_or_else(|_| config.level.clone());
    let file_filter = EnvFilter::try_new(&level).map_err(|e| LogError::Level {
        level: level.clone(),
        message: e.to_string(),
    })?;
    let file_layer = tracing_subscriber::fmt::layer()
        .with_writer(writer)
        .with_ansi(false)
        .with_filter(file_filter);

    let stderr_layer = match stderr_level {
        Some(level) => Some(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_target(false)
                .with_filter(EnvFilter::try_new(level).map_err(|e| LogError::Level {
                    level: level.to_string(),
                    message: e.to_string(),
                })?),
        ),
        None => None,
    };

    tracing_subscriber::registry()
        .with(file_layer)
        .with(stderr_layer)
        .try_init()
        .map_err(|_| LogError::AlreadyInitialised)?;
    Ok(LogGuard { _file: guard })
}

use tracing_subscriber::Layer as _;
