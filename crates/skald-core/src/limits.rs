//! What keeps a person's chats within bounds, changeable while the engine runs (Settings
//! writes config.toml and tells the engine): the context threshold at which older turns
//! are summarised, the daily budget, and the rate limits the providers last stated
//! (docs/models.md, "Cost and limits").

use skald_api::protocol::{LimitInfo, RateLimitInfo};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU8, Ordering};

#[derive(Debug, Default)]
pub struct Limits {
    compact_at: AtomicU8,
    daily_usd: Mutex<Option<f64>>,
    /// By provider name: what its latest response stated.
    rates: Mutex<BTreeMap<String, RateLimitInfo>>,
    /// Chats whose running turn the person let pass the daily budget (its sub-agents
    /// included), until that turn ends.
    passing: Mutex<BTreeSet<i64>>,
    /// What the model calls let through the budget and not yet recorded may cost, in US
    /// dollars: counted by every check meanwhile, so calls started at once (tasks fanned
    /// out) cannot all pass a budget that has room for one.
    in_flight: Mutex<f64>,
}

/// A model call's share of `Limits::in_flight`, given back when it is dropped (once the
/// call's cost is recorded, or it failed).
pub struct Reservation<'a> {
    limits: &'a Limits,
    usd: f64,
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        let mut v = skald_base::lock(&self.limits.in_flight);
        *v = (*v - self.usd).max(0.0);
    }
}

/// While it lives, the chat's turn may pass the daily budget.
pub struct Passing<'a> {
    limits: &'a Limits,
    session_id: i64,
}

impl Drop for Passing<'_> {
    fn drop(&mut self) {
        skald_base::lock(&self.limits.passing).remove(&self.session_id);
    }
}

impl Limits {
    pub fn new(compact_at: u8, daily_usd: Option<f64>) -> Limits {
        let limits = Limits::default();
        limits.set_compact_at(compact_at);
        limits.set_daily_usd(daily_usd);
        limits
    }

    /// Percent of the model's window at which older turns are summarised; 0: only when
    /// asked.
    pub fn compact_at(&self) -> u8 {
        self.compact_at.load(Ordering::Relaxed)
    }

    pub fn set_compact_at(&self, percent: u8) {
        self.compact_at.store(percent.min(100), Ordering::Relaxed);
    }

    /// US dollars a day; past it, a turn asks before it goes on.
    pub fn daily_usd(&self) -> Option<f64> {
        *skald_base::lock(&self.daily_usd)
    }

    /// A budget that is not a positive number of dollars is none.
    pub fn set_daily_usd(&self, usd: Option<f64>) {
        let usd = usd.filter(|u| u.is_finite() && *u > 0.0);
        *skald_base::lock(&self.daily_usd) = usd;
    }

    /// Lets the chat's running turn pass the budget; the turn holds what this returns
    /// until it ends.
    pub fn let_pass(&self, session_id: i64) {
        skald_base::lock(&self.passing).insert(session_id);
    }

    /// Whether the person let the chat's running turn pass the budget.
    pub fn passes(&self, session_id: i64) -> bool {
        skald_base::lock(&self.passing).contains(&session_id)
    }

    /// Held by a chat's root turn: when it ends, a "Run it" given during it no longer
    /// holds.
    pub fn turn_of(&self, session_id: i64) -> Passing<'_> {
        Passing {
            limits: self,
            session_id,
        }
    }

    /// What calls let through and not yet recorded may cost.
    pub fn in_flight(&self) -> f64 {
        *skald_base::lock(&self.in_flight)
    }

    /// Counts `usd` as in flight until what this returns is dropped.
    pub fn reserve(&self, usd: f64) -> Reservation<'_> {
        let usd = if usd.is_finite() { usd.max(0.0) } else { 0.0 };
        *skald_base::lock(&self.in_flight) += usd;
        Reservation { limits: self, usd }
    }

    /// Keeps what a provider's response stated (the latest of each provider).
    pub fn saw(&self, info: &RateLimitInfo) {
        skald_base::lock(&self.rates).insert(info.provider.clone(), info.clone());
    }

    /// What `provider` last stated, if it stated anything in this run.
    pub fn rate_limits_of(&self, provider: &str) -> Option<RateLimitInfo> {
        skald_base::lock(&self.rates).get(provider).cloned()
    }

    /// What every provider last stated, by name.
    pub fn rate_limits(&self) -> Vec<RateLimitInfo> {
        skald_base::lock(&self.rates).values().cloned().collect()
    }
}

/// What `provider`'s response stated at `now_ms`, as the protocol sends it.
pub fn rate_limit_info(
    provider: &str,
    limits: &skald_llm::ratelimit::RateLimits,
    now_ms: i64,
) -> RateLimitInfo {
    let info = |l: skald_llm::ratelimit::Limit| LimitInfo {
        limit: l.limit,
        remaining: l.remaining,
        resets_at: l.resets_at,
    };
    RateLimitInfo {
        provider: provider.to_string(),
        requests: limits.requests.map(info),
        tokens: limits.tokens.map(info),
        seen_at: now_ms,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use skald_llm::ratelimit::{Limit, RateLimits};

    #[test]
    fn a_budget_is_a_positive_number_and_a_threshold_at_most_a_hundred() {
        let l = Limits::new(250, Some(-1.0));
        assert_eq!((l.compact_at(), l.daily_usd()), (100, None));
        l.set_daily_usd(Some(f64::NAN));
        assert_eq!(l.daily_usd(), None);
        l.set_daily_usd(Some(3.0));
        assert_eq!(l.daily_usd(), Some(3.0));
        l.set_daily_usd(Some(0.0));
        assert_eq!(l.daily_usd(), None);
    }

    #[test]
    fn a_reservation_counts_until_it_is_dropped() {
        let l = Limits::default();
        let a = l.reserve(1.5);
        let b = l.reserve(2.0);
        assert!((l.in_flight() - 3.5).abs() < 1e-9);
        drop(a);
        assert!((l.in_flight() - 2.0).abs() < 1e-9);
        drop(b);
        assert_eq!(l.in_flight(), 0.0);
        drop(l.reserve(f64::NAN));
        assert_eq!(l.in_flight(), 0.0);
    }

    #[test]
    fn a_turn_let_past_the_budget_passes_until_it_ends() {
        let l = Limits::default();
        let turn = l.turn_of(7);
        l.let_pass(7);
        assert!(l.passes(7) && !l.passes(8));
        drop(turn);
        assert!(!l.passes(7));
    }

    #[test]
    fn the_latest_statement_of_each_provider_is_kept() {
        let l = Limits::default();
        let said = |remaining| RateLimits {
            requests: Some(Limit {
                limit: Some(10),
                remaining: Some(remaining),
                resets_at: None,
            }),
            tokens: None,
        };
        l.saw(&rate_limit_info("openai", &said(9), 1));
        l.saw(&rate_limit_info("anthropic", &said(5), 2));
        l.saw(&rate_limit_info("openai", &said(8), 3));
        let openai = l.rate_limits_of("openai").unwrap();
        assert_eq!(
            (openai.requests.unwrap().remaining, openai.seen_at),
            (Some(8), 3)
        );
        assert_eq!(l.rate_limits().len(), 2);
        assert_eq!(l.rate_limits_of("ollama"), None);
    }
}
