//! The worktrees agents work in (docs/worktrees.md): one row each, kept until discarded,
//! outliving its chat and any crash.

use crate::{Store, StoreError, now_ms};
use rusqlite::{OptionalExtension, Row, params};
use skald_api::worktree::{WorktreeInfo, WorktreeKind, WorktreeStatus};

/// A worktree to record, made already.
#[derive(Debug, Clone)]
pub struct NewWorktree<'a> {
    pub name: &'a str,
    pub session_id: Option<i64>,
    pub source: &'a str,
    pub root: &'a str,
    pub working_dir: &'a str,
    pub kind: WorktreeKind,
    pub repo: Option<&'a str>,
    pub branch: Option<&'a str>,
    pub base_commit: Option<&'a str>,
    pub base_snapshot: Option<&'a str>,
}

const COLUMNS: &str = "id, name, session_id, source, root, working_dir, kind, repo, branch, \
                       base_commit, status, created_at, base_snapshot, trial";

fn from_row(r: &Row<'_>) -> rusqlite::Result<WorktreeInfo> {
    let kind: String = r.get(6)?;
    let status: String = r.get(10)?;
    Ok(WorktreeInfo {
        id: r.get(0)?,
        name: r.get(1)?,
        session_id: r.get(2)?,
        source: r.get(3)?,
        root: r.get(4)?,
        working_dir: r.get(5)?,
        // The table's CHECKs admit only these.
        kind: if kind == "git" {
            WorktreeKind::Git
        } else {
            WorktreeKind::Copy
        },
        repo: r.get(7)?,
        branch: r.get(8)?,
        base_commit: r.get(9)?,
        status: if status == "discarded" {
            WorktreeStatus::Discarded
        } else {
            WorktreeStatus::Active
        },
        created_at: r.get(11)?,
        base_snapshot: r.get(12)?,
        trial: r.get(13)?,
        last_used_at: None,
        in_use: false,
        disk_bytes: None,
    })
}

