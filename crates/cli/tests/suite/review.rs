//! Reviewing a task from the CLI: hunks with provenance, reject (in the worktree), comments sent
//! back to the agent, accept, merge into a branch, export, undo, discard — against real tasks
//! run by the real binary on the mock model.

use super::support::*;
use bosun_testkit::MockModelServer;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use std::path::Path;

const LIB_RS: &str = "/// A friendly greeting.\npub fn greeting(name: &str) -> String {\n    format!(\"Hello, {name}!\")\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn greets() {\n        assert_eq!(super::greeting(\"a\"), \"Hello, a!\");\n    }\n}\n";

/// The fixture's lib.rs with its first and tenth lines changed: two hunks.
fn edited_lib() -> String {
    LIB_RS
        .replace("/// A friendly greeting.", "/// A warm greeting.")
        .replace("super::greeting(\"a\")", "super::greeting(\"b\")")
        .replace("Hello, a!", "Hello, b!")
}

/// A finished task that rewrote src/lib.rs (two hunks) and added NOTES.md.
fn task_with_changes(env: &Env) -> (MockModelServer, String) {
    let server = MockModelServer::start_blocking(vec![
        said_then(
            "I will reword the doc comment and the test.",
            vec![
                call(
                    "w1",
                    "write_file",
                    json!({"path": "src/lib.rs", "content": edited_lib()}),
                ),
                call(
                    "w2",
                    "write_file",
                    json!({"path": "NOTES.md", "content": "notes\n"}),
                ),
            ],
        ),
        text("Reworded the greeting and added notes."),
    ])
    .unwrap();
    let run = env.run(&server, "Reword the greeting", &[]);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    (server, run.task_id())
}

/// A reply with text before its tool calls (the provenance shows that text).
fn said_then(t: &str, calls: Vec<bosun_testkit::MockToolCall>) -> bosun_testkit::MockReply {
    bosun_testkit::MockReply::Reply {
        text: t.into(),
        tool_calls: calls,
        usage: usage(100, 20),
        chunk_delay_ms: 0,
        cut_after_events: None,
    }
}

fn file<'a>(review: &'a Value, path: &str) -> &'a Value {
    review["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == path)
        .unwrap_or_else(|| panic!("{path} not in {review:#}"))
}

fn states(f: &Value) -> Vec<String> {
    f["hunks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["state"].as_str().unwrap().to_string())
        .collect()
}

fn ok(env: &Env, args: &[&str]) -> String {
    let (success, out, err) = env.text(args);
    assert!(success, "bosun {args:?} failed: {err}\n{out}");
    out
}

fn worktree(env: &Env, task: &str) -> std::path::PathBuf {
    let tasks = env.json(&["tasks", "--json"]);
    let row = tasks
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == task)
        .unwrap()
        .clone();
    Path::new(row["worktree"].as_str().unwrap()).to_path_buf()
}

