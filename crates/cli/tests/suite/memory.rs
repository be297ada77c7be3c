//! Memory per repository against the real binary, real fixture repositories, a real journal and
//! the mock model: what a failed, rejected or discarded task taught is in the next task's first
//! request (its system prompt, and `context_assembled` as `memory` items); `bosun memory` lists,
//! pins, deletes and adds; `[memory] enabled = false` writes and injects nothing; the section
//! stays within 500 tokens.

use super::support::*;
use bosun_protocol::{ContextKind, EventMsg, TaskStatus};
use bosun_testkit::MockModelServer;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

const HEADING: &str = "# What Bosun remembers about this repository";

fn system(req: &bosun_testkit::RecordedRequest) -> String {
    messages(req)
        .into_iter()
        .find(|m| m["role"] == "system")
        .and_then(|m| m["content"].as_str().map(str::to_string))
        .unwrap_or_default()
}

/// The memory section of a system prompt: its heading to the next blank line.
fn section(system: &str) -> Option<String> {
    let at = system.find(HEADING)?;
    let rest = &system[at..];
    Some(rest.split("\n\n").next().unwrap_or(rest).to_string())
}

/// The `memory` items of the run's `context_assembled` events (the first one).
fn memory_items(run: &Run) -> Vec<String> {
    run.events
        .iter()
        .find_map(|e| match &e.msg {
            EventMsg::ContextAssembled(c) => Some(c.clone()),
            _ => None,
        })
        .map(|c| {
            c.items
                .into_iter()
                .filter(|i| i.kind == ContextKind::Memory)
                .map(|i| i.reason)
                .collect()
        })
        .unwrap_or_default()
}

fn memories(env: &Env) -> Vec<Value> {
    let out = env
        .bosun()
        .args(["memory", "--json", "--repo", path_str(&env.repo)])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<Value>(&out.stdout)
        .unwrap()
        .as_array()
        .cloned()
        .unwrap()
}

fn of_kind<'a>(all: &'a [Value], kind: &str) -> Vec<&'a Value> {
    all.iter().filter(|m| m["kind"] == kind).collect()
}

fn ok(env: &Env, args: &[&str]) -> String {
    let (success, out, err) = env.text(args);
    assert!(success, "bosun {args:?} failed: {err}\n{out}");
    out
}

fn write(id: &str, path: &str, content: &str) -> bosun_testkit::MockReply {
    tools(vec![call(
        id,
        "write_file",
        json!({"path": path, "content": content}),
    )])
}

/// A task whose required check fails (one round; its first error comes from a file the task
/// wrote), with a check that passes beside it.
fn failing_task(env: &Env) -> Run {
    let server = MockModelServer::start_blocking(vec![
        tools(vec![
            call(
                "call_1",
                "write_file",
                json!({"path": "src/lib.rs", "content": "pub fn broken() {}\n"}),
            ),
            call(
                "call_2",
                "write_file",
                json!({"path": "LOG", "content": "compiling\nerror[E0425]: greeting is gone\nmore\n"}),
            ),
        ]),
        text("Done: rewrote lib.rs."),
    ])
    .unwrap();
    let run = env.run(
        &server,
        "Make greeting shout",
        &[
            "--check",
            "echo linted",
            "--check",
            "cat LOG >&2; exit 1",
            "--max-check-rounds",
            "1",
        ],
    );
    assert_eq!(run.code(), Some(5), "stderr: {}", run.stderr());
    assert_eq!(run.finished().0, TaskStatus::ChecksFailed);
    run
}

/// A task that answers at once; its first request is what the test looks at.
fn next_task(env: &Env) -> (Run, String) {
    let server =
        MockModelServer::start_blocking(vec![text("It returns \"Hello, NAME!\".")]).unwrap();
    let run = env.run(&server, "What does greeting return?", &["--no-checks"]);
    assert_eq!(run.code(), Some(6), "stderr: {}", run.stderr());
    let requests = server.model_requests();
    (run, system(&requests[0]))
}

