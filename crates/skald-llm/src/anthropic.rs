//! Anthropic Messages, streamed.

use crate::provider::{
    Provider, ProviderKind, WireParser, drive, led_by_limits, sse_items, stated_limits,
};
use crate::{Event, EventStream, FinishReason, LlmError, Message, Request, Role, ToolCall, Usage};
use serde_json::{Value, json};
use std::collections::BTreeMap;

const PROVIDER: &str = "anthropic";
const API_VERSION: &str = "2023-06-01";
/// Anthropic requires `max_tokens`; this is used when the request names none.
const DEFAULT_MAX_TOKENS: u32 = 8192;

pub(crate) async fn start(p: &Provider, req: &Request) -> Result<EventStream, LlmError> {
    let key = p.api_key().ok_or_else(|| {
        LlmError::Config("Anthropic needs an API key: set ANTHROPIC_API_KEY".to_string())
    })?;
    // The base URL may or may not carry the /v1 suffix; accept both.
    let url = if p.base_url.ends_with("/v1") {
        format!("{}/messages", p.base_url)
    } else {
        format!("{}/v1/messages", p.base_url)
    };
    let headers = [
        ("x-api-key", key.to_string()),
        ("anthropic-version", API_VERSION.to_string()),
    ];
    let resp = p.post(&url, &body(req), &headers).await?;
    let limits = stated_limits(ProviderKind::Anthropic, &resp);
    let stream = drive(
        PROVIDER,
        p.timeouts.idle,
        sse_items(PROVIDER, resp),
        Parser::default(),
    );
    Ok(led_by_limits(limits, stream))
}

/// The version of Anthropic's web search tool Skald declares.
const WEB_SEARCH_TOOL: &str = "web_search_20250305";
/// Searches one answer may make.
const WEB_SEARCH_MAX_USES: u32 = 5;

/// Anthropic wants the system prompt apart, strictly alternating user/assistant turns, and
/// tool results as `tool_result` blocks in a user turn.
pub(crate) fn body(req: &Request) -> Value {
    let system: Vec<&str> = req
        .messages
        .iter()
        .filter(|m| m.role == Role::System)
        .map(|m| m.content.as_str())
        .collect();
    let thinking = thinking_budget(req);
    let mut turns: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for m in req.messages.iter().filter(|m| m.role != Role::System) {
        let (role, mut blocks) = blocks(m);
        // With thinking on, an assistant turn starts with the thinking it came with.
        if thinking.is_some() && m.role == Role::Assistant && !m.replay.is_empty() {
            blocks.splice(0..0, m.replay.iter().cloned());
        }
        match turns.last_mut() {
            Some((last, existing)) if *last == role => existing.extend(blocks),
            _ => turns.push((role, blocks)),
        }
    }
    let messages: Vec<Value> = turns
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect();
    let answer_tokens = req.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
    let mut body = json!({
        "model": req.model,
        "max_tokens": answer_tokens + thinking.unwrap_or(0),
        "messages": messages,
        "stream": true,
    });
    if let Some(budget) = thinking {
        body["thinking"] = json!({"type": "enabled", "budget_tokens": budget});
    }
    if !system.is_empty() {
        body["system"] = json!(system.join("\n\n"));
    }
    if !req.tools.is_empty() || req.web_search {
        let mut tools: Vec<Value> = req
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
            .collect();
        // Anthropic's own search: it runs on Anthropic's side, within the same answer
        // (`server_tool_use` and `web_search_tool_result` blocks, which the parser leaves
        // out: the answer's text carries what was found).
        if req.web_search {
            tools.push(json!({"type": WEB_SEARCH_TOOL, "name": "web_search", "max_uses": WEB_SEARCH_MAX_USES}));
        }
        body["tools"] = Value::Array(tools);
        if req.tool_choice == crate::ToolChoice::Required {
            body["tool_choice"] = json!({"type": "any"});
        }
    }
    if let Some(t) = req.temperature {
        body["temperature"] = json!(t);
    }
    body
}

