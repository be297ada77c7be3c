//! Keeping the model working: a reply that makes no progress (a plan in prose, a promise, a
//! question, a rejected or degenerate call) is answered with a nudge and the loop goes on, up to
//! the task's budget of nudges.

use super::support::*;
use bosun_protocol::{EventMsg, Nudge, NudgeReason, TaskStatus};
use bosun_testkit::MockModelServer;
use pretty_assertions::assert_eq;
use serde_json::json;

fn nudges(run: &Run) -> Vec<Nudge> {
    run.events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::Nudge(n) => Some(n.clone()),
            _ => None,
        })
        .collect()
}

/// The last message of model request `n` (what Bosun said just before it).
fn last_message(server: &MockModelServer, n: usize) -> serde_json::Value {
    let reqs = server.model_requests();
    messages(&reqs[n]).last().cloned().expect("a message")
}

fn title_edit() -> serde_json::Value {
    json!({"path": "README.md", "old_string": "# demo", "new_string": "# demo app"})
}

#[test]
fn a_plan_in_prose_is_nudged_and_the_task_then_does_the_work() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(vec![
        text(
            "To do this, I will follow these steps:\n1. Open README.md.\n2. Replace the title with `# demo app`.\n3. Save the file.",
        ),
        tools(vec![call("c1", "edit_file", title_edit())]),
        text("I changed the title of README.md to `# demo app`."),
    ])
    .unwrap();
    let run = env.run(
        &server,
        "Rename the project to demo app in the README",
        &["--no-checks"],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(run.finished().0, TaskStatus::Completed);
    let sent = nudges(&run);
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].reason, NudgeReason::ProsePlan);
    // What the model was told is what the event says, and names the tools and the format.
    let told = last_message(&server, 1);
    assert_eq!(told["role"], "user");
    let told = told["content"].as_str().unwrap();
    assert_eq!(told, sent[0].message);
    assert!(
        told.contains("nothing in the repository has changed"),
        "{told}"
    );
    assert!(told.contains("The tools you have: "), "{told}");
    assert!(
        told.contains("edit_file") && told.contains("read_file"),
        "{told}"
    );
    assert!(
        told.contains("```json\n{\"name\": \"read_file\", \"arguments\": {\"path\":"),
        "{told}"
    );
    let readme = std::fs::read_to_string(run.worktree().join("README.md")).unwrap();
    assert!(readme.starts_with("# demo app"), "{readme}");
    assert_eq!(server.model_requests().len(), 3);
}

#[test]
fn an_unknown_tool_in_a_fence_gets_the_list_of_tools_then_a_valid_call_runs() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(vec![
        text(
            "I'll rename it.\n```json\n{\"name\": \"rename_function\", \"arguments\": {\"old\": \"greeting\", \"new\": \"greet\"}}\n```",
        ),
        tools(vec![call("c1", "edit_file", title_edit())]),
        text("Done: the README's title is now `# demo app`."),
    ])
    .unwrap();
    let run = env.run(
        &server,
        "Rename the project to demo app in the README",
        &["--no-checks"],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(run.finished().0, TaskStatus::Completed);
    let sent = nudges(&run);
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].reason, NudgeReason::UnknownTool);
    let told = last_message(&server, 1);
    let told = told["content"].as_str().unwrap();
    assert_eq!(told, sent[0].message);
    assert!(told.contains("`rename_function`"), "{told}");
    assert!(told.contains("no tool of that name"), "{told}");
    for tool in ["read_file", "edit_file", "write_file", "list_dir", "search"] {
        assert!(told.contains(tool), "{tool} missing: {told}");
    }
    assert!(told.contains("```json"), "{told}");
}

#[test]
fn an_edit_that_changes_nothing_is_answered_and_the_next_call_works() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(vec![
        tools(vec![call(
            "same",
            "edit_file",
            json!({"path": "README.md", "old_string": "# demo", "new_string": "# demo"}),
        )]),
        tools(vec![call("c2", "edit_file", title_edit())]),
        text("The title is now `# demo app`."),
    ])
    .unwrap();
    let run = env.run(
        &server,
        "Rename the project to demo app in the README",
        &["--no-checks"],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(run.finished().0, TaskStatus::Completed);
    let said = tool_result(&server, "same");
    assert!(
        said.contains(
            "old_string and new_string are the same: this edit changes nothing; give the text to replace and what to replace it with"
        ),
        "{said}"
    );
    let sent = nudges(&run);
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].reason, NudgeReason::NoOpEdit);
    assert!(sent[0].message.contains("changes nothing"));
    assert!(tool_result(&server, "c2").contains("README.md"));
    let readme = std::fs::read_to_string(run.worktree().join("README.md")).unwrap();
    assert!(readme.starts_with("# demo app"), "{readme}");
}

