//! `bosun compare --repo R --prompt TEXT --setup A --setup B [--runs N]`, `bosun compare status
//! [ID]` and `bosun compare merge [ID] RUN`: one task under several setups, side by side (see
//! `bosun_core::orchestrate::compare`).

use super::batch::QueueFlags;
use bosun_core::orchestrate::compare::{self, CompareRequest, Comparison};
use bosun_core::review::Verdict;
use bosun_protocol::TaskStatus;
use clap::{Args, Subcommand};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct CompareArgs {
    #[command(subcommand)]
    command: Option<CompareCommand>,
    /// The git repository (any path inside it)
    #[arg(long, default_value = ".")]
    repo: PathBuf,
    /// What the agent should do, under every setup
    #[arg(long)]
    prompt: Option<String>,
    /// Base branch, tag or commit (default: HEAD), the same for every run
    #[arg(long)]
    base: Option<String>,
    /// A setup: the name of a [setups.NAME] of config.toml, or inline key=value pairs
    /// (provider, model, mode, max_steps, max_cost_usd, max_nudges, check, no_checks,
    /// mask_tool_outputs, targets, tests, siblings, symbols, recent); 2 to 4 of them
    #[arg(long = "setup", value_name = "NAME|K=V,…")]
    setups: Vec<String>,
    /// Runs of each setup (default 1; several show a setup's variance)
    #[arg(long, default_value_t = 1)]
    runs: u32,
    /// Print the diffs of the runs after the table (JSON always has them)
    #[arg(long)]
    diffs: bool,
    #[command(flatten)]
    run: QueueFlags,
}

#[derive(Subcommand)]
enum CompareCommand {
    /// A comparison's figures (default: the latest)
    Status {
        /// Comparison id or a unique prefix of it
        id: Option<String>,
        #[arg(long)]
        json: bool,
        /// Print the runs' diffs after the table
        #[arg(long)]
        diffs: bool,
    },
    /// Merge the run you prefer: every hunk of its task is accepted and merged into a branch
    /// (default: the one it started from); the other runs are left as they are
    Merge {
        /// [ID] RUN: the comparison (default: the latest) and the run, by its label (`A#1`;
        /// the setup's name when it ran once) or its task's id
        #[arg(num_args = 1..=2, value_name = "[ID] RUN", required = true)]
        which: Vec<String>,
        /// Target branch; created from the base when it does not exist
        #[arg(long)]
        into: Option<String>,
        /// The commit's message (default: from the prompt and the task's summary)
        #[arg(long)]
        message: Option<String>,
    },
}

pub fn compare(args: CompareArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        Some(CompareCommand::Status { id, json, diffs }) => status(id.as_deref(), json, diffs),
        Some(CompareCommand::Merge {
            which,
            into,
            message,
        }) => merge(&which, into, message),
        None => start(args),
    }
}

fn start(args: CompareArgs) -> anyhow::Result<ExitCode> {
    let Some(prompt) = args.prompt.clone().filter(|p| !p.trim().is_empty()) else {
        anyhow::bail!(
            "--prompt is required: `bosun compare --repo R --prompt TEXT --setup A --setup B`"
        );
    };
    let home = crate::home();
    let store = Arc::new(super::open_store()?);
    let id = compare::create(
        &store,
        &home,
        &CompareRequest {
            repo: args.repo.clone(),
            prompt,
            base: args.base.clone(),
            setups: args.setups.clone(),
            runs: args.runs,
            concurrency: args.run.concurrency,
        },
    )?;
    let c = compare::comparison(&store, &home, Some(&id), false)?;
    eprintln!(
        "bosun: comparison {id}: {} setups × {} run{} from {}",
        c.setups.len(),
        args.runs,
        if args.runs == 1 { "" } else { "s" },
        &c.base_commit[..c.base_commit.len().min(10)]
    );
    let report = super::batch::run_queue(&store, &id, None, &args.run)?;
    let c = compare::comparison(&store, &home, Some(&id), args.run.json)?;
    show(&c, args.run.json, args.diffs)?;
    if report.stopped {
        eprintln!("bosun: comparison {id} stopped; `bosun batch resume {id}` continues it");
        return Ok(ExitCode::from(130));
    }
    // The comparison is made; it succeeded when at least one run completed.
    let any = c
        .runs
        .iter()
        .any(|r| r.figures.as_ref().and_then(|f| f.status) == Some(TaskStatus::Completed));
    Ok(if any {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(crate::exit::FAILED)
    })
}

