//! `bosun eval --suite DIR`: execution quality measured on a suite of small tasks, each run
//! through Bosun (this binary, `bosun run`) and optionally through a peer (Aider) against the
//! same model server, each judged by a hidden check run in a copy of its final tree.

mod aider;
mod bosun;
mod report;
mod suite;
mod supervise;

use anyhow::{Context, bail};
use bosun_core::{BosunConfig, ProviderEntry};
use clap::Args;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Seconds a task may run when neither `--time-limit` nor its `time_limit_secs` says.
const DEFAULT_TIME_LIMIT_SECS: u64 = 300;

#[derive(Args)]
pub struct EvalArgs {
    /// The suite: a directory of tasks, each `<task-id>/task.toml` with repo/, hidden/ and
    /// solution/ beside it (Bosun's own is tests/eval)
    #[arg(long)]
    suite: PathBuf,
    /// A provider from $BOSUN_HOME/config.toml (default: the default provider)
    #[arg(long, conflicts_with_all = ["api", "base_url"])]
    provider: Option<String>,
    /// Wire format: openai-chat, openai-responses or anthropic
    #[arg(long)]
    api: Option<String>,
    /// Server base URL, e.g. http://127.0.0.1:8080/v1
    #[arg(long)]
    base_url: Option<String>,
    /// Model id (overrides the provider's model)
    #[arg(long)]
    model: Option<String>,
    /// Environment variable holding the API key (a local server needs none)
    #[arg(long)]
    api_key_env: Option<String>,
    /// Also run every task through this agent against the same server: aider
    #[arg(long)]
    peer: Option<String>,
    /// One JSON document instead of the table
    #[arg(long)]
    json: bool,
    /// Only the tasks whose id matches (repeatable; `*` and `?` are wildcards)
    #[arg(long = "task", value_name = "GLOB")]
    tasks: Vec<String>,
    /// Seconds each task may run before it is stopped and counted failed (default: the
    /// task's time_limit_secs, else 300)
    #[arg(long, value_name = "SECS")]
    time_limit: Option<u64>,
    /// Runs of each task per runner
    #[arg(long, value_name = "N", default_value_t = 1)]
    tries: u32,
    /// No model: check that every task's hidden check fails on its bare fixture and passes
    /// with its solution/ overlaid
    #[arg(long, conflicts_with_all = ["peer", "provider", "api"])]
    self_test: bool,
}

/// An error of the surroundings (git, a file, a child that would not start): exit 1.
pub(crate) fn infra(message: String) -> anyhow::Error {
    std::io::Error::other(message).into()
}

pub fn eval(args: EvalArgs) -> anyhow::Result<ExitCode> {
    if args.tries == 0 {
        bail!("--tries must be at least 1");
    }
    if args.time_limit == Some(0) {
        bail!("--time-limit must be at least 1 second");
    }
    if let Some(peer) = &args.peer
        && peer != "aider"
    {
        bail!("unknown --peer {peer:?}: the peer Bosun can run is aider");
    }
    let tasks = suite::select(suite::load(&args.suite)?, &args.tasks)?;
    if args.self_test {
        return self_test(&tasks);
    }
    let (name, entry) = provider(&args)?;
    let aider_exe = match &args.peer {
        Some(_) => {
            if entry.api != "openai-chat" {
                bail!(
                    "--peer aider talks to OpenAI-compatible servers: the provider {name} uses the {} wire format",
                    entry.api
                );
            }
            match aider::locate() {
                Ok(p) => Some(p),
                Err(message) => {
                    eprintln!("bosun: {message}");
                    return Ok(ExitCode::from(crate::exit::FAILED));
                }
            }
        }
        None => None,
    };

    let stamp = timestamp();
    let user_home = crate::home();
    let work = user_home.join("eval").join(&stamp);
    let eval_home = work.join("home");
    std::fs::create_dir_all(&eval_home)
        .with_context(|| format!("while creating {}", eval_home.display()))?;
    BosunConfig {
        default_provider: Some(name.clone()),
        providers: [(name.clone(), entry.clone())].into_iter().collect(),
        ..BosunConfig::default()
    }
    .save(&eval_home)?;

    let bosun = bosun::BosunRunner {
        exe: std::env::current_exe().context("while finding the bosun binary")?,
        home: eval_home,
        provider: name,
    };
    let aider_home = work.join("aider-home");
    if aider_exe.is_some() {
        std::fs::create_dir_all(&aider_home)
            .with_context(|| format!("while creating {}", aider_home.display()))?;
        // Aider asks git who the user is at start; it never commits here (--no-auto-commits).
        std::fs::write(
            aider_home.join(".gitconfig"),
            "[user]\n\tname = bosun eval\n\temail = eval@bosun.invalid\n",
        )
        .context("while writing Aider's .gitconfig")?;
    }
    let peer = aider_exe.map(|exe| aider::AiderRunner {
        exe,
        home: aider_home,
        model: entry.model.clone(),
        base_url: entry
            .base_url
            .clone()
            .unwrap_or_else(|| bosun_core::config::OPENAI_BASE_URL.to_string()),
        api_key: entry
            .api_key_env
            .as_deref()
            .and_then(|v| std::env::var(v).ok())
            .unwrap_or_else(|| "sk-local-none".to_string()),
    });
    let commands = report::Commands {
        bosun: bosun.command_line(),
        aider: peer.as_ref().map(|p| p.command_line()),
    };
    eprintln!("eval: bosun: {}", commands.bosun);
    if let Some(aider) = &commands.aider {
        eprintln!("eval: aider: {aider}");
    }
    eprintln!(
        "eval: {} task{} × {} tr{} with {} (work in {})",
        tasks.len(),
        if tasks.len() == 1 { "" } else { "s" },
        args.tries,
        if args.tries == 1 { "y" } else { "ies" },
        entry.model,
        work.display()
    );

    let started = Instant::now();
    let mut rows = Vec::new();
    for task in &tasks {
        let limit = Duration::from_secs(
            args.time_limit
                .or(task.time_limit_secs)
                .unwrap_or(DEFAULT_TIME_LIMIT_SECS),
        );
        for attempt in 1..=args.tries {
            let dir = work.join("runs").join(format!("{}-{attempt}", task.id));
            let repo = dir.join("bosun-repo");
            suite::prepare_repo(task, &repo)?;
            let mut row = bosun.run(task, &repo, &dir, limit)?;
            row.attempt = attempt;
            progress(&row);
            rows.push(row);
            if let Some(p) = &peer {
                let repo = dir.join("aider-repo");
                suite::prepare_repo(task, &repo)?;
                let mut row = p.run(task, &repo, &dir, limit)?;
                row.attempt = attempt;
                progress(&row);
                rows.push(row);
            }
        }
    }
    let wall = started.elapsed().as_secs_f64();
    let report = report::Report {
        suite: args.suite.display().to_string(),
        model: entry.model.clone(),
        tries: args.tries,
        totals: report::totals(&rows, wall),
        tasks: rows,
        commands,
        work_dir: work.display().to_string(),
    };
    let doc = serde_json::to_string_pretty(&report)?;
    let saved = user_home.join("eval").join(format!("{stamp}.json"));
    std::fs::write(&saved, &doc).with_context(|| format!("while writing {}", saved.display()))?;
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(out, "{doc}")?;
    } else {
        report::print_table(&report, &mut out)?;
        writeln!(out, "report: {}", saved.display())?;
    }
    Ok(ExitCode::SUCCESS)
}