#[test]
fn a_failed_task_is_remembered_and_the_next_task_is_told_in_its_first_request() {
    let env = Env::new();
    let failed = failing_task(&env);
    let task = failed.task_id();

    let all = memories(&env);
    let approach = of_kind(&all, "failed_approach");
    assert_eq!(approach.len(), 1, "{all:#?}");
    let text = approach[0]["text"].as_str().unwrap();
    assert_eq!(
        text,
        "Tried \"Make greeting shout\" (changed src/lib.rs, LOG): checks failed — `cat LOG >&2; exit 1`: error[E0425]: greeting is gone"
    );
    assert!(text.chars().count() <= 300, "{text}");
    assert_eq!(approach[0]["source_task"], task.as_str());
    assert_eq!(approach[0]["seen"], 1);
    let verified = of_kind(&all, "verification");
    assert_eq!(verified.len(), 1, "{all:#?}");
    assert_eq!(verified[0]["text"], "`echo linted` passes");
    // A task that failed changed nothing worth learning together.
    assert!(of_kind(&all, "co_change").is_empty(), "{all:#?}");

    let (next, prompt) = next_task(&env);
    let shown = section(&prompt).unwrap_or_else(|| panic!("no memory section in {prompt}"));
    assert!(
        shown.contains(&format!("- Failed before: {text}")),
        "{shown}"
    );
    assert!(
        shown.contains("- Verified: `echo linted` passes"),
        "{shown}"
    );
    let items = memory_items(&next);
    assert_eq!(items.len(), 2, "{items:?}");
    assert!(
        items.contains(&format!("Failed before: {text}")),
        "{items:?}"
    );

    // The listing says where each came from.
    let listed = ok(&env, &["memory", "--repo", path_str(&env.repo)]);
    assert!(listed.contains("failed_approach"), "{listed}");
    assert!(listed.contains(&task), "{listed}");
}

#[test]
fn a_discarded_task_is_remembered_with_its_answer_and_its_files_changed_together() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(vec![
        tools(vec![
            call(
                "w1",
                "write_file",
                json!({"path": "src/lib.rs", "content": "pub fn greeting() {}\n"}),
            ),
            call(
                "w2",
                "write_file",
                json!({"path": "NOTES.md", "content": "notes\n"}),
            ),
        ]),
        text("Replaced greeting with a stub."),
    ])
    .unwrap();
    let run = env.run(&server, "Simplify greeting", &["--no-checks"]);
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let task = run.task_id();
    let all = memories(&env);
    let together = of_kind(&all, "co_change");
    assert_eq!(together.len(), 1, "{all:#?}");
    assert_eq!(together[0]["text"], "NOTES.md, src/lib.rs");
    assert!(of_kind(&all, "failed_approach").is_empty(), "{all:#?}");

    ok(&env, &["discard", &task]);
    let all = memories(&env);
    let approach = of_kind(&all, "failed_approach");
    assert_eq!(approach.len(), 1, "{all:#?}");
    assert_eq!(
        approach[0]["text"],
        "Tried \"Simplify greeting\" (changed src/lib.rs, NOTES.md): discarded in review without a merge — its answer: Replaced greeting with a stub."
    );
    assert_eq!(approach[0]["source_task"], task.as_str());

    let (next, prompt) = next_task(&env);
    let shown = section(&prompt).unwrap();
    assert!(
        shown.contains("- Failed before: Tried \"Simplify greeting\""),
        "{shown}"
    );
    assert!(
        shown.contains("- Changed together: NOTES.md, src/lib.rs"),
        "{shown}"
    );
    // Newest first: the discard came after the co-change.
    assert!(
        shown.find("Failed before").unwrap() < shown.find("Changed together").unwrap(),
        "{shown}"
    );
    assert_eq!(memory_items(&next).len(), 2);
}

