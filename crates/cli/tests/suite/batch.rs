//! Batch runs and comparisons: a persistent queue of tasks across repositories, run N at a time,
//! that survives `kill -9` and resumes with nothing run twice; a batch file with a bad line runs
//! nothing; a comparison's figures match its runs' journals, and merging one run leaves the
//! others alone.

use super::support::*;
use bosun_protocol::{EventMsg, TaskStatus};
use bosun_store::Store;
use bosun_testkit::{MockModelServer, MockOptions, MockReply};
use pretty_assertions::assert_eq;
use serde_json::json;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// `config.toml` whose default provider is the mock server (two names, two models).
fn config(env: &Env, server: &MockModelServer) {
    std::fs::create_dir_all(&env.home).unwrap();
    let url = server.url();
    std::fs::write(
        env.home.join("config.toml"),
        format!(
            "default_provider = \"mock\"\n\n[providers.mock]\napi = \"openai-chat\"\nbase_url = \"{url}/v1\"\nmodel = \"mock-model\"\n\n[providers.other]\napi = \"openai-chat\"\nbase_url = \"{url}/v1\"\nmodel = \"other-model\"\n\n[setups.quick]\nmode = \"full-auto\"\nmax_steps = 5\n"
        ),
    )
    .unwrap();
}

/// A `write_file` of `path` streamed slowly (about `ms` per chunk), then an answer.
fn slow_write(id: &str, path: &str, ms: u64) -> Vec<MockReply> {
    vec![
        MockReply::Reply {
            text: "Writing the file now, as the task asks, in a few words.".into(),
            tool_calls: vec![call(
                id,
                "write_file",
                json!({"path": path, "content": format!("{path}\n")}),
            )],
            usage: usage(100, 20),
            chunk_delay_ms: ms,
            cut_after_events: None,
        },
        text("Done."),
    ]
}

fn second_repo(env: &Env) -> PathBuf {
    bosun_testkit::fixture_repo(&env.dir.path().join("repo2")).unwrap()
}

fn marker_requests(server: &MockModelServer, marker: &str) -> usize {
    server
        .model_requests()
        .iter()
        .filter(|r| {
            messages(r)
                .iter()
                .find(|m| m["role"] == "user")
                .and_then(|m| m["content"].as_str())
                .is_some_and(|c| c.contains(marker))
        })
        .count()
}

fn batch_json(env: &Env) -> serde_json::Value {
    env.json(&["batch", "status", "--json"])
}

