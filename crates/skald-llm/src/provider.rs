//! A configured model provider: where it is, how to authenticate, how long to wait.

use crate::retry::{RetryPolicy, parse_retry_after, with_retry};
use crate::{Event, EventStream, LlmError, Request, anthropic, ollama, openai};
use futures::StreamExt;
use std::collections::VecDeque;
use std::fmt;
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProviderKind {
    /// OpenAI chat completions and compatible servers.
    OpenAi,
    Anthropic,
    Ollama,
    /// A GGUF model run in this process (`local`); its "base URL" is the models folder.
    Local,
}

impl ProviderKind {
    pub fn parse(s: &str) -> Option<ProviderKind> {
        match s {
            "openai" => Some(ProviderKind::OpenAi),
            "anthropic" => Some(ProviderKind::Anthropic),
            "ollama" => Some(ProviderKind::Ollama),
            "local" => Some(ProviderKind::Local),
            _ => None,
        }
    }

    /// Whether the provider searches the web by itself when a request asks
    /// (`Request::web_search`): Anthropic's web search tool runs on Anthropic's side. An
    /// OpenAI-compatible server's search comes only with its search models, which take no
    /// tools, so Skald's chats there use a search API (docs/web.md).
    pub fn searches_by_itself(self) -> bool {
        self == ProviderKind::Anthropic
    }

    pub fn label(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "openai",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Ollama => "ollama",
            ProviderKind::Local => "local",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// Establishing the TCP/TLS connection.
    pub connect: Duration,
    /// From sending the request to the response headers (a cold local model may take a
    /// while to load).
    pub first_byte: Duration,
    /// Between two chunks of a streaming answer.
    pub idle: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            connect: Duration::from_secs(10),
            first_byte: Duration::from_secs(120),
            idle: Duration::from_secs(90),
        }
    }
}

/// A provider ready to call. Its API key is never printed: `Debug` redacts it.
#[derive(Clone)]
pub struct Provider {
    pub name: String,
    pub kind: ProviderKind,
    /// e.g. `https://api.openai.com/v1`, `https://api.anthropic.com`, `http://127.0.0.1:11434`.
    pub base_url: String,
    api_key: Option<String>,
    pub timeouts: Timeouts,
    pub retry: RetryPolicy,
    client: reqwest::Client,
}

impl fmt::Debug for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Provider")
            .field("name", &self.name)
            .field("kind", &self.kind)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("timeouts", &self.timeouts)
            .finish()
    }
}

