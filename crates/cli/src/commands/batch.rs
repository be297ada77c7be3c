//! `bosun batch FILE`, `bosun batch --prompt TEXT --repo A --repo B`, `bosun batch resume [ID]`
//! and `bosun batch status [ID]`: a persistent queue of tasks in the journal (see
//! `bosun_core::orchestrate::batch`).

use super::approve::Answerer;
use anyhow::Context;
use bosun_core::orchestrate::batch::{self, BatchTask, Follower};
use bosun_protocol::{EventMsg, Op, TaskStatus};
use bosun_store::{BatchItemRow, BatchItemState, BatchRow, ClaimedItem, Store};
use clap::{Args, Subcommand};
use futures::future::BoxFuture;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

#[derive(Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct BatchArgs {
    #[command(subcommand)]
    command: Option<BatchCommand>,
    /// A batch file: TOML `[[task]]` tables or JSON lines, each with repo, prompt and optionally
    /// base, provider, model, mode, max_steps, max_cost_usd, checks (a relative repo is relative
    /// to the file's folder)
    #[arg(conflicts_with = "prompt")]
    file: Option<PathBuf>,
    /// One prompt over several repositories (with --repo, repeated)
    #[arg(long, requires = "repos")]
    prompt: Option<String>,
    /// A repository for --prompt (repeatable)
    #[arg(long = "repo", value_name = "PATH", requires = "prompt")]
    repos: Vec<PathBuf>,
    /// With --prompt: a provider of config.toml for every task
    #[arg(long, requires = "prompt")]
    provider: Option<String>,
    /// With --prompt: the provider's model, overridden
    #[arg(long, requires = "prompt")]
    model: Option<String>,
    /// With --prompt: read-only, ask, auto-edit or full-auto
    #[arg(long, requires = "prompt")]
    mode: Option<String>,
    /// With --prompt: stop each task after this many model requests
    #[arg(long, requires = "prompt")]
    max_steps: Option<u32>,
    /// With --prompt: stop each task once it cost more than this many US dollars
    #[arg(long, requires = "prompt")]
    max_cost_usd: Option<f64>,
    /// With --prompt: a required check for every task instead of each repository's (repeatable)
    #[arg(
        long = "check",
        value_name = "CMD",
        requires = "prompt",
        conflicts_with = "no_checks"
    )]
    checks: Vec<String>,
    /// With --prompt: run no checks
    #[arg(long, requires = "prompt")]
    no_checks: bool,
    /// With --prompt: the base branch, tag or commit of every task
    #[arg(long, requires = "prompt")]
    base: Option<String>,
    #[command(flatten)]
    run: QueueFlags,
}

/// How the queue runs: shared by a new batch and a resumed one.
#[derive(Args, Clone)]
pub struct QueueFlags {
    /// Tasks running at once (default 2, at most 16)
    #[arg(long, value_name = "N")]
    pub(crate) concurrency: Option<u32>,
    /// Approve every tool call the policy asks about (never one it denies, never spending)
    #[arg(long)]
    pub(crate) yes: bool,
    /// At the end print the batch's status as JSON (progress goes to stderr)
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Subcommand)]
enum BatchCommand {
    /// Continue a batch cut off by a crash, a quit or Ctrl-C (default: the latest interrupted
    /// one): tasks cut off midway resume from their last checkpoint, queued ones start
    Resume {
        /// Batch id or a unique prefix of it
        id: Option<String>,
        #[command(flatten)]
        run: QueueFlags,
    },
    /// Each task of a batch (default: the latest): status, checks, cost, time and review state
    Status {
        /// Batch id or a unique prefix of it
        id: Option<String>,
        #[arg(long)]
        json: bool,
        /// List every batch instead
        #[arg(long, conflicts_with = "id")]
        all: bool,
    },
}

pub fn batch(args: BatchArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        Some(BatchCommand::Status { id, json, all }) => status(id.as_deref(), json, all),
        Some(BatchCommand::Resume { id, run }) => resume(id.as_deref(), &run),
        None => start(args),
    }
}

fn check_concurrency(c: Option<u32>) -> anyhow::Result<()> {
    if let Some(c) = c
        && !(1..=batch::MAX_CONCURRENCY).contains(&c)
    {
        return Err(bosun_core::CoreError::Config(format!(
            "--concurrency must be between 1 and {}",
            batch::MAX_CONCURRENCY
        ))
        .into());
    }
    Ok(())
}

