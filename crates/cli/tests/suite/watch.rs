//! The worktree watcher through `bosun run`: commands' checkpoints name exactly what each
//! command changed, a watch the cap (`BOSUN_WATCH_MAX`) cannot cover is reported, and nothing of
//! the watcher is left once the task ends.

use super::support::*;
use bosun_protocol::{EventMsg, TaskStatus};
use bosun_testkit::{MockModelServer, MockReply};
use pretty_assertions::assert_eq;
use serde_json::json;

fn commands() -> Vec<MockReply> {
    vec![
        tools(vec![call(
            "c1",
            "run_command",
            json!({"command": "mkdir -p gen/deep && echo a > gen/deep/a.txt && echo more >> README.md"}),
        )]),
        tools(vec![call(
            "c2",
            "run_command",
            json!({"command": "echo b > gen/deep/b.txt && mv README.md README.txt && chmod +x src/lib.rs"}),
        )]),
        tools(vec![call(
            "c3",
            "run_command",
            json!({"command": "rm -r gen"}),
        )]),
        text("done"),
    ]
}

/// The files of each checkpoint, in order.
fn checkpoint_files(run: &Run) -> Vec<Vec<String>> {
    run.events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::CheckpointCreated(c) => Some(c.files.clone()),
            _ => None,
        })
        .collect()
}

fn warnings(run: &Run) -> Vec<(String, String)> {
    run.events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::Warning(w) if w.code.starts_with("watch_") => {
                Some((w.code.clone(), w.message.clone()))
            }
            _ => None,
        })
        .collect()
}

fn expected() -> Vec<Vec<String>> {
    let files = |f: &[&str]| f.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    vec![
        files(&["README.md", "gen/deep/a.txt"]),
        files(&["README.md", "README.txt", "gen/deep/b.txt", "src/lib.rs"]),
        files(&["gen/deep/a.txt", "gen/deep/b.txt"]),
    ]
}

#[test]
fn each_command_checkpoint_names_exactly_what_the_command_changed() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(commands()).unwrap();
    let run = env.run(&server, "run three commands", &[]);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(run.finished().0, TaskStatus::Completed);
    assert_eq!(checkpoint_files(&run), expected());
    assert_eq!(warnings(&run), Vec::new());
    // The watcher's private directory went with it when the task ended.
    let task = run.task_id();
    let left: Vec<_> = std::fs::read_dir(env.home.join("workspace"))
        .unwrap()
        .flatten()
        .map(|repo| repo.path().join("tasks").join(&task).join("watch"))
        .filter(|dir| dir.exists())
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn past_bosun_watch_max_the_user_is_told_and_commands_still_checkpoint() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(commands()).unwrap();
    let run = env.run_with_env(
        &server,
        "run three commands",
        &[],
        &[("BOSUN_WATCH_MAX", "1")],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    // The fixture has two directories (the root and src/).
    let warned = warnings(&run);
    assert_eq!(warned.len(), 1, "{warned:?}");
    assert_eq!(warned[0].0, "watch_partial");
    assert!(
        warned[0]
            .1
            .contains("has 2 directories to watch and only 1 could be"),
        "{}",
        warned[0].1
    );
    assert_eq!(checkpoint_files(&run), expected());
}
