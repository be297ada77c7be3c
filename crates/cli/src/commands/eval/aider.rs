//! The peer: a task through Aider (`aider-chat==0.86.2`) against the same server, in its own
//! copy of the fixture; its figures read from its "Tokens: … sent, … received" lines.

use super::report::Row;
use super::suite::{self, Task};
use anyhow::Context;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The venv the README's install commands make.
pub const VENV_AIDER: &str = "/var/tmp/aider-venv/bin/aider";
pub const INSTALL: &str =
    "python3 -m venv /var/tmp/aider-venv && /var/tmp/aider-venv/bin/pip install aider-chat==0.86.2";

/// `$BOSUN_EVAL_AIDER`, else the venv's, else `aider` on PATH.
pub fn locate() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("BOSUN_EVAL_AIDER") {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!(
                "BOSUN_EVAL_AIDER is {}, which is not a file; install Aider with `{INSTALL}` and point BOSUN_EVAL_AIDER at /var/tmp/aider-venv/bin/aider (or unset it)",
                p.display()
            ))
        };
    }
    if Path::new(VENV_AIDER).is_file() {
        return Ok(PathBuf::from(VENV_AIDER));
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let p = dir.join("aider");
            if p.is_file() {
                return Ok(p);
            }
        }
    }
    Err(format!(
        "Aider is not installed (not at $BOSUN_EVAL_AIDER, {VENV_AIDER} or on PATH); install it with `{INSTALL}`"
    ))
}

pub struct AiderRunner {
    pub exe: PathBuf,
    pub model: String,
    pub base_url: String,
    /// The key Aider sends; given in its environment (OPENAI_API_KEY), never on its command
    /// line, never printed.
    pub api_key: String,
    /// Aider's HOME for the suite run: your ~/.aider.conf.yml and ~/.env do not change what is
    /// measured, and its caches and analytics settings stay out of your home.
    pub home: PathBuf,
}

impl AiderRunner {
    /// The options every task gets, before `--message PROMPT FILES…`.
    fn options(&self) -> Vec<String> {
        [
            "--model",
            &format!("openai/{}", self.model),
            "--openai-api-base",
            &self.base_url,
            // The whole file back: the format that works with the weakest local models.
            "--edit-format",
            "whole",
            "--yes-always",
            "--no-auto-commits",
            "--no-dirty-commits",
            "--no-pretty",
            "--no-fancy-input",
            "--no-check-update",
            "--no-show-release-notes",
            "--no-show-model-warnings",
            "--analytics-disable",
            "--no-gitignore",
            "--no-restore-chat-history",
            "--no-detect-urls",
            // With --yes-always, a suggested shell command would run, unsandboxed.
            "--no-suggest-shell-commands",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    }

    /// The command as printed once at the start (the key masked).
    pub fn command_line(&self) -> String {
        format!(
            "HOME={} OPENAI_API_KEY=*** {} {} --message <task prompt> <task files>",
            self.home.display(),
            self.exe.display(),
            self.options().join(" ")
        )
    }

    pub fn run(
        &self,
        task: &Task,
        repo: &Path,
        work: &Path,
        limit: Duration,
    ) -> anyhow::Result<Row> {
        let log = work.join("aider.out.txt");
        let err_log = work.join("aider.stderr.txt");
        let stderr = std::fs::File::create(&err_log)
            .with_context(|| format!("while creating {}", err_log.display()))?;
        let started = Instant::now();
        let mut cmd = Command::new(&self.exe);
        // Its own group, so a stop reaches whatever it started, as Ctrl-C would.
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let mut child = cmd
            .args(self.options())
            .arg("--message")
            .arg(&task.prompt)
            .args(&task.files)
            .current_dir(repo)
            .env("OPENAI_API_KEY", &self.api_key)
            .env("HOME", &self.home)
            // LiteLLM would otherwise fetch its price map from the network at start.
            .env("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            .env("NO_COLOR", "1")
            .env("TERM", "dumb")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(stderr))
            .spawn()
            .with_context(|| format!("while starting {}", self.exe.display()))?;
        let mut out = String::new();
        let mut figures = Tokens::default();
        let ended = super::supervise::follow_lines(&mut child, cfg!(unix), limit, |line| {
            out.push_str(line);
            out.push('\n');
            figures.add_line(line);
        })?;
        let elapsed = started.elapsed();
        std::fs::write(&log, &out).with_context(|| format!("while writing {}", log.display()))?;
        let check_dir = work.join("check-aider");
        suite::check_copy(task, repo, &check_dir)?;
        let check = suite::run_check(task, &check_dir)?;
        let status = if ended.timed_out {
            "time limit".to_string()
        } else {
            match ended.status.and_then(|s| s.code()) {
                Some(0) => "exited 0".to_string(),
                Some(c) => format!("exited {c}"),
                None => "killed".to_string(),
            }
        };
        Ok(Row {
            task: task.id.clone(),
            kind: task.kind,
            runner: "aider",
            attempt: 0,
            passed: check.passed && !ended.timed_out,
            status,
            time_secs: elapsed.as_secs_f64(),
            requests: figures.requests,
            first_request_tokens: figures.first_sent,
            total_tokens: figures.total,
            native_calls: None,
            recovered_calls: None,
            nudges: None,
            task_id: None,
            check_output: check.output_tail,
        })
    }
}

/// Aider's token report lines, one per model request: `Tokens: 1.2k sent, 50 received.` (with
/// `, N cache write` / `, N cache hit` between when the server reports them).
#[derive(Debug, Default, PartialEq)]
pub struct Tokens {
    pub requests: u64,
    pub first_sent: Option<u64>,
    pub total: u64,
}

impl Tokens {
    pub fn add_line(&mut self, line: &str) {
        let Some(rest) = line.trim().strip_prefix("Tokens: ") else {
            return;
        };
        let report = rest.split(". ").next().unwrap_or(rest);
        let mut sent = None;
        let mut other = 0;
        for part in report.trim_end_matches('.').split(", ") {
            let mut words = part.split_whitespace();
            let (Some(n), Some(what)) = (words.next(), words.next()) else {
                continue;
            };
            let Some(n) = parse_count(n) else { continue };
            match what {
                "sent" => sent = Some(n),
                "received" | "cache" => other += n,
                _ => {}
            }
        }
        let Some(sent) = sent else { return };
        self.requests += 1;
        self.first_sent.get_or_insert(sent);
        self.total += sent + other;
    }
}

/// `950`, `1.2k`, `12k`, `1.5M` (Aider rounds what it prints).
fn parse_count(s: &str) -> Option<u64> {
    let (num, mult) = if let Some(n) = s.strip_suffix('k') {
        (n, 1_000.0)
    } else if let Some(n) = s.strip_suffix('M') {
        (n, 1_000_000.0)
    } else {
        (s, 1.0)
    };
    let v: f64 = num.replace(',', "").parse().ok()?;
    Some((v * mult).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn token_lines_give_requests_and_tokens() {
        let mut t = Tokens::default();
        for line in [
            "Tokens: 1.2k sent, 50 received.",
            "Applied edit to stats.py",
            "Tokens: 2.3k sent, 1.1k cache write, 120 received. Cost: $0.01 message, $0.02 session.",
            "Tokens: 12k sent, 3 received.",
        ] {
            t.add_line(line);
        }
        assert_eq!(
            t,
            Tokens {
                requests: 3,
                first_sent: Some(1200),
                total: 1200 + 50 + 2300 + 1100 + 120 + 12_000 + 3,
            }
        );
    }
}