/// The thinking budget of a request with an effort, when thinking can be on: not with a
/// forced tool call (Anthropic refuses `any` with thinking), and not in a tool loop whose
/// last answer came without signed thinking (from another model, or thinking off), since
/// Anthropic then wants that answer to start with a thinking block it does not have.
fn thinking_budget(req: &Request) -> Option<u32> {
    let effort = req.effort?;
    if req.tool_choice == crate::ToolChoice::Required {
        return None;
    }
    let last_user = req.messages.iter().rposition(|m| m.role == Role::User);
    let in_loop = req
        .messages
        .iter()
        .enumerate()
        .rev()
        .find(|(_, m)| m.role == Role::Assistant)
        .filter(|(i, m)| !m.tool_calls.is_empty() && last_user.is_none_or(|u| u < *i));
    match in_loop {
        Some((_, m)) if m.replay.is_empty() => None,
        _ => Some(effort.anthropic_budget()),
    }
}

/// `image` blocks (base64) of images fitted to Anthropic's limits.
fn image_blocks(images: &[crate::vision::ImagePart]) -> Vec<Value> {
    images
        .iter()
        .map(
            |img| match crate::vision::shown(img, crate::vision::ANTHROPIC_LIMITS) {
                crate::vision::Shown::Image(f) => json!({"type": "image", "source": {
                "type": "base64", "media_type": f.media_type, "data": f.base64}}),
                crate::vision::Shown::Note(note) => json!({"type": "text", "text": note}),
            },
        )
        .collect()
}

fn blocks(m: &Message) -> (&'static str, Vec<Value>) {
    match m.role {
        Role::Tool if !m.images.is_empty() => {
            let mut content = vec![json!({"type": "text", "text": m.content})];
            content.extend(image_blocks(&m.images));
            (
                "user",
                vec![json!({"type": "tool_result",
                            "tool_use_id": m.tool_call_id.clone().unwrap_or_default(),
                            "content": content})],
            )
        }
        Role::Tool => (
            "user",
            vec![json!({"type": "tool_result",
                        "tool_use_id": m.tool_call_id.clone().unwrap_or_default(),
                        "content": m.content})],
        ),
        Role::Assistant => {
            let mut b = Vec::new();
            if !m.content.is_empty() {
                b.push(json!({"type": "text", "text": m.content}));
            }
            for c in &m.tool_calls {
                // Arguments a model wrote as invalid JSON are sent back as an empty input;
                // the tool result already told the model they were invalid.
                let input: Value = serde_json::from_str(&c.arguments)
                    .ok()
                    .filter(Value::is_object)
                    .unwrap_or_else(|| json!({}));
                b.push(json!({"type": "tool_use", "id": c.id, "name": c.name, "input": input}));
            }
            if b.is_empty() {
                b.push(json!({"type": "text", "text": ""}));
            }
            ("assistant", b)
        }
        // Images before the text that asks about them, as Anthropic advises.
        Role::User | Role::System => {
            let mut b = image_blocks(&m.images);
            // Anthropic refuses an empty text block: an image alone is sent alone.
            if b.is_empty() || !m.content.trim().is_empty() {
                b.push(json!({"type": "text", "text": m.content}));
            }
            ("user", b)
        }
    }
}

enum Block {
    Text,
    /// Its text and signature, sent back as they came (`Event::Replay`).
    Thinking {
        text: String,
        signature: String,
    },
    Redacted(Value),
    ToolUse {
        id: String,
        name: String,
        json: String,
    },
    Other,
}

#[derive(Default)]
pub(crate) struct Parser {
    blocks: BTreeMap<u64, Block>,
    usage: Usage,
    stop: Option<FinishReason>,
    done: bool,
}

fn stop_reason(s: &str) -> FinishReason {
    match s {
        "end_turn" | "stop_sequence" => FinishReason::Stop,
        "tool_use" => FinishReason::ToolCalls,
        "max_tokens" => FinishReason::Length,
        "refusal" => FinishReason::ContentFilter,
        other => FinishReason::Other(other.to_string()),
    }
}

