//! How hard a model thinks before it answers, where its provider lets that be chosen
//! (docs/models.md, "Reasoning effort"): OpenAI's `reasoning_effort`, Anthropic's
//! extended thinking budget, Ollama's `think`.

use crate::ProviderKind;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Effort {
    Low,
    Medium,
    High,
}

impl Effort {
    pub fn as_str(self) -> &'static str {
        match self {
            Effort::Low => "low",
            Effort::Medium => "medium",
            Effort::High => "high",
        }
    }

    pub fn parse(s: &str) -> Option<Effort> {
        match s.trim().to_ascii_lowercase().as_str() {
            "low" => Some(Effort::Low),
            "medium" => Some(Effort::Medium),
            "high" => Some(Effort::High),
            _ => None,
        }
    }

    /// Anthropic's thinking budget in tokens (at least 1024; the answer's own
    /// `max_tokens` come on top, within every current model's output limit).
    pub fn anthropic_budget(self) -> u32 {
        match self {
            Effort::Low => 2048,
            Effort::Medium => 8192,
            Effort::High => 16384,
        }
    }
}

/// Whether a model takes an effort, by what is known of it: OpenAI's reasoning models
/// (the o-series but o1-mini, GPT-5), Anthropic's models with extended thinking (3.7 and
/// 4 onwards), Ollama's thinking models. Sending an effort to another model is refused by
/// its provider, so it is offered only for these.
pub fn takes_effort(kind: ProviderKind, model: &str) -> bool {
    let name = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    let starts = |list: &[&str]| list.iter().any(|p| name.starts_with(p));
    match kind {
        ProviderKind::OpenAi => {
            !name.starts_with("o1-mini") && starts(&["o1", "o3", "o4", "gpt-5", "gpt-oss"])
        }
        ProviderKind::Anthropic => {
            name.starts_with("claude-")
                && !starts(&[
                    "claude-2",
                    "claude-instant",
                    "claude-3-opus",
                    "claude-3-sonnet",
                    "claude-3-haiku",
                    "claude-3-5",
                ])
        }
        ProviderKind::Ollama => starts(&[
            "deepseek-r1",
            "qwen3",
            "qwq",
            "gpt-oss",
            "magistral",
            "phi4-reasoning",
            "cogito",
        ]),
        ProviderKind::Local => false,
    }
}

/// Ollama's `think`: a level for the models that take one (gpt-oss), else on.
pub fn ollama_think(model: &str, effort: Effort) -> serde_json::Value {
    if model.to_ascii_lowercase().starts_with("gpt-oss") {
        serde_json::json!(effort.as_str())
    } else {
        serde_json::json!(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn efforts_parse_and_known_models_take_them() {
        assert_eq!(Effort::parse(" High "), Some(Effort::High));
        assert_eq!(Effort::parse("max"), None);
        use ProviderKind::*;
        for (kind, model, takes) in [
            (OpenAi, "o3-mini", true),
            (OpenAi, "o1-mini", false),
            (OpenAi, "gpt-5-mini", true),
            (OpenAi, "gpt-4.1", false),
            (OpenAi, "openai/o4-mini", true),
            (Anthropic, "claude-sonnet-4-5", true),
            (Anthropic, "claude-3-7-sonnet-latest", true),
            (Anthropic, "claude-3-5-haiku-latest", false),
            (Ollama, "qwen3:8b", true),
            (Ollama, "llama3.2", false),
            (Local, "qwen3", false),
        ] {
            assert_eq!(takes_effort(kind, model), takes, "{kind:?} {model}");
        }
        assert_eq!(
            ollama_think("gpt-oss:20b", Effort::Low),
            serde_json::json!("low")
        );
        assert_eq!(
            ollama_think("qwen3:8b", Effort::Low),
            serde_json::json!(true)
        );
    }
}
