//! `bosun bench batch`: N mock tasks through the persistent queue (`bosun batch FILE`, a child
//! process as a user runs it) at several concurrencies. Each task streams a `write_file` call
//! and then an answer from the mock model at a known pace. Prints, per concurrency: the total
//! wall time, the speedup over the first concurrency, each task's time, the model's share of it
//! (measured by the mock: request to last byte), Bosun's own time per task (the rest), the events
//! written to the journal and their rate, and the most model requests in flight at once — more
//! than the concurrency is a failure (exit 1), as is a task that did not complete.

use anyhow::Context;
use bosun_testkit::{MockModelServer, MockOptions, MockReply, MockToolCall, MockUsage};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

pub struct Options {
    pub tasks: usize,
    pub concurrency: Vec<u32>,
    pub delay_ms: u64,
    pub repos: usize,
    pub dir: PathBuf,
}

/// Parses `1,2,4`.
pub fn parse_concurrency(text: &str) -> anyhow::Result<Vec<u32>> {
    let mut out = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        let n: u32 = part.parse().map_err(|_| {
            anyhow::anyhow!("--concurrency {text:?}: {part:?} is not a number (e.g. 1,2,4)")
        })?;
        anyhow::ensure!(
            (1..=bosun_core::orchestrate::batch::MAX_CONCURRENCY).contains(&n),
            "--concurrency {text:?}: {n} is out of range (1 to {})",
            bosun_core::orchestrate::batch::MAX_CONCURRENCY
        );
        if !out.contains(&n) {
            out.push(n);
        }
    }
    Ok(out)
}

struct Figures {
    wall_secs: f64,
    completed: usize,
    task_secs: f64,
    model_secs: f64,
    events: u64,
    peak: u64,
}

pub fn run(opts: &Options, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        (1..=500).contains(&opts.tasks),
        "--tasks must be between 1 and 500 (got {})",
        opts.tasks
    );
    anyhow::ensure!(
        (1..=20).contains(&opts.repos),
        "--repos must be between 1 and 20 (got {})",
        opts.repos
    );
    anyhow::ensure!(
        opts.delay_ms <= 1_000,
        "--delay-ms must be at most 1000 (got {})",
        opts.delay_ms
    );
    anyhow::ensure!(!opts.concurrency.is_empty(), "--concurrency names none");
    std::fs::create_dir_all(&opts.dir)
        .with_context(|| format!("while creating {}", opts.dir.display()))?;
    let repos = (0..opts.repos)
        .map(|i| repo(&opts.dir.join(format!("batch-repo-{i}"))))
        .collect::<anyhow::Result<Vec<_>>>()
        .map_err(|e| anyhow::Error::new(std::io::Error::other(format!("{e:#}"))))?;
    writeln!(
        out,
        "{} mock tasks over {} repositories through `bosun batch` (each: a write_file call, then an answer, streamed at {} ms a chunk; no checks)",
        opts.tasks, opts.repos, opts.delay_ms
    )?;
    writeln!(
        out,
        "{:>11}  {:>8}  {:>7}  {:>9}  {:>9}  {:>10}  {:>8}  {:>9}  {:>9}  {:>4}",
        "concurrency",
        "wall s",
        "speedup",
        "task ms",
        "model ms",
        "bosun ms",
        "events",
        "events/s",
        "in flight",
        "done"
    )?;
    let mut first: Option<f64> = None;
    let mut failed = Vec::new();
    for &c in &opts.concurrency {
        // Past the arguments, an error is Bosun's or the machine's (exit 1), not what was typed.
        let f = one(opts, &repos, c)
            .map_err(|e| anyhow::Error::new(std::io::Error::other(format!("{e:#}"))))?;
        let n = opts.tasks as f64;
        let base = *first.get_or_insert(f.wall_secs);
        writeln!(
            out,
            "{:>11}  {:>8.2}  {:>6.2}x  {:>9.0}  {:>9.0}  {:>10.0}  {:>8}  {:>9.0}  {:>9}  {:>4}",
            c,
            f.wall_secs,
            base / f.wall_secs.max(1e-9),
            f.task_secs * 1000.0 / n,
            f.model_secs * 1000.0 / n,
            (f.task_secs - f.model_secs).max(0.0) * 1000.0 / n,
            f.events,
            f.events as f64 / f.wall_secs.max(1e-9),
            f.peak,
            format!("{}/{}", f.completed, opts.tasks),
        )?;
        if f.peak > u64::from(c) {
            failed.push(format!(
                "at concurrency {c}, {} model requests were in flight at once",
                f.peak
            ));
        }
        if f.completed != opts.tasks {
            failed.push(format!(
                "at concurrency {c}, {} of {} tasks completed",
                f.completed, opts.tasks
            ));
        }
    }
    writeln!(
        out,
        "task ms: a task's first to last journal event; model ms: the mock answering its requests; bosun ms: the rest (worktree, tools, checkpoints, journal)"
    )?;
    if failed.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        for f in failed {
            writeln!(out, "FAILED: {f}")?;
        }
        Ok(ExitCode::from(1))
    }
}