#[test]
fn a_question_answered_in_prose_is_not_nudged() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(vec![text(
        "`greeting(name)` returns `\"Hello, {name}!\"`. I will note that `main` calls it with \"world\". Simple, right?",
    )])
    .unwrap();
    let run = env.run(&server, "What does greeting() return?", &["--no-checks"]);
    // 6: answered, nothing changed.
    assert_eq!(run.code(), Some(6), "{}", run.stderr());
    assert_eq!(run.finished().0, TaskStatus::Answered);
    assert!(nudges(&run).is_empty());
    assert_eq!(server.model_requests().len(), 1);
}

#[test]
fn the_nudge_budget_ends_a_hopeless_task_as_failed() {
    let env = Env::new();
    let promises = || {
        (0..6)
            .map(|_| text("I will now fix the bug."))
            .collect::<Vec<_>>()
    };
    let server = MockModelServer::start_blocking(promises()).unwrap();
    let run = env.run(&server, "Fix the bug in src/lib.rs", &["--no-checks"]);
    assert_eq!(run.code(), Some(1), "{}", run.stderr());
    let (status, summary) = run.finished();
    assert_eq!(status, TaskStatus::Failed);
    assert_eq!(summary, "no progress after 3 nudges: promise");
    let sent = nudges(&run);
    assert_eq!(sent.len(), 3);
    assert!(sent.iter().all(|n| n.reason == NudgeReason::Promise));
    assert!(
        sent[0].message.contains("you did not do it"),
        "{}",
        sent[0].message
    );
    // Three nudges, then the fourth promise ends it.
    assert_eq!(server.model_requests().len(), 4);

    let env = Env::new();
    let server = MockModelServer::start_blocking(promises()).unwrap();
    let run = env.run(
        &server,
        "Fix the bug in src/lib.rs",
        &["--no-checks", "--max-nudges", "1"],
    );
    assert_eq!(run.code(), Some(1), "{}", run.stderr());
    assert_eq!(
        run.finished(),
        (
            TaskStatus::Failed,
            "no progress after 1 nudge: promise".into()
        )
    );
    assert_eq!(nudges(&run).len(), 1);
    assert_eq!(server.model_requests().len(), 2);
}

#[test]
fn the_budget_comes_from_config_toml() {
    let env = Env::new();
    std::fs::create_dir_all(&env.home).unwrap();
    std::fs::write(env.home.join("config.toml"), "max_nudges = 2\n").unwrap();
    let server =
        MockModelServer::start_blocking((0..4).map(|_| text("Let me look at the code.")).collect())
            .unwrap();
    let run = env.run(&server, "Fix the bug in src/lib.rs", &["--no-checks"]);
    assert_eq!(
        run.finished(),
        (
            TaskStatus::Failed,
            "no progress after 2 nudges: promise".into()
        )
    );
}

#[test]
fn the_same_rejected_call_repeated_gets_a_different_answer_each_journaled() {
    let env = Env::new();
    // The small model's habit: edit_file with a made-up `content` argument, again and again.
    let bad = "```json\n{\"name\": \"edit_file\", \"arguments\": {\"path\": \"README.md\", \"content\": \"# demo app\"}}\n```";
    let server = MockModelServer::start_blocking(vec![
        text(bad),
        text(bad),
        tools(vec![call("c3", "edit_file", title_edit())]),
        text("The title is now `# demo app`."),
    ])
    .unwrap();
    let run = env.run(
        &server,
        "Rename the project to demo app in the README",
        &["--no-checks"],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let sent = nudges(&run);
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert_eq!(sent[0].reason, NudgeReason::SchemaError);
    assert_eq!(sent[1].reason, NudgeReason::RepeatedCall);
    let first = last_message(&server, 1)["content"]
        .as_str()
        .unwrap()
        .to_string();
    let second = last_message(&server, 2)["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(first, sent[0].message);
    assert_eq!(second, sent[1].message);
    assert_ne!(first, second);
    assert!(first.contains("old_string"), "the schema: {first}");
    assert!(
        second.starts_with("You sent the same call again and it failed the same way:"),
        "{second}"
    );
    assert!(
        second.contains("read_file") && second.contains("list_dir"),
        "{second}"
    );
}

#[test]
fn the_same_failing_tool_call_repeated_is_told_to_do_something_different() {
    let env = Env::new();
    let missing = json!({"path": "README.md", "old_string": "no such text", "new_string": "y"});
    let server = MockModelServer::start_blocking(vec![
        tools(vec![call("m1", "edit_file", missing.clone())]),
        tools(vec![call("m2", "edit_file", missing)]),
        tools(vec![call("c3", "edit_file", title_edit())]),
        text("The title is now `# demo app`."),
    ])
    .unwrap();
    let run = env.run(
        &server,
        "Rename the project to demo app in the README",
        &["--no-checks"],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let sent = nudges(&run);
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].reason, NudgeReason::RepeatedCall);
    assert!(
        sent[0].message.contains("was not found"),
        "{}",
        sent[0].message
    );
    // The first failure is the tool's own answer; the second adds the nudge after it.
    let after_second = last_message(&server, 2);
    assert_eq!(after_second["role"], "user");
    assert_eq!(after_second["content"].as_str().unwrap(), sent[0].message);
    assert_eq!(run.finished().0, TaskStatus::Completed);
}

#[test]
fn the_transcript_shows_a_nudge_as_one_dim_line() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(vec![
        text("Let me look at the README first."),
        tools(vec![call("c1", "edit_file", title_edit())]),
        text("The title is now `# demo app`."),
    ])
    .unwrap();
    let base = format!("{}/v1", server.url());
    let output = env
        .bosun()
        .args([
            "run",
            "--repo",
            path_str(&env.repo),
            "--prompt",
            "Rename the project to demo app in the README",
            "--api",
            "openai-chat",
            "--base-url",
            &base,
            "--model",
            "mock-model",
            "--mode",
            "full-auto",
            "--no-checks",
        ])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&output.stdout);
    let err = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{out}\n{err}");
    assert!(
        out.contains("↻ nudge (promise): You said what you will do, but you did not do it"),
        "{out}"
    );
    assert_eq!(out.matches("↻ nudge").count(), 1, "{out}");

    // `bosun show` says why the task has fewer tool calls than replies.
    let task = out
        .lines()
        .find_map(|l| l.strip_prefix("▸ task "))
        .and_then(|l| l.split_whitespace().next())
        .unwrap()
        .to_string();
    let shown = env.bosun().args(["show", &task]).output().unwrap();
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert!(
        shown.contains("1 tool call ran; 1 reply made no progress and was answered with a nudge"),
        "{shown}"
    );
}

