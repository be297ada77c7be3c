//! What tokens cost: a price table (built in from `assets/prices.toml`, mergeable with the
//! user's own) and the cache-aware cost of one response.

use crate::ModelError;
use bosun_protocol::TokenUsage;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Prices of one model in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ModelPrice {
    pub input: f64,
    pub output: f64,
    #[serde(default)]
    pub cache_read: f64,
    #[serde(default)]
    pub cache_write: f64,
}

/// The cost of some usage. `priced` is false when the model is not in the table; `usd` is 0 then.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Cost {
    pub usd: f64,
    pub priced: bool,
}

/// Model name → price.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PriceTable {
    #[serde(default)]
    models: BTreeMap<String, ModelPrice>,
}

const BUILTIN: &str = include_str!("../../../assets/prices.toml");

impl PriceTable {
    /// The table shipped with Bosun.
    pub fn builtin() -> Self {
        // The built-in table is checked by a test; an empty table only makes every cost unpriced.
        PriceTable::from_toml(BUILTIN).unwrap_or_default()
    }

    /// Reads a table of `[models."<name>"]` sections with `input`, `output`, `cache_read`,
    /// `cache_write` in USD per million tokens.
    pub fn from_toml(s: &str) -> Result<Self, ModelError> {
        let table: PriceTable = toml::from_str(s).map_err(|e| {
            ModelError::Config(format!(
                "the price table is not valid: {e}(expected [models.\"<model>\"] sections with \
                 input, output, cache_read, cache_write in USD per million tokens)"
            ))
        })?;
        for (name, p) in &table.models {
            let all = [p.input, p.output, p.cache_read, p.cache_write];
            if all.iter().any(|v| !v.is_finite() || *v < 0.0) {
                return Err(ModelError::Config(format!(
                    "the price of `{name}` has a negative or non-finite number"
                )));
            }
        }
        Ok(table)
    }

    /// Adds `other`'s models, replacing prices of models both have.
    pub fn merge(&mut self, other: PriceTable) {
        self.models.extend(other.models);
    }

    pub fn insert(&mut self, model: impl Into<String>, price: ModelPrice) {
        self.models.insert(model.into(), price);
    }

    pub fn len(&self) -> usize {
        self.models.len()
    }

    pub fn is_empty(&self) -> bool {
        self.models.is_empty()
    }

    /// Model names in the table, sorted.
    pub fn models(&self) -> impl Iterator<Item = &str> {
        self.models.keys().map(String::as_str)
    }

    /// The price of `model`: by exact name, then without a provider prefix, then without a
    /// date or `-latest` suffix.
    pub fn lookup(&self, model: &str) -> Option<&ModelPrice> {
        let exact = model.trim();
        if let Some(p) = self.models.get(exact) {
            return Some(p);
        }
        let lower = exact.to_ascii_lowercase();
        let unprefixed = lower.rsplit('/').next().unwrap_or(&lower);
        let unprefixed = unprefixed.strip_prefix("anthropic.").unwrap_or(unprefixed);
        for candidate in [lower.as_str(), unprefixed] {
            if let Some(p) = self.models.get(candidate) {
                return Some(p);
            }
            let undated = strip_version_suffix(candidate);
            if undated != candidate
                && let Some(p) = self.models.get(undated)
            {
                return Some(p);
            }
        }
        None
    }

    /// The cost of `usage` for `model`. `input_tokens` counts cached and cache-written tokens too;
    /// those are charged at their own prices and the rest at the input price.
    pub fn cost(&self, model: &str, usage: &TokenUsage) -> Cost {
        let Some(p) = self.lookup(model) else {
            return Cost {
                usd: 0.0,
                priced: false,
            };
        };
        let uncached = usage.input_tokens;
        let per_token = |tokens: u64, price: f64| tokens as f64 * price / 1_000_000.0;
        Cost {
            usd: per_token(uncached, p.input)
                + per_token(usage.cached_input_tokens, p.cache_read)
                + per_token(
                    usage.cache_write_tokens + usage.cache_write_1h_tokens,
                    p.cache_write,
                )
                + per_token(usage.output_tokens + usage.reasoning_tokens, p.output),
            priced: true,
        }
    }
}

/// `claude-sonnet-4-5-20250929` → `claude-sonnet-4-5`; `gpt-4o-2024-08-06` → `gpt-4o`;
/// `claude-3-5-haiku-latest` → `claude-3-5-haiku`; `…-v1:0` (Bedrock) is dropped first.
fn strip_version_suffix(name: &str) -> &str {
    let name = match name.rfind("-v") {
        Some(i)
            if name[i + 2..]
                .chars()
                .all(|c| c.is_ascii_digit() || c == ':')
                && i + 2 < name.len() =>
        {
            &name[..i]
        }
        _ => name,
    };
    if let Some(base) = name.strip_suffix("-latest") {
        return base;
    }
    // -YYYYMMDD
    if name.len() > 9 {
        let (base, tail) = name.split_at(name.len() - 9);
        if tail.starts_with('-') && tail[1..].bytes().all(|b| b.is_ascii_digit()) {
            return base;
        }
    }
    // -YYYY-MM-DD
    if name.len() > 11 {
        let (base, tail) = name.split_at(name.len() - 11);
        let t = tail.as_bytes();
        let digits = |r: std::ops::Range<usize>| t[r].iter().all(u8::is_ascii_digit);
        if t[0] == b'-'
            && digits(1..5)
            && t[5] == b'-'
            && digits(6..8)
            && t[8] == b'-'
            && digits(9..11)
        {
            return base;
        }
    }
    name
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn the_builtin_table_parses_and_has_the_current_models() {
        let t = PriceTable::from_toml(BUILTIN).unwrap();
        for m in [
            "claude-opus-4-1",
            "claude-opus-4",
            "claude-sonnet-4-5",
            "claude-sonnet-4",
            "claude-3-7-sonnet",
            "claude-haiku-4-5",
            "claude-3-5-haiku",
            "gpt-5",
            "gpt-5-mini",
            "gpt-5-nano",
            "gpt-4.1",
            "gpt-4.1-mini",
            "gpt-4.1-nano",
            "gpt-4o",
            "gpt-4o-mini",
            "o3",
            "o4-mini",
        ] {
            assert!(t.lookup(m).is_some(), "{m} missing");
        }
        assert_eq!(PriceTable::builtin(), t);
    }

    #[test]
    fn lookup_finds_dated_prefixed_and_latest_variants() {
        let t = PriceTable::builtin();
        let sonnet = t.lookup("claude-sonnet-4-5").copied();
        assert_eq!(t.lookup("claude-sonnet-4-5-20250929").copied(), sonnet);
        assert_eq!(t.lookup("anthropic/claude-sonnet-4-5").copied(), sonnet);
        assert_eq!(
            t.lookup("anthropic.claude-sonnet-4-5-20250929-v1:0")
                .copied(),
            sonnet
        );
        assert_eq!(
            t.lookup("openai/gpt-4o-2024-08-06").copied(),
            t.lookup("gpt-4o").copied()
        );
        assert_eq!(
            t.lookup("claude-3-5-haiku-latest").copied(),
            t.lookup("claude-3-5-haiku").copied()
        );
        assert_eq!(t.lookup("gpt-4o-mini").map(|p| p.input), Some(0.15));
        assert!(t.lookup("qwen2.5-coder:7b").is_none());
        assert!(t.lookup("gpt-4o-audio-preview").is_none());
    }
}
