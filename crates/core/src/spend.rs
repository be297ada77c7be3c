//! Budgets that stop work. `[budgets]` in `$BOSUN_HOME/config.toml` (overall), in
//! `[repos."<path>".budgets]` and in the repository's `.bosun/config.toml` (that repository's
//! tasks only) set daily, weekly and monthly limits in US dollars that hold across every running
//! task in every process:
//!
//! - before each model request the task reserves the request's maximum cost — every prompt token
//!   at the input rate (the prompt estimated from its size, see [`estimate_prompt_tokens`]) plus
//!   `max_output_tokens` at the output rate — against every budget in one `BEGIN IMMEDIATE`
//!   transaction ([`bosun_store::Store::reserve`]); a request whose reservation would pass a
//!   limit is not sent and the task stops `budget_exceeded`, naming the budget;
//! - after the response the reservation is settled: the usage row, at the real cost, counts
//!   instead; `warning{code: budget_80}` once a budget is 80 % spent (once per budget and task);
//! - `max_usd_per_minute` is a breaker: past it (the spend of every task over the last minute)
//!   the task pauses with `approval_requested{kind: spend_rate}` — denied, or headless, it stops
//!   `budget_exceeded`; approved, the minute starts again from the approval;
//! - a model with no price cannot be counted against a budget: the task asks once
//!   (`approval_requested{kind: unpriced_model}`; `bosun run` without anyone to ask refuses it
//!   before the task starts, exit 2).

use crate::approvals::{Approval, ApprovalGate, AskRequest};
use crate::config::BudgetSettings;
use crate::repo_settings::project_settings;
use crate::{BosunConfig, CoreError, Emitter, TaskOutcome};
use bosun_model::{ModelRequest, PriceTable, ServiceTier};
use bosun_protocol::{EventMsg, TaskId, TaskStatus, ToolAction, Warning};
use bosun_store::{BudgetLimit, BudgetStatus, BudgetWindow, Reservation, Store};
use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// The window the spend-rate breaker measures.
const BREAKER_WINDOW_SECS: u32 = 60;

/// The share of a budget at which the task warns.
const WARN_AT: f64 = 0.8;

/// The budgets a task of one repository is held to.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SpendLimits {
    pub limits: Vec<BudgetLimit>,
    /// The lowest `max_usd_per_minute` that applies, and the key that set it.
    pub per_minute: Option<(f64, String)>,
}

impl SpendLimits {
    pub fn is_empty(&self) -> bool {
        self.limits.is_empty() && self.per_minute.is_none()
    }

    /// The budgets' names, for a message (`daily_usd, repos."/src/api".budgets.weekly_usd`).
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.limits.iter().map(|l| l.name.clone()).collect();
        if let Some((_, name)) = &self.per_minute {
            names.push(name.clone());
        }
        names
    }
}

/// The budgets that hold for tasks of `repo_root` (canonical, as `task_started.repo`): yours
/// overall, yours for the repository, and the project file's. Every value must be a finite
/// number of dollars, 0 or more.
pub fn spend_limits(home: &Path, repo_root: &Path) -> Result<SpendLimits, CoreError> {
    let config = BosunConfig::load(home)?;
    let key = repo_root.display().to_string();
    let mine =
        crate::repo_settings::repo_section(&config, repo_root).and_then(|r| r.budgets.clone());
    let project = project_settings(repo_root)?.budgets;
    let mut out = SpendLimits::default();
    let sources: [(Option<BudgetSettings>, String, Option<String>); 3] = [
        (config.budgets.clone(), String::new(), None),
        (
            mine,
            format!("repos.{}.budgets.", toml_key(&key)),
            Some(key.clone()),
        ),
        (
            project,
            ".bosun/config.toml budgets.".into(),
            Some(key.clone()),
        ),
    ];
    for (settings, prefix, repo) in sources {
        let Some(b) = settings else { continue };
        for (value, key, window) in [
            (b.daily_usd, "daily_usd", BudgetWindow::Day),
            (b.weekly_usd, "weekly_usd", BudgetWindow::Week),
            (b.monthly_usd, "monthly_usd", BudgetWindow::Month),
        ] {
            let Some(limit) = value else { continue };
            let name = format!("{prefix}{key}");
            check_amount(&name, limit)?;
            out.limits.push(BudgetLimit {
                name,
                window,
                repo: repo.clone(),
                limit_usd: limit,
            });
        }
        if let Some(rate) = b.max_usd_per_minute {
            let name = format!("{prefix}max_usd_per_minute");
            check_amount(&name, rate)?;
            if out.per_minute.as_ref().is_none_or(|(r, _)| rate < *r) {
                out.per_minute = Some((rate, name));
            }
        }
    }
    Ok(out)
}

