//! What tokens cost. The built-in table is generated from a pinned snapshot of LiteLLM's price
//! JSON (`assets/prices/litellm.json`, by `scripts/gen-prices`, checked by
//! `scripts/check-prices`), corrected by `assets/prices/overrides.toml`; a snapshot the user
//! imported (`bosun prices update FILE`) and the user's `$BOSUN_HOME/prices.toml` go over it,
//! model by model: prices.toml > snapshot > overrides > generated.
//!
//! Rules: the six token classes are disjoint and each has its rate; a long-context tier charges
//! the whole request at its rates; 5-minute and 1-hour cache writes have their own rates;
//! batch, priority and flex tiers have theirs; a cost the provider reported wins; a model the
//! table does not know is unpriced (`cost_usd: None`), never $0.

mod litellm;
mod names;
mod rates;
mod user;

pub use litellm::{SNAPSHOT_FILE, SnapshotInfo, TableHeader, import_snapshot};
pub use rates::{ModelPrice, Resolved, TierRates};
pub use user::{UserPrice, write_user_price};

use crate::ModelError;
use bosun_protocol::{Rates, TokenUsage};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::Path;
use std::str::FromStr;
use std::sync::OnceLock;

/// The user's price file under `$BOSUN_HOME`.
pub const USER_FILE: &str = "prices.toml";

const GENERATED: &str = include_str!("../../../../assets/prices/litellm.json");
const OVERRIDES: &str = include_str!("../../../../assets/prices/overrides.toml");

/// The tier a provider serves (and bills) requests in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ServiceTier {
    #[default]
    Standard,
    /// Batch APIs (prices only: Bosun sends no batches itself).
    Batch,
    /// OpenAI's and Google's priority processing.
    Priority,
    /// OpenAI's flex processing.
    Flex,
}

impl ServiceTier {
    pub const ALL: [ServiceTier; 4] = [
        ServiceTier::Standard,
        ServiceTier::Batch,
        ServiceTier::Priority,
        ServiceTier::Flex,
    ];

    pub fn as_str(&self) -> &'static str {
        match self {
            ServiceTier::Standard => "standard",
            ServiceTier::Batch => "batch",
            ServiceTier::Priority => "priority",
            ServiceTier::Flex => "flex",
        }
    }
}

impl fmt::Display for ServiceTier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ServiceTier {
    type Err = ModelError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim().to_ascii_lowercase();
        ServiceTier::ALL
            .into_iter()
            .find(|t| t.as_str() == s)
            .ok_or_else(|| {
                ModelError::Config(format!(
                    "unknown service tier `{s}`: use standard, batch, priority or flex"
                ))
            })
    }
}

/// Which layer of the table a price came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PriceLayer {
    /// `$BOSUN_HOME/prices.toml`.
    User,
    /// `bosun prices update FILE`.
    Snapshot,
    /// `assets/prices/overrides.toml`.
    Override,
    /// `assets/prices/litellm.json`.
    Generated,
}

/// The cost of one response and the rates it was charged at.
#[derive(Debug, Clone, PartialEq)]
pub struct Priced {
    /// None: the model has no price ("unpriced").
    pub cost_usd: Option<f64>,
    pub rates: Option<Rates>,
}

/// One entry of the table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PriceEntry<'a> {
    /// The entry's name in the table (`claude-sonnet-4-5` for `anthropic/claude-sonnet-4-5`).
    pub name: &'a str,
    pub price: &'a ModelPrice,
    pub layer: PriceLayer,
    /// As in [`Rates::source`]: `prices.toml`, `snapshot`, `override`, `litellm <version>`.
    pub source: &'a str,
}

/// A layer the table was built from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LayerInfo {
    pub layer: PriceLayer,
    /// As in [`Rates::source`].
    pub source: String,
    /// The file, when not built in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    pub models: usize,
    /// The sha256 of LiteLLM's JSON (generated table and snapshot).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
struct Entry {
    price: ModelPrice,
    layer: PriceLayer,
}

