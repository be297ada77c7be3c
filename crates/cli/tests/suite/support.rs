//! Shared setup: a `$BOSUN_HOME`, a fixture repository, and helpers to run `bosun`.

use bosun_protocol::{Event, EventMsg, TaskStatus};
use bosun_testkit::{MockModelServer, MockReply, MockToolCall, MockUsage};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub struct Env {
    pub dir: tempfile::TempDir,
    pub home: PathBuf,
    pub repo: PathBuf,
}

pub struct Run {
    pub events: Vec<Event>,
    pub output: Output,
}

impl Run {
    pub fn code(&self) -> Option<i32> {
        self.output.status.code()
    }

    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }

    pub fn task_id(&self) -> String {
        self.events
            .first()
            .map(|e| e.task_id.0.clone())
            .unwrap_or_else(|| panic!("no events; stderr: {}", self.stderr()))
    }

    pub fn finished(&self) -> (TaskStatus, String) {
        self.events
            .iter()
            .find_map(|e| match &e.msg {
                EventMsg::TaskFinished(f) => Some((f.status, f.summary.clone())),
                _ => None,
            })
            .unwrap_or_else(|| panic!("no task_finished; stderr: {}", self.stderr()))
    }

    pub fn kinds(&self) -> Vec<&'static str> {
        self.events.iter().map(|e| e.msg.kind()).collect()
    }

    pub fn tool_ends(&self) -> Vec<&bosun_protocol::ToolCallEnd> {
        self.events
            .iter()
            .filter_map(|e| match &e.msg {
                EventMsg::ToolCallEnd(t) => Some(t),
                _ => None,
            })
            .collect()
    }

    pub fn worktree(&self) -> PathBuf {
        worktree_of(&self.events)
    }
}

/// The task's worktree, from its `task_started` event.
pub fn worktree_of(events: &[Event]) -> PathBuf {
    events
        .iter()
        .find_map(|e| match &e.msg {
            EventMsg::TaskStarted(t) => Some(PathBuf::from(&t.worktree)),
            _ => None,
        })
        .expect("task_started")
}

