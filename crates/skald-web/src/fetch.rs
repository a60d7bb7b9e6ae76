//! One fetch of a page (docs/web.md): the URL checked, every hop's address checked after
//! DNS, redirects followed by hand within one host, the body read up to a cap, all within
//! one deadline. No cookies are kept and no proxy is used: a proxy would resolve the name
//! itself, past the address check.

use crate::address::is_public;
use crate::hosts::pattern_names;
use crate::{WebError, convert};
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use url::{Host, Url};

/// Redirects followed within one host before giving up.
const MAX_REDIRECTS: usize = 10;
/// The longest a connection may take to open, within the whole fetch's deadline.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// What a fetch may do: set by the person (config.toml `[web]`, the rules).
#[derive(Debug, Clone)]
pub struct Reach {
    /// Host patterns the rules that allow this call name (`hosts::pattern_names`): only
    /// these may be reached at a private, local or link-local address.
    pub named: Vec<String>,
    /// The whole fetch, redirects included.
    pub timeout: Duration,
    /// Bytes of a body read; the rest is left unread.
    pub max_bytes: usize,
}

impl Reach {
    fn names(&self, host: &str, port: u16) -> bool {
        self.named.iter().any(|p| pattern_names(p, host, port))
    }
}

/// What a fetch brought back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fetched {
    Page(Arc<convert::Page>),
    /// The page moved to another host: the model asks for it there, so that host goes
    /// through approval on its own.
    Moved {
        from: String,
        to: String,
    },
}

/// Checks `url` as the model wrote it and parses it.
pub fn parse_url(raw: &str) -> Result<Url, WebError> {
    let url = Url::parse(raw.trim()).map_err(|e| WebError::BadUrl(format!("`{raw}`: {e}")))?;
    match url.scheme() {
        "http" | "https" => {}
        other => {
            return Err(WebError::BadUrl(format!(
                "`{raw}`: only http and https pages can be fetched, not `{other}:`"
            )));
        }
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(WebError::BadUrl(format!(
            "`{raw}` carries a user name or password; web_fetch does not send credentials"
        )));
    }
    if url.host().is_none() {
        return Err(WebError::BadUrl(format!("`{raw}` names no host")));
    }
    Ok(url)
}

/// The host (as URLs write it) and port of a parsed URL.
pub fn host_and_port(url: &Url) -> (String, u16) {
    (
        url.host_str().unwrap_or_default().to_ascii_lowercase(),
        url.port_or_known_default().unwrap_or(0),
    )
}

/// Fetches `url` within `reach`.
pub async fn fetch(url: &Url, reach: &Reach) -> Result<Fetched, WebError> {
    match tokio::time::timeout(reach.timeout, fetch_hops(url, reach)).await {
        Ok(result) => result,
        Err(_) => Err(WebError::TimedOut {
            url: url.to_string(),
            secs: reach.timeout.as_secs(),
        }),
    }
}

async fn fetch_hops(start: &Url, reach: &Reach) -> Result<Fetched, WebError> {
    let mut url = start.clone();
    for _ in 0..=MAX_REDIRECTS {
        let (host, port) = host_and_port(&url);
        let named = reach.names(&host, port);
        // An address written in the URL (any of its forms: `2130706433`, `0x7f.1`,
        // `[::ffff:127.0.0.1]`, which the URL parser reads as the address) is never
        // looked up, so it is judged here.
        let literal = match url.host() {
            Some(Host::Ipv4(ip)) => Some(IpAddr::V4(ip)),
            Some(Host::Ipv6(ip)) => Some(IpAddr::V6(ip)),
            _ => None,
        };
        if let Some(ip) = literal
            && !named
            && !is_public(ip)
        {
            return Err(WebError::Private {
                host,
                address: ip.to_string(),
                port,
            });
        }
        let refused = Arc::new(Mutex::new(None));
        let client = client(named, port, refused.clone())?;
        let response = match client.get(url.clone()).send().await {
            Ok(r) => r,
            Err(e) => {
                if let Some(refusal) = take(&refused) {
                    return Err(refusal);
                }
                return Err(WebError::Request {
                    url: url.to_string(),
                    reason: describe(&e),
                });
            }
        };
        let status = response.status();
        if status.is_redirection() {
            let Some(location) = response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|v| v.to_str().ok())
            else {
                return Err(WebError::Status {
                    url: url.to_string(),
                    status: status.as_u16(),
                    reason: "a redirect without a Location".into(),
                });
            };
            let next = url
                .join(location)
                .map_err(|e| WebError::BadUrl(format!("redirect to `{location}`: {e}")))?;
            let next = parse_url(next.as_str())?;
            if host_and_port(&next) != (host, port) || next.scheme() != url.scheme() {
                // A downgrade to http on the same host is a move too: the model sees it.
                return Ok(Fetched::Moved {
                    from: url.to_string(),
                    to: next.to_string(),
                });
            }
            url = next;
            continue;
        }
        if !status.is_success() {
            return Err(WebError::Status {
                url: url.to_string(),
                status: status.as_u16(),
                reason: status.canonical_reason().unwrap_or("").to_string(),
            });
        }
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let (body, cut) = read_capped(response, reach.max_bytes, &url).await?;
        let final_url = url.to_string();
        let page = tokio::task::spawn_blocking(move || {
            convert::page(&final_url, content_type.as_deref(), body, cut)
        })
        .await
        .map_err(|_| WebError::Unreadable("the page's conversion crashed".into()))??;
        return Ok(Fetched::Page(Arc::new(page)));
    }
    Err(WebError::Request {
        url: start.to_string(),
        reason: format!("more than {MAX_REDIRECTS} redirects"),
    })
}

