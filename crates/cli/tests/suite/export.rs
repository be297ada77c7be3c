//! Exports and the end of a task's history, against real tasks run by the real binary on the
//! mock model: a task as Markdown, JSON and a patch; the whole journal as JSON lines imported
//! into another journal; archive, delete and the retention setting.

use super::support::*;
use bosun_testkit::MockModelServer;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;

/// A finished task that ran a command and wrote NOTES.md (one checkpoint).
fn task_with_command(env: &Env, prompt: &str) -> String {
    let server = MockModelServer::start_blocking(vec![
        tools(vec![call(
            "c1",
            "run_command",
            json!({"command": "echo first line && echo second line"}),
        )]),
        tools(vec![call(
            "w1",
            "write_file",
            json!({"path": "NOTES.md", "content": "notes\nmore notes\n"}),
        )]),
        text("Wrote the notes after looking around."),
    ])
    .unwrap();
    let run = env.run(&server, prompt, &[]);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    run.task_id()
}

fn ok(env: &Env, args: &[&str]) -> String {
    let (success, out, err) = env.text(args);
    assert!(success, "bosun {args:?} failed: {err}\n{out}");
    out
}

/// `bosun ARGS` with another `$BOSUN_HOME`.
fn bosun_in(env: &Env, home: &Path, args: &[&str]) -> std::process::Output {
    let mut cmd: Command = env.bosun();
    cmd.env("BOSUN_HOME", home).args(args).output().unwrap()
}

fn listed(env: &Env, args: &[&str]) -> Vec<String> {
    env.json(args)
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect()
}

fn db(env: &Env) -> rusqlite::Connection {
    rusqlite::Connection::open(env.home.join("bosun.db")).unwrap()
}

fn count(env: &Env, sql: &str, task: &str) -> i64 {
    db(env).query_row(sql, [task], |r| r.get(0)).unwrap()
}

fn refs(env: &Env, task: &str) -> String {
    git(
        &env.repo,
        &[
            "for-each-ref",
            "--format=%(refname)",
            &format!("refs/bosun/{task}/"),
        ],
    )
}

#[test]
fn markdown_reads_as_a_transcript_with_folded_output_and_diffs() {
    let env = Env::new();
    let task = task_with_command(&env, "Take notes\nabout the repository");
    let file = env.dir.path().join("task.md");
    ok(&env, &["export", &task, "--markdown", path_str(&file)]);
    let md = std::fs::read_to_string(&file).unwrap();
    println!("{md}");

    assert!(md.starts_with("# Take notes\n\n| | |\n|---|---|\n"), "{md}");
    for line in [
        format!("| Task | `{task}` |"),
        "| Status | completed |".to_string(),
    ] {
        assert!(md.contains(&line), "{line} not in\n{md}");
    }
    let order = [
        "## Transcript",
        "**Prompt**\n\n> Take notes\n> about the repository\n",
        "### 1. `run_command` · `echo first line && echo second line`\n\n```sh\necho first line && echo second line\n```\n",
        "<details><summary>output (",
        "first line\nsecond line",
        "</details>",
        "### 2. `write_file` · `NOTES.md`",
        "#### Checkpoint 1 · 1 file: `NOTES.md`\n\n```diff\ndiff --git a/NOTES.md b/NOTES.md\n--- /dev/null\n+++ b/NOTES.md\n@@ -0,0 +1,2 @@\n+notes\n+more notes\n```\n",
        "Wrote the notes after looking around.",
        "## Result: completed",
    ];
    let mut at = 0;
    for part in order {
        let found = md[at..]
            .find(part)
            .unwrap_or_else(|| panic!("{part:?} not after byte {at} of\n{md}"));
        at += found + part.len();
    }
    // Every fence is closed.
    assert_eq!(
        md.lines().filter(|l| l.starts_with("```")).count() % 2,
        0,
        "{md}"
    );
}

#[test]
fn one_task_as_json_holds_its_row_and_events() {
    let env = Env::new();
    let task = task_with_command(&env, "Take notes");
    let file = env.dir.path().join("task.json");
    ok(&env, &["export", &task, "--json", path_str(&file)]);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(v["task"]["id"], task);
    let shown = ok(&env, &["show", &task, "--json"]);
    let events: Vec<Value> = shown
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(v["events"].as_array().unwrap(), &events);
}

#[test]
fn the_patch_applies_on_the_base_with_git_apply() {
    let env = Env::new();
    let task = task_with_command(&env, "Take notes");
    ok(&env, &["accept", &task]);
    let patch = env.dir.path().join("accepted.patch");
    ok(&env, &["export", &task, "--patch", path_str(&patch)]);
    let clone = env.dir.path().join("clone");
    git(
        env.dir.path(),
        &["clone", "--quiet", path_str(&env.repo), path_str(&clone)],
    );
    git(&clone, &["apply", "--check", path_str(&patch)]);
    git(&clone, &["apply", path_str(&patch)]);
    assert_eq!(
        std::fs::read_to_string(clone.join("NOTES.md")).unwrap(),
        "notes\nmore notes\n"
    );
}

