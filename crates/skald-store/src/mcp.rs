//! Registered MCP servers, and plugins' settings.

use crate::{Store, StoreError, now_ms};
use rusqlite::{OptionalExtension, Row, params};
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpServerRecord {
    pub name: String,
    /// `stdio` or `http`.
    pub transport: String,
    pub command: Option<String>,
    pub args: Vec<String>,
    /// Extra environment for a stdio server; values may reference `${env:NAME}`.
    pub env: serde_json::Map<String, Value>,
    pub url: Option<String>,
    /// A reference to the bearer token (`${env:NAME}`), never the token itself.
    pub api_key: Option<String>,
    pub description: String,
    pub friendly_name: Option<String>,
    pub enabled: bool,
    /// A stdio server runs in the command sandbox (docs/sandbox.md).
    #[serde(default)]
    pub sandbox: bool,
    /// A sandboxed server may use the network.
    #[serde(default)]
    pub sandbox_network: bool,
    pub created_at: i64,
    pub updated_at: i64,
}

const COLUMNS: &str = "name, transport, command, args, env, url, api_key, description, \
                       friendly_name, enabled, created_at, updated_at, sandbox, sandbox_network";

fn from_row(row: &Row<'_>) -> rusqlite::Result<(McpServerRecord, String, String)> {
    Ok((
        McpServerRecord {
            name: row.get(0)?,
            transport: row.get(1)?,
            command: row.get(2)?,
            args: Vec::new(),
            env: serde_json::Map::new(),
            url: row.get(5)?,
            api_key: row.get(6)?,
            description: row.get(7)?,
            friendly_name: row.get(8)?,
            enabled: row.get(9)?,
            created_at: row.get(10)?,
            updated_at: row.get(11)?,
            sandbox: row.get(12)?,
            sandbox_network: row.get(13)?,
        },
        row.get(3)?,
        row.get(4)?,
    ))
}

fn finish(
    (mut rec, args, env): (McpServerRecord, String, String),
) -> Result<McpServerRecord, StoreError> {
    rec.args = serde_json::from_str(&args)
        .map_err(|e| StoreError::Invalid(format!("MCP server {} args: {e}", rec.name)))?;
    rec.env = serde_json::from_str(&env)
        .map_err(|e| StoreError::Invalid(format!("MCP server {} env: {e}", rec.name)))?;
    Ok(rec)
}