impl Store {
    pub fn add_worktree(&self, w: &NewWorktree<'_>) -> Result<WorktreeInfo, StoreError> {
        let conn = self.conn();
        conn.execute(
            "INSERT INTO worktrees (name, session_id, source, root, working_dir, kind, repo,
                                    branch, base_commit, created_at, base_snapshot)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            params![
                w.name,
                w.session_id,
                w.source,
                w.root,
                w.working_dir,
                w.kind.as_str(),
                w.repo,
                w.branch,
                w.base_commit,
                now_ms(),
                w.base_snapshot,
            ],
        )?;
        let id = conn.last_insert_rowid();
        drop(conn);
        self.get_worktree(id)
    }

    pub fn get_worktree(&self, id: i64) -> Result<WorktreeInfo, StoreError> {
        self.conn()
            .query_row(
                &format!("SELECT {COLUMNS} FROM worktrees WHERE id = ?1"),
                [id],
                from_row,
            )
            .optional()?
            .ok_or_else(|| StoreError::NotFound {
                what: "worktree",
                id: id.to_string(),
            })
    }

    /// The worktree named `name`, if there is one (active or discarded).
    pub fn find_worktree(&self, name: &str) -> Result<Option<WorktreeInfo>, StoreError> {
        Ok(self
            .conn()
            .query_row(
                &format!("SELECT {COLUMNS} FROM worktrees WHERE name = ?1"),
                [name],
                from_row,
            )
            .optional()?)
    }

    /// The worktree a chat works in, if it works in one.
    pub fn worktree_of_session(&self, session_id: i64) -> Result<Option<WorktreeInfo>, StoreError> {
        Ok(self
            .conn()
            .query_row(
                &format!(
                    "SELECT {COLUMNS} FROM worktrees WHERE session_id = ?1 AND status = 'active'"
                ),
                [session_id],
                from_row,
            )
            .optional()?)
    }

    /// The active worktree whose folder holds `folder` (canonical): the one a session
    /// working there — the worktree's chat, its tasks, cron runs and forks — works in.
    pub fn worktree_holding(
        &self,
        folder: &std::path::Path,
    ) -> Result<Option<WorktreeInfo>, StoreError> {
        Ok(self
            .list_worktrees()?
            .into_iter()
            .find(|w| skald_base::path::path_under(folder, std::path::Path::new(&w.root))))
    }

    /// Every worktree not discarded, newest first.
    pub fn list_worktrees(&self) -> Result<Vec<WorktreeInfo>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!(
            "SELECT {COLUMNS} FROM worktrees WHERE status = 'active' ORDER BY id DESC"
        ))?;
        let rows = stmt
            .query_map([], from_row)?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(rows)
    }

    /// The chats whose folder is `root` or inside it: every chat working in a worktree —
    /// its own, a fork of it, a task or a scheduled run given its folder.
    pub fn sessions_in_folder(&self, root: &str) -> Result<Vec<i64>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(
            "SELECT id FROM chat_sessions
             WHERE working_dir = ?1 OR substr(working_dir, 1, length(?1) + 1) = ?1 || '/'
             ORDER BY id",
        )?;
        let rows = stmt
            .query_map([root], |r| r.get(0))?
            .collect::<Result<Vec<i64>, _>>()?;
        Ok(rows)
    }

    /// Puts worktree `name` in best-of-N trial `trial`.
    pub fn set_worktree_trial(&self, name: &str, trial: &str) -> Result<(), StoreError> {
        self.conn().execute(
            "UPDATE worktrees SET trial = ?2 WHERE name = ?1",
            params![name, trial],
        )?;
        Ok(())
    }

    /// Whether any worktree, discarded or not, was of trial `trial`.
    pub fn trial_taken(&self, trial: &str) -> Result<bool, StoreError> {
        Ok(self
            .conn()
            .query_row(
                "SELECT 1 FROM worktrees WHERE trial = ?1 LIMIT 1",
                [trial],
                |_| Ok(()),
            )
            .optional()?
            .is_some())
    }

    /// Marks a worktree discarded; its name can be used again.
    pub fn discard_worktree(&self, id: i64) -> Result<(), StoreError> {
        let conn = self.conn();
        // The name is freed: a discarded row keeps it with its id appended.
        let n = conn.execute(
            "UPDATE worktrees SET status = 'discarded', name = name || '~' || id
             WHERE id = ?1 AND status = 'active'",
            [id],
        )?;
        if n == 0 {
            return Err(StoreError::NotFound {
                what: "active worktree",
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
    fn a_worktree_outlives_its_chat_and_its_name_is_free_once_discarded() {
        let store = Store::open_in_memory().unwrap();
        let s = store.create_session(&crate::NewSession::default()).unwrap();
        let new = NewWorktree {
            name: "fix",
            session_id: Some(s.id),
            source: "/home/me/p",
            root: "/data/worktrees/fix",
            working_dir: "/data/worktrees/fix",
            kind: WorktreeKind::Git,
            repo: Some("/home/me/p"),
            branch: Some("skald/fix"),
            base_commit: Some("abc"),
            base_snapshot: Some("def"),
        };
        let w = store.add_worktree(&new).unwrap();
        assert_eq!(store.worktree_of_session(s.id).unwrap().unwrap().id, w.id);
        assert!(store.add_worktree(&new).is_err(), "one name, one worktree");
        store.delete_session(s.id).unwrap();
        let kept = store.find_worktree("fix").unwrap().unwrap();
        assert_eq!(
            (kept.session_id, kept.status),
            (None, WorktreeStatus::Active)
        );
        store.discard_worktree(w.id).unwrap();
        assert!(store.list_worktrees().unwrap().is_empty());
        assert!(store.discard_worktree(w.id).is_err());
        let again = store
            .add_worktree(&NewWorktree {
                session_id: None,
                ..new
            })
            .unwrap();
        assert_eq!(again.name, "fix");
    }
}