/// Model name → price, with the layers it came from.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PriceTable {
    models: BTreeMap<String, Entry>,
    /// Lower-case name → name.
    lower: HashMap<String, String>,
    /// [`names::bare`] name → the preferred entry with that bare name.
    bare: HashMap<String, String>,
    layers: Vec<LayerInfo>,
    /// Source labels per layer (`litellm 1.110.2` for the generated one).
    labels: BTreeMap<PriceLayer, String>,
}

impl PriceTable {
    /// The table shipped with Bosun: the generated table with the reviewed overrides.
    pub fn builtin() -> PriceTable {
        static BUILTIN: OnceLock<PriceTable> = OnceLock::new();
        BUILTIN
            .get_or_init(|| {
                // Both files are checked by tests; a broken one only leaves models unpriced.
                let mut t = PriceTable::default();
                match litellm::parse_table(GENERATED, "assets/prices/litellm.json") {
                    Ok(file) => {
                        let label = match &file.generated.litellm_version {
                            Some(v) => format!("litellm {v}"),
                            None => "litellm".to_string(),
                        };
                        t.add_layer(
                            PriceLayer::Generated,
                            label,
                            None,
                            Some(file.generated.sha256),
                            file.models,
                        );
                    }
                    Err(e) => tracing::error!("the built-in price table: {e}"),
                }
                match user::parse_toml(OVERRIDES, "assets/prices/overrides.toml") {
                    Ok(models) => {
                        t.add_layer(PriceLayer::Override, "override".into(), None, None, models)
                    }
                    Err(e) => tracing::error!("the built-in price overrides: {e}"),
                }
                t
            })
            .clone()
    }

    /// The table a task prices with: `home/prices.toml` > `home/prices-snapshot.json` >
    /// overrides > generated, model by model. A broken file is an error naming it.
    pub fn load(home: &Path) -> Result<PriceTable, ModelError> {
        let mut t = PriceTable::builtin();
        let snapshot = home.join(SNAPSHOT_FILE);
        if let Some(text) = read_if_present(&snapshot)? {
            let shown = snapshot.display().to_string();
            let file = litellm::parse_table(&text, &shown)?;
            t.add_layer(
                PriceLayer::Snapshot,
                "snapshot".into(),
                Some(shown),
                Some(file.generated.sha256),
                file.models,
            );
        }
        let path = home.join(USER_FILE);
        if let Some(text) = read_if_present(&path)? {
            let shown = path.display().to_string();
            let models = user::parse_toml(&text, &shown)?;
            t.add_layer(
                PriceLayer::User,
                USER_FILE.into(),
                Some(shown),
                None,
                models,
            );
        }
        Ok(t)
    }

    /// Reads a file of `[models."<name>"]` sections (the shape of `prices.toml`).
    pub fn from_toml(s: &str) -> Result<PriceTable, ModelError> {
        let mut t = PriceTable::default();
        let models = user::parse_toml(s, "the price table")?;
        t.add_layer(PriceLayer::User, USER_FILE.into(), None, None, models);
        Ok(t)
    }

    /// Adds `other`'s models over this table's, model by model.
    pub fn merge(&mut self, other: PriceTable) {
        for (layer, label) in other.labels {
            self.labels.insert(layer, label);
        }
        self.layers.extend(other.layers);
        self.models.extend(other.models);
        self.reindex();
    }

    /// Adds or replaces one model's price as the user's.
    pub fn insert(&mut self, model: impl Into<String>, price: ModelPrice) {
        self.labels
            .entry(PriceLayer::User)
            .or_insert_with(|| USER_FILE.into());
        self.models.insert(
            model.into(),
            Entry {
                price,
                layer: PriceLayer::User,
            },
        );
        self.reindex();
    }

    fn add_layer(
        &mut self,
        layer: PriceLayer,
        source: String,
        path: Option<String>,
        sha256: Option<String>,
        models: BTreeMap<String, ModelPrice>,
    ) {
        self.layers.push(LayerInfo {
            layer,
            source: source.clone(),
            path,
            models: models.len(),
            sha256,
        });
        self.labels.insert(layer, source);
        for (name, price) in models {
            for alias in &price.aliases {
                let price = price.clone();
                self.models.insert(alias.clone(), Entry { price, layer });
            }
            self.models.insert(name, Entry { price, layer });
        }
        self.reindex();
    }

