//! Price files in TOML: the user's `$BOSUN_HOME/prices.toml` and Bosun's reviewed
//! `assets/prices/overrides.toml`, and adding one model's price to the user's file.
//!
//! ```toml
//! [models."my-model"]          # USD per million tokens
//! input = 1.0
//! output = 2.0
//! cache_read = 0.1             # optional: default the input rate
//! cache_write = 1.25           # optional, a 5-minute cache write: default the input rate
//! cache_write_1h = 2.0         # optional: default the 5-minute write rate
//! reasoning = 2.0              # optional: default the output rate
//! context_window = 200000      # optional, prompt tokens
//! max_output_tokens = 64000    # optional
//! aliases = ["my-model-v2"]    # optional: other names of the same model
//! [models."my-model".tiers.priority]            # optional tiers: batch, priority, flex,
//! input = 2.0                                    # above_<N>k_tokens, or both
//! [models."my-model".tiers.above_200k_tokens]   # e.g. priority+above_200k_tokens
//! input = 2.0
//! output = 4.0
//! ```

use super::rates::ModelPrice;
use crate::ModelError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// A price someone typed (`bosun prices set`, the app's "add a price"), USD per million tokens.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UserPrice {
    pub input: f64,
    pub output: f64,
    #[serde(default)]
    pub cache_read: Option<f64>,
    #[serde(default)]
    pub cache_write: Option<f64>,
    #[serde(default)]
    pub cache_write_1h: Option<f64>,
    #[serde(default)]
    pub reasoning: Option<f64>,
    #[serde(default)]
    pub context_window: Option<u64>,
}

impl UserPrice {
    fn to_price(&self) -> ModelPrice {
        ModelPrice {
            cache_read: self.cache_read,
            cache_write: self.cache_write,
            cache_write_1h: self.cache_write_1h,
            reasoning: self.reasoning,
            context_window: self.context_window,
            ..ModelPrice::new(self.input, self.output)
        }
    }
}

const KEYS: &str = "input, output, cache_read, cache_write, cache_write_1h, reasoning, \
                    context_window, max_output_tokens, provider, tiers, aliases";

/// Reads `[models."<name>"]` sections. `what` names the file in errors.
pub(crate) fn parse_toml(
    text: &str,
    what: &str,
) -> Result<BTreeMap<String, ModelPrice>, ModelError> {
    let doc: toml::Table = toml::from_str(text)
        .map_err(|e| ModelError::Config(format!("{what} is not valid TOML: {e}")))?;
    let mut models = BTreeMap::new();
    for (key, value) in doc {
        if key != "models" {
            return Err(ModelError::Config(format!(
                "{what}: unknown section `{key}` (prices go in [models.\"<model>\"] sections)"
            )));
        }
        let toml::Value::Table(table) = value else {
            return Err(ModelError::Config(format!(
                "{what}: `models` must be a table of [models.\"<model>\"] sections"
            )));
        };
        for (name, entry) in table {
            let price: ModelPrice = entry.try_into().map_err(|e: toml::de::Error| {
                ModelError::Config(format!(
                    "{what}: the price of `{name}`: {} (keys, in USD per million tokens: {KEYS})",
                    e.message().trim_end()
                ))
            })?;
            if let Some(why) = price.problem() {
                return Err(ModelError::Config(format!(
                    "{what}: the price of `{name}`: {why}"
                )));
            }
            models.insert(name, price);
        }
    }
    Ok(models)
}

/// Adds or replaces `model`'s price in `$BOSUN_HOME/prices.toml`, keeping the rest of the file
/// (other models, comments) as it is.
pub fn write_user_price(home: &Path, model: &str, price: &UserPrice) -> Result<(), ModelError> {
    let model = model.trim();
    if model.is_empty() {
        return Err(ModelError::Config("a price needs a model name".into()));
    }
    if let Some(why) = price.to_price().problem() {
        return Err(ModelError::Config(format!("the price of `{model}`: {why}")));
    }
    let path = home.join(super::USER_FILE);
    let shown = path.display().to_string();
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(ModelError::Config(format!("cannot read {shown}: {e}"))),
    };
    // The file must be valid before it is edited: a broken one is the user's to fix.
    parse_toml(&text, &shown)?;
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e| ModelError::Config(format!("{shown} is not valid TOML: {e}")))?;
    if !doc.contains_key("models") {
        let mut models = toml_edit::Table::new();
        models.set_implicit(true);
        doc.insert("models", toml_edit::Item::Table(models));
    }
    let models = doc["models"]
        .as_table_mut()
        .ok_or_else(|| ModelError::Config(format!("{shown}: `models` must be a table")))?;
    // An existing entry is emptied and refilled, so the comments around it stay.
    if !models.get(model).is_some_and(toml_edit::Item::is_table) {
        models.insert(model, toml_edit::Item::Table(toml_edit::Table::new()));
    }
    let entry = models
        .get_mut(model)
        .and_then(toml_edit::Item::as_table_mut)
        .ok_or_else(|| ModelError::Config(format!("{shown}: cannot add `{model}`")))?;
    entry.clear();
    entry.insert("input", toml_edit::value(price.input));
    entry.insert("output", toml_edit::value(price.output));
    for (key, v) in [
        ("cache_read", price.cache_read),
        ("cache_write", price.cache_write),
        ("cache_write_1h", price.cache_write_1h),
        ("reasoning", price.reasoning),
    ] {
        if let Some(v) = v {
            entry.insert(key, toml_edit::value(v));
        }
    }
    if let Some(c) = price.context_window {
        let c = i64::try_from(c)
            .map_err(|_| ModelError::Config(format!("context_window {c} is too large")))?;
        entry.insert("context_window", toml_edit::value(c));
    }
    let out = doc.to_string();
    parse_toml(&out, &shown)?;
    std::fs::create_dir_all(home)
        .map_err(|e| ModelError::Config(format!("cannot create {}: {e}", home.display())))?;
    write_atomically(&path, out.as_bytes())
}

/// Writes `path` through a temporary file beside it, so a crash leaves the old file or the new.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), ModelError> {
    let shown = path.display();
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| ModelError::Config(format!("cannot create {}: {e}", dir.display())))?;
    }
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes)
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| ModelError::Config(format!("cannot write {shown}: {e}")))
}
