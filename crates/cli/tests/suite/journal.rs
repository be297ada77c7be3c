//! The journal: what `bosun show` reads back, a killed process, and secrets kept out.

use super::support::*;
use bosun_protocol::{Event, EventMsg, TaskStatus};
use bosun_testkit::{MockModelServer, MockReply};
use pretty_assertions::assert_eq;
use serde_json::json;

#[test]
fn show_replays_exactly_what_run_printed() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(vec![
        tools(vec![call(
            "p",
            "update_plan",
            json!({"items": [{"step": "look", "status": "in_progress"}]}),
        )]),
        text("planned"),
    ])
    .unwrap();
    let run = env.run(&server, "plan it", &[]);
    // 6: answered, the task changed nothing.
    assert_eq!(run.code(), Some(6), "{}", run.stderr());
    assert!(run.kinds().contains(&"plan_updated"));
    let out = env
        .bosun()
        .args(["show", &run.task_id()[..8], "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let shown: Vec<Event> = parse_events(&out.stdout);
    assert_eq!(shown, run.events);
    let (ok, text, _) = env.text(&["show", &run.task_id()]);
    assert!(ok);
    assert!(
        text.contains("plan it") && text.contains("[~] look") && text.contains("answered"),
        "{text}"
    );
    let (ok, list, _) = env.text(&["tasks"]);
    assert!(
        ok && list.contains(&run.task_id()) && list.contains("answered"),
        "{list}"
    );
}

#[test]
fn a_task_killed_with_sigkill_shows_as_interrupted_and_the_journal_stays_consistent() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(vec![
        tools(vec![call(
            "s",
            "run_command",
            json!({"command": "echo working; sleep 20"}),
        )]),
        text("unreachable"),
    ])
    .unwrap();
    let printed = run_and_kill_when_printed(&env, &server, "working");
    let task_id = printed.last().unwrap().task_id.0.clone();

    let tasks = env.json(&["tasks", "--json"]);
    assert_eq!(tasks[0]["id"], json!(task_id));
    assert_eq!(tasks[0]["status"], json!("interrupted"));
    let out = env
        .bosun()
        .args(["show", &task_id, "--json"])
        .output()
        .unwrap();
    let events = parse_events(&out.stdout);
    for (i, ev) in events.iter().enumerate() {
        assert_eq!(ev.seq, i as u64 + 1, "events are contiguous");
    }
    match &events.last().unwrap().msg {
        EventMsg::TaskFinished(f) => assert_eq!(f.status, TaskStatus::Interrupted),
        other => panic!("last event is {other:?}"),
    }
    let db = rusqlite::Connection::open(env.home.join("bosun.db")).unwrap();
    let check: String = db
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    // The worktree is a sound git worktree still.
    let wt = env.home.join("worktrees");
    assert!(wt.exists());
    let _ = MockReply::RawSse {
        body: String::new(),
    };
}

#[test]
fn an_api_key_reaches_the_server_but_never_the_journal_output_or_commands() {
    let env = Env::new();
    let secret = "sk-test-THIS-IS-SECRET-0123456789";
    let server = MockModelServer::start_blocking(vec![
        tools(vec![call("e", "run_command", json!({"command": "env"}))]),
        text("done"),
    ])
    .unwrap();
    let run = env.run_with_env(
        &server,
        "print env",
        &["--api-key-env", "MY_PROVIDER_KEY"],
        &[("MY_PROVIDER_KEY", secret)],
    );
    // 6: answered, the task changed nothing.
    assert_eq!(run.code(), Some(6), "{}", run.stderr());
    let out = &run.output;
    let auth = server.requests()[0]
        .headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("authorization"))
        .map(|(_, v)| v.clone());
    assert_eq!(auth, Some(format!("Bearer {secret}")));
    assert!(!String::from_utf8_lossy(&out.stdout).contains(secret));
    assert!(!String::from_utf8_lossy(&out.stderr).contains(secret));
    for entry in std::fs::read_dir(&env.home).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            let bytes = std::fs::read(&path).unwrap();
            assert!(
                !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
                "the key is in {path:?}"
            );
        }
    }
}