fn status(id: Option<&str>, json: bool, diffs: bool) -> anyhow::Result<ExitCode> {
    let store = super::open_store()?;
    store.reconcile_interrupted()?;
    let c = compare::comparison(&store, &crate::home(), id, json || diffs)?;
    show(&c, json, diffs)?;
    Ok(ExitCode::SUCCESS)
}

fn merge(
    which: &[String],
    into: Option<String>,
    message: Option<String>,
) -> anyhow::Result<ExitCode> {
    let (id, run) = match which {
        [run] => (None, run.as_str()),
        [id, run] => (Some(id.as_str()), run.as_str()),
        _ => anyhow::bail!("name the run to merge: `bosun compare merge [ID] RUN`"),
    };
    let store = super::open_store()?;
    let c = compare::comparison(&store, &crate::home(), id, false)?;
    let chosen = compare::pick(&c, run)?;
    let Some(task) = chosen.task_id.clone() else {
        return Err(bosun_core::CoreError::Config(format!(
            "run {} has not started yet: nothing to merge",
            chosen.label
        ))
        .into());
    };
    if chosen.figures.as_ref().and_then(|f| f.status).is_none() {
        return Err(bosun_core::CoreError::Config(format!(
            "run {} is still running: merge it when it has finished",
            chosen.label
        ))
        .into());
    }
    println!("merging run {} (task {task})", chosen.label);
    super::review::verdict(Verdict::Accept, task.as_str(), None, true)?;
    // Each run started from the base's commit: it merges into the branch the base was on.
    let into = into.or_else(|| c.base_ref.clone());
    super::review::merge(task.as_str(), into, false, message, None)
}

fn money(x: f64) -> String {
    format!("${x:.4}")
}

fn opt(x: Option<f64>, f: impl Fn(f64) -> String) -> String {
    x.map(f).unwrap_or_else(|| "-".into())
}

