//! What a run cost: token usage priced per model, from a built-in table of well-known models that a JSON
//! file can extend or override.

use std::collections::BTreeMap;

use serde::Deserialize;
use steward_core::Usage;

/// The price of a model in US dollars per million tokens.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
pub struct Price {
    /// Per million input tokens.
    pub input: f64,
    /// Per million output tokens.
    pub output: f64,
}

/// Prices by model name.
#[derive(Clone, Debug, PartialEq)]
pub struct PriceTable {
    prices: BTreeMap<String, Price>,
}

/// List prices of well-known models (USD per million tokens; input, output). Override them with a JSON file
/// when they change or when your contract differs.
const BUILTIN: &[(&str, f64, f64)] = &[
    ("gpt-4o-mini", 0.15, 0.60),
    ("gpt-4o", 2.50, 10.00),
    ("gpt-4.1-nano", 0.10, 0.40),
    ("gpt-4.1-mini", 0.40, 1.60),
    ("gpt-4.1", 2.00, 8.00),
    ("gpt-5-nano", 0.05, 0.40),
    ("gpt-5-mini", 0.25, 2.00),
    ("gpt-5", 1.25, 10.00),
    ("o3-mini", 1.10, 4.40),
    ("o4-mini", 1.10, 4.40),
    ("o3", 2.00, 8.00),
    ("claude-3-5-haiku", 0.80, 4.00),
    ("claude-haiku-4-5", 1.00, 5.00),
    ("claude-sonnet-4", 3.00, 15.00),
    ("claude-sonnet-4-5", 3.00, 15.00),
    ("claude-opus-4-1", 15.00, 75.00),
];

/// The names of the well-known models (to suggest one for a mistyped name).
pub(crate) fn known_models() -> impl Iterator<Item = &'static str> {
    BUILTIN.iter().map(|(name, _, _)| *name)
}

impl Default for PriceTable {
    fn default() -> Self {
        Self::builtin()
    }
}

impl PriceTable {
    /// The built-in table.
    pub fn builtin() -> Self {
        Self {
            prices: BUILTIN
                .iter()
                .map(|(name, input, output)| {
                    (
                        (*name).to_owned(),
                        Price {
                            input: *input,
                            output: *output,
                        },
                    )
                })
                .collect(),
        }
    }

    /// The same table with the prices of a JSON object `{"model": {"input": 0.15, "output": 0.6}, …}` added or
    /// replacing built-in ones.
    pub fn with_overrides(mut self, json: &str) -> Result<Self, String> {
        let extra: BTreeMap<String, Price> = serde_json::from_str(json).map_err(|e| {
            format!("prices must be {{\"model\": {{\"input\": …, \"output\": …}}}}: {e}")
        })?;
        for (name, price) in extra {
            if !(price.input.is_finite()
                && price.output.is_finite()
                && price.input >= 0.0
                && price.output >= 0.0)
            {
                return Err(format!(
                    "the price of `{name}` must be two non-negative numbers"
                ));
            }
            self.prices.insert(name, price);
        }
        Ok(self)
    }

    /// The price of a model, by its full name (`openai:gpt-4o-mini`), its bare name, or the longest known name
    /// it starts with (`gpt-4o-mini-2024-07-18` → `gpt-4o-mini`). Models on a local Ollama cost nothing.
    pub fn price(&self, model: &str) -> Option<Price> {
        if let Some(price) = self.prices.get(model) {
            return Some(*price);
        }
        let (provider, bare) = model.split_once(':').unwrap_or(("", model));
        if provider == "ollama" {
            return Some(Price {
                input: 0.0,
                output: 0.0,
            });
        }
        let bare = bare.split(['@', ' ']).next().unwrap_or(bare);
        if let Some(price) = self.prices.get(bare) {
            return Some(*price);
        }
        self.prices
            .iter()
            .filter(|(name, _)| {
                bare.strip_prefix(name.as_str())
                    .is_some_and(|rest| rest.starts_with('-'))
            })
            .max_by_key(|(name, _)| name.len())
            .map(|(_, price)| *price)
    }

    /// The cost of `usage` on `model` in US dollars, when the model's price is known.
    pub fn cost(&self, model: &str, usage: Usage) -> Option<f64> {
        let price = self.price(model)?;
        Some(
            (usage.input_tokens as f64 * price.input + usage.output_tokens as f64 * price.output)
                / 1_000_000.0,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_by_full_bare_and_dated_names() {
        let t = PriceTable::builtin();
        assert_eq!(t.price("openai:gpt-4o-mini").unwrap().input, 0.15);
        assert_eq!(t.price("gpt-4o-mini-2024-07-18").unwrap().output, 0.60);
        assert_eq!(
            t.price("azure:gpt-4o").unwrap().input,
            2.50,
            "not gpt-4o-mini"
        );
        assert_eq!(t.price("ollama:qwen2.5:7b").unwrap().input, 0.0);
        assert!(
            t.price("openai-compatible:llama3@http://localhost:8000/v1")
                .is_none()
        );
        let usage = Usage {
            input_tokens: 1_000_000,
            output_tokens: 500_000,
        };
        assert!((t.cost("openai:gpt-4o-mini", usage).unwrap() - 0.45).abs() < 1e-9);
    }

    #[test]
    fn overrides_replace_and_add() {
        let t = PriceTable::builtin()
            .with_overrides(r#"{"gpt-4o-mini": {"input": 1, "output": 2}, "llama3": {"input": 0, "output": 0}}"#)
            .unwrap();
        assert_eq!(t.price("openai:gpt-4o-mini").unwrap().input, 1.0);
        assert_eq!(
            t.price("openai-compatible:llama3@http://h/v1")
                .unwrap()
                .output,
            0.0
        );
        assert!(PriceTable::builtin().with_overrides("[1]").is_err());
        assert!(
            PriceTable::builtin()
                .with_overrides(r#"{"m": {"input": -1, "output": 0}}"#)
                .is_err()
        );
    }
}
