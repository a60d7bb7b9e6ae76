//! Checking a call's arguments against the tool's JSON Schema before it runs, with an
//! error that names the offending field.

use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgsError {
    #[error("the tool's parameter schema is invalid: {0}")]
    BadSchema(String),
    #[error("{}", .0.join("; "))]
    Invalid(Vec<String>),
}

/// Validates `args` against `schema`. Every violation is reported, each prefixed with the
/// field it concerns (`argument \`limit\`: …`), or `arguments:` for the object itself.
pub fn validate_args(schema: &Value, args: &Value) -> Result<(), ArgsError> {
    let validator =
        jsonschema::validator_for(schema).map_err(|e| ArgsError::BadSchema(e.to_string()))?;
    let problems: Vec<String> = validator
        .iter_errors(args)
        .map(|err| {
            let pointer = err.instance_path().as_str().to_string();
            let field = pointer.trim_start_matches('/').replace('/', ".");
            if field.is_empty() {
                format!("arguments: {err}")
            } else {
                format!("argument `{field}`: {err}")
            }
        })
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(ArgsError::Invalid(problems))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 2000},
                "todos": {"type": "array", "items": {"type": "object",
                    "properties": {"status": {"enum": ["pending", "done"]}}}}
            },
            "required": ["path"],
            "additionalProperties": false
        })
    }

    #[test]
    fn valid_arguments_pass() {
        validate_args(&schema(), &json!({"path": "a", "limit": 5})).unwrap();
    }

    #[test]
    fn errors_name_the_field() {
        let err = validate_args(&schema(), &json!({"path": "a", "limit": 5000})).unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("argument `limit`:"), "{msg}");
        assert!(msg.contains("2000"), "{msg}");

        let err = validate_args(&schema(), &json!({"path": 3})).unwrap_err();
        assert!(err.to_string().starts_with("argument `path`:"), "{err}");

        let err = validate_args(&schema(), &json!({"path": "a", "todos": [{"status": "x"}]}))
            .unwrap_err();
        assert!(
            err.to_string().starts_with("argument `todos.0.status`:"),
            "{err}"
        );
    }

    #[test]
    fn missing_and_unknown_fields_are_reported_on_the_object() {
        let err = validate_args(&schema(), &json!({"pth": "a"})).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("\"path\" is a required property"), "{msg}");
        assert!(msg.contains("pth"), "{msg}");
        assert!(msg.starts_with("arguments:"), "{msg}");
    }

    #[test]
    fn a_broken_schema_is_its_own_error() {
        let err = validate_args(&json!({"type": 12}), &json!({})).unwrap_err();
        assert!(matches!(err, ArgsError::BadSchema(_)));
    }
}
