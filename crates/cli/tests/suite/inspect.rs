//! Reading a task back: checkpoints, diff, restore.

use super::support::*;
use bosun_testkit::MockModelServer;
use pretty_assertions::assert_eq;
use serde_json::json;

#[test]
fn checkpoints_diff_and_restore_work_from_the_journal() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(vec![
        tools(vec![call(
            "a",
            "write_file",
            json!({"path": "a.txt", "content": "one\n"}),
        )]),
        tools(vec![call(
            "b",
            "edit_file",
            json!({"path": "a.txt", "old_string": "one", "new_string": "two"}),
        )]),
        tools(vec![call(
            "c",
            "run_command",
            json!({"command": "rm README.md && echo new > b.txt"}),
        )]),
        text("done"),
    ])
    .unwrap();
    let run = env.run(&server, "change things", &[]);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let task = run.task_id();

    let cps = env.json(&["checkpoints", &task, "--json"]);
    let cps = cps.as_array().unwrap();
    assert_eq!(cps.len(), 3);
    assert_eq!(cps[0]["files"], json!(["a.txt"]));
    let mut files2: Vec<String> = cps[2]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_string())
        .collect();
    files2.sort();
    assert_eq!(files2, vec!["README.md", "b.txt"]);

    let (ok, stat, err) = env.text(&["diff", &task, "--stat"]);
    assert!(ok, "{err}");
    assert!(
        stat.contains("a.txt") && stat.contains("b.txt") && stat.contains("README.md"),
        "{stat}"
    );
    let (ok, diff, _) = env.text(&["diff", &task, "--from", "1", "--to", "2"]);
    assert!(ok);
    assert!(diff.contains("-one") && diff.contains("+two"), "{diff}");

    let (ok, out, err) = env.text(&["restore", &task, "1"]);
    assert!(ok, "{err}");
    assert!(
        out.contains("a.txt") && out.contains("README.md") && out.contains("b.txt"),
        "{out}"
    );
    let wt = run.worktree();
    assert_eq!(std::fs::read_to_string(wt.join("a.txt")).unwrap(), "one\n");
    assert!(wt.join("README.md").exists());
    assert!(!wt.join("b.txt").exists());

    let (ok, _, err) = env.text(&["restore", &task, "9"]);
    assert!(!ok && err.contains('9'), "{err}");
    let (ok, _, err) = env.text(&["show", "zzzz"]);
    assert!(!ok && err.contains("zzzz"), "{err}");
}