#[test]
fn a_task_whose_every_hunk_is_rejected_is_remembered_with_the_reviews_comment() {
    let env = Env::new();
    let server = MockModelServer::start_blocking(vec![
        write("w1", "NOTES.md", "notes\n"),
        text("Added notes."),
    ])
    .unwrap();
    let run = env.run(&server, "Add notes", &["--no-checks"]);
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let task = run.task_id();
    ok(
        &env,
        &["comment", &task, "NOTES.md:1", "Notes go in the README"],
    );
    ok(&env, &["reject", &task, "--all"]);
    let all = memories(&env);
    let approach = of_kind(&all, "failed_approach");
    assert_eq!(approach.len(), 1, "{all:#?}");
    assert_eq!(
        approach[0]["text"],
        "Tried \"Add notes\" (changed NOTES.md): every change was rejected in review — review said NOTES.md: Notes go in the README"
    );
    // Discarding it afterwards is the same lesson, not a second one.
    ok(&env, &["discard", &task]);
    assert_eq!(of_kind(&memories(&env), "failed_approach").len(), 1);

    let (_, prompt) = next_task(&env);
    assert!(
        section(&prompt).unwrap().contains(
            "every change was rejected in review — review said NOTES.md: Notes go in the README"
        ),
        "{prompt}"
    );
}