#[test]
fn exporting_needs_exactly_one_format() {
    let env = Env::new();
    let task = task_with_command(&env, "Take notes");
    let a = env.dir.path().join("a");
    let b = env.dir.path().join("b");
    for args in [
        vec!["export", task.as_str()],
        vec![
            "export",
            &task,
            "--patch",
            path_str(&a),
            "--json",
            path_str(&b),
        ],
        vec![
            "export",
            &task,
            "--markdown",
            path_str(&a),
            "--json",
            path_str(&b),
        ],
        vec!["export", "--markdown", path_str(&a)],
        vec!["export", "--all"],
        vec!["export", &task, "--all", "--jsonl", path_str(&a)],
    ] {
        let out = env.bosun().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        for flag in ["--patch", "--markdown", "--json ", "--jsonl"] {
            assert!(err.contains(flag), "{args:?}: {err}");
        }
        assert!(!a.exists() && !b.exists(), "{args:?} wrote a file");
    }
}

#[test]
fn the_journal_as_json_lines_imports_into_another_journal_with_the_same_events() {
    let env = Env::new();
    let first = task_with_command(&env, "Take notes");
    let second = task_with_command(&env, "Take more notes");
    ok(&env, &["archive", &second]);
    let file = env.dir.path().join("journal.jsonl");
    let said = ok(&env, &["export", "--all", "--jsonl", path_str(&file)]);
    assert!(said.contains("2 tasks"), "{said}");
    let text = std::fs::read_to_string(&file).unwrap();
    let header: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(header["bosun_journal"], 1);
    assert!(header["exported_at"].is_string());

    let other = env.dir.path().join("other-home");
    let imported = bosun_in(&env, &other, &["import-journal", path_str(&file)]);
    let said = String::from_utf8_lossy(&imported.stdout);
    assert_eq!(
        imported.status.code(),
        Some(0),
        "{said} {}",
        String::from_utf8_lossy(&imported.stderr)
    );
    assert!(said.contains("imported 2 tasks"), "{said}");
    for task in [&first, &second] {
        let here = ok(&env, &["show", task, "--json"]);
        let there = bosun_in(&env, &other, &["show", task, "--json"]);
        assert!(!here.is_empty());
        assert_eq!(String::from_utf8_lossy(&there.stdout), here, "task {task}");
    }
    // The rows came too, and the archive mark.
    let rows = |home: &Path, args: &[&str]| -> Value {
        serde_json::from_slice(&bosun_in(&env, home, args).stdout).unwrap()
    };
    assert_eq!(
        rows(&other, &["tasks", "--json"]),
        rows(&env.home, &["tasks", "--json"])
    );
    assert_eq!(
        rows(&other, &["tasks", "--json", "--archived"]),
        rows(&env.home, &["tasks", "--json", "--archived"])
    );

    // Importing again finds everything there already.
    let again = bosun_in(&env, &other, &["import-journal", path_str(&file)]);
    assert_eq!(again.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&again.stdout).contains("2 already here"));

    // A task whose id is there with other content is skipped, and said so: exit 1.
    let changed = text.replace("Take more notes", "Take other notes");
    let changed_file = env.dir.path().join("changed.jsonl");
    std::fs::write(&changed_file, changed).unwrap();
    let out = bosun_in(&env, &other, &["import-journal", path_str(&changed_file)]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains(&format!("skipped task {second}")), "{said}");
}

