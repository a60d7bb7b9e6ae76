//! Properties of the OpenAI-protocol stream parser (`openai::Parser` behind
//! `eventsource-stream`): however the network cuts a valid stream into chunks, and however
//! the server splits its text and a tool call's arguments into deltas, the answer comes out
//! the same; and no byte sequence makes the parser panic. 10,000 cases each
//! (`PROPTEST_CASES` raises it). Its helpers serve the other parsers' properties too
//! (`props_anthropic`, `props_ollama`).

use crate::provider::WireParser;
use crate::{Event, FinishReason, LlmError, Response, openai};
use proptest::prelude::*;
use serde_json::json;

/// Feeds wire items to a parser the way `provider::drive` does (stopping once the parser
/// says the answer is complete, then asking for its final events) and assembles the answer.
pub(crate) fn collect_items<P: WireParser>(
    mut parser: P,
    items: impl IntoIterator<Item = P::Item>,
) -> Result<Response, LlmError> {
    let mut events: Vec<Event> = Vec::new();
    for item in items {
        events.extend(parser.feed(item)?);
        if parser.is_done() {
            break;
        }
    }
    events.extend(parser.finish()?);
    let mut r = Response::default();
    for e in events {
        r.apply(e);
    }
    Ok(r)
}

/// An SSE body cut into `chunk`-byte network pieces, through `parser`.
pub(crate) fn parse_sse<P: WireParser<Item = eventsource_stream::Event>>(
    parser: P,
    body: &[u8],
    chunk: usize,
) -> Result<Response, LlmError> {
    collect_items(parser, crate::types::tests::sse_chunked(body, chunk))
}

fn parse(body: &[u8], chunk: usize) -> Result<Response, LlmError> {
    parse_sse(openai::Parser::default(), body, chunk)
}

/// Splits `s` at the given fractions, on character boundaries.
pub(crate) fn split(s: &str, cuts: &[u16]) -> Vec<String> {
    let bounds: Vec<usize> = s.char_indices().map(|(i, _)| i).chain([s.len()]).collect();
    let mut at: Vec<usize> = cuts
        .iter()
        .map(|c| bounds[usize::from(*c) % bounds.len()])
        .collect();
    at.sort_unstable();
    at.dedup();
    let mut out = Vec::new();
    let mut prev = 0;
    for a in at.into_iter().chain([s.len()]) {
        if a > prev {
            out.push(s[prev..a].to_string());
            prev = a;
        }
    }
    out
}

/// Any JSON value, nested a few levels: what a confused or hostile server might put where
/// a parser expects a string, a number or an object.
pub(crate) fn any_json() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::Value;
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        any::<f64>().prop_map(|n| json!(n)),
        "(?s).{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_]{0,8}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn data(v: serde_json::Value) -> String {
    format!("data: {v}\n\n")
}

proptest! {
    #![proptest_config(skald_testkit::property_config())]

    #[test]
    fn any_cut_and_any_deltas_give_the_same_answer(
        text in "(?s).{0,80}",
        path in "[^\u{0}]{0,40}",
        text_cuts in prop::collection::vec(any::<u16>(), 0..6),
        arg_cuts in prop::collection::vec(any::<u16>(), 0..6),
        chunk in 1usize..64,
        crlf in any::<bool>(),
    ) {
        let args = json!({"path": path}).to_string();
        let mut body = String::new();
        for piece in split(&text, &text_cuts) {
            body.push_str(&data(json!({"choices": [{"index": 0, "delta": {"content": piece}}]})));
        }
        body.push_str(&data(json!({"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": ""}}
        ]}}]})));
        for piece in split(&args, &arg_cuts) {
            body.push_str(&data(json!({"choices": [{"index": 0, "delta": {"tool_calls": [
                {"index": 0, "function": {"arguments": piece}}
            ]}}]})));
        }
        body.push_str(&data(json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})));
        body.push_str("data: [DONE]\n\n");
        // Servers may end lines with CRLF; SSE allows it.
        let body = if crlf { body.replace('\n', "\r\n") } else { body };
        let r = parse(body.as_bytes(), chunk).unwrap();
        prop_assert_eq!(&r.text, &text);
        prop_assert_eq!(r.tool_calls.len(), 1);
        prop_assert_eq!(&r.tool_calls[0].name, "read_file");
        prop_assert_eq!(&r.tool_calls[0].id, "call_1");
        prop_assert_eq!(&r.tool_calls[0].arguments, &args);
        prop_assert_eq!(r.finish, Some(FinishReason::ToolCalls));
    }

    #[test]
    fn no_bytes_make_the_parser_panic(body in prop::collection::vec(any::<u8>(), 0..400), chunk in 1usize..32) {
        // An error is a fine answer to garbage; a panic is not.
        let _ = parse(&body, chunk);
    }

    #[test]
    fn garbage_inside_a_valid_stream_is_an_error_or_ignored_never_a_panic(
        junk in "(?s).{0,60}",
        chunk in 1usize..32,
    ) {
        let body = format!(
            "{}data: {junk}\n\n{}data: [DONE]\n\n",
            data(json!({"choices": [{"index": 0, "delta": {"content": "a"}}]})),
            data(json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})),
        );
        let _ = parse(body.as_bytes(), chunk);
    }
}