#[test]
fn a_review_from_reject_and_comment_to_a_squashed_merge_keeps_exactly_what_was_accepted() {
    let env = Env::new();
    let before = checkout_state(&env.repo);
    let (server, task) = task_with_changes(&env);

    // Files, hunks and where they came from.
    let review = env.json(&["review", &task, "--json"]);
    assert_eq!(review["counts"]["files"], 2, "{review:#}");
    let lib = file(&review, "src/lib.rs");
    assert_eq!(lib["status"], "modified");
    assert_eq!(states(lib), vec!["unreviewed", "unreviewed"]);
    let p = &lib["hunks"][0]["provenance"][0];
    assert_eq!(p["tool"], "write_file", "{p:#}");
    assert_eq!(p["summary"], "write_file src/lib.rs");
    assert_eq!(
        p["assistant_text"],
        "I will reword the doc comment and the test."
    );
    assert!(p["approval"].as_str().unwrap().starts_with("policy"), "{p}");
    assert_eq!(file(&review, "NOTES.md")["status"], "added");

    // Rejecting the second hunk takes it out of the worktree and records a checkpoint.
    let count = |env: &Env| {
        env.json(&["checkpoints", &task, "--json"])
            .as_array()
            .unwrap()
            .len()
    };
    let made_by_agent = count(&env);
    ok(&env, &["reject", &task, "src/lib.rs:2"]);
    let wt = worktree(&env, &task);
    let kept_first_only = LIB_RS.replace("/// A friendly greeting.", "/// A warm greeting.");
    assert_eq!(
        std::fs::read_to_string(wt.join("src/lib.rs")).unwrap(),
        kept_first_only
    );
    assert_eq!(count(&env), made_by_agent + 1);
    let review = env.json(&["review", &task, "--json"]);
    assert_eq!(
        states(file(&review, "src/lib.rs")),
        vec!["unreviewed", "rejected"]
    );

    // A comment on line 1, sent to the agent as one structured message.
    ok(
        &env,
        &["comment", &task, "src/lib.rs:1", "Say kind, not warm"],
    );
    server.push(tools(vec![call(
        "e1",
        "edit_file",
        json!({"path": "src/lib.rs", "old_string": "/// A warm greeting.", "new_string": "/// A kind greeting."}),
    )]));
    server.push(text("Now it says kind."));
    ok(
        &env,
        &["request-changes", &task, "--json", "--mode", "full-auto"],
    );
    let requests = server.requests();
    let sent = messages(&requests[2]);
    let last = sent.last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(last.contains("src/lib.rs line 1"), "{last}");
    assert!(
        last.contains("/// A warm greeting."),
        "the quoted code: {last}"
    );
    assert!(last.contains("Comment: Say kind, not warm"), "{last}");

    // The agent changed the commented line: the comment is resolved; the new change is up for
    // review and the rejected hunk stays rejected.
    let review = env.json(&["review", &task, "--json"]);
    assert_eq!(review["comments"][0]["resolved"], true, "{review:#}");
    assert_eq!(
        states(file(&review, "src/lib.rs")),
        vec!["unreviewed", "rejected"]
    );

    ok(&env, &["accept", &task]);
    let review = env.json(&["review", &task, "--json"]);
    assert_eq!(review["counts"]["accepted"], 2, "{review:#}");
    assert_eq!(review["counts"]["rejected"], 1);

    let out = ok(
        &env,
        &[
            "merge",
            &task,
            "--into",
            "feature",
            "--squash",
            "--message",
            "Kinder greeting",
        ],
    );
    assert!(out.contains("into feature (new branch)"), "{out}");
    // Exactly the accepted hunks, computed independently of Bosun.
    let expected_lib = LIB_RS.replace("/// A friendly greeting.", "/// A kind greeting.");
    assert_eq!(
        git(&env.repo, &["show", "feature:src/lib.rs"]),
        expected_lib
    );
    assert_eq!(git(&env.repo, &["show", "feature:NOTES.md"]), "notes\n");
    assert_eq!(
        git(&env.repo, &["log", "--format=%s", "main..feature"]),
        "Kinder greeting\n"
    );
    assert_eq!(
        git(&env.repo, &["diff", "--name-only", "main", "feature"]),
        "NOTES.md\nsrc/lib.rs\n"
    );
    // The user's checkout did not move (only the new branch is there).
    let after = checkout_state(&env.repo);
    assert_eq!(
        (&after.0, &after.1, &after.2),
        (&before.0, &before.1, &before.2)
    );

    // The same accepted change as a patch applies on the base.
    let patch = env.dir.path().join("accepted.patch");
    ok(&env, &["export", &task, "--patch", path_str(&patch)]);
    let clone = env.dir.path().join("clone");
    git(
        env.dir.path(),
        &["clone", "--quiet", path_str(&env.repo), path_str(&clone)],
    );
    git(&clone, &["apply", path_str(&patch)]);
    assert_eq!(
        std::fs::read_to_string(clone.join("src/lib.rs")).unwrap(),
        expected_lib
    );
    assert_eq!(
        std::fs::read_to_string(clone.join("NOTES.md")).unwrap(),
        "notes\n"
    );

    // Discarding removes the worktree and branch and keeps the history.
    ok(&env, &["discard", &task]);
    assert!(!wt.exists());
    assert!(!git(&env.repo, &["branch", "--list", &format!("bosun/{task}")]).contains("bosun/"));
    let shown = ok(&env, &["show", &task]);
    assert!(shown.contains("Reword the greeting"), "{shown}");
    let review = ok(&env, &["review", &task]);
    assert!(review.contains("merged into feature"), "{review}");
}

