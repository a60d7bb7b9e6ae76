//! The schema as a numbered list of migrations. Append only: a released migration is
//! never edited, so every database can be brought from any older version to the latest.

use crate::StoreError;
use rusqlite::Connection;
use rusqlite_migration::{M, Migrations, SchemaVersion};

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

pub(crate) fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{NewMessage, NewToolCall, Role, SessionKind, Store};
    use skald_api::ToolCallStatus;

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