impl Store {
    /// Adds a server, or replaces the one of the same name (keeping when it was added).
    pub fn upsert_mcp_server(&self, rec: &McpServerRecord) -> Result<McpServerRecord, StoreError> {
        let now = now_ms();
        self.conn().execute(
            "INSERT INTO mcp_servers (name, transport, command, args, env, url, api_key,
                                      description, friendly_name, enabled, created_at, updated_at,
                                      sandbox, sandbox_network)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?11, ?12, ?13)
             ON CONFLICT(name) DO UPDATE SET
                transport = excluded.transport, command = excluded.command,
                args = excluded.args, env = excluded.env, url = excluded.url,
                api_key = excluded.api_key, description = excluded.description,
                friendly_name = excluded.friendly_name, enabled = excluded.enabled,
                updated_at = excluded.updated_at, sandbox = excluded.sandbox,
                sandbox_network = excluded.sandbox_network",
            params![
                rec.name,
                rec.transport,
                rec.command,
                serde_json::to_string(&rec.args).unwrap_or_else(|_| "[]".into()),
                Value::Object(rec.env.clone()).to_string(),
                rec.url,
                rec.api_key,
                rec.description,
                rec.friendly_name,
                rec.enabled,
                now,
                rec.sandbox,
                rec.sandbox_network
            ],
        )?;
        self.get_mcp_server(&rec.name)
    }

    pub fn find_mcp_server(&self, name: &str) -> Result<Option<McpServerRecord>, StoreError> {
        let row = self
            .conn()
            .query_row(
                &format!("SELECT {COLUMNS} FROM mcp_servers WHERE name = ?1"),
                [name],
                from_row,
            )
            .optional()?;
        row.map(finish).transpose()
    }

    pub fn get_mcp_server(&self, name: &str) -> Result<McpServerRecord, StoreError> {
        self.find_mcp_server(name)?
            .ok_or_else(|| StoreError::NotFound {
                what: "MCP server",
                id: name.to_string(),
            })
    }

    /// Every registered server, by name.
    pub fn list_mcp_servers(&self) -> Result<Vec<McpServerRecord>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!("SELECT {COLUMNS} FROM mcp_servers ORDER BY name"))?;
        let rows = stmt
            .query_map([], from_row)?
            .collect::<Result<Vec<_>, _>>()?;
        rows.into_iter().map(finish).collect()
    }

    pub fn set_mcp_enabled(&self, name: &str, enabled: bool) -> Result<(), StoreError> {
        let changed = self.conn().execute(
            "UPDATE mcp_servers SET enabled = ?2, updated_at = ?3 WHERE name = ?1",
            params![name, enabled, now_ms()],
        )?;
        if changed == 0 {
            return Err(StoreError::NotFound {
                what: "MCP server",
                id: name.to_string(),
            });
        }
        Ok(())
    }

    pub fn delete_mcp_server(&self, name: &str) -> Result<(), StoreError> {
        let changed = self
            .conn()
            .execute("DELETE FROM mcp_servers WHERE name = ?1", [name])?;
        if changed == 0 {
            return Err(StoreError::NotFound {
                what: "MCP server",
                id: name.to_string(),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn servers_round_trip() {
        let store = Store::open_in_memory().unwrap();
        let mut rec = McpServerRecord {
            name: "everything".into(),
            transport: "stdio".into(),
            command: Some("npx".into()),
            args: vec!["-y".into(), "server".into()],
            env: serde_json::Map::from_iter([("TOKEN".to_string(), Value::from("${env:T}"))]),
            url: None,
            api_key: None,
            description: "test server".into(),
            friendly_name: None,
            enabled: true,
            sandbox: true,
            sandbox_network: false,
            created_at: 0,
            updated_at: 0,
        };
        let stored = store.upsert_mcp_server(&rec).unwrap();
        assert!(stored.sandbox && !stored.sandbox_network);
        assert_eq!(stored.args, rec.args);
        assert_eq!(stored.env, rec.env);
        rec.description = "changed".into();
        store.upsert_mcp_server(&rec).unwrap();
        assert_eq!(store.list_mcp_servers().unwrap().len(), 1);
        assert_eq!(
            store.get_mcp_server("everything").unwrap().description,
            "changed"
        );
        store.set_mcp_enabled("everything", false).unwrap();
        assert!(!store.get_mcp_server("everything").unwrap().enabled);
        store.delete_mcp_server("everything").unwrap();
        assert!(store.find_mcp_server("everything").unwrap().is_none());
        assert!(matches!(
            store.set_mcp_enabled("everything", true),
            Err(StoreError::NotFound { .. })
        ));
    }
}

/// A plugin's stored settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PluginSettings {
    pub id: String,
    pub enabled: bool,
    pub config: Value,
}

impl Store {
    /// Stores a plugin's settings (replacing what was there).
    pub fn set_plugin(&self, id: &str, enabled: bool, config: &Value) -> Result<(), StoreError> {
        self.conn().execute(
            "INSERT INTO plugins (id, enabled, config, updated_at) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT(id) DO UPDATE SET enabled = excluded.enabled, config = excluded.config,
                                           updated_at = excluded.updated_at",
            params![id, enabled, config.to_string(), now_ms()],
        )?;
        Ok(())
    }

    pub fn get_plugin(&self, id: &str) -> Result<Option<PluginSettings>, StoreError> {
        let row: Option<(bool, String)> = self
            .conn()
            .query_row(
                "SELECT enabled, config FROM plugins WHERE id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        Ok(row.map(|(enabled, config)| PluginSettings {
            id: id.to_string(),
            enabled,
            config: serde_json::from_str(&config).unwrap_or(Value::Null),
        }))
    }
}