/// A small git repository to run tasks in (made once, reused).
fn repo(dir: &Path) -> anyhow::Result<PathBuf> {
    if dir.join("repo/.git").exists() {
        return Ok(dir.join("repo"));
    }
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir)?;
    bosun_testkit::fixture_repo(dir).with_context(|| format!("while making {}", dir.display()))
}

fn marker(i: usize) -> String {
    format!("bench-task-{i:04}")
}

fn script(i: usize, delay_ms: u64) -> Vec<MockReply> {
    vec![
        MockReply::Reply {
            text: "Writing the file the task asks for, in a few words.".into(),
            tool_calls: vec![MockToolCall {
                id: format!("call_{i}"),
                name: "write_file".into(),
                arguments: serde_json::json!({
                    "path": format!("bench/{}.txt", marker(i)),
                    "content": format!("written by task {i}\n"),
                })
                .to_string(),
            }],
            usage: MockUsage {
                input_tokens: 1_000,
                output_tokens: 40,
                ..MockUsage::default()
            },
            chunk_delay_ms: delay_ms,
            cut_after_events: None,
        },
        MockReply::Reply {
            text: format!("Wrote bench/{}.txt.", marker(i)),
            tool_calls: vec![],
            usage: MockUsage {
                input_tokens: 1_100,
                output_tokens: 10,
                ..MockUsage::default()
            },
            chunk_delay_ms: delay_ms,
            cut_after_events: None,
        },
    ]
}

fn one(opts: &Options, repos: &[PathBuf], concurrency: u32) -> anyhow::Result<Figures> {
    let server = MockModelServer::start_blocking_with(
        Vec::new(),
        MockOptions {
            routes: (0..opts.tasks)
                .map(|i| (marker(i), script(i, opts.delay_ms)))
                .collect(),
            summary_reply: Some("bench: write the file".into()),
            ..MockOptions::default()
        },
    )?;
    let home = opts
        .dir
        .join(format!("batch-home-{}-{concurrency}", std::process::id()));
    let _ = std::fs::remove_dir_all(&home);
    std::fs::create_dir_all(&home)?;
    std::fs::write(
        home.join("config.toml"),
        format!(
            "default_provider = \"mock\"\n\n[providers.mock]\napi = \"openai-chat\"\nbase_url = \"{}/v1\"\nmodel = \"mock-model\"\n",
            server.url()
        ),
    )?;
    let file = home.join("tasks.jsonl");
    let mut lines = String::new();
    for i in 0..opts.tasks {
        let task = serde_json::json!({
            "repo": repos[i % repos.len()],
            "prompt": format!("{}: write the file bench/{}.txt", marker(i), marker(i)),
            "mode": "full-auto",
            "checks": [],
            "max_steps": 6,
        });
        lines.push_str(&task.to_string());
        lines.push('\n');
    }
    std::fs::write(&file, lines)?;
    let exe = std::env::current_exe().context("while finding the bosun binary")?;
    let started = Instant::now();
    let output = Command::new(exe)
        .env("BOSUN_HOME", &home)
        .arg("batch")
        .arg(&file)
        .args(["--concurrency", &concurrency.to_string(), "--json"])
        .stdin(Stdio::null())
        .output()
        .context("while running bosun batch")?;
    let wall_secs = started.elapsed().as_secs_f64();
    let code = output.status.code();
    if !matches!(code, Some(0 | 1)) {
        anyhow::bail!(
            "bosun batch at concurrency {concurrency} exited {code:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let model_secs = server.model_busy().as_secs_f64();
    let peak = server.peak_in_flight();
    drop(server);
    let figures = journal(&home.join("bosun.db"))?;
    if figures.0 == opts.tasks {
        let _ = std::fs::remove_dir_all(&home);
    } else {
        eprintln!(
            "not every task completed at concurrency {concurrency}: `BOSUN_HOME={} bosun batch status` says why",
            home.display()
        );
    }
    Ok(Figures {
        wall_secs,
        completed: figures.0,
        task_secs: figures.1,
        model_secs,
        events: figures.2,
        peak,
    })
}

/// Completed tasks of the batch, the sum of their times (first to last event) and the events
/// written.
fn journal(path: &Path) -> anyhow::Result<(usize, f64, u64)> {
    let store = bosun_store::Store::open(path)
        .with_context(|| format!("while opening {}", path.display()))?;
    let batch = store
        .batches(Some("batch"))?
        .into_iter()
        .next()
        .context("the journal holds no batch")?;
    let (mut completed, mut secs, mut events) = (0, 0.0, 0u64);
    for item in store.batch_items(&batch.id)? {
        let Some(task) = item.task else { continue };
        completed += usize::from(task.status == bosun_protocol::TaskStatus::Completed);
        let all = store.events(&task.id, 0, usize::MAX)?;
        events += all.len() as u64;
        if let (Some(a), Some(b)) = (all.first(), all.last()) {
            let (Ok(a), Ok(b)) = (
                OffsetDateTime::parse(&a.ts, &Rfc3339),
                OffsetDateTime::parse(&b.ts, &Rfc3339),
            ) else {
                anyhow::bail!("the journal holds an event time that is not RFC 3339");
            };
            secs += (b - a).as_seconds_f64();
        }
    }
    Ok((completed, secs, events))
}