impl WireParser for Parser {
    type Item = eventsource_stream::Event;

    fn feed(&mut self, ev: eventsource_stream::Event) -> Result<Vec<Event>, LlmError> {
        if ev.data.trim().is_empty() {
            return Ok(Vec::new());
        }
        let v: Value = serde_json::from_str(&ev.data).map_err(|e| LlmError::Protocol {
            provider: PROVIDER,
            message: format!(
                "an event is not JSON ({e}): {}",
                crate::types::preview(&ev.data)
            ),
        })?;
        let kind = v
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or(ev.event.as_str());
        let index = v.get("index").and_then(Value::as_u64).unwrap_or(0);
        let mut out = Vec::new();
        match kind {
            "message_start" => {
                if let Some(u) = v.pointer("/message/usage") {
                    self.usage.input_tokens =
                        u.get("input_tokens").and_then(Value::as_u64).unwrap_or(0)
                            + u.get("cache_read_input_tokens")
                                .and_then(Value::as_u64)
                                .unwrap_or(0)
                            + u.get("cache_creation_input_tokens")
                                .and_then(Value::as_u64)
                                .unwrap_or(0);
                    self.usage.cached_input_tokens = u
                        .get("cache_read_input_tokens")
                        .and_then(Value::as_u64)
                        .unwrap_or(0);
                }
            }
            "content_block_start" => {
                let b = v.get("content_block").unwrap_or(&Value::Null);
                let block = match b.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        if let Some(t) = b
                            .get("text")
                            .and_then(Value::as_str)
                            .filter(|t| !t.is_empty())
                        {
                            out.push(Event::Text {
                                delta: t.to_string(),
                            });
                        }
                        Block::Text
                    }
                    Some("thinking") => Block::Thinking {
                        text: String::new(),
                        signature: String::new(),
                    },
                    Some("redacted_thinking") => Block::Redacted(b.clone()),
                    Some("tool_use") => Block::ToolUse {
                        id: b
                            .get("id")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string(),
                        name: b
                            .get("name")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string(),
                        json: String::new(),
                    },
                    _ => Block::Other,
                };
                self.blocks.insert(index, block);
            }
            "content_block_delta" => {
                let d = v.get("delta").unwrap_or(&Value::Null);
                match (
                    d.get("type").and_then(Value::as_str),
                    self.blocks.get_mut(&index),
                ) {
                    (Some("text_delta"), _) => {
                        if let Some(t) = d.get("text").and_then(Value::as_str) {
                            out.push(Event::Text {
                                delta: t.to_string(),
                            });
                        }
                    }
                    (Some("thinking_delta"), block) => {
                        if let Some(t) = d.get("thinking").and_then(Value::as_str) {
                            if let Some(Block::Thinking { text, .. }) = block {
                                text.push_str(t);
                            }
                            out.push(Event::Reasoning {
                                delta: t.to_string(),
                            });
                        }
                    }
                    (Some("signature_delta"), Some(Block::Thinking { signature, .. })) => {
                        if let Some(s) = d.get("signature").and_then(Value::as_str) {
                            signature.push_str(s);
                        }
                    }
                    (Some("input_json_delta"), Some(Block::ToolUse { json, .. })) => {
                        if let Some(p) = d.get("partial_json").and_then(Value::as_str) {
                            json.push_str(p);
                        }
                    }
                    _ => {}
                }
            }
            "content_block_stop" => match self.blocks.remove(&index) {
                Some(Block::ToolUse { id, name, json }) => out.push(Event::ToolCall {
                    call: ToolCall {
                        id,
                        name,
                        arguments: if json.trim().is_empty() {
                            "{}".to_string()
                        } else {
                            json
                        },
                    },
                }),
                // Only signed thinking can be sent back; unsigned is the model's notes alone.
                Some(Block::Thinking { text, signature }) if !signature.is_empty() => {
                    out.push(Event::Replay {
                        block: json!({"type": "thinking", "thinking": text, "signature": signature}),
                    });
                }
                Some(Block::Redacted(block)) => out.push(Event::Replay { block }),
                _ => {}
            },
            "message_delta" => {
                if let Some(r) = v.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop = Some(stop_reason(r));
                }
                if let Some(n) = v.pointer("/usage/output_tokens").and_then(Value::as_u64) {
                    self.usage.output_tokens = n;
                }
            }
            "message_stop" => self.done = true,
            "error" => {
                let kind = v
                    .pointer("/error/type")
                    .and_then(Value::as_str)
                    .unwrap_or("error");
                let message = v
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .unwrap_or(kind)
                    .to_string();
                // Overload and rate limits mid-stream are worth retrying, like their HTTP
                // status equivalents.
                let status = match kind {
                    "overloaded_error" => 529,
                    "rate_limit_error" => 429,
                    "api_error" => 500,
                    _ => 400,
                };
                return Err(LlmError::Status {
                    provider: PROVIDER,
                    status,
                    message,
                    retry_after: None,
                });
            }
            // `ping` and anything new are ignored.
            _ => {}
        }
        Ok(out)
    }

    fn is_done(&self) -> bool {
        self.done
    }

    fn finish(&mut self) -> Result<Vec<Event>, LlmError> {
        if !self.done {
            return Err(LlmError::StreamCut { provider: PROVIDER });
        }
        Ok(vec![
            Event::Usage { usage: self.usage },
            Event::Finish {
                reason: self.stop.take().unwrap_or(FinishReason::Stop),
            },
        ])
    }
}