#[test]
fn undo_takes_back_an_accept_and_a_reject_puts_a_deleted_new_file_back_byte_for_byte() {
    let env = Env::new();
    let (_server, task) = task_with_changes(&env);
    let wt = worktree(&env, &task);

    ok(&env, &["accept", &task, "NOTES.md"]);
    assert_eq!(
        states(file(&env.json(&["review", &task, "--json"]), "NOTES.md")),
        vec!["accepted"]
    );
    let out = ok(&env, &["undo", &task]);
    assert!(out.contains("accept of 1 hunk in NOTES.md"), "{out}");
    assert_eq!(
        states(file(&env.json(&["review", &task, "--json"]), "NOTES.md")),
        vec!["unreviewed"]
    );

    // Rejecting an added file removes it from the worktree; undo brings it back.
    ok(&env, &["reject", &task, "NOTES.md"]);
    assert!(!wt.join("NOTES.md").exists());
    let review = env.json(&["review", &task, "--json"]);
    assert_eq!(file(&review, "NOTES.md")["state"], "rejected", "{review:#}");
    ok(&env, &["undo", &task]);
    assert_eq!(std::fs::read(wt.join("NOTES.md")).unwrap(), b"notes\n");
    assert_eq!(
        states(file(&env.json(&["review", &task, "--json"]), "NOTES.md")),
        vec!["unreviewed"]
    );

    // Nothing left to undo: a clear message, not a crash.
    let (success, _, err) = env.text(&["undo", &task]);
    assert!(!success);
    assert!(err.contains("nothing to undo"), "{err}");
    // Hunks that do not exist get a clear error.
    let (success, _, err) = env.text(&["reject", &task, "src/lib.rs:9"]);
    assert!(!success);
    assert!(
        err.contains("has no hunk 9: its hunks are 1 and 2"),
        "{err}"
    );
    let (success, _, err) = env.text(&["accept", &task, "no/such.file"]);
    assert!(!success);
    assert!(err.contains("is not a file task"), "{err}");
    assert_eq!(err.matches("is not a file").count(), 1, "said once: {err}");
    let (success, _, err) = env.text(&["merge", &task, "--into", "bad..name"]);
    assert!(!success);
    assert!(
        err.contains("`bad..name` is not a valid branch name"),
        "{err}"
    );
}

#[test]
fn merging_into_the_checked_out_branch_needs_a_clean_checkout_and_then_updates_it() {
    let env = Env::new();
    let (_server, task) = task_with_changes(&env);
    ok(&env, &["accept", &task]);

    std::fs::write(
        env.repo.join("README.md"),
        "# demo, being edited by the user\n",
    )
    .unwrap();
    let (success, _, err) = env.text(&["merge", &task]);
    assert!(!success, "a dirty checkout must refuse");
    assert!(err.contains("uncommitted changes"), "{err}");
    assert!(err.contains("README.md"), "{err}");
    // The user's edit is still there, untouched.
    assert_eq!(
        std::fs::read_to_string(env.repo.join("README.md")).unwrap(),
        "# demo, being edited by the user\n"
    );

    git(&env.repo, &["checkout", "--quiet", "--", "README.md"]);
    let out = ok(&env, &["merge", &task]);
    assert!(out.contains("into main"), "{out}");
    assert!(out.contains("checked out"), "{out}");
    assert_eq!(
        std::fs::read_to_string(env.repo.join("src/lib.rs")).unwrap(),
        edited_lib()
    );
    assert_eq!(
        std::fs::read_to_string(env.repo.join("NOTES.md")).unwrap(),
        "notes\n"
    );
    assert_eq!(
        git(&env.repo, &["status", "--porcelain"]),
        "",
        "index and tree agree with HEAD"
    );
    assert_eq!(
        git(&env.repo, &["log", "-1", "--format=%s"]),
        "Reword the greeting\n"
    );
}