    fn reindex(&mut self) {
        self.lower.clear();
        self.bare.clear();
        let rank = |name: &str, e: &Entry| {
            (
                e.layer != PriceLayer::User,
                names::provider_rank(e.price.provider.as_deref()),
                name.contains('/'),
                name.len(),
                name.to_string(),
            )
        };
        let mut best: HashMap<String, (_, String)> = HashMap::new();
        for (name, e) in &self.models {
            self.lower
                .entry(name.to_ascii_lowercase())
                .or_insert_with(|| name.clone());
            let r = rank(name, e);
            let slot = best.entry(names::bare(name));
            match slot {
                std::collections::hash_map::Entry::Occupied(mut o) => {
                    if r < o.get().0 {
                        o.insert((r, name.clone()));
                    }
                }
                std::collections::hash_map::Entry::Vacant(v) => {
                    v.insert((r, name.clone()));
                }
            }
        }
        self.bare = best.into_iter().map(|(k, (_, name))| (k, name)).collect();
    }

    pub fn len(&self) -> usize {
        self.models.len()
    }

    pub fn is_empty(&self) -> bool {
        self.models.is_empty()
    }

    /// The layers the table was built from, lowest first.
    pub fn layers(&self) -> &[LayerInfo] {
        &self.layers
    }

    fn entry(&self, name: &str) -> Option<PriceEntry<'_>> {
        let (name, e) = self.models.get_key_value(name)?;
        Some(PriceEntry {
            name,
            price: &e.price,
            layer: e.layer,
            source: self.labels.get(&e.layer).map_or("", String::as_str),
        })
    }

    /// Every entry, sorted by name.
    pub fn entries(&self) -> impl Iterator<Item = PriceEntry<'_>> {
        self.models.keys().filter_map(|n| self.entry(n))
    }

    /// The entry for `model`: by exact name, case-insensitively, without provider prefixes one
    /// by one (`openrouter/anthropic/…`), then by its bare name (no Bedrock `anthropic.` prefix
    /// or `-v1:0` suffix, no date or `-latest`, `4.5` as `4-5`) matched against the table's
    /// bare names, preferring the model maker's own entry.
    pub fn lookup(&self, model: &str) -> Option<PriceEntry<'_>> {
        let model = model.trim();
        if model.is_empty() {
            return None;
        }
        if let Some(e) = self.entry(model) {
            return Some(e);
        }
        let lower = model.to_ascii_lowercase();
        let mut candidate = lower.as_str();
        loop {
            if let Some(name) = self.lower.get(candidate) {
                return self.entry(name);
            }
            match candidate.split_once('/') {
                Some((_, rest)) if !rest.is_empty() => candidate = rest,
                _ => break,
            }
        }
        self.bare
            .get(&names::bare(&lower))
            .and_then(|name| self.entry(name))
    }

    /// Up to `n` names close to `model`, for "did you mean".
    pub fn close_names(&self, model: &str, n: usize) -> Vec<&str> {
        let want = names::bare(model);
        let mut scored: Vec<(usize, &str)> = self
            .models
            .keys()
            .map(|name| {
                let b = names::bare(name);
                let d = if b.contains(&want) || want.contains(&b) {
                    b.len().abs_diff(want.len()) / 4
                } else {
                    names::distance(&want, &b)
                };
                (d, name.as_str())
            })
            .filter(|(d, _)| *d <= want.len().max(4) / 2)
            .collect();
        scored.sort_by(|a, b| {
            a.0.cmp(&b.0)
                .then(a.1.len().cmp(&b.1.len()))
                .then(a.1.cmp(b.1))
        });
        scored.into_iter().take(n).map(|(_, name)| name).collect()
    }

    /// The model's context window in prompt tokens, when the table knows it.
    pub fn context_window(&self, model: &str) -> Option<u64> {
        self.lookup(model).and_then(|e| e.price.context_window)
    }

    /// What `usage` of `model` cost in `tier`. `reported_cost_usd` (a cost the provider put in
    /// its response) wins over the table; the rates are still the table's when it knows the
    /// model.
    pub fn price(
        &self,
        model: &str,
        usage: &TokenUsage,
        tier: ServiceTier,
        reported_cost_usd: Option<f64>,
    ) -> Priced {
        let reported = reported_cost_usd.filter(|c| c.is_finite() && *c >= 0.0);
        let Some(entry) = self.lookup(model) else {
            return match reported {
                Some(cost) => Priced {
                    cost_usd: Some(cost),
                    rates: Some(Rates {
                        input: 0.0,
                        output: 0.0,
                        cache_read: 0.0,
                        cache_write: 0.0,
                        cache_write_1h: 0.0,
                        reasoning: 0.0,
                        tier: None,
                        source: "provider".into(),
                        entry: model.trim().to_string(),
                    }),
                },
                None => Priced {
                    cost_usd: None,
                    rates: None,
                },
            };
        };
        let r = entry.price.resolve(tier, usage.prompt_tokens());
        let per = |tokens: u64, rate: f64| tokens as f64 * rate / 1_000_000.0;
        let computed = per(usage.input_tokens, r.input)
            + per(usage.cached_input_tokens, r.cache_read)
            + per(usage.cache_write_tokens, r.cache_write)
            + per(usage.cache_write_1h_tokens, r.cache_write_1h)
            + per(usage.output_tokens, r.output)
            + per(usage.reasoning_tokens, r.reasoning);
        Priced {
            cost_usd: Some(reported.unwrap_or(computed)),
            rates: Some(Rates {
                input: r.input,
                output: r.output,
                cache_read: r.cache_read,
                cache_write: r.cache_write,
                cache_write_1h: r.cache_write_1h,
                reasoning: r.reasoning,
                tier: r.tier,
                source: entry.source.to_string(),
                entry: entry.name.to_string(),
            }),
        }
    }

    /// The most a request can cost, for a budget's reservation: every prompt token at the
    /// input rate of `tier` (a long-context tier when the prompt passes its threshold) and
    /// `max_output_tokens` at the higher of the output and reasoning rates. None: unpriced.
    pub fn max_cost(
        &self,
        model: &str,
        prompt_tokens: u64,
        max_output_tokens: u64,
        tier: ServiceTier,
    ) -> Option<f64> {
        let entry = self.lookup(model)?;
        let r = entry.price.resolve(tier, prompt_tokens);
        Some(
            (prompt_tokens as f64 * r.input + max_output_tokens as f64 * r.output.max(r.reasoning))
                / 1_000_000.0,
        )
    }
}

fn read_if_present(path: &Path) -> Result<Option<String>, ModelError> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(ModelError::Config(format!(
            "cannot read {}: {e}",
            path.display()
        ))),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn the_builtin_files_parse() {
        let generated = litellm::parse_table(GENERATED, "generated").unwrap();
        assert!(generated.models.len() > 1000);
        assert_eq!(generated.generated.models, generated.models.len());
        assert!(generated.generated.litellm_version.is_some());
        user::parse_toml(OVERRIDES, "overrides").unwrap();
        let t = PriceTable::builtin();
        assert_eq!(t.layers().len(), 2);
    }

    #[test]
    fn service_tiers_parse_and_name_the_values_when_wrong() {
        assert_eq!(
            "Priority".parse::<ServiceTier>().unwrap(),
            ServiceTier::Priority
        );
        let err = "turbo".parse::<ServiceTier>().unwrap_err().to_string();
        assert!(err.contains("standard, batch, priority or flex"), "{err}");
        assert_eq!(
            serde_json::to_string(&ServiceTier::Flex).unwrap(),
            "\"flex\""
        );
        assert_eq!(ServiceTier::default(), ServiceTier::Standard);
    }
}