#[test]
fn a_fence_with_one_valid_and_two_malformed_objects_runs_the_valid_one_and_reports_the_others() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(vec![
        text(
            "```json\n{\"name\": \"edit_file\", \"arguments\": {\"path\": \"README.md\", \"old_string\": \"# demo\", \"new_string\": \"# demo app\"}}\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"NOTES.md\", \"content\": 'single quotes'}}\n{\"name\": \"edit_file\", \"arguments\": {\"path\": \"README.md\", \"content\": \"x\"}}\n```",
        ),
        text("I renamed the project in README.md."),
    ])
    .unwrap();
    let run = env.run(
        &server,
        "Rename the project to demo app in the README",
        &["--no-checks"],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(run.finished().0, TaskStatus::Completed);
    let ends = run.tool_ends();
    assert_eq!(ends.len(), 1, "only the valid call ran");
    assert_eq!(ends[0].call_id.0, "recovered_1");
    assert!(!run.worktree().join("NOTES.md").exists());
    // The other two are told to the model after the result, and journaled.
    let told = last_message(&server, 1);
    let told = told["content"].as_str().unwrap();
    assert!(
        told.starts_with("The calls above ran. These in your reply were not run:"),
        "{told}"
    );
    assert!(told.contains("it is not JSON"), "{told}");
    assert!(
        told.contains("The tool call `edit_file` was not run"),
        "{told}"
    );
    let warned: Vec<&str> = run
        .events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::Warning(w) if w.code == "calls_not_run" => Some(w.message.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(warned, vec![told]);
    assert!(nudges(&run).is_empty(), "progress was made: no nudge");
}

#[test]
fn a_reply_claiming_an_edit_that_was_never_made_is_nudged_and_the_next_nudge_shows_the_file() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(vec![
        text("I fixed the title in README.md."),
        text("I have updated README.md as asked."),
        tools(vec![call("c1", "edit_file", title_edit())]),
        text("I changed the title of README.md to `# demo app`."),
    ])
    .unwrap();
    let run = env.run(
        &server,
        "Rename the project to demo app in README.md",
        &["--no-checks"],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(run.finished().0, TaskStatus::Completed);
    let sent = nudges(&run);
    assert_eq!(
        sent.iter().map(|n| n.reason).collect::<Vec<_>>(),
        vec![NudgeReason::Promise, NudgeReason::Promise]
    );
    assert!(
        sent[0]
            .message
            .starts_with("You said the change is made, but nothing in the repository has changed"),
        "{}",
        sent[0].message
    );
    // Deterministic sampling answers the same words the same way: the second nudge differs,
    // with the file the task names as it is now.
    assert!(
        !sent[0].message.contains("## README.md"),
        "{}",
        sent[0].message
    );
    assert!(
        sent[1]
            .message
            .contains("The files the task names:\n## README.md (as it is now)\n```\n# demo"),
        "{}",
        sent[1].message
    );
}

#[test]
fn the_same_look_twice_is_answered_so_the_model_moves_on() {
    let env = Env::new();
    let read = || tools(vec![call("r", "read_file", json!({"path": "README.md"}))]);
    let server = MockModelServer::start_blocking(vec![
        read(),
        read(),
        tools(vec![call("c1", "edit_file", title_edit())]),
        text("I changed the title of README.md to `# demo app`."),
    ])
    .unwrap();
    let run = env.run(
        &server,
        "Rename the project to demo app in the README",
        &["--no-checks"],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let sent = nudges(&run);
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].reason, NudgeReason::RepeatedCall);
    assert!(
        sent[0]
            .message
            .contains("You already called `read_file` with these arguments"),
        "{}",
        sent[0].message
    );
}
