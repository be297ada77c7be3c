//! Text edit formats for small models (`[providers.X] profile = { edit_format = … }`): the
//! request offers no edit tools and says how to write blocks; each block of a reply runs as a
//! synthesized `write_file` / `edit_file` call with a task-wide `recovered_N` id, through the
//! same policy, checkpoints and provenance as every other call.
//!
//! Both text formats take search/replace blocks (their markers are unambiguous); only `whole`
//! takes a path line and a plain fence as a whole file. So the mixed reply runs under `whole`,
//! and `search-replace` gets its own tests.

use super::support::*;
use bosun_protocol::{EventMsg, NudgeReason, TaskStatus};
use bosun_testkit::{MockModelServer, MockReply};
use pretty_assertions::assert_eq;
use serde_json::json;

/// A `config.toml` with provider `small` at `server` whose profile has `edit_format`.
fn small_provider(env: &Env, server: &MockModelServer, edit_format: Option<&str>) {
    let profile = edit_format
        .map(|f| format!("profile = {{ edit_format = \"{f}\" }}\n"))
        .unwrap_or_default();
    std::fs::create_dir_all(&env.home).unwrap();
    std::fs::write(
        env.home.join("config.toml"),
        format!(
            "[providers.small]\napi = \"openai-chat\"\nbase_url = \"{}/v1\"\nmodel = \"m\"\n{profile}",
            server.url()
        ),
    )
    .unwrap();
}

fn run_small(env: &Env, prompt: &str) -> Run {
    env.run_args(&[
        "run",
        "--json",
        "--repo",
        path_str(&env.repo),
        "--prompt",
        prompt,
        "--provider",
        "small",
        "--no-checks",
    ])
}

fn begun(run: &Run) -> Vec<(String, String, bool)> {
    run.events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::ToolCallBegin(b) => Some((b.call_id.0.clone(), b.tool.clone(), b.recovered)),
            _ => None,
        })
        .collect()
}

