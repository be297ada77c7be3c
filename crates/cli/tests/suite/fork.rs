//! Forks: a new task from a checkpoint of an earlier one — its worktree at that checkpoint, the
//! conversation up to it, a new prompt, the earlier task's base.

use super::support::*;
use bosun_protocol::{EventMsg, TaskStatus};
use bosun_testkit::MockModelServer;
use pretty_assertions::assert_eq;
use serde_json::json;

fn three_step_script() -> Vec<bosun_testkit::MockReply> {
    vec![
        tools(vec![call(
            "call_1",
            "write_file",
            json!({"path": "one.txt", "content": "one\n"}),
        )]),
        tools(vec![call(
            "call_2",
            "write_file",
            json!({"path": "two.txt", "content": "two\n"}),
        )]),
        tools(vec![call(
            "call_3",
            "write_file",
            json!({"path": "one.txt", "content": "ONE\n"}),
        )]),
        text("Wrote the files."),
    ]
}

#[test]
fn a_fork_from_checkpoint_1_starts_with_that_worktree_and_the_conversation_up_to_it() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(three_step_script()).unwrap();
    let first = env.run(&server, "write some files", &["--no-checks"]);
    assert_eq!(first.code(), Some(0), "stderr: {}", first.stderr());
    let source = first.task_id();

    let server = MockModelServer::start_blocking(vec![
        tools(vec![call(
            "call_f",
            "write_file",
            json!({"path": "three.txt", "content": "three\n"}),
        )]),
        text("Forked and wrote three."),
    ])
    .unwrap();
    let base = format!("{}/v1", server.url());
    let fork = env.run_args(&[
        "fork",
        &source,
        "--checkpoint",
        "1",
        "--prompt",
        "now write three.txt",
        "--json",
        "--api",
        "openai-chat",
        "--base-url",
        &base,
        "--model",
        "mock-model",
        "--mode",
        "full-auto",
    ]);
    assert_eq!(fork.code(), Some(0), "stderr: {}", fork.stderr());
    assert_eq!(fork.finished().0, TaskStatus::Completed);
    let started = fork
        .events
        .iter()
        .find_map(|e| match &e.msg {
            EventMsg::TaskStarted(t) => Some(t.clone()),
            _ => None,
        })
        .unwrap();
    let from = started.forked_from.unwrap();
    assert_eq!(
        (from.task.0.as_str(), from.checkpoint),
        (source.as_str(), 1)
    );
    let source_base = first
        .events
        .iter()
        .find_map(|e| match &e.msg {
            EventMsg::TaskStarted(t) => Some(t.base_commit.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        started.base_commit, source_base,
        "the fork's base is the source's base"
    );

    // The worktree: checkpoint 1 (one.txt = "one") plus the fork's own change; not two.txt.
    let wt = fork.worktree();
    assert_eq!(
        std::fs::read_to_string(wt.join("one.txt")).unwrap(),
        "one\n"
    );
    assert!(!wt.join("two.txt").exists());
    assert_eq!(
        std::fs::read_to_string(wt.join("three.txt")).unwrap(),
        "three\n"
    );

    // The conversation: the source's prompt and its first call, cut there, then the new prompt.
    let requests = server.model_requests();
    let messages = requests[0].body["messages"].as_array().unwrap().clone();
    let sent = serde_json::to_string(&messages).unwrap();
    assert!(sent.contains("write some files"), "{sent}");
    assert!(sent.contains("call_1"), "{sent}");
    assert!(!sent.contains("call_2"), "cut at checkpoint 1: {sent}");
    assert_eq!(messages.last().unwrap()["content"], "now write three.txt");

    // The source is untouched.
    let (_, diff, _) = env.text(&["diff", &source, "--stat"]);
    assert!(diff.contains("two.txt"), "{diff}");

    // A follow-up to the fork still carries the conversation from before the fork.
    let server = MockModelServer::start_blocking(vec![text("Done again.")]).unwrap();
    let base = format!("{}/v1", server.url());
    let more = env.run_args(&[
        "continue",
        &fork.task_id(),
        "--prompt",
        "and check it",
        "--json",
        "--api",
        "openai-chat",
        "--base-url",
        &base,
        "--model",
        "mock-model",
    ]);
    assert!(
        matches!(more.code(), Some(0 | 6)),
        "stderr: {}",
        more.stderr()
    );
    let text = server.model_requests()[0].body["messages"].to_string();
    assert!(
        text.contains("write some files")
            && text.contains("now write three.txt")
            && text.contains("and check it"),
        "{text}"
    );

    // The fork's review shows everything since the base: one.txt and three.txt.
    let (_, stat, _) = env.text(&["diff", &fork.task_id(), "--stat"]);
    assert!(
        stat.contains("one.txt") && stat.contains("three.txt"),
        "{stat}"
    );
    assert!(!stat.contains("two.txt"), "{stat}");
}

#[test]
fn forking_from_the_base_and_from_a_checkpoint_that_does_not_exist() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(three_step_script()).unwrap();
    let first = env.run(&server, "write some files", &["--no-checks"]);
    let source = first.task_id();
    let server =
        MockModelServer::start_blocking(vec![text("Nothing to do from the base.")]).unwrap();
    let base = format!("{}/v1", server.url());
    let fork = env.run_args(&[
        "fork",
        &source,
        "--checkpoint",
        "0",
        "--prompt",
        "look around",
        "--json",
        "--api",
        "openai-chat",
        "--base-url",
        &base,
        "--model",
        "mock-model",
    ]);
    // Nothing changed from the base: answered.
    assert_eq!(fork.code(), Some(6), "stderr: {}", fork.stderr());
    assert!(!fork.worktree().join("one.txt").exists());
    let messages = server.model_requests()[0].body["messages"].clone();
    let text = messages.to_string();
    assert!(
        text.contains("write some files") && !text.contains("call_1"),
        "{text}"
    );

    let out = env
        .bosun()
        .args([
            "fork",
            &source,
            "--checkpoint",
            "9",
            "--prompt",
            "x",
            "--api",
            "openai-chat",
            "--base-url",
            &base,
            "--model",
            "mock-model",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no checkpoint 9") && err.contains("1 to 3"),
        "{err}"
    );
}

#[test]
fn restore_makes_a_removed_worktree_again_at_the_checkpoint() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(three_step_script()).unwrap();
    let run = env.run(&server, "write some files", &["--no-checks"]);
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let task = run.task_id();
    let wt = run.worktree();
    let (ok, _, err) = env.text(&["discard", &task]);
    assert!(ok, "{err}");
    assert!(!wt.exists());
    // A reject (it rewrites the worktree) is refused while it is gone; restore makes it again.
    let (ok, _, err) = env.text(&["reject", &task, "two.txt"]);
    assert!(!ok && err.contains("removed"), "{err}");
    let (ok, out, err) = env.text(&["restore", &task, "1"]);
    assert!(ok, "{err}");
    assert!(out.contains("restored checkpoint 1"), "{out}");
    assert_eq!(
        std::fs::read_to_string(wt.join("one.txt")).unwrap(),
        "one\n"
    );
    assert!(!wt.join("two.txt").exists());
    let (ok, _, err) = env.text(&["reject", &task, "one.txt"]);
    assert!(ok, "the review works again: {err}");
    assert!(
        !wt.join("one.txt").exists(),
        "the reject took it out of the worktree"
    );
    let (ok, _, err) = env.text(&["restore", &task, "7"]);
    assert!(!ok && err.contains("7"), "{err}");
}

#[test]
fn a_task_whose_every_hunk_is_decided_is_reviewed_and_deleted_tasks_leave_the_history() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(three_step_script()).unwrap();
    let run = env.run(&server, "write some files", &["--no-checks"]);
    let task = run.task_id();
    let state = |env: &Env| {
        let rows = env.json(&["tasks", "--json"]);
        rows.as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == task.as_str())
            .map(|r| r["review_state"].as_str().unwrap_or_default().to_string())
    };
    assert_eq!(state(&env).as_deref(), Some("unreviewed"));
    let (ok, _, err) = env.text(&["accept", &task, "one.txt"]);
    assert!(ok, "{err}");
    assert_eq!(state(&env).as_deref(), Some("in_review"));
    let (ok, _, err) = env.text(&["accept", &task]);
    assert!(ok, "{err}");
    assert_eq!(state(&env).as_deref(), Some("reviewed"));
    let found = env.json(&["history", "--json"]);
    assert_eq!(found["total"], 1);
    let (ok, _, err) = env.text(&["delete", &task]);
    assert!(ok, "{err}");
    let found = env.json(&["history", "--json"]);
    assert_eq!(found["total"], 0, "{found}");
}