impl Provider {
    pub fn new(
        name: impl Into<String>,
        kind: ProviderKind,
        base_url: impl Into<String>,
        api_key: Option<String>,
        timeouts: Timeouts,
    ) -> Result<Provider, LlmError> {
        let client = reqwest::Client::builder()
            .connect_timeout(timeouts.connect)
            .user_agent(concat!("skald/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| LlmError::Config(format!("cannot build the HTTP client: {e}")))?;
        Ok(Provider {
            name: name.into(),
            kind,
            base_url: base_url.into().trim_end_matches('/').to_string(),
            api_key: api_key.filter(|k| !k.is_empty()),
            timeouts,
            retry: RetryPolicy::default(),
            client,
        })
    }

    /// Whether a request can carry a key: a provider that needs one (Anthropic, OpenAI's
    /// own API) cannot answer without.
    pub fn lacks_key(&self) -> bool {
        let needs = match self.kind {
            ProviderKind::Anthropic => true,
            ProviderKind::OpenAi => self.base_url.starts_with(crate::config::DEFAULT_OPENAI_URL),
            ProviderKind::Ollama | ProviderKind::Local => false,
        };
        needs && self.api_key().is_none_or(|k| k.trim().is_empty())
    }

    pub(crate) fn api_key(&self) -> Option<&str> {
        self.api_key.as_deref()
    }

    pub(crate) fn label(&self) -> &'static str {
        self.kind.label()
    }

    /// Starts a streaming call, retrying failures that happen before the answer starts.
    /// Once events flow, a failure ends the stream with an error; the caller decides.
    pub async fn stream(&self, req: &Request) -> Result<EventStream, LlmError> {
        with_retry(
            &self.retry,
            || self.start(req),
            |attempt, err, wait| {
                tracing::warn!(provider = %self.name, attempt, %err, ?wait, "model call failed; retrying");
            },
        )
        .await
    }

    async fn start(&self, req: &Request) -> Result<EventStream, LlmError> {
        match self.kind {
            ProviderKind::OpenAi => openai::start(self, req).await,
            ProviderKind::Anthropic => anthropic::start(self, req).await,
            ProviderKind::Ollama => ollama::start(self, req).await,
            ProviderKind::Local => crate::local::start(self, req).await,
        }
    }

    /// Sends a JSON POST and returns the response once its status says the answer is
    /// coming; error statuses become `LlmError::Status` with the server's message.
    pub(crate) async fn post(
        &self,
        url: &str,
        body: &serde_json::Value,
        headers: &[(&str, String)],
    ) -> Result<reqwest::Response, LlmError> {
        let provider = self.label();
        let mut rb = self.client.post(url).json(body);
        for (k, v) in headers {
            rb = rb.header(*k, v);
        }
        let resp = match tokio::time::timeout(self.timeouts.first_byte, rb.send()).await {
            Err(_) => {
                return Err(LlmError::Timeout {
                    provider,
                    what: "response headers",
                    after: self.timeouts.first_byte,
                });
            }
            Ok(Err(e)) => {
                return Err(LlmError::Connect {
                    provider,
                    message: without_url(&e),
                });
            }
            Ok(Ok(r)) => r,
        };
        let status = resp.status();
        if status.is_success() {
            return Ok(resp);
        }
        let retry_after = resp
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(parse_retry_after);
        let text = tokio::time::timeout(self.timeouts.idle, resp.text())
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_default();
        Err(LlmError::Status {
            provider,
            status: status.as_u16(),
            message: error_message(&text),
            retry_after,
        })
    }
}

/// The human part of an error body: `{"error": {"message": …}}` (OpenAI, Anthropic),
/// `{"error": "…"}` (Ollama), or the text itself, shortened.
fn error_message(body: &str) -> String {
    let parsed: Option<serde_json::Value> = serde_json::from_str(body).ok();
    let msg = parsed.as_ref().and_then(|v| {
        let e = v.get("error")?;
        e.get("message")
            .and_then(|m| m.as_str())
            .or_else(|| e.as_str())
            .map(str::to_string)
    });
    let msg = msg.unwrap_or_else(|| body.trim().to_string());
    let msg = if msg.is_empty() {
        "no details".to_string()
    } else {
        msg
    };
    match msg.char_indices().nth(500) {
        Some((i, _)) => format!("{}…", &msg[..i]),
        None => msg,
    }
}

/// reqwest errors print the URL, which may carry a key in its query: keep only the cause.
fn without_url(e: &reqwest::Error) -> String {
    let mut msg = e.to_string();
    if let Some(url) = e.url() {
        msg = msg.replace(url.as_str(), "<url>");
    }
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        msg = format!("{msg}: {s}");
        source = s.source();
    }
    msg
}

/// The rate limits `resp`'s headers state, if they state any.
pub(crate) fn stated_limits(
    kind: ProviderKind,
    resp: &reqwest::Response,
) -> Option<crate::ratelimit::RateLimits> {
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    crate::ratelimit::from_headers(kind, resp.headers(), now_ms)
}

/// `stream`, led by the rate limits its response stated.
pub(crate) fn led_by_limits(
    limits: Option<crate::ratelimit::RateLimits>,
    stream: EventStream,
) -> EventStream {
    match limits {
        Some(limits) => futures::stream::once(async move { Ok(Event::RateLimits { limits }) })
            .chain(stream)
            .boxed(),
        None => stream,
    }
}

/// Turns a provider's wire items (SSE events, NDJSON lines) into `Event`s.
pub(crate) trait WireParser: Send + 'static {
    type Item: Send;
    /// Events for one wire item.
    fn feed(&mut self, item: Self::Item) -> Result<Vec<Event>, LlmError>;
    /// The wire said the answer is complete (`[DONE]`, `message_stop`, `done: true`).
    fn is_done(&self) -> bool;
    /// Events due when the wire ends; an error if it ended too early.
    fn finish(&mut self) -> Result<Vec<Event>, LlmError>;
}

