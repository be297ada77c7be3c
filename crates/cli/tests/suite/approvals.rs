//! Approvals end to end: a command the policy asks about is approved once, for the task, always
//! (the rule lands in the policy file), or denied with a note that reaches the model.

use super::support::*;
use bosun_protocol::{ApprovalDecision, EventMsg, TaskStatus, ToolCallStatus};
use bosun_testkit::MockModelServer;
use pretty_assertions::assert_eq;
use serde_json::json;

fn two_touches() -> Vec<bosun_testkit::MockReply> {
    vec![
        tools(vec![call(
            "c1",
            "run_command",
            json!({"command": "touch one.txt"}),
        )]),
        tools(vec![call(
            "c2",
            "run_command",
            json!({"command": "touch one.txt"}),
        )]),
        text("done"),
    ]
}

fn asked(run: &Run) -> usize {
    run.kinds()
        .iter()
        .filter(|k| **k == "approval_requested")
        .count()
}

fn resolutions(run: &Run) -> Vec<(ApprovalDecision, String)> {
    run.events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::ApprovalResolved(r) => Some((r.decision, r.by.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn approve_once_asks_again_for_the_same_command() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(two_touches()).unwrap();
    let run = run_answering(&env, &server, "touch twice", &[], |req| {
        assert_eq!(req.tool, "run_command");
        assert!(!req.rule.is_empty() && !req.source.is_empty(), "{req:?}");
        assert!(
            req.suggestions.iter().any(|s| s == "touch one.txt"),
            "{:?}",
            req.suggestions
        );
        json!({"approval_id": req.approval_id, "decision": "approve_once"})
    });
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(asked(&run), 2);
    assert_eq!(
        resolutions(&run)[0],
        (ApprovalDecision::ApproveOnce, "cli --json".to_string())
    );
    assert!(
        run.tool_ends()
            .iter()
            .all(|e| e.status == ToolCallStatus::Success)
    );
    assert!(run.worktree().join("one.txt").exists());
}

#[test]
fn approve_for_the_task_does_not_ask_again() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(two_touches()).unwrap();
    let run = run_answering(
        &env,
        &server,
        "touch twice",
        &[],
        |req| json!({"approval_id": req.approval_id, "decision": "approve_task"}),
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(asked(&run), 1, "the second identical command runs unasked");
    assert_eq!(run.tool_ends().len(), 2);
}

#[test]
fn approve_always_writes_the_rule_and_a_later_task_does_not_ask() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(two_touches()).unwrap();
    let run = run_answering(
        &env,
        &server,
        "touch",
        &[],
        |req| json!({"approval_id": req.approval_id, "decision": "approve_always", "rule": "touch *.txt"}),
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(asked(&run), 1);
    let file = env.repo.join(".bosun/policy.toml");
    let saved = std::fs::read_to_string(&file).unwrap();
    assert!(saved.contains("touch *.txt"), "{saved}");
    let resolved = run
        .events
        .iter()
        .find_map(|e| match &e.msg {
            EventMsg::ApprovalResolved(r) => Some(r.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(resolved.rule_file.as_deref(), Some(file.to_str().unwrap()));

    let (ok, out, err) = env.text(&[
        "policy",
        "check",
        "--repo",
        path_str(&env.repo),
        "--json",
        "--",
        "touch",
        "two.txt",
    ]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["decision"], "allow", "{v}");

    let server = MockModelServer::start_blocking(vec![
        tools(vec![call(
            "c",
            "run_command",
            json!({"command": "touch two.txt"}),
        )]),
        text("done"),
    ])
    .unwrap();
    let later = run_answering(&env, &server, "touch again", &[], |_| {
        panic!("must not ask")
    });
    assert_eq!(later.code(), Some(0), "{}", later.stderr());
    assert_eq!(asked(&later), 0);
}

#[test]
fn deny_with_a_note_tells_the_model_and_the_loop_continues() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(vec![
        tools(vec![call(
            "c1",
            "run_command",
            json!({"command": "touch one.txt"}),
        )]),
        text("ok, I will not"),
    ])
    .unwrap();
    let run = run_answering(
        &env,
        &server,
        "touch",
        &[],
        |req| json!({"approval_id": req.approval_id, "decision": "deny", "note": "use the Makefile instead"}),
    );
    // 6: answered, the task changed nothing.
    assert_eq!(run.code(), Some(6), "{}", run.stderr());
    assert_eq!(run.finished().0, TaskStatus::Answered);
    assert_eq!(run.tool_ends()[0].status, ToolCallStatus::Denied);
    assert!(!run.worktree().join("one.txt").exists());
    let reqs = server.requests();
    let result = messages(&reqs[1])
        .into_iter()
        .find(|m| m["role"] == "tool")
        .unwrap();
    assert!(
        result["content"]
            .as_str()
            .unwrap()
            .contains("use the Makefile instead"),
        "{result}"
    );
}

#[test]
fn without_a_terminal_an_ask_is_denied_with_how_to_allow_it_and_yes_approves() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(vec![
        tools(vec![call(
            "c1",
            "run_command",
            json!({"command": "touch one.txt"}),
        )]),
        text("fine"),
    ])
    .unwrap();
    let base = format!("{}/v1", server.url());
    let out = env
        .bosun()
        .args([
            "run",
            "--repo",
            path_str(&env.repo),
            "--prompt",
            "touch",
            "--api",
            "openai-chat",
        ])
        .args(["--base-url", &base, "--model", "m"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--yes") && stderr.contains("--json"),
        "{stderr}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("denied"));

    let server = MockModelServer::start_blocking(vec![
        tools(vec![call(
            "c1",
            "run_command",
            json!({"command": "touch one.txt"}),
        )]),
        text("fine"),
    ])
    .unwrap();
    // --yes answers by itself; what the test writes to stdin is never read.
    let run = run_answering(&env, &server, "touch", &["--yes"], |_| json!({}));
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(
        resolutions(&run),
        vec![(ApprovalDecision::ApproveOnce, "--yes".to_string())]
    );
    assert!(run.worktree().join("one.txt").exists());
}

#[test]
fn a_denied_command_never_asks_and_yes_does_not_override_it() {
    let env = Env::new();
    std::fs::create_dir_all(env.repo.join(".bosun")).unwrap();
    std::fs::copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../assets/policy/example.toml"
        ),
        env.repo.join(".bosun/policy.toml"),
    )
    .unwrap();
    let server = MockModelServer::start_blocking(vec![
        tools(vec![call(
            "c1",
            "run_command",
            json!({"command": "make build && git push origin main"}),
        )]),
        text("blocked"),
    ])
    .unwrap();
    let run = run_answering(&env, &server, "push", &["--yes"], |_| {
        panic!("a deny never asks")
    });
    // 6: answered, the task changed nothing.
    assert_eq!(run.code(), Some(6), "{}", run.stderr());
    let end = &run.tool_ends()[0];
    assert_eq!(end.status, ToolCallStatus::Denied);
    let why = end.error.clone().unwrap_or_default();
    assert!(
        why.contains("git push") && why.contains("policy.toml"),
        "{why}"
    );
}

#[test]
fn an_edit_that_asks_shows_the_diff_it_would_make() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(vec![
        tools(vec![call(
            "e",
            "edit_file",
            json!({"path": "README.md", "old_string": "# demo", "new_string": "# renamed"}),
        )]),
        text("done"),
    ])
    .unwrap();
    let mut preview = None;
    let run = run_answering(&env, &server, "rename", &[], |req| {
        preview = req.preview.clone();
        json!({"approval_id": req.approval_id, "decision": "approve_once"})
    });
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let preview = preview.expect("an edit approval carries a preview");
    assert!(
        preview.contains("--- a/README.md") && preview.contains("+++ b/README.md"),
        "{preview}"
    );
    assert!(
        preview.contains("-# demo\n") && preview.contains("+# renamed\n"),
        "{preview}"
    );
}