fn offered(req: &bosun_testkit::RecordedRequest) -> Vec<String> {
    req.body["tools"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|t| {
            t["function"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}

fn system_prompt(req: &bosun_testkit::RecordedRequest) -> String {
    let first = &messages(req)[0];
    assert_eq!(first["role"], "system");
    first["content"].as_str().unwrap().to_string()
}

const SR_LIB: &str = "src/lib.rs\n```rust\n<<<<<<< SEARCH\n    format!(\"Hello, {name}!\")\n=======\n    format!(\"Hi, {name}!\")\n>>>>>>> REPLACE\n```";

#[test]
fn a_whole_file_block_and_a_search_replace_block_are_applied_checkpointed_and_credited() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(vec![
        text(&format!(
            "I'll rewrite the README and change the greeting.\n\nREADME.md\n```markdown\n# demo app\n\nRenamed.\n```\n\n{SR_LIB}\n"
        )),
        text("Renamed the project and changed the greeting to Hi."),
    ])
    .unwrap();
    small_provider(&env, &server, Some("whole"));
    let run = run_small(&env, "Rename the project to demo app and greet with Hi");
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(
        run.finished().0,
        TaskStatus::Completed,
        "{:?}",
        run.finished()
    );
    assert_eq!(
        begun(&run),
        vec![
            ("recovered_1".into(), "write_file".into(), true),
            ("recovered_2".into(), "edit_file".into(), true),
        ]
    );
    let wt = run.worktree();
    assert_eq!(
        std::fs::read_to_string(wt.join("README.md")).unwrap(),
        "# demo app\n\nRenamed.\n"
    );
    assert!(
        std::fs::read_to_string(wt.join("src/lib.rs"))
            .unwrap()
            .contains("format!(\"Hi, {name}!\")")
    );
    // One checkpoint per edit, each naming its call.
    let checkpoints: Vec<Option<String>> = run
        .events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::CheckpointCreated(c) => Some(c.call_id.as_ref().map(|id| id.0.clone())),
            _ => None,
        })
        .collect();
    assert!(
        checkpoints.starts_with(&[Some("recovered_1".into()), Some("recovered_2".into())]),
        "{checkpoints:?}"
    );
    // The prose is shown without the blocks; the blocks are the calls.
    let shown: Vec<String> = run
        .events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::AssistantMessage(m) => Some(m.text.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(shown[0], "I'll rewrite the README and change the greeting.");
    // Replayed as an assistant message with the calls, then their results.
    let second = messages(&server.model_requests()[1]);
    let assistant = second.iter().find(|m| m["role"] == "assistant").unwrap();
    assert_eq!(
        assistant["tool_calls"][1]["function"]["name"],
        json!("edit_file")
    );
    assert!(tool_result(&server, "recovered_2").contains("Edited `src/lib.rs`"));

    let (ok, diff, err) = env.text(&["diff", &run.task_id()]);
    assert!(ok, "{err}");
    assert!(
        diff.contains("+# demo app") && diff.contains("+    format!(\"Hi, {name}!\")"),
        "{diff}"
    );
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
    assert_eq!(credited("README.md"), json!("recovered_1"), "{review:#}");
    assert_eq!(credited("src/lib.rs"), json!("recovered_2"), "{review:#}");
}

#[test]
fn search_replace_blocks_create_and_change_files_after_the_reply_s_own_calls() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(vec![
        MockReply::Reply {
            text: format!(
                "{SR_LIB}\n\nnotes/todo.md\n```\n<<<<<<< SEARCH\n=======\n- greet\n>>>>>>> REPLACE\n```"
            ),
            tool_calls: vec![call("c1", "read_file", json!({"path": "src/lib.rs"}))],
            usage: usage(100, 20),
            chunk_delay_ms: 0,
            cut_after_events: None,
        },
        text("Changed the greeting and added a todo."),
    ])
    .unwrap();
    small_provider(&env, &server, Some("search-replace"));
    let run = run_small(&env, "Greet with Hi and add a todo note");
    assert_eq!(run.finished().0, TaskStatus::Completed, "{}", run.stderr());
    assert_eq!(
        begun(&run),
        vec![
            ("c1".into(), "read_file".into(), false),
            ("recovered_1".into(), "edit_file".into(), true),
            ("recovered_2".into(), "write_file".into(), true),
        ]
    );
    let wt = run.worktree();
    assert_eq!(
        std::fs::read_to_string(wt.join("notes/todo.md")).unwrap(),
        "- greet\n"
    );
    assert!(
        std::fs::read_to_string(wt.join("src/lib.rs"))
            .unwrap()
            .contains("Hi, {name}")
    );
}

#[test]
fn a_search_that_does_not_match_is_told_and_the_next_block_works() {
    let env = Env::new();
    let wrong = "src/lib.rs\n```rust\n<<<<<<< SEARCH\n    format!(\"Howdy, {name}!\")\n=======\n    format!(\"Hi, {name}!\")\n>>>>>>> REPLACE\n```";
    let server = MockModelServer::start_blocking(vec![
        text(wrong),
        text(SR_LIB),
        text("The greeting is now Hi."),
    ])
    .unwrap();
    small_provider(&env, &server, Some("search-replace"));
    let run = run_small(&env, "Greet with Hi");
    assert_eq!(run.finished().0, TaskStatus::Completed, "{}", run.stderr());
    // The second request carries the error as the block's call result.
    let second = messages(&server.model_requests()[1]);
    let result = second
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == "recovered_1")
        .expect("the failed block's result");
    let said = result["content"].as_str().unwrap();
    assert!(
        said.contains("old_string was not found in `src/lib.rs`"),
        "{said}"
    );
    assert!(
        said.contains("format!(\"Hello, {name}!\")"),
        "closest lines shown: {said}"
    );
    assert!(
        std::fs::read_to_string(run.worktree().join("src/lib.rs"))
            .unwrap()
            .contains("Hi, {name}")
    );
    let ids: Vec<String> = begun(&run).into_iter().map(|b| b.0).collect();
    assert_eq!(ids, ["recovered_1", "recovered_2"]);
}

