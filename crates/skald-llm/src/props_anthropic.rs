//! Properties of the Anthropic Messages stream parser (`anthropic::Parser` behind
//! `eventsource-stream`): however the network cuts a valid stream into chunks (LF or CRLF
//! line ends), however the server splits the thinking, the text and each tool call's input
//! JSON into deltas, with or without `event:` lines and pings in between, with or without a
//! byte-order mark, the answer comes out the same; and neither random bytes nor garbage events inside a valid stream make the
//! parser panic. 10,000 cases each (`PROPTEST_CASES` raises it).

use crate::props::{any_json, parse_sse, split};
use crate::{FinishReason, ToolCall, Usage, anthropic};
use proptest::prelude::*;
use serde_json::{Value, json};

/// One SSE event. `framing` chooses how its kind is told: 0 both an `event:` line and the
/// `type` field (what Anthropic sends), 1 only `type`, 2 only `event:` — the parser reads
/// `type` and falls back to the event name, so all three must mean the same.
fn event(kind: &str, mut v: Value, framing: u8) -> String {
    let mut out = String::new();
    if framing % 3 != 1 {
        out.push_str(&format!("event: {kind}\n"));
    }
    if framing % 3 != 2 {
        v["type"] = json!(kind);
    }
    out.push_str(&format!("data: {v}\n\n"));
    out
}

/// A tool call the model makes: its input as a JSON object, or none at all (no deltas, or
/// a single empty one, as Anthropic sends for tools without parameters).
#[derive(Debug, Clone)]
struct Tool {
    name: String,
    input: Option<Value>,
    empty_delta: bool,
    cuts: Vec<u16>,
}

fn tool() -> impl Strategy<Value = Tool> {
    (
        "[a-z_]{1,16}",
        prop::option::of(("(?s).{0,30}", any::<i64>(), any::<bool>(), "(?s).{0,10}").prop_map(
            |(path, n, flag, q)| json!({"path": path, "n": n, "flags": [flag], "nested": {"q": q}}),
        )),
        any::<bool>(),
        prop::collection::vec(any::<u16>(), 0..8),
    )
        .prop_map(|(name, input, empty_delta, cuts)| Tool {
            name,
            input,
            empty_delta,
            cuts,
        })
}

/// The stop reasons Anthropic documents, and what each must become.
fn stop() -> impl Strategy<Value = (&'static str, FinishReason)> {
    prop_oneof![
        Just(("end_turn", FinishReason::Stop)),
        Just(("stop_sequence", FinishReason::Stop)),
        Just(("tool_use", FinishReason::ToolCalls)),
        Just(("max_tokens", FinishReason::Length)),
        Just(("refusal", FinishReason::ContentFilter)),
        Just(("pause_turn", FinishReason::Other("pause_turn".into()))),
    ]
}

/// The prefix of a short valid stream, for garbage to land in.
fn valid_prefix() -> String {
    [
        event(
            "message_start",
            json!({"message": {"usage": {"input_tokens": 3}}}),
            0,
        ),
        event(
            "content_block_start",
            json!({"index": 0, "content_block": {"type": "tool_use", "id": "t", "name": "n", "input": {}}}),
            0,
        ),
        event(
            "content_block_delta",
            json!({"index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"a\":"}}),
            0,
        ),
    ]
    .concat()
}

fn valid_suffix() -> String {
    [
        event(
            "content_block_delta",
            json!({"index": 0, "delta": {"type": "input_json_delta", "partial_json": "1}"}}),
            0,
        ),
        event("content_block_stop", json!({"index": 0}), 0),
        event(
            "message_delta",
            json!({"delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 2}}),
            0,
        ),
        event("message_stop", json!({}), 0),
    ]
    .concat()
}

/// An event of a kind the parser knows, with fields of any shape: wrong types, huge or
/// negative indexes, blocks it never saw start.
fn junk_event() -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec![
            "message_start",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop",
            "ping",
            "error",
            "something_new",
        ]),
        prop::collection::btree_map(
            prop::sample::select(vec![
                "index",
                "delta",
                "content_block",
                "message",
                "usage",
                "error",
            ]),
            any_json(),
            0..4,
        ),
        prop_oneof![
            Just(json!({"type": "text_delta", "text": "x"})),
            Just(json!({"type": "input_json_delta", "partial_json": "x"})),
            Just(json!({"type": "tool_use"})),
            any_json(),
        ],
        any::<u8>(),
    )
        .prop_map(|(kind, fields, typed, framing)| {
            let mut v: serde_json::Map<String, Value> = fields
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect();
            // A well-typed `delta`/`content_block` reaches deeper into the parser.
            if framing % 2 == 0 {
                v.insert("delta".into(), typed.clone());
                v.insert("content_block".into(), typed);
            }
            event(kind, Value::Object(v), framing)
        })
}