fn start(args: BatchArgs) -> anyhow::Result<ExitCode> {
    check_concurrency(args.run.concurrency)?;
    let home = crate::home();
    let (name, tasks) = match (&args.file, &args.prompt) {
        (Some(file), None) => (file.display().to_string(), batch::parse_file(file, &home)?),
        (None, Some(prompt)) => {
            if let Some(c) = args.max_cost_usd
                && !(c.is_finite() && c >= 0.0)
            {
                anyhow::bail!("--max-cost-usd must be a non-negative number");
            }
            let common = BatchTask {
                prompt: prompt.clone(),
                base: args.base.clone(),
                provider: args.provider.clone(),
                model: args.model.clone(),
                mode: args.mode.clone(),
                max_steps: args.max_steps,
                max_cost_usd: args.max_cost_usd,
                checks: if args.no_checks {
                    Some(Vec::new())
                } else if args.checks.is_empty() {
                    None
                } else {
                    Some(args.checks.clone())
                },
                ..BatchTask::default()
            };
            (
                prompt.clone(),
                batch::prompt_tasks(&common, &args.repos, &home)?,
            )
        }
        _ => anyhow::bail!(
            "say what to run: `bosun batch FILE` (TOML [[task]] tables or JSON lines), or `bosun batch --prompt TEXT --repo A --repo B`; `bosun batch status` and `bosun batch resume` show and continue a batch"
        ),
    };
    let store = Arc::new(super::open_store()?);
    let concurrency = args.run.concurrency.unwrap_or(batch::DEFAULT_CONCURRENCY);
    let items: Vec<(Option<String>, BatchTask)> = tasks.into_iter().map(|t| (None, t)).collect();
    let id = batch::create(
        &store,
        "batch",
        &name,
        concurrency,
        &serde_json::json!({ "source": name }),
        &items,
    )?;
    eprintln!(
        "bosun: batch {id}: {} task{}, {concurrency} at a time",
        items.len(),
        if items.len() == 1 { "" } else { "s" }
    );
    drive(&store, &id, None, &args.run)
}

fn resume(id: Option<&str>, run: &QueueFlags) -> anyhow::Result<ExitCode> {
    check_concurrency(run.concurrency)?;
    let store = Arc::new(super::open_store()?);
    let row = match id {
        Some(id) => store.find_batch(id, None)?,
        None => store
            .batches(None)?
            .into_iter()
            .find(|b| b.status == bosun_store::BatchStatus::Interrupted)
            .ok_or_else(|| {
                bosun_core::CoreError::Config(
                    "no batch is interrupted: each one finished or is running; `bosun batch status --all` lists them".into(),
                )
            })?,
    };
    eprintln!(
        "bosun: resuming batch {}: {} done, {} cut off, {} queued",
        row.id, row.done, row.started, row.queued
    );
    drive(&store, &row.id, run.concurrency, run)
}

/// Runs the batch to its end in this process; Ctrl-C (SIGTERM, SIGHUP) stops it resumably.
pub(crate) fn drive(
    store: &Arc<Store>,
    id: &str,
    concurrency: Option<u32>,
    run: &QueueFlags,
) -> anyhow::Result<ExitCode> {
    let report = run_queue(store, id, concurrency, run)?;
    let row = store.find_batch(id, None)?;
    let items = store.batch_items(id)?;
    if run.json {
        let mut out = std::io::stdout().lock();
        serde_json::to_writer_pretty(
            &mut out,
            &serde_json::json!({ "batch": row, "items": items }),
        )?;
        writeln!(out)?;
    } else {
        print_status(&row, &items)?;
    }
    if report.stopped {
        eprintln!("bosun: batch {id} stopped; `bosun batch resume {id}` continues it");
        return Ok(ExitCode::from(130));
    }
    Ok(if report.all_completed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(crate::exit::FAILED)
    })
}

/// Runs the queue with this terminal's follower until it ends or is stopped.
pub(crate) fn run_queue(
    store: &Arc<Store>,
    id: &str,
    concurrency: Option<u32>,
    run: &QueueFlags,
) -> anyhow::Result<batch::BatchReport> {
    let home = crate::home();
    let total = store.find_batch(id, None)?.items;
    let answerer = Answerer::choose(run.yes, false);
    let stop = CancellationToken::new();
    let store = Arc::clone(store);
    let id = id.to_string();
    super::run::runtime()?.block_on(async move {
        let telemetry = Arc::new(Mutex::new(crate::telemetry::start()));
        let follower = Arc::new(Cli {
            answerer,
            prompting: Arc::new(Mutex::new(())),
            total,
            telemetry: Arc::clone(&telemetry),
        });
        let mut signals = super::run::StopSignals::new()?;
        let queue = batch::run(home, store, &id, concurrency, follower, stop.clone());
        tokio::pin!(queue);
        let mut interrupts = 0;
        loop {
            tokio::select! {
                r = &mut queue => {
                    let exporter = telemetry.lock().unwrap_or_else(|p| p.into_inner()).take();
                    crate::telemetry::finish(exporter).await;
                    return r.context("while running the batch");
                }
                signal = signals.next() => {
                    interrupts += 1;
                    if interrupts > 1 {
                        eprintln!("bosun: interrupted twice ({signal}), exiting; `bosun batch resume {id}` continues the batch");
                        std::process::exit(130);
                    }
                    eprintln!("bosun: stopping the batch ({signal}; again to exit at once): its running tasks stop, the rest stay queued");
                    stop.cancel();
                }
            }
        }
    })
}

