//! The Agent Inbox: what the agents wait on, answers, and the "always allow" rule an answer
//! can propose.

use crate::{Service, ServiceError, convert, invalid};
use skald_api::protocol::{InboxAnswer, Reply};
use std::collections::HashMap;

impl Service {
    pub(crate) fn inbox(&self) -> Result<Reply, ServiceError> {
        let titles: HashMap<i64, String> = self
            .store
            .list_sessions()?
            .into_iter()
            .map(|s| (s.id, s.title))
            .collect();
        Ok(Reply::Inbox {
            items: self
                .sessions
                .inbox()?
                .into_iter()
                .map(|i| {
                    let title = titles.get(&i.session_id).cloned().unwrap_or_default();
                    skald_core::inbox::entry(i, title)
                })
                .collect(),
        })
    }

    pub(crate) fn answer(&self, inbox_id: i64, answer: InboxAnswer) -> Result<Reply, ServiceError> {
        let answer = convert::answer(answer).map_err(invalid)?;
        self.sessions.answer(inbox_id, &answer)?;
        Ok(Reply::Answer)
    }

    pub(crate) fn propose_rule(&self, inbox_id: i64) -> Result<Reply, ServiceError> {
        let (rule, matched) = self.sessions.propose_rule(inbox_id)?;
        Ok(Reply::ProposeRule {
            rule: convert::rule_draft(&rule),
            matched: u32::try_from(matched.len()).unwrap_or(u32::MAX),
            reach: skald_core::approval::rule_reach(&rule),
        })
    }
}