proptest! {
    #![proptest_config(skald_testkit::property_config())]

    #[test]
    fn any_cut_and_any_deltas_give_the_same_answer(
        text in "(?s).{0,80}",
        text_cuts in prop::collection::vec(any::<u16>(), 0..6),
        text_in_start in any::<bool>(),
        thinking in prop::option::of(("(?s).{0,60}", prop::collection::vec(any::<u16>(), 0..6))),
        tools in prop::collection::vec(tool(), 0..3),
        (stop_reason, finish) in stop(),
        input_tokens in any::<u32>(),
        cache_read in prop::option::of(any::<u32>()),
        cache_creation in prop::option::of(any::<u32>()),
        output_tokens in any::<u32>(),
        framing in prop::collection::vec(any::<u8>(), 1..8),
        pings in prop::collection::vec(any::<u16>(), 0..4),
        chunk in 1usize..=64,
        crlf in any::<bool>(),
        bom in any::<bool>(),
    ) {
        let mut events: Vec<(&str, Value)> = Vec::new();
        let mut usage = json!({"input_tokens": input_tokens, "output_tokens": 1});
        if let Some(n) = cache_read {
            usage["cache_read_input_tokens"] = json!(n);
        }
        if let Some(n) = cache_creation {
            usage["cache_creation_input_tokens"] = json!(n);
        }
        events.push(("message_start", json!({"message": {
            "id": "msg_1", "type": "message", "role": "assistant", "content": [],
            "model": "claude", "stop_reason": null, "usage": usage,
        }})));
        let mut index = 0;
        if let Some((thinking, cuts)) = &thinking {
            events.push(("content_block_start",
                json!({"index": index, "content_block": {"type": "thinking", "thinking": ""}})));
            for piece in split(thinking, cuts) {
                events.push(("content_block_delta",
                    json!({"index": index, "delta": {"type": "thinking_delta", "thinking": piece}})));
            }
            // Thinking blocks end with a signature, which is not part of the answer.
            events.push(("content_block_delta",
                json!({"index": index, "delta": {"type": "signature_delta", "signature": "c2ln"}})));
            events.push(("content_block_stop", json!({"index": index})));
            index += 1;
        }
        let mut pieces = split(&text, &text_cuts).into_iter();
        // The block's start may already carry the first piece of text.
        let first = if text_in_start { pieces.next() } else { None };
        events.push(("content_block_start",
            json!({"index": index, "content_block": {"type": "text", "text": first.unwrap_or_default()}})));
        for piece in pieces {
            events.push(("content_block_delta",
                json!({"index": index, "delta": {"type": "text_delta", "text": piece}})));
        }
        events.push(("content_block_stop", json!({"index": index})));
        index += 1;
        let mut expected_calls = Vec::new();
        for (i, t) in tools.iter().enumerate() {
            let id = format!("toolu_{i}");
            events.push(("content_block_start", json!({"index": index, "content_block": {
                "type": "tool_use", "id": id, "name": t.name, "input": {},
            }})));
            let input = t.input.as_ref().map(Value::to_string).unwrap_or_default();
            if input.is_empty() && t.empty_delta {
                events.push(("content_block_delta",
                    json!({"index": index, "delta": {"type": "input_json_delta", "partial_json": ""}})));
            }
            for piece in split(&input, &t.cuts) {
                events.push(("content_block_delta",
                    json!({"index": index, "delta": {"type": "input_json_delta", "partial_json": piece}})));
            }
            events.push(("content_block_stop", json!({"index": index})));
            index += 1;
            expected_calls.push((id, t.name.clone(), t.input.clone().unwrap_or_else(|| json!({}))));
        }
        events.push(("message_delta", json!({
            "delta": {"stop_reason": stop_reason, "stop_sequence": null},
            "usage": {"output_tokens": output_tokens},
        })));
        // Pings may come anywhere before the end.
        for p in &pings {
            let at = 1 + usize::from(*p) % events.len();
            events.insert(at, ("ping", json!({})));
        }
        events.push(("message_stop", json!({})));

        let body: String = events
            .into_iter()
            .enumerate()
            .map(|(i, (kind, v))| event(kind, v, framing[i % framing.len()]))
            .collect();
        // Servers may end lines with CRLF; SSE allows it. JSON text never holds a raw newline.
        let body = if crlf { body.replace('\n', "\r\n") } else { body };
        // SSE says a byte-order mark starting the stream is ignored (however the network
        // cuts it: eventsource-stream 0.2.3 used to panic on it, see `provider::sse_events`).
        let body = if bom { format!("\u{feff}{body}") } else { body };
        let r = parse_sse(anthropic::Parser::default(), body.as_bytes(), chunk).unwrap();

        prop_assert_eq!(&r.text, &text);
        prop_assert_eq!(r.reasoning, thinking.map(|(t, _)| t).unwrap_or_default());
        prop_assert_eq!(r.tool_calls.len(), expected_calls.len());
        for (call, (id, name, input)) in r.tool_calls.iter().zip(&expected_calls) {
            prop_assert_eq!(&call.id, id);
            prop_assert_eq!(&call.name, name);
            let args: Value = serde_json::from_str(&call.arguments).unwrap();
            prop_assert_eq!(&args, input);
        }
        let cached = u64::from(cache_read.unwrap_or(0)) + u64::from(cache_creation.unwrap_or(0));
        prop_assert_eq!(r.usage, Some(Usage {
            input_tokens: u64::from(input_tokens) + cached,
            output_tokens: u64::from(output_tokens),
            cached_input_tokens: u64::from(cache_read.unwrap_or(0)),
        }));
        prop_assert_eq!(r.finish, Some(finish));
    }

    #[test]
    fn no_bytes_make_the_parser_panic(body in prop::collection::vec(any::<u8>(), 0..400), chunk in 1usize..32) {
        // An error is a fine answer to garbage; a panic is not.
        let _ = parse_sse(anthropic::Parser::default(), &body, chunk);
    }

    #[test]
    fn garbage_inside_a_valid_stream_is_an_error_or_ignored_never_a_panic(
        junk in "(?s).{0,60}",
        raw in any::<bool>(),
        at in any::<u16>(),
        chunk in 1usize..32,
    ) {
        // Either a whole `data:` line of junk between events, or junk spliced into the
        // middle of the stream's text, wherever it lands.
        let body = if raw {
            let mut body = valid_prefix() + &valid_suffix();
            let bounds: Vec<usize> = body.char_indices().map(|(i, _)| i).collect();
            body.insert_str(bounds[usize::from(at) % bounds.len()], &junk);
            body
        } else {
            format!("{}data: {junk}\n\n{}", valid_prefix(), valid_suffix())
        };
        let _ = parse_sse(anthropic::Parser::default(), body.as_bytes(), chunk);
    }

    #[test]
    fn events_of_any_shape_never_make_the_parser_panic(
        junk in prop::collection::vec(junk_event(), 1..6),
        chunk in 1usize..64,
    ) {
        let body = format!("{}{}{}", valid_prefix(), junk.concat(), valid_suffix());
        // Whatever the junk did, a stream that did not fail must still be a whole answer.
        if let Ok(r) = parse_sse(anthropic::Parser::default(), body.as_bytes(), chunk) {
            prop_assert!(r.finish.is_some());
            prop_assert!(r.usage.is_some());
        }
    }
}

/// The stream the garbage properties spoil is itself valid (else they would test nothing
/// but the error path), and a call's arguments are the raw JSON text the model wrote.
#[test]
fn the_stream_garbage_lands_in_is_valid() {
    let body = [valid_prefix(), event("ping", json!({}), 0), valid_suffix()].concat();
    let r = parse_sse(anthropic::Parser::default(), body.as_bytes(), 5).unwrap();
    assert_eq!(
        r.tool_calls,
        [ToolCall {
            id: "t".into(),
            name: "n".into(),
            arguments: "{\"a\":1}".into()
        }]
    );
    assert_eq!(r.finish, Some(FinishReason::ToolCalls));
}