#[test]
fn a_malformed_journal_file_imports_nothing_and_names_the_line() {
    let env = Env::new();
    let task = task_with_command(&env, "Take notes");
    let file = env.dir.path().join("journal.jsonl");
    ok(&env, &["export", "--all", "--jsonl", path_str(&file)]);
    let text = std::fs::read_to_string(&file).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[3] = "{\"seq\": 3, \"oops\": true";
    let broken = env.dir.path().join("broken.jsonl");
    std::fs::write(&broken, lines.join("\n")).unwrap();

    let other = env.dir.path().join("other-home");
    let out = bosun_in(&env, &other, &["import-journal", path_str(&broken)]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("broken.jsonl:4:"), "{err}");
    let listed = bosun_in(&env, &other, &["tasks", "--json"]);
    assert_eq!(String::from_utf8_lossy(&listed.stdout).trim(), "[]");
    let shown = bosun_in(&env, &other, &["show", &task]);
    assert_eq!(shown.status.code(), Some(2));

    // Not an export at all: line 1.
    std::fs::write(&broken, "hello\n").unwrap();
    let out = bosun_in(&env, &other, &["import-journal", path_str(&broken)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("broken.jsonl:1:"));
}

#[test]
fn an_archived_task_is_hidden_until_undone() {
    let env = Env::new();
    let task = task_with_command(&env, "Take notes");
    assert_eq!(listed(&env, &["tasks", "--json"]), vec![task.clone()]);
    ok(&env, &["archive", &task]);
    assert!(listed(&env, &["tasks", "--json"]).is_empty());
    assert_eq!(
        listed(&env, &["tasks", "--json", "--archived"]),
        vec![task.clone()]
    );
    // Everything is kept.
    assert!(ok(&env, &["show", &task]).contains("Take notes"));
    assert!(!refs(&env, &task).is_empty());
    ok(&env, &["archive", &task, "--undo"]);
    assert_eq!(listed(&env, &["tasks", "--json"]), vec![task.clone()]);
    assert!(listed(&env, &["tasks", "--json", "--archived"]).is_empty());
}

#[test]
fn delete_removes_the_transcript_refs_and_worktree_and_keeps_usage() {
    let env = Env::new();
    let task = task_with_command(&env, "Take notes");
    let usage = count(&env, "SELECT count(*) FROM usage WHERE task_id = ?1", &task);
    assert!(usage > 0);
    let worktree = env.json(&["tasks", "--json"])[0]["worktree"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(Path::new(&worktree).exists());
    assert!(!refs(&env, &task).is_empty());

    let said = ok(&env, &["delete", &task]);
    assert!(said.contains(&format!("deleted task {task}")), "{said}");
    assert_eq!(
        count(
            &env,
            "SELECT count(*) FROM events WHERE task_id = ?1",
            &task
        ),
        0
    );
    assert_eq!(
        count(
            &env,
            "SELECT count(*) FROM checkpoints WHERE task_id = ?1",
            &task
        ),
        0
    );
    assert_eq!(
        count(&env, "SELECT count(*) FROM usage WHERE task_id = ?1", &task),
        usage
    );
    assert_eq!(refs(&env, &task), "");
    assert!(!Path::new(&worktree).exists());
    assert!(!git(&env.repo, &["branch", "--list", &format!("bosun/{task}")]).contains("bosun/"));
    assert!(listed(&env, &["tasks", "--json"]).is_empty());
    assert!(ok(&env, &["show", &task]).contains("transcript deleted by `bosun delete`"));
}

#[test]
fn a_running_task_is_not_deleted() {
    let env = Env::new();
    let task = task_with_command(&env, "Take notes");
    // This test process stands in for the task's live owner.
    db(&env)
        .execute(
            "UPDATE tasks SET status = 'running', owner_pid = ?2, owner_started = NULL WHERE id = ?1",
            rusqlite::params![task, std::process::id()],
        )
        .unwrap();
    let out = env.bosun().args(["delete", &task]).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        count(
            &env,
            "SELECT count(*) FROM events WHERE task_id = ?1",
            &task
        ) > 0
    );
    assert!(!refs(&env, &task).is_empty());
}

#[test]
fn retention_removes_old_transcripts_and_keeps_their_cost_rows() {
    let env = Env::new();
    let old = task_with_command(&env, "Take notes");
    let recent = task_with_command(&env, "Take more notes");
    db(&env)
        .execute(
            "UPDATE tasks SET finished_at = '2020-01-01T00:00:00.000Z' WHERE id = ?1",
            [&old],
        )
        .unwrap();
    let usage = count(&env, "SELECT count(*) FROM usage WHERE task_id = ?1", &old);
    let tokens = count(&env, "SELECT input_tokens FROM tasks WHERE id = ?1", &old);
    std::fs::create_dir_all(&env.home).unwrap();
    std::fs::write(
        env.home.join("config.toml"),
        "[history]\nretention_days = 30\n",
    )
    .unwrap();

    // `bosun tasks` applies it; both tasks stay listed.
    let mut ids = listed(&env, &["tasks", "--json"]);
    ids.sort();
    let mut both = vec![old.clone(), recent.clone()];
    both.sort();
    assert_eq!(ids, both);
    assert_eq!(
        count(&env, "SELECT count(*) FROM events WHERE task_id = ?1", &old),
        0
    );
    assert_eq!(
        count(&env, "SELECT count(*) FROM usage WHERE task_id = ?1", &old),
        usage
    );
    assert_eq!(
        count(&env, "SELECT input_tokens FROM tasks WHERE id = ?1", &old),
        tokens
    );
    assert_eq!(refs(&env, &old), "");
    assert!(
        ok(&env, &["show", &old]).contains("transcript removed by retention (older than 30 days)")
    );
    // The recent task keeps everything.
    assert!(
        count(
            &env,
            "SELECT count(*) FROM events WHERE task_id = ?1",
            &recent
        ) > 0
    );
    assert!(!refs(&env, &recent).is_empty());
}

#[test]
fn markdown_shows_each_round_of_checks_with_its_failures_and_a_failing_command() {
    let mut env = Env::new();
    env.repo = bosun_testkit::checks_fixtures::python_calc_repo(env.dir.path()).unwrap();
    let broken = "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n";
    // Fixed, and documented: a net change (the base already adds correctly).
    let fixed = "\"\"\"Arithmetic.\"\"\"\n\n\ndef add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n";
    let server = MockModelServer::start_blocking(vec![
        tools(vec![call(
            "c1",
            "run_command",
            json!({"command": "exit 3"}),
        )]),
        tools(vec![call(
            "w1",
            "write_file",
            json!({"path": "calc.py", "content": broken}),
        )]),
        text("Done: add is implemented."),
        tools(vec![call(
            "w2",
            "write_file",
            json!({"path": "calc.py", "content": fixed}),
        )]),
        text("Fixed add."),
    ])
    .unwrap();
    let run = env.run(&server, "implement add", &[]);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let task = run.task_id();
    let file = env.dir.path().join("task.md");
    ok(&env, &["export", &task, "--markdown", path_str(&file)]);
    let md = std::fs::read_to_string(&file).unwrap();
    println!("{md}");
    assert!(md.contains("| Checks | passed |"), "{md}");
    assert!(md.contains("· error, exit 3 ·"), "{md}");
    assert!(
        md.contains("### Checks\n\n- **test** (on the base commit): passed\n- **test** (related tests): failed — 1 test failed"),
        "{md}"
    );
    assert_eq!(md.matches("### Checks").count(), 2, "{md}");
    assert!(md.contains("#### Checkpoint 2 · 1 file: `calc.py`"), "{md}");
    assert!(md.contains("-    return a - b\n+    return a + b"), "{md}");
    assert!(md.contains("## Result: completed"), "{md}");
}

#[test]
fn markdown_shows_an_approval_and_its_answer() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(vec![
        tools(vec![call(
            "t1",
            "run_command",
            json!({"command": "touch one.txt"}),
        )]),
        text("Touched it."),
    ])
    .unwrap();
    let run = run_answering(
        &env,
        &server,
        "touch a file",
        &[],
        |req| json!({"approval_id": req.approval_id, "decision": "deny", "note": "not today"}),
    );
    // Denied, it changed nothing: answered.
    assert_eq!(run.code(), Some(6), "{}", run.stderr());
    let task = run.task_id();
    let file = env.dir.path().join("task.md");
    ok(&env, &["export", &task, "--markdown", path_str(&file)]);
    let md = std::fs::read_to_string(&file).unwrap();
    println!("{md}");
    let asked = md
        .find("**Approval asked** for `run_command`: ")
        .expect(&md);
    let answered = md
        .find("**Answer:** denied by cli --json — “not today”")
        .expect(&md);
    assert!(asked < answered, "{md}");
    assert!(md.contains("· denied ·"), "{md}");
}

