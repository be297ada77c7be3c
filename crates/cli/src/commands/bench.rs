use anyhow::Context;
use bosun_testkit::{MockModelServer, MockReply, MockUsage};
use clap::Subcommand;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

#[derive(Subcommand)]
pub enum BenchCommand {
    /// Milliseconds per checkpoint for Bosun and for a shadow-git baseline, and worktree start times
    Checkpoint {
        /// Files in the generated repository
        #[arg(long, default_value_t = 100_000)]
        files: usize,
        /// Where to generate (and reuse) the repository
        #[arg(long, default_value = "/var/tmp/bosun-bench")]
        dir: PathBuf,
    },
    /// Time to list a task's changed files and compute their diffs, next to `git diff --stat` and `git diff`
    Review {
        /// Files in the generated repository (the figure is for 100000)
        #[arg(long, default_value_t = 10_000)]
        files: usize,
        /// Files the task changed
        #[arg(long, default_value_t = 2_000)]
        changed: usize,
        #[arg(long, default_value = "/var/tmp/bosun-bench")]
        dir: PathBuf,
    },
    /// Throughput through a CONNECT tunnel of the egress proxy vs a direct TCP connection, and the time to open one
    Proxy {
        /// Megabytes sent each way
        #[arg(long, default_value_t = 256)]
        mb: u64,
        /// Connections opened to time opening one
        #[arg(long, default_value_t = 200)]
        connections: u32,
    },
    /// The repository map: cold build, build from the tag cache, the update after one edit,
    /// and its size, next to reading every file it reads. On a generated repository of
    /// `--files` files, or on `--path DIR` (e.g. `~/.cargo/registry/src`; never changed)
    Map {
        /// Files in the generated repository
        #[arg(long, default_value_t = 100_000)]
        files: usize,
        /// Where to generate (and reuse) the repository
        #[arg(long, default_value = "/var/tmp/bosun-bench-map")]
        dir: PathBuf,
        /// Map this directory instead (read only: no edit figure)
        #[arg(long, value_name = "DIR")]
        path: Option<PathBuf>,
    },
    /// Does the repository map find the files a change touches? Real releases of published
    /// crates and sdists (the prompt their CHANGELOG entry, the answer the source files that
    /// changed): recall@1 and @5 of the map's top files next to a grep baseline. Downloads the
    /// archives into `--cache` once (static.crates.io, PyPI)
    /// A long task against the mock model with a small window: N tool calls with big outputs,
    /// with masking on and off; the requests, their input tokens in all, the biggest, the
    /// compactions and the requests refused as too long
    Compaction {
        #[arg(long, default_value_t = 200)]
        calls: usize,
        /// Each output, in KB
        #[arg(long, default_value_t = 20)]
        kb: usize,
        /// The model's window in tokens (the mock counts bytes / 4)
        #[arg(long, default_value_t = 32_768)]
        window: u64,
        #[arg(long, default_value = "/var/tmp/bosun-bench")]
        dir: PathBuf,
    },
    /// What the first request's layered context holds of the files real releases changed, under
    /// several splits of its budget (the tasks of `bench localise`)
    Context {
        #[arg(long, value_name = "FILE")]
        tasks: Option<PathBuf>,
        #[arg(
            long,
            value_name = "DIR",
            default_value = "/var/tmp/bosun-localise-cache"
        )]
        cache: PathBuf,
        #[arg(long, default_value_t = 4_000)]
        budget: usize,
        /// Another split to compare, as targets/tests/siblings/map/recent in percent (e.g.
        /// 20/10/5/60/5); repeatable
        #[arg(long, value_name = "T/T/S/M/R")]
        shares: Vec<String>,
    },
    Localise {
        /// The task list (TOML, `[[task]]` tables); the built-in one is tests/localise/tasks.toml
        #[arg(long, value_name = "FILE")]
        tasks: Option<PathBuf>,
        /// Where the downloaded archives are kept (and looked for first)
        #[arg(
            long,
            value_name = "DIR",
            default_value = "/var/tmp/bosun-localise-cache"
        )]
        cache: PathBuf,
        /// Print the report as JSON
        #[arg(long)]
        json: bool,
    },
    /// Milliseconds the edit guard adds to an edit, per language: the first edit of a file (full
    /// parses) and a later one (incremental, from the tree kept by the guard cache)
    Guard {
        /// Lines in each generated file
        #[arg(long, default_value_t = 2_000)]
        lines: usize,
        /// Times each case is run
        #[arg(long, default_value_t = 50)]
        runs: usize,
    },
    /// Time to the first page of history searches (a word, a rare word, a phrase, filters) in a
    /// generated journal, and the journal's size with and without its full-text index
    History {
        #[arg(long, default_value_t = 10_000)]
        tasks: usize,
        #[arg(long, default_value_t = 1_000_000)]
        events: usize,
        /// Where to build (and reuse) the journal
        #[arg(long, default_value = "/var/tmp/bosun-bench")]
        dir: PathBuf,
    },
    /// The Costs view's query (30 and 90 days), `bosun costs --by day`, `bosun stats` and a
    /// budget reservation plus settlement per model request, over the history's generated journal
    Costs {
        #[arg(long, default_value_t = 10_000)]
        tasks: usize,
        #[arg(long, default_value_t = 1_000_000)]
        events: usize,
        #[arg(long, default_value = "/var/tmp/bosun-bench")]
        dir: PathBuf,
    },
    /// N mock tasks through the persistent queue (`bosun batch`) at several concurrencies: the
    /// total wall time and speedup, each task's time, the mock model's share and Bosun's own,
    /// the journal's write rate and the most model requests in flight (exit 1 when more than
    /// the concurrency, or when a task did not complete)
    Batch {
        #[arg(long, default_value_t = 20)]
        tasks: usize,
        /// Concurrencies to run at, comma-separated
        #[arg(long, value_name = "N,N,...", default_value = "1,2,4")]
        concurrency: String,
        /// The mock model's pause between streamed chunks, in milliseconds
        #[arg(long, default_value_t = 20)]
        delay_ms: u64,
        /// Repositories the tasks are spread over
        #[arg(long, default_value_t = 2)]
        repos: usize,
        #[arg(long, default_value = "/var/tmp/bosun-bench")]
        dir: PathBuf,
    },
    /// Time from `bosun run` to the first model request, first and later task, next to `git worktree add`
    Start {
        #[arg(long, default_value_t = 100_000)]
        files: usize,
        #[arg(long, default_value = "/var/tmp/bosun-bench")]
        dir: PathBuf,
        /// Also time a first task whose worktree was prepared beforehand (as the app's New task
        /// form does when a repository is picked)
        #[arg(long)]
        prepared: bool,
    },
}

