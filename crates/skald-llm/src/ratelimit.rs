//! The provider's rate limits as its response headers state them (docs/models.md, "Cost
//! and limits"): how many requests and tokens are left in the current window and when it
//! resets, so a person sees a limit coming before a call fails on it.
//!
//! OpenAI (and servers copying it, such as OpenRouter and Groq) send
//! `x-ratelimit-{limit,remaining,reset}-{requests,tokens}`, the reset as a duration
//! (`6m0s`, `20ms`); Anthropic sends `anthropic-ratelimit-{requests,tokens}-{limit,
//! remaining,reset}`, the reset as an RFC 3339 time. Ollama and local models send none.

use crate::provider::ProviderKind;
use reqwest::header::HeaderMap;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// One limit: the window's size, what is left of it, and when it is whole again.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limit {
    pub limit: Option<u64>,
    pub remaining: Option<u64>,
    /// Unix milliseconds.
    pub resets_at: Option<i64>,
}

impl Limit {
    fn is_empty(&self) -> bool {
        self.limit.is_none() && self.remaining.is_none() && self.resets_at.is_none()
    }
}

/// The limits one response stated; a provider may state either or both.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RateLimits {
    pub requests: Option<Limit>,
    pub tokens: Option<Limit>,
}

/// The limits in a response's headers, `now_ms` being when it came (a duration reset is
/// counted from it). `None` when the provider stated none.
pub fn from_headers(kind: ProviderKind, headers: &HeaderMap, now_ms: i64) -> Option<RateLimits> {
    let text = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    let number = |name: &str| text(name).and_then(|v| v.parse::<u64>().ok());
    let limit = |of: &str| -> Option<Limit> {
        let l = match kind {
            ProviderKind::Anthropic => Limit {
                limit: number(&format!("anthropic-ratelimit-{of}-limit")),
                remaining: number(&format!("anthropic-ratelimit-{of}-remaining")),
                resets_at: text(&format!("anthropic-ratelimit-{of}-reset")).and_then(rfc3339_ms),
            },
            ProviderKind::OpenAi => Limit {
                limit: number(&format!("x-ratelimit-limit-{of}")),
                remaining: number(&format!("x-ratelimit-remaining-{of}")),
                resets_at: text(&format!("x-ratelimit-reset-{of}"))
                    .and_then(duration)
                    .map(|d| {
                        now_ms.saturating_add(i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
                    }),
            },
            ProviderKind::Ollama | ProviderKind::Local => Limit::default(),
        };
        (!l.is_empty()).then_some(l)
    };
    let limits = RateLimits {
        requests: limit("requests"),
        tokens: limit("tokens"),
    };
    (limits.requests.is_some() || limits.tokens.is_some()).then_some(limits)
}

/// An RFC 3339 time as Unix milliseconds.
fn rfc3339_ms(s: &str) -> Option<i64> {
    chrono::DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|t| t.timestamp_millis())
}

/// OpenAI's reset durations: a sequence of number-unit pairs (`1h2m3.5s`, `6m0s`,
/// `20ms`), or a bare number of seconds as some compatible servers send.
fn duration(s: &str) -> Option<Duration> {
    if let Ok(secs) = s.parse::<f64>() {
        return Duration::try_from_secs_f64(secs).ok();
    }
    let mut total = 0f64;
    let mut rest = s;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .filter(|&i| i > 0)?;
        let value: f64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let seconds_per = match &rest[..unit_len] {
            "ms" => 0.001,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            "d" => 86400.0,
            _ => return None,
        };
        total += value * seconds_per;
        rest = &rest[unit_len..];
    }
    Duration::try_from_secs_f64(total).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::{HeaderName, HeaderValue};

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(
                HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        h
    }

    #[test]
    fn openai_durations_count_from_the_response() {
        let h = headers(&[
            ("x-ratelimit-limit-requests", "500"),
            ("x-ratelimit-remaining-requests", "499"),
            ("x-ratelimit-reset-requests", "120ms"),
            ("x-ratelimit-limit-tokens", "30000"),
            ("x-ratelimit-remaining-tokens", "29000"),
            ("x-ratelimit-reset-tokens", "1m2.5s"),
        ]);
        let l = from_headers(ProviderKind::OpenAi, &h, 1_000_000).unwrap();
        assert_eq!(
            l.requests,
            Some(Limit {
                limit: Some(500),
                remaining: Some(499),
                resets_at: Some(1_000_120)
            })
        );
        assert_eq!(
            l.tokens,
            Some(Limit {
                limit: Some(30000),
                remaining: Some(29000),
                resets_at: Some(1_062_500)
            })
        );
    }

    #[test]
    fn anthropic_resets_are_times() {
        let h = headers(&[
            ("anthropic-ratelimit-tokens-limit", "80000"),
            ("anthropic-ratelimit-tokens-remaining", "12"),
            ("anthropic-ratelimit-tokens-reset", "2026-12-07T16:00:30Z"),
        ]);
        let l = from_headers(ProviderKind::Anthropic, &h, 0).unwrap();
        assert_eq!(l.requests, None);
        let t = l.tokens.unwrap();
        assert_eq!((t.limit, t.remaining), (Some(80000), Some(12)));
        assert_eq!(t.resets_at, Some(1_796_659_230_000));
    }

    #[test]
    fn absent_unreadable_or_foreign_headers_state_nothing() {
        assert_eq!(
            from_headers(ProviderKind::OpenAi, &HeaderMap::new(), 0),
            None
        );
        // Another provider's names are not read.
        let h = headers(&[("anthropic-ratelimit-requests-remaining", "3")]);
        assert_eq!(from_headers(ProviderKind::OpenAi, &h, 0), None);
        assert_eq!(from_headers(ProviderKind::Ollama, &h, 0), None);
        // Garbage is skipped, what can be read is kept.
        let h = headers(&[
            ("x-ratelimit-remaining-requests", "lots"),
            ("x-ratelimit-reset-requests", "soon"),
            ("x-ratelimit-limit-requests", "10"),
        ]);
        let l = from_headers(ProviderKind::OpenAi, &h, 0).unwrap();
        assert_eq!(
            l.requests,
            Some(Limit {
                limit: Some(10),
                remaining: None,
                resets_at: None
            })
        );
    }

    #[test]
    fn durations() {
        assert_eq!(duration("6m0s"), Some(Duration::from_secs(360)));
        assert_eq!(duration("1h2m3s"), Some(Duration::from_secs(3723)));
        assert_eq!(duration("20ms"), Some(Duration::from_millis(20)));
        assert_eq!(duration("7"), Some(Duration::from_secs(7)));
        assert_eq!(duration("1x"), None);
        assert_eq!(duration("s"), None);
        assert_eq!(duration("-5"), None);
        assert_eq!(duration("1e400"), None);
    }
}
