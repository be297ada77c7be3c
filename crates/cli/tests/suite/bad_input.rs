//! Bad input from the model gets a clear error back, the loop continues, nothing is lost.

use super::support::*;
use bosun_protocol::{TaskStatus, ToolCallStatus};
use bosun_testkit::{MockModelServer, MockReply, MockToolCall};
use pretty_assertions::assert_eq;
use serde_json::json;

fn tool_result_text(server: &MockModelServer, request: usize, call_id: &str) -> String {
    let reqs = server.requests();
    messages(&reqs[request])
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == call_id)
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .unwrap_or_else(|| panic!("no result for {call_id} in request {request}"))
}

#[test]
fn malformed_unknown_and_refused_calls_go_back_to_the_model() {
    let env = Env::new();
    std::fs::write(env.dir.path().join("secret.txt"), "TOP-SECRET-CONTENT").unwrap();
    let patch = "--- a/README.md\n+++ b/README.md\n@@ -1,1 +1,1 @@\n-this line is not there\n+x\n";
    let server = MockModelServer::start_blocking(vec![
        tools(vec![
            MockToolCall {
                id: "bad_json".into(),
                name: "read_file".into(),
                arguments: "{\"path\": ".into(),
            },
            call("unknown", "delete_everything", json!({})),
            call("escape", "read_file", json!({"path": "../secret.txt"})),
            call(
                "absolute",
                "write_file",
                json!({"path": "/tmp/bosun-escape.txt", "content": "x"}),
            ),
            call("nopatch", "apply_patch", json!({"patch": patch})),
            call(
                "missing",
                "edit_file",
                json!({"path": "README.md", "old_string": "no such text", "new_string": "y"}),
            ),
        ]),
        text("I could not do it."),
    ])
    .unwrap();
    let run = env.run(&server, "try bad things", &[]);
    // 6: answered, the task changed nothing.
    assert_eq!(run.code(), Some(6), "{}", run.stderr());
    assert_eq!(run.finished().0, TaskStatus::Answered);
    let ends = run.tool_ends();
    assert_eq!(ends.len(), 6);
    assert!(
        ends.iter().all(|e| e.status == ToolCallStatus::Error),
        "{ends:?}"
    );

    let said = |id: &str| tool_result_text(&server, 1, id);
    assert!(
        said("bad_json").contains("not valid JSON"),
        "{}",
        said("bad_json")
    );
    assert!(
        said("unknown").contains("no tool named") && said("unknown").contains("read_file"),
        "{}",
        said("unknown")
    );
    assert!(said("escape").contains("worktree"), "{}", said("escape"));
    assert!(
        !said("escape").contains("TOP-SECRET-CONTENT"),
        "the file outside was not read"
    );
    assert!(
        said("absolute").contains("worktree"),
        "{}",
        said("absolute")
    );
    assert!(!std::path::Path::new("/tmp/bosun-escape.txt").exists());
    assert!(said("nopatch").contains("hunk 1"), "{}", said("nopatch"));
    assert!(
        said("missing").contains("not found") || said("missing").contains("no such text"),
        "{}",
        said("missing")
    );
    // Nothing changed, so no checkpoint, and README is intact.
    assert!(!run.kinds().contains(&"checkpoint_created"));
    assert_eq!(
        std::fs::read_to_string(run.worktree().join("README.md")).unwrap(),
        std::fs::read_to_string(env.repo.join("README.md")).unwrap()
    );
}

#[test]
fn a_binary_file_is_reported_not_dumped() {
    let env = Env::new();
    let mut bytes = vec![0u8, 159, 146, 150];
    bytes.extend(std::iter::repeat_n(7u8, 5000));
    std::fs::write(env.repo.join("blob.bin"), &bytes).unwrap();
    git(&env.repo, &["add", "blob.bin"]);
    git(&env.repo, &["commit", "-qm", "binary"]);
    let server = MockModelServer::start_blocking(vec![
        tools(vec![call("r", "read_file", json!({"path": "blob.bin"}))]),
        text("it is binary"),
    ])
    .unwrap();
    let run = env.run(&server, "read the blob", &[]);
    // 6: answered, the task changed nothing.
    assert_eq!(run.code(), Some(6), "{}", run.stderr());
    let said = tool_result_text(&server, 1, "r");
    assert!(said.to_lowercase().contains("binary"), "{said}");
    assert!(
        said.len() < 500,
        "binary content was dumped: {} bytes",
        said.len()
    );
}

