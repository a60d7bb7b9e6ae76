use std::time::Duration;

/// Why a model call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LlmError {
    /// The server answered with an error status.
    #[error("{provider} answered HTTP {status}: {message}")]
    Status {
        provider: &'static str,
        status: u16,
        message: String,
        /// From a `Retry-After` header.
        retry_after: Option<Duration>,
    },
    /// The connection could not be made or broke before an answer started.
    #[error("cannot reach {provider}: {message}")]
    Connect {
        provider: &'static str,
        message: String,
    },
    /// No answer (or no next chunk) within the time allowed.
    #[error("{provider} did not answer within {after:?} ({what})")]
    Timeout {
        provider: &'static str,
        what: &'static str,
        after: Duration,
    },
    /// The stream ended before the model finished.
    #[error("{provider}'s stream ended before the answer was complete")]
    StreamCut { provider: &'static str },
    /// The server sent something that is not the protocol.
    #[error("{provider} sent an invalid response: {message}")]
    Protocol {
        provider: &'static str,
        message: String,
    },
    /// The provider is not configured well enough to call.
    #[error("{0}")]
    Config(String),
    /// The local model (llama.cpp in this process) failed.
    #[error("local model: {0}")]
    Local(String),
}

impl LlmError {
    /// Worth trying again: rate limits, server errors, timeouts and broken connections.
    /// 401/403/404/422 and protocol errors are final.
    pub fn is_retryable(&self) -> bool {
        match self {
            LlmError::Status { status, .. } => {
                matches!(status, 408 | 409 | 425 | 429) || (500..=599).contains(status)
            }
            LlmError::Connect { .. } | LlmError::Timeout { .. } | LlmError::StreamCut { .. } => {
                true
            }
            LlmError::Protocol { .. } | LlmError::Config(_) | LlmError::Local(_) => false,
        }
    }

    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            LlmError::Status { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}