#[test]
fn the_request_offers_no_edit_tools_and_says_the_format_while_the_default_is_unchanged() {
    for (format, marker) in [
        ("search-replace", "<<<<<<< SEARCH"),
        ("whole", "complete new content"),
    ] {
        let env = Env::new();
        let server = MockModelServer::start_blocking(vec![text("Nothing to do.")]).unwrap();
        small_provider(&env, &server, Some(format));
        run_small(&env, "Look around");
        let req = &server.model_requests()[0];
        let tools = offered(req);
        assert!(tools.contains(&"read_file".to_string()), "{tools:?}");
        assert!(tools.contains(&"run_command".to_string()), "{tools:?}");
        for gone in ["edit_file", "write_file", "apply_patch"] {
            assert!(
                !tools.contains(&gone.to_string()),
                "{format}: {gone} offered"
            );
        }
        let system = system_prompt(req);
        assert!(system.contains(marker), "{format}: {system}");
        // A small model's first request stays small (about 4 bytes a token).
        let size = req.body.to_string().len();
        assert!(size < 8_000, "{format}: the first request is {size} bytes");
        assert!(
            system.contains("do not call edit_file, write_file or apply_patch"),
            "{system}"
        );
    }
    let env = Env::new();
    let server = MockModelServer::start_blocking(vec![text("Nothing to do.")]).unwrap();
    small_provider(&env, &server, None);
    run_small(&env, "Look around");
    let req = &server.model_requests()[0];
    let tools = offered(req);
    for kept in ["edit_file", "write_file", "apply_patch"] {
        assert!(
            tools.contains(&kept.to_string()),
            "{kept} missing: {tools:?}"
        );
    }
    let system = system_prompt(req);
    assert!(!system.contains("<<<<<<< SEARCH"), "{system}");
    assert!(!system.contains("do not call edit_file"), "{system}");
}

#[test]
fn an_edit_tool_called_anyway_is_still_served() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(vec![
        tools(vec![call(
            "w",
            "write_file",
            json!({"path": "x.txt", "content": "x\n"}),
        )]),
        text("Wrote x.txt."),
    ])
    .unwrap();
    small_provider(&env, &server, Some("search-replace"));
    let run = run_small(&env, "Write x.txt");
    assert_eq!(run.finished().0, TaskStatus::Completed, "{}", run.stderr());
    assert_eq!(
        std::fs::read_to_string(run.worktree().join("x.txt")).unwrap(),
        "x\n"
    );
}

#[test]
fn a_block_for_a_path_outside_the_worktree_is_refused() {
    let env = Env::new();
    let outside = env.dir.path().join("outside.txt");
    let escape = "../outside.txt\n```\n<<<<<<< SEARCH\n=======\npwned\n>>>>>>> REPLACE\n```";
    let server =
        MockModelServer::start_blocking(vec![text(escape), text("I could not write it.")]).unwrap();
    small_provider(&env, &server, Some("search-replace"));
    let before = checkout_state(&env.repo);
    let run = run_small(&env, "Write ../outside.txt");
    assert!(!outside.exists());
    assert!(!env.repo.join("../outside.txt").exists());
    assert!(!run.worktree().join("../outside.txt").exists());
    assert_eq!(checkout_state(&env.repo), before);
    assert!(begun(&run).is_empty(), "{:?}", begun(&run));
    // Told to the model, counted as a nudge for a malformed edit.
    let nudge = run
        .events
        .iter()
        .find_map(|e| match &e.msg {
            EventMsg::Nudge(n) => Some(n.clone()),
            _ => None,
        })
        .expect("a nudge");
    assert_eq!(nudge.reason, NudgeReason::SchemaError);
    assert!(
        nudge
            .message
            .contains("These in your reply were not applied"),
        "{}",
        nudge.message
    );
    assert!(
        nudge
            .message
            .contains("`../outside.txt` has a `..` component"),
        "{}",
        nudge.message
    );
    let told = messages(&server.model_requests()[1]);
    assert_eq!(told.last().unwrap()["content"], json!(nudge.message));
    assert_eq!(run.finished().0, TaskStatus::Answered);
}