#[test]
fn a_100_mb_command_output_is_truncated_for_the_model_and_capped_in_the_journal() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(vec![
        tools(vec![call(
            "big",
            "run_command",
            json!({"command": "yes 0123456789abcdef | head -c 100000000; echo; echo THE-END"}),
        )]),
        text("that was long"),
    ])
    .unwrap();
    let run = env.run(&server, "print a lot", &[]);
    assert_eq!(run.code(), Some(6), "{}", run.stderr());
    let said = tool_result_text(&server, 1, "big");
    assert!(said.len() < 64 * 1024, "model got {} bytes", said.len());
    assert!(said.contains("THE-END"), "the tail is kept");
    assert!(said.contains("0123456789abcdef"), "the head is kept");
    assert!(
        said.contains("omitted") || said.contains("truncated"),
        "a note says it was cut"
    );
    let journaled: usize = run
        .events
        .iter()
        .filter_map(|e| match &e.msg {
            bosun_protocol::EventMsg::ToolOutputDelta(d) => Some(d.chunk.len()),
            _ => None,
        })
        .sum();
    assert!(
        journaled > 64 * 1024,
        "the journal keeps more than the model sees"
    );
    assert!(
        journaled <= 16 * 1024 * 1024,
        "the journal is capped, got {journaled} bytes"
    );
}

#[test]
fn a_command_that_runs_too_long_is_killed_with_its_children() {
    let env = Env::new();
    // A duration no other process on the machine sleeps for, so pgrep finds only this one.
    let sleeper = format!("sleep 300.{}", std::process::id());
    let server = MockModelServer::start_blocking(vec![
        tools(vec![call(
            "slow",
            "run_command",
            json!({"command": format!("{sleeper} & echo started; wait"), "timeout_secs": 1}),
        )]),
        text("it timed out"),
    ])
    .unwrap();
    let run = env.run(&server, "wait", &[]);
    assert_eq!(run.code(), Some(6), "{}", run.stderr());
    let end = run.tool_ends()[0].clone();
    assert_eq!(end.status, ToolCallStatus::TimedOut);
    let ps = std::process::Command::new("pgrep")
        .args(["-f", &sleeper])
        .output()
        .unwrap();
    assert!(
        ps.stdout.is_empty(),
        "the background sleep survived: {}",
        String::from_utf8_lossy(&ps.stdout)
    );
}

#[test]
fn setup_errors_are_clear_and_create_no_task() {
    let env = Env::new();
    let not_repo = env.dir.path().join("plain");
    std::fs::create_dir_all(&not_repo).unwrap();
    let server = MockModelServer::start_blocking(vec![]).unwrap();
    let base = format!("{}/v1", server.url());
    let run = env.run_args(&[
        "run",
        "--json",
        "--repo",
        path_str(&not_repo),
        "--prompt",
        "x",
        "--api",
        "openai-chat",
        "--base-url",
        &base,
        "--model",
        "m",
    ]);
    assert_eq!(run.code(), Some(2));
    assert!(
        run.stderr().contains("not a git repository") || run.stderr().contains("git repository"),
        "{}",
        run.stderr()
    );
    let run = env.run(&server, "x", &["--base", "no-such-branch"]);
    assert_eq!(run.code(), Some(2));
    assert!(run.stderr().contains("no-such-branch"), "{}", run.stderr());
    assert!(server.requests().is_empty());
    let _ = MockReply::RawSse {
        body: String::new(),
    };
}

#[test]
fn a_repeated_tool_call_id_in_one_response_runs_once_and_the_repeat_is_told_why() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(vec![
        tools(vec![
            call(
                "dup",
                "write_file",
                json!({"path": "first.txt", "content": "first\n"}),
            ),
            call(
                "dup",
                "write_file",
                json!({"path": "second.txt", "content": "second\n"}),
            ),
        ]),
        text("Wrote the first."),
        text("Still just the first."),
    ])
    .unwrap();
    let run = env.run(&server, "write two files", &[]);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let wt = run.worktree();
    assert!(wt.join("first.txt").exists());
    assert!(!wt.join("second.txt").exists(), "the repeat did not run");

    let ends = run.tool_ends();
    assert_eq!(ends.len(), 2, "both calls are in the timeline");
    assert_eq!(ends[0].status, ToolCallStatus::Success);
    assert_eq!(ends[1].status, ToolCallStatus::Error);
    assert!(
        ends[1]
            .error
            .as_deref()
            .unwrap()
            .contains("duplicate tool call id `dup`"),
        "{:?}",
        ends[1].error
    );

    // The model gets one result per call it sent, in order: the first's, then the error.
    let results = |request: &bosun_testkit::RecordedRequest| -> Vec<String> {
        messages(request)
            .iter()
            .filter(|m| m["role"] == "tool" && m["tool_call_id"] == "dup")
            .map(|m| m["content"].as_str().unwrap().to_string())
            .collect()
    };
    let sent = results(&server.requests()[1]);
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert!(!sent[0].contains("duplicate"), "{sent:?}");
    assert!(sent[1].contains("duplicate tool call id"), "{sent:?}");

    // A follow-up rebuilds the same conversation from the journal.
    let out = env
        .bosun()
        .args(["continue", &run.task_id(), "--prompt", "and now?", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.code().is_some(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(results(&server.requests()[2]), sent);
}
