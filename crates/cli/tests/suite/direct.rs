//! The direct turn of a model profiled as small with a text edit format: when the files the
//! task names fit whole, every request shows them as they are now (after one worked example
//! of the format) and offers no tools; the reply's file listings run as `recovered_N` calls
//! through the usual dispatch, code left out is refused, a reply that changes nothing is
//! nudged, and the task's checks judge each attempt.

use super::support::*;
use bosun_protocol::{CheckScope, EventMsg, Nudge, NudgeReason, TaskStatus};
use bosun_testkit::MockModelServer;
use pretty_assertions::assert_eq;
use serde_json::json;

const CALC: &str = "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n";

/// A repository with `calc.py`, and provider `small` at `server`: native tools unreliable,
/// whole-file edits.
fn small_env(server: &MockModelServer, calc: &str) -> Env {
    let env = Env::new();
    std::fs::write(env.repo.join("calc.py"), calc).unwrap();
    git(&env.repo, &["add", "calc.py"]);
    git(&env.repo, &["commit", "-q", "-m", "calc"]);
    std::fs::create_dir_all(&env.home).unwrap();
    std::fs::write(
        env.home.join("config.toml"),
        format!(
            "[providers.small]\napi = \"openai-chat\"\nbase_url = \"{}/v1\"\nmodel = \"m\"\nprofile = {{ native_tools = false, edit_format = \"whole\" }}\n",
            server.url()
        ),
    )
    .unwrap();
    env
}

fn run_small(env: &Env, prompt: &str, extra: &[&str]) -> Run {
    let mut args = vec![
        "run",
        "--json",
        "--repo",
        path_str(&env.repo),
        "--prompt",
        prompt,
        "--provider",
        "small",
    ];
    args.extend_from_slice(extra);
    env.run_args(&args)
}

fn listing(calc: &str, after: &str) -> String {
    format!("calc.py\n```python\n{calc}```\n{after}")
}

fn nudges(run: &Run) -> Vec<Nudge> {
    run.events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::Nudge(n) => Some(n.clone()),
            _ => None,
        })
        .collect()
}

fn begun(run: &Run) -> Vec<(String, String)> {
    run.events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::ToolCallBegin(b) => Some((b.call_id.0.clone(), b.tool.clone())),
            _ => None,
        })
        .collect()
}

fn content(m: &serde_json::Value) -> String {
    m["content"].as_str().unwrap_or_default().to_string()
}