#[test]
fn a_plain_code_fence_without_a_path_changes_nothing_in_search_replace_mode() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(vec![text(
        "`greeting` builds the string with format:\n```rust\nformat!(\"Hello, {name}!\")\n```\nIt returns it.",
    )])
    .unwrap();
    small_provider(&env, &server, Some("search-replace"));
    let run = run_small(&env, "What does greeting return?");
    assert_eq!(run.finished().0, TaskStatus::Answered, "{}", run.stderr());
    assert!(begun(&run).is_empty());
    let (ok, stat, err) = env.text(&["diff", &run.task_id(), "--stat"]);
    assert!(ok, "{err}");
    assert!(!stat.contains("src/lib.rs"), "{stat}");
    assert_eq!(server.model_requests().len(), 1);
}

#[test]
fn a_reply_of_blocks_with_plan_words_is_work_not_a_prose_plan() {
    let env = Env::new();
    // The block's SEARCH is indented 4 more than the file: edit_file's indentation
    // fallback applies it, re-indented.
    let shifted = "src/lib.rs\n```rust\n<<<<<<< SEARCH\n    pub fn greeting(name: &str) -> String {\n        format!(\"Hello, {name}!\")\n=======\n    pub fn greeting(name: &str) -> String {\n        format!(\"Hi, {name}!\")\n>>>>>>> REPLACE\n```";
    let server = MockModelServer::start_blocking(vec![
        text(&format!(
            "Here is the updated code. I will:\n1. Change the greeting.\n2. Save the file.\n\n{shifted}"
        )),
        text("The greeting is now Hi."),
    ])
    .unwrap();
    small_provider(&env, &server, Some("search-replace"));
    let run = run_small(&env, "Greet with Hi");
    assert_eq!(run.finished().0, TaskStatus::Completed, "{}", run.stderr());
    assert!(
        !run.events
            .iter()
            .any(|e| matches!(e.msg, EventMsg::Nudge(_))),
        "nudged: {:?}",
        run.kinds()
    );
    assert!(
        std::fs::read_to_string(run.worktree().join("src/lib.rs"))
            .unwrap()
            .contains("\n    format!(\"Hi, {name}!\")\n")
    );
    assert!(tool_result(&server, "recovered_1").contains("indentation shifted"));
}

#[test]
fn a_prose_plan_in_a_text_format_is_nudged_with_the_format() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(vec![
        text("I will follow these steps:\n1. Open src/lib.rs.\n2. Change the greeting."),
        text(SR_LIB),
        text("Done: the greeting is Hi."),
    ])
    .unwrap();
    small_provider(&env, &server, Some("search-replace"));
    let run = run_small(&env, "Greet with Hi");
    assert_eq!(run.finished().0, TaskStatus::Completed, "{}", run.stderr());
    let nudge = run
        .events
        .iter()
        .find_map(|e| match &e.msg {
            EventMsg::Nudge(n) => Some(n.clone()),
            _ => None,
        })
        .expect("a nudge");
    assert_eq!(nudge.reason, NudgeReason::ProsePlan);
    assert!(
        nudge.message.contains("<<<<<<< SEARCH"),
        "{}",
        nudge.message
    );
}

#[test]
fn a_bad_block_beside_a_good_one_is_told_after_the_good_one_ran() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(vec![
        text(&format!(
            "{SR_LIB}\n\nChange this too:\n```\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n```"
        )),
        text("Changed the greeting."),
    ])
    .unwrap();
    small_provider(&env, &server, Some("search-replace"));
    let run = run_small(&env, "Greet with Hi");
    assert_eq!(run.finished().0, TaskStatus::Completed, "{}", run.stderr());
    let ids: Vec<String> = begun(&run).into_iter().map(|b| b.0).collect();
    assert_eq!(ids, ["recovered_1"]);
    let told = messages(&server.model_requests()[1]);
    let last = told.last().unwrap();
    assert_eq!(last["role"], "user");
    assert_eq!(
        last["content"],
        json!(
            "The calls above ran. These in your reply were not applied:\n- a search/replace block has no path line: write the file's path on its own line just before the block's ```"
        )
    );
}

