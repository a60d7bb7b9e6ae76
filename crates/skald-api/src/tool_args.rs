//! Typed tool arguments. A tool's arguments are one struct deriving `Deserialize` and
//! `JsonSchema`: the schema the model is offered is derived from it (its doc comments
//! become the descriptions), and a call's arguments are read into it, so no tool reads a
//! raw `serde_json::Value` field by field and no schema can drift from what the tool reads.
//!
//! The derived schema is made plain for providers: inlined, without `$schema`, `title` or
//! `format`, and an optional field's `null` left out (a field left out is how a call says
//! "the default"; as before, an explicit `null` is refused by the schema check).

use crate::tool::ToolError;
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// The JSON Schema of `T` as a tool offers it.
pub fn schema_for<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|s| {
            s.meta_schema = None;
            s.inline_subschemas = true;
        })
        .into_generator();
    let mut value = generator.into_root_schema_for::<T>().to_value();
    // The tool's own description says what it does; the struct's name is no help.
    if let Some(root) = value.as_object_mut() {
        root.remove("title");
        root.remove("description");
    }
    plain(&mut value);
    value
}

/// Removes what providers do not need from a derived schema, all the way down.
fn plain(schema: &mut Value) {
    let Value::Object(map) = schema else {
        return;
    };
    map.remove("format");
    drop_null_type(map);
    for (key, v) in map.iter_mut() {
        match key.as_str() {
            // Maps of names to schemas: the names are the tool's, never touched.
            "properties" | "patternProperties" | "$defs" => {
                if let Value::Object(named) = v {
                    named.values_mut().for_each(plain);
                }
            }
            "items" | "additionalProperties" | "not" => match v {
                Value::Array(schemas) => schemas.iter_mut().for_each(plain),
                other => plain(other),
            },
            "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
                if let Value::Array(schemas) = v {
                    schemas.iter_mut().for_each(plain);
                }
            }
            // Values (`enum`, `default`, `required`, …) are data, not schemas.
            _ => {}
        }
    }
    in_written_order(map);
}

/// A schema's keys (never a `properties` map's, whose order is the tool's) in the order
/// schemas were written in by hand before they were derived: what a value is, its
/// bounds, what it means, then an object's fields and which of them it needs. Kept so
/// that the definitions offered stay byte for byte the same (providers' prompt caches)
/// wherever the meaning did not change.
fn in_written_order(map: &mut Map<String, Value>) {
    const FIRST: [&str; 9] = [
        "type",
        "enum",
        "items",
        "minimum",
        "maximum",
        "minItems",
        "maxItems",
        "description",
        "properties",
    ];
    const LAST: [&str; 2] = ["required", "additionalProperties"];
    let mut old = std::mem::take(map);
    for key in FIRST {
        if let Some(v) = old.shift_remove(key) {
            map.insert(key.to_string(), v);
        }
    }
    let last: Vec<(&str, Value)> = LAST
        .iter()
        .filter_map(|k| old.shift_remove(*k).map(|v| (*k, v)))
        .collect();
    map.extend(old);
    for (k, v) in last {
        map.insert(k.to_string(), v);
    }
}

/// `"type": ["integer", "null"]` (what an `Option` derives) as `"type": "integer"`, an
/// `enum` without its `null`, and an `anyOf` of one schema and `{"type": "null"}` as that
/// schema.
fn drop_null_type(map: &mut Map<String, Value>) {
    if let Some(Value::Array(types)) = map.get("type") {
        let rest: Vec<Value> = types
            .iter()
            .filter(|t| t.as_str() != Some("null"))
            .cloned()
            .collect();
        if rest.len() == 1 && rest.len() < types.len() {
            map.insert(
                "type".into(),
                rest.into_iter().next().unwrap_or(Value::Null),
            );
        }
    }
    if let Some(Value::Array(values)) = map.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
    if let Some(Value::Array(options)) = map.get("anyOf") {
        let is_null = |v: &Value| v.get("type").and_then(Value::as_str) == Some("null");
        if options.len() == 2 && options.iter().any(is_null) {
            let kept = options.iter().find(|v| !is_null(v)).cloned();
            if let Some(Value::Object(kept)) = kept {
                map.remove("anyOf");
                for (k, v) in kept {
                    map.entry(k).or_insert(v);
                }
            }
        }
    }
}

/// A call's `args` read into `T`; an error names the field that did not fit.
pub fn parse<T: DeserializeOwned>(args: Value) -> Result<T, ToolError> {
    serde_path_to_error::deserialize(args).map_err(|e| {
        let field = e.path().to_string();
        let reason = e.into_inner().to_string();
        if field == "." {
            ToolError::invalid("arguments", reason)
        } else {
            ToolError::invalid(field, reason)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    /// Arguments of a test tool.
    #[derive(Debug, Deserialize, JsonSchema, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Args {
        /// File to read.
        path: String,
        /// Lines to show (default 100).
        #[schemars(range(min = 1, max = 2000))]
        limit: Option<u64>,
        /// How to show them.
        #[serde(default)]
        mode: Mode,
        /// Where to start.
        from: Option<Mode>,
        /// A field named as a schema keyword.
        format: Option<String>,
        /// Another.
        description: Option<String>,
        /// Options.
        more: Option<More>,
    }

    #[derive(Debug, Deserialize, JsonSchema, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct More {
        /// Folders.
        folders: Option<Vec<String>>,
    }

    #[derive(Debug, Default, Deserialize, JsonSchema, PartialEq)]
    #[serde(rename_all = "snake_case")]
    enum Mode {
        #[default]
        Plain,
        Numbered,
    }

    #[test]
    fn the_schema_is_derived_plain() {
        // Compared as text: the order of the keys is part of what a provider caches.
        assert_eq!(
            schema_for::<Args>().to_string(),
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "File to read."},
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": 2000,
                        "description": "Lines to show (default 100)."
                    },
                    "mode": {
                        "type": "string",
                        "enum": ["plain", "numbered"],
                        "description": "How to show them."
                    },
                    "from": {
                        "type": "string",
                        "enum": ["plain", "numbered"],
                        "description": "Where to start."
                    },
                    "format": {"type": "string", "description": "A field named as a schema keyword."},
                    "description": {"type": "string", "description": "Another."},
                    "more": {
                        "type": "object",
                        "description": "Options.",
                        "properties": {
                            "folders": {
                                "type": "array",
                                "items": {"type": "string"},
                                "description": "Folders."
                            }
                        },
                        "additionalProperties": false
                    }
                },
                "required": ["path"],
                "additionalProperties": false
            })
            .to_string()
        );
    }

    #[test]
    fn arguments_are_read_and_a_bad_one_is_named() {
        let args: Args = parse(json!({"path": "a.txt", "limit": 5})).unwrap();
        assert_eq!(
            args,
            Args {
                path: "a.txt".into(),
                limit: Some(5),
                mode: Mode::Plain,
                from: None,
                format: None,
                description: None,
                more: None,
            }
        );
        let e = parse::<Args>(json!({"path": "a", "limit": "x"})).unwrap_err();
        assert!(
            matches!(&e, ToolError::InvalidArgument { field, .. } if field == "limit"),
            "{e}"
        );
        let e = parse::<Args>(json!({"limit": 1})).unwrap_err();
        assert!(e.to_string().contains("missing field `path`"), "{e}");
        let e = parse::<Args>(json!({"path": "a", "other": 1})).unwrap_err();
        assert!(e.to_string().contains("unknown field `other`"), "{e}");
    }
}
