//! Comparisons: one task under two to four setups side by side (`bosun compare`, the app's
//! Compare view). Each run is an item of a batch of kind `compare`, with its own worktree from
//! the same base commit; the comparison's figures are read back from each run's journal.

use super::batch::{self, BatchTask};
use crate::config::ContextSettings;
use crate::{BosunConfig, CoreError};
use bosun_protocol::{EventMsg, TaskId, TaskStatus, ToolCallStatus};
use bosun_store::{BatchItemState, BatchRow, Store, TaskRow};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use ts_rs::TS;

/// At least this many setups.
pub const MIN_SETUPS: usize = 2;
/// At most this many setups.
pub const MAX_SETUPS: usize = 4;
/// Runs per setup at most.
pub const MAX_RUNS: u32 = 10;

/// `[setups.NAME]` in config.toml, or inline `provider=local,mode=auto-edit`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Setup {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_steps: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cost_usd: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_nudges: Option<u32>,
    /// Commands run as required checks; `[]`: none; absent: the repository's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checks: Option<Vec<String>>,
    /// `[setups.NAME.context]` (its `shares`, `mask_tool_outputs`, …) over config.toml's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<ContextSettings>,
}

const INLINE_KEYS: &str = "provider, model, mode, max_steps, max_cost_usd, max_nudges, check \
    (repeatable), no_checks, mask_tool_outputs, targets, tests, siblings, symbols, recent";

/// A `--setup` value: the name of a `[setups.NAME]`, or `key=value` pairs separated by commas
/// (keys: [`INLINE_KEYS`]). Returns the name it shows under and the setup.
pub fn parse_setup(text: &str, config: &BosunConfig) -> Result<(String, Setup), CoreError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(CoreError::Config(
            "--setup is empty: name a [setups.NAME] of config.toml or write key=value pairs, e.g. provider=local,mode=auto-edit".into(),
        ));
    }
    if !text.contains('=') {
        return match config.setups.get(text) {
            Some(s) => Ok((text.to_string(), s.clone())),
            None => {
                let known: Vec<&str> = config.setups.keys().map(String::as_str).collect();
                Err(CoreError::Config(format!(
                    "no setup named {text:?}: {}; or write one inline, e.g. --setup provider=local,mode=auto-edit",
                    if known.is_empty() {
                        "config.toml has no [setups.NAME] tables".to_string()
                    } else {
                        format!("config.toml has {}", known.join(", "))
                    }
                )))
            }
        };
    }
    let mut s = Setup::default();
    let mut shares = crate::config::SharesSettings::default();
    let mut any_share = false;
    let mut mask = None;
    for pair in text.split(',') {
        let pair = pair.trim();
        if pair.is_empty() {
            continue;
        }
        let Some((k, v)) = pair.split_once('=') else {
            return Err(CoreError::Config(format!(
                "--setup {text:?}: {pair:?} is not key=value (keys: {INLINE_KEYS})"
            )));
        };
        let (k, v) = (k.trim(), v.trim());
        let bad = |what: &str| CoreError::Config(format!("--setup {text:?}: {k}={v:?} {what}"));
        let share = |v: &str| -> Result<f64, CoreError> {
            v.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x >= 0.0)
                .ok_or_else(|| bad("must be a non-negative number"))
        };
        match k {
            "provider" => s.provider = Some(v.to_string()),
            "model" => s.model = Some(v.to_string()),
            "mode" => s.mode = Some(v.to_string()),
            "max_steps" => {
                s.max_steps = Some(v.parse().map_err(|_| bad("must be a whole number"))?)
            }
            "max_cost_usd" => {
                s.max_cost_usd = Some(v.parse().map_err(|_| bad("must be a number"))?)
            }
            "max_nudges" => {
                s.max_nudges = Some(v.parse().map_err(|_| bad("must be a whole number"))?)
            }
            "check" => s.checks.get_or_insert_with(Vec::new).push(v.to_string()),
            "no_checks" => match v {
                "true" => s.checks = Some(Vec::new()),
                "false" => {}
                _ => return Err(bad("must be true or false")),
            },
            "mask_tool_outputs" => {
                mask = Some(
                    v.parse::<bool>()
                        .map_err(|_| bad("must be true or false"))?,
                )
            }
            "targets" | "shares.targets" => (shares.targets, any_share) = (Some(share(v)?), true),
            "tests" | "shares.tests" => (shares.tests, any_share) = (Some(share(v)?), true),
            "siblings" | "shares.siblings" => {
                (shares.siblings, any_share) = (Some(share(v)?), true)
            }
            "symbols" | "shares.symbols" => (shares.symbols, any_share) = (Some(share(v)?), true),
            "recent" | "shares.recent" => (shares.recent, any_share) = (Some(share(v)?), true),
            _ => {
                return Err(CoreError::Config(format!(
                    "--setup {text:?}: unknown key {k:?} (keys: {INLINE_KEYS})"
                )));
            }
        }
    }
    if any_share || mask.is_some() {
        s.context = Some(ContextSettings {
            mask_tool_outputs: mask,
            shares: any_share.then_some(shares),
            ..ContextSettings::default()
        });
    }
    Ok((text.to_string(), s))
}