fn check_amount(name: &str, value: f64) -> Result<(), CoreError> {
    if value.is_finite() && value >= 0.0 {
        return Ok(());
    }
    Err(CoreError::Config(format!(
        "{name} = {value} is not allowed: use a number of dollars, 0 or more"
    )))
}

/// `"/src/api"` as a TOML key.
fn toml_key(key: &str) -> String {
    format!("\"{}\"", key.replace('\\', "\\\\").replace('"', "\\\""))
}

/// The prompt's size in tokens, over-estimated on purpose (a reservation must not be below what
/// the request can cost): a token is about four bytes of English or code, so a third of the bytes
/// of the system prompt, the messages, the tool calls and the tool schemas.
pub fn estimate_prompt_tokens(request: &ModelRequest) -> u64 {
    use bosun_model::ChatMessage;
    let mut bytes = request.system.len();
    for m in &request.messages {
        bytes += 16;
        bytes += match m {
            ChatMessage::User { content } => content.len(),
            ChatMessage::Assistant {
                content,
                tool_calls,
                ..
            } => {
                content.len()
                    + tool_calls
                        .iter()
                        .map(|c| c.name.len() + c.arguments.len() + c.id.len() + 16)
                        .sum::<usize>()
            }
            ChatMessage::Tool {
                call_id, content, ..
            } => call_id.len() + content.len(),
        };
    }
    for t in &request.tools {
        bytes += t.name.len() + t.description.len() + t.parameters.to_string().len();
    }
    (bytes as u64).div_ceil(3)
}

/// Whether the request may be sent.
pub enum Gate {
    Go,
    Stop(TaskOutcome),
}

/// A task's side of the budgets: its limits, the reservation of the request in flight, what it
/// already warned about and what the user already answered.
pub struct Spend {
    limits: SpendLimits,
    store: Arc<Store>,
    task: TaskId,
    repo: String,
    tier: ServiceTier,
    max_output_tokens: u32,
    reservation: Option<i64>,
    warned: HashSet<String>,
    /// The user let the task run an unpriced model under the budgets.
    unpriced_allowed: bool,
    /// When the user last let the breaker go: only spend after it counts.
    breaker_reset: Option<String>,
}

impl Spend {
    pub fn new(
        limits: SpendLimits,
        store: Arc<Store>,
        task: TaskId,
        repo: String,
        tier: ServiceTier,
        max_output_tokens: u32,
    ) -> Self {
        Spend {
            limits,
            store,
            task,
            repo,
            tier,
            max_output_tokens,
            reservation: None,
            warned: HashSet::new(),
            unpriced_allowed: false,
            breaker_reset: None,
        }
    }

    /// The run moved to another provider: its tier and response limit price the reservations.
    pub fn set_model(&mut self, tier: ServiceTier, max_output_tokens: u32) {
        self.tier = tier;
        self.max_output_tokens = max_output_tokens;
    }

