//! The app's engine end to end, without a window: a task started as the "New task" form starts
//! it, against the scripted mock model, on a real git repository and a real journal; approvals
//! answered and tasks stopped through the engine, as the app's commands do.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bosun_app::engine::{Engine, LaunchRequest, ProviderChoice};
use bosun_policy::Mode;
use bosun_protocol::{ApprovalAnswer, ApprovalDecision, EventMsg, TaskId, TaskStatus};
use bosun_store::Store;
use bosun_testkit::{MockModelServer, MockReply, fixture_repo};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

struct Setup {
    _dir: tempfile::TempDir,
    repo: std::path::PathBuf,
    engine: Arc<Engine>,
    /// A second connection, as the app's bridge reads the journal.
    reader: Store,
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let repo = fixture_repo(&dir.path().join("repo")).unwrap();
    let db = home.join("bosun.db");
    let store = Arc::new(Store::open(&db).unwrap());
    // The test binary is no sandbox trampoline: run commands unconfined, as the policy says.
    let engine = Arc::new(Engine::new(home, store, false));
    let reader = Store::open(&db).unwrap();
    Setup {
        _dir: dir,
        repo,
        engine,
        reader,
    }
}

fn request(repo: &Path, mock: &MockModelServer) -> LaunchRequest {
    LaunchRequest {
        repo: repo.display().to_string(),
        prompt: "Create the files".into(),
        base: None,
        provider: Some(ProviderChoice::Inline {
            api: "openai-chat".into(),
            base_url: Some(format!("{}/v1", mock.url())),
            model: "mock-model".into(),
            api_key_env: None,
        }),
        mode: Some(Mode::Ask),
        max_steps: None,
        max_cost_usd: None,
        checks: None,
        pins: Vec::new(),
        plan: false,
    }
}

