//! What Skald keeps in its data folder — rules, background tasks, schedules, plugins,
//! the Inbox — read and changed one way by every carrier: the UI's commands (through
//! `Service`) and the `skald` subcommands call these same functions, so a behaviour fixed
//! here is fixed in the browser, the desktop window and the terminal. They need only the
//! store: the CLI uses them without starting an engine. What must also reach a running
//! engine (a plugin started, a server connected) the `Service` adds around them.

use crate::{ServiceError, invalid};
use skald_api::protocol::{CronJobInfo, InboxEntry, PluginInfo, RuleDraft, RuleInfo, TaskInfo};
use skald_core::inbox::{Answer, Answered, Inbox};
use skald_core::plugins::Plugins;
use skald_store::Store;
use std::collections::HashMap;

pub struct Records<'a> {
    store: &'a Store,
}

impl<'a> Records<'a> {
    pub fn new(store: &'a Store) -> Records<'a> {
        Records { store }
    }

    /// Every rule, in the order the gate tries them.
    pub fn rules(&self) -> Result<Vec<RuleInfo>, ServiceError> {
        Ok(self.store.list_rules()?)
    }

    pub fn remove_rule(&self, id: i64) -> Result<(), ServiceError> {
        Ok(self.store.delete_rule(id)?)
    }

    /// Background tasks, newest first; only those started from `session` when given.
    pub fn tasks(&self, session: Option<i64>) -> Result<Vec<TaskInfo>, ServiceError> {
        Ok(self.store.list_tasks(session)?)
    }

    pub fn jobs(&self) -> Result<Vec<CronJobInfo>, ServiceError> {
        Ok(self.store.list_jobs()?)
    }

    /// Turns a schedule on (its next run worked out from now) or off.
    pub fn set_job_enabled(&self, id: i64, enabled: bool) -> Result<CronJobInfo, ServiceError> {
        skald_core::tasks::cron::set_enabled(self.store, id, enabled).map_err(cron_error)
    }

    pub fn remove_job(&self, id: i64) -> Result<(), ServiceError> {
        Ok(self.store.delete_job(id)?)
    }

    /// Changes a job's name, prompt and schedule, checked as when it was made.
    pub fn update_job(
        &self,
        id: i64,
        name: &str,
        prompt: &str,
        cron: &str,
        timezone: &str,
    ) -> Result<CronJobInfo, ServiceError> {
        skald_core::tasks::cron::update_job(self.store, id, name, prompt, cron, timezone)
            .map_err(cron_error)
    }

    /// The plugins Skald ships, with the user's settings and whether `plugins` runs them.
    pub fn plugins(&self, plugins: &Plugins) -> Vec<PluginInfo> {
        plugins.describe(self.store)
    }

    /// Turns a plugin on or off and/or sets its configuration (checked against its
    /// schema); `plugins` starts or stops it. Returns what changed, in a sentence.
    pub fn configure_plugin(
        &self,
        plugins: &Plugins,
        id: &str,
        config: Option<&serde_json::Value>,
        enabled: Option<bool>,
    ) -> Result<String, ServiceError> {
        plugins
            .configure(self.store, id, config, enabled)
            .map_err(invalid)
    }

    /// What waits on the user, oldest first, each with its chat's title.
    pub fn inbox(&self) -> Result<Vec<InboxEntry>, ServiceError> {
        let titles: HashMap<i64, String> = self
            .store
            .list_sessions()?
            .into_iter()
            .map(|s| (s.id, s.title))
            .collect();
        Ok(self
            .store
            .pending_inbox()?
            .into_iter()
            .map(|i| {
                let title = titles.get(&i.session_id).cloned().unwrap_or_default();
                skald_core::inbox::entry(i, title)
            })
            .collect())
    }

    /// The "always allow" rule an approval would store, how many of the session's
    /// earlier calls it would have allowed, and what else it reaches, in a sentence.
    pub fn propose_rule(&self, inbox_id: i64) -> Result<(RuleDraft, usize, String), ServiceError> {
        let (rule, matched) = skald_core::approval::propose_for_item(self.store, inbox_id)?;
        Ok((
            rule.clone(),
            matched.len(),
            skald_core::approval::rule_reach(&rule),
        ))
    }

    /// Answers an item from a process that is not the one waiting (the CLI): written to
    /// the store, where the waiting call picks it up. A running service answers through
    /// its own Inbox instead, which also wakes the call at once and tells the UIs.
    pub fn answer(&self, inbox_id: i64, answer: &Answer) -> Result<Answered, ServiceError> {
        Ok(Inbox::new().answer(self.store, inbox_id, answer, &|_| {})?)
    }
}

fn cron_error(e: skald_core::tasks::cron::CronError) -> ServiceError {
    match e {
        skald_core::tasks::cron::CronError::Store(e) => ServiceError::Store(e),
        other => invalid(other.to_string()),
    }
}