/// What `bosun compare` (or the app) asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct CompareRequest {
    pub repo: std::path::PathBuf,
    pub prompt: String,
    pub base: Option<String>,
    /// `--setup` values, as typed.
    pub setups: Vec<String>,
    /// Runs per setup (default 1).
    pub runs: u32,
    /// Runs at once (default: every run of one round, at most 4).
    pub concurrency: Option<u32>,
}

/// Checks the request, queues its runs (interleaved: each setup's first run, then each one's
/// second, …) from one base commit, and returns the comparison's id.
pub fn create(store: &Store, home: &Path, req: &CompareRequest) -> Result<String, CoreError> {
    let n = req.setups.len();
    if !(MIN_SETUPS..=MAX_SETUPS).contains(&n) {
        return Err(CoreError::Config(format!(
            "a comparison needs {MIN_SETUPS} to {MAX_SETUPS} setups (--setup A --setup B …); {} given",
            n
        )));
    }
    if req.runs == 0 || req.runs > MAX_RUNS {
        return Err(CoreError::Config(format!(
            "--runs must be between 1 and {MAX_RUNS}"
        )));
    }
    let config = BosunConfig::load(home)?;
    let mut setups: Vec<(String, Setup)> = Vec::with_capacity(n);
    for text in &req.setups {
        let (mut name, setup) = parse_setup(text, &config)?;
        // The same setup twice is two columns: told apart by a number.
        let same = setups
            .iter()
            .filter(|(n, _)| n == &name || n.starts_with(&format!("{name} (")))
            .count();
        if same > 0 {
            name = format!("{name} ({})", same + 1);
        }
        setups.push((name, setup));
    }
    let root = bosun_workspace::resolve_repo(&req.repo)?;
    let base_commit = bosun_workspace::resolve_base(&root, req.base.as_deref())?;
    // The branch a chosen run merges into by default (each run starts from the commit).
    let base_ref = bosun_workspace::base_branch(&root, req.base.as_deref());
    let mut items = Vec::with_capacity(n * req.runs as usize);
    for k in 1..=req.runs {
        for (name, s) in &setups {
            let mut task = BatchTask {
                repo: root.display().to_string(),
                prompt: req.prompt.clone(),
                base: Some(base_commit.clone()),
                provider: s.provider.clone(),
                model: s.model.clone(),
                mode: s.mode.clone(),
                max_steps: s.max_steps,
                max_cost_usd: s.max_cost_usd,
                checks: s.checks.clone(),
                max_nudges: s.max_nudges,
                context: s.context.clone(),
            };
            batch::check(&mut task, &config)
                .map_err(|e| CoreError::Config(format!("--setup {name}: {e}")))?;
            items.push((Some(format!("{name}#{k}")), task));
        }
    }
    let spec = serde_json::json!({
        "repo": root.display().to_string(),
        "prompt": req.prompt,
        "base": req.base,
        "base_commit": base_commit,
        "base_ref": base_ref,
        "runs": req.runs,
        "setups": setups.iter().map(|(name, s)| serde_json::json!({"name": name, "setup": s})).collect::<Vec<_>>(),
    });
    let concurrency = req
        .concurrency
        .unwrap_or(n.min(4) as u32)
        .clamp(1, batch::MAX_CONCURRENCY);
    batch::create(store, "compare", &req.prompt, concurrency, &spec, &items)
}