#[cfg(test)]
mod tests {
    use crate::vision::tests::tiny_png;

    #[test]
    fn images_go_as_base64_blocks_in_user_turns_and_tool_results() {
        let img = tiny_png();
        let b64 = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &img.data);
        let block = json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64}});
        let req = Request {
            model: "m".into(),
            messages: vec![
                Message::user("what is this?").with_images(vec![img.clone()]),
                Message::assistant(
                    "",
                    vec![ToolCall {
                        id: "a".into(),
                        name: "read_file".into(),
                        arguments: "{}".into(),
                    }],
                ),
                Message::tool_result("a", "an image").with_images(vec![img.clone()]),
            ],
            tools: vec![],
            tool_choice: crate::ToolChoice::Auto,
            max_tokens: None,
            temperature: None,
            effort: None,
            web_search: false,
        };
        let body = body(&req);
        let m = body["messages"].as_array().unwrap();
        assert_eq!(
            m[0]["content"],
            json!([block.clone(), {"type": "text", "text": "what is this?"}])
        );
        assert_eq!(
            m[2]["content"],
            json!([{"type": "tool_result", "tool_use_id": "a",
                    "content": [{"type": "text", "text": "an image"}, block]}])
        );
    }

    use super::*;
    use crate::types::tests::run_sse;

    fn run(stream: &str) -> Result<Vec<Event>, LlmError> {
        run_sse(Parser::default(), stream)
    }

    /// The event sequence of the Messages API documentation, with a tool call.
    #[test]
    fn text_then_tool_use() {
        let events = run(concat!(
            "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude\",\"stop_reason\":null,\"usage\":{\"input_tokens\":25,\"output_tokens\":1}}}\n\n",
            "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
            "event: ping\ndata: {\"type\": \"ping\"}\n\n",
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Let me look.\"}}\n\n",
            "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
            "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"read_file\",\"input\":{}}}\n\n",
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"path\\\": \\\"\"}}\n\n",
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"a.rs\\\"}\"}}\n\n",
            "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n",
            "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":40}}\n\n",
            "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
        ))
        .unwrap();
        assert_eq!(
            events,
            vec![
                Event::Text {
                    delta: "Let me look.".into()
                },
                Event::ToolCall {
                    call: ToolCall {
                        id: "toolu_1".into(),
                        name: "read_file".into(),
                        arguments: "{\"path\": \"a.rs\"}".into()
                    }
                },
                Event::Usage {
                    usage: Usage {
                        input_tokens: 25,
                        output_tokens: 40,
                        cached_input_tokens: 0
                    }
                },
                Event::Finish {
                    reason: FinishReason::ToolCalls
                },
            ]
        );
    }

    #[test]
    fn thinking_and_tool_without_input() {
        let events = run(concat!(
            "data: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":1}}}\n\n",
            "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\"}}\n\n",
            "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"hmm\"}}\n\n",
            "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
            "data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t2\",\"name\":\"list_files\",\"input\":{}}}\n\n",
            "data: {\"type\":\"content_block_stop\",\"index\":1}\n\n",
            "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":5}}\n\n",
            "data: {\"type\":\"message_stop\"}\n\n",
        ))
        .unwrap();
        assert_eq!(
            events[0],
            Event::Reasoning {
                delta: "hmm".into()
            }
        );
        assert_eq!(
            events[1],
            Event::ToolCall {
                call: ToolCall {
                    id: "t2".into(),
                    name: "list_files".into(),
                    arguments: "{}".into()
                }
            }
        );
    }

    #[test]
    fn overload_mid_stream_is_retryable_and_a_cut_stream_is_an_error() {
        let err = run("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n").unwrap_err();
        assert!(err.is_retryable(), "{err}");
        assert!(err.to_string().contains("Overloaded"));
        let err = run("data: {\"type\":\"message_start\",\"message\":{}}\n\n").unwrap_err();
        assert_eq!(
            err,
            LlmError::StreamCut {
                provider: "anthropic"
            }
        );
    }

    #[test]
    fn request_body_alternates_and_carries_tool_results() {
        let req = Request {
            model: "claude".into(),
            messages: vec![
                Message::system("be brief"),
                Message::user("read a.rs"),
                Message::assistant(
                    "ok",
                    vec![
                        ToolCall {
                            id: "t1".into(),
                            name: "read_file".into(),
                            arguments: "{\"path\":\"a.rs\"}".into(),
                        },
                        ToolCall {
                            id: "t2".into(),
                            name: "read_file".into(),
                            arguments: "not json".into(),
                        },
                    ],
                ),
                Message::tool_result("t1", "fn main"),
                Message::tool_result("t2", "error"),
                Message::user("thanks"),
            ],
            tools: vec![],
            tool_choice: crate::ToolChoice::Auto,
            max_tokens: None,
            temperature: None,
            effort: None,
            web_search: false,
        };
        let b = body(&req);
        assert_eq!(b["system"], "be brief");
        assert_eq!(b["max_tokens"], DEFAULT_MAX_TOKENS);
        let msgs = b["messages"].as_array().unwrap();
        let roles: Vec<&str> = msgs.iter().map(|m| m["role"].as_str().unwrap()).collect();
        assert_eq!(roles, ["user", "assistant", "user"]);
        assert_eq!(msgs[1]["content"][1]["input"]["path"], "a.rs");
        assert_eq!(msgs[1]["content"][2]["input"], json!({}));
        assert_eq!(msgs[2]["content"][0]["type"], "tool_result");
        assert_eq!(msgs[2]["content"][1]["tool_use_id"], "t2");
        assert_eq!(msgs[2]["content"][2]["text"], "thanks");
    }

    #[test]
    fn signed_and_redacted_thinking_come_back_as_replay_blocks() {
        let events = run(concat!(
            "data: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":1}}}\n\n",
            "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\"}}\n\n",
            "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"hm\"}}\n\n",
            "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"m\"}}\n\n",
            "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"sig==\"}}\n\n",
            "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
            "data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"redacted_thinking\",\"data\":\"opaque\"}}\n\n",
            "data: {\"type\":\"content_block_stop\",\"index\":1}\n\n",
            "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":5}}\n\n",
            "data: {\"type\":\"message_stop\"}\n\n",
        ))
        .unwrap();
        let replay: Vec<&Value> = events
            .iter()
            .filter_map(|e| match e {
                Event::Replay { block } => Some(block),
                _ => None,
            })
            .collect();
        assert_eq!(
            replay,
            [
                &json!({"type": "thinking", "thinking": "hmm", "signature": "sig=="}),
                &json!({"type": "redacted_thinking", "data": "opaque"})
            ]
        );
    }

    #[test]
    fn an_effort_turns_thinking_on_unless_the_request_cannot_take_it() {
        use crate::effort::Effort;
        let call = ToolCall {
            id: "t1".into(),
            name: "list_files".into(),
            arguments: "{}".into(),
        };
        let thinking = json!({"type": "thinking", "thinking": "plan", "signature": "s"});
        let mut answered = Message::assistant("", vec![call.clone()]);
        answered.replay = vec![thinking.clone()];
        let req = |messages: Vec<Message>, choice| Request {
            model: "claude-sonnet-4-5".into(),
            messages,
            tools: vec![],
            tool_choice: choice,
            max_tokens: None,
            temperature: None,
            effort: Some(Effort::High),
            web_search: false,
        };
        // A tool loop whose last answer came with signed thinking: on, and the thinking
        // goes back first in that answer.
        let looped = body_of(req(
            vec![
                Message::user("go"),
                answered.clone(),
                Message::tool_result("t1", "a.txt"),
            ],
            crate::ToolChoice::Auto,
        ));
        assert_eq!(
            looped["thinking"],
            json!({"type": "enabled", "budget_tokens": 16384})
        );
        assert_eq!(looped["max_tokens"], 8192 + 16384);
        assert_eq!(looped["messages"][1]["content"][0], thinking);
        assert_eq!(looped["messages"][1]["content"][1]["type"], "tool_use");
        // Its last answer came without (another model's): off, nothing sent back.
        let without = body_of(req(
            vec![
                Message::user("go"),
                Message::assistant("", vec![call]),
                Message::tool_result("t1", "a.txt"),
            ],
            crate::ToolChoice::Auto,
        ));
        assert!(without.get("thinking").is_none(), "{without}");
        assert_eq!(without["max_tokens"], 8192);
        // A forced tool call: off.
        let forced = body_of(req(vec![Message::user("go")], crate::ToolChoice::Required));
        assert!(forced.get("thinking").is_none(), "{forced}");
        // A new question after a finished loop: on, the old thinking not needed.
        let fresh = body_of(req(
            vec![
                Message::user("go"),
                Message::assistant("done", vec![]),
                Message::user("next"),
            ],
            crate::ToolChoice::Auto,
        ));
        assert_eq!(fresh["thinking"]["budget_tokens"], 16384);
        // Without an effort, a replay block is not sent.
        let plain = body_of(Request {
            effort: None,
            web_search: false,
            ..req(
                vec![
                    Message::user("go"),
                    answered,
                    Message::tool_result("t1", "x"),
                ],
                crate::ToolChoice::Auto,
            )
        });
        assert!(plain.get("thinking").is_none());
        assert_eq!(plain["messages"][1]["content"][0]["type"], "tool_use");
    }

    fn body_of(req: Request) -> Value {
        body(&req)
    }

    #[test]
    fn an_image_sent_alone_has_no_empty_text_block() {
        let req = Request {
            model: "m".into(),
            messages: vec![Message::user("  ").with_images(vec![tiny_png()])],
            tools: vec![],
            tool_choice: crate::ToolChoice::Auto,
            max_tokens: None,
            temperature: None,
            effort: None,
            web_search: false,
        };
        let content = body(&req)["messages"][0]["content"].clone();
        assert_eq!(content.as_array().unwrap().len(), 1, "{content}");
        assert_eq!(content[0]["type"], "image");
    }
}
