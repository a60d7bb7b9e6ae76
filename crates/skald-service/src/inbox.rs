//! The Agent Inbox: what the agents wait on, answers, and the "always allow" rule an answer
//! can propose.

use crate::{Service, ServiceError, convert, invalid};
use skald_api::protocol::{InboxAnswer, Reply};

impl Service {
    pub(crate) fn inbox(&self) -> Result<Reply, ServiceError> {
        Ok(Reply::Inbox {
            items: self.records().inbox()?,
        })
    }

    pub(crate) fn answer(&self, inbox_id: i64, answer: InboxAnswer) -> Result<Reply, ServiceError> {
        let answer = convert::answer(answer).map_err(invalid)?;
        self.sessions.answer(inbox_id, &answer)?;
        Ok(Reply::Answer)
    }

    pub(crate) fn propose_rule(&self, inbox_id: i64) -> Result<Reply, ServiceError> {
        let (rule, matched, reach) = self.records().propose_rule(inbox_id)?;
        Ok(Reply::ProposeRule {
            rule,
            matched: u32::try_from(matched).unwrap_or(u32::MAX),
            reach,
        })
    }
}
