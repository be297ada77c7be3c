//! `bosun history` against real runs: words of a command's output, filter tokens, bad tokens.

use super::support::*;
use bosun_testkit::{MockModelServer, MockReply};
use pretty_assertions::assert_eq;
use serde_json::json;

fn command_script(command: &str, answer: &str) -> Vec<MockReply> {
    vec![
        tools(vec![call(
            "call_c1",
            "run_command",
            json!({ "command": command }),
        )]),
        text(answer),
    ]
}

/// Two real tasks: one whose command writes and prints `quasar_overflow` (completed), one that
/// only answers (answered).
fn two_tasks(env: &Env) -> (String, String) {
    let server = MockModelServer::start_blocking(command_script(
        "echo quasar_overflow detected > notes.txt && cat notes.txt",
        "Done.",
    ))
    .unwrap();
    let first = env.run(&server, "check the telescope", &[]);
    assert_eq!(first.code(), Some(0), "stderr: {}", first.stderr());
    let server = MockModelServer::start_blocking(vec![text("Nothing to change.")]).unwrap();
    let second = env.run(&server, "explain the telescope", &[]);
    assert_eq!(second.code(), Some(6), "stderr: {}", second.stderr());
    (first.task_id(), second.task_id())
}

#[test]
fn a_word_of_a_command_s_output_finds_the_task_at_that_event() {
    let env = Env::new();
    let (first, _) = two_tasks(&env);
    let page = env.json(&["history", "quasar_overflow", "--json"]);
    assert_eq!(page["total"], 1, "{page:#}");
    let hit = &page["hits"][0];
    assert_eq!(hit["task"]["id"], first.as_str());
    // The hit is the event holding the words: the command's call or its output.
    let seq = hit["seq"].as_u64().unwrap();
    let shown = env
        .bosun()
        .args(["show", &first, "--json"])
        .output()
        .unwrap();
    let events = parse_events(&shown.stdout);
    let at = events.iter().find(|e| e.seq == seq).unwrap();
    assert_eq!(hit["kind"], at.msg.kind());
    assert!(
        serde_json::to_string(&at.msg)
            .unwrap()
            .contains("quasar_overflow"),
        "{at:?}"
    );
    let marked: Vec<&str> = hit["snippet"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["hit"] == true)
        .map(|p| p["text"].as_str().unwrap())
        .collect();
    // A phrase is marked as one part.
    assert_eq!(marked, ["quasar_overflow"]);

    // The table marks the words in brackets when stdout is not a terminal.
    let (ok, out, _) = env.text(&["history", "quasar_overflow"]);
    assert!(ok);
    assert!(
        out.contains(&first) && out.contains("[quasar_overflow]"),
        "{out}"
    );
}

#[test]
fn filter_tokens_narrow_the_tasks() {
    let env = Env::new();
    let (first, second) = two_tasks(&env);
    let ids = |args: &[&str]| -> Vec<String> {
        let mut all = vec!["history", "--json"];
        all.extend_from_slice(args);
        env.json(&all)["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["task"]["id"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(ids(&["telescope"]), [second.as_str(), first.as_str()]);
    assert_eq!(ids(&["telescope", "status:completed"]), [first.as_str()]);
    assert_eq!(
        ids(&["model:mock", "since:1d"]),
        [second.as_str(), first.as_str()]
    );
    assert_eq!(ids(&["until:1d"]), Vec::<String>::new());
    assert_eq!(ids(&["file:notes.txt"]), [first.as_str()]);
    assert_eq!(ids(&["status:answered,failed"]), [second.as_str()]);
    assert_eq!(
        ids(&["has:unreviewed", "repo:repo", "cost<1"]),
        [second.as_str(), first.as_str()]
    );
    assert_eq!(ids(&["--limit", "1", "--offset", "1"]), [first.as_str()]);
    let (ok, out, _) = env.text(&["history", "no_such_word_anywhere"]);
    assert!(ok);
    assert!(out.contains("no task matches"), "{out}");
}

#[test]
fn a_bad_token_exits_2_naming_the_filters() {
    let env = Env::new();
    for (args, says) in [
        (vec!["history", "colour:red"], "the filters are repo:"),
        (vec!["history", "status:done"], "the statuses are running"),
        (vec!["history", "since:yesterday"], "7d"),
        (
            vec!["history", "source:cursor"],
            "the sources are bosun, claude-code, codex",
        ),
        (vec!["history", "source:,"], "names no source"),
    ] {
        let out = env.bosun().args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
}
