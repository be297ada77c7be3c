//! One model's price and the rates a request is charged at: tiers, long context, cache writes.

use super::ServiceTier;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Some or all rates of a tier, in US dollars per million tokens. A missing rate falls back as
/// [`ModelPrice::resolve`] says.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TierRates {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_1h: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<f64>,
}

impl TierRates {
    fn fields(&self) -> [(&'static str, Option<f64>); 6] {
        [
            ("input", self.input),
            ("output", self.output),
            ("cache_read", self.cache_read),
            ("cache_write", self.cache_write),
            ("cache_write_1h", self.cache_write_1h),
            ("reasoning", self.reasoning),
        ]
    }

    fn get(&self, class: Class) -> Option<f64> {
        match class {
            Class::Input => self.input,
            Class::Output => self.output,
            Class::CacheRead => self.cache_read,
            Class::CacheWrite => self.cache_write,
            Class::CacheWrite1h => self.cache_write_1h,
            Class::Reasoning => self.reasoning,
        }
    }
}

/// The price of one model, in US dollars per million tokens.
///
/// Missing rates: a cache read or a 5-minute cache write without a rate of its own is charged
/// at the input rate, a 1-hour write at the 5-minute write rate, reasoning at the output rate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelPrice {
    pub input: f64,
    pub output: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_1h: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<f64>,
    /// Prompt tokens the model takes at most.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u64>,
    /// Who sells it at this price (LiteLLM's `litellm_provider`: `openai`, `anthropic`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// Other tiers by name: `batch`, `priority`, `flex`, a long-context tier
    /// `above_<N>k_tokens` (the whole request is charged at its rates when its prompt is longer
    /// than N thousand tokens), or both, `priority+above_272k_tokens`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tiers: BTreeMap<String, TierRates>,
    /// Other names of the same model at the same price (`claude-sonnet-4-5-20250929`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
}

#[derive(Debug, Clone, Copy)]
enum Class {
    Input,
    Output,
    CacheRead,
    CacheWrite,
    CacheWrite1h,
    Reasoning,
}

/// The rates one request is charged at, and the tier that gave them (None: standard).
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
    pub cache_write_1h: f64,
    pub reasoning: f64,
    pub tier: Option<String>,
}

/// A tier name taken apart: the service tier and the long-context threshold in tokens.
pub(crate) fn parse_tier(name: &str) -> Option<(ServiceTier, Option<u64>)> {
    let mut service = ServiceTier::Standard;
    let mut above = None;
    for part in name.split('+') {
        if let Some(k) = part
            .strip_prefix("above_")
            .and_then(|p| p.strip_suffix("k_tokens"))
        {
            let k: u64 = k.parse().ok().filter(|k| *k > 0)?;
            if above.replace(k * 1000).is_some() {
                return None;
            }
        } else {
            let s: ServiceTier = part.parse().ok()?;
            if s == ServiceTier::Standard || service != ServiceTier::Standard {
                return None;
            }
            service = s;
        }
    }
    (service != ServiceTier::Standard || above.is_some()).then_some((service, above))
}

impl ModelPrice {
    /// A price with input and output rates only.
    pub fn new(input: f64, output: f64) -> ModelPrice {
        ModelPrice {
            input,
            output,
            cache_read: None,
            cache_write: None,
            cache_write_1h: None,
            reasoning: None,
            context_window: None,
            max_output_tokens: None,
            provider: None,
            tiers: BTreeMap::new(),
            aliases: Vec::new(),
        }
    }

    fn standard(&self) -> TierRates {
        TierRates {
            input: Some(self.input),
            output: Some(self.output),
            cache_read: self.cache_read,
            cache_write: self.cache_write,
            cache_write_1h: self.cache_write_1h,
            reasoning: self.reasoning,
        }
    }

    /// What is wrong with this price, as `key: why`.
    pub(crate) fn problem(&self) -> Option<String> {
        let bad = |v: f64| !v.is_finite() || v < 0.0;
        for (key, v) in self.standard().fields() {
            if v.is_some_and(bad) {
                return Some(format!("`{key}` must be a number of dollars >= 0"));
            }
        }
        if self.context_window == Some(0) {
            return Some("`context_window` must be above 0".into());
        }
        for (name, t) in &self.tiers {
            if parse_tier(name).is_none() {
                return Some(format!(
                    "unknown tier `{name}`: use batch, priority, flex, above_<N>k_tokens or \
                     e.g. priority+above_200k_tokens"
                ));
            }
            for (key, v) in t.fields() {
                if v.is_some_and(bad) {
                    return Some(format!(
                        "`tiers.{name}.{key}` must be a number of dollars >= 0"
                    ));
                }
            }
        }
        None
    }

    /// Whether the table has rates for `tier` (alone or with a long context).
    pub fn has_tier(&self, tier: ServiceTier) -> bool {
        tier == ServiceTier::Standard
            || self
                .tiers
                .keys()
                .filter_map(|n| parse_tier(n))
                .any(|(s, _)| s == tier)
    }

    /// The long-context threshold a prompt of `prompt_tokens` passes: the highest one below it.
    fn long_context(&self, prompt_tokens: u64) -> Option<u64> {
        self.tiers
            .keys()
            .filter_map(|n| parse_tier(n))
            .filter_map(|(_, above)| above)
            .filter(|t| prompt_tokens > *t)
            .max()
    }

    /// The rates of a request of `prompt_tokens` (every prompt class) in `tier`.
    ///
    /// A long-context tier applies to the whole request when the prompt is longer than its
    /// threshold. In a service tier with a long context, a rate comes from the combined tier
    /// (`priority+above_272k_tokens`) when the table has it, else the higher of the service
    /// tier's and the long-context tier's; a rate no chosen tier has is the standard one. A
    /// service tier the table has no rates for prices as standard (and `tier` says so).
    pub fn resolve(&self, tier: ServiceTier, prompt_tokens: u64) -> Resolved {
        let service = (tier != ServiceTier::Standard && self.has_tier(tier)).then_some(tier);
        let above = self.long_context(prompt_tokens);
        let long_name = above.map(|t| format!("above_{}k_tokens", t / 1000));
        let label = match (service, &long_name) {
            (None, None) => None,
            (Some(s), None) => Some(s.as_str().to_string()),
            (None, Some(l)) => Some(l.clone()),
            (Some(s), Some(l)) => Some(format!("{}+{l}", s.as_str())),
        };
        let none = TierRates::default();
        let get = |name: &str| self.tiers.get(name).unwrap_or(&none);
        let combined = label.as_deref().map(get).unwrap_or(&none);
        let service_set = service.map(|s| get(s.as_str())).unwrap_or(&none);
        let long_set = long_name.as_deref().map(get).unwrap_or(&none);
        let standard = self.standard();
        let explicit = |c: Class| -> Option<f64> {
            combined
                .get(c)
                .or_else(|| match (service_set.get(c), long_set.get(c)) {
                    (Some(a), Some(b)) => Some(a.max(b)),
                    (a, b) => a.or(b),
                })
                .or_else(|| standard.get(c))
        };
        let input = explicit(Class::Input).unwrap_or(self.input);
        let output = explicit(Class::Output).unwrap_or(self.output);
        let cache_write = explicit(Class::CacheWrite).unwrap_or(input);
        Resolved {
            input,
            output,
            cache_read: explicit(Class::CacheRead).unwrap_or(input),
            cache_write,
            cache_write_1h: explicit(Class::CacheWrite1h).unwrap_or(cache_write),
            reasoning: explicit(Class::Reasoning).unwrap_or(output),
            tier: label,
        }
    }
}
