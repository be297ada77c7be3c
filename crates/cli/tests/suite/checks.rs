//! The verification loop against the mock model, on real fixture repositories (Python with
//! unittest, a tiny Rust crate, Node with `node --test`): checks found, run by Bosun after the
//! model says it is done, failures fed back, `checks_failed` after the rounds run out, the edit
//! guard, failures the base had too, hanging and denied checks, and the merge gate.

use super::support::*;
use bosun_protocol::{CheckFinished, CheckScope, CheckStatus, EventMsg, TaskStatus};
use bosun_testkit::MockModelServer;
use bosun_testkit::checks_fixtures::{
    node_calc_repo, python_calc_repo, python_calc_repo_failing_at_base, rust_calc_repo,
};
use pretty_assertions::assert_eq;
use serde_json::json;

const BROKEN_ADD: &str = "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n";
/// A change that keeps every test passing.
const DOCUMENTED: &str = "\"\"\"Arithmetic.\"\"\"\n\n\ndef add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n";

fn python_env() -> Env {
    let mut env = Env::new();
    env.repo = python_calc_repo(env.dir.path()).unwrap();
    env
}

fn check_ends(run: &Run) -> Vec<&CheckFinished> {
    run.events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::CheckFinished(c) => Some(c),
            _ => None,
        })
        .collect()
}

