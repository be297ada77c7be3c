//! Every process a task starts dies with it, end to end through `bosun run`: a job that left
//! its command's process group (`setsid nohup … &`) never writes into the worktree after the
//! task ends, after `kill -9` of bosun, or after SIGTERM of bosun (which stops the task as
//! Ctrl-C does). Without a network namespace or seccomp, every command asks.

use super::support::*;
use bosun_protocol::{Event, EventMsg, TaskStatus};
use bosun_testkit::MockModelServer;
use serde_json::json;
use std::io::{BufRead, BufReader, Lines, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, ExitStatus, Stdio};
use std::time::Duration;

/// A job that escapes its command's process group and writes `escaped` three seconds later.
const ESCAPING_JOB: &str = "setsid nohup sh -c 'sleep 3; echo x > escaped' >/dev/null 2>&1 &";

fn sandboxed() -> bool {
    let support = bosun_exec::probe();
    if !support.is_available() {
        eprintln!("SKIPPED: {}", support.describe());
    }
    support.is_available()
}

/// Waits past the job's three seconds; whether it wrote into `worktree`.
fn escaped_later(worktree: &Path) -> bool {
    assert!(worktree.is_dir(), "{} is gone", worktree.display());
    std::thread::sleep(Duration::from_millis(4500));
    worktree.join("escaped").exists()
}

/// A `bosun run --json` in progress, read event by event.
struct Live {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Lines<BufReader<ChildStdout>>,
    events: Vec<Event>,
}

impl Live {
    fn start(env: &Env, server: &MockModelServer, mode: &str, vars: &[(&str, &str)]) -> Live {
        let base = format!("{}/v1", server.url());
        let mut cmd = env.bosun();
        for (k, v) in vars {
            cmd.env(k, v);
        }
        let mut child = cmd
            .args([
                "run",
                "--json",
                "--mode",
                mode,
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
            ])
            .args(["--model", "mock-model"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Live {
            child,
            stdin,
            lines,
            events: Vec::new(),
        }
    }

    /// Reads events until one satisfies `done` (true) or the output ends (false).
    fn until(&mut self, mut done: impl FnMut(&Event) -> bool) -> bool {
        for line in self.lines.by_ref() {
            let ev: Event = serde_json::from_str(&line.unwrap()).unwrap();
            let hit = done(&ev);
            self.events.push(ev);
            if hit {
                return true;
            }
        }
        false
    }

    fn printed(&mut self, marker: &str) -> bool {
        self.until(|ev| matches!(&ev.msg, EventMsg::ToolOutputDelta(d) if d.chunk.contains(marker)))
    }

    fn signal(&self, signal: &str) {
        let status = std::process::Command::new("kill")
            .args([&format!("-{signal}"), &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    fn answer(&mut self, reply: serde_json::Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{reply}").unwrap();
        stdin.flush().unwrap();
    }

    fn finish(mut self) -> (Vec<Event>, ExitStatus) {
        self.until(|_| false);
        drop(self.stdin.take());
        let status = self.child.wait().unwrap();
        (self.events, status)
    }
}

#[test]
fn a_setsid_job_dies_when_the_task_ends() {
    if !sandboxed() {
        return;
    }
    let env = Env::new();
    let server = MockModelServer::start_blocking(vec![
        tools(vec![call(
            "job",
            "run_command",
            json!({"command": format!("{ESCAPING_JOB} echo started")}),
        )]),
        text("done"),
    ])
    .unwrap();
    let run = env.run(&server, "start a background job", &[]);
    // 6: answered, the task changed nothing.
    assert_eq!(run.code(), Some(6), "{}", run.stderr());
    assert_eq!(run.finished().0, TaskStatus::Answered);
    assert!(
        !escaped_later(&run.worktree()),
        "the job wrote into the worktree after the task ended"
    );
}

#[test]
fn a_setsid_job_dies_when_bosun_is_killed_mid_command() {
    if !sandboxed() {
        return;
    }
    let env = Env::new();
    let server = MockModelServer::start_blocking(vec![tools(vec![call(
        "job",
        "run_command",
        json!({"command": format!("{ESCAPING_JOB} echo started; sleep 30")}),
    )])])
    .unwrap();
    let printed = run_and_kill_when_printed(&env, &server, "started");
    assert!(
        !escaped_later(&worktree_of(&printed)),
        "the job wrote into the worktree after bosun was killed"
    );
}

#[test]
fn sigterm_of_bosun_stops_the_task_as_ctrl_c_does_and_its_jobs_die() {
    if !sandboxed() {
        return;
    }
    let env = Env::new();
    let server = MockModelServer::start_blocking(vec![tools(vec![call(
        "job",
        "run_command",
        json!({"command": format!("{ESCAPING_JOB} echo started; sleep 30")}),
    )])])
    .unwrap();
    let mut live = Live::start(&env, &server, "full-auto", &[]);
    assert!(live.printed("started"));
    live.signal("TERM");
    let (events, status) = live.finish();
    assert_eq!(status.code(), Some(130));
    let finished = events.iter().find_map(|e| match &e.msg {
        EventMsg::TaskFinished(f) => Some(f.status),
        _ => None,
    });
    assert_eq!(finished, Some(TaskStatus::Interrupted));
    assert!(
        !escaped_later(&worktree_of(&events)),
        "the job wrote into the worktree after bosun was stopped"
    );
}

#[test]
fn sighup_of_bosun_stops_the_task_too() {
    if !sandboxed() {
        return;
    }
    let env = Env::new();
    let server = MockModelServer::start_blocking(vec![tools(vec![call(
        "wait",
        "run_command",
        json!({"command": "echo started; sleep 30"}),
    )])])
    .unwrap();
    let mut live = Live::start(&env, &server, "full-auto", &[]);
    assert!(live.printed("started"));
    live.signal("HUP");
    let (events, status) = live.finish();
    assert_eq!(status.code(), Some(130));
    assert!(events.iter().any(
        |e| matches!(&e.msg, EventMsg::TaskFinished(f) if f.status == TaskStatus::Interrupted)
    ));
}

/// Debug builds only (`BOSUN_SANDBOX_DISABLE` is ignored otherwise).
#[cfg(debug_assertions)]
#[test]
fn without_a_network_namespace_or_seccomp_every_command_asks_because_the_network_is_not_contained()
{
    if !sandboxed() {
        return;
    }
    let env = Env::new();
    let server = MockModelServer::start_blocking(vec![
        tools(vec![call("ls", "run_command", json!({"command": "ls"}))]),
        text("done"),
    ])
    .unwrap();
    let mut live = Live::start(
        &env,
        &server,
        "full-auto",
        &[("BOSUN_SANDBOX_DISABLE", "netns,seccomp")],
    );
    let mut asked = None;
    let mut warned = false;
    assert!(live.until(|ev| match &ev.msg {
        EventMsg::Warning(w) if w.code == "network_not_contained" => {
            warned = true;
            false
        }
        EventMsg::ApprovalRequested(req) => {
            asked = Some(req.clone());
            true
        }
        _ => false,
    }));
    let req = asked.unwrap();
    assert_eq!(req.reason, "network not contained");
    assert!(
        warned,
        "the task starts with a network_not_contained warning (pinned in the app)"
    );
    live.answer(json!({"approval_id": req.approval_id, "decision": "deny"}));
    let (_, status) = live.finish();
    assert_eq!(status.code(), Some(6));
}