#[test]
fn an_imported_journal_naming_a_foreign_worktree_never_makes_bosun_write_or_remove_it() {
    let env = Env::new();
    let task = task_with_command(&env, "Take notes");
    let file = env.dir.path().join("journal.jsonl");
    ok(&env, &["export", "--all", "--jsonl", path_str(&file)]);
    // A hostile (or hand-edited) file: the task's worktree is a directory of the user's.
    let victim = env.dir.path().join("precious");
    std::fs::create_dir_all(&victim).unwrap();
    std::fs::write(victim.join("keep.txt"), "mine\n").unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    let first: Value = serde_json::from_str(text.lines().nth(1).unwrap()).unwrap();
    let worktree = first["task"]["worktree"].as_str().unwrap().to_string();
    let hostile = text.replace(&worktree, path_str(&victim));
    std::fs::write(&file, hostile).unwrap();

    let other = env.dir.path().join("other-home");
    let imported = bosun_in(&env, &other, &["import-journal", path_str(&file)]);
    assert_eq!(
        imported.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&imported.stderr)
    );
    // Restoring there is refused; deleting the task leaves the directory alone.
    let restore = bosun_in(&env, &other, &["restore", &task, "1"]);
    assert_eq!(restore.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&restore.stderr).contains("worktree"));
    let delete = bosun_in(&env, &other, &["delete", &task]);
    assert_eq!(
        delete.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&delete.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(victim.join("keep.txt")).unwrap(),
        "mine\n"
    );
}
