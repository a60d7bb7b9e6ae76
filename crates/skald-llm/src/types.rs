//! The provider-neutral vocabulary of a model call.

use crate::LlmError;
use futures::StreamExt;
use futures::stream::BoxStream;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

/// A tool call as the model made it. `arguments` is the raw JSON text the model wrote,
/// which may be invalid: the loop tells the model so instead of failing the turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// One message of the conversation sent to the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: String,
    /// Tool calls made by an assistant message.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For a tool message: the call it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// Images shown with a user message or a tool result (`crate::vision`). Not part of
    /// the serialized form: they are written per provider, fitted to its limits.
    #[serde(skip)]
    pub images: Vec<crate::vision::ImagePart>,
    /// For an assistant message: the reasoning blocks its provider wants back, as it sent
    /// them (Anthropic's signed and redacted thinking), opaque to Skald.
    #[serde(skip)]
    pub replay: Vec<Value>,
}

impl Message {
    pub fn system(text: impl Into<String>) -> Message {
        Message::plain(Role::System, text)
    }

    pub fn user(text: impl Into<String>) -> Message {
        Message::plain(Role::User, text)
    }

    pub fn assistant(text: impl Into<String>, tool_calls: Vec<ToolCall>) -> Message {
        Message {
            role: Role::Assistant,
            content: text.into(),
            tool_calls,
            tool_call_id: None,
            images: Vec::new(),
            replay: Vec::new(),
        }
    }

    pub fn tool_result(call_id: impl Into<String>, text: impl Into<String>) -> Message {
        Message {
            role: Role::Tool,
            content: text.into(),
            tool_calls: Vec::new(),
            tool_call_id: Some(call_id.into()),
            images: Vec::new(),
            replay: Vec::new(),
        }
    }

    /// The same message showing `images` too.
    pub fn with_images(mut self, images: Vec<crate::vision::ImagePart>) -> Message {
        self.images = images;
        self
    }

    fn plain(role: Role, text: impl Into<String>) -> Message {
        Message {
            role,
            content: text.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            images: Vec::new(),
            replay: Vec::new(),
        }
    }
}

/// A tool offered to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: Value,
}

impl ToolSpec {
    /// From an OpenAI function definition, the form `Tool::openai_definition` returns.
    pub fn from_openai(def: &Value) -> Option<ToolSpec> {
        let f = def.get("function")?;
        Some(ToolSpec {
            name: f.get("name")?.as_str()?.to_string(),
            description: f
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            parameters: f
                .get("parameters")
                .cloned()
                .unwrap_or_else(|| serde_json::json!({"type": "object"})),
        })
    }
}

/// Whether the model must call a tool in this answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolChoice {
    /// The model decides.
    #[default]
    Auto,
    /// The answer is a tool call (local models: sampling is constrained to one).
    Required,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    pub model: String,
    pub messages: Vec<Message>,
    #[serde(default)]
    pub tools: Vec<ToolSpec>,
    #[serde(default)]
    pub tool_choice: ToolChoice,
    #[serde(default)]
    pub max_tokens: Option<u32>,
    #[serde(default)]
    pub temperature: Option<f32>,
    /// How hard a model that reasons thinks (`crate::effort`); its default when unset.
    #[serde(default)]
    pub effort: Option<crate::effort::Effort>,
    /// Offer the provider's own web search (Anthropic's server tool) besides `tools`; a
    /// provider without one ignores it (`searches_by_itself`).
    #[serde(default)]
    pub web_search: bool,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Every token read, cached ones included.
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Of `input_tokens`, those read from the provider's prompt cache (billed less).
    #[serde(default)]
    pub cached_input_tokens: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// The model finished its answer.
    Stop,
    /// The model wants tools run.
    ToolCalls,
    /// The output token limit was reached.
    Length,
    /// Refused by the provider's content filter.
    ContentFilter,
    /// Anything else the provider said, kept verbatim.
    Other(String),
}

/// What a model stream yields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// A piece of the answer's text.
    Text {
        delta: String,
    },
    /// A piece of the model's visible reasoning.
    Reasoning {
        delta: String,
    },
    /// A reasoning block the provider wants back with the next request of the same tool
    /// loop, as it sent it (Anthropic's signed thinking, redacted thinking).
    Replay {
        block: Value,
    },
    /// A tool call whose arguments are complete.
    ToolCall {
        call: ToolCall,
    },
    Usage {
        usage: Usage,
    },
    Finish {
        reason: FinishReason,
    },
    /// How much of a long prompt the model has read, in tokens (local models, whose
    /// reading of an agent's prompt can take many seconds on a small machine).
    Reading {
        done: u64,
        total: u64,
    },
    /// The provider's rate limits as the response's headers stated them, first of the
    /// stream (OpenAI, Anthropic).
    RateLimits {
        limits: crate::ratelimit::RateLimits,
    },
}

pub type EventStream = BoxStream<'static, Result<Event, LlmError>>;

/// A whole answer, assembled from a stream.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Response {
    pub text: String,
    pub reasoning: String,
    pub tool_calls: Vec<ToolCall>,
    pub usage: Option<Usage>,
    pub finish: Option<FinishReason>,
}

impl Response {
    pub fn apply(&mut self, event: Event) {
        match event {
            Event::Text { delta } => self.text.push_str(&delta),
            Event::Reasoning { delta } => self.reasoning.push_str(&delta),
            Event::ToolCall { call } => self.tool_calls.push(call),
            Event::Usage { usage } => self.usage = Some(usage),
            Event::Finish { reason } => self.finish = Some(reason),
            Event::Reading { .. } | Event::Replay { .. } | Event::RateLimits { .. } => {}
        }
    }
}

/// Drains a stream into a `Response`.
pub async fn collect(mut stream: EventStream) -> Result<Response, LlmError> {
    let mut response = Response::default();
    while let Some(event) = stream.next().await {
        response.apply(event?);
    }
    Ok(response)
}

/// The start of a text for an error message.
pub(crate) fn preview(s: &str) -> String {
    match s.char_indices().nth(200) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use crate::provider::WireParser;
    use crate::{Event, LlmError};

    /// Feeds a recorded SSE body through a wire parser the way `drive` does.
    pub fn run_sse<P: WireParser<Item = eventsource_stream::Event>>(
        mut parser: P,
        body: &str,
    ) -> Result<Vec<Event>, LlmError> {
        let mut out = Vec::new();
        for ev in sse(body) {
            out.extend(parser.feed(ev)?);
            if parser.is_done() {
                break;
            }
        }
        out.extend(parser.finish()?);
        Ok(out)
    }

    /// Splits a recorded SSE body into events the way the wire parser sees them.
    pub fn sse(body: &str) -> Vec<eventsource_stream::Event> {
        // Arbitrary cuts, as a network would make.
        sse_chunked(body.as_bytes(), 7)
    }

    /// The SSE events in `body`, cut into `chunk`-byte pieces on the way.
    pub fn sse_chunked(body: &[u8], chunk: usize) -> Vec<eventsource_stream::Event> {
        use futures::StreamExt;
        let chunks = futures::stream::iter(
            body.chunks(chunk.max(1))
                .map(|c| Ok::<_, std::io::Error>(bytes::Bytes::copy_from_slice(c)))
                .collect::<Vec<_>>(),
        );
        // Through the same byte-to-event step as `provider::sse_items`.
        futures::executor::block_on(
            crate::provider::sse_events(chunks)
                .filter_map(|e| async move { e.ok() })
                .collect::<Vec<_>>(),
        )
    }
}
