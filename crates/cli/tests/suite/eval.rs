//! `bosun eval`: the built-in suite checks itself (every hidden check fails on its bare fixture
//! and passes with the solution), and the runner reports what the mock model did.

use super::support::*;
use bosun_testkit::{MockModelServer, MockReply, MockUsage};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

fn builtin_suite() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/eval")
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

const GREET_STUB: &str =
    "def greet(name):\n    \"\"\"'Hello, NAME!'\"\"\"\n    raise NotImplementedError\n";
const GREET_DONE: &str =
    "def greet(name):\n    \"\"\"'Hello, NAME!'\"\"\"\n    return f\"Hello, {name}!\"\n";

/// Two tasks: `alpha` (implement greet() in greet.py) and `beta` (implement double() in
/// num.py), each with a hidden unittest check.
fn mini_suite(dir: &Path) -> PathBuf {
    let suite = dir.join("suite");
    let alpha = suite.join("alpha");
    write(
        &alpha.join("task.toml"),
        "prompt = \"Implement greet() in greet.py.\"\nkind = \"implement\"\nfiles = [\"greet.py\"]\ncheck = \"python3 -m unittest -q hidden_test\"\n",
    );
    write(&alpha.join("repo/greet.py"), GREET_STUB);
    write(
        &alpha.join("hidden/hidden_test.py"),
        "import unittest\nfrom greet import greet\n\nclass T(unittest.TestCase):\n    def test_it(self):\n        self.assertEqual(greet('Zed'), 'Hello, Zed!')\n",
    );
    let beta = suite.join("beta");
    write(
        &beta.join("task.toml"),
        "prompt = \"Implement double() in num.py.\"\nkind = \"bugfix\"\nfiles = [\"num.py\"]\ncheck = \"python3 -m unittest -q hidden_test\"\ntime_limit_secs = 60\n",
    );
    write(&beta.join("repo/num.py"), "def double(x):\n    return x\n");
    write(
        &beta.join("hidden/hidden_test.py"),
        "import unittest\nfrom num import double\n\nclass T(unittest.TestCase):\n    def test_it(self):\n        self.assertEqual(double(21), 42)\n",
    );
    suite
}

fn with_usage(reply: MockReply, input: u64, cached: u64, output: u64) -> MockReply {
    reply.with_usage(MockUsage {
        input_tokens: input,
        cached_input_tokens: cached,
        output_tokens: output,
        ..Default::default()
    })
}

/// alpha: a native read, a recovered write that solves it, a closing answer (3 requests);
/// beta: a promise (nudged), then a refusal (2 requests, answered).
fn script() -> Vec<MockReply> {
    let write_call =
        json!({"name": "write_file", "arguments": {"path": "greet.py", "content": GREET_DONE}});
    vec![
        with_usage(
            tools(vec![call("c1", "read_file", json!({"path": "greet.py"}))]),
            1000,
            200,
            30,
        ),
        with_usage(
            text(&format!("<tool_call>{write_call}</tool_call>")),
            1400,
            0,
            60,
        ),
        with_usage(text("greet() now returns the greeting."), 1500, 0, 10),
        with_usage(text("I will now change double() in num.py."), 900, 0, 12),
        with_usage(text("Sorry, I cannot help with that."), 950, 0, 8),
    ]
}

fn eval_args<'a>(suite: &'a Path, base: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "eval",
        "--suite",
        path_str(suite),
        "--api",
        "openai-chat",
        "--base-url",
        base,
        "--model",
        "mock-model",
    ];
    args.extend_from_slice(extra);
    args
}

#[test]
fn every_task_of_the_builtin_suite_fails_bare_and_passes_with_its_solution() {
    let env = Env::new();
    let (ok, out, err) = env.text(&["eval", "--suite", path_str(&builtin_suite()), "--self-test"]);
    assert!(ok, "{out}\n{err}");
    let lines: Vec<&str> = out.lines().filter(|l| l.contains("): ")).collect();
    assert!(lines.len() >= 20, "{out}");
    let defects: Vec<&&str> = lines.iter().filter(|l| !l.ends_with("): ok")).collect();
    assert!(defects.is_empty(), "{defects:#?}");
    for kind in ["(implement)", "(cross-file)", "(bugfix)"] {
        let n = lines.iter().filter(|l| l.contains(kind)).count();
        assert!(
            n * 4 >= lines.len(),
            "only {n} {kind} tasks of {}",
            lines.len()
        );
    }
}