/// The comparison as a table (or JSON): each run, then each setup summed up, then the diffs.
fn show(c: &Comparison, json: bool, diffs: bool) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer_pretty(&mut out, c)?;
        writeln!(out)?;
        return Ok(());
    }
    writeln!(
        out,
        "comparison {}  {}  {} of {} runs done  base {}\nprompt: {}",
        c.batch.id,
        match c.batch.status {
            bosun_store::BatchStatus::Running => "running",
            bosun_store::BatchStatus::Interrupted => "interrupted",
            bosun_store::BatchStatus::Finished => "finished",
        },
        c.batch.done,
        c.batch.items,
        &c.base_commit[..c.base_commit.len().min(10)],
        c.prompt
    )?;
    let width = c
        .runs
        .iter()
        .map(|r| r.label.chars().count())
        .max()
        .unwrap_or(3)
        .max(3);
    writeln!(
        out,
        "\n{:<width$}  {:<15} {:>7} {:>5} {:>5} {:>8} {:>6} {:>8} {:>7} {:>9}  {:<16} task",
        "run",
        "status",
        "checks",
        "first",
        "steps",
        "tool err",
        "interv",
        "tokens",
        "time",
        "cost",
        "diff"
    )?;
    for r in &c.runs {
        let f = r.figures.as_ref();
        let status = match (f.and_then(|f| f.status), &r.error) {
            (_, Some(_)) => "not started".to_string(),
            (Some(s), _) => s.as_str().to_string(),
            (None, _) if r.task_id.is_some() => "running".to_string(),
            (None, _) => "queued".to_string(),
        };
        let checks = f
            .filter(|f| f.checks_run > 0)
            .map(|f| format!("{}/{}", f.checks_passed, f.checks_run))
            .unwrap_or_else(|| "-".into());
        writeln!(
            out,
            "{:<width$}  {:<15} {:>7} {:>5} {:>5} {:>8} {:>6} {:>8} {:>7} {:>9}  {:<16} {}",
            r.label,
            status,
            checks,
            f.map(|f| if f.first_pass { "yes" } else { "no" })
                .unwrap_or("-"),
            f.map(|f| f.steps.to_string()).unwrap_or_else(|| "-".into()),
            f.map(|f| f.tool_call_errors.to_string())
                .unwrap_or_else(|| "-".into()),
            f.map(|f| f.interventions.to_string())
                .unwrap_or_else(|| "-".into()),
            f.map(|f| f.tokens.to_string())
                .unwrap_or_else(|| "-".into()),
            f.map(|f| format!("{:.1}s", f.seconds))
                .unwrap_or_else(|| "-".into()),
            f.map(|f| format!("{}{}", money(f.cost_usd), if f.priced { "" } else { "+" }))
                .unwrap_or_else(|| "-".into()),
            f.map(|f| format!(
                "{} files +{} -{}",
                f.files_changed, f.insertions, f.deletions
            ))
            .unwrap_or_else(|| "-".into()),
            r.task_id
                .as_ref()
                .map(|t| t.to_string())
                .unwrap_or_else(|| "-".into()),
        )?;
        if let Some(e) = &r.error {
            writeln!(out, "{:<width$}  could not start: {e}", "")?;
        }
    }
    let sw = c
        .setups
        .iter()
        .map(|s| s.name.chars().count())
        .max()
        .unwrap_or(5)
        .max(5);
    writeln!(
        out,
        "\n{:<sw$}  {:>9} {:>9} {:>6} {:>6} {:>8} {:>6} {:>9} {:>16} {:>9} {:>13}",
        "setup",
        "completed",
        "checks ok",
        "first",
        "steps",
        "tool err",
        "interv",
        "tokens",
        "time (min-max)",
        "cost",
        "per completed"
    )?;
    for s in &c.setups {
        writeln!(
            out,
            "{:<sw$}  {:>9} {:>9} {:>6} {:>6} {:>8} {:>6} {:>9} {:>16} {:>9} {:>13}",
            s.name,
            format!("{}/{}", s.completed, s.runs),
            format!("{}/{}", s.checks_passed, s.runs),
            format!("{}/{}", s.first_passes, s.runs),
            opt(s.mean_steps, |x| format!("{x:.1}")),
            s.tool_call_errors,
            s.interventions,
            opt(s.mean_tokens, |x| format!("{x:.0}")),
            match (s.mean_seconds, s.min_seconds, s.max_seconds) {
                (Some(m), Some(a), Some(b)) if s.finished > 1 => format!("{m:.1}s ({a:.1}-{b:.1})"),
                (Some(m), _, _) => format!("{m:.1}s"),
                _ => "-".into(),
            },
            money(s.total_cost_usd),
            opt(s.cost_per_completed_usd, money),
        )?;
    }
    if diffs {
        for r in &c.runs {
            writeln!(out, "\n=== {} ===", r.label)?;
            match &r.diff {
                Some(d) if !d.is_empty() => out.write_all(d.as_bytes())?,
                Some(_) => writeln!(out, "(no changes)")?,
                None => writeln!(out, "(no diff: the run has no worktree)")?,
            }
        }
    }
    if c.batch.status == bosun_store::BatchStatus::Finished
        && let Some(r) = c.runs.iter().find(|r| r.task_id.is_some())
    {
        writeln!(
            out,
            "\nmerge the one you prefer: bosun compare merge {} {}",
            &c.batch.id, r.label
        )?;
    }
    Ok(())
}
