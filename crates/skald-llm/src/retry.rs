//! Retrying a call that failed before it produced anything: exponential backoff with
//! jitter, or the server's own `Retry-After` when it gave one.

use crate::LlmError;
use std::future::Future;
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included.
    pub attempts: u32,
    /// Wait before the first retry; doubled each time.
    pub base_delay: Duration,
    /// Longest wait between attempts, also the cap on a server's `Retry-After`.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            attempts: 4,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// The wait before retry number `retry` (0-based) after `err`.
    pub fn delay(&self, retry: u32, err: &LlmError) -> Duration {
        if let Some(after) = err.retry_after() {
            return after.min(self.max_delay);
        }
        let exp = self
            .base_delay
            .saturating_mul(2u32.saturating_pow(retry.min(16)))
            .min(self.max_delay);
        // Full jitter between half and the whole delay, so clients that failed together do
        // not come back together.
        let half = exp / 2;
        half + exp.saturating_sub(half).mul_f64(fastrand::f64())
    }
}

/// Runs `call` until it succeeds, fails with a final error, or the attempts run out. The
/// last error is returned. `on_retry` hears about each retry before its wait.
pub async fn with_retry<T, F, Fut>(
    policy: &RetryPolicy,
    mut call: F,
    mut on_retry: impl FnMut(u32, &LlmError, Duration),
) -> Result<T, LlmError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, LlmError>>,
{
    let mut retry = 0;
    loop {
        match call().await {
            Ok(v) => return Ok(v),
            Err(e) if e.is_retryable() && retry + 1 < policy.attempts => {
                let wait = policy.delay(retry, &e);
                on_retry(retry + 1, &e, wait);
                tokio::time::sleep(wait).await;
                retry += 1;
            }
            Err(e) => return Err(e),
        }
    }
}

/// Parses a `Retry-After` header: seconds, or an HTTP date (treated as "soon").
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    let v = value.trim();
    if let Ok(secs) = v.parse::<f64>()
        && secs.is_finite()
        && secs >= 0.0
    {
        return Some(Duration::from_secs_f64(secs.min(3600.0)));
    }
    // An HTTP date: we do not parse calendars for this; wait a moderate second.
    (!v.is_empty()).then_some(Duration::from_secs(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    fn status(code: u16, retry_after: Option<Duration>) -> LlmError {
        LlmError::Status {
            provider: "test",
            status: code,
            message: String::new(),
            retry_after,
        }
    }

    #[test]
    fn final_and_retryable_statuses() {
        for code in [401, 403, 404, 422, 400] {
            assert!(!status(code, None).is_retryable(), "{code}");
        }
        for code in [408, 429, 500, 502, 503, 529] {
            assert!(status(code, None).is_retryable(), "{code}");
        }
    }

    #[test]
    fn delays_grow_with_jitter_and_honour_retry_after() {
        let p = RetryPolicy::default();
        for retry in 0..6 {
            let d = p.delay(retry, &status(500, None));
            let full = (p.base_delay * 2u32.pow(retry)).min(p.max_delay);
            assert!(d >= full / 2 && d <= full, "retry {retry}: {d:?}");
        }
        let d = p.delay(0, &status(429, Some(Duration::from_secs(7))));
        assert_eq!(d, Duration::from_secs(7));
        let d = p.delay(0, &status(429, Some(Duration::from_secs(999))));
        assert_eq!(d, p.max_delay);
    }

    #[test]
    fn retry_after_values() {
        assert_eq!(parse_retry_after("3"), Some(Duration::from_secs(3)));
        assert_eq!(parse_retry_after("0.5"), Some(Duration::from_millis(500)));
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"),
            Some(Duration::from_secs(1))
        );
        assert_eq!(parse_retry_after(""), None);
    }

    #[tokio::test(start_paused = true)]
    async fn retries_until_success_then_stops() {
        let calls = AtomicU32::new(0);
        let policy = RetryPolicy::default();
        let result = with_retry(
            &policy,
            || async {
                let n = calls.fetch_add(1, Ordering::SeqCst);
                if n < 2 { Err(status(503, None)) } else { Ok(n) }
            },
            |_, _, _| {},
        )
        .await;
        assert_eq!(result, Ok(2));
        assert_eq!(calls.load(Ordering::SeqCst), 3);
    }

    #[tokio::test(start_paused = true)]
    async fn final_errors_are_not_retried_and_attempts_are_bounded() {
        let calls = AtomicU32::new(0);
        let policy = RetryPolicy::default();
        let r: Result<(), _> = with_retry(
            &policy,
            || async {
                calls.fetch_add(1, Ordering::SeqCst);
                Err(status(401, None))
            },
            |_, _, _| {},
        )
        .await;
        assert!(r.is_err());
        assert_eq!(calls.load(Ordering::SeqCst), 1);

        let calls = AtomicU32::new(0);
        let r: Result<(), _> = with_retry(
            &policy,
            || async {
                calls.fetch_add(1, Ordering::SeqCst);
                Err(status(500, None))
            },
            |_, _, _| {},
        )
        .await;
        assert!(r.is_err());
        assert_eq!(calls.load(Ordering::SeqCst), policy.attempts);
    }
}