/// One run's figures, from its journal.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct RunFigures {
    pub status: Option<TaskStatus>,
    /// `passed`, `failed`, or none when no checks ran (the task's last round).
    pub checks: Option<String>,
    /// Required checks of the last round that passed, and how many ran.
    pub checks_passed: u32,
    pub checks_run: u32,
    /// Completed, its required checks passed in round 1 (or it had none), with no nudge and no
    /// approval.
    pub first_pass: bool,
    /// Model requests answered.
    pub steps: u32,
    pub tool_calls: u32,
    /// Tool calls that ended in an error, a denial or a timeout.
    pub tool_call_errors: u32,
    pub nudges: u32,
    pub approvals: u32,
    /// Approvals asked, follow-up messages, and a stop.
    pub interventions: u32,
    /// Every class: input, output, cached, cache writes, reasoning.
    #[ts(type = "number")]
    pub tokens: u64,
    pub seconds: f64,
    pub cost_usd: f64,
    /// False when a response's model had no price (`cost_usd` is then a lower bound).
    pub priced: bool,
    pub files_changed: u32,
    pub insertions: u32,
    pub deletions: u32,
}

/// Reads a run's figures from its journal (and its diff's size from its checkpoints).
pub fn figures(store: &Store, home: &Path, task: &TaskRow) -> Result<RunFigures, CoreError> {
    let events = store.events(&task.id, 0, u32::MAX as usize)?;
    let mut f = RunFigures {
        status: Some(task.status).filter(|s| *s != TaskStatus::Running),
        checks: task.checks.clone(),
        tokens: task.input_tokens
            + task.output_tokens
            + task.cached_input_tokens
            + task.cache_write_tokens
            + task.cache_write_1h_tokens
            + task.reasoning_tokens,
        cost_usd: task.cost_usd,
        priced: task.priced,
        ..RunFigures::default()
    };
    let mut rounds: BTreeMap<String, u32> = BTreeMap::new();
    // Per round: (required run, required passed).
    let mut by_round: BTreeMap<u32, (u32, u32)> = BTreeMap::new();
    let mut user_messages = 0u32;
    for e in &events {
        match &e.msg {
            EventMsg::Usage(_) => f.steps += 1,
            EventMsg::ToolCallEnd(t) => {
                f.tool_calls += 1;
                if t.status != ToolCallStatus::Success {
                    f.tool_call_errors += 1;
                }
            }
            EventMsg::Nudge(_) => f.nudges += 1,
            EventMsg::ApprovalRequested(_) => f.approvals += 1,
            EventMsg::UserMessage(_) => user_messages += 1,
            EventMsg::CheckStarted(c) => {
                rounds.insert(c.check_id.clone(), c.round);
            }
            EventMsg::CheckFinished(c) if c.required && !c.only_before_task => {
                let round = rounds.get(&c.check_id).copied().unwrap_or(1);
                if c.status == bosun_protocol::CheckStatus::Error {
                    continue;
                }
                let r = by_round.entry(round).or_default();
                r.0 += 1;
                r.1 += u32::from(c.status == bosun_protocol::CheckStatus::Passed);
            }
            _ => {}
        }
    }
    if let Some((_, (run, passed))) = by_round.iter().next_back() {
        (f.checks_run, f.checks_passed) = (*run, *passed);
    }
    let first_round_ok = by_round.get(&1).is_none_or(|(run, passed)| run == passed);
    f.first_pass =
        task.status == TaskStatus::Completed && first_round_ok && f.nudges == 0 && f.approvals == 0;
    f.interventions = f.approvals
        + user_messages.saturating_sub(1)
        + u32::from(task.status == TaskStatus::Interrupted);
    f.seconds = seconds_between(
        &task.created_at,
        task.finished_at.as_deref().unwrap_or(&task.updated_at),
    );
    if let Ok(stat) = diff(home, task, true) {
        (f.files_changed, f.insertions, f.deletions) = parse_stat(&stat);
    }
    Ok(f)
}

