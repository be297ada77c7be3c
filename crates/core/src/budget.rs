use bosun_model::{PriceTable, ServiceTier};
use bosun_protocol::{TokenUsage, UsageEvent};

/// Counts tokens and dollars for a task and says when a limit is reached.
pub struct Budget {
    prices: PriceTable,
    max_steps: u32,
    max_cost_usd: Option<f64>,
    steps: u32,
    total: TokenUsage,
    total_cost_usd: f64,
}

impl Budget {
    pub fn new(prices: PriceTable, max_steps: u32, max_cost_usd: Option<f64>) -> Self {
        Budget {
            prices,
            max_steps,
            max_cost_usd,
            steps: 0,
            total: TokenUsage::default(),
            total_cost_usd: 0.0,
        }
    }

    /// Starts the task's totals at what it already cost (a continued task), so the cost limit
    /// covers the whole task and the running total does not restart.
    pub fn with_spent(mut self, usd: f64) -> Self {
        if usd.is_finite() && usd > 0.0 {
            self.total_cost_usd = usd;
        }
        self
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

    /// Prices one response and adds it to the task's totals.
    pub fn record(&mut self, model: &str, usage: &TokenUsage) -> UsageEvent {
        let priced = self.prices.price(model, usage, ServiceTier::Standard, None);
        self.total.add(usage);
        self.total_cost_usd += priced.cost_usd.unwrap_or(0.0);
        UsageEvent {
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
        }
    }

    pub fn total_cost_usd(&self) -> f64 {
        self.total_cost_usd
    }

    /// The cost limit, when the task has gone past it.
    pub fn cost_exceeded(&self) -> Option<f64> {
        self.max_cost_usd.filter(|max| self.total_cost_usd > *max)
    }
}