pub fn bench(cmd: BenchCommand) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    match cmd {
        BenchCommand::Checkpoint { files, dir } => {
            bosun_workspace::bench::run_checkpoint_bench(files, &dir, &mut out)?;
        }
        BenchCommand::Start {
            files,
            dir,
            prepared,
        } => start(files, &dir, prepared, &mut out)?,
        BenchCommand::Batch {
            tasks,
            concurrency,
            delay_ms,
            repos,
            dir,
        } => {
            let opts = super::bench_batch::Options {
                tasks,
                concurrency: super::bench_batch::parse_concurrency(&concurrency)?,
                delay_ms,
                repos,
                dir,
            };
            return super::bench_batch::run(&opts, &mut out);
        }
        BenchCommand::Proxy { mb, connections } => tokio::runtime::Runtime::new()?.block_on(
            bosun_exec::sandbox::proxy::bench::run(mb, connections, &mut out),
        )?,
        BenchCommand::History { tasks, events, dir } => {
            bosun_store::search::bench::run(tasks, events, &dir, &mut out)?;
        }
        BenchCommand::Costs { tasks, events, dir } => {
            bosun_store::search::bench::run_costs(tasks, events, &dir, &mut out)?;
        }
        BenchCommand::Compaction {
            calls,
            kb,
            window,
            dir,
        } => super::bench_compaction::run(calls, kb, window, &dir, &mut out)?,
        BenchCommand::Guard { lines, runs } => bosun_syntax::bench::run(lines, runs, &mut out)?,
        BenchCommand::Map { files, dir, path } => {
            let scratch =
                std::env::temp_dir().join(format!("bosun-map-bench-{}", std::process::id()));
            match path {
                Some(p) => {
                    if !p.is_dir() {
                        anyhow::bail!("--path {}: not a directory", p.display());
                    }
                    bosun_context::map_bench::run(&p, &scratch, None, &mut out)?
                }
                None => {
                    if files == 0 || files > 1_000_000 {
                        anyhow::bail!("--files must be between 1 and 1000000 (got {files})");
                    }
                    bosun_context::map_bench::generate(&dir, files)?;
                    bosun_context::map_bench::run(
                        &dir,
                        &scratch,
                        Some(std::path::Path::new("pkg000/m0.py")),
                        &mut out,
                    )?;
                }
            }
            let _ = std::fs::remove_dir_all(&scratch);
        }
        BenchCommand::Review {
            files,
            changed,
            dir,
        } => bosun_workspace::bench::run_review_bench(files, changed, &dir, &mut out)?,
        BenchCommand::Localise { tasks, cache, json } => localise(tasks, &cache, json, &mut out)?,
        BenchCommand::Context {
            tasks,
            cache,
            budget,
            shares,
        } => context(tasks, &cache, budget, &shares, &mut out)?,
    }
    Ok(ExitCode::SUCCESS)
}