#[test]
fn a_base_that_moved_into_a_conflict_refuses_the_merge_and_a_rebase_leaves_conflict_markers() {
    let env = Env::new();
    let (_server, task) = task_with_changes(&env);
    ok(&env, &["accept", &task]);
    // The user changes the same line on main meanwhile.
    std::fs::write(
        env.repo.join("src/lib.rs"),
        LIB_RS.replace("/// A friendly greeting.", "/// A greeting, by the user."),
    )
    .unwrap();
    git(
        &env.repo,
        &["commit", "--quiet", "-am", "User's own change"],
    );
    let main_before = git(&env.repo, &["rev-parse", "main"]);

    let (success, _, err) = env.text(&["merge", &task]);
    assert!(!success);
    assert!(err.contains("src/lib.rs"), "{err}");
    assert!(err.contains("rebase"), "{err}");
    assert_eq!(
        git(&env.repo, &["rev-parse", "main"]),
        main_before,
        "main did not move"
    );

    let out = ok(&env, &["rebase", &task]);
    assert!(out.contains("src/lib.rs"), "{out}");
    let wt = worktree(&env, &task);
    let text = std::fs::read_to_string(wt.join("src/lib.rs")).unwrap();
    assert!(
        text.contains("<<<<<<<") && text.contains(">>>>>>>"),
        "{text}"
    );
    assert!(text.contains("/// A greeting, by the user.") && text.contains("/// A warm greeting."));
    // The review is now against the new base: NOTES.md is still a change, the user's line is not.
    let review = env.json(&["review", &task, "--json"]);
    assert_eq!(review["base_commit"].as_str().unwrap(), main_before.trim());
    assert_eq!(file(&review, "NOTES.md")["status"], "added");
}

/// The line `bosun review TASK` prints about the base branch, if any.
fn moved_line(out: &str) -> Option<&str> {
    out.lines().find(|l| l.contains("since this task started"))
}

#[test]
fn the_review_says_when_main_moved_since_the_task_started_until_the_task_is_rebased() {
    let env = Env::new();
    let (_server, task) = task_with_changes(&env);
    let base = git(&env.repo, &["rev-parse", "main"]).trim().to_string();
    assert_eq!(moved_line(&ok(&env, &["review", &task])), None);
    assert_eq!(
        env.json(&["review", &task, "--json"]).get("base_moved"),
        None
    );

    // The user commits to main: one commit, then two more.
    let commit = |name: &str| {
        std::fs::write(env.repo.join(name), "the user's\n").unwrap();
        git(&env.repo, &["add", name]);
        git(&env.repo, &["commit", "--quiet", "-m", name]);
    };
    commit("one.txt");
    assert_eq!(
        moved_line(&ok(&env, &["review", &task])),
        Some(format!("main moved 1 commit since this task started: bosun rebase {task}").as_str())
    );
    commit("two.txt");
    commit("three.txt");
    let tip = git(&env.repo, &["rev-parse", "main"]).trim().to_string();
    assert_eq!(
        moved_line(&ok(&env, &["review", &task])),
        Some(format!("main moved 3 commits since this task started: bosun rebase {task}").as_str())
    );
    let review = env.json(&["review", &task, "--json"]);
    assert_eq!(
        review["base_moved"],
        json!({"branch": "main", "base_commit": base, "tip": tip, "ahead": 3, "rewritten": false})
    );
    // Only told: the review is still against the task's base.
    assert_eq!(review["base_commit"], base.as_str());
    assert_eq!(review["counts"]["files"], 2);

    // The rebase the line names moves the task onto main's tip: nothing to say any more.
    ok(&env, &["rebase", &task]);
    assert_eq!(moved_line(&ok(&env, &["review", &task])), None);
    let review = env.json(&["review", &task, "--json"]);
    assert_eq!(review["base_commit"], tip.as_str());
    assert_eq!(review.get("base_moved"), None);

    // main reset past the new base (as by a force-push): its history no longer holds it.
    git(&env.repo, &["reset", "--quiet", "--hard", "HEAD~1"]);
    assert_eq!(
        moved_line(&ok(&env, &["review", &task])),
        Some(
            format!(
                "main was rewritten since this task started (the task's base is no longer on it): bosun rebase {task}"
            )
            .as_str()
        )
    );
    let moved = &env.json(&["review", &task, "--json"])["base_moved"];
    assert_eq!(
        (&moved["ahead"], &moved["rewritten"]),
        (&json!(0), &json!(true))
    );
}

