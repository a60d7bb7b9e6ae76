//! Web search through a search API the person set up (docs/web.md, "Search"): SearXNG's
//! JSON, Brave Search, Tavily. The endpoint is the person's, from config.toml, not the
//! model's, so it may be on their own machine (a SearXNG on localhost); the key comes from
//! the secrets store and is sent only there.

use crate::WebError;
use serde_json::Value;
use std::time::Duration;

/// The search APIs Skald speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Searxng,
    Brave,
    Tavily,
}

impl Backend {
    pub const ALL: [Backend; 3] = [Backend::Searxng, Backend::Brave, Backend::Tavily];

    pub fn parse(name: &str) -> Option<Backend> {
        match name.trim().to_ascii_lowercase().as_str() {
            "searxng" => Some(Backend::Searxng),
            "brave" => Some(Backend::Brave),
            "tavily" => Some(Backend::Tavily),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Backend::Searxng => "searxng",
            Backend::Brave => "brave",
            Backend::Tavily => "tavily",
        }
    }

    /// Where the API answers when config.toml names no endpoint; SearXNG has none (it is
    /// an instance someone runs).
    pub fn default_endpoint(self) -> Option<&'static str> {
        match self {
            Backend::Searxng => None,
            Backend::Brave => Some("https://api.search.brave.com/res/v1/web/search"),
            Backend::Tavily => Some("https://api.tavily.com/search"),
        }
    }

    /// Whether the API needs a key.
    pub fn needs_key(self) -> bool {
        !matches!(self, Backend::Searxng)
    }
}

/// A search API, set up.
#[derive(Clone)]
pub struct SearchApi {
    pub backend: Backend,
    pub endpoint: String,
    pub key: Option<String>,
    pub timeout: Duration,
}

impl std::fmt::Debug for SearchApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchApi")
            .field("backend", &self.backend)
            .field("endpoint", &self.endpoint)
            .field("key", &self.key.as_ref().map(|_| "<hidden>"))
            .finish()
    }
}

/// One result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    pub title: String,
    pub url: String,
    pub snippet: String,
}

/// Searches for `query`, at most `count` results.
pub async fn search(api: &SearchApi, query: &str, count: usize) -> Result<Vec<Hit>, WebError> {
    // No redirect is followed: a key in a header of our own (Brave's) would go along to
    // wherever the endpoint points.
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(api.timeout)
        .connect_timeout(Duration::from_secs(10))
        .user_agent(concat!(
            "Skald/",
            env!("CARGO_PKG_VERSION"),
            " (web_search)"
        ))
        .build()
        .map_err(|e| search_error(api, format!("cannot set up the HTTP client: {e}")))?;
    let key = || {
        api.key.clone().ok_or_else(|| {
            search_error(
                api,
                format!("{} needs an API key and none is stored", api.backend.name()),
            )
        })
    };
    let request = match api.backend {
        Backend::Searxng => client.get(with_query(
            api,
            &format!("{}/search", api.endpoint.trim_end_matches('/')),
            &[("q", query), ("format", "json")],
        )?),
        Backend::Brave => client
            .get(with_query(
                api,
                &api.endpoint,
                &[("q", query), ("count", &count.min(20).to_string())],
            )?)
            .header("Accept", "application/json")
            .header("X-Subscription-Token", key()?),
        Backend::Tavily => client
            .post(&api.endpoint)
            .bearer_auth(key()?)
            .json(&serde_json::json!({"query": query, "max_results": count.min(20)})),
    };
    let response = request.send().await.map_err(|e| {
        search_error(
            api,
            if e.is_timeout() {
                format!("no answer within {} s", api.timeout.as_secs())
            } else {
                format!("cannot reach {}: {}", api.endpoint, root_cause(&e))
            },
        )
    })?;
    let status = response.status();
    if !status.is_success() {
        let why = match status.as_u16() {
            300..=399 => "it answered with a redirect, which is not followed (check [web] \
                          search_url)"
                .to_string(),
            401 | 403 => "it refused the key (check it with `skald secrets list`)".to_string(),
            429 => "it says too many requests (rate limit or quota)".to_string(),
            code => format!("it answered HTTP {code}"),
        };
        return Err(search_error(api, why));
    }
    let body: Value = response
        .json()
        .await
        .map_err(|e| search_error(api, format!("its answer is not JSON: {e}")))?;
    let list = match api.backend {
        Backend::Searxng | Backend::Tavily => &body["results"],
        Backend::Brave => &body["web"]["results"],
    };
    let snippet_field = match api.backend {
        Backend::Searxng | Backend::Tavily => "content",
        Backend::Brave => "description",
    };
    let hits = list
        .as_array()
        .map(|a| a.as_slice())
        .unwrap_or_default()
        .iter()
        .filter_map(|r| {
            let url = r["url"].as_str()?.to_string();
            Some(Hit {
                title: crate::convert::clean(&strip_tags(r["title"].as_str().unwrap_or(&url))),
                snippet: crate::convert::clean(&strip_tags(
                    r[snippet_field].as_str().unwrap_or(""),
                )),
                url: crate::convert::clean(&url),
            })
        })
        .take(count)
        .collect();
    Ok(hits)
}

fn with_query(api: &SearchApi, base: &str, pairs: &[(&str, &str)]) -> Result<url::Url, WebError> {
    url::Url::parse_with_params(base, pairs)
        .map_err(|e| search_error(api, format!("the endpoint `{base}` is not a URL: {e}")))
}

fn search_error(api: &SearchApi, reason: String) -> WebError {
    WebError::Search {
        backend: api.backend.name(),
        reason,
    }
}

fn root_cause(e: &reqwest::Error) -> String {
    let mut cause: &dyn std::error::Error = e;
    while let Some(s) = cause.source() {
        cause = s;
    }
    cause.to_string()
}

/// A snippet without the markup some APIs put in (`<strong>` around the words found),
/// and with its entities read.
fn strip_tags(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_tag = false;
    for c in s.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&amp;", "&")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&#x27;", "'")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippets_lose_their_markup() {
        assert_eq!(strip_tags("a <strong>b</strong> &amp; c"), "a b & c");
    }

    #[test]
    fn backends_read_by_name() {
        for b in Backend::ALL {
            assert_eq!(Backend::parse(b.name()), Some(b));
        }
        assert_eq!(Backend::parse("google"), None);
    }
}