fn context(
    tasks: Option<PathBuf>,
    cache: &Path,
    budget: usize,
    extra: &[String],
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    use bosun_context::{Shares, localise_bench};
    if !(500..=100_000).contains(&budget) {
        anyhow::bail!("--budget must be between 500 and 100000 tokens (got {budget})");
    }
    let tasks = task_list(tasks)?;
    let (runtime, client) = http()?;
    let fetch = |url: &str| fetch(&runtime, &client, url);
    let preset = |t, te, si, sy, r| Shares {
        targets: t,
        tests: te,
        siblings: si,
        symbols: sy,
        recent: r,
    };
    let mut presets = vec![
        ("bosun".to_string(), Shares::default()),
        ("articles".to_string(), Shares::ARTICLES),
        ("earlier".to_string(), preset(0.35, 0.15, 0.10, 0.30, 0.10)),
        (
            "map-heavy".to_string(),
            preset(0.15, 0.10, 0.05, 0.65, 0.05),
        ),
        (
            "targets-heavy".to_string(),
            preset(0.55, 0.15, 0.05, 0.20, 0.05),
        ),
    ];
    for x in extra {
        let parts: Vec<f64> = x.split('/').filter_map(|p| p.trim().parse().ok()).collect();
        if parts.len() != 5 || parts.iter().any(|p| *p < 0.0) || parts.iter().sum::<f64>() <= 0.0 {
            anyhow::bail!(
                "--shares {x}: give five numbers, targets/tests/siblings/map/recent, e.g. 20/10/5/60/5"
            );
        }
        let sum: f64 = parts.iter().sum();
        presets.push((
            "given".to_string(),
            preset(
                parts[0] / sum,
                parts[1] / sum,
                parts[2] / sum,
                parts[3] / sum,
                parts[4] / sum,
            ),
        ));
    }
    localise_bench::run_context(&tasks, cache, &fetch, &presets, budget, out)?;
    Ok(())
}

fn task_list(tasks: Option<PathBuf>) -> anyhow::Result<Vec<bosun_context::localise_bench::Task>> {
    use bosun_context::localise_bench;
    Ok(match &tasks {
        Some(path) => {
            let text = match std::fs::read_to_string(path) {
                Ok(text) => text,
                Err(e) => anyhow::bail!("--tasks {}: cannot read it: {e}", path.display()),
            };
            localise_bench::parse_tasks(&text, &path.display().to_string())?
        }
        None => localise_bench::parse_tasks(localise_bench::TASKS, "tests/localise/tasks.toml")?,
    })
}

fn http() -> anyhow::Result<(tokio::runtime::Runtime, reqwest::Client)> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let client = reqwest::Client::builder()
        .user_agent("bosun-bench-localise")
        .connect_timeout(Duration::from_secs(20))
        .timeout(Duration::from_secs(300))
        .build()?;
    Ok((runtime, client))
}

fn fetch(
    runtime: &tokio::runtime::Runtime,
    client: &reqwest::Client,
    url: &str,
) -> Result<Vec<u8>, String> {
    runtime.block_on(async {
        let response = client.get(url).send().await.map_err(|e| causes(&e))?;
        let status = response.status();
        if !status.is_success() {
            return Err(format!("HTTP {status}"));
        }
        let body = response.bytes().await.map_err(|e| causes(&e))?;
        Ok(body.to_vec())
    })
}

fn localise(
    tasks: Option<PathBuf>,
    cache: &Path,
    json: bool,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    use bosun_context::localise_bench;
    let tasks = match &tasks {
        Some(path) => {
            // A task list that cannot be read is what was typed (exit 2).
            let text = match std::fs::read_to_string(path) {
                Ok(text) => text,
                Err(e) => anyhow::bail!("--tasks {}: cannot read it: {e}", path.display()),
            };
            localise_bench::parse_tasks(&text, &path.display().to_string())?
        }
        None => localise_bench::parse_tasks(localise_bench::TASKS, "tests/localise/tasks.toml")?,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let client = reqwest::Client::builder()
        .user_agent("bosun-bench-localise")
        .connect_timeout(Duration::from_secs(20))
        .timeout(Duration::from_secs(300))
        .build()?;
    let fetch = |url: &str| -> Result<Vec<u8>, String> {
        runtime.block_on(async {
            let response = client.get(url).send().await.map_err(|e| causes(&e))?;
            let status = response.status();
            if !status.is_success() {
                return Err(format!("HTTP {status}"));
            }
            let body = response.bytes().await.map_err(|e| causes(&e))?;
            Ok(body.to_vec())
        })
    };
    let report = localise_bench::run(&tasks, cache, &fetch, &mut std::io::stderr())?;
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(&report)?)?;
    } else {
        localise_bench::print(&report, out)?;
    }
    Ok(())
}