#[test]
fn the_direct_turn_shows_the_file_takes_it_back_whole_and_checks_each_attempt() {
    let fixed = CALC.replacen("return a - b", "return a + b", 1);
    let server = MockModelServer::start_blocking(vec![
        text(&listing(
            &CALC.replacen("return a - b", "return a * b", 1),
            "Fixed add().",
        )),
        text(&listing(&fixed, "Made add() return the sum.")),
    ])
    .unwrap();
    let env = small_env(&server, CALC);
    let run = run_small(
        &env,
        "add() in calc.py subtracts; make it add.",
        &["--check", "grep -q 'return a + b' calc.py"],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(
        run.finished().0,
        TaskStatus::Completed,
        "{:?}",
        run.finished()
    );
    assert_eq!(
        std::fs::read_to_string(run.worktree().join("calc.py")).unwrap(),
        fixed
    );
    assert_eq!(
        begun(&run),
        [
            ("recovered_1".to_string(), "write_file".to_string()),
            ("recovered_2".to_string(), "write_file".to_string())
        ]
    );
    let reqs = server.model_requests();
    assert_eq!(reqs.len(), 2);
    // No tools; the format and a worked example, then the file as it is and the task.
    assert!(reqs[0].body.get("tools").is_none(), "{:#}", reqs[0].body);
    let first = messages(&reqs[0]);
    assert_eq!(first[0]["role"], "system");
    assert!(
        content(&first[0]).contains("complete new content"),
        "{}",
        content(&first[0])
    );
    assert!(
        !content(&first[0]).contains("<tools>"),
        "{}",
        content(&first[0])
    );
    assert_eq!(first[1]["role"], "user");
    assert!(content(&first[1]).contains("Task: make greet() more casual."));
    assert_eq!(first[2]["role"], "assistant");
    let asked = content(&first[3]);
    assert!(
        asked.starts_with("The files of the task, as they are now:\n\ncalc.py\n```python\ndef add(a, b):\n    return a - b\n"),
        "{asked}"
    );
    assert!(
        asked.contains("README.md"),
        "the other files are listed: {asked}"
    );
    assert!(
        asked.ends_with("Task: add() in calc.py subtracts; make it add."),
        "{asked}"
    );
    assert_eq!(first.len(), 4);
    // The check failed: the next request is one turn again, the file as the first attempt
    // left it, the task, then the failure.
    let second = messages(&reqs[1]);
    assert_eq!(second.len(), 4, "{second:#?}");
    let told = content(&second[3]);
    assert!(told.contains("return a * b"), "{told}");
    assert!(
        told.contains("Task: add() in calc.py subtracts; make it add.\n\n")
            && told.contains("grep -q 'return a + b' calc.py")
            && told.contains("write each file you change again"),
        "{told}"
    );
    // The journal has the check round, and the review credits the hunk to the call that made
    // the final text.
    let rounds: Vec<bool> = run
        .events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::CheckFinished(c) if c.scope != CheckScope::Base && c.name != "examples" => {
                Some(c.status.is_failure())
            }
            _ => None,
        })
        .collect();
    assert_eq!(rounds, [true, false]);
    let review = env.json(&["review", &run.task_id(), "--json"]);
    let calc = review["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "calc.py")
        .cloned()
        .unwrap();
    let credited: Vec<serde_json::Value> = calc["hunks"][0]["provenance"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["call_id"].clone())
        .collect();
    assert!(credited.contains(&json!("recovered_2")), "{calc:#}");
}

#[test]
fn code_left_out_is_refused_and_a_file_written_back_unchanged_is_nudged() {
    let fixed = CALC.replacen("return a - b", "return a + b", 1);
    let server = MockModelServer::start_blocking(vec![
        text(&listing(
            "def add(a, b):\n    return a + b\n\n\n# ... rest of the file unchanged\n",
            "",
        )),
        text(&listing(CALC, "Done.")),
        text(&listing(&fixed, "Made add() return the sum.")),
    ])
    .unwrap();
    let env = small_env(&server, CALC);
    let run = run_small(&env, "Fix add() in calc.py: it must add.", &["--no-checks"]);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(run.finished().0, TaskStatus::Completed);
    let sent = nudges(&run);
    let reasons: Vec<NudgeReason> = sent.iter().map(|n| n.reason).collect();
    assert_eq!(reasons, [NudgeReason::SchemaError, NudgeReason::NoOpEdit]);
    assert!(
        sent[0]
            .message
            .contains("leaves code out (`# ... rest of the file unchanged`)"),
        "{}",
        sent[0].message
    );
    assert!(
        sent[1].message.contains("nothing changed"),
        "{}",
        sent[1].message
    );
    // The elided file was never written: the first call is the unchanged one.
    assert_eq!(begun(&run).len(), 2, "{:?}", begun(&run));
    assert_eq!(
        std::fs::read_to_string(run.worktree().join("calc.py")).unwrap(),
        fixed
    );
    // Each nudge is what the next request ends with; the first request is deterministic, a
    // retry after a reply that made no progress samples (with a seed: the same retry samples
    // the same way).
    let reqs = server.model_requests();
    assert_eq!(reqs[0].body["temperature"], json!(0.0));
    assert!(reqs[0].body.get("seed").is_none());
    for retry in &reqs[1..] {
        assert_eq!(retry.body["temperature"], json!(0.7), "{:#}", retry.body);
        assert!(retry.body["seed"].is_u64(), "{:#}", retry.body);
    }
    assert_ne!(reqs[1].body["seed"], reqs[2].body["seed"]);
    for (i, n) in sent.iter().enumerate() {
        let last = messages(&reqs[i + 1]).last().cloned().unwrap();
        assert!(content(&last).ends_with(&n.message), "{}", content(&last));
    }
}