fn seconds_between(from: &str, to: &str) -> f64 {
    use time::format_description::well_known::Rfc3339;
    match (
        time::OffsetDateTime::parse(from, &Rfc3339),
        time::OffsetDateTime::parse(to, &Rfc3339),
    ) {
        (Ok(a), Ok(b)) => (b - a).as_seconds_f64().max(0.0),
        _ => 0.0,
    }
}

/// `N files changed, I insertions(+), D deletions(-)` from a diff stat's last line.
fn parse_stat(stat: &str) -> (u32, u32, u32) {
    let Some(last) = stat.lines().rev().find(|l| l.contains("changed")) else {
        return (0, 0, 0);
    };
    let mut out = (0, 0, 0);
    for part in last.split(',') {
        let part = part.trim();
        let n = part
            .split_whitespace()
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        if part.contains("changed") {
            out.0 = n;
        } else if part.contains("insertion") {
            out.1 = n;
        } else if part.contains("deletion") {
            out.2 = n;
        }
    }
    out
}

/// A run's changes, base to its latest checkpoint: unified diff text, or with `stat` a diff
/// stat.
pub fn diff(home: &Path, task: &TaskRow, stat: bool) -> Result<String, CoreError> {
    let wt = bosun_workspace::TaskWorktree::open(
        home,
        Path::new(&task.repo),
        task.id.as_str(),
        Path::new(&task.worktree),
        &task.base_commit,
    )?;
    Ok(wt.diff(
        bosun_workspace::DiffPoint::Base,
        bosun_workspace::DiffPoint::Latest,
        stat,
    )?)
}

/// One run of a comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct CompareRun {
    pub n: u32,
    /// `SETUP#K`.
    pub label: String,
    pub setup: String,
    pub run: u32,
    pub state: BatchItemState,
    pub task_id: Option<TaskId>,
    pub error: Option<String>,
    pub review_state: Option<String>,
    pub figures: Option<RunFigures>,
    /// Unified diff, base to the run's latest checkpoint (when asked for).
    pub diff: Option<String>,
}

/// A setup's runs, summed up.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct SetupSummary {
    pub name: String,
    /// The setup as resolved, JSON.
    pub setup: String,
    pub runs: u32,
    pub finished: u32,
    pub completed: u32,
    /// Runs whose last round of checks passed.
    pub checks_passed: u32,
    pub first_passes: u32,
    pub tool_call_errors: u32,
    pub interventions: u32,
    pub mean_steps: Option<f64>,
    pub mean_tokens: Option<f64>,
    pub mean_seconds: Option<f64>,
    /// The fastest and slowest finished run: the variance of several runs.
    pub min_seconds: Option<f64>,
    pub max_seconds: Option<f64>,
    pub total_cost_usd: f64,
    /// The setup's whole cost over its completed runs: what a completed task costs.
    pub cost_per_completed_usd: Option<f64>,
}

