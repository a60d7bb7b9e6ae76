//! The schema as a numbered list of migrations. Append only: a released migration is
//! never edited, so every database can be brought from any older version to the latest.

use crate::StoreError;
use rusqlite::Connection;
use rusqlite_migration::{M, Migrations, SchemaVersion};
use std::path::Path;
use std::time::{Duration, Instant};

const STEPS: &[M<'static>] = &[
    M::up(include_str!("../migrations/0001_sessions_history.sql")),
    M::up(include_str!("../migrations/0002_tool_calls.sql")),
    M::up(include_str!("../migrations/0003_usage_summaries.sql")),
    M::up(include_str!("../migrations/0004_approval.sql")),
    M::up(include_str!("../migrations/0005_inbox.sql")),
    M::up(include_str!("../migrations/0006_run_contexts.sql")),
    M::up(include_str!("../migrations/0007_scratchpad.sql")),
    M::up(include_str!("../migrations/0008_tasks_cron.sql")),
    M::up(include_str!("../migrations/0009_mcp_servers.sql")),
    M::up(include_str!("../migrations/0010_plugins.sql")),
    M::up(include_str!("../migrations/0011_leases.sql")),
    M::up(include_str!("../migrations/0012_sandbox.sql")),
    M::up(include_str!("../migrations/0013_checkpoints.sql")),
    M::up(include_str!("../migrations/0014_hook_approvals.sql")),
    M::up(include_str!("../migrations/0015_mcp_tool_search.sql")),
    M::up(include_str!("../migrations/0016_background_processes.sql")),
    M::up(include_str!("../migrations/0017_images.sql")),
    M::up(include_str!("../migrations/0018_model_per_chat.sql")),
    M::up(include_str!("../migrations/0019_forks.sql")),
    M::up(include_str!("../migrations/0020_plan_mode.sql")),
    M::up(include_str!("../migrations/0021_cost.sql")),
    M::up(include_str!("../migrations/0022_worktrees.sql")),
    M::up(include_str!("../migrations/0023_turns.sql")),
    M::up(include_str!("../migrations/0024_trials.sql")),
    M::up(include_str!("../migrations/0025_job_worktrees.sql")),
    M::up(include_str!("../migrations/0026_rule_domains.sql")),
];

/// Every migration, in order.
pub const MIGRATIONS: Migrations<'static> = Migrations::from_slice(STEPS);

/// The schema version a freshly migrated database is at.
pub const LATEST_VERSION: usize = STEPS.len();

pub(crate) fn current_version(conn: &Connection) -> Result<usize, StoreError> {
    match MIGRATIONS.current_version(conn) {
        Ok(SchemaVersion::NoneSet) => Ok(0),
        Ok(SchemaVersion::Inside(n)) => Ok(n.get()),
        Ok(SchemaVersion::Outside(n)) => Err(StoreError::TooNew {
            found: n.get(),
            known: LATEST_VERSION,
        }),
        Err(e) => Err(StoreError::Migration(e.to_string())),
    }
}

pub(crate) fn migrate(conn: &mut Connection, lock: Option<&Path>) -> Result<(), StoreError> {
    if current_version(conn)? == LATEST_VERSION {
        return Ok(());
    }
    // Two processes opening a new or older database at once (the app, and `skald` in a
    // terminal) would both read the old version and both apply the same migrations; the
    // second then fails on "table already exists". A lock file beside the database lets
    // one migrate while the other waits, then finds nothing left to do.
    let _held = lock.map(hold_lock).transpose()?;
    let from = current_version(conn)?;
    if from == LATEST_VERSION {
        return Ok(());
    }
    MIGRATIONS
        .to_latest(conn)
        .map_err(|e| StoreError::Migration(e.to_string()))?;
    tracing::info!(from, to = LATEST_VERSION, "database migrated");
    Ok(())
}

/// How long an opening process waits for another one's migration.
const MIGRATION_WAIT: Duration = Duration::from_secs(60);

/// Takes the migration lock at `path`, waiting for its holder at most [`MIGRATION_WAIT`].
/// The lock is released when the returned file is closed (also when the process dies).
fn hold_lock(path: &Path) -> Result<std::fs::File, StoreError> {
    let io = |source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut options = std::fs::OpenOptions::new();
    options.create(true).truncate(false).write(true);
    // Like the database beside it: the user's alone.
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let file = options.open(path).map_err(io)?;
    let deadline = Instant::now() + MIGRATION_WAIT;
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(file),
            Err(std::fs::TryLockError::WouldBlock) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(StoreError::Migration(format!(
                    "another process has been migrating the database for over {} s (it holds {})",
                    MIGRATION_WAIT.as_secs(),
                    path.display()
                )));
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(io(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{NewMessage, NewToolCall, Role, SessionKind, Store};
    use skald_api::ToolCallStatus;

    /// The app and a terminal command starting together on a new data folder.
    #[test]
    fn processes_opening_a_new_database_at_once_all_succeed() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("skald.db");
        let openers: Vec<_> = (0..8)
            .map(|_| {
                let db = db.clone();
                std::thread::spawn(move || Store::open(&db).map(|s| s.schema_version().unwrap()))
            })
            .collect();
        for o in openers {
            assert_eq!(o.join().unwrap().unwrap(), LATEST_VERSION);
        }
    }

    #[test]
    fn migrations_are_valid() {
        MIGRATIONS.validate().unwrap();
    }

    /// A database written by the first release (migration 1 only), with data in it, is
    /// upgraded in place by opening it, and its data survives.
    #[test]
    fn upgrades_a_database_made_by_an_older_migration_set() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.db");
        {
            let mut conn = Connection::open(&path).unwrap();
            Migrations::from_slice(&STEPS[..1])
                .to_latest(&mut conn)
                .unwrap();
            conn.execute(
                "INSERT INTO chat_sessions (title, created_at, updated_at) VALUES ('old chat', 1, 1)",
                [],
            )
            .unwrap();
            conn.execute(
                "INSERT INTO chat_history (session_id, role, content, created_at)
                 VALUES (1, 'user', 'hello from v1', 1)",
                [],
            )
            .unwrap();
            assert!(
                conn.prepare("SELECT 1 FROM chat_llm_tools").is_err(),
                "v1 has no tool table"
            );
        }
        let store = Store::open(&path).unwrap();
        assert_eq!(store.schema_version().unwrap(), LATEST_VERSION);
        let session = store.get_session(1).unwrap();
        assert_eq!(session.title, "old chat");
        assert_eq!(session.kind, SessionKind::Interactive);
        let history = store.list_messages(1).unwrap();
        assert_eq!(history.len(), 1);
        assert_eq!(history[0].content, "hello from v1");
        // The tables of migration 2 work on the upgraded database.
        let msg = store
            .append_message(&NewMessage::new(1, Role::Assistant, ""))
            .unwrap();
        store
            .insert_tool_call(&NewToolCall {
                tool_call_id: "call_1".into(),
                session_id: 1,
                stack_id: None,
                message_id: Some(msg.id),
                name: "read_file".into(),
                args: serde_json::json!({"path": "a"}),
                status: ToolCallStatus::Running,
            })
            .unwrap();
        store.integrity_check().unwrap();
    }

    #[test]
    fn a_database_from_a_newer_skald_is_refused_clearly() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new.db");
        {
            let conn = Connection::open(&path).unwrap();
            conn.pragma_update(None, "user_version", 99).unwrap();
        }
        let err = Store::open(&path).err().unwrap();
        assert!(matches!(err, StoreError::TooNew { found: 99, .. }), "{err}");
        assert!(err.to_string().contains("newer"));
    }
}