/// The terminal's follower: a line per task as it starts and ends; approvals answered one at a
/// time (the task named), or by --yes.
struct Cli {
    answerer: Answerer,
    prompting: Arc<Mutex<()>>,
    total: u32,
    /// The OpenTelemetry exporter every task's events go through, when export is on.
    telemetry: Arc<Mutex<Option<bosun_telemetry::Telemetry>>>,
}

fn short(text: &str, max: usize) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= max {
        one_line
    } else {
        let cut: String = one_line.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}

fn repo_name(repo: &str) -> String {
    std::path::Path::new(repo)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| repo.to_string())
}

impl Follower for Cli {
    fn starting(&self, item: &ClaimedItem, task: &BatchTask, resumed: bool) {
        eprintln!(
            "[{}/{}] {} {}  {}  (task {})",
            item.n,
            self.total,
            if resumed { "resuming" } else { "started " },
            repo_name(&task.repo),
            short(item.label.as_deref().unwrap_or(&task.prompt), 60),
            item.task_id
        );
    }

    fn failed_to_start(&self, item: &ClaimedItem, task: &BatchTask, error: &bosun_core::CoreError) {
        eprintln!(
            "[{}/{}] could not start  {}: {error}",
            item.n,
            self.total,
            repo_name(&task.repo)
        );
    }

    fn follow(
        &self,
        item: ClaimedItem,
        mut handle: bosun_core::TaskHandle,
    ) -> BoxFuture<'static, TaskStatus> {
        let answerer = self.answerer;
        let prompting = Arc::clone(&self.prompting);
        let total = self.total;
        let telemetry = Arc::clone(&self.telemetry);
        Box::pin(async move {
            let started = std::time::Instant::now();
            let mut status = None;
            let mut cost = 0.0;
            let mut checks: Option<&'static str> = None;
            let mut round = 0;
            while let Some(ev) = handle.events.recv().await {
                if let Some(t) = telemetry.lock().unwrap_or_else(|p| p.into_inner()).as_mut() {
                    t.observe_tree(&ev, &crate::telemetry::journaled);
                }
                match ev.msg {
                    EventMsg::TaskFinished(f) => status = Some(f.status),
                    EventMsg::Usage(u) => cost = u.total_cost_usd,
                    // The last round's result.
                    EventMsg::CheckStarted(c) if c.round != round => {
                        round = c.round;
                        checks = None;
                    }
                    EventMsg::CheckFinished(c) if c.required && !c.only_before_task => {
                        if c.status.is_failure() {
                            checks = Some("checks failed");
                        } else if checks.is_none() {
                            checks = Some("checks passed");
                        }
                    }
                    EventMsg::ApprovalRequested(req) => {
                        let prompting = Arc::clone(&prompting);
                        let n = item.n;
                        let answer = tokio::task::spawn_blocking(move || {
                            // One question on the terminal at a time, naming its task.
                            let _turn = prompting.lock().unwrap_or_else(|p| p.into_inner());
                            if matches!(answerer, Answerer::Terminal) {
                                eprintln!("[{n}/{total}] asks:");
                            }
                            answerer.answer(&req)
                        })
                        .await;
                        if let Ok(answer) = answer {
                            let _ = handle.ops.send(Op::Approval(answer));
                        }
                    }
                    _ => {}
                }
            }
            let status = match status {
                Some(s) => s,
                None => match handle.join.await {
                    Ok(Ok(o)) => o.status,
                    _ => TaskStatus::Failed,
                },
            };
            eprintln!(
                "[{}/{}] {}  {}${:.4}  {:.1}s  (task {})",
                item.n,
                total,
                status.as_str(),
                checks.map(|c| format!("{c}  ")).unwrap_or_default(),
                cost,
                started.elapsed().as_secs_f64(),
                item.task_id
            );
            status
        })
    }
}

