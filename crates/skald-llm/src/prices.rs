//! What a model call costs (docs/models.md, "Cost"): prices per million tokens for the
//! well-known models, as their providers published them, which config.toml's
//! `[models.prices]` overrides or completes; a model run locally costs nothing.

use crate::{ProviderKind, Usage};
use serde::{Deserialize, Serialize};

/// US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub input: f64,
    pub output: f64,
    /// Input read from the provider's prompt cache; `input` when the provider has no
    /// cheaper rate for it.
    #[serde(default)]
    pub cached_input: Option<f64>,
}

impl Price {
    const fn of(input: f64, output: f64, cached_input: f64) -> Price {
        Price {
            input,
            output,
            cached_input: Some(cached_input),
        }
    }

    /// What `usage` costs at this price, in US dollars.
    pub fn cost(&self, usage: &Usage) -> f64 {
        let cached = usage.cached_input_tokens.min(usage.input_tokens);
        let fresh = usage.input_tokens - cached;
        (fresh as f64 * self.input
            + cached as f64 * self.cached_input.unwrap_or(self.input)
            + usage.output_tokens as f64 * self.output)
            / 1_000_000.0
    }
}

/// The published prices of well-known models (USD per million tokens: input, output,
/// cached input), by the start of their name; the longest start that matches wins. Prices
/// change: `[models.prices]` in config.toml says what a model costs you.
const KNOWN: &[(&str, Price)] = &[
    ("gpt-5-nano", Price::of(0.05, 0.40, 0.005)),
    ("gpt-5-mini", Price::of(0.25, 2.00, 0.025)),
    ("gpt-5", Price::of(1.25, 10.00, 0.125)),
    ("gpt-4.1-nano", Price::of(0.10, 0.40, 0.025)),
    ("gpt-4.1-mini", Price::of(0.40, 1.60, 0.10)),
    ("gpt-4.1", Price::of(2.00, 8.00, 0.50)),
    ("gpt-4o-mini", Price::of(0.15, 0.60, 0.075)),
    ("gpt-4o", Price::of(2.50, 10.00, 1.25)),
    ("o4-mini", Price::of(1.10, 4.40, 0.275)),
    ("o3-mini", Price::of(1.10, 4.40, 0.55)),
    ("o3", Price::of(2.00, 8.00, 0.50)),
    ("o1-mini", Price::of(1.10, 4.40, 0.55)),
    ("o1", Price::of(15.00, 60.00, 7.50)),
    ("claude-opus-4-5", Price::of(5.00, 25.00, 0.50)),
    ("claude-opus-4", Price::of(15.00, 75.00, 1.50)),
    ("claude-sonnet-4", Price::of(3.00, 15.00, 0.30)),
    ("claude-3-7-sonnet", Price::of(3.00, 15.00, 0.30)),
    ("claude-3-5-sonnet", Price::of(3.00, 15.00, 0.30)),
    ("claude-haiku-4-5", Price::of(1.00, 5.00, 0.10)),
    ("claude-3-5-haiku", Price::of(0.80, 4.00, 0.08)),
    ("gemini-2.5-pro", Price::of(1.25, 10.00, 0.31)),
    ("gemini-2.5-flash-lite", Price::of(0.10, 0.40, 0.025)),
    ("gemini-2.5-flash", Price::of(0.30, 2.50, 0.075)),
];

/// What Skald knows `model` costs: nothing when it runs on this machine (Ollama, a local
/// model), the published price of a well-known model, else unknown.
pub fn known_price(kind: ProviderKind, model: &str) -> Option<Price> {
    if matches!(kind, ProviderKind::Ollama | ProviderKind::Local) {
        return Some(Price::of(0.0, 0.0, 0.0));
    }
    let name = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    KNOWN
        .iter()
        .filter(|(start, _)| name.starts_with(start))
        .max_by_key(|(start, _)| start.len())
        .map(|(_, price)| *price)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_known_start_prices_a_model_and_cached_input_costs_less() {
        use ProviderKind::*;
        assert_eq!(
            known_price(OpenAi, "gpt-4.1-mini-2025-04-14")
                .unwrap()
                .input,
            0.40
        );
        assert_eq!(known_price(OpenAi, "openai/gpt-4.1").unwrap().output, 8.00);
        assert_eq!(
            known_price(Anthropic, "claude-sonnet-4-5").unwrap().input,
            3.00
        );
        assert_eq!(
            known_price(Anthropic, "claude-opus-4-1").unwrap().output,
            75.00
        );
        assert_eq!(
            known_price(Anthropic, "claude-opus-4-5").unwrap().output,
            25.00
        );
        assert_eq!(known_price(OpenAi, "my-own-model"), None);
        assert_eq!(
            known_price(Ollama, "llama3.2").unwrap().cost(&Usage {
                input_tokens: 1_000_000,
                output_tokens: 1_000_000,
                cached_input_tokens: 0,
            }),
            0.0
        );
        let p = known_price(OpenAi, "gpt-4.1").unwrap();
        let usage = Usage {
            input_tokens: 1_000_000,
            output_tokens: 100_000,
            cached_input_tokens: 400_000,
        };
        // 600k fresh at $2, 400k cached at $0.50, 100k out at $8.
        assert!((p.cost(&usage) - (1.2 + 0.2 + 0.8)).abs() < 1e-9);
    }
}
