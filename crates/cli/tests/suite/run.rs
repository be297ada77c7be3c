//! The main loop end to end: edits, commands, checkpoints, the outbound requests, the journal.

use super::support::*;
use bosun_protocol::{EventMsg, TaskStatus, ToolCallStatus};
use bosun_testkit::{MockModelServer, MockReply, MockUsage};
use pretty_assertions::assert_eq;
use serde_json::json;

fn edit_then_command_script() -> Vec<MockReply> {
    vec![
        tools(vec![call(
            "call_w1",
            "write_file",
            json!({"path": "src/greet.rs", "content": "pub fn greet() -> &'static str { \"hi\" }\n"}),
        )]),
        tools(vec![call(
            "call_c2",
            "run_command",
            json!({"command": "printf 'built\\n' && echo done > notes.txt && echo oops >&2"}),
        )]),
        text("Added src/greet.rs and notes.txt."),
    ]
}

#[test]
fn a_task_edits_runs_a_command_checkpoints_and_completes() {
    let env = Env::new();
    let before = checkout_state(&env.repo);
    let server = MockModelServer::start_blocking(edit_then_command_script()).unwrap();
    let run = env.run(&server, "add a greeting", &[]);

    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    assert_eq!(
        run.finished(),
        (
            TaskStatus::Completed,
            "Added src/greet.rs and notes.txt.".into()
        )
    );
    let task = run.task_id();

    // Events: numbered 1.. without gaps, each with the task id.
    for (i, ev) in run.events.iter().enumerate() {
        assert_eq!(ev.seq, i as u64 + 1);
        assert_eq!(ev.task_id.0, task);
    }
    let kinds = run.kinds();
    assert_eq!(kinds[0], "task_started");
    assert_eq!(kinds.last(), Some(&"task_finished"));
    assert_eq!(
        kinds.iter().filter(|k| **k == "checkpoint_created").count(),
        2
    );
    assert_eq!(kinds.iter().filter(|k| **k == "usage").count(), 3);

    // The command's output streamed, per stream.
    let streamed: Vec<(String, String)> = run
        .events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::ToolOutputDelta(d) => Some((format!("{:?}", d.stream), d.chunk.clone())),
            _ => None,
        })
        .collect();
    assert!(
        streamed
            .iter()
            .any(|(s, c)| s == "Stdout" && c.contains("built")),
        "{streamed:?}"
    );
    assert!(
        streamed
            .iter()
            .any(|(s, c)| s == "Stderr" && c.contains("oops")),
        "{streamed:?}"
    );
    let ends = run.tool_ends();
    assert_eq!(ends.len(), 2);
    assert_eq!(ends[1].status, ToolCallStatus::Success);
    assert_eq!(ends[1].exit_code, Some(0));

    // The worktree is outside the user's checkout and holds the agent's work.
    let wt = run.worktree();
    assert!(
        wt.starts_with(&env.home),
        "worktree {wt:?} not under BOSUN_HOME"
    );
    assert_eq!(
        std::fs::read_to_string(wt.join("notes.txt")).unwrap(),
        "done\n"
    );
    assert!(wt.join("src/greet.rs").exists());
    assert_eq!(
        git(&wt, &["rev-parse", "--abbrev-ref", "HEAD"]).trim(),
        format!("bosun/{task}")
    );

    // Checkpoint refs in the user's repository; each tree is exactly the worktree at that point.
    let ref1 = format!("refs/bosun/{task}/1");
    let ref2 = format!("refs/bosun/{task}/2");
    let files1 = git(&env.repo, &["ls-tree", "-r", "--name-only", &ref1]);
    assert!(
        files1.contains("src/greet.rs") && !files1.contains("notes.txt"),
        "{files1}"
    );
    let files2 = git(&env.repo, &["ls-tree", "-r", "--name-only", &ref2]);
    assert!(files2.contains("notes.txt"), "{files2}");
    assert_eq!(
        git(&env.repo, &["show", &format!("{ref2}:notes.txt")]),
        "done\n"
    );
    assert_eq!(
        git(&env.repo, &["rev-parse", &format!("{ref2}^")]).trim(),
        git(&env.repo, &["rev-parse", &ref1]).trim(),
        "checkpoint 2's parent is checkpoint 1"
    );
    let mut wt_listing = git(
        &wt,
        &["ls-files", "--cached", "--others", "--exclude-standard"],
    )
    .lines()
    .map(String::from)
    .collect::<Vec<_>>();
    wt_listing.sort();
    let mut cp_listing = files2.lines().map(String::from).collect::<Vec<_>>();
    cp_listing.sort();
    assert_eq!(cp_listing, wt_listing);

    // The user's checkout, index, HEAD and branches are untouched.
    assert_eq!(checkout_state(&env.repo), before);

    // What Bosun sent: tool results fed back with the right tool_call_id.
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    assert!(reqs.iter().all(|r| r.path == "/v1/chat/completions"));
    assert_eq!(reqs[0].body["stream"], json!(true));
    let m2 = messages(&reqs[1]);
    let tool_msg = m2
        .iter()
        .find(|m| m["role"] == "tool")
        .expect("tool result in request 2");
    assert_eq!(tool_msg["tool_call_id"], "call_w1");
    let assistant = m2.iter().find(|m| m["role"] == "assistant").unwrap();
    assert_eq!(assistant["tool_calls"][0]["id"], "call_w1");
    let m3 = messages(&reqs[2]);
    let results: Vec<_> = m3.iter().filter(|m| m["role"] == "tool").collect();
    assert_eq!(results.len(), 2);
    assert_eq!(results[1]["tool_call_id"], "call_c2");
    assert!(
        results[1]["content"].as_str().unwrap().contains("built"),
        "{}",
        results[1]
    );
}