fn status(id: Option<&str>, json: bool, all: bool) -> anyhow::Result<ExitCode> {
    let store = super::open_store()?;
    store.reconcile_interrupted()?;
    let mut out = std::io::stdout().lock();
    if all {
        let rows = store.batches(None)?;
        if json {
            serde_json::to_writer_pretty(&mut out, &rows)?;
            writeln!(out)?;
            return Ok(ExitCode::SUCCESS);
        }
        if rows.is_empty() {
            writeln!(
                out,
                "no batches yet; start one with `bosun batch FILE` or `bosun batch --prompt TEXT --repo PATH`"
            )?;
        }
        for b in rows {
            writeln!(
                out,
                "{}  {:<8} {:<11} {}/{} done  {}  {}",
                b.id,
                b.kind,
                b.status_str(),
                b.done,
                b.items,
                b.created_at,
                short(&b.name, 50)
            )?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let row = match id {
        Some(id) => store.find_batch(id, None)?,
        None => store
            .batches(None)?
            .into_iter()
            .next()
            .ok_or(bosun_store::StoreError::NoBatch { id: String::new() })?,
    };
    let items = store.batch_items(&row.id)?;
    drop(out);
    if json {
        let mut out = std::io::stdout().lock();
        serde_json::to_writer_pretty(
            &mut out,
            &serde_json::json!({ "batch": row, "items": items }),
        )?;
        writeln!(out)?;
    } else {
        print_status(&row, &items)?;
    }
    Ok(ExitCode::SUCCESS)
}

trait StatusText {
    fn status_str(&self) -> &'static str;
}

impl StatusText for BatchRow {
    fn status_str(&self) -> &'static str {
        match self.status {
            bosun_store::BatchStatus::Running => "running",
            bosun_store::BatchStatus::Interrupted => "interrupted",
            bosun_store::BatchStatus::Finished => "finished",
        }
    }
}

fn seconds(item: &BatchItemRow) -> Option<f64> {
    let t = item.task.as_ref()?;
    let end = t.finished_at.as_deref()?;
    use time::format_description::well_known::Rfc3339;
    let a = time::OffsetDateTime::parse(&t.created_at, &Rfc3339).ok()?;
    let b = time::OffsetDateTime::parse(end, &Rfc3339).ok()?;
    Some((b - a).as_seconds_f64())
}

/// The batch's table: one row per task.
fn print_status(row: &BatchRow, items: &[BatchItemRow]) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    let completed = items
        .iter()
        .filter(|i| {
            i.task
                .as_ref()
                .is_some_and(|t| t.status == TaskStatus::Completed)
        })
        .count();
    let cost: f64 = items
        .iter()
        .filter_map(|i| i.task.as_ref())
        .map(|t| t.cost_usd)
        .sum();
    writeln!(
        out,
        "batch {}  {}  {} of {} done, {} completed, {} at a time, ${:.4}  ({})",
        row.id,
        row.status_str(),
        row.done,
        row.items,
        completed,
        row.concurrency,
        cost,
        short(&row.name, 60)
    )?;
    writeln!(
        out,
        "{:>3}  {:<16} {:<14} {:>9} {:>8}  {:<10} {:<16} {:<26} prompt",
        "#", "status", "checks", "cost", "time", "review", "repo", "task"
    )?;
    for i in items {
        let task: Option<BatchTask> = serde_json::from_str(&i.spec).ok();
        let (repo, prompt) = task
            .as_ref()
            .map(|t| (repo_name(&t.repo), t.prompt.clone()))
            .unwrap_or_default();
        let status = match (&i.state, &i.task, &i.error) {
            (_, _, Some(_)) => "not started".to_string(),
            (BatchItemState::Queued, _, _) => "queued".to_string(),
            (_, Some(t), _) => t.status.as_str().to_string(),
            (BatchItemState::Started, None, _) => "starting".to_string(),
            (BatchItemState::Done, None, _) => "deleted".to_string(),
        };
        let t = i.task.as_ref();
        writeln!(
            out,
            "{:>3}  {:<16} {:<14} {:>9} {:>8}  {:<10} {:<16} {:<26} {}",
            i.n,
            status,
            t.and_then(|t| t.checks.clone())
                .unwrap_or_else(|| "-".into()),
            t.map(|t| format!("${:.4}", t.cost_usd))
                .unwrap_or_else(|| "-".into()),
            seconds(i)
                .map(|s| format!("{s:.1}s"))
                .unwrap_or_else(|| "-".into()),
            t.map(|t| t.review_state.clone())
                .unwrap_or_else(|| "-".into()),
            short(&repo, 16),
            i.task_id
                .as_ref()
                .map(|t| t.to_string())
                .unwrap_or_else(|| "-".into()),
            short(i.label.as_deref().unwrap_or(&prompt), 50)
        )?;
        if let Some(e) = &i.error {
            writeln!(out, "     could not start: {}", short(e, 200))?;
        }
    }
    Ok(())
}
