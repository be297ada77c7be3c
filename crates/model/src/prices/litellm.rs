//! LiteLLM's price JSON (`model_prices_and_context_window.json`) turned into Bosun's table —
//! the same conversion `scripts/gen-prices` makes — and the table file both are stored in.

use super::rates::{ModelPrice, TierRates};
use crate::ModelError;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where a table file came from: its `generated` header.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TableHeader {
    /// `scripts/gen-prices` or `bosun prices update`.
    #[serde(default)]
    pub by: String,
    /// LiteLLM's version (the generated table) when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub litellm_version: Option<String>,
    /// The sha256 of LiteLLM's JSON the table was made from.
    #[serde(default)]
    pub sha256: String,
    /// The file it was read from.
    #[serde(default)]
    pub file: String,
    #[serde(default)]
    pub models: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
}

/// A table file: `{"generated": {…}, "models": {"<name>": {…}}}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct TableFile {
    pub generated: TableHeader,
    pub models: BTreeMap<String, ModelPrice>,
}

/// What `bosun prices update FILE` stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SnapshotInfo {
    /// Models with token prices taken from the file.
    pub models: usize,
    /// The sha256 of the file, hex.
    pub sha256: String,
    /// Where the converted table was stored (`$BOSUN_HOME/prices-snapshot.json`).
    pub stored: PathBuf,
}

/// The file an imported snapshot is kept in, under `$BOSUN_HOME`.
pub const SNAPSHOT_FILE: &str = "prices-snapshot.json";

const RATE_KEYS: &[(&str, &str)] = &[
    (
        "cache_creation_input_token_cost_above_1hr",
        "cache_write_1h",
    ),
    ("cache_creation_input_token_cost", "cache_write"),
    ("cache_read_input_token_cost", "cache_read"),
    ("output_cost_per_reasoning_token", "reasoning"),
    ("input_cost_per_token", "input"),
    ("output_cost_per_token", "output"),
];

/// `input_cost_per_token_above_200k_tokens_priority` → (`input`, `priority+above_200k_tokens`).
fn parse_key(key: &str) -> Option<(&'static str, String)> {
    let (rest, rate) = RATE_KEYS
        .iter()
        .find_map(|(k, rate)| key.strip_prefix(k).map(|rest| (rest, *rate)))?;
    let (rest, above) = match rest.strip_prefix("_above_") {
        Some(r) => {
            let digits = r.bytes().take_while(u8::is_ascii_digit).count();
            let k: u64 = r[..digits].parse().ok()?;
            (r[digits..].strip_prefix("k_tokens")?, Some(k))
        }
        None => (rest, None),
    };
    let service = match rest {
        "" => None,
        "_batches" => Some("batch"),
        "_priority" => Some("priority"),
        "_flex" => Some("flex"),
        _ => return None,
    };
    let above = above.map(|k| format!("above_{k}k_tokens"));
    let tier = match (service, above) {
        (None, None) => String::new(),
        (Some(s), None) => s.to_string(),
        (None, Some(a)) => a,
        (Some(s), Some(a)) => format!("{s}+{a}"),
    };
    Some((rate, tier))
}

/// USD per token → USD per million tokens, rounded to 12 significant digits (as the generator).
fn per_million(v: f64) -> f64 {
    format!("{:.11e}", v * 1_000_000.0)
        .parse()
        .unwrap_or(v * 1_000_000.0)
}

fn number(v: &Value) -> Option<f64> {
    v.as_f64().filter(|x| x.is_finite() && *x >= 0.0)
}

fn set(t: &mut TierRates, rate: &str, v: f64) {
    let slot = match rate {
        "input" => &mut t.input,
        "output" => &mut t.output,
        "cache_read" => &mut t.cache_read,
        "cache_write" => &mut t.cache_write,
        "cache_write_1h" => &mut t.cache_write_1h,
        _ => &mut t.reasoning,
    };
    *slot = Some(v);
}

/// One LiteLLM entry as Bosun's price, or None when it is not a chat model with token prices.
fn convert_entry(name: &str, entry: &Value) -> Option<ModelPrice> {
    let obj = entry.as_object()?;
    let mode = obj.get("mode").and_then(Value::as_str)?;
    if mode != "chat" && mode != "responses" {
        return None;
    }
    let mut base = TierRates::default();
    let mut tiers: BTreeMap<String, TierRates> = BTreeMap::new();
    for (key, value) in obj {
        let (Some((rate, tier)), Some(v)) = (parse_key(key), number(value)) else {
            continue;
        };
        let target = if tier.is_empty() {
            &mut base
        } else {
            tiers.entry(tier).or_default()
        };
        set(target, rate, per_million(v));
    }
    let (input, output) = (base.input?, base.output?);
    let provider = obj
        .get("litellm_provider")
        .and_then(Value::as_str)
        .filter(|p| !p.is_empty())
        .map(str::to_string);
    // Anthropic's 1-hour cache write is 2 x the input rate; LiteLLM lacks it for some models.
    let claude = name.to_ascii_lowercase().contains("claude")
        || provider.as_deref().is_some_and(|p| p.contains("anthropic"));
    if claude {
        for t in std::iter::once(&mut base).chain(tiers.values_mut()) {
            if let (Some(_), None, Some(i)) = (t.cache_write, t.cache_write_1h, t.input) {
                t.cache_write_1h = Some(per_million(2.0 * i / 1_000_000.0));
            }
        }
    }
    let tokens = |k: &str| {
        obj.get(k)
            .and_then(Value::as_f64)
            .filter(|v| *v >= 1.0)
            .map(|v| v as u64)
    };
    Some(ModelPrice {
        input,
        output,
        cache_read: base.cache_read,
        cache_write: base.cache_write,
        cache_write_1h: base.cache_write_1h,
        reasoning: base.reasoning,
        context_window: tokens("max_input_tokens"),
        max_output_tokens: tokens("max_output_tokens"),
        provider,
        tiers,
        aliases: Vec::new(),
    })
}