    /// Before a model request: the breaker, then the reservation (or the question about an
    /// unpriced model). `Stop` means the request must not be sent.
    pub async fn before_request(
        &mut self,
        prices: &PriceTable,
        model: &str,
        request: &ModelRequest,
        gate: &ApprovalGate,
        emitter: &Emitter,
        cancel: &CancellationToken,
    ) -> Result<Gate, CoreError> {
        self.settle()?;
        if self.limits.is_empty() {
            return Ok(Gate::Go);
        }
        if let Some(stop) = self.breaker(gate, emitter, cancel).await? {
            return Ok(Gate::Stop(stop));
        }
        if self.limits.limits.is_empty() {
            return Ok(Gate::Go);
        }
        let prompt = estimate_prompt_tokens(request);
        let Some(amount) =
            prices.max_cost(model, prompt, u64::from(self.max_output_tokens), self.tier)
        else {
            return self.unpriced(model, gate, emitter, cancel).await;
        };
        match self
            .store
            .reserve(&self.task, &self.repo, amount, &self.limits.limits)?
        {
            Reservation::Reserved { id, statuses } => {
                self.reservation = Some(id);
                self.warn(&statuses, emitter)?;
                Ok(Gate::Go)
            }
            Reservation::Refused { status, amount_usd } => Ok(Gate::Stop(TaskOutcome {
                status: TaskStatus::BudgetExceeded,
                summary: refused_summary(&status, amount_usd),
            })),
        }
    }

    /// After the response's usage is in the journal: its real cost counts instead of the
    /// reservation; warns at 80 %.
    pub fn after_response(&mut self, emitter: &Emitter) -> Result<(), CoreError> {
        if self.reservation.is_none() {
            return Ok(());
        }
        self.settle()?;
        let statuses = self.store.budget_statuses(&self.limits.limits)?;
        self.warn(&statuses, emitter)
    }

    /// Gives the reservation back (the request failed or was stopped).
    pub fn settle(&mut self) -> Result<(), CoreError> {
        if let Some(id) = self.reservation.take() {
            self.store.settle(id)?;
        }
        Ok(())
    }

    fn warn(&mut self, statuses: &[BudgetStatus], emitter: &Emitter) -> Result<(), CoreError> {
        for s in statuses {
            let limit = s.limit.limit_usd;
            if limit <= 0.0 || s.spent_usd < WARN_AT * limit {
                continue;
            }
            if !self.warned.insert(s.limit.name.clone()) {
                continue;
            }
            emitter.emit(EventMsg::Warning(Warning {
                code: "budget_80".into(),
                message: format!(
                    "{} of the {} is spent: ${:.4} of ${:.4} ({}{})",
                    percent(s.spent_usd / limit),
                    budget_words(&s.limit),
                    s.spent_usd,
                    limit,
                    s.limit.name,
                    source_words(&s.limit)
                ),
            }))?;
        }
        Ok(())
    }

    /// The spend-rate breaker: `Some` when the task must stop.
    async fn breaker(
        &mut self,
        gate: &ApprovalGate,
        emitter: &Emitter,
        cancel: &CancellationToken,
    ) -> Result<Option<TaskOutcome>, CoreError> {
        let Some((limit, name)) = self.limits.per_minute.clone() else {
            return Ok(None);
        };
        let window_start = seconds_ago(i64::from(BREAKER_WINDOW_SECS));
        let (since, period) = match &self.breaker_reset {
            Some(reset) if *reset > window_start => {
                (reset.clone(), "since the breaker was last let go")
            }
            _ => (window_start, "in the last minute"),
        };
        let spent = self.store.spend_since(&since)?;
        if spent <= limit {
            return Ok(None);
        }
        let action = ToolAction::SpendRate {
            spent_usd_micros: micros(spent),
            limit_usd_micros: micros(limit),
            window_secs: BREAKER_WINDOW_SECS,
        };
        let reason = format!(
            "${spent:.4} was spent {period}, over {name} = ${limit:.4} a minute: the task is paused before its next model request"
        );
        let stop = |how: &str| TaskOutcome {
            status: TaskStatus::BudgetExceeded,
            summary: format!(
                "stopped by the spend-rate breaker ({how}): ${spent:.4} spent {period}, over {name} = ${limit:.4} a minute in config.toml"
            ),
        };
        match self
            .ask(gate, emitter, cancel, "spend_rate", &action, reason, &name)
            .await?
        {
            Approval::Approved | Approval::Always { .. } => {
                self.breaker_reset = Some(bosun_store::now_rfc3339());
                Ok(None)
            }
            Approval::Denied { .. } => Ok(Some(stop("not approved"))),
            Approval::Cancelled => Ok(Some(TaskOutcome {
                status: TaskStatus::Interrupted,
                summary: "stopped by the user".into(),
            })),
        }
    }