#[test]
fn a_question_is_answered_in_prose_and_the_code_in_the_answer_is_not_applied() {
    let server = MockModelServer::start_blocking(vec![text(
        "add() subtracts b from a. It should read:\n```python\ndef add(a, b):\n    return a + b\n```",
    )])
    .unwrap();
    let env = small_env(&server, CALC);
    let run = run_small(&env, "What does add() in calc.py do?", &["--no-checks"]);
    assert_eq!(run.code(), Some(6), "{}", run.stderr());
    assert_eq!(run.finished().0, TaskStatus::Answered);
    assert!(nudges(&run).is_empty());
    assert!(begun(&run).is_empty());
    assert_eq!(
        std::fs::read_to_string(run.worktree().join("calc.py")).unwrap(),
        CALC
    );
}

#[test]
fn a_named_file_too_big_to_show_whole_goes_the_tool_way() {
    let big = format!("{CALC}{}", "# padding\n".repeat(1000));
    let server = MockModelServer::start_blocking(vec![text("It subtracts.")]).unwrap();
    let env = small_env(&server, &big);
    let run = run_small(&env, "Fix add() in calc.py", &["--no-checks"]);
    assert_eq!(run.finished().0, TaskStatus::Answered, "{}", run.stderr());
    let system = content(&messages(&server.model_requests()[0])[0]);
    // The tools as text (Hermes), not the direct format.
    assert!(system.contains("read_file"), "{system}");
    assert!(!system.contains("The files of the task"), "{system}");
}