/// LiteLLM's whole JSON as Bosun's models. Errors when it is not that format.
pub(crate) fn convert(raw: &Value) -> Result<BTreeMap<String, ModelPrice>, String> {
    let obj = raw.as_object().ok_or("it is not a JSON object of models")?;
    let models: BTreeMap<String, ModelPrice> = obj
        .iter()
        .filter(|(name, _)| name.as_str() != "sample_spec")
        .filter_map(|(name, e)| convert_entry(name, e).map(|p| (name.clone(), p)))
        .collect();
    if models.is_empty() {
        return Err(
            "it has no chat model with input_cost_per_token and output_cost_per_token".into(),
        );
    }
    Ok(models)
}

pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Reads a table file (the generated one, or a stored snapshot).
pub(crate) fn parse_table(text: &str, what: &str) -> Result<TableFile, ModelError> {
    let table: TableFile = serde_json::from_str(text)
        .map_err(|e| ModelError::Config(format!("{what} is not a Bosun price table: {e}")))?;
    for (name, p) in &table.models {
        if let Some(why) = p.problem() {
            return Err(ModelError::Config(format!(
                "{what}: the price of `{name}`: {why}"
            )));
        }
    }
    Ok(table)
}

/// `bosun prices update FILE`: checks that `litellm_json` is LiteLLM's price JSON, converts it
/// and stores it as `$BOSUN_HOME/prices-snapshot.json`, which then prices over Bosun's own
/// table (and under the user's `prices.toml`).
pub fn import_snapshot(home: &Path, litellm_json: &Path) -> Result<SnapshotInfo, ModelError> {
    let shown = litellm_json.display();
    let bytes = std::fs::read(litellm_json)
        .map_err(|e| ModelError::Config(format!("cannot read {shown}: {e}")))?;
    let raw: Value = serde_json::from_slice(&bytes).map_err(|e| {
        ModelError::Config(format!(
            "{shown} is not LiteLLM's price JSON (model_prices_and_context_window.json): it is \
             not JSON: {e}"
        ))
    })?;
    let models = convert(&raw).map_err(|why| {
        ModelError::Config(format!(
            "{shown} is not LiteLLM's price JSON (model_prices_and_context_window.json): {why}"
        ))
    })?;
    let sha256 = sha256_hex(&bytes);
    let table = TableFile {
        generated: TableHeader {
            by: "bosun prices update".into(),
            litellm_version: None,
            sha256: sha256.clone(),
            file: litellm_json
                .canonicalize()
                .unwrap_or_else(|_| litellm_json.to_path_buf())
                .display()
                .to_string(),
            models: models.len(),
            note: None,
            unit: Some("USD per million tokens".into()),
        },
        models,
    };
    let text = serde_json::to_string(&table)
        .map_err(|e| ModelError::Config(format!("cannot write the snapshot: {e}")))?;
    let stored = home.join(SNAPSHOT_FILE);
    super::user::write_atomically(&stored, text.as_bytes())?;
    Ok(SnapshotInfo {
        models: table.models.len(),
        sha256,
        stored,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn keys_name_a_rate_and_a_tier() {
        assert_eq!(
            parse_key("input_cost_per_token_above_200k_tokens_priority"),
            Some(("input", "priority+above_200k_tokens".to_string()))
        );
        assert_eq!(
            parse_key("cache_creation_input_token_cost_above_1hr"),
            Some(("cache_write_1h", String::new()))
        );
        assert_eq!(
            parse_key("cache_creation_input_token_cost_above_1hr_above_200k_tokens"),
            Some(("cache_write_1h", "above_200k_tokens".to_string()))
        );
        assert_eq!(
            parse_key("output_cost_per_token_batches"),
            Some(("output", "batch".to_string()))
        );
        assert_eq!(
            parse_key("cache_creation_input_token_cost_above_12hr"),
            None
        );
        assert_eq!(parse_key("input_cost_per_token_ultrafast"), None);
        assert_eq!(parse_key("input_cost_per_audio_token"), None);
        assert_eq!(per_million(3e-06), 3.0);
        assert_eq!(per_million(3.75e-06), 3.75);
        assert_eq!(per_million(1.25e-08), 0.0125);
    }
}