fn finished_checks(run: &Run) -> Vec<CheckFinished> {
    run.events
        .iter()
        .find_map(|e| match &e.msg {
            EventMsg::TaskFinished(f) => Some(f.checks.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

/// The text of the last user message of a recorded model request.
fn last_user_text(body: &serde_json::Value) -> String {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string()
}

fn write(id: &str, path: &str, content: &str) -> bosun_testkit::MockReply {
    tools(vec![call(
        id,
        "write_file",
        json!({"path": path, "content": content}),
    )])
}

#[test]
fn a_failing_test_goes_back_to_the_model_which_fixes_it_and_the_task_completes() {
    let env = python_env();
    let server = MockModelServer::start_blocking(vec![
        write("call_1", "calc.py", BROKEN_ADD),
        text("Done: add is implemented."),
        // Fixed, and documented: a net change (the base already adds correctly).
        write("call_2", "calc.py", DOCUMENTED),
        text("Fixed add."),
    ])
    .unwrap();
    let run = env.run(&server, "implement add", &[]);
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let (status, summary) = run.finished();
    assert_eq!(status, TaskStatus::Completed);
    assert!(summary.contains("checks pass"), "{summary}");

    // The plan: discovered unittest.
    let planned = run
        .events
        .iter()
        .find_map(|e| match &e.msg {
            EventMsg::ChecksPlanned(p) => Some(p.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(planned.source, bosun_protocol::CheckSource::Discovered);
    assert_eq!(planned.checks[0].command, "python3 -m unittest");

    // Round 1: the related tests (calc.py → tests/test_calc.py) ran first and failed.
    let ends = check_ends(&run);
    let first = *ends.iter().find(|c| c.scope != CheckScope::Base).unwrap();
    assert_eq!(first.scope, CheckScope::Related, "{ends:#?}");
    assert_eq!(first.status, CheckStatus::Failed);
    assert!(
        first
            .failures
            .iter()
            .any(|f| f.message.contains("test_add")),
        "{first:#?}"
    );

    // The next request told the model which test failed and why.
    let requests = server.model_requests();
    assert_eq!(requests.len(), 4);
    let feedback = last_user_text(&requests[2].body);
    assert!(
        feedback.contains("check `unittest`") || feedback.contains("check `test`"),
        "{feedback}"
    );
    assert!(feedback.contains("test_add"), "{feedback}");
    assert!(feedback.contains("AssertionError"), "{feedback}");
    assert!(feedback.contains("round 1 of 3"), "{feedback}");

    // The last round passed, and task_finished carries it.
    let last = finished_checks(&run);
    assert!(!last.is_empty());
    assert!(
        last.iter().all(|c| c.status == CheckStatus::Passed),
        "{last:#?}"
    );

    // Nothing the checks made is in the task's checkpoints, and the worktree has no
    // __pycache__ of theirs.
    let (_, files, _) = env.text(&["diff", &run.task_id(), "--stat"]);
    assert!(!files.contains("__pycache__"), "{files}");
    assert!(!run.worktree().join("__pycache__").exists());
    assert!(!run.worktree().join("tests/__pycache__").exists());

    // The task list says the checks passed.
    let tasks = env.json(&["tasks", "--json"]);
    assert_eq!(tasks[0]["checks"], "passed", "{tasks}");
}

#[test]
fn three_failing_rounds_end_checks_failed_with_exit_code_5() {
    let env = python_env();
    let server = MockModelServer::start_blocking(vec![
        write("call_1", "calc.py", BROKEN_ADD),
        text("Done."),
        text("It is done, really."),
        text("Still done."),
    ])
    .unwrap();
    let run = env.run(&server, "implement add", &[]);
    assert_eq!(run.code(), Some(5), "stderr: {}", run.stderr());
    let (status, summary) = run.finished();
    assert_eq!(status, TaskStatus::ChecksFailed);
    assert!(summary.contains("3 failed rounds"), "{summary}");
    assert_eq!(server.model_requests().len(), 4);
    // The unchanged tree was not checked again: one round of check runs, three verdicts.
    let feedbacks = run
        .events
        .iter()
        .filter(
            |e| matches!(&e.msg, EventMsg::UserMessage(m) if m.origin.as_deref() == Some("checks")),
        )
        .count();
    assert_eq!(feedbacks, 2);
    let tasks = env.json(&["tasks", "--json"]);
    assert_eq!(tasks[0]["status"], "checks_failed");
    assert_eq!(tasks[0]["checks"], "failed");
    // `bosun checks TASK` shows the failing round and exits 5 too.
    let out = env
        .bosun()
        .args(["checks", &run.task_id()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("test_add"), "{text}");
}

#[test]
fn max_check_rounds_from_the_flag_ends_the_task_after_one_round() {
    let env = python_env();
    let server = MockModelServer::start_blocking(vec![
        write("call_1", "calc.py", BROKEN_ADD),
        text("Done."),
    ])
    .unwrap();
    let run = env.run(&server, "implement add", &["--max-check-rounds", "1"]);
    assert_eq!(run.code(), Some(5), "stderr: {}", run.stderr());
    assert_eq!(server.model_requests().len(), 2);
}

#[test]
fn an_edit_that_breaks_the_syntax_gets_the_guards_message_in_its_tool_result() {
    let env = python_env();
    let server = MockModelServer::start_blocking(vec![
        tools(vec![call(
            "call_1",
            "edit_file",
            json!({"path": "calc.py", "old_string": "return a + b", "new_string": "return (a + b"}),
        )]),
        text("Edited."),
    ])
    .unwrap();
    let run = env.run(&server, "edit add", &["--no-checks"]);
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let end = &run.tool_ends()[0];
    assert!(
        end.output.contains("calc.py: syntax error at line")
            && end.output.contains("the file parsed before this edit"),
        "{}",
        end.output
    );
    // The model got the same text, and the edit stayed applied.
    let requests = server.model_requests();
    let tool_result = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "tool")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(tool_result.contains("syntax error"), "{tool_result}");
    let content = std::fs::read_to_string(run.worktree().join("calc.py")).unwrap();
    assert!(content.contains("return (a + b"));
    // --no-checks: none planned, none run.
    assert!(check_ends(&run).is_empty());
}

#[test]
fn a_failure_the_base_had_is_marked_in_the_digest_and_does_not_block_while_a_new_one_does() {
    let mut env = Env::new();
    env.repo = python_calc_repo_failing_at_base(env.dir.path()).unwrap();
    let broken_both = "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a + b\n";
    let fixed_add = "\"\"\"Arithmetic.\"\"\"\n\n\ndef add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a + b\n";
    let server = MockModelServer::start_blocking(vec![
        write("call_1", "calc.py", broken_both),
        text("Done."),
        write("call_2", "calc.py", fixed_add),
        text("Fixed add; sub was already failing before."),
        text("sub fails on the base too; the task was add, so I left it."),
    ])
    .unwrap();
    let run = env.run(&server, "implement add", &[]);
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    // What still fails the way the base does goes back once (the task may be to fix it); the
    // answer that leaves it, on the same tree, completes the task.
    let requests = server.model_requests();
    assert_eq!(requests.len(), 5);
    let told = last_user_text(&requests[4].body);
    assert!(
        told.contains("the same way as before this task (so they do not block)")
            && told.contains("test_sub"),
        "{told}"
    );
    assert_eq!(run.finished().0, TaskStatus::Completed);
    // Never called passing.
    let summary = run.finished().1;
    assert!(
        summary.contains("checks still fail as before this task: test")
            && !summary.contains("checks pass"),
        "{summary}"
    );
    // The base run happened once (scope base), and the digest marked test_sub.
    let ends = check_ends(&run);
    assert!(
        ends.iter().any(|c| c.scope == CheckScope::Base),
        "{ends:#?}"
    );
    let feedback = last_user_text(&server.model_requests()[2].body);
    assert!(feedback.contains("test_add"), "{feedback}");
    let sub_line = feedback
        .lines()
        .find(|l| l.trim_start().starts_with("- ") && l.contains("test_sub"))
        .unwrap_or_default();
    assert!(sub_line.contains("failing before this task"), "{feedback}");
    // The last round: test_sub still fails, marked, and nothing blocks.
    let last = finished_checks(&run);
    let full = last
        .iter()
        .find(|c| c.status == CheckStatus::Failed)
        .unwrap();
    assert!(full.only_before_task, "{full:#?}");
    assert!(full.failures.iter().all(|f| f.before_task));

    // The merge gate lets it through.
    let task = run.task_id();
    let (ok, _, err) = env.text(&["accept", &task]);
    assert!(ok, "{err}");
    let out = env
        .bosun()
        .args(["checks", &task, "--accepted", "--json"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["blocked"], false, "{report}");
    let (ok, merged, err) = env.text(&["merge", &task]);
    assert!(ok, "merge: {err}");
    assert!(merged.contains("merged"), "{merged}");
}

#[test]
fn rejecting_a_hunk_makes_the_accepted_tree_fail_and_the_merge_is_refused_until_overridden() {
    let env = python_env();
    let calc = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n";
    let test_mul = "import unittest\n\nfrom calc import mul\n\n\nclass MulTest(unittest.TestCase):\n    def test_mul(self):\n        self.assertEqual(mul(2, 3), 6)\n";
    let server = MockModelServer::start_blocking(vec![
        tools(vec![
            call(
                "call_1",
                "write_file",
                json!({"path": "calc.py", "content": calc}),
            ),
            call(
                "call_2",
                "write_file",
                json!({"path": "tests/test_mul.py", "content": test_mul}),
            ),
        ]),
        text("Added mul with a test."),
    ])
    .unwrap();
    let run = env.run(&server, "add mul", &[]);
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let task = run.task_id();
    // Keep the test, reject mul itself.
    let (ok, _, err) = env.text(&["accept", &task, "tests/test_mul.py"]);
    assert!(ok, "{err}");
    let (ok, _, err) = env.text(&["reject", &task, "calc.py"]);
    assert!(ok, "{err}");
    let out = env.bosun().args(["merge", &task]).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(5),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("the merge is refused"), "{err}");
    assert!(err.contains("test_mul") || err.contains("mul"), "{err}");
    assert!(err.contains("--override-checks"), "{err}");
    // Nothing reached the user's branch.
    assert_eq!(git(&env.repo, &["log", "--oneline"]).lines().count(), 1);

    // An empty reason is not an override.
    let out = env
        .bosun()
        .args(["merge", &task, "--override-checks", " "])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let (ok, merged, err) = env.text(&[
        "merge",
        &task,
        "--override-checks",
        "the mul test lands first, mul follows",
    ]);
    assert!(ok, "{err}");
    assert!(merged.contains("merged"), "{merged}");
    // The journal keeps the override and the checks the gate saw.
    let (_, text, _) = env.text(&["show", &task, "--json"]);
    assert!(
        text.contains("\"override_checks\":\"the mul test lands first, mul follows\""),
        "{text}"
    );
}

#[test]
fn a_hanging_check_is_killed_at_its_timeout_with_its_children() {
    let env = python_env();
    std::fs::create_dir_all(env.repo.join(".bosun")).unwrap();
    let marker = env.dir.path().join("still-running");
    // A sleep no other test runs, so finding it afterwards means this one was left.
    let sleeper = format!("sleep 313.{}", std::process::id());
    std::fs::write(
        env.repo.join(".bosun/config.toml"),
        format!(
            "[[checks]]\nname = \"hang\"\ncommand = \"{sleeper} & {sleeper}\"\ntimeout_secs = 2\n"
        ),
    )
    .unwrap();
    let server = MockModelServer::start_blocking(vec![
        write("call_1", "calc.py", DOCUMENTED),
        text("Done."),
    ])
    .unwrap();
    let started = std::time::Instant::now();
    let run = env.run(&server, "touch calc", &["--max-check-rounds", "1"]);
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
    assert_eq!(run.code(), Some(5), "stderr: {}", run.stderr());
    let ends = check_ends(&run);
    assert_eq!(ends[0].status, CheckStatus::TimedOut, "{ends:#?}");
    assert!(ends[0].summary.contains("timed out after 2 s"), "{ends:#?}");
    // Nothing the check started is left.
    let left = std::process::Command::new("pgrep")
        .args(["-f", &sleeper])
        .output()
        .unwrap();
    assert!(
        left.stdout.is_empty(),
        "left running: {}",
        String::from_utf8_lossy(&left.stdout)
    );
    assert!(!marker.exists());
}

#[test]
fn a_denied_check_is_reported_and_never_run() {
    let env = python_env();
    std::fs::create_dir_all(&env.home).unwrap();
    std::fs::write(
        env.home.join("policy.toml"),
        "[commands]\ndeny = [\"touch\"]\n",
    )
    .unwrap();
    let marker = env.dir.path().join("check-ran");
    let check = format!("touch {}", marker.display());
    let server = MockModelServer::start_blocking(vec![
        write("call_1", "calc.py", DOCUMENTED),
        text("Done."),
    ])
    .unwrap();
    let run = env.run(&server, "touch calc", &["--check", &check]);
    // Every required check denied: judged as having no checks.
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    assert!(
        run.finished().1.contains("no required check could run"),
        "{:?}",
        run.finished()
    );
    let ends = check_ends(&run);
    assert_eq!(ends.len(), 1);
    assert_eq!(ends[0].status, CheckStatus::Denied);
    assert!(
        ends[0].summary.contains("denied by the policy"),
        "{ends:#?}"
    );
    assert!(!marker.exists(), "a denied check never runs");
}

#[test]
fn a_missing_tool_is_a_broken_check_not_the_agents_failure() {
    let env = python_env();
    let server = MockModelServer::start_blocking(vec![
        write("call_1", "calc.py", DOCUMENTED),
        text("Done."),
    ])
    .unwrap();
    let run = env.run(
        &server,
        "touch calc",
        &[
            "--check",
            "no-such-tool-bosun --verify",
            "--check",
            "python3 -m unittest",
        ],
    );
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let ends = check_ends(&run);
    let broken = ends
        .iter()
        .find(|c| c.name.starts_with("no-such-tool"))
        .unwrap();
    assert_eq!(broken.status, CheckStatus::Error, "{broken:#?}");
    assert!(broken.summary.contains("not installed"), "{broken:#?}");
}

#[test]
fn a_rust_crate_and_a_node_module_are_checked_with_their_own_tools() {
    for (name, make, edit) in [
        (
            "rust",
            rust_calc_repo as fn(&std::path::Path) -> std::io::Result<std::path::PathBuf>,
            (
                "src/lib.rs",
                "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n\npub fn sub(a: i32, b: i32) -> i32 {\n    a - b\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn adds() {\n        assert_eq!(add(1, 2), 3);\n    }\n}\n",
            ),
        ),
        (
            "node",
            node_calc_repo,
            (
                "calc.js",
                "function add(a, b) {\n  return a - b;\n}\n\nfunction sub(a, b) {\n  return a - b;\n}\n\nmodule.exports = { add, sub };\n",
            ),
        ),
    ] {
        let mut env = Env::new();
        env.repo = make(env.dir.path()).unwrap();
        let server =
            MockModelServer::start_blocking(vec![write("call_1", edit.0, edit.1), text("Done.")])
                .unwrap();
        let run = env.run_with_env(
            &server,
            "break add",
            &["--max-check-rounds", "1"],
            &[("CARGO_NET_OFFLINE", "true")],
        );
        assert_eq!(run.code(), Some(5), "{name}: {}", run.stderr());
        let failed: Vec<&CheckFinished> = check_ends(&run)
            .into_iter()
            .filter(|c| c.status == CheckStatus::Failed)
            .collect();
        let names: Vec<String> = failed
            .iter()
            .flat_map(|c| c.failures.iter().map(|f| f.message.clone()))
            .collect();
        assert!(
            names.iter().any(|m| m.contains("adds")),
            "{name}: {names:?} {:#?}",
            check_ends(&run)
        );
    }
}

#[test]
fn bosun_checks_lists_and_saves_a_repositorys_checks_and_flags_are_checked() {
    let env = python_env();
    let repo = path_str(&env.repo).to_string();
    // A run that would reach a model (one that is never asked: the flags fail first).
    let model = [
        "run",
        "--repo",
        repo.as_str(),
        "--prompt",
        "x",
        "--api",
        "openai-chat",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--model",
        "m",
    ];
    let (ok, out, err) = env.text(&["checks", "--repo", &repo]);
    assert!(ok, "{err}");
    assert!(
        out.contains("python3 -m unittest") && out.contains("discovered"),
        "{out}"
    );
    let (ok, out, err) = env.text(&["checks", "--repo", &repo, "--save"]);
    assert!(ok, "{err}");
    assert!(out.contains(".bosun/config.toml"), "{out}");
    let saved = std::fs::read_to_string(env.repo.join(".bosun/config.toml")).unwrap();
    assert!(saved.contains("[[checks]]"), "{saved}");
    let listed = env.json(&["checks", "--repo", &repo, "--json"]);
    assert_eq!(listed["source"], "configured");

    // --check and --no-checks together, --save without --repo, nothing named: usage errors.
    for args in [
        vec![
            "run",
            "--repo",
            repo.as_str(),
            "--prompt",
            "x",
            "--check",
            "true",
            "--no-checks",
        ],
        vec!["checks", "--save"],
        vec!["checks"],
        [&model[..], &["--check", " "]].concat(),
        [&model[..], &["--max-check-rounds", "0"]].concat(),
    ] {
        let out = env.bosun().args(&args).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = env
        .bosun()
        .args(["checks", "no-such-task"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn the_base_commits_result_is_reused_by_the_next_task_on_the_same_base() {
    let mut env = Env::new();
    env.repo = python_calc_repo_failing_at_base(env.dir.path()).unwrap();
    let broken_both = "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a + b\n";
    let base_runs = |run: &Run| {
        run.events
            .iter()
            .filter(|e| matches!(&e.msg, EventMsg::CheckStarted(s) if s.scope == CheckScope::Base))
            .count()
    };
    let mut counts = Vec::new();
    for _ in 0..2 {
        let server = MockModelServer::start_blocking(vec![
            write("call_1", "calc.py", broken_both),
            text("Done."),
        ])
        .unwrap();
        let run = env.run(&server, "implement add", &["--max-check-rounds", "1"]);
        assert_eq!(run.code(), Some(5), "stderr: {}", run.stderr());
        // Both tasks see test_sub marked as failing before them.
        let last = finished_checks(&run);
        assert!(
            last.iter()
                .flat_map(|c| &c.failures)
                .any(|f| f.message.contains("test_sub") && f.before_task),
            "{last:#?}"
        );
        counts.push(base_runs(&run));
    }
    assert_eq!(
        counts,
        vec![1, 0],
        "the second task reuses the base's result"
    );
}

#[test]
fn a_check_that_needs_the_network_says_so_when_it_fails_for_that_reason() {
    let env = python_env();
    let server = MockModelServer::start_blocking(vec![
        write("call_1", "calc.py", DOCUMENTED),
        text("Done."),
    ])
    .unwrap();
    let run = env.run(
        &server,
        "touch calc",
        &[
            "--check",
            "curl -sS --max-time 5 https://registry.npmjs.org/",
            "--max-check-rounds",
            "1",
        ],
    );
    assert_eq!(run.code(), Some(5), "stderr: {}", run.stderr());
    let ends = check_ends(&run);
    let net = ends.iter().find(|c| c.scope == CheckScope::Full).unwrap();
    assert_eq!(net.status, CheckStatus::Failed, "{net:#?}");
    assert!(
        net.summary.contains("network") && net.summary.contains("[network] rule"),
        "{net:#?}"
    );
}

#[test]
fn an_edit_check_runs_on_the_edited_files_and_its_failure_is_in_the_tool_result() {
    let env = python_env();
    std::fs::create_dir_all(env.repo.join(".bosun")).unwrap();
    std::fs::write(
        env.repo.join(".bosun/config.toml"),
        "[[checks]]\nname = \"no-fixme\"\ncommand = \"! grep -n FIXME {files}\"\nwhen = \"edit\"\n",
    )
    .unwrap();
    let server = MockModelServer::start_blocking(vec![
        write("call_1", "notes 1.txt", "all good\n"),
        write("call_2", "calc.py", "# FIXME: sub\ndef add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"),
        text("Done."),
    ])
    .unwrap();
    let run = env.run(&server, "edit", &[]);
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let started: Vec<String> = run
        .events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::CheckStarted(s) if s.scope == CheckScope::Edit => Some(s.command.clone()),
            _ => None,
        })
        .collect();
    // `{files}` became the edited path, shell-quoted.
    assert_eq!(
        started,
        vec![
            "! grep -n FIXME 'notes 1.txt'".to_string(),
            "! grep -n FIXME 'calc.py'".to_string()
        ]
    );
    let requests = server.model_requests();
    let results: Vec<String> = requests[2].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect();
    assert!(!results[0].contains("edit check"), "{results:?}");
    assert!(
        results[1].contains("the edit check `no-fixme` fails"),
        "{results:?}"
    );
}

#[test]
fn bosun_checks_run_runs_a_finished_tasks_checks_again() {
    let env = python_env();
    let server = MockModelServer::start_blocking(vec![
        write("call_1", "calc.py", DOCUMENTED),
        text("Done."),
    ])
    .unwrap();
    let run = env.run(&server, "document calc", &[]);
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let task = run.task_id();
    let report = env.json(&["checks", &task, "--run", "--json"]);
    assert_eq!(report["blocked"], false, "{report}");
    assert_eq!(report["checks"][0]["status"], "passed", "{report}");
    // The re-run is in the task's journal (round 0).
    let (_, journal, _) = env.text(&["show", &task, "--json"]);
    assert!(journal.contains("\"round\":0"), "{journal}");
    // Breaking the worktree's copy does not matter: the checks run on the checkpoint.
    std::fs::write(run.worktree().join("calc.py"), "def add(:\n").unwrap();
    let report = env.json(&["checks", &task, "--run", "--json"]);
    assert_eq!(report["checks"][0]["status"], "passed", "{report}");
}

#[test]
fn a_task_cannot_pass_off_its_failing_tests_as_a_missing_tool() {
    // The agent's code makes the test run exit 127, the code a shell gives a missing command.
    let env = python_env();
    let server = MockModelServer::start_blocking(vec![
        tools(vec![
            call("call_1", "write_file", json!({"path": "calc.py", "content": BROKEN_ADD})),
            call(
                "call_2",
                "write_file",
                json!({"path": "tests/__init__.py", "content": "import atexit, os\natexit.register(lambda: os._exit(127))\n"}),
            ),
        ]),
        text("Done."),
    ])
    .unwrap();
    let run = env.run(&server, "implement add", &["--max-check-rounds", "1"]);
    assert_eq!(run.code(), Some(5), "stderr: {}", run.stderr());
    let last = finished_checks(&run);
    let test = last.iter().find(|c| c.scope != CheckScope::Base).unwrap();
    assert_eq!(test.status, CheckStatus::Failed, "{last:#?}");
    assert!(
        test.summary.contains("runs on the task's base commit"),
        "{last:#?}"
    );
}

#[test]
fn the_guard_judges_an_edit_of_a_file_the_model_read_first_the_same_way() {
    let env = python_env();
    let server = MockModelServer::start_blocking(vec![
        tools(vec![call(
            "call_r",
            "read_file",
            json!({"path": "calc.py"}),
        )]),
        tools(vec![call(
            "call_1",
            "edit_file",
            json!({"path": "calc.py", "old_string": "return a - b", "new_string": "return a - b)"}),
        )]),
        tools(vec![call(
            "call_2",
            "edit_file",
            json!({"path": "calc.py", "old_string": "return a - b)", "new_string": "return a - b"}),
        )]),
        text("Edited."),
    ])
    .unwrap();
    let run = env.run(&server, "edit sub", &["--no-checks"]);
    // The second edit undid the first: no net change, so the task only answered.
    assert_eq!(run.code(), Some(6), "stderr: {}", run.stderr());
    let ends = run.tool_ends();
    assert!(
        ends[1].output.contains("calc.py: syntax error at line 6")
            && ends[1].output.contains("the file parsed before this edit"),
        "{}",
        ends[1].output
    );
    // Fixed again: nothing to say.
    assert!(
        !ends[2].output.contains("syntax error"),
        "{}",
        ends[2].output
    );
}
