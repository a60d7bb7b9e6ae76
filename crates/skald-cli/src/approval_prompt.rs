//! A call that needs approval as the terminal shows it: the arguments whole, line by line
//! behind a `│` gutter (so a line inside a value cannot pass for a line of the prompt),
//! with every hidden control escaped (`skald_api::visible`).

use serde_json::Value;
use skald_api::{escape_controls, escape_controls_inline};

/// The lines that show `args`, each starting with `indent`: a one-line string argument
/// as `key: value`, a multi-line one as `key:` and then each of its lines behind the
/// gutter, anything else as JSON.
pub fn argument_lines(args: &Value, indent: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut value = |key: Option<&str>, v: &Value| {
        let text = match v {
            Value::String(s) => escape_controls(s),
            other => escape_controls(
                &serde_json::to_string_pretty(other).unwrap_or_else(|_| other.to_string()),
            ),
        };
        let key = key.map(|k| format!("{}:", escape_controls_inline(k)));
        if !text.contains('\n') {
            let text = text.replace('\t', "\\t");
            out.push(match key {
                Some(k) => format!("{indent}{k} {text}"),
                None => format!("{indent}{text}"),
            });
        } else {
            if let Some(k) = key {
                out.push(format!("{indent}{k}"));
            }
            for line in text.split('\n') {
                out.push(format!("{indent}│ {line}"));
            }
        }
    };
    match args {
        Value::Object(map) => {
            // By name, whatever order the model wrote them in (and however the JSON map
            // keeps its keys): the same call always reads the same.
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            for (k, v) in entries {
                value(Some(k), v);
            }
        }
        other => value(None, other),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_multi_line_command_is_shown_whole_with_escapes() {
        let args = json!({
            "command": "echo one\n\u{1b}[1Aecho two \u{202e}cba\nrm -rf ./x",
            "timeout": 30
        });
        assert_eq!(
            argument_lines(&args, "  "),
            [
                "  command:",
                "  │ echo one",
                "  │ \\x1b[1Aecho two \\u{202e}cba",
                "  │ rm -rf ./x",
                "  timeout: 30",
            ]
        );
    }

    #[test]
    fn one_line_values_stay_on_their_key_line() {
        let args = json!({"path": "src/a.rs", "nested": {"k": "v\u{7}"}});
        assert_eq!(
            argument_lines(&args, ""),
            [
                "nested:",
                "│ {",
                "│   \"k\": \"v\\u0007\"",
                "│ }",
                "path: src/a.rs"
            ]
        );
    }
}