#[test]
fn a_mini_suite_against_the_mock_reports_one_of_two_passed_with_its_figures() {
    let env = Env::new();
    let suite = mini_suite(env.dir.path());
    let server = MockModelServer::start_blocking(script()).unwrap();
    let base = format!("{}/v1", server.url());
    let out = env
        .bosun()
        .args(eval_args(&suite, &base, &["--json"]))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let pick = |row: &Value| {
        json!({
            "task": row["task"], "kind": row["kind"], "runner": row["runner"], "try": row["try"],
            "passed": row["passed"], "status": row["status"], "requests": row["requests"],
            "first_request_tokens": row["first_request_tokens"],
            "total_tokens": row["total_tokens"], "native_calls": row["native_calls"],
            "recovered_calls": row["recovered_calls"], "nudges": row["nudges"],
        })
    };
    let rows: Vec<Value> = doc["tasks"].as_array().unwrap().iter().map(pick).collect();
    assert_eq!(
        rows,
        vec![
            json!({"task": "alpha", "kind": "implement", "runner": "bosun", "try": 1,
                   "passed": true, "status": "completed", "requests": 3,
                   // The first request's prompt: uncached 1000 - 200 plus 200 from the cache.
                   "first_request_tokens": 1000,
                   "total_tokens": 1000 + 30 + 1400 + 60 + 1500 + 10,
                   "native_calls": 1, "recovered_calls": 1, "nudges": 0}),
            json!({"task": "beta", "kind": "bugfix", "runner": "bosun", "try": 1,
                   "passed": false, "status": "answered", "requests": 2,
                   "first_request_tokens": 900, "total_tokens": 900 + 12 + 950 + 8,
                   "native_calls": 0, "recovered_calls": 0, "nudges": 1}),
        ],
        "{stderr}"
    );
    let bosun = &doc["totals"]["bosun"];
    assert_eq!(
        (bosun["passed"].clone(), bosun["runs"].clone()),
        (json!(1), json!(2))
    );
    assert_eq!(bosun["mean_first_request_tokens"], json!(950.0));
    assert!(doc["totals"]["wall_secs"].as_f64().unwrap() > 0.0);
    let cmd = doc["commands"]["bosun"].as_str().unwrap();
    assert!(
        cmd.contains(
            "run --repo <task repo> --prompt <task prompt> --mode full-auto --json --provider eval"
        ),
        "{cmd}"
    );
    assert_eq!(doc["commands"]["aider"], Value::Null);
    // The same document is kept in BOSUN_HOME/eval.
    let saved: Vec<_> = std::fs::read_dir(env.home.join("eval"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .collect();
    assert_eq!(saved.len(), 1);
    // The hidden check ran in a copy: the task's worktree has no hidden_test.py.
    let work = PathBuf::from(doc["work_dir"].as_str().unwrap());
    let events = std::fs::read(work.join("runs/alpha-1/bosun.events.jsonl")).unwrap();
    let worktree = worktree_of(&parse_events(&events));
    assert!(worktree.join("greet.py").exists());
    assert!(!worktree.join("hidden_test.py").exists());

    // The table says the same.
    for r in script() {
        server.push(r);
    }
    let (ok, table, err) = env.text(&eval_args(&suite, &base, &[]));
    assert!(ok, "{err}");
    let row = |task: &str| {
        table
            .lines()
            .find(|l| l.starts_with(task))
            .unwrap_or_else(|| panic!("no {task} row: {table}"))
            .split_whitespace()
            .collect::<Vec<_>>()
    };
    let alpha = row("alpha");
    assert_eq!(
        alpha[..5],
        ["alpha", "implement", "bosun", "✓", "completed"]
    );
    assert_eq!(alpha[6..], ["3", "1000", "4000", "1/1", "0"], "{table}");
    let beta = row("beta");
    assert_eq!(beta[..5], ["beta", "bugfix", "bosun", "✗", "answered"]);
    assert_eq!(beta[6..], ["2", "900", "1870", "0/0", "1"], "{table}");
    assert!(table.contains("bosun: passed 1/2"), "{table}");
    assert!(table.contains("mean first-request tokens 950"), "{table}");
    assert!(table.contains("suite wall time: "), "{table}");
    assert!(err.contains("eval: bosun: "), "{err}");
}

#[test]
fn a_task_glob_that_matches_nothing_is_a_usage_error_naming_the_tasks() {
    let env = Env::new();
    let suite = mini_suite(env.dir.path());
    let (ok, _, err) = env.text(&eval_args(
        &suite,
        "http://127.0.0.1:9/v1",
        &["--task", "gamma*"],
    ));
    assert!(!ok);
    assert!(err.contains("\"gamma*\" matches no task"), "{err}");
    assert!(err.contains("alpha, beta"), "{err}");
    let out = env
        .bosun()
        .args(eval_args(
            &suite,
            "http://127.0.0.1:9/v1",
            &["--task", "gamma*"],
        ))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn bad_usage_exits_2_and_says_what_is_wrong() {
    let env = Env::new();
    let suite = mini_suite(env.dir.path());
    let empty = env.dir.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let missing = env.dir.path().join("missing");
    let base = "http://127.0.0.1:9/v1";
    for (args, says) in [
        (
            eval_args(&suite, base, &["--peer", "codex"]),
            "unknown --peer \"codex\"",
        ),
        (
            eval_args(&suite, base, &["--tries", "0"]),
            "--tries must be at least 1",
        ),
        (eval_args(&empty, base, &[]), "has no tasks"),
        (eval_args(&missing, base, &[]), "no suite at"),
    ] {
        let out = env.bosun().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

#[test]
fn a_missing_aider_is_an_infrastructure_failure_that_says_how_to_install_it() {
    let env = Env::new();
    let suite = mini_suite(env.dir.path());
    let out = env
        .bosun()
        .env("BOSUN_EVAL_AIDER", env.dir.path().join("no-aider"))
        .args(eval_args(
            &suite,
            "http://127.0.0.1:9/v1",
            &["--peer", "aider"],
        ))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(
            "python3 -m venv /var/tmp/aider-venv && /var/tmp/aider-venv/bin/pip install aider-chat==0.86.2"
        ),
        "{err}"
    );
}

/// A stand-in for Aider: solves alpha (not beta), prints Aider's token lines, and records the
/// key it was given.
fn fake_aider(dir: &Path) -> PathBuf {
    let script = dir.join("fake-aider");
    let seen = dir.join("aider-saw-key");
    write(
        &script,
        &format!(
            "#!/bin/sh\necho \"$OPENAI_API_KEY\" > {seen}\necho \"args: $*\"\nif [ -f greet.py ]; then\n  printf '%s' '{GREET_DONE}' > greet.py\n  echo 'Tokens: 1.5k sent, 40 received.'\n  echo 'Applied edit to greet.py'\n  echo 'Tokens: 2k sent, 12 received. Cost: $0.00 message, $0.00 session.'\nelse\n  echo 'Tokens: 700 sent, 9 received.'\nfi\ntouch .aider.chat.history.md\n",
            seen = seen.display()
        ),
    );
    std::process::Command::new("chmod")
        .arg("+x")
        .arg(&script)
        .status()
        .unwrap();
    script
}

#[test]
fn the_aider_peer_runs_in_its_own_copy_and_is_measured_from_its_token_lines() {
    let env = Env::new();
    let suite = mini_suite(env.dir.path());
    let aider = fake_aider(env.dir.path());
    let server = MockModelServer::start_blocking(vec![
        text("Sorry, I cannot help with that."),
        text("Sorry, I cannot help with that."),
    ])
    .unwrap();
    let base = format!("{}/v1", server.url());
    let out = env
        .bosun()
        .env("BOSUN_EVAL_AIDER", &aider)
        .env("EVAL_TEST_KEY", "sekrit-key-123")
        .args(eval_args(
            &suite,
            &base,
            &[
                "--peer",
                "aider",
                "--json",
                "--api-key-env",
                "EVAL_TEST_KEY",
            ],
        ))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        !stdout.contains("sekrit") && !stderr.contains("sekrit"),
        "{stdout}{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(env.dir.path().join("aider-saw-key")).unwrap(),
        "sekrit-key-123\n"
    );
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    let aider_rows: Vec<Value> = doc["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["runner"] == "aider")
        .map(|r| {
            json!([
                r["task"],
                r["passed"],
                r["status"],
                r["requests"],
                r["first_request_tokens"],
                r["total_tokens"],
                r["native_calls"],
                r["nudges"]
            ])
        })
        .collect();
    assert_eq!(
        aider_rows,
        vec![
            json!([
                "alpha",
                true,
                "exited 0",
                2,
                1500,
                1500 + 40 + 2000 + 12,
                null,
                null
            ]),
            json!(["beta", false, "exited 0", 1, 700, 709, null, null]),
        ]
    );
    assert_eq!(doc["totals"]["bosun"]["passed"], json!(0));
    assert_eq!(doc["totals"]["aider"]["passed"], json!(1));
    assert_eq!(doc["totals"]["pass_ratio"], json!(0.0));
    let cmd = doc["commands"]["aider"].as_str().unwrap();
    assert!(cmd.starts_with("HOME="), "{cmd}");
    assert!(cmd.contains(" OPENAI_API_KEY=*** "), "{cmd}");
    for flag in [
        "--model openai/mock-model",
        &format!("--openai-api-base {base}"),
        "--edit-format whole",
        "--yes-always",
        "--no-auto-commits",
        "--no-check-update",
        "--analytics-disable",
    ] {
        assert!(cmd.contains(flag), "{flag}: {cmd}");
    }
    // Aider got the task's files on its command line.
    let work = PathBuf::from(doc["work_dir"].as_str().unwrap());
    let said = std::fs::read_to_string(work.join("runs/alpha-1/aider.out.txt")).unwrap();
    assert!(
        said.contains("--message Implement greet() in greet.py. greet.py"),
        "{said}"
    );
}

#[test]
fn a_task_past_its_time_limit_is_stopped_and_counted_failed() {
    let env = Env::new();
    let suite = mini_suite(env.dir.path());
    let server = MockModelServer::start_blocking(vec![MockReply::Endless {
        text: "thinking ".into(),
        chunk_delay_ms: 50,
    }])
    .unwrap();
    let base = format!("{}/v1", server.url());
    let out = env
        .bosun()
        .args(eval_args(
            &suite,
            &base,
            &["--json", "--task", "alpha", "--time-limit", "2"],
        ))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let row = &doc["tasks"][0];
    assert_eq!(
        (row["passed"].clone(), row["status"].clone()),
        (json!(false), json!("time limit"))
    );
    let secs = row["time_secs"].as_f64().unwrap();
    assert!((2.0..15.0).contains(&secs), "{secs}");
    // SIGINT first: Bosun ended the task itself, as interrupted.
    let work = PathBuf::from(doc["work_dir"].as_str().unwrap());
    let events = std::fs::read(work.join("runs/alpha-1/bosun.events.jsonl")).unwrap();
    let finished = parse_events(&events).into_iter().find_map(|e| match e.msg {
        bosun_protocol::EventMsg::TaskFinished(f) => Some(f.status),
        _ => None,
    });
    assert_eq!(finished, Some(bosun_protocol::TaskStatus::Interrupted));
}

#[test]
fn a_provider_of_the_users_config_is_the_only_one_the_suite_run_gets_and_tries_repeat_tasks() {
    let env = Env::new();
    let suite = mini_suite(env.dir.path());
    let server = MockModelServer::start_blocking(vec![
        text("Sorry, I cannot help with that."),
        text("Sorry, I cannot help with that."),
    ])
    .unwrap();
    write(
        &env.home.join("config.toml"),
        &format!(
            "default_provider = \"cloud\"\n\n[providers.cloud]\napi = \"anthropic\"\nmodel = \"claude-x\"\napi_key_env = \"CLOUD_KEY\"\n\n[providers.local]\napi = \"openai-chat\"\nbase_url = \"{}/v1\"\nmodel = \"mock-model\"\n",
            server.url()
        ),
    );
    let out = env
        .bosun()
        .args([
            "eval",
            "--suite",
            path_str(&suite),
            "--provider",
            "local",
            "--task",
            "alpha",
            "--tries",
            "2",
            "--json",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let runs: Vec<Value> = doc["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| json!([r["task"], r["try"], r["status"]]))
        .collect();
    assert_eq!(
        runs,
        vec![
            json!(["alpha", 1, "answered"]),
            json!(["alpha", 2, "answered"])
        ]
    );
    assert!(
        doc["commands"]["bosun"]
            .as_str()
            .unwrap()
            .ends_with("--provider local"),
        "{doc:#}"
    );
    let work = PathBuf::from(doc["work_dir"].as_str().unwrap());
    let config = std::fs::read_to_string(work.join("home/config.toml")).unwrap();
    assert!(config.contains("[providers.local]"), "{config}");
    assert!(!config.contains("cloud"), "{config}");
}

/// Every file under `dir`, as (relative path, text), sorted.
fn files_under(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().to_str().unwrap().to_string();
                out.push((rel, std::fs::read_to_string(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_model_that_writes_the_reference_solutions_passes_every_task_of_the_builtin_suite() {
    let env = Env::new();
    let suite = builtin_suite();
    let mut ids: Vec<String> = std::fs::read_dir(&suite)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("task.toml").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    ids.sort();
    let mut script = Vec::new();
    for id in &ids {
        let calls = files_under(&suite.join(id).join("solution"))
            .into_iter()
            .enumerate()
            .map(|(i, (path, content))| {
                call(
                    &format!("w{i}"),
                    "write_file",
                    json!({"path": path, "content": content}),
                )
            })
            .collect();
        script.push(tools(calls));
        script.push(text("Done: the change is in place."));
    }
    let server = MockModelServer::start_blocking(script).unwrap();
    let base = format!("{}/v1", server.url());
    let out = env
        .bosun()
        .args(eval_args(&suite, &base, &["--json"]))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let failed: Vec<Value> = doc["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["passed"] != json!(true) || r["status"] != json!("completed"))
        .cloned()
        .collect();
    assert!(failed.is_empty(), "{failed:#?}");
    assert_eq!(doc["totals"]["bosun"]["passed"], json!(ids.len()));
    assert_eq!(server.remaining(), 0);
}