#[test]
fn a_rename_that_leaves_a_caller_behind_is_told_before_the_checks() {
    let renamed = CALC.replacen("def add", "def plus", 1);
    let server = MockModelServer::start_blocking(vec![
        text(&listing(&renamed, "Renamed add() to plus().")),
        text("use_calc.py\n```python\nfrom calc import plus\n\nprint(plus(1, 2))\n```\nUpdated the caller."),
    ])
    .unwrap();
    let env = small_env(&server, CALC);
    std::fs::write(
        env.repo.join("use_calc.py"),
        "from calc import add\n\nprint(add(1, 2))\n",
    )
    .unwrap();
    git(&env.repo, &["add", "use_calc.py"]);
    git(&env.repo, &["commit", "-q", "-m", "caller"]);
    let run = run_small(
        &env,
        "Rename add() in calc.py to plus() and update every caller.",
        &["--no-checks"],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(run.finished().0, TaskStatus::Completed);
    let reqs = server.model_requests();
    // The caller is shown from the start: it uses what the prompt names.
    assert!(
        content(&messages(&reqs[0])[3]).contains("use_calc.py\n```python\nfrom calc import add\n"),
        "{}",
        content(&messages(&reqs[0])[3])
    );
    let warned: Vec<String> = run
        .events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::Warning(w) if w.code == "broken_references" => Some(w.message.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(warned.len(), 1, "{warned:?}");
    assert!(
        warned[0].contains(
            "`use_calc.py` imports `add` from `calc`, but `calc.py` does not define `add`"
        ),
        "{}",
        warned[0]
    );
    assert!(content(messages(&reqs[1]).last().unwrap()).ends_with(&warned[0]));
    assert!(nudges(&run).is_empty(), "telling is not a nudge");
    assert_eq!(
        std::fs::read_to_string(run.worktree().join("use_calc.py")).unwrap(),
        "from calc import plus\n\nprint(plus(1, 2))\n"
    );
}

#[test]
fn the_example_s_file_copied_back_is_never_written() {
    let fixed = CALC.replacen("return a - b", "return a + b", 1);
    let example = "greet.py\n```python\ndef greet(name):\n    return \"Hey \" + name\n\n\ndef shout(text):\n    return text.upper()\n```\nChanged the greeting of greet() to \"Hey\".";
    let server = MockModelServer::start_blocking(vec![
        text(example),
        text(&listing(&fixed, "Made add() return the sum.")),
    ])
    .unwrap();
    let env = small_env(&server, CALC);
    let run = run_small(&env, "Fix add() in calc.py: it must add.", &["--no-checks"]);
    assert_eq!(run.finished().0, TaskStatus::Completed, "{}", run.stderr());
    assert!(!run.worktree().join("greet.py").exists());
    let sent = nudges(&run);
    assert_eq!(sent.len(), 1);
    assert!(
        sent[0].message.contains("the format's example"),
        "{}",
        sent[0].message
    );
    assert_eq!(
        begun(&run),
        [("recovered_2".to_string(), "write_file".to_string())]
    );
}

#[test]
fn the_docstring_s_examples_are_run_and_a_failing_one_is_told() {
    let stub = "def add(a, b):\n    \"\"\"The sum.\n\n    add(2, 3) == 5\n    \"\"\"\n    raise NotImplementedError\n";
    let wrong = stub.replace("raise NotImplementedError", "return a - b");
    let right = stub.replace("raise NotImplementedError", "return a + b");
    let server = MockModelServer::start_blocking(vec![
        text(&listing(&wrong, "Implemented add().")),
        text(&listing(&right, "Implemented add().")),
    ])
    .unwrap();
    let env = small_env(&server, stub);
    let run = run_small(
        &env,
        "Implement add() in calc.py as documented.",
        &["--no-checks"],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(run.finished().0, TaskStatus::Completed);
    let examples: Vec<(bool, bool)> = run
        .events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::CheckFinished(c) if c.name == "examples" => {
                Some((c.status.is_failure(), c.required))
            }
            _ => None,
        })
        .collect();
    assert_eq!(examples, [(true, false), (false, false)]);
    let told = content(messages(&server.model_requests()[1]).last().unwrap());
    assert!(
        told.contains(
            "calc.py:4: the docstring example `add(2, 3) == 5` is not true: add(2, 3) returns -1"
        ),
        "{told}"
    );
    assert!(nudges(&run).is_empty());
}

#[test]
fn a_question_answered_with_a_file_listing_changes_nothing() {
    let server = MockModelServer::start_blocking(vec![text(&listing(
        &CALC.replacen("return a - b", "return a + b", 1),
        "add() returns a - b; the listing above would make it add.",
    ))])
    .unwrap();
    let env = small_env(&server, CALC);
    let run = run_small(&env, "What does add() in calc.py do?", &["--no-checks"]);
    assert_eq!(run.code(), Some(6), "{}", run.stderr());
    assert_eq!(run.finished().0, TaskStatus::Answered);
    assert!(begun(&run).is_empty(), "{:?}", begun(&run));
    assert_eq!(
        std::fs::read_to_string(run.worktree().join("calc.py")).unwrap(),
        CALC
    );
}

#[test]
fn a_file_the_model_saw_redacted_is_written_back_with_its_own_secrets() {
    let key = "AKIAIOSFODNN7EXAMPLE";
    let with_key = format!("KEY = \"{key}\"\n\n\n{CALC}");
    let server_replies = |shown: &str| {
        vec![text(&listing(
            &shown.replacen("return a - b", "return a + b", 1),
            "Made add() add.",
        ))]
    };
    // What the model is shown: the key as a placeholder.
    let shown = with_key.replace(key, "[REDACTED:aws_access_key]");
    let server = MockModelServer::start_blocking(server_replies(&shown)).unwrap();
    let env = small_env(&server, &with_key);
    let run = run_small(&env, "Fix add() in calc.py: it must add.", &["--no-checks"]);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let sent = content(&messages(&server.model_requests()[0])[3]);
    assert!(
        sent.contains("KEY = \"[REDACTED:aws_access_key]\"") && !sent.contains(key),
        "{sent}"
    );
    // The key is the user's again, and the diff is the fix alone.
    let now = std::fs::read_to_string(run.worktree().join("calc.py")).unwrap();
    assert_eq!(now, with_key.replacen("return a - b", "return a + b", 1));
    let (ok, diff, err) = env.text(&["diff", &run.task_id()]);
    assert!(ok, "{err}");
    assert!(
        !diff
            .lines()
            .any(|l| l.starts_with("-KEY") || l.starts_with("+KEY")),
        "{diff}"
    );
    assert!(diff.contains("+    return a + b"), "{diff}");
}
