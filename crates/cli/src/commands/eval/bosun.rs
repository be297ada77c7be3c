//! A task through Bosun: this same binary as `bosun run --json` in the suite run's own
//! `BOSUN_HOME`, its event stream read for the figures, the hidden check run in a copy of the
//! task's worktree.

use super::report::Row;
use super::suite::{self, Task};
use anyhow::Context;
use bosun_protocol::{Event, EventMsg};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How Bosun is started for each task.
pub struct BosunRunner {
    pub exe: PathBuf,
    /// The suite run's isolated `BOSUN_HOME` (its config.toml holds the one provider).
    pub home: PathBuf,
    pub provider: String,
}

impl BosunRunner {
    /// The command as printed once at the start (no key is ever on it: Bosun reads the key
    /// from the variable the provider names).
    pub fn command_line(&self) -> String {
        format!(
            "BOSUN_HOME={} {} run --repo <task repo> --prompt <task prompt> --mode full-auto --json --provider {}",
            self.home.display(),
            self.exe.display(),
            self.provider
        )
    }

    pub fn run(
        &self,
        task: &Task,
        repo: &Path,
        work: &Path,
        limit: Duration,
    ) -> anyhow::Result<Row> {
        let log = work.join("bosun.events.jsonl");
        let err_log = work.join("bosun.stderr.txt");
        let stderr = std::fs::File::create(&err_log)
            .with_context(|| format!("while creating {}", err_log.display()))?;
        let started = Instant::now();
        let mut child = Command::new(&self.exe)
            .arg("run")
            .arg("--repo")
            .arg(repo)
            .args(["--prompt", &task.prompt, "--mode", "full-auto", "--json"])
            .args(["--provider", &self.provider])
            .env("BOSUN_HOME", &self.home)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(stderr))
            .spawn()
            .with_context(|| format!("while starting {}", self.exe.display()))?;
        let mut figures = Figures::default();
        let mut lines = String::new();
        let ended = super::supervise::follow_lines(&mut child, false, limit, |line| {
            lines.push_str(line);
            lines.push('\n');
            if let Ok(ev) = serde_json::from_str::<Event>(line) {
                figures.add(&ev);
            }
        })?;
        let elapsed = started.elapsed();
        std::fs::write(&log, &lines).with_context(|| format!("while writing {}", log.display()))?;
        let Some(worktree) = figures.worktree.clone() else {
            let said = std::fs::read_to_string(&err_log).unwrap_or_default();
            return Err(super::infra(format!(
                "`bosun run` ended without starting a task ({}): {}",
                ended.status.map_or("killed".to_string(), |s| s.to_string()),
                said.trim()
            )));
        };
        let check_dir = work.join("check-bosun");
        suite::check_copy(task, Path::new(&worktree), &check_dir)?;
        let check = suite::run_check(task, &check_dir)?;
        let status = if ended.timed_out {
            "time limit".to_string()
        } else {
            figures.status.clone().unwrap_or_else(|| "no status".into())
        };
        Ok(Row {
            task: task.id.clone(),
            kind: task.kind,
            runner: "bosun",
            attempt: 0,
            passed: check.passed && !ended.timed_out,
            status,
            time_secs: elapsed.as_secs_f64(),
            requests: figures.requests,
            first_request_tokens: figures.first_request_tokens,
            total_tokens: figures.total_tokens,
            native_calls: Some(figures.native),
            recovered_calls: Some(figures.recovered),
            nudges: Some(figures.nudges),
            task_id: figures.task_id,
            check_output: check.output_tail,
        })
    }
}

/// What the event stream says about a task.
#[derive(Debug, Default)]
pub struct Figures {
    pub task_id: Option<String>,
    pub worktree: Option<String>,
    pub requests: u64,
    pub first_request_tokens: Option<u64>,
    pub total_tokens: u64,
    pub native: u64,
    pub recovered: u64,
    pub nudges: u64,
    pub status: Option<String>,
}

impl Figures {
    pub fn add(&mut self, ev: &Event) {
        match &ev.msg {
            EventMsg::TaskStarted(t) => {
                self.task_id = Some(ev.task_id.0.clone());
                self.worktree = Some(t.worktree.clone());
            }
            EventMsg::Usage(u) => {
                // The prompt's tokens are the disjoint classes: uncached, read from the cache,
                // written to it.
                let prompt = u.input_tokens
                    + u.cached_input_tokens
                    + u.cache_write_tokens
                    + u.cache_write_1h_tokens;
                self.requests += 1;
                if self.first_request_tokens.is_none() {
                    self.first_request_tokens = Some(prompt);
                }
                self.total_tokens += prompt + u.output_tokens + u.reasoning_tokens;
            }
            EventMsg::ToolCallBegin(b) => {
                if b.recovered || b.call_id.0.starts_with("recovered_") {
                    self.recovered += 1;
                } else {
                    self.native += 1;
                }
            }
            EventMsg::Nudge(_) => self.nudges += 1,
            EventMsg::TaskFinished(f) => self.status = Some(f.status.as_str().to_string()),
            _ => {}
        }
    }
}