/// The fixture with a Python module and its test committed.
fn with_python(env: &Env) {
    std::fs::write(
        env.repo.join("stats.py"),
        "def mean(xs):\n    \"\"\"The mean of a non-empty list.\"\"\"\n    raise NotImplementedError\n\n\ndef total(xs):\n    return sum(xs)\n",
    )
    .unwrap();
    std::fs::write(env.repo.join("test_stats.py"), "def mean(xs):\n    pass\n").unwrap();
    git(&env.repo, &["add", "-A"]);
    git(&env.repo, &["commit", "-qm", "stats"]);
}

#[test]
fn the_corrected_function_in_a_plain_python_fence_replaces_its_definition_and_is_credited() {
    let env = Env::new();
    with_python(&env);
    let server = MockModelServer::start_blocking(vec![
        text(
            "Here is the implementation:\n\n```python\ndef mean(xs):\n    \"\"\"The mean of a non-empty list.\"\"\"\n    return sum(xs) / len(xs)\n```",
        ),
        text("I implemented mean() in stats.py."),
    ])
    .unwrap();
    small_provider(&env, &server, Some("search-replace"));
    let run = run_small(&env, "Implement mean() in stats.py");
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(run.finished().0, TaskStatus::Completed);
    let stats = std::fs::read_to_string(run.worktree().join("stats.py")).unwrap();
    assert!(
        stats.contains("    return sum(xs) / len(xs)\n\n\ndef total(xs):"),
        "{stats}"
    );
    assert!(!stats.contains("NotImplementedError"), "{stats}");
    // The test file's own `mean` was not touched, and the edit is the call that made it.
    assert_eq!(
        std::fs::read_to_string(run.worktree().join("test_stats.py")).unwrap(),
        "def mean(xs):\n    pass\n"
    );
    assert_eq!(
        begun(&run),
        vec![("recovered_1".to_string(), "edit_file".to_string(), true)]
    );
    let review = env.json(&["review", &run.task_id(), "--json"]);
    assert!(review.to_string().contains("recovered_1"), "{review}");
}

#[test]
fn the_stub_written_back_unchanged_is_nudged_not_answered() {
    let env = Env::new();
    with_python(&env);
    let stub = "```python\ndef mean(xs):\n    \"\"\"The mean of a non-empty list.\"\"\"\n    raise NotImplementedError\n```";
    let server = MockModelServer::start_blocking(vec![
        text(stub),
        text("```python\ndef mean(xs):\n    \"\"\"The mean of a non-empty list.\"\"\"\n    return sum(xs) / len(xs)\n```"),
        text("Done."),
    ])
    .unwrap();
    small_provider(&env, &server, Some("search-replace"));
    let run = run_small(&env, "Implement mean() in stats.py");
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let nudged: Vec<NudgeReason> = run
        .events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::Nudge(n) => Some(n.reason),
            _ => None,
        })
        .collect();
    assert_eq!(nudged, vec![NudgeReason::Promise]);
    let told = messages(&server.model_requests()[1])
        .last()
        .cloned()
        .unwrap();
    assert!(
        told["content"]
            .as_str()
            .unwrap()
            .contains("nothing in the repository has changed"),
        "{told}"
    );
    assert!(
        !std::fs::read_to_string(run.worktree().join("stats.py"))
            .unwrap()
            .contains("NotImplementedError")
    );
}

#[test]
fn a_file_written_back_as_it_is_is_nudged_not_looped_on() {
    let env = Env::new();
    let readme = std::fs::read_to_string(env.repo.join("README.md")).unwrap();
    let same = format!("README.md\n```markdown\n{readme}```\n");
    let server = MockModelServer::start_blocking(vec![
        text(&same),
        text("README.md\n```markdown\n# demo app\n```\n"),
        text("Renamed the project."),
    ])
    .unwrap();
    small_provider(&env, &server, Some("whole"));
    let run = run_small(&env, "Rename the project to demo app in the README");
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(run.finished().0, TaskStatus::Completed);
    let nudged: Vec<NudgeReason> = run
        .events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::Nudge(n) => Some(n.reason),
            _ => None,
        })
        .collect();
    assert_eq!(nudged, [NudgeReason::NoOpEdit]);
    assert_eq!(
        std::fs::read_to_string(run.worktree().join("README.md")).unwrap(),
        "# demo app\n"
    );
}