impl Env {
    pub fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let repo = bosun_testkit::fixture_repo(&dir.path().join("repo")).unwrap();
        Env { dir, home, repo }
    }

    pub fn bosun(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_bosun"));
        cmd.env("BOSUN_HOME", &self.home)
            .env_remove("OPENAI_API_KEY")
            .env_remove("ANTHROPIC_API_KEY")
            .env("NO_COLOR", "1");
        cmd
    }

    /// `bosun run --json` against the mock server with the OpenAI wire format.
    pub fn run(&self, server: &MockModelServer, prompt: &str, extra: &[&str]) -> Run {
        self.run_with_env(server, prompt, extra, &[])
    }

    /// [`Env::run`] with extra environment variables for the `bosun` process.
    pub fn run_with_env(
        &self,
        server: &MockModelServer,
        prompt: &str,
        extra: &[&str],
        vars: &[(&str, &str)],
    ) -> Run {
        let base = format!("{}/v1", server.url());
        let mut args = vec![
            "run",
            "--json",
            "--repo",
            path_str(&self.repo),
            "--prompt",
            prompt,
            "--api",
            "openai-chat",
            "--base-url",
            &base,
            "--model",
            "mock-model",
        ];
        args.extend_from_slice(extra);
        self.run_args_with_env(&args, vars)
    }

    /// `bosun ARGS`; a `run` without `--mode` runs in full-auto (the loop's own tests are not
    /// about approvals; those pass `--mode` themselves).
    pub fn run_args(&self, args: &[&str]) -> Run {
        self.run_args_with_env(args, &[])
    }

    pub fn run_args_with_env(&self, args: &[&str], vars: &[(&str, &str)]) -> Run {
        let mut args = args.to_vec();
        if args.first() == Some(&"run") && !args.contains(&"--mode") {
            args.extend(["--mode", "full-auto"]);
        }
        let mut cmd = self.bosun();
        for (k, v) in vars {
            cmd.env(k, v);
        }
        let output = cmd.args(&args).output().unwrap();
        let events = parse_events(&output.stdout);
        Run { events, output }
    }

    pub fn json(&self, args: &[&str]) -> serde_json::Value {
        let out = self.bosun().args(args).output().unwrap();
        assert!(
            out.status.success(),
            "bosun {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }

    pub fn text(&self, args: &[&str]) -> (bool, String, String) {
        let out = self.bosun().args(args).output().unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

pub fn parse_events(stdout: &[u8]) -> Vec<Event> {
    String::from_utf8_lossy(stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad event line {l:?}: {e}")))
        .collect()
}

pub fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn call(id: &str, name: &str, args: serde_json::Value) -> MockToolCall {
    MockToolCall {
        id: id.into(),
        name: name.into(),
        arguments: args.to_string(),
    }
}

pub fn tools(calls: Vec<MockToolCall>) -> MockReply {
    MockReply::Reply {
        text: String::new(),
        tool_calls: calls,
        usage: usage(100, 20),
        chunk_delay_ms: 0,
        cut_after_events: None,
    }
}

pub fn text(t: &str) -> MockReply {
    MockReply::Reply {
        text: t.into(),
        tool_calls: vec![],
        usage: usage(120, 10),
        chunk_delay_ms: 0,
        cut_after_events: None,
    }
}

pub fn usage(input: u64, output: u64) -> MockUsage {
    MockUsage {
        input_tokens: input,
        output_tokens: output,
        ..Default::default()
    }
}

/// The user's checkout as git sees it: status, HEAD, index bytes and branches (minus Bosun's).
pub fn checkout_state(repo: &Path) -> (String, String, Vec<u8>, String) {
    let branches: String = git(repo, &["branch", "--format=%(refname)"])
        .lines()
        .filter(|b| !b.starts_with("refs/heads/bosun/"))
        .map(|b| format!("{b}\n"))
        .collect();
    (
        git(
            repo,
            &[
                "status",
                "--porcelain=v2",
                "--branch",
                "--untracked-files=all",
            ],
        ),
        git(repo, &["rev-parse", "HEAD"]),
        std::fs::read(repo.join(".git/index")).unwrap(),
        branches,
    )
}

/// The messages of a recorded OpenAI request.
pub fn messages(req: &bosun_testkit::RecordedRequest) -> Vec<serde_json::Value> {
    req.body["messages"].as_array().cloned().unwrap_or_default()
}

/// `bosun run --json` in ask mode (unless `extra` says otherwise), answering each
/// `approval_requested` with the JSON line `answer` returns, written to stdin.
pub fn run_answering(
    env: &Env,
    server: &MockModelServer,
    prompt: &str,
    extra: &[&str],
    answer: impl FnMut(&bosun_protocol::ApprovalRequested) -> serde_json::Value,
) -> Run {
    run_answering_with_env(env, server, prompt, extra, &[], answer)
}

/// [`run_answering`] with extra environment variables for the `bosun` process.
pub fn run_answering_with_env(
    env: &Env,
    server: &MockModelServer,
    prompt: &str,
    extra: &[&str],
    vars: &[(&str, &str)],
    answer: impl FnMut(&bosun_protocol::ApprovalRequested) -> serde_json::Value,
) -> Run {
    let base = format!("{}/v1", server.url());
    let mut bosun = env.bosun();
    for (k, v) in vars {
        bosun.env(k, v);
    }
    bosun
        .args([
            "run",
            "--json",
            "--repo",
            path_str(&env.repo),
            "--prompt",
            prompt,
        ])
        .args([
            "--api",
            "openai-chat",
            "--base-url",
            &base,
            "--model",
            "mock-model",
        ])
        .args(extra);
    answer_while_running(bosun, answer)
}

/// Runs `cmd` (a `bosun … --json`), answering each `approval_requested` with the JSON line
/// `answer` returns, written to its stdin.
pub fn answer_while_running(
    mut cmd: Command,
    mut answer: impl FnMut(&bosun_protocol::ApprovalRequested) -> serde_json::Value,
) -> Run {
    use std::io::{BufRead, BufReader, Write};
    let mut child = cmd
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut events = Vec::new();
    for line in BufReader::new(stdout).lines() {
        let ev: Event = serde_json::from_str(&line.unwrap()).unwrap();
        if let EventMsg::ApprovalRequested(req) = &ev.msg {
            let reply = answer(req);
            writeln!(stdin, "{reply}").unwrap();
            stdin.flush().unwrap();
        }
        events.push(ev);
    }
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    Run { events, output }
}

/// Starts `bosun run --json` (full-auto, against `server`) and kills it with SIGKILL once a
/// command it runs has printed `marker`. Returns the events it printed before dying.
pub fn run_and_kill_when_printed(env: &Env, server: &MockModelServer, marker: &str) -> Vec<Event> {
    use std::io::{BufRead, BufReader};
    let base = format!("{}/v1", server.url());
    let mut child = env
        .bosun()
        .args([
            "run",
            "--json",
            "--mode",
            "full-auto",
            "--repo",
            path_str(&env.repo),
        ])
        .args([
            "--prompt",
            "work",
            "--api",
            "openai-chat",
            "--base-url",
            &base,
            "--model",
            "mock-model",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut events = Vec::new();
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let ev: Event = serde_json::from_str(&line.unwrap()).unwrap();
        let done = matches!(&ev.msg, EventMsg::ToolOutputDelta(d) if d.chunk.contains(marker));
        events.push(ev);
        if done {
            break;
        }
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    events
}

/// What the model was told for the tool call `call_id` (from the requests the mock server got).
pub fn tool_result(server: &MockModelServer, call_id: &str) -> String {
    server
        .requests()
        .iter()
        .flat_map(messages)
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == call_id)
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .unwrap_or_else(|| panic!("no result for {call_id}"))
}