#[test]
fn a_task_started_from_a_commit_never_hears_that_its_base_moved() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(vec![
        tools(vec![call(
            "w1",
            "write_file",
            json!({"path": "NOTES.md", "content": "notes\n"}),
        )]),
        text("Added notes."),
    ])
    .unwrap();
    let head = git(&env.repo, &["rev-parse", "HEAD"]).trim().to_string();
    let run = env.run(&server, "Add notes", &["--base", &head]);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let task = run.task_id();
    std::fs::write(env.repo.join("later.txt"), "later\n").unwrap();
    git(&env.repo, &["add", "later.txt"]);
    git(&env.repo, &["commit", "--quiet", "-m", "later"]);
    assert_eq!(moved_line(&ok(&env, &["review", &task])), None);
    assert_eq!(
        env.json(&["review", &task, "--json"]).get("base_moved"),
        None
    );
}

#[test]
fn undoing_a_reject_of_a_change_the_agent_made_again_leaves_the_file_as_the_agent_wrote_it() {
    let env = Env::new();
    let (server, task) = task_with_changes(&env);
    let wt = worktree(&env, &task);
    ok(&env, &["reject", &task, "src/lib.rs:2"]);
    assert_ne!(
        std::fs::read_to_string(wt.join("src/lib.rs")).unwrap(),
        edited_lib()
    );

    // The agent writes the same change again.
    server.push(tools(vec![call(
        "w3",
        "write_file",
        json!({"path": "src/lib.rs", "content": edited_lib()}),
    )]));
    server.push(text("Wrote it again."));
    ok(
        &env,
        &["continue", &task, "--prompt", "write it again", "--json"],
    );
    let review = env.json(&["review", &task, "--json"]);
    assert_eq!(
        states(file(&review, "src/lib.rs")),
        vec!["unreviewed", "unreviewed"]
    );

    // Undo takes the rejection back without putting the change in a second time.
    ok(&env, &["undo", &task]);
    assert_eq!(
        std::fs::read_to_string(wt.join("src/lib.rs")).unwrap(),
        edited_lib()
    );
    let review = env.json(&["review", &task, "--json"]);
    assert_eq!(review["counts"]["rejected"], 0, "{review:#}");
    assert_eq!(
        states(file(&review, "src/lib.rs")),
        vec!["unreviewed", "unreviewed"]
    );
}

#[test]
fn merging_a_task_removes_its_branch_and_keeps_its_checkpoints() {
    let env = Env::new();
    let (server, task) = task_with_changes(&env);
    let branch = format!("bosun/{task}");
    let bosun_branches = |env: &Env| git(&env.repo, &["branch", "--list", "bosun/*"]);
    let checkpoint_refs = |env: &Env| {
        git(
            &env.repo,
            &[
                "for-each-ref",
                "--format=%(refname)",
                &format!("refs/bosun/{task}/"),
            ],
        )
    };
    assert!(bosun_branches(&env).contains(&branch));
    let checkpoints = checkpoint_refs(&env);
    assert!(!checkpoints.is_empty());

    ok(&env, &["accept", &task]);
    ok(&env, &["merge", &task, "--into", "feature"]);
    assert_eq!(bosun_branches(&env), "", "no bosun/* branch is left");
    assert_eq!(checkpoint_refs(&env), checkpoints, "the checkpoints stay");

    // The task can still be given more work, and merged again.
    server.push(tools(vec![call(
        "w3",
        "write_file",
        json!({"path": "MORE.md", "content": "more\n"}),
    )]));
    server.push(text("Added more."));
    ok(
        &env,
        &[
            "continue",
            &task,
            "--prompt",
            "add more",
            "--json",
            "--mode",
            "full-auto",
        ],
    );
    ok(&env, &["accept", &task, "MORE.md"]);
    ok(&env, &["merge", &task, "--into", "feature"]);
    assert_eq!(git(&env.repo, &["show", "feature:MORE.md"]), "more\n");
    assert_eq!(bosun_branches(&env), "");
}