#[test]
fn a_batch_killed_midway_resumes_to_the_end_with_nothing_run_twice_and_never_more_than_two_requests_at_once()
 {
    let markers = ["T1", "T2", "T3", "T4", "T5"];
    let server = MockModelServer::start_blocking_with(
        Vec::new(),
        MockOptions {
            routes: markers
                .iter()
                .enumerate()
                .map(|(i, m)| {
                    (
                        m.to_string(),
                        slow_write(&format!("c{i}"), &format!("{}.txt", m.to_lowercase()), 60),
                    )
                })
                .collect(),
            ..MockOptions::default()
        },
    )
    .unwrap();
    let env = Env::new();
    config(&env, &server);
    let repo2 = second_repo(&env);
    let file = env.dir.path().join("tasks.toml");
    let mut text = String::new();
    for (i, m) in markers.iter().enumerate() {
        let repo = if i % 2 == 0 { &env.repo } else { &repo2 };
        text.push_str(&format!(
            "[[task]]\nrepo = {:?}\nprompt = \"{m}: write the file\"\nmode = \"full-auto\"\nchecks = []\n\n",
            path_str(repo)
        ));
    }
    std::fs::write(&file, text).unwrap();

    let mut child = env
        .bosun()
        .args(["batch", path_str(&file), "--concurrency", "2"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut completed = 0;
    let mut seen = String::new();
    while completed < 2 {
        let line = lines
            .next()
            .unwrap_or_else(|| panic!("bosun batch ended early:\n{seen}"))
            .unwrap();
        seen.push_str(&line);
        seen.push('\n');
        completed += usize::from(line.contains("] completed"));
    }
    // Two tasks are done and the next two are asking the model: kill the queue mid-stream.
    let deadline = Instant::now() + Duration::from_secs(30);
    while marker_requests(&server, "T3") + marker_requests(&server, "T4") < 2 {
        assert!(
            Instant::now() < deadline,
            "tasks 3 and 4 never asked the model:\n{seen}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();

    let before = batch_json(&env);
    assert_eq!(before["batch"]["status"], "interrupted", "{before:#}");
    let ids_before: Vec<serde_json::Value> = before["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["task_id"].clone())
        .collect();
    assert_eq!(before["items"][4]["state"], "queued", "{before:#}");
    assert!(ids_before[4].is_null());
    let cut_off: Vec<&str> = before["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["state"] == "started")
        .map(|i| i["n"].as_u64().unwrap())
        .map(|n| markers[n as usize - 1])
        .collect();
    assert_eq!(cut_off, ["T3", "T4"], "{before:#}");
    // Their first replies were cut off with the process: they ask for them again.
    for m in &cut_off {
        let i = markers.iter().position(|x| x == m).unwrap();
        server.set_route(
            m,
            slow_write(&format!("c{i}"), &format!("{}.txt", m.to_lowercase()), 0),
        );
    }

    let (ok, stdout, stderr) = env.text(&["batch", "resume"]);
    assert!(ok, "resume failed:\n{stdout}\n{stderr}");
    assert!(stderr.contains("2 done, 2 cut off, 1 queued"), "{stderr}");
    assert!(stderr.contains("resuming"), "{stderr}");

    let after = batch_json(&env);
    assert_eq!(after["batch"]["status"], "finished", "{after:#}");
    let items = after["items"].as_array().unwrap();
    for (i, item) in items.iter().enumerate() {
        assert_eq!(
            item["task"]["status"],
            "completed",
            "item {}: {item:#}",
            i + 1
        );
        if i < 4 {
            // The same task, resumed: not a new one.
            assert_eq!(item["task_id"], ids_before[i], "item {}", i + 1);
        }
        let id = item["task_id"].as_str().unwrap();
        let name = format!("{}.txt", markers[i].to_lowercase());
        let (ok, diff, _) = env.text(&["diff", id]);
        assert!(
            ok && diff.contains(&format!("+{name}")),
            "item {}: {diff}",
            i + 1
        );
    }
    // Nothing ran twice: the finished tasks asked nothing more, the queued one ran once, and
    // the journal holds exactly five tasks.
    assert_eq!(marker_requests(&server, "T1"), 2);
    assert_eq!(marker_requests(&server, "T2"), 2);
    assert_eq!(marker_requests(&server, "T5"), 2);
    assert_eq!(
        marker_requests(&server, "T3"),
        3,
        "cut off once, then its two requests"
    );
    let store = Store::open(&env.home.join("bosun.db")).unwrap();
    assert_eq!(store.all_tasks().unwrap().len(), 5);
    assert!(
        server.peak_in_flight() <= 2,
        "{} requests at once",
        server.peak_in_flight()
    );
    assert_eq!(server.peak_in_flight(), 2, "two tasks ran side by side");
    // The table says so too.
    let (_, table, _) = env.text(&["batch", "status"]);
    assert!(table.contains("5 of 5 done, 5 completed"), "{table}");
}

#[test]
fn a_batch_file_with_a_bad_line_names_it_and_runs_nothing() {
    let server = MockModelServer::start_blocking(vec![text("never")]).unwrap();
    let env = Env::new();
    config(&env, &server);
    let jsonl = env.dir.path().join("tasks.jsonl");
    std::fs::write(
        &jsonl,
        format!(
            "{{\"repo\": {:?}, \"prompt\": \"one\"}}\n{{\"repo\": {:?}, \"prompt\": \"two\", \"mode\": \"yolo\"}}\n",
            path_str(&env.repo),
            path_str(&env.repo)
        ),
    )
    .unwrap();
    let out = env
        .bosun()
        .args(["batch", path_str(&jsonl)])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("tasks.jsonl line 2") && stderr.contains("yolo"),
        "{stderr}"
    );

    let toml = env.dir.path().join("tasks.toml");
    std::fs::write(
        &toml,
        format!("[[task]]\nrepo = {:?}\nprompt = \"one\"\n\n[[task]]\nrepo = \"missing\"\nprompt = \"two\"\n", path_str(&env.repo)),
    )
    .unwrap();
    let out = env
        .bosun()
        .args(["batch", path_str(&toml)])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("tasks.toml line 5") && stderr.contains("missing"),
        "{stderr}"
    );

    // Nothing was queued, started or asked.
    assert!(server.model_requests().is_empty());
    let out = env.bosun().args(["batch", "status"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no batch yet"));
    let store = Store::open(&env.home.join("bosun.db")).unwrap();
    assert!(store.all_tasks().unwrap().is_empty());

    // Usage errors are exit 2 and say what was meant.
    for args in [
        vec!["batch"],
        vec!["batch", "--prompt", "x"],
        vec![
            "batch",
            "--prompt",
            "x",
            "--repo",
            path_str(&env.repo),
            "--concurrency",
            "0",
        ],
        vec!["batch", "resume", "nope"],
        vec!["batch", "status", "zzz"],
    ] {
        let out = env.bosun().args(&args).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn one_prompt_over_two_repositories_exits_1_when_a_task_does_not_complete() {
    // The first task writes; the second only answers (nothing changed: answered).
    let server = MockModelServer::start_blocking(vec![
        tools(vec![call(
            "c1",
            "write_file",
            json!({"path": "x.txt", "content": "x\n"}),
        )]),
        text("Done."),
        text("Nothing to do here."),
    ])
    .unwrap();
    let env = Env::new();
    config(&env, &server);
    let repo2 = second_repo(&env);
    let out = env
        .bosun()
        .args([
            "batch",
            "--prompt",
            "write x",
            "--repo",
            path_str(&env.repo),
            "--repo",
            path_str(&repo2),
        ])
        .args([
            "--mode",
            "full-auto",
            "--no-checks",
            "--concurrency",
            "1",
            "--json",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let status: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let statuses: Vec<&str> = status["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["task"]["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["completed", "answered"]);
    assert_eq!(status["batch"]["status"], "finished");
    let repos: Vec<String> = status["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["task"]["repo"].as_str().unwrap().to_string())
        .collect();
    assert_ne!(repos[0], repos[1]);
}

fn events(env: &Env, task: &str) -> Vec<bosun_protocol::Event> {
    let store = Store::open(&env.home.join("bosun.db")).unwrap();
    store
        .events(&bosun_protocol::TaskId(task.into()), 0, 100_000)
        .unwrap()
}

#[test]
fn a_comparison_of_two_setups_twice_reports_its_journals_figures_and_merging_one_run_leaves_the_others()
 {
    // Runs go one at a time in the order A#1, B#1, A#2, B#2: A writes one file; B reads a file
    // that is not there (a tool error), then writes two.
    let a = |n: u32| {
        vec![
            MockReply::Reply {
                text: String::new(),
                tool_calls: vec![call(
                    &format!("a{n}"),
                    "write_file",
                    json!({"path": "a.txt", "content": format!("a{n}\n")}),
                )],
                usage: usage(1000, 50),
                chunk_delay_ms: 0,
                cut_after_events: None,
            },
            MockReply::Reply {
                text: "Wrote a.txt.".into(),
                tool_calls: Vec::new(),
                usage: usage(1200, 10),
                chunk_delay_ms: 0,
                cut_after_events: None,
            },
        ]
    };
    let b = |n: u32| {
        vec![
            tools(vec![call(
                &format!("b{n}r"),
                "read_file",
                json!({"path": "missing.txt"}),
            )]),
            tools(vec![
                call(
                    &format!("b{n}1"),
                    "write_file",
                    json!({"path": "b1.txt", "content": "b\n"}),
                ),
                call(
                    &format!("b{n}2"),
                    "write_file",
                    json!({"path": "b2.txt", "content": "b\n"}),
                ),
            ]),
            text("Wrote two files."),
        ]
    };
    let script: Vec<MockReply> = [a(1), b(1), a(2), b(2)].into_iter().flatten().collect();
    let server = MockModelServer::start_blocking(script).unwrap();
    let env = Env::new();
    config(&env, &server);
    let out = env
        .bosun()
        .args([
            "compare",
            "--repo",
            path_str(&env.repo),
            "--prompt",
            "improve it",
        ])
        .args([
            "--setup",
            "quick",
            "--setup",
            "provider=other,mode=full-auto,no_checks=true",
        ])
        .args(["--runs", "2", "--concurrency", "1", "--json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let c: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let runs = c["runs"].as_array().unwrap();
    let labels: Vec<&str> = runs.iter().map(|r| r["label"].as_str().unwrap()).collect();
    let b_name = "provider=other,mode=full-auto,no_checks=true";
    assert_eq!(
        labels,
        [
            "quick#1",
            format!("{b_name}#1").as_str(),
            "quick#2",
            format!("{b_name}#2").as_str()
        ]
    );

    // Every figure is what the run's journal says.
    let store = Store::open(&env.home.join("bosun.db")).unwrap();
    let mut bases = Vec::new();
    for r in runs {
        let id = r["task_id"].as_str().unwrap();
        let row = store.task(&bosun_protocol::TaskId(id.into())).unwrap();
        bases.push(row.base_commit.clone());
        let evs = events(&env, id);
        let count = |f: &dyn Fn(&EventMsg) -> bool| evs.iter().filter(|e| f(&e.msg)).count() as u64;
        let f = &r["figures"];
        assert_eq!(f["status"], "completed", "{r:#}");
        assert_eq!(
            f["steps"].as_u64().unwrap(),
            count(&|m| matches!(m, EventMsg::Usage(_)))
        );
        assert_eq!(
            f["tool_calls"].as_u64().unwrap(),
            count(&|m| matches!(m, EventMsg::ToolCallEnd(_)))
        );
        assert_eq!(
            f["tool_call_errors"].as_u64().unwrap(),
            count(
                &|m| matches!(m, EventMsg::ToolCallEnd(t) if t.status != bosun_protocol::ToolCallStatus::Success)
            )
        );
        assert_eq!(
            f["tokens"].as_u64().unwrap(),
            row.input_tokens
                + row.output_tokens
                + row.cached_input_tokens
                + row.cache_write_tokens
                + row.cache_write_1h_tokens
                + row.reasoning_tokens
        );
        assert!((f["cost_usd"].as_f64().unwrap() - row.cost_usd).abs() < 1e-12);
        assert_eq!(
            f["nudges"].as_u64().unwrap(),
            count(&|m| matches!(m, EventMsg::Nudge(_)))
        );
    }
    // The same base for every run, each in its own worktree.
    assert!(bases.iter().all(|b| b == &bases[0]));
    let worktrees: std::collections::BTreeSet<String> = runs
        .iter()
        .map(|r| {
            store
                .task(&bosun_protocol::TaskId(
                    r["task_id"].as_str().unwrap().into(),
                ))
                .unwrap()
                .worktree
        })
        .collect();
    assert_eq!(worktrees.len(), 4);
    let (ra, rb) = (&runs[0]["figures"], &runs[1]["figures"]);
    assert_eq!(
        (ra["steps"].as_u64(), rb["steps"].as_u64()),
        (Some(2), Some(3))
    );
    assert_eq!(
        (
            ra["tool_call_errors"].as_u64(),
            rb["tool_call_errors"].as_u64()
        ),
        (Some(0), Some(1))
    );
    assert_eq!(
        (ra["files_changed"].as_u64(), rb["files_changed"].as_u64()),
        (Some(1), Some(2))
    );
    assert_eq!(ra["tokens"].as_u64(), Some(1000 + 50 + 1200 + 10));
    assert_eq!(rb["first_pass"], true);
    // The model each setup named answered it.
    let models: Vec<String> = server
        .model_requests()
        .iter()
        .map(|r| r.body["model"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(models.iter().filter(|m| *m == "other-model").count(), 6);
    // Each setup summed up, and the diffs of each run.
    let setups = c["setups"].as_array().unwrap();
    assert_eq!(setups[0]["name"], "quick");
    assert_eq!(
        (setups[0]["runs"].as_u64(), setups[0]["completed"].as_u64()),
        (Some(2), Some(2))
    );
    assert_eq!(setups[1]["tool_call_errors"].as_u64(), Some(2));
    assert!(runs[0]["diff"].as_str().unwrap().contains("+a1"));
    assert!(runs[3]["diff"].as_str().unwrap().contains("b2.txt"));

    // The table shows the same.
    let (ok, table, _) = env.text(&["compare", "status", "--diffs"]);
    assert!(ok);
    assert!(
        table.contains("quick#2")
            && table.contains("1 files +1 -0")
            && table.contains("=== quick#1 ==="),
        "{table}"
    );

    // Merging quick#2 writes its a.txt into main and leaves the other runs as they were.
    let others: Vec<(String, String)> = runs
        .iter()
        .filter(|r| r["label"] != "quick#2")
        .map(|r| {
            let id = r["task_id"].as_str().unwrap().to_string();
            let (_, diff, _) = env.text(&["diff", &id]);
            (id, diff)
        })
        .collect();
    let id = c["batch"]["id"].as_str().unwrap();
    let (ok, merged, err) = env.text(&["compare", "merge", &id[..8], "quick#2"]);
    assert!(ok, "{merged}\n{err}");
    assert!(merged.contains("merged 1 hunk"), "{merged}");
    assert_eq!(git(&env.repo, &["show", "main:a.txt"]).trim(), "a2");
    for (task, diff) in &others {
        let t = store.task(&bosun_protocol::TaskId(task.clone())).unwrap();
        assert_eq!(t.review_state, "unreviewed", "{task}");
        assert_ne!(t.status, TaskStatus::Running);
        let (_, now, _) = env.text(&["diff", task]);
        assert_eq!(&now, diff, "{task}'s changes moved");
    }
    assert!(others[0].1.contains("+a1"));
    // A run that is not there is named as such.
    let out = env
        .bosun()
        .args(["compare", "merge", "quick#9"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("its runs are quick#1"));
}

#[test]
fn a_comparison_needs_two_to_four_known_setups() {
    let server = MockModelServer::start_blocking(Vec::new()).unwrap();
    let env = Env::new();
    config(&env, &server);
    let repo = path_str(&env.repo);
    for (setups, says) in [
        (vec!["quick"], "2 to 4 setups"),
        (
            vec!["quick", "quick", "quick", "quick", "quick"],
            "2 to 4 setups",
        ),
        (vec!["quick", "fast"], "no setup named \"fast\""),
        (vec!["quick", "mode=yolo"], "unknown mode"),
        (vec!["quick", "provder=x"], "unknown key"),
    ] {
        let mut args = vec!["compare", "--repo", repo, "--prompt", "x"];
        for s in &setups {
            args.extend(["--setup", s]);
        }
        let out = env.bosun().args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{setups:?}: {stderr}");
        assert!(stderr.contains(says), "{setups:?}: {stderr}");
    }
    assert!(server.model_requests().is_empty());
    let out = env.bosun().args(["compare", "status"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_batch_stopped_with_sigterm_exits_130_shows_interrupted_and_resumes_its_tasks() {
    let server = MockModelServer::start_blocking_with(
        Vec::new(),
        MockOptions {
            routes: vec![("S1".to_string(), slow_write("s1", "s1.txt", 150))],
            ..MockOptions::default()
        },
    )
    .unwrap();
    let env = Env::new();
    config(&env, &server);
    let child = env
        .bosun()
        .args([
            "batch",
            "--prompt",
            "S1: write it",
            "--repo",
            path_str(&env.repo),
            "--mode",
            "full-auto",
            "--no-checks",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while marker_requests(&server, "S1") == 0 {
        assert!(Instant::now() < deadline, "the task never asked the model");
        std::thread::sleep(Duration::from_millis(20));
    }
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("bosun batch resume"), "{stderr}");
    let status = batch_json(&env);
    assert_eq!(status["batch"]["status"], "interrupted", "{status:#}");
    assert_eq!(status["items"][0]["task"]["status"], "interrupted");
    let task = status["items"][0]["task_id"].clone();

    server.set_route("S1", slow_write("s1", "s1.txt", 0));
    let (ok, _, stderr) = env.text(&["batch", "resume"]);
    assert!(ok, "{stderr}");
    let status = batch_json(&env);
    assert_eq!(
        status["items"][0]["task"]["status"], "completed",
        "{status:#}"
    );
    assert_eq!(status["items"][0]["task_id"], task);
    // Finished: there is nothing left to resume.
    let out = env
        .bosun()
        .args(["batch", "resume", task.as_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let id = status["batch"]["id"].as_str().unwrap();
    let out = env.bosun().args(["batch", "resume", id]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is finished"));
}