/// Waits (failing after a generous deadline) for the first event of the task that `pick` accepts.
async fn next<T>(reader: &Store, task: &TaskId, pick: impl Fn(&EventMsg) -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let events = reader.events(task, 0, 10_000).unwrap();
        if let Some(found) = events.iter().find_map(|e| pick(&e.msg)) {
            return found;
        }
        assert!(
            Instant::now() < deadline,
            "timed out; events so far: {events:#?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn asked(command: &'static str) -> impl Fn(&EventMsg) -> Option<String> {
    move |m| match m {
        EventMsg::ApprovalRequested(r) if format!("{:?}", r.action).contains(command) => {
            Some(r.approval_id.clone())
        }
        _ => None,
    }
}

/// Waits until the engine has seen the approval request the journal already shows (its event
/// loop marks the task waiting a moment after the event is journaled).
async fn until_waiting(engine: &Engine, task: &TaskId, approval: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while engine.waiting_for(task) != [approval.to_string()] {
        assert!(
            Instant::now() < deadline,
            "the engine never saw the approval request"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn finished(m: &EventMsg) -> Option<TaskStatus> {
    match m {
        EventMsg::TaskFinished(f) => Some(f.status),
        _ => None,
    }
}

fn answer(id: String, decision: ApprovalDecision, note: Option<&str>) -> ApprovalAnswer {
    ApprovalAnswer {
        approval_id: id,
        decision,
        rule: None,
        scope: None,
        note: note.map(String::from),
        text: None,
        by: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_denied_command_tells_the_model_why_and_an_approved_one_runs() {
    let s = setup();
    let mock = MockModelServer::start(vec![
        MockReply::tool_call("call_a", "run_command", r#"{"command":"touch a.txt"}"#),
        MockReply::tool_call("call_b", "run_command", r#"{"command":"touch b.txt"}"#),
        MockReply::text("Made b.txt."),
    ])
    .await
    .unwrap();

    let task = s.engine.start(request(&s.repo, &mock)).await.unwrap();
    let ids: Vec<TaskId> = s.engine.running().into_iter().map(|(id, _)| id).collect();
    assert_eq!(ids, vec![task.clone()]);

    let first = next(&s.reader, &task, asked("touch a.txt")).await;
    until_waiting(&s.engine, &task, &first).await;
    let note = "Do not create a.txt; make b.txt instead";
    s.engine
        .answer(
            &task,
            answer(first.clone(), ApprovalDecision::Deny, Some(note)),
        )
        .unwrap();

    let second = next(&s.reader, &task, asked("touch b.txt")).await;
    until_waiting(&s.engine, &task, &second).await;
    // The first one is answered already: a second answer to it is refused.
    let again = s
        .engine
        .answer(&task, answer(first, ApprovalDecision::ApproveOnce, None))
        .unwrap_err();
    assert_eq!(again.code, "not_waiting");
    s.engine
        .answer(&task, answer(second, ApprovalDecision::ApproveTask, None))
        .unwrap();

    assert_eq!(
        next(&s.reader, &task, finished).await,
        TaskStatus::Completed
    );
    let row = s.reader.task(&task).unwrap();
    let worktree = Path::new(&row.worktree);
    assert!(
        worktree.join("b.txt").exists(),
        "the approved command did not run"
    );
    assert!(!worktree.join("a.txt").exists(), "the denied command ran");

    let bodies: Vec<String> = mock
        .model_requests()
        .iter()
        .map(|r| r.body.to_string())
        .collect();
    assert_eq!(bodies.len(), 3);
    assert!(
        bodies[1].contains(note) && bodies[1].contains(r#""role":"tool""#),
        "the note did not reach the model: {}",
        bodies[1]
    );
    let by_app = s
        .reader
        .events(&task, 0, 10_000)
        .unwrap()
        .into_iter()
        .filter(|e| matches!(&e.msg, EventMsg::ApprovalResolved(r) if r.by == "app"))
        .count();
    assert_eq!(by_app, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_interrupts_a_task_waiting_for_approval_and_then_it_is_no_longer_running() {
    let s = setup();
    let mock = MockModelServer::start(vec![MockReply::tool_call(
        "call_a",
        "run_command",
        r#"{"command":"touch a.txt"}"#,
    )])
    .await
    .unwrap();
    let task = s.engine.start(request(&s.repo, &mock)).await.unwrap();
    let approval = next(&s.reader, &task, asked("touch a.txt")).await;

    s.engine.stop(&task).unwrap();
    assert_eq!(
        next(&s.reader, &task, finished).await,
        TaskStatus::Interrupted
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    while !s.engine.running().is_empty() {
        assert!(Instant::now() < deadline, "the task stayed in the engine");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let err = s
        .engine
        .answer(&task, answer(approval, ApprovalDecision::ApproveOnce, None))
        .unwrap_err();
    assert_eq!(err.code, "not_running");
    assert_eq!(s.engine.stop(&task).unwrap_err().code, "not_running");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quitting_interrupts_the_running_tasks_and_waits_for_them() {
    let s = setup();
    let mock = MockModelServer::start(vec![MockReply::tool_call(
        "call_a",
        "run_command",
        r#"{"command":"touch a.txt"}"#,
    )])
    .await
    .unwrap();
    let task = s.engine.start(request(&s.repo, &mock)).await.unwrap();
    next(&s.reader, &task, asked("touch a.txt")).await;

    let engine = Arc::clone(&s.engine);
    let left = tokio::task::spawn_blocking(move || engine.shutdown(Duration::from_secs(30)))
        .await
        .unwrap();
    assert_eq!(left, 0);
    assert_eq!(
        next(&s.reader, &task, finished).await,
        TaskStatus::Interrupted
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_without_a_prompt_or_a_model_is_refused_with_a_reason() {
    let s = setup();
    let mock = MockModelServer::start(vec![]).await.unwrap();
    let mut empty = request(&s.repo, &mock);
    empty.prompt = "  ".into();
    let err = s.engine.start(empty).await.unwrap_err();
    assert_eq!(err.code, "bad_request");
    assert!(err.message.contains("prompt"), "{}", err.message);

    let mut no_repo = request(&s.repo, &mock);
    no_repo.repo = s.repo.join("missing").display().to_string();
    let err = s.engine.start(no_repo).await.unwrap_err();
    assert_eq!(err.code, "start_failed");
    assert!(s.engine.running().is_empty());
}

/// The worktrees under `$BOSUN_HOME/worktrees/<repo>/`, by name.
fn worktree_names(home: &Path) -> Vec<String> {
    let Ok(repos) = std::fs::read_dir(home.join("worktrees")) else {
        return Vec::new();
    };
    let mut names: Vec<String> = repos
        .flatten()
        .flat_map(|r| std::fs::read_dir(r.path()).unwrap().flatten())
        .map(|w| w.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_form_prepares_a_worktree_that_start_takes_and_closing_it_unused_removes_it() {
    let s = setup();
    let home = s._dir.path().join("home");
    let repo = s.repo.display().to_string();
    // Picking a repository prepares a spare; closing the form removes it.
    s.engine.prepare_worktree(&repo, None).await.unwrap();
    s.engine.release_prepared_worktree().await;
    assert_eq!(worktree_names(&home), Vec::<String>::new());

    // Picking it again, then Start: the task takes the prepared worktree (no second checkout).
    s.engine
        .prepare_worktree(&repo, Some("main"))
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !worktree_names(&home)
        .iter()
        .any(|n| n.starts_with("spare-"))
    {
        assert!(Instant::now() < deadline, "no worktree was prepared");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mock = MockModelServer::start(vec![MockReply::text("nothing to do")])
        .await
        .unwrap();
    let task = s.engine.start(request(&s.repo, &mock)).await.unwrap();
    let names = worktree_names(&home);
    assert_eq!(
        names,
        vec![task.0.clone()],
        "only the task's worktree, no spare left"
    );
    assert_eq!(next(&s.reader, &task, finished).await, TaskStatus::Answered);

    // A repository that is not one is refused with a reason the form shows.
    let missing = s.repo.join("missing").display().to_string();
    let err = s.engine.prepare_worktree(&missing, None).await.unwrap_err();
    assert_eq!(err.code, "not_a_repo");
}