    async fn unpriced(
        &mut self,
        model: &str,
        gate: &ApprovalGate,
        emitter: &Emitter,
        cancel: &CancellationToken,
    ) -> Result<Gate, CoreError> {
        if self.unpriced_allowed {
            return Ok(Gate::Go);
        }
        let budgets: Vec<String> = self.limits.limits.iter().map(|l| l.name.clone()).collect();
        let action = ToolAction::UnpricedModel {
            model: model.to_string(),
            budgets: budgets.clone(),
        };
        let reason = format!(
            "`{model}` has no price, so what it costs cannot be counted against {}; add a price (`bosun prices set {model} --input … --output …`, or in the Costs view) or run it uncounted",
            budgets.join(", ")
        );
        match self
            .ask(
                gate,
                emitter,
                cancel,
                "unpriced_model",
                &action,
                reason,
                "budgets",
            )
            .await?
        {
            Approval::Approved | Approval::Always { .. } => {
                self.unpriced_allowed = true;
                Ok(Gate::Go)
            }
            Approval::Denied { .. } => Ok(Gate::Stop(TaskOutcome {
                status: TaskStatus::Failed,
                summary: format!(
                    "stopped before a model request: `{model}` has no price and budgets apply ({}); add its price with `bosun prices set` or in the Costs view",
                    budgets.join(", ")
                ),
            })),
            Approval::Cancelled => Ok(Gate::Stop(TaskOutcome {
                status: TaskStatus::Interrupted,
                summary: "stopped by the user".into(),
            })),
        }
    }

    #[allow(clippy::too_many_arguments)]
    async fn ask(
        &self,
        gate: &ApprovalGate,
        emitter: &Emitter,
        cancel: &CancellationToken,
        call_id: &str,
        action: &ToolAction,
        reason: String,
        rule: &str,
    ) -> Result<Approval, CoreError> {
        gate.ask(
            AskRequest {
                call_id,
                tool: "budget",
                action,
                reason,
                rule: format!("budgets {rule}"),
                source: "config.toml".into(),
                suggestions: Vec::new(),
                preview: None,
            },
            emitter,
            cancel,
        )
        .await
    }
}

impl Drop for Spend {
    fn drop(&mut self) {
        // A reservation outlives its request only until the process ends; give it back now.
        if let Some(id) = self.reservation.take() {
            let _ = self.store.settle(id);
        }
    }
}

/// Why a request was not sent, naming the budget.
fn refused_summary(s: &BudgetStatus, amount: f64) -> String {
    format!(
        "stopped before a model request: the {} of ${:.4} ({}{}) would be passed — ${:.4} spent {}, ${:.4} reserved by requests in flight, and this request could cost up to ${:.4}",
        budget_words(&s.limit),
        s.limit.limit_usd,
        s.limit.name,
        source_words(&s.limit),
        s.spent_usd,
        match s.limit.window {
            BudgetWindow::Day => "today",
            BudgetWindow::Week => "this week",
            BudgetWindow::Month => "this month",
        },
        s.reserved_usd,
        amount
    )
}