/// A comparison: its batch, what was asked, each setup summed up and each run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct Comparison {
    pub batch: BatchRow,
    pub repo: String,
    pub prompt: String,
    pub base_commit: String,
    /// The branch the base was on, where a chosen run merges by default.
    pub base_ref: Option<String>,
    pub setups: Vec<SetupSummary>,
    pub runs: Vec<CompareRun>,
}

/// The comparison `id` names (a unique prefix; the latest when None), read from the journal.
pub fn comparison(
    store: &Store,
    home: &Path,
    id: Option<&str>,
    with_diffs: bool,
) -> Result<Comparison, CoreError> {
    let row = batch::find(store, id, "compare")?;
    let spec: serde_json::Value = serde_json::from_str(&row.spec).unwrap_or_default();
    let text = |k: &str| {
        spec.get(k)
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_string()
    };
    let mut setups: Vec<SetupSummary> = spec
        .get("setups")
        .and_then(|s| s.as_array())
        .map(|a| {
            a.iter()
                .map(|s| SetupSummary {
                    name: s
                        .get("name")
                        .and_then(|n| n.as_str())
                        .unwrap_or_default()
                        .to_string(),
                    setup: s.get("setup").map(|v| v.to_string()).unwrap_or_default(),
                    ..SetupSummary::default()
                })
                .collect()
        })
        .unwrap_or_default();
    let mut runs = Vec::new();
    for item in store.batch_items(&row.id)? {
        let label = item.label.clone().unwrap_or_else(|| format!("#{}", item.n));
        let (setup, run) = match label.rsplit_once('#') {
            Some((s, k)) => (s.to_string(), k.parse().unwrap_or(1)),
            None => (label.clone(), 1),
        };
        let figures = match &item.task {
            Some(t) => Some(figures(store, home, t)?),
            None => None,
        };
        let diff = match (&item.task, with_diffs) {
            (Some(t), true) => diff(home, t, false).ok(),
            _ => None,
        };
        runs.push(CompareRun {
            n: item.n,
            label,
            setup,
            run,
            state: item.state,
            task_id: item.task_id.clone(),
            error: item.error.clone(),
            review_state: item.task.as_ref().map(|t| t.review_state.clone()),
            figures,
            diff,
        });
    }
    for s in &mut setups {
        let mine: Vec<&CompareRun> = runs.iter().filter(|r| r.setup == s.name).collect();
        s.runs = mine.len() as u32;
        let done: Vec<&RunFigures> = mine
            .iter()
            .filter_map(|r| r.figures.as_ref())
            .filter(|f| f.status.is_some())
            .collect();
        s.finished = done.len() as u32;
        s.completed = done
            .iter()
            .filter(|f| f.status == Some(TaskStatus::Completed))
            .count() as u32;
        s.checks_passed = done
            .iter()
            .filter(|f| f.checks.as_deref() == Some("passed"))
            .count() as u32;
        s.first_passes = done.iter().filter(|f| f.first_pass).count() as u32;
        s.tool_call_errors = done.iter().map(|f| f.tool_call_errors).sum();
        s.interventions = done.iter().map(|f| f.interventions).sum();
        s.total_cost_usd = mine
            .iter()
            .filter_map(|r| r.figures.as_ref())
            .map(|f| f.cost_usd)
            .sum();
        let mean = |v: Vec<f64>| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
        s.mean_steps = mean(done.iter().map(|f| f64::from(f.steps)).collect());
        s.mean_tokens = mean(done.iter().map(|f| f.tokens as f64).collect());
        s.mean_seconds = mean(done.iter().map(|f| f.seconds).collect());
        s.min_seconds = done.iter().map(|f| f.seconds).reduce(f64::min);
        s.max_seconds = done.iter().map(|f| f.seconds).reduce(f64::max);
        s.cost_per_completed_usd =
            (s.completed > 0).then(|| s.total_cost_usd / f64::from(s.completed));
    }
    Ok(Comparison {
        repo: text("repo"),
        prompt: text("prompt"),
        base_commit: text("base_commit"),
        base_ref: spec
            .get("base_ref")
            .and_then(|v| v.as_str())
            .map(str::to_string),
        batch: row,
        setups,
        runs,
    })
}