/// Drives a parser over a stream of wire items with an idle timeout between items.
pub(crate) fn drive<S, P>(
    provider: &'static str,
    idle: Duration,
    items: S,
    parser: P,
) -> EventStream
where
    S: futures::Stream<Item = Result<P::Item, LlmError>> + Send + Unpin + 'static,
    P: WireParser,
{
    struct State<S, P> {
        items: S,
        parser: P,
        pending: VecDeque<Event>,
        finished: bool,
    }
    let state = State {
        items,
        parser,
        pending: VecDeque::new(),
        finished: false,
    };
    futures::stream::unfold(state, move |mut st| async move {
        loop {
            if let Some(ev) = st.pending.pop_front() {
                return Some((Ok(ev), st));
            }
            if st.finished {
                return None;
            }
            if st.parser.is_done() {
                st.finished = true;
                match st.parser.finish() {
                    Ok(evs) => st.pending.extend(evs),
                    Err(e) => return Some((Err(e), st)),
                }
                continue;
            }
            match tokio::time::timeout(idle, st.items.next()).await {
                Err(_) => {
                    st.finished = true;
                    return Some((
                        Err(LlmError::Timeout {
                            provider,
                            what: "the next chunk of the stream",
                            after: idle,
                        }),
                        st,
                    ));
                }
                Ok(None) => {
                    st.finished = true;
                    match st.parser.finish() {
                        Ok(evs) => st.pending.extend(evs),
                        Err(e) => return Some((Err(e), st)),
                    }
                }
                Ok(Some(Err(e))) => {
                    st.finished = true;
                    return Some((Err(e), st));
                }
                Ok(Some(Ok(item))) => match st.parser.feed(item) {
                    Ok(evs) => st.pending.extend(evs),
                    Err(e) => {
                        st.finished = true;
                        return Some((Err(e), st));
                    }
                },
            }
        }
    })
    .boxed()
}

/// A response body as Server-Sent Events.
pub(crate) fn sse_items(
    provider: &'static str,
    resp: reqwest::Response,
) -> impl futures::Stream<Item = Result<eventsource_stream::Event, LlmError>> + Send + Unpin + 'static
{
    sse_events(resp.bytes_stream()).map(move |r| {
        r.map_err(|e| match e {
            eventsource_stream::EventStreamError::Transport(t) => LlmError::Connect {
                provider,
                message: without_url(&t),
            },
            other => LlmError::Protocol {
                provider,
                message: other.to_string(),
            },
        })
    })
}

/// The Server-Sent Events of a byte stream. A byte-order mark starting the stream is
/// dropped here, as the SSE specification says to ignore it: eventsource-stream 0.2.3 would
/// slice one byte into it and panic.
pub(crate) fn sse_events<S, E>(
    bytes: S,
) -> impl futures::Stream<
    Item = Result<eventsource_stream::Event, eventsource_stream::EventStreamError<E>>,
>
where
    S: futures::Stream<Item = Result<bytes::Bytes, E>>,
{
    use eventsource_stream::Eventsource;
    const BOM: &[u8] = b"\xEF\xBB\xBF";
    // The start of the stream, held while it may still be (a cut-off piece of) a BOM.
    let mut head: Option<Vec<u8>> = Some(Vec::new());
    bytes
        .filter_map(move |item| {
            let out = match (item, head.take()) {
                (Ok(chunk), Some(mut start)) => {
                    start.extend_from_slice(&chunk);
                    if start.len() < BOM.len() && BOM.starts_with(&start) {
                        head = Some(start);
                        None
                    } else {
                        let rest = start.strip_prefix(BOM).unwrap_or(&start);
                        Some(Ok(bytes::Bytes::copy_from_slice(rest)))
                    }
                }
                (item, _) => item.map(Some).transpose(),
            };
            futures::future::ready(out)
        })
        .eventsource()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_the_key() {
        let p = Provider::new(
            "openai",
            ProviderKind::OpenAi,
            "https://api.example/v1/",
            Some("sk-secret-value".into()),
            Timeouts::default(),
        )
        .unwrap();
        let shown = format!("{p:?}");
        assert!(!shown.contains("sk-secret-value"), "{shown}");
        assert!(shown.contains("<redacted>"));
        assert_eq!(p.base_url, "https://api.example/v1");
    }

    #[test]
    fn error_bodies_are_reduced_to_their_message() {
        assert_eq!(
            error_message(r#"{"error": {"message": "Invalid API key", "type": "auth"}}"#),
            "Invalid API key"
        );
        assert_eq!(
            error_message(r#"{"error": "model not found"}"#),
            "model not found"
        );
        assert_eq!(error_message("  Bad Gateway "), "Bad Gateway");
        assert_eq!(error_message(""), "no details");
    }
}
