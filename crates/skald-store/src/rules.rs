//! Approval rules and permission groups.

use crate::{Store, StoreError, now_ms};
use rusqlite::{Row, params};
pub use skald_api::records::RuleAction;

/// Defined with the protocol, which carries it to the UI as it is stored.
pub use skald_api::listings::RuleInfo as Rule;

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NewRule {
    pub group_name: String,
    pub tool_pattern: String,
    pub path_pattern: Option<String>,
    pub command_pattern: Option<String>,
    pub agent_id: Option<String>,
    pub working_dir: Option<String>,
    pub action: Option<RuleAction>,
    pub priority: i64,
    pub note: String,
    /// An allow rule for commands: they run sandboxed with the network.
    pub network: bool,
    /// For the web tools: the host the rule is about (`skald_web::hosts`).
    pub domain_pattern: Option<String>,
}

const COLUMNS: &str = "id, group_name, tool_pattern, path_pattern, command_pattern, agent_id, \
                       working_dir, action, priority, note, network, domain_pattern";

fn from_row(r: &Row<'_>) -> rusqlite::Result<(Rule, String)> {
    Ok((
        Rule {
            id: r.get(0)?,
            group_name: r.get(1)?,
            tool_pattern: r.get(2)?,
            path_pattern: r.get(3)?,
            command_pattern: r.get(4)?,
            agent_id: r.get(5)?,
            working_dir: r.get(6)?,
            action: RuleAction::Require,
            priority: r.get(8)?,
            note: r.get(9)?,
            network: r.get(10)?,
            domain_pattern: r.get(11)?,
        },
        r.get(7)?,
    ))
}

impl Store {
    /// The rules that apply to a session of `group`: the group's own, then `default`'s,
    /// each by priority then id — the order the gate tries them in.
    pub fn rules_for_group(&self, group: &str) -> Result<Vec<Rule>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!(
            "SELECT {COLUMNS} FROM approval_rules WHERE group_name = ?1 OR group_name = 'default'
             ORDER BY CASE WHEN group_name = ?1 AND ?1 != 'default' THEN 0 ELSE 1 END,
                      priority, id"
        ))?;
        let rows = stmt
            .query_map([group], from_row)?
            .collect::<Result<Vec<_>, _>>()?;
        rows.into_iter()
            .map(|(mut rule, action)| {
                rule.action = RuleAction::parse(&action)
                    .ok_or_else(|| StoreError::Invalid(format!("rule action `{action}`")))?;
                Ok(rule)
            })
            .collect()
    }

    /// Every rule of every group, for listing.
    pub fn list_rules(&self) -> Result<Vec<Rule>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!(
            "SELECT {COLUMNS} FROM approval_rules ORDER BY group_name, priority, id"
        ))?;
        let rows = stmt
            .query_map([], from_row)?
            .collect::<Result<Vec<_>, _>>()?;
        rows.into_iter()
            .map(|(mut rule, action)| {
                rule.action = RuleAction::parse(&action)
                    .ok_or_else(|| StoreError::Invalid(format!("rule action `{action}`")))?;
                Ok(rule)
            })
            .collect()
    }

    /// Adds a rule, creating its group if needed.
    pub fn add_rule(&self, r: &NewRule) -> Result<i64, StoreError> {
        let action = r
            .action
            .ok_or_else(|| StoreError::Invalid("a rule needs an action".into()))?;
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        tx.execute(
            "INSERT OR IGNORE INTO tool_permission_groups (name) VALUES (?1)",
            [&r.group_name],
        )?;
        tx.execute(
            "INSERT INTO approval_rules (group_name, tool_pattern, path_pattern, command_pattern,
                                         agent_id, working_dir, action, priority, note, created_at,
                                         network, domain_pattern)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            params![
                r.group_name,
                r.tool_pattern,
                r.path_pattern,
                r.command_pattern,
                r.agent_id,
                r.working_dir,
                action.as_str(),
                r.priority,
                r.note,
                now_ms(),
                r.network,
                r.domain_pattern
            ],
        )?;
        let id = tx.last_insert_rowid();
        tx.commit()?;
        Ok(id)
    }

    pub fn delete_rule(&self, id: i64) -> Result<(), StoreError> {
        let changed = self
            .conn()
            .execute("DELETE FROM approval_rules WHERE id = ?1", [id])?;
        if changed == 0 {
            return Err(StoreError::NotFound {
                what: "rule",
                id: id.to_string(),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_defaults_are_there_in_order() {
        let store = Store::open_in_memory().unwrap();
        let rules = store.rules_for_group("default").unwrap();
        assert_eq!(rules[0].path_pattern.as_deref(), Some("secrets/*"));
        assert_eq!(rules[0].action, RuleAction::Deny);
        assert_eq!(rules.last().unwrap().tool_pattern, "*");
        assert_eq!(rules.last().unwrap().action, RuleAction::Require);
    }

    #[test]
    fn a_groups_rules_come_before_the_defaults() {
        let store = Store::open_in_memory().unwrap();
        let id = store
            .add_rule(&NewRule {
                group_name: "trusted".into(),
                tool_pattern: "execute_cmd".into(),
                command_pattern: Some("cargo test".into()),
                action: Some(RuleAction::Allow),
                priority: 500,
                ..NewRule::default()
            })
            .unwrap();
        let rules = store.rules_for_group("trusted").unwrap();
        assert_eq!(
            rules[0].id, id,
            "the group's own rule first, whatever its priority"
        );
        assert_eq!(
            rules.len(),
            store.rules_for_group("default").unwrap().len() + 1
        );
        store.delete_rule(id).unwrap();
        assert!(matches!(
            store.delete_rule(id),
            Err(StoreError::NotFound { .. })
        ));
        assert!(store.add_rule(&NewRule::default()).is_err(), "no action");
    }
}
