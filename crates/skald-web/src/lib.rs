//! Skald's reach to the web (docs/web.md): a page fetched behind an address guard and made
//! readable (`fetch`, `convert`), the pages of one fetch kept a little while so paging
//! through them does not fetch again (`cache`), and search APIs (`search`). The tools that
//! use these (`web_fetch`, `web_search`) are in skald-tools; the HTTP client, readability
//! and PDF crates are used only here.

pub mod address;
pub mod cache;
pub mod convert;
pub mod fetch;
mod guard;
pub mod hosts;
pub mod search;

pub use convert::{Kind, Page};
pub use fetch::{Fetched, Reach, fetch, host_and_port, parse_url};
pub use url::Url;

/// Why a fetch or a search failed, in words the model and the person can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WebError {
    #[error("bad URL {0}")]
    BadUrl(String),
    #[error(
        "{host} is at {address}, a local, private or link-local address; web_fetch reaches \
         those only when a rule names the host and its port (skald rules add --tool \
         web_fetch --domain {host}:{port} --action allow)"
    )]
    Private {
        host: String,
        address: String,
        port: u16,
    },
    #[error("cannot look up {host}: {reason}")]
    Dns { host: String, reason: String },
    #[error("{url}: {reason}")]
    Request { url: String, reason: String },
    #[error("{url} answered HTTP {status} {reason}")]
    Status {
        url: String,
        status: u16,
        reason: String,
    },
    #[error("{url} did not answer within {secs} s ([web] timeout_secs)")]
    TimedOut { url: String, secs: u64 },
    #[error(
        "{url} is {content_type}; web_fetch reads HTML, text, JSON and PDF (download other \
         files with a command)"
    )]
    Unsupported { url: String, content_type: String },
    #[error("{0}")]
    Unreadable(String),
    #[error("web search ({backend}): {reason}")]
    Search {
        backend: &'static str,
        reason: String,
    },
}

#[cfg(test)]
mod site_tests;
