use bosun_model::{ModelResponse, PriceTable, ServiceTier};
use bosun_protocol::{TokenUsage, UsageEvent};

/// The most tokens of one class one response is counted with. No model answers a billion
/// tokens at once; a server that says so would otherwise overflow the journal's counters.
pub const MAX_TOKENS_PER_CLASS: u64 = 1_000_000_000;

/// A priced response.
pub struct Recorded {
    pub event: UsageEvent,
    /// The classes the server reported more than [`MAX_TOKENS_PER_CLASS`] of, with what it said.
    pub clamped: Vec<(&'static str, u64)>,
}

fn clamp(u: &TokenUsage) -> (TokenUsage, Vec<(&'static str, u64)>) {
    let mut out = *u;
    let mut clamped = Vec::new();
    for (name, n) in [
        ("input", &mut out.input_tokens),
        ("output", &mut out.output_tokens),
        ("cache read", &mut out.cached_input_tokens),
        ("5-minute cache write", &mut out.cache_write_tokens),
        ("1-hour cache write", &mut out.cache_write_1h_tokens),
        ("reasoning", &mut out.reasoning_tokens),
    ] {
        if *n > MAX_TOKENS_PER_CLASS {
            clamped.push((name, *n));
            *n = MAX_TOKENS_PER_CLASS;
        }
    }
    (out, clamped)
}

/// Counts tokens and dollars for a task and says when a limit is reached.
pub struct Budget {
    prices: PriceTable,
    tier: ServiceTier,
    max_steps: u32,
    max_cost_usd: Option<f64>,
    steps: u32,
    total: TokenUsage,
    total_cost_usd: f64,
    /// A sub-agent's token cap (every class).
    max_tokens: Option<u64>,
    /// What the task's sub-agents cost: counted against its cost limit.
    children_cost_usd: f64,
}

impl Budget {
    pub fn new(prices: PriceTable, max_steps: u32, max_cost_usd: Option<f64>) -> Self {
        Budget {
            prices,
            tier: ServiceTier::Standard,
            max_steps,
            max_cost_usd,
            steps: 0,
            total: TokenUsage::default(),
            total_cost_usd: 0.0,
            max_tokens: None,
            children_cost_usd: 0.0,
        }
    }

    /// A sub-agent's token cap.
    pub fn with_max_tokens(mut self, max: Option<u64>) -> Self {
        self.max_tokens = max;
        self
    }

    /// The token cap, when the task has reached it.
    pub fn tokens_exceeded(&self) -> Option<u64> {
        let used = self.total.prompt_tokens() + self.total.completion_tokens();
        self.max_tokens.filter(|max| used >= *max)
    }

    /// Adds what a finished sub-agent cost: the parent's cost limit covers its children.
    pub fn add_child_cost(&mut self, usd: f64) {
        if usd.is_finite() && usd > 0.0 {
            self.children_cost_usd += usd;
        }
    }

    /// What the task's limit leaves, its children's spend included (None: no limit).
    pub fn remaining_usd(&self) -> Option<f64> {
        self.max_cost_usd
            .map(|max| (max - self.total_cost_usd - self.children_cost_usd).max(0.0))
    }

    /// Model requests left before the step limit.
    pub fn steps_left(&self) -> u32 {
        self.max_steps.saturating_sub(self.steps)
    }

    /// Starts the task's totals at what it already cost (a continued task), so the cost limit
    /// covers the whole task and the running total does not restart.
    pub fn with_spent(mut self, usd: f64) -> Self {
        if usd.is_finite() && usd > 0.0 {
            self.total_cost_usd = usd;
        }
        self
    }

    /// Prices requests in the provider's service tier.
    pub fn with_tier(mut self, tier: ServiceTier) -> Self {
        self.tier = tier;
        self
    }

    /// Prices the next requests in `tier` (the run moved to another provider).
    pub fn set_tier(&mut self, tier: ServiceTier) {
        self.tier = tier;
    }

    pub fn prices(&self) -> &PriceTable {
        &self.prices
    }

    /// Counts one model request; false when the step limit was already reached.
    pub fn take_step(&mut self) -> bool {
        if self.steps >= self.max_steps {
            return false;
        }
        self.steps += 1;
        true
    }

    pub fn steps(&self) -> u32 {
        self.steps
    }

    pub fn max_steps(&self) -> u32 {
        self.max_steps
    }

    /// Prices one response (a cost the provider reported wins) and adds it to the task's
    /// totals. `model` is the one the response names, `requested` the one the request asked
    /// for: when the table has no price for the first (a gateway's deployment alias), the
    /// response is priced as the second, so a server cannot take spend out of the budgets by
    /// naming a model Bosun does not know. Token counts past [`MAX_TOKENS_PER_CLASS`] are
    /// counted as that many (`clamped` says so). `latency_ms` is the caller's.
    pub fn record(&mut self, model: &str, requested: &str, response: &ModelResponse) -> Recorded {
        let (usage, clamped) = clamp(&response.usage);
        let reported = response.reported_cost_usd;
        let mut priced = self.prices.price(model, &usage, self.tier, reported);
        if priced.cost_usd.is_none() && model != requested {
            let fallback = self.prices.price(requested, &usage, self.tier, reported);
            if fallback.cost_usd.is_some() {
                priced = fallback;
            }
        }
        self.total.add(&usage);
        if let Some(usd) = priced.cost_usd {
            self.total_cost_usd += usd;
        }
        Recorded {
            event: UsageEvent {
                model: model.to_string(),
                input_tokens: usage.input_tokens,
                output_tokens: usage.output_tokens,
                cached_input_tokens: usage.cached_input_tokens,
                cache_write_tokens: usage.cache_write_tokens,
                cache_write_1h_tokens: usage.cache_write_1h_tokens,
                reasoning_tokens: usage.reasoning_tokens,
                cost_usd: priced.cost_usd,
                total_cost_usd: self.total_cost_usd,
                priced: priced.cost_usd.is_some(),
                rates: priced.rates,
                latency_ms: None,
                reasoning: Vec::new(),
            },
            clamped,
        }
    }

    /// The task's tokens so far.
    pub fn total(&self) -> TokenUsage {
        self.total
    }

    pub fn total_cost_usd(&self) -> f64 {
        self.total_cost_usd
    }

    /// The cost limit, when the task has gone past it.
    pub fn cost_exceeded(&self) -> Option<f64> {
        self.max_cost_usd
            .filter(|max| self.total_cost_usd + self.children_cost_usd > *max)
    }

    /// The task's cost with its sub-agents'.
    pub fn cost_with_children_usd(&self) -> f64 {
        self.total_cost_usd + self.children_cost_usd
    }
}