/// The run a user names: its label (`A#2`, case-insensitive; `A` when the setup ran once) or
/// its task's id (a unique prefix).
pub fn pick<'a>(c: &'a Comparison, which: &str) -> Result<&'a CompareRun, CoreError> {
    let w = which.trim();
    let by_label: Vec<&CompareRun> = c
        .runs
        .iter()
        .filter(|r| {
            r.label.eq_ignore_ascii_case(w)
                || (r.setup.eq_ignore_ascii_case(w)
                    && c.runs.iter().filter(|o| o.setup == r.setup).count() == 1)
        })
        .collect();
    let found: Vec<&CompareRun> = if by_label.is_empty() && !w.is_empty() {
        c.runs
            .iter()
            .filter(|r| {
                r.task_id
                    .as_ref()
                    .is_some_and(|t| t.as_str().starts_with(&w.to_lowercase()))
            })
            .collect()
    } else {
        by_label
    };
    match found.as_slice() {
        [one] => Ok(one),
        [] => Err(CoreError::Config(format!(
            "no run of comparison {} is {w:?}: its runs are {}",
            c.batch.id,
            c.runs
                .iter()
                .map(|r| r.label.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
        many => Err(CoreError::Config(format!(
            "{w:?} names {} runs ({}); name one by its label",
            many.len(),
            many.iter()
                .map(|r| r.label.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn an_inline_setup_parses_its_keys_and_names_a_wrong_one() {
        let config = BosunConfig::default();
        let (name, s) = parse_setup(
            "provider=local, mode=auto-edit,max_steps=5,targets=0.5,check=make test",
            &config,
        )
        .unwrap();
        assert_eq!(
            name,
            "provider=local, mode=auto-edit,max_steps=5,targets=0.5,check=make test"
        );
        assert_eq!(s.provider.as_deref(), Some("local"));
        assert_eq!(s.mode.as_deref(), Some("auto-edit"));
        assert_eq!(s.max_steps, Some(5));
        assert_eq!(s.checks, Some(vec!["make test".to_string()]));
        assert_eq!(s.context.unwrap().shares.unwrap().targets, Some(0.5));
        let err = parse_setup("provder=local", &config)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("unknown key \"provder\"") && err.contains("provider"),
            "{err}"
        );
        let err = parse_setup("max_steps=many", &config)
            .unwrap_err()
            .to_string();
        assert!(err.contains("whole number"), "{err}");
        let err = parse_setup("fast", &config).unwrap_err().to_string();
        assert!(err.contains("no setup named \"fast\""), "{err}");
    }

    #[test]
    fn a_named_setup_comes_from_config_toml() {
        let config: BosunConfig = toml::from_str(
            "[setups.fast]\nprovider = \"local\"\nmode = \"full-auto\"\n[setups.fast.context.shares]\ntargets = 0.6\n",
        )
        .unwrap();
        let (name, s) = parse_setup("fast", &config).unwrap();
        assert_eq!(name, "fast");
        assert_eq!(s.mode.as_deref(), Some("full-auto"));
        assert_eq!(s.context.unwrap().shares.unwrap().targets, Some(0.6));
        let err = parse_setup("slow", &config).unwrap_err().to_string();
        assert!(err.contains("config.toml has fast"), "{err}");
    }

    #[test]
    fn a_diff_stat_reads_as_files_insertions_and_deletions() {
        assert_eq!(
            parse_stat(" a | 2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)\n"),
            (1, 1, 1)
        );
        assert_eq!(
            parse_stat(" 3 files changed, 10 insertions(+)\n"),
            (3, 10, 0)
        );
        assert_eq!(parse_stat(""), (0, 0, 0));
    }
}
