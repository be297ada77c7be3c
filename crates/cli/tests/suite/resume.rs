//! Steering: a follow-up to a finished task, and resuming a task whose process was killed.

use super::support::*;
use bosun_protocol::{EventMsg, ResumeKind, TaskStatus};
use bosun_testkit::MockModelServer;
use pretty_assertions::assert_eq;
use serde_json::json;

#[test]
fn a_follow_up_continues_in_the_same_worktree_with_the_conversation_so_far() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(vec![
        tools(vec![call(
            "w1",
            "write_file",
            json!({"path": "a.txt", "content": "a\n"}),
        )]),
        text("Wrote a.txt."),
    ])
    .unwrap();
    let first = env.run(&server, "write a", &[]);
    assert_eq!(first.code(), Some(0), "{}", first.stderr());
    let task = first.task_id();

    server.push(tools(vec![call(
        "w2",
        "write_file",
        json!({"path": "b.txt", "content": "b\n"}),
    )]));
    server.push(text("Wrote b.txt too."));
    // No provider flags: the follow-up reaches the model the task was started with.
    let out = env
        .bosun()
        .args([
            "continue",
            &task[..10],
            "--prompt",
            "now write b",
            "--json",
            "--mode",
            "full-auto",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events = parse_events(&out.stdout);
    assert_eq!(
        events[0].seq,
        first.events.last().unwrap().seq + 1,
        "seq continues"
    );
    assert!(matches!(&events[0].msg, EventMsg::TaskResumed(r) if r.kind == ResumeKind::FollowUp));

    let reqs = server.requests();
    let msgs = messages(&reqs[2]);
    let roles: Vec<&str> = msgs.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(
        roles,
        vec!["system", "user", "assistant", "tool", "assistant", "user"],
        "{msgs:?}"
    );
    assert_eq!(msgs[2]["tool_calls"][0]["id"], "w1");
    assert_eq!(msgs[3]["tool_call_id"], "w1");
    assert_eq!(msgs[4]["content"], "Wrote a.txt.");
    assert_eq!(msgs[5]["content"], "now write b");

    let wt = first.worktree();
    assert!(wt.join("a.txt").exists() && wt.join("b.txt").exists());
    let cps = env.json(&["checkpoints", &task, "--json"]);
    assert_eq!(cps.as_array().unwrap().len(), 2, "{cps}");
    let tasks = env.json(&["tasks", "--json"]);
    assert_eq!(tasks[0]["status"], "completed");
    assert_eq!(tasks[0]["summary"], "Wrote b.txt too.");
}

#[test]
fn a_killed_task_resumes_from_its_last_checkpoint() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(vec![
        tools(vec![call(
            "w",
            "write_file",
            json!({"path": "kept.txt", "content": "kept\n"}),
        )]),
        tools(vec![call(
            "c",
            "run_command",
            json!({"command": "echo partial > half.txt; echo started; sleep 30"}),
        )]),
    ])
    .unwrap();
    let printed = run_and_kill_when_printed(&env, &server, "started");
    let task = printed.last().unwrap().task_id.0.clone();
    let worktree = Run {
        events: printed,
        output: env.bosun().arg("--version").output().unwrap(),
    }
    .worktree();
    assert!(worktree.join("half.txt").exists());

    server.push(text("Resumed and finished."));
    let out = env
        .bosun()
        .args(["resume", &task, "--json", "--mode", "full-auto"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events = parse_events(&out.stdout);
    let resumed = events
        .iter()
        .find_map(|e| match &e.msg {
            EventMsg::TaskResumed(r) => Some(r.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(resumed.kind, ResumeKind::Resume);
    assert_eq!(resumed.restored_checkpoint, Some(1));
    assert_eq!(resumed.restored_files, vec!["half.txt".to_string()]);
    assert!(
        !worktree.join("half.txt").exists(),
        "the interrupted step's change is undone"
    );
    assert!(worktree.join("kept.txt").exists());

    let reqs = server.requests();
    let msgs = messages(reqs.last().unwrap());
    let interrupted = msgs
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == "c")
        .unwrap();
    assert!(
        interrupted["content"]
            .as_str()
            .unwrap()
            .contains("not finished"),
        "{interrupted}"
    );
    let last = msgs.last().unwrap();
    assert!(
        last["content"].as_str().unwrap().contains("checkpoint 1"),
        "{last}"
    );
    let tasks = env.json(&["tasks", "--json"]);
    assert_eq!(tasks[0]["status"], "completed");
}

#[test]
fn the_cost_limit_covers_the_whole_task_across_a_follow_up() {
    let env = Env::new();
    let pricey = |reply: bosun_testkit::MockReply| match reply {
        bosun_testkit::MockReply::Reply {
            text,
            tool_calls,
            chunk_delay_ms,
            cut_after_events,
            ..
        } => bosun_testkit::MockReply::Reply {
            text,
            tool_calls,
            usage: usage(100_000, 0),
            chunk_delay_ms,
            cut_after_events,
        },
        other => other,
    };
    // gpt-4o: $2.50 per million input tokens, so each response costs $0.25.
    let server = MockModelServer::start_blocking(vec![pricey(text("first answer"))]).unwrap();
    let base = format!("{}/v1", server.url());
    let first = env.run_args(&[
        "run",
        "--json",
        "--repo",
        path_str(&env.repo),
        "--prompt",
        "one",
        "--api",
        "openai-chat",
        "--base-url",
        &base,
        "--model",
        "gpt-4o",
        "--max-cost-usd",
        "0.4",
    ]);
    // 6: answered, the task changed nothing.
    assert_eq!(first.code(), Some(6), "{}", first.stderr());
    server.push(pricey(text("second answer")));
    let out = env
        .bosun()
        .args(["continue", &first.task_id(), "--prompt", "two", "--json"])
        .output()
        .unwrap();
    let events = parse_events(&out.stdout);
    let usage_total = events
        .iter()
        .find_map(|e| match &e.msg {
            EventMsg::Usage(u) => Some(u.total_cost_usd),
            _ => None,
        })
        .unwrap();
    assert!(
        (usage_total - 0.5).abs() < 1e-9,
        "the running total continues: {usage_total}"
    );
    let finished = events
        .iter()
        .find_map(|e| match &e.msg {
            EventMsg::TaskFinished(f) => Some(f.status),
            _ => None,
        })
        .unwrap();
    assert_eq!(finished, TaskStatus::BudgetExceeded);
    assert_eq!(out.status.code(), Some(3));
}

#[test]
fn a_follow_up_keeps_the_step_limit_the_task_was_started_with() {
    let env = Env::new();
    let plan = || {
        tools(vec![call(
            "p",
            "update_plan",
            json!({"items": [{"step": "think", "status": "in_progress"}]}),
        )])
    };
    let server = MockModelServer::start_blocking(vec![text("Nothing to do.")]).unwrap();
    let first = env.run(&server, "look", &["--max-steps", "2"]);
    // 6: answered, the task changed nothing.
    assert_eq!(first.code(), Some(6), "{}", first.stderr());
    for _ in 0..5 {
        server.push(plan());
    }
    let out = env
        .bosun()
        .args([
            "continue",
            &first.task_id(),
            "--prompt",
            "keep planning",
            "--json",
        ])
        .output()
        .unwrap();
    let events = parse_events(&out.stdout);
    let finished = events.iter().find_map(|e| match &e.msg {
        EventMsg::TaskFinished(f) => Some(f.status),
        _ => None,
    });
    assert_eq!(finished, Some(TaskStatus::MaxSteps));
    assert_eq!(
        server.requests().len(),
        1 + 2,
        "two more model requests, not 100"
    );
}

/// The numbers of the task's checkpoints: as journaled (`bosun checkpoints`) and as refs in the
/// user's repository.
fn checkpoint_numbers(env: &Env, task: &str) -> (Vec<u64>, Vec<u64>) {
    let rows = env.json(&["checkpoints", task, "--json"]);
    let journaled = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["n"].as_u64().unwrap())
        .collect();
    let mut refs: Vec<u64> = git(
        &env.repo,
        &[
            "for-each-ref",
            "--format=%(refname)",
            &format!("refs/bosun/{task}/"),
        ],
    )
    .lines()
    .map(|r| r.rsplit('/').next().unwrap().parse().unwrap())
    .collect();
    refs.sort();
    (journaled, refs)
}

fn resumed_event(events: &[bosun_protocol::Event]) -> bosun_protocol::TaskResumed {
    events
        .iter()
        .find_map(|e| match &e.msg {
            EventMsg::TaskResumed(r) => Some(r.clone()),
            _ => None,
        })
        .unwrap()
}

#[test]
fn a_first_step_killed_before_any_checkpoint_is_undone_back_to_the_base() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(vec![tools(vec![call(
        "c",
        "run_command",
        json!({"command": "echo partial > half.txt; echo started; sleep 30"}),
    )])])
    .unwrap();
    let printed = run_and_kill_when_printed(&env, &server, "started");
    let task = printed.last().unwrap().task_id.0.clone();
    let worktree = worktree_of(&printed);
    assert!(worktree.join("half.txt").exists());

    server.push(text("Resumed; nothing left to do."));
    let out = env
        .bosun()
        .args(["resume", &task, "--json", "--mode", "full-auto"])
        .output()
        .unwrap();
    let events = parse_events(&out.stdout);
    let resumed = resumed_event(&events);
    assert_eq!(resumed.restored_checkpoint, Some(0), "0: the base");
    assert_eq!(resumed.restored_files, vec!["half.txt".to_string()]);
    assert!(
        !worktree.join("half.txt").exists(),
        "the interrupted step's change is undone"
    );
    let msgs = messages(server.requests().last().unwrap());
    let told = msgs.last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        told.contains("put back to the state the task started from") && told.contains("half.txt"),
        "{told}"
    );
    // The undone step leaves nothing changed: the task only answered.
    assert_eq!(
        out.status.code(),
        Some(6),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // What the step had written is kept as a checkpoint, journaled like every other.
    let (journaled, refs) = checkpoint_numbers(&env, &task);
    assert_eq!(journaled, vec![1, 2]);
    assert_eq!(refs, journaled);
}

#[test]
fn checkpoint_numbers_have_no_gaps_after_a_resume_every_ref_has_its_event_and_row() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(vec![
        tools(vec![call(
            "w",
            "write_file",
            json!({"path": "kept.txt", "content": "kept\n"}),
        )]),
        tools(vec![call(
            "c",
            "run_command",
            json!({"command": "echo partial > half.txt; echo started; sleep 30"}),
        )]),
    ])
    .unwrap();
    let printed = run_and_kill_when_printed(&env, &server, "started");
    let task = printed.last().unwrap().task_id.0.clone();
    assert_eq!(checkpoint_numbers(&env, &task), (vec![1], vec![1]));

    server.push(tools(vec![call(
        "w2",
        "write_file",
        json!({"path": "after.txt", "content": "after\n"}),
    )]));
    server.push(text("Resumed and finished."));
    let out = env
        .bosun()
        .args(["resume", &task, "--json", "--mode", "full-auto"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events = parse_events(&out.stdout);
    let created: Vec<u32> = events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::CheckpointCreated(c) => Some(c.checkpoint),
            _ => None,
        })
        .collect();
    // 2: the interrupted step's work, saved; 3: checkpoint 1 restored; 4: the new write.
    assert_eq!(created, vec![2, 3, 4]);
    assert_eq!(
        checkpoint_numbers(&env, &task),
        (vec![1, 2, 3, 4], vec![1, 2, 3, 4])
    );
}

#[test]
fn resuming_a_finished_task_is_refused_and_leaves_it_exactly_as_it_was() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(vec![
        tools(vec![call(
            "w",
            "write_file",
            json!({"path": "done.txt", "content": "done\n"}),
        )]),
        text("Wrote done.txt."),
        text("Nothing to change."),
    ])
    .unwrap();
    let completed = env.run(&server, "write done", &[]);
    assert_eq!(completed.code(), Some(0), "{}", completed.stderr());
    let answered = env.run(&server, "just answer", &[]);
    assert_eq!(answered.code(), Some(6), "{}", answered.stderr());

    for (task, status) in [
        (completed.task_id(), "completed"),
        (answered.task_id(), "answered"),
    ] {
        let before = env.json(&["tasks", "--json"]);
        let requests = server.requests().len();
        let out = env
            .bosun()
            .args(["resume", &task, "--json", "--mode", "full-auto"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains(&format!("is {status}, not interrupted")),
            "{err}"
        );
        assert!(
            err.contains(&format!("bosun continue {task} --prompt")),
            "{err}"
        );
        assert!(out.stdout.is_empty(), "no events");
        assert_eq!(
            env.json(&["tasks", "--json"]),
            before,
            "the rows did not change"
        );
        assert_eq!(server.requests().len(), requests, "the model was not asked");
    }
}