fn take(refused: &Mutex<Option<WebError>>) -> Option<WebError> {
    refused.lock().unwrap_or_else(|e| e.into_inner()).take()
}

/// The body up to `max` bytes, and whether there was more.
async fn read_capped(
    mut response: reqwest::Response,
    max: usize,
    url: &Url,
) -> Result<(Vec<u8>, bool), WebError> {
    let mut body = Vec::new();
    loop {
        let chunk = response.chunk().await.map_err(|e| WebError::Request {
            url: url.to_string(),
            reason: describe(&e),
        })?;
        let Some(chunk) = chunk else {
            return Ok((body, false));
        };
        let room = max.saturating_sub(body.len());
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            return Ok((body, true));
        }
        body.extend_from_slice(&chunk);
    }
}

/// A client for one hop: its resolver refuses private addresses unless the host is named.
fn client(
    named: bool,
    port: u16,
    refused: Arc<Mutex<Option<WebError>>>,
) -> Result<reqwest::Client, WebError> {
    reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(CONNECT_TIMEOUT)
        .user_agent(concat!("Skald/", env!("CARGO_PKG_VERSION"), " (web_fetch)"))
        .dns_resolver(Arc::new(Guard {
            named,
            port,
            refused,
        }))
        .build()
        .map_err(|e| WebError::Request {
            url: String::new(),
            reason: format!("cannot set up the HTTP client: {e}"),
        })
}

/// The resolver every hop connects through: the addresses it returns are the only ones
/// the connection may use, so a name cannot be looked up once for the check and again,
/// to another address, for the connection.
struct Guard {
    named: bool,
    /// The hop's port, for the error's advice.
    port: u16,
    refused: Arc<Mutex<Option<WebError>>>,
}

impl Resolve for Guard {
    fn resolve(&self, name: Name) -> Resolving {
        let named = self.named;
        let port = self.port;
        let refused = self.refused.clone();
        let host = name.as_str().to_string();
        Box::pin(async move {
            let found: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0))
                .await
                .map_err(|e| {
                    let err = WebError::Dns {
                        host: host.clone(),
                        reason: e.to_string(),
                    };
                    *refused.lock().unwrap_or_else(|e| e.into_inner()) = Some(err.clone());
                    Box::new(err) as Box<dyn std::error::Error + Send + Sync>
                })?
                .collect();
            let usable: Vec<SocketAddr> = found
                .iter()
                .copied()
                .filter(|a| named || is_public(a.ip()))
                .collect();
            if usable.is_empty() {
                let err = match found.first() {
                    Some(a) => WebError::Private {
                        host: host.clone(),
                        address: a.ip().to_string(),
                        port,
                    },
                    None => WebError::Dns {
                        host: host.clone(),
                        reason: "no addresses".into(),
                    },
                };
                *refused.lock().unwrap_or_else(|e| e.into_inner()) = Some(err.clone());
                return Err(Box::new(err) as Box<dyn std::error::Error + Send + Sync>);
            }
            Ok(Box::new(usable.into_iter()) as Addrs)
        })
    }
}

/// A request error in words: reqwest's own message names the URL but not the cause.
fn describe(e: &reqwest::Error) -> String {
    let mut text = if e.is_connect() {
        "could not connect".to_string()
    } else if e.is_timeout() {
        "timed out".to_string()
    } else if e.is_body() || e.is_decode() {
        "the body could not be read".to_string()
    } else {
        "the request failed".to_string()
    };
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}