/// `daily budget`, `weekly budget of /src/api`.
fn budget_words(l: &BudgetLimit) -> String {
    let window = match l.window {
        BudgetWindow::Day => "daily",
        BudgetWindow::Week => "weekly",
        BudgetWindow::Month => "monthly",
    };
    match &l.repo {
        Some(repo) => format!("{window} budget of {repo}"),
        None => format!("{window} budget"),
    }
}

fn source_words(l: &BudgetLimit) -> &'static str {
    if l.name.starts_with(".bosun/") {
        ""
    } else {
        " in config.toml"
    }
}

fn percent(share: f64) -> String {
    format!("{:.0} %", (share * 100.0).floor())
}

fn micros(usd: f64) -> u64 {
    (usd * 1_000_000.0).round().max(0.0) as u64
}

/// `secs` seconds ago, as the journal writes times.
fn seconds_ago(secs: i64) -> String {
    bosun_store::rfc3339(time::OffsetDateTime::now_utc() - time::Duration::seconds(secs))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use bosun_model::ChatMessage;

    fn home_with(config: &str) -> tempfile::TempDir {
        let home = tempfile::tempdir().unwrap();
        std::fs::write(home.path().join("config.toml"), config).unwrap();
        home
    }

    #[test]
    fn limits_come_from_every_layer_with_their_names() {
        let repo = tempfile::tempdir().unwrap();
        let key = repo.path().display().to_string();
        std::fs::create_dir_all(repo.path().join(".bosun")).unwrap();
        std::fs::write(
            repo.path().join(".bosun/config.toml"),
            "[budgets]\nmonthly_usd = 30\nmax_usd_per_minute = 0.5\n",
        )
        .unwrap();
        let home = home_with(&format!(
            "[budgets]\ndaily_usd = 5\nmax_usd_per_minute = 2\n[repos.\"{key}\".budgets]\nweekly_usd = 10\n"
        ));
        let l = spend_limits(home.path(), repo.path()).unwrap();
        let names: Vec<(String, Option<String>, f64)> = l
            .limits
            .iter()
            .map(|l| (l.name.clone(), l.repo.clone(), l.limit_usd))
            .collect();
        assert_eq!(
            names,
            vec![
                ("daily_usd".to_string(), None, 5.0),
                (
                    format!("repos.\"{key}\".budgets.weekly_usd"),
                    Some(key.clone()),
                    10.0
                ),
                (
                    ".bosun/config.toml budgets.monthly_usd".to_string(),
                    Some(key.clone()),
                    30.0
                ),
            ]
        );
        // The strictest breaker wins, wherever it was set.
        assert_eq!(
            l.per_minute,
            Some((0.5, ".bosun/config.toml budgets.max_usd_per_minute".into()))
        );
    }

    #[test]
    fn a_negative_or_unknown_budget_is_an_error_naming_it() {
        let repo = tempfile::tempdir().unwrap();
        let home = home_with("[budgets]\ndaily_usd = -1\n");
        let err = spend_limits(home.path(), repo.path())
            .unwrap_err()
            .to_string();
        assert!(err.contains("daily_usd = -1"), "{err}");
        let home = home_with("[budgets]\ndayly_usd = 1\n");
        let err = spend_limits(home.path(), repo.path())
            .unwrap_err()
            .to_string();
        assert!(err.contains("dayly_usd"), "{err}");
        let home = home_with("");
        assert!(spend_limits(home.path(), repo.path()).unwrap().is_empty());
    }

    #[test]
    fn the_prompt_estimate_is_not_below_a_token_per_four_bytes() {
        let text = "fn main() { println!(\"hello\"); }\n".repeat(300);
        let req = ModelRequest {
            system: "You are a coding agent.".into(),
            messages: vec![ChatMessage::User {
                content: text.clone(),
            }],
            tools: Vec::new(),
            retry_sampling: None,
        };
        let est = estimate_prompt_tokens(&req);
        assert!(est as usize >= text.len() / 4, "{est}");
        assert!((est as usize) < text.len(), "{est}");
    }
}