/// An error and its causes, `: `-separated (reqwest's own message omits why).
fn causes(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Spawns `bosun run` and returns the time until the mock server saw its first request.
fn time_to_first_request(
    repo: &Path,
    home: &Path,
    server: &MockModelServer,
) -> anyhow::Result<Duration> {
    let seen = server.requests().len();
    let exe = std::env::current_exe().context("while finding the bosun binary")?;
    let started = Instant::now();
    let mut child = Command::new(exe)
        .env("BOSUN_HOME", home)
        .args([
            "run",
            "--json",
            "--prompt",
            "say ok",
            "--api",
            "openai-chat",
            "--model",
            "bench",
        ])
        .arg("--repo")
        .arg(repo)
        .arg("--base-url")
        .arg(format!("{}/v1", server.url()))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .context("while starting bosun run")?;
    let elapsed = loop {
        if server.requests().len() > seen {
            break started.elapsed();
        }
        if let Some(status) = child.try_wait()? {
            anyhow::bail!("bosun run exited with {status} before asking the model");
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let status = child.wait()?;
    // The task only answers ("ok"): exit 6, answered, is its success.
    anyhow::ensure!(
        status.code() == Some(6),
        "bosun run did not end answered: {status}"
    );
    Ok(elapsed)
}

fn start(files: usize, dir: &Path, prepared: bool, out: &mut dyn Write) -> anyhow::Result<()> {
    let repo = bosun_workspace::bench::generate_repo(files, dir)?;
    let home = dir.join(format!("start-home-{}", std::process::id()));
    let ok = || MockReply::Reply {
        text: "ok".into(),
        tool_calls: vec![],
        usage: MockUsage::default(),
        chunk_delay_ms: 0,
        cut_after_events: None,
    };
    let server = MockModelServer::start_blocking(vec![ok(), ok(), ok(), ok()])?;
    writeln!(out, "repository: {} files at {}", files, repo.display())?;

    let wt = dir.join(format!("baseline-wt-{}", std::process::id()));
    let t = Instant::now();
    let st = Command::new("git")
        .arg("-C")
        .arg(&repo)
        .args(["worktree", "add", "-q", "--detach"])
        .arg(&wt)
        .status()?;
    let git_add = t.elapsed();
    anyhow::ensure!(st.success(), "git worktree add failed");
    let _ = Command::new("git")
        .arg("-C")
        .arg(&repo)
        .args(["worktree", "remove", "--force"])
        .arg(&wt)
        .status();
    writeln!(
        out,
        "git worktree add:                      {:>9.1} ms",
        ms(git_add)
    )?;

    let first = time_to_first_request(&repo, &home, &server)?;
    writeln!(
        out,
        "bosun run → first model request, first task: {:>9.1} ms  ({:.2}× git worktree add)",
        ms(first),
        ms(first) / ms(git_add)
    )?;
    let later = time_to_first_request(&repo, &home, &server)?;
    writeln!(
        out,
        "bosun run → first model request, later task: {:>9.1} ms  ({:.2}× git worktree add; target < 2000 ms)",
        ms(later),
        ms(later) / ms(git_add)
    )?;
    if prepared {
        // A repository Bosun has never seen, its worktree prepared while the user types.
        let fresh_home = dir.join(format!("start-prepared-{}", std::process::id()));
        let head = bosun_workspace::resolve_base(&repo, None)?;
        let t = Instant::now();
        bosun_workspace::prepare_spare(&fresh_home, &repo, &head)?;
        let preparing = t.elapsed();
        let first = time_to_first_request(&repo, &fresh_home, &server)?;
        writeln!(
            out,
            "prepared beforehand (while the form is open): {:>9.1} ms",
            ms(preparing)
        )?;
        writeln!(
            out,
            "bosun run → first model request, first task, prepared: {:>9.1} ms  ({:.2}× git worktree add)",
            ms(first),
            ms(first) / ms(git_add)
        )?;
        let _ = std::fs::remove_dir_all(&fresh_home);
    }
    let usage = bosun_workspace::worktree_disk_usage(&home)?;
    writeln!(
        out,
        "worktrees after the runs: {}",
        super::diff::usage_summary(&usage)
    )?;
    Ok(())
}