#[test]
fn the_first_request_is_lean() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(vec![text("ok")]).unwrap();
    let run = env.run(&server, "say ok", &[]);
    // 6: answered, the task changed nothing.
    assert_eq!(run.code(), Some(6), "{}", run.stderr());
    let body = serde_json::to_string(&server.requests()[0].body).unwrap();
    assert!(
        body.len() < 8 * 1024,
        "first request is {} bytes: {body}",
        body.len()
    );
    let first = server.requests()[0].body.clone();
    let tools: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    for name in [
        "read_file",
        "list_dir",
        "search",
        "write_file",
        "edit_file",
        "apply_patch",
        "run_command",
        "update_plan",
    ] {
        assert!(tools.contains(&name), "{name} missing from {tools:?}");
    }
}

#[test]
fn anthropic_wire_format_pairs_tool_use_ids_and_counts_cache_tokens() {
    let env = Env::new();
    let mut first = tools(vec![
        call("toolu_01", "read_file", json!({"path": "README.md"})),
        call("toolu_02", "list_dir", json!({})),
    ]);
    if let MockReply::Reply { usage, .. } = &mut first {
        *usage = MockUsage {
            input_tokens: 1000,
            output_tokens: 50,
            cached_input_tokens: 800,
            cache_write_tokens: 100,
            reasoning_tokens: 0,
        };
    }
    let server =
        MockModelServer::start_blocking(vec![first, text("The README says hello.")]).unwrap();
    let run = env.run_args(&[
        "run",
        "--json",
        "--repo",
        path_str(&env.repo),
        "--prompt",
        "read the readme",
        "--api",
        "anthropic",
        "--base-url",
        &server.url(),
        "--model",
        "claude-sonnet-4-5",
    ]);
    // 6: answered, the task changed nothing.
    assert_eq!(run.code(), Some(6), "{}", run.stderr());
    let reqs = server.requests();
    assert_eq!(reqs[0].path, "/v1/messages");
    let msgs = reqs[1].body["messages"].as_array().unwrap();
    let last = msgs.last().unwrap();
    assert_eq!(last["role"], "user");
    let ids: Vec<&str> = last["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "tool_result")
        .map(|b| b["tool_use_id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        vec!["toolu_01", "toolu_02"],
        "both results in one user message"
    );
    let usage = run
        .events
        .iter()
        .find_map(|e| match &e.msg {
            EventMsg::Usage(u) => Some(u.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(usage.cached_input_tokens, 800);
    assert_eq!(usage.cache_write_tokens, 100);
    assert!(
        usage.priced && usage.cost_usd.is_some_and(|c| c > 0.0),
        "{usage:?}"
    );
    // Reads change nothing: no checkpoint.
    assert!(!run.kinds().contains(&"checkpoint_created"));
}

#[test]
fn a_tool_call_written_as_text_is_recovered_and_marked() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(vec![
        text("<tool_call>{\"name\": \"write_file\", \"arguments\": {\"path\": \"x.txt\", \"content\": \"x\\n\"}}</tool_call>"),
        text("Wrote x.txt."),
    ])
    .unwrap();
    let run = env.run(&server, "write x", &[]);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let begin = run
        .events
        .iter()
        .find_map(|e| match &e.msg {
            EventMsg::ToolCallBegin(b) => Some(b.clone()),
            _ => None,
        })
        .expect("recovered call");
    assert!(begin.recovered);
    assert_eq!(begin.tool, "write_file");
    assert_eq!(
        std::fs::read_to_string(run.worktree().join("x.txt")).unwrap(),
        "x\n"
    );
}

#[test]
fn step_and_cost_limits_stop_the_task() {
    let env = Env::new();
    let looping = || tools(vec![call("c", "list_dir", json!({}))]);
    let server = MockModelServer::start_blocking(vec![looping(), looping(), looping()]).unwrap();
    let run = env.run(&server, "loop", &["--max-steps", "2"]);
    assert_eq!(run.finished().0, TaskStatus::MaxSteps);
    assert_eq!(run.code(), Some(4));
    assert_eq!(server.requests().len(), 2);

    let mut pricey = tools(vec![call(
        "c",
        "write_file",
        json!({"path": "a", "content": "a"}),
    )]);
    if let MockReply::Reply { usage, .. } = &mut pricey {
        *usage = MockUsage {
            input_tokens: 1_000_000,
            output_tokens: 0,
            ..Default::default()
        };
    }
    let server = MockModelServer::start_blocking(vec![pricey, text("unreachable")]).unwrap();
    let base = format!("{}/v1", server.url());
    let run = env.run_args(&[
        "run",
        "--json",
        "--repo",
        path_str(&env.repo),
        "--prompt",
        "spend",
        "--api",
        "openai-chat",
        "--base-url",
        &base,
        "--model",
        "gpt-4o",
        "--max-cost-usd",
        "0.5",
    ]);
    let (status, summary) = run.finished();
    assert_eq!(status, TaskStatus::BudgetExceeded, "{summary}");
    assert_eq!(run.code(), Some(3));
    assert!(summary.contains("0.5"), "{summary}");
    assert!(
        run.tool_ends().is_empty(),
        "no tool runs once the budget is exceeded"
    );
}

#[test]
fn an_unknown_model_is_priced_zero_and_marked_unknown() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(vec![text("hi")]).unwrap();
    let run = env.run(&server, "hi", &[]);
    let usage = run
        .events
        .iter()
        .find_map(|e| match &e.msg {
            EventMsg::Usage(u) => Some(u.clone()),
            _ => None,
        })
        .unwrap();
    assert!(!usage.priced);
    assert_eq!(usage.cost_usd, None);
    let tasks = env.json(&["tasks", "--json"]);
    assert_eq!(tasks[0]["priced"], json!(false));
}

#[test]
fn a_task_that_changed_nothing_is_answered_not_completed() {
    let env = Env::new();
    // The model claims work it never did: no tool call, nothing changed.
    let server =
        MockModelServer::start_blocking(vec![text("I installed pytest and all 12 tests pass.")])
            .unwrap();
    let run = env.run(&server, "make the tests pass", &[]);
    assert_eq!(run.code(), Some(6), "{}", run.stderr());
    assert_eq!(
        run.finished(),
        (
            TaskStatus::Answered,
            "I installed pytest and all 12 tests pass.".into()
        )
    );
    let (ok, list, _) = env.text(&["tasks"]);
    assert!(ok && list.contains("answered"), "{list}");
}

/// The README's exit-code table, row by row, for what a user types (budget_exceeded,
/// max_steps and interrupted have their own tests beside their features).
#[test]
fn each_outcome_has_its_exit_code_and_tasks_filter_by_status() {
    let env = Env::new();
    let completed = MockModelServer::start_blocking(vec![
        tools(vec![call(
            "w",
            "write_file",
            json!({"path": "a.txt", "content": "a\n"}),
        )]),
        text("wrote a.txt"),
    ])
    .unwrap();
    assert_eq!(env.run(&completed, "write", &[]).code(), Some(0));
    let answered = MockModelServer::start_blocking(vec![text("nothing to do")]).unwrap();
    assert_eq!(env.run(&answered, "ask", &[]).code(), Some(6));
    let failing =
        MockModelServer::start_blocking(vec![MockReply::status(400, "bad request")]).unwrap();
    let failed = env.run(&failing, "fail", &[]);
    assert_eq!(failed.code(), Some(1), "{}", failed.stderr());
    assert_eq!(failed.finished().0, TaskStatus::Failed);

    // --status filters, one or several, and an unknown one names the statuses.
    let ids = |args: &[&str]| -> Vec<String> {
        let v = env.json(args);
        v.as_array()
            .unwrap()
            .iter()
            .map(|t| t["status"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        ids(&["tasks", "--json", "--status", "answered"]),
        ["answered"]
    );
    let mut two = ids(&["tasks", "--json", "--status", "completed,failed"]);
    two.sort();
    assert_eq!(two, ["completed", "failed"]);
    assert_eq!(
        ids(&["tasks", "--json", "--status", "checks_failed"]),
        Vec::<String>::new()
    );
    let (ok, _, err) = env.text(&["tasks", "--status", "done"]);
    assert!(
        !ok && err.contains("unknown status \"done\"") && err.contains("answered"),
        "{err}"
    );
    let code = env
        .bosun()
        .args(["tasks", "--status", "done"])
        .status()
        .unwrap()
        .code();
    assert_eq!(
        code,
        Some(2),
        "a status that matches nothing is a usage error"
    );

    // Outside a task: a name that matches nothing is 2, Bosun's own failure is 1.
    let code = env
        .bosun()
        .args(["show", "nosuchtask"])
        .status()
        .unwrap()
        .code();
    assert_eq!(code, Some(2));
    std::fs::write(env.home.join("bosun.db"), b"this is not a journal").unwrap();
    let out = env.bosun().args(["tasks"]).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn per_repository_settings_apply_and_a_project_file_can_only_tighten() {
    let env = Env::new();
    std::fs::create_dir_all(&env.home).unwrap();
    let root = env.repo.canonicalize().unwrap();
    let looping = || {
        MockModelServer::start_blocking(
            (0..5)
                .map(|i| {
                    tools(vec![call(
                        &format!("c{i}"),
                        "run_command",
                        json!({"command": "true"}),
                    )])
                })
                .collect(),
        )
        .unwrap()
    };
    // Your own section for this repository: one model request.
    std::fs::write(
        env.home.join("config.toml"),
        format!(
            "max_steps = 3\n[repos.\"{}\"]\nmax_steps = 1\n",
            root.display()
        ),
    )
    .unwrap();
    let run = env.run(&looping(), "loop", &[]);
    assert_eq!(run.code(), Some(4), "{}", run.stderr());
    assert!(
        run.finished().1.contains("after 1 model request"),
        "{:?}",
        run.finished()
    );
    // A flag still wins.
    let run = env.run(&looping(), "loop", &["--max-steps", "2"]);
    assert!(
        run.finished().1.contains("after 2 model requests"),
        "{:?}",
        run.finished()
    );

    // The project file may lower your global limit, never raise it.
    std::fs::write(env.home.join("config.toml"), "max_steps = 3\n").unwrap();
    std::fs::create_dir_all(env.repo.join(".bosun")).unwrap();
    std::fs::write(env.repo.join(".bosun/config.toml"), "max_steps = 2\n").unwrap();
    let run = env.run(&looping(), "loop", &[]);
    assert!(
        run.finished().1.contains("after 2 model requests"),
        "{:?}",
        run.finished()
    );
    std::fs::write(env.repo.join(".bosun/config.toml"), "max_steps = 50\n").unwrap();
    let run = env.run(&looping(), "loop", &[]);
    assert!(
        run.finished().1.contains("after 3 model requests"),
        "{:?}",
        run.finished()
    );

    // Unknown keys name the key and the file; a project cannot choose the provider.
    std::fs::write(env.repo.join(".bosun/config.toml"), "max_step = 2\n").unwrap();
    let run = env.run(&looping(), "loop", &[]);
    assert_eq!(run.code(), Some(2));
    assert!(
        run.stderr().contains("max_step") && run.stderr().contains(".bosun/config.toml"),
        "{}",
        run.stderr()
    );
    std::fs::write(env.repo.join(".bosun/config.toml"), "provider = \"evil\"\n").unwrap();
    let run = env.run(&looping(), "loop", &[]);
    assert_eq!(run.code(), Some(2));
    assert!(
        run.stderr().contains("cannot be set by a repository"),
        "{}",
        run.stderr()
    );
}

#[test]
fn a_repositorys_own_provider_is_used_when_no_flag_names_one() {
    let env = Env::new();
    std::fs::create_dir_all(&env.home).unwrap();
    let root = env.repo.canonicalize().unwrap();
    let global = MockModelServer::start_blocking(vec![text("from the global default")]).unwrap();
    let mine =
        MockModelServer::start_blocking(vec![text("from the repository's provider")]).unwrap();
    std::fs::write(
        env.home.join("config.toml"),
        format!(
            "default_provider = \"global\"\n[providers.global]\napi = \"openai-chat\"\nbase_url = \"{}/v1\"\nmodel = \"m\"\n[providers.mine]\napi = \"openai-chat\"\nbase_url = \"{}/v1\"\nmodel = \"m\"\n[repos.\"{}\"]\nprovider = \"mine\"\n",
            global.url(),
            mine.url(),
            root.display()
        ),
    )
    .unwrap();
    let run = env.run_args(&[
        "run",
        "--json",
        "--repo",
        path_str(&env.repo),
        "--prompt",
        "hi",
    ]);
    assert_eq!(
        run.finished().1,
        "from the repository's provider",
        "{}",
        run.stderr()
    );
    assert_eq!(global.model_requests().len(), 0);
    let run = env.run_args(&[
        "run",
        "--json",
        "--repo",
        path_str(&env.repo),
        "--prompt",
        "hi",
        "--provider",
        "global",
    ]);
    assert_eq!(
        run.finished().1,
        "from the global default",
        "a flag still wins"
    );
}

/// Recovered calls are numbered across the task: a failed `apply_patch` in the first turn and
/// the writes of the next two have three ids, and the review credits each hunk to the call that
/// really made it (not to an earlier turn's call that reused its id).
#[test]
fn recovered_calls_have_ids_unique_across_the_task_and_the_review_credits_the_right_one() {
    let env = Env::new();
    let fenced = |name: &str, args: serde_json::Value| {
        text(&format!(
            "```json\n{}\n```",
            json!({"name": name, "arguments": args})
        ))
    };
    let server = MockModelServer::start_blocking(vec![
        fenced(
            "apply_patch",
            json!({"patch": "--- a/missing.txt\n+++ b/missing.txt\n@@ -1 +1 @@\n-a\n+b\n"}),
        ),
        fenced("write_file", json!({"path": "one.txt", "content": "1\n"})),
        fenced("write_file", json!({"path": "two.txt", "content": "2\n"})),
        text("Wrote one.txt and two.txt."),
    ])
    .unwrap();
    let run = env.run(&server, "write two files", &[]);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let ids: Vec<String> = run
        .events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::ToolCallBegin(b) => Some(b.call_id.0.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(ids, ["recovered_1", "recovered_2", "recovered_3"]);
    let review = env.json(&["review", &run.task_id(), "--json"]);
    let credited = |path: &str| {
        review["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["path"] == path)
            .map(|f| f["hunks"][0]["provenance"][0]["call_id"].clone())
            .unwrap()
    };
    assert_eq!(credited("one.txt"), json!("recovered_2"), "{review:#}");
    assert_eq!(credited("two.txt"), json!("recovered_3"), "{review:#}");
}

/// Sampling is deterministic unless the provider says otherwise: every request carries
/// temperature 0 (a local server's own default is often 0.8), and `temperature` in
/// `[providers.X]` changes it.
#[test]
fn requests_carry_temperature_0_by_default() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(vec![text("hi")]).unwrap();
    env.run(&server, "hi", &[]);
    let sent = server.model_requests();
    assert_eq!(sent[0].body["temperature"], json!(0.0), "{}", sent[0].body);

    let server = MockModelServer::start_blocking(vec![text("hi")]).unwrap();
    std::fs::create_dir_all(&env.home).unwrap();
    std::fs::write(
        env.home.join("config.toml"),
        format!(
            "[providers.warm]\napi = \"openai-chat\"\nbase_url = \"{}/v1\"\nmodel = \"m\"\ntemperature = 0.7\n",
            server.url()
        ),
    )
    .unwrap();
    env.run_args(&[
        "run",
        "--json",
        "--repo",
        path_str(&env.repo),
        "--prompt",
        "hi",
        "--provider",
        "warm",
    ]);
    assert_eq!(server.model_requests()[0].body["temperature"], json!(0.7));

    std::fs::write(
        env.home.join("config.toml"),
        "[providers.hot]\napi = \"openai-chat\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\ntemperature = 3\n",
    )
    .unwrap();
    let run = env.run_args(&[
        "run",
        "--json",
        "--repo",
        path_str(&env.repo),
        "--prompt",
        "hi",
        "--provider",
        "hot",
    ]);
    assert_eq!(run.code(), Some(2));
    assert!(run.stderr().contains("temperature = 3"), "{}", run.stderr());
}

/// "Completed" needs a net change: a file written and removed again is no change, so the task
/// only answered (exit 6), and a follow-up that changes nothing answers too, whatever the run
/// before it changed.
#[test]
fn a_run_whose_changes_cancel_out_only_answered() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(vec![
        tools(vec![call(
            "w",
            "write_file",
            json!({"path": "scratch.txt", "content": "tmp\n"}),
        )]),
        tools(vec![call(
            "r",
            "run_command",
            json!({"command": "rm scratch.txt"}),
        )]),
        text("Created and cleaned up scratch.txt."),
        tools(vec![call(
            "k",
            "write_file",
            json!({"path": "kept.txt", "content": "kept\n"}),
        )]),
        text("Wrote kept.txt."),
        text("Nothing else to do."),
    ])
    .unwrap();
    let run = env.run(&server, "try a scratch file", &[]);
    assert_eq!(run.finished().0, TaskStatus::Answered, "{}", run.stderr());
    assert_eq!(run.code(), Some(6));
    assert!(
        run.kinds().contains(&"checkpoint_created"),
        "it did write checkpoints"
    );

    let task = run.task_id();
    let base = format!("{}/v1", server.url());
    let follow = |prompt: &str| {
        env.run_args(&[
            "continue",
            &task,
            "--json",
            "--prompt",
            prompt,
            "--api",
            "openai-chat",
            "--base-url",
            &base,
            "--model",
            "mock-model",
            "--mode",
            "full-auto",
        ])
    };
    let changed = follow("now keep a file");
    assert_eq!(
        changed.finished().0,
        TaskStatus::Completed,
        "{}",
        changed.stderr()
    );
    let nothing = follow("anything else?");
    assert_eq!(
        nothing.finished().0,
        TaskStatus::Answered,
        "{}",
        nothing.stderr()
    );
    assert_eq!(nothing.code(), Some(6));
}

/// The first request says what the repository holds and shows the files the prompt names, so a
/// small model need not guess paths; a read-denied file is neither listed nor shown.
#[test]
fn the_first_request_lists_the_repository_and_shows_the_named_files() {
    let env = Env::new();
    std::fs::write(env.repo.join(".env"), "API_TOKEN=not-for-models\n").unwrap();
    git(&env.repo, &["add", "-f", ".env"]);
    git(&env.repo, &["commit", "-qm", "env"]);
    let server = MockModelServer::start_blocking(vec![text("ok")]).unwrap();
    env.run(&server, "Explain what greet in lib.rs returns.", &[]);
    let sent = server.model_requests();
    let system = messages(&sent[0])
        .into_iter()
        .find(|m| m["role"] == "system")
        .and_then(|m| m["content"].as_str().map(str::to_string))
        .unwrap();
    assert!(system.contains("# The repository"), "{system}");
    assert!(
        system.contains("src/main.rs\n") && system.contains("README.md\n"),
        "{system}"
    );
    let lib = std::fs::read_to_string(env.repo.join("src/lib.rs")).unwrap();
    assert!(
        system.contains("## src/lib.rs (named in the prompt)"),
        "{system}"
    );
    assert!(system.contains(lib.lines().next().unwrap()), "{system}");
    assert!(
        !system.contains(".env") && !system.contains("not-for-models"),
        "{system}"
    );
}