fn progress(row: &report::Row) {
    eprintln!(
        "eval: {} #{} {}: {} {} in {:.1}s, {} request{}",
        row.task,
        row.attempt,
        row.runner,
        if row.passed { "passed" } else { "failed" },
        row.status,
        row.time_secs,
        row.requests,
        if row.requests == 1 { "" } else { "s" }
    );
}

/// The one provider the suite runs with, as an entry for the suite run's own config.toml:
/// `--api/--base-url/--model`, or `--provider NAME` (default: the default provider) from the
/// user's config.toml.
fn provider(args: &EvalArgs) -> anyhow::Result<(String, ProviderEntry)> {
    if let Some(api) = &args.api {
        let Some(model) = &args.model else {
            bail!("--api needs --model (and usually --base-url)");
        };
        return Ok((
            "eval".to_string(),
            ProviderEntry {
                api: api.clone(),
                base_url: args.base_url.clone(),
                model: model.clone(),
                api_key_env: args.api_key_env.clone(),
                ..ProviderEntry::default()
            },
        ));
    }
    if args.base_url.is_some() {
        bail!("--base-url needs --api (openai-chat, openai-responses or anthropic)");
    }
    let config = BosunConfig::load(&crate::home())?;
    let (name, mut entry) = config.provider(args.provider.as_deref())?;
    if let Some(m) = &args.model {
        entry.model = m.clone();
    }
    if let Some(k) = &args.api_key_env {
        entry.api_key_env = Some(k.clone());
    }
    Ok((name, entry))
}

/// `bosun eval --self-test`: every task's check fails on the bare fixture and passes with the
/// solution; exit 1 naming the defective tasks otherwise.
fn self_test(tasks: &[suite::Task]) -> anyhow::Result<ExitCode> {
    let work = std::env::temp_dir().join(format!("bosun-eval-self-test-{}", std::process::id()));
    let mut out = std::io::stdout().lock();
    let mut defects = Vec::new();
    for task in tasks {
        let t = suite::self_test(task, &work)?;
        let verdict = match (&t.bare.passed, t.solved.as_ref().map(|s| s.passed)) {
            (false, Some(true)) => "ok".to_string(),
            (true, _) => format!(
                "DEFECT: the check passes on the bare fixture\n{}",
                t.bare.output_tail
            ),
            (_, None) => "DEFECT: no solution/".to_string(),
            (_, Some(false)) => format!(
                "DEFECT: the check fails with solution/\n{}",
                t.solved.map(|s| s.output_tail).unwrap_or_default()
            ),
        };
        if verdict != "ok" {
            defects.push(task.id.clone());
        }
        writeln!(out, "{} ({}): {verdict}", task.id, task.kind.as_str())?;
    }
    let _ = std::fs::remove_dir_all(&work);
    writeln!(
        out,
        "{} passed, {} failed",
        tasks.len() - defects.len(),
        defects.len()
    )?;
    Ok(if defects.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(crate::exit::FAILED)
    })
}

/// `20261201T191500Z-<pid>`: sorts by time, unique per process.
fn timestamp() -> String {
    let now = time::OffsetDateTime::now_utc();
    format!(
        "{:04}{:02}{:02}T{:02}{:02}{:02}Z-{}",
        now.year(),
        u8::from(now.month()),
        now.day(),
        now.hour(),
        now.minute(),
        now.second(),
        std::process::id()
    )
}
