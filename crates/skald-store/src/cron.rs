//! Scheduled jobs and their runs. Claiming an occurrence is a compare-and-set on the job's
//! next run time inside one transaction, backed by the unique (job, occurrence) key: two
//! Skald processes on one database never run the same occurrence.

use crate::{Store, StoreError, now_ms, parse_stored};
use rusqlite::{OptionalExtension, Row, params};
use serde::{Deserialize, Serialize};
pub use skald_api::records::MissedPolicy;

/// Defined with the protocol, which carries it to the UI as it is stored.
pub use skald_api::listings::CronJobInfo as ScheduledJob;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewJob {
    pub name: String,
    pub description: String,
    pub agent_id: String,
    pub prompt: String,
    pub cron: String,
    pub timezone: String,
    pub missed_policy: MissedPolicy,
    pub home_session_id: Option<i64>,
    pub run_context_id: Option<i64>,
    pub working_dir: Option<String>,
    /// Each run works in a worktree of its own.
    pub worktree: bool,
    pub next_run_at: Option<i64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Running,
    Done,
    Failed,
    Interrupted,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Done => "done",
            RunStatus::Failed => "failed",
            RunStatus::Interrupted => "interrupted",
        }
    }

    fn parse(s: &str) -> Result<RunStatus, StoreError> {
        match s {
            "running" => Ok(RunStatus::Running),
            "done" => Ok(RunStatus::Done),
            "failed" => Ok(RunStatus::Failed),
            "interrupted" => Ok(RunStatus::Interrupted),
            other => Err(StoreError::Invalid(format!("job run status `{other}`"))),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobRun {
    pub id: i64,
    pub job_id: i64,
    pub scheduled_for: i64,
    pub occurrences: i64,
    pub session_id: Option<i64>,
    pub status: RunStatus,
    pub result: Option<String>,
    pub owner: String,
    pub lease_until: i64,
    pub started_at: i64,
    pub finished_at: Option<i64>,
}

const JOB_COLUMNS: &str = "id, name, description, agent_id, prompt, cron, timezone, \
                           missed_policy, enabled, home_session_id, run_context_id, working_dir, \
                           next_run_at, created_at, updated_at, worktree";

fn job_row(row: &Row<'_>) -> rusqlite::Result<(ScheduledJob, String)> {
    Ok((
        ScheduledJob {
            id: row.get(0)?,
            name: row.get(1)?,
            description: row.get(2)?,
            agent_id: row.get(3)?,
            prompt: row.get(4)?,
            cron: row.get(5)?,
            timezone: row.get(6)?,
            missed_policy: MissedPolicy::Once,
            enabled: row.get(8)?,
            home_session_id: row.get(9)?,
            run_context_id: row.get(10)?,
            working_dir: row.get(11)?,
            next_run_at: row.get(12)?,
            created_at: row.get(13)?,
            updated_at: row.get(14)?,
            worktree: row.get(15)?,
        },
        row.get(7)?,
    ))
}

fn job_finish((mut job, policy): (ScheduledJob, String)) -> Result<ScheduledJob, StoreError> {
    job.missed_policy = parse_stored(&policy, MissedPolicy::parse, "missed-run policy")?;
    Ok(job)
}

const RUN_COLUMNS: &str = "id, job_id, scheduled_for, occurrences, session_id, status, result, \
                           owner, lease_until, started_at, finished_at";

fn run_row(row: &Row<'_>) -> rusqlite::Result<(JobRun, String)> {
    Ok((
        JobRun {
            id: row.get(0)?,
            job_id: row.get(1)?,
            scheduled_for: row.get(2)?,
            occurrences: row.get(3)?,
            session_id: row.get(4)?,
            status: RunStatus::Running,
            result: row.get(6)?,
            owner: row.get(7)?,
            lease_until: row.get(8)?,
            started_at: row.get(9)?,
            finished_at: row.get(10)?,
        },
        row.get(5)?,
    ))
}

fn run_finish((mut run, status): (JobRun, String)) -> Result<JobRun, StoreError> {
    run.status = RunStatus::parse(&status)?;
    Ok(run)
}

fn not_found(what: &'static str, id: i64) -> StoreError {
    StoreError::NotFound {
        what,
        id: id.to_string(),
    }
}

/// An occurrence to claim: the job's next run time as the claimer saw it, the occurrence
/// the run stands for, how many it covers, and the job's next run time after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Claim {
    pub job_id: i64,
    pub seen_next_run_at: i64,
    pub scheduled_for: i64,
    pub occurrences: i64,
    pub new_next_run_at: Option<i64>,
}

impl Store {
    pub fn create_job(&self, new: &NewJob) -> Result<ScheduledJob, StoreError> {
        let now = now_ms();
        let id = {
            let conn = self.conn();
            conn.execute(
                "INSERT INTO scheduled_jobs (name, description, agent_id, prompt, cron, timezone,
                                             missed_policy, home_session_id, run_context_id,
                                             working_dir, next_run_at, created_at, updated_at,
                                             worktree)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?12, ?13)",
                params![
                    new.name,
                    new.description,
                    new.agent_id,
                    new.prompt,
                    new.cron,
                    new.timezone,
                    new.missed_policy.as_str(),
                    new.home_session_id,
                    new.run_context_id,
                    new.working_dir,
                    new.next_run_at,
                    now,
                    new.worktree
                ],
            )?;
            conn.last_insert_rowid()
        };
        self.get_job(id)
    }

    /// What a person changes in a job: its name, prompt and schedule; `next_run_at` goes
    /// with the schedule.
    pub fn update_job(
        &self,
        id: i64,
        name: &str,
        prompt: &str,
        cron: &str,
        timezone: &str,
        next_run_at: Option<i64>,
    ) -> Result<ScheduledJob, StoreError> {
        let changed = self.conn().execute(
            "UPDATE scheduled_jobs
             SET name = ?2, prompt = ?3, cron = ?4, timezone = ?5,
                 next_run_at = CASE WHEN enabled THEN ?6 ELSE next_run_at END, updated_at = ?7
             WHERE id = ?1",
            params![id, name, prompt, cron, timezone, next_run_at, now_ms()],
        )?;
        if changed == 0 {
            return Err(not_found("scheduled job", id));
        }
        self.get_job(id)
    }

    pub fn get_job(&self, id: i64) -> Result<ScheduledJob, StoreError> {
        let row = self
            .conn()
            .query_row(
                &format!("SELECT {JOB_COLUMNS} FROM scheduled_jobs WHERE id = ?1"),
                [id],
                job_row,
            )
            .optional()?;
        row.map(job_finish)
            .transpose()?
            .ok_or_else(|| not_found("scheduled job", id))
    }

    pub fn list_jobs(&self) -> Result<Vec<ScheduledJob>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!(
            "SELECT {JOB_COLUMNS} FROM scheduled_jobs ORDER BY id"
        ))?;
        let rows = stmt
            .query_map([], job_row)?
            .collect::<Result<Vec<_>, _>>()?;
        rows.into_iter().map(job_finish).collect()
    }

    /// Deletes a job with its runs' records.
    pub fn delete_job(&self, id: i64) -> Result<(), StoreError> {
        let changed = self
            .conn()
            .execute("DELETE FROM scheduled_jobs WHERE id = ?1", [id])?;
        if changed == 0 {
            return Err(not_found("scheduled job", id));
        }
        Ok(())
    }

    /// Turns a job on or off. Turning it on sets its next run time afresh, so a job
    /// that was off for a week does not count that week as missed.
    pub fn set_job_enabled(
        &self,
        id: i64,
        enabled: bool,
        next_run_at: Option<i64>,
    ) -> Result<ScheduledJob, StoreError> {
        let changed = self.conn().execute(
            "UPDATE scheduled_jobs
             SET enabled = ?2, next_run_at = CASE WHEN ?2 THEN ?3 ELSE next_run_at END,
                 updated_at = ?4
             WHERE id = ?1",
            params![id, enabled, next_run_at, now_ms()],
        )?;
        if changed == 0 {
            return Err(not_found("scheduled job", id));
        }
        self.get_job(id)
    }

    /// Enabled jobs whose next occurrence is at or before `now`.
    pub fn due_jobs(&self, now: i64) -> Result<Vec<ScheduledJob>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!(
            "SELECT {JOB_COLUMNS} FROM scheduled_jobs
             WHERE enabled = 1 AND next_run_at IS NOT NULL AND next_run_at <= ?1
             ORDER BY next_run_at, id"
        ))?;
        let rows = stmt
            .query_map([now], job_row)?
            .collect::<Result<Vec<_>, _>>()?;
        rows.into_iter().map(job_finish).collect()
    }

    /// The earliest next run time of the enabled jobs.
    pub fn next_job_time(&self) -> Result<Option<i64>, StoreError> {
        Ok(self.conn().query_row(
            "SELECT MIN(next_run_at) FROM scheduled_jobs WHERE enabled = 1",
            [],
            |r| r.get(0),
        )?)
    }

    /// Moves a job's next run time on without running it (missed occurrences the job's
    /// policy skips). Returns false if another process moved it first.
    pub fn advance_job(
        &self,
        job_id: i64,
        seen_next_run_at: i64,
        new_next_run_at: Option<i64>,
    ) -> Result<bool, StoreError> {
        let changed = self.conn().execute(
            "UPDATE scheduled_jobs SET next_run_at = ?3, updated_at = ?4
             WHERE id = ?1 AND next_run_at = ?2",
            params![job_id, seen_next_run_at, new_next_run_at, now_ms()],
        )?;
        Ok(changed == 1)
    }

    /// Claims an occurrence for `owner`: moves the job's next run time on and records the
    /// run, in one transaction, only if nobody moved the job since `seen_next_run_at` was
    /// read. `None`: another process got there first.
    pub fn claim_occurrence(
        &self,
        claim: &Claim,
        owner: &str,
        lease_ms: i64,
    ) -> Result<Option<JobRun>, StoreError> {
        let now = now_ms();
        let id = {
            let mut conn = self.conn();
            let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            let moved = tx.execute(
                "UPDATE scheduled_jobs SET next_run_at = ?3, updated_at = ?4
                 WHERE id = ?1 AND enabled = 1 AND next_run_at = ?2",
                params![
                    claim.job_id,
                    claim.seen_next_run_at,
                    claim.new_next_run_at,
                    now
                ],
            )?;
            if moved != 1 {
                return Ok(None);
            }
            let inserted = tx.execute(
                "INSERT OR IGNORE INTO job_runs (job_id, scheduled_for, occurrences, status,
                                                 owner, lease_until, started_at)
                 VALUES (?1, ?2, ?3, 'running', ?4, ?5, ?6)",
                params![
                    claim.job_id,
                    claim.scheduled_for,
                    claim.occurrences,
                    owner,
                    now + lease_ms,
                    now
                ],
            )?;
            if inserted != 1 {
                // The occurrence already ran (a clock set back); the job still moves on.
                tx.commit()?;
                return Ok(None);
            }
            let id = tx.last_insert_rowid();
            tx.commit()?;
            id
        };
        self.get_run(id).map(Some)
    }

    pub fn get_run(&self, id: i64) -> Result<JobRun, StoreError> {
        let row = self
            .conn()
            .query_row(
                &format!("SELECT {RUN_COLUMNS} FROM job_runs WHERE id = ?1"),
                [id],
                run_row,
            )
            .optional()?;
        row.map(run_finish)
            .transpose()?
            .ok_or_else(|| not_found("job run", id))
    }

    /// A job's runs, newest first.
    pub fn list_runs(&self, job_id: i64) -> Result<Vec<JobRun>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!(
            "SELECT {RUN_COLUMNS} FROM job_runs WHERE job_id = ?1 ORDER BY id DESC"
        ))?;
        let rows = stmt
            .query_map([job_id], run_row)?
            .collect::<Result<Vec<_>, _>>()?;
        rows.into_iter().map(run_finish).collect()
    }

    pub fn set_run_session(&self, run_id: i64, session_id: i64) -> Result<(), StoreError> {
        self.conn().execute(
            "UPDATE job_runs SET session_id = ?2 WHERE id = ?1",
            params![run_id, session_id],
        )?;
        Ok(())
    }

    /// Extends the lease of a run `owner` holds. Returns false if it no longer holds it.
    pub fn renew_run_lease(
        &self,
        run_id: i64,
        owner: &str,
        lease_ms: i64,
    ) -> Result<bool, StoreError> {
        let changed = self.conn().execute(
            "UPDATE job_runs SET lease_until = ?3
             WHERE id = ?1 AND owner = ?2 AND status = 'running'",
            params![run_id, owner, now_ms() + lease_ms],
        )?;
        Ok(changed == 1)
    }

    /// Records how `owner`'s run ended (`Interrupted`: a shutdown stopped it; the next
    /// start takes it over).
    pub fn finish_run(
        &self,
        run_id: i64,
        owner: &str,
        status: RunStatus,
        result: &str,
    ) -> Result<bool, StoreError> {
        let finished = (status != RunStatus::Interrupted).then(now_ms);
        let changed = self.conn().execute(
            "UPDATE job_runs SET status = ?3, result = ?4, finished_at = ?5, lease_until = 0
             WHERE id = ?1 AND owner = ?2 AND status = 'running'",
            params![run_id, owner, status.as_str(), result, finished],
        )?;
        Ok(changed == 1)
    }

    /// Takes over the runs a shutdown interrupted and those whose owner stopped renewing
    /// their lease (it died): each is claimed for `owner` with a fresh lease, at most once.
    pub fn take_over_runs(&self, owner: &str, lease_ms: i64) -> Result<Vec<JobRun>, StoreError> {
        let now = now_ms();
        let ids: Vec<i64> = {
            let mut conn = self.conn();
            let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            let ids: Vec<i64> = {
                let mut stmt = tx.prepare(
                    "SELECT id FROM job_runs
                     WHERE status = 'interrupted' OR (status = 'running' AND lease_until < ?1)
                     ORDER BY id",
                )?;
                stmt.query_map([now], |r| r.get(0))?
                    .collect::<Result<Vec<_>, _>>()?
            };
            for id in &ids {
                tx.execute(
                    "UPDATE job_runs SET status = 'running', owner = ?2, lease_until = ?3
                     WHERE id = ?1",
                    params![id, owner, now + lease_ms],
                )?;
            }
            tx.commit()?;
            ids
        };
        ids.into_iter().map(|id| self.get_run(id)).collect()
    }

    /// The home chat's id, creating the chat (titled `title`, working in `working_dir`)
    /// the first time — in one transaction, so two processes asking at once get one chat.
    pub fn ensure_home_session(
        &self,
        key: &str,
        title: &str,
        working_dir: Option<&str>,
    ) -> Result<i64, StoreError> {
        let now = now_ms();
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let existing: Option<i64> = tx
            .query_row(
                "SELECT s.id FROM app_state a JOIN chat_sessions s ON s.id = CAST(a.value AS INTEGER)
                 WHERE a.key = ?1",
                [key],
                |r| r.get(0),
            )
            .optional()?;
        if let Some(id) = existing {
            return Ok(id);
        }
        tx.execute(
            "INSERT INTO chat_sessions (title, agent_id, kind, working_dir, created_at, updated_at)
             VALUES (?1, 'main', 'interactive', ?2, ?3, ?3)",
            params![title, working_dir, now],
        )?;
        let id = tx.last_insert_rowid();
        tx.execute(
            "INSERT INTO app_state (key, value) VALUES (?1, ?2)
             ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            params![key, id.to_string()],
        )?;
        tx.commit()?;
        Ok(id)
    }

    /// A small piece of app state.
    pub fn app_state(&self, key: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .conn()
            .query_row("SELECT value FROM app_state WHERE key = ?1", [key], |r| {
                r.get(0)
            })
            .optional()?)
    }

    pub fn set_app_state(&self, key: &str, value: &str) -> Result<(), StoreError> {
        self.conn().execute(
            "INSERT INTO app_state (key, value) VALUES (?1, ?2)
             ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            params![key, value],
        )?;
        Ok(())
    }
}

#[cfg(test)]
#[path = "cron_tests.rs"]
mod tests;