#[test]
fn memories_are_added_pinned_and_deleted_through_the_cli() {
    let env = Env::new();
    let repo = path_str(&env.repo);
    let first = ok(
        &env,
        &["memory", "add", "--repo", repo, "Use tabs, not spaces"],
    );
    assert_eq!(first, "remembered #1 (convention): Use tabs, not spaces\n");
    ok(
        &env,
        &["memory", "add", "--repo", repo, "Run   the\nlinter first"],
    );
    let again = ok(
        &env,
        &["memory", "add", "--repo", repo, "Use tabs, not spaces"],
    );
    assert_eq!(
        again,
        "remembered again #1 (convention): Use tabs, not spaces\n"
    );

    // Newest first; pinning puts the older one first.
    let texts = |env: &Env| -> Vec<(String, bool)> {
        memories(env)
            .iter()
            .map(|m| {
                (
                    m["text"].as_str().unwrap().to_string(),
                    m["pinned"].as_bool().unwrap(),
                )
            })
            .collect()
    };
    assert_eq!(
        texts(&env),
        [
            ("Use tabs, not spaces".to_string(), false),
            ("Run the linter first".to_string(), false)
        ]
    );
    ok(&env, &["memory", "pin", "2"]);
    ok(
        &env,
        &["memory", "add", "--repo", repo, "Keep commits small"],
    );
    assert_eq!(
        texts(&env),
        [
            ("Run the linter first".to_string(), true),
            ("Keep commits small".to_string(), false),
            ("Use tabs, not spaces".to_string(), false),
        ]
    );
    let listed = ok(&env, &["memory", "--repo", repo]);
    assert!(listed.starts_with("3 memories of "), "{listed}");
    let pinned_line = listed.lines().find(|l| l.starts_with("#2 ")).unwrap();
    assert!(pinned_line.contains("convention"), "{listed}");
    assert!(pinned_line.contains(" yes "), "{listed}");
    assert!(pinned_line.ends_with("Run the linter first"), "{listed}");
    assert!(listed.contains(" you "), "{listed}");

    // The next task is told, pinned first.
    let (next, prompt) = next_task(&env);
    let shown = section(&prompt).unwrap();
    let lines: Vec<&str> = shown.lines().filter(|l| l.starts_with("- ")).collect();
    assert_eq!(
        lines,
        [
            "- Convention: Run the linter first",
            "- Convention: Keep commits small",
            "- Convention: Use tabs, not spaces",
        ]
    );
    assert_eq!(memory_items(&next).len(), 3);

    // Unpinned and deleted.
    ok(&env, &["memory", "unpin", "#2"]);
    let deleted = ok(&env, &["memory", "delete", "1"]);
    assert_eq!(deleted, "deleted #1 (convention): Use tabs, not spaces\n");
    assert_eq!(
        texts(&env),
        [
            ("Run the linter first".to_string(), false),
            ("Keep commits small".to_string(), false),
        ]
    );

    // An id that matches nothing names the nearest; a path that is no repository is refused.
    let out = env
        .bosun()
        .args(["memory", "delete", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no memory has the id #1"), "{err}");
    assert!(err.contains("the nearest: #2, #3"), "{err}");
    let out = env.bosun().args(["memory", "pin", "x"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let elsewhere = tempfile::tempdir().unwrap();
    for args in [
        vec!["memory", "--repo", path_str(elsewhere.path())],
        vec!["memory", "add", "--repo", path_str(elsewhere.path()), "x"],
    ] {
        let out = env.bosun().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("not inside a git repository"), "{err}");
    }
    // Without --repo: the repository of the current directory.
    let out = env
        .bosun()
        .args(["memory", "--json"])
        .current_dir(env.repo.join("src"))
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(
        serde_json::from_slice::<Value>(&out.stdout)
            .unwrap()
            .as_array()
            .unwrap()
            .len(),
        2
    );
    let out = env
        .bosun()
        .args(["memory"])
        .current_dir(elsewhere.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--repo PATH"));
}

#[test]
fn with_memory_off_nothing_is_learned_and_nothing_is_injected() {
    let env = Env::new();
    std::fs::create_dir_all(&env.home).unwrap();
    std::fs::write(env.home.join("config.toml"), "[memory]\nenabled = false\n").unwrap();
    failing_task(&env);
    assert_eq!(memories(&env), Vec::<Value>::new());
    // Written by hand, it is kept, but still not put in a prompt.
    ok(
        &env,
        &["memory", "add", "--repo", path_str(&env.repo), "Use tabs"],
    );
    let listed = ok(&env, &["memory", "--repo", path_str(&env.repo)]);
    assert!(listed.starts_with("memory is off"), "{listed}");
    let (next, prompt) = next_task(&env);
    assert!(!prompt.contains(HEADING), "{prompt}");
    assert!(!prompt.contains("Use tabs"), "{prompt}");
    assert!(memory_items(&next).is_empty());
    assert_eq!(memories(&env).len(), 1, "the next task learned nothing");

    // On again, the same journal's memory is used.
    std::fs::write(env.home.join("config.toml"), "").unwrap();
    let (_, prompt) = next_task(&env);
    assert!(section(&prompt).unwrap().contains("- Convention: Use tabs"));
}

#[test]
fn the_memory_section_stays_within_500_tokens_newest_first() {
    let env = Env::new();
    std::fs::create_dir_all(&env.home).unwrap();
    let store = bosun_store::Store::open(&env.home.join("bosun.db")).unwrap();
    let repo = bosun_core::memory::repo_key(&env.repo).unwrap();
    for i in 0..50 {
        store
            .remember(&bosun_store::NewMemory {
                repo: repo.clone(),
                kind: bosun_store::MemoryKind::Convention,
                text: format!("rule {i:02}: {}", "keep it tidy ".repeat(12)),
                source_task: None,
            })
            .unwrap();
    }
    drop(store);
    let (next, prompt) = next_task(&env);
    let shown = section(&prompt).unwrap();
    let tokens = (shown.len() as f64 / 3.5).ceil() as usize;
    assert!(tokens <= 500, "{tokens} tokens: {shown}");
    // Most of the budget is used, by the newest.
    assert!(tokens > 400, "{tokens} tokens: {shown}");
    let lines: Vec<&str> = shown.lines().filter(|l| l.starts_with("- ")).collect();
    assert!(lines[0].starts_with("- Convention: rule 49:"), "{lines:?}");
    assert!(lines.len() < 50);
    assert!(!shown.contains("rule 00"), "{shown}");
    // Each line shown is one item, and only those.
    assert_eq!(memory_items(&next).len(), lines.len());
}
