//! Skald's durable store: one SQLite database (WAL, foreign keys on) whose schema is a
//! numbered list of SQL migrations applied at open. Every read and write goes through the
//! typed functions of this crate; no other crate writes SQL.
//!
//! The API is synchronous. SQLite calls are short (WAL, indexed), and the engine calls
//! them from its runtime where a slow one would block, via `spawn_blocking`.

mod checkpoints;
mod cron;
mod deliveries;
mod error;
mod forks;
mod hooks;
mod images;
mod inbox;
mod known_tools;
mod leases;
mod mcp;
mod messages;
mod migrations;
mod rules;
mod run_contexts;
mod scratchpad;
mod sessions;
mod tasks;
mod tool_calls;
mod turns;
mod usage;
mod worktrees;

pub use checkpoints::NewCheckpoint;
pub use cron::{Claim, JobRun, MissedPolicy, NewJob, RunStatus, ScheduledJob};
pub use deliveries::{Delivered, DeliveryKind, NOTIFICATION_TOOL, TASK_RESULT_TOOL};
pub use error::StoreError;
pub use images::{ImageBlob, ImageOwner, ImageRef, ShownImage};
pub use inbox::{InboxItem, InboxKind, InboxStatus, NewInboxItem};
pub use known_tools::KnownTool;
pub use leases::Holder;
pub use mcp::{McpServerRecord, PluginSettings};
pub use messages::{Message, MessageStatus, NewMessage, Role};
pub use migrations::{LATEST_VERSION, MIGRATIONS};
pub use rules::{NewRule, Rule, RuleAction};
pub use run_contexts::StoredRunContext;
pub use sessions::{NewSession, Session, SessionKind};
pub use tasks::{NewTask, Task, TaskStatus};
pub use tool_calls::{NewToolCall, ResultType, ToolCallRecord};
pub use turns::{AgentRow, TurnState};
pub use usage::{NewLlmRequest, RequestStatus, SessionUsage, Summary};
pub use worktrees::NewWorktree;

use rusqlite::Connection;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

/// How long a writer waits for another connection's lock before reporting busy.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// A handle on the database. Cheap to share behind an `Arc`; calls are serialised on one
/// connection, which is what SQLite does with writers anyway.
pub struct Store {
    conn: Mutex<Connection>,
    path: Option<PathBuf>,
}

impl Store {
    /// Opens (creating if needed) the database at `path` and migrates it to the latest
    /// schema. Parent directories are created.
    pub fn open(path: impl AsRef<Path>) -> Result<Store, StoreError> {
        let path = path.as_ref();
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|source| StoreError::Io {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        let conn = Connection::open(path).map_err(|source| StoreError::Open {
            path: path.to_path_buf(),
            source,
        })?;
        Store::from_connection(conn, Some(path.to_path_buf()))
    }

    /// A private in-memory database, for tests and dry runs.
    pub fn open_in_memory() -> Result<Store, StoreError> {
        let conn = Connection::open_in_memory().map_err(StoreError::Sqlite)?;
        Store::from_connection(conn, None)
    }

    fn from_connection(mut conn: Connection, path: Option<PathBuf>) -> Result<Store, StoreError> {
        configure(&conn)?;
        let lock = path.as_ref().map(|p| {
            let mut name = p.as_os_str().to_owned();
            name.push("-migration.lock");
            PathBuf::from(name)
        });
        migrations::migrate(&mut conn, lock.as_deref())?;
        Ok(Store {
            conn: Mutex::new(conn),
            path,
        })
    }

    /// The database file, or `None` for an in-memory store.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The schema version the database is at.
    pub fn schema_version(&self) -> Result<usize, StoreError> {
        migrations::current_version(&self.conn())
    }

    /// Runs SQLite's own consistency check; `Ok(())` when it says "ok".
    pub fn integrity_check(&self) -> Result<(), StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare("PRAGMA integrity_check")?;
        let problems: Vec<String> = stmt
            .query_map([], |row| row.get::<_, String>(0))?
            .collect::<Result<_, _>>()?;
        if problems.len() == 1 && problems[0] == "ok" {
            Ok(())
        } else {
            Err(StoreError::Corrupt(problems.join("; ")))
        }
    }

    /// The connection. A panic while holding the lock cannot leave SQLite half-written
    /// (every write is its own statement or transaction), so a poisoned lock is recovered.
    pub(crate) fn conn(&self) -> MutexGuard<'_, Connection> {
        self.conn
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

fn configure(conn: &Connection) -> Result<(), StoreError> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    // WAL: readers never block the writer, and a killed process loses nothing committed.
    // synchronous=NORMAL is crash-safe for the application in WAL mode.
    let mode = journal_mode_wal(conn)?;
    if mode != "wal" && mode != "memory" {
        tracing::warn!(journal_mode = %mode, "SQLite refused WAL mode");
    }
    conn.execute_batch("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;")?;
    Ok(())
}

/// Switches a database to WAL. The switch needs the database to itself, and SQLite answers
/// "database is locked" at once — without waiting out the busy timeout — when another
/// connection is switching or migrating it at that moment (the app and `skald` opening a
/// new data folder together). So it is retried for as long as the busy timeout.
fn journal_mode_wal(conn: &Connection) -> Result<String, StoreError> {
    let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
    loop {
        match conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0)) {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::DatabaseBusy
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            result => return Ok(result?),
        }
    }
}

/// Milliseconds since the Unix epoch: the one time format of the schema.
/// Reads a state stored as its string (`as_str`); a string no version of Skald wrote is
/// a corrupt row, reported with what it was meant to be.
pub(crate) fn parse_stored<T>(
    s: &str,
    parse: fn(&str) -> Option<T>,
    what: &str,
) -> Result<T, StoreError> {
    parse(s).ok_or_else(|| StoreError::Invalid(format!("{what} `{s}`")))
}

pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_with_wal_and_foreign_keys_at_latest_version() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("nested/skald.db")).unwrap();
        assert_eq!(store.schema_version().unwrap(), LATEST_VERSION);
        let conn = store.conn();
        let mode: String = conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
        let fk: i64 = conn
            .query_row("PRAGMA foreign_keys", [], |r| r.get(0))
            .unwrap();
        assert_eq!(fk, 1);
        drop(conn);
        store.integrity_check().unwrap();
    }

    #[test]
    fn reopening_is_idempotent() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("skald.db");
        drop(Store::open(&path).unwrap());
        let store = Store::open(&path).unwrap();
        assert_eq!(store.schema_version().unwrap(), LATEST_VERSION);
    }
}
