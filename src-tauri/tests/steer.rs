//! Steering through the app's engine: a follow-up to a completed task and a resume of a stopped
//! one, on a real repository and journal against the scripted mock model, as the task view's
//! message box and Resume button do.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bosun_app::engine::{Engine, LaunchRequest, ProviderChoice};
use bosun_policy::Mode;
use bosun_protocol::{EventMsg, ResumeKind, TaskId, TaskStatus};
use bosun_store::Store;
use bosun_testkit::{MockModelServer, MockReply, fixture_repo};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn request(repo: &std::path::Path, mock: &MockModelServer) -> LaunchRequest {
    LaunchRequest {
        repo: repo.display().to_string(),
        prompt: "Say hello".into(),
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

/// Waits for the task's `n`th `task_finished` event and returns its status.
async fn finished(reader: &Store, task: &TaskId, n: usize) -> TaskStatus {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let events = reader.events(task, 0, 10_000).unwrap();
        let ends: Vec<_> = events
            .iter()
            .filter_map(|e| match &e.msg {
                EventMsg::TaskFinished(f) => Some(f.status),
                _ => None,
            })
            .collect();
        if let Some(status) = ends.get(n - 1) {
            return *status;
        }
        assert!(Instant::now() < deadline, "timed out: {events:#?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn idle(engine: &Engine) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !engine.running().is_empty() {
        assert!(Instant::now() < deadline, "the task stayed in the engine");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follow_up_continues_a_completed_task_with_its_conversation_and_a_resume_restarts_a_stopped_one()
 {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let repo = fixture_repo(&dir.path().join("repo")).unwrap();
    let db = home.join("bosun.db");
    let engine = Arc::new(Engine::new(
        home,
        Arc::new(Store::open(&db).unwrap()),
        false,
    ));
    let reader = Store::open(&db).unwrap();
    let mock = MockModelServer::start(vec![MockReply::text("Hello!")])
        .await
        .unwrap();

    let task = engine.start(request(&repo, &mock)).await.unwrap();
    assert_eq!(finished(&reader, &task, 1).await, TaskStatus::Answered);
    idle(&engine).await;

    // A follow-up: the same task runs again in the app, and the model sees the whole conversation.
    mock.push(MockReply::text("Bonjour!"));
    let again = engine
        .continue_task(task.clone(), Some("Now in French".into()))
        .await
        .unwrap();
    assert_eq!(again, task);
    assert_eq!(finished(&reader, &task, 2).await, TaskStatus::Answered);
    let bodies: Vec<String> = mock
        .model_requests()
        .iter()
        .map(|r| r.body.to_string())
        .collect();
    assert_eq!(bodies.len(), 2);
    for said in ["Say hello", "Hello!", "Now in French"] {
        assert!(bodies[1].contains(said), "{said:?} missing: {}", bodies[1]);
    }
    idle(&engine).await;
    assert_eq!(reader.task(&task).unwrap().status, TaskStatus::Answered);

    // Stopped while it waits for an approval, then resumed: it runs again and answers (nothing was changed).
    mock.push(MockReply::tool_call(
        "call_a",
        "run_command",
        r#"{"command":"touch a.txt"}"#,
    ));
    engine
        .continue_task(task.clone(), Some("Make a.txt".into()))
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !engine.running().iter().any(|(_, waiting)| *waiting > 0) {
        assert!(Instant::now() < deadline, "no approval was asked");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    engine.stop(&task).unwrap();
    assert_eq!(finished(&reader, &task, 3).await, TaskStatus::Interrupted);
    idle(&engine).await;

    mock.push(MockReply::text("Picked up where I stopped."));
    engine.continue_task(task.clone(), None).await.unwrap();
    assert_eq!(finished(&reader, &task, 4).await, TaskStatus::Answered);
    let resumed: Vec<ResumeKind> = reader
        .events(&task, 0, 10_000)
        .unwrap()
        .into_iter()
        .filter_map(|e| match e.msg {
            EventMsg::TaskResumed(r) => Some(r.kind),
            _ => None,
        })
        .collect();
    assert_eq!(
        resumed,
        [
            ResumeKind::FollowUp,
            ResumeKind::FollowUp,
            ResumeKind::Resume
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_follow_up_or_an_unknown_task_is_refused_with_a_reason() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let engine = Arc::new(Engine::new(
        home.clone(),
        Arc::new(Store::open(&home.join("bosun.db")).unwrap()),
        false,
    ));
    let err = engine
        .continue_task(TaskId("t-missing".into()), Some("  ".into()))
        .await
        .unwrap_err();
    assert_eq!(err.code, "bad_request");
    let err = engine
        .continue_task(TaskId("t-missing".into()), Some("go on".into()))
        .await
        .unwrap_err();
    assert_eq!(err.code, "not_found", "{err}");
    assert!(engine.running().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follow_up_keeps_the_step_limit_the_task_was_started_with() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let repo = fixture_repo(&dir.path().join("repo")).unwrap();
    let db = home.join("bosun.db");
    let engine = Arc::new(Engine::new(
        home,
        Arc::new(Store::open(&db).unwrap()),
        false,
    ));
    let reader = Store::open(&db).unwrap();
    let mock = MockModelServer::start(vec![MockReply::text("Hello!")])
        .await
        .unwrap();
    let mut started_with_two = request(&repo, &mock);
    started_with_two.max_steps = Some(2);
    let task = engine.start(started_with_two).await.unwrap();
    assert_eq!(finished(&reader, &task, 1).await, TaskStatus::Answered);
    idle(&engine).await;

    // The follow-up would go on planning forever: it is stopped after 2 model requests, not 100.
    for n in 0..3 {
        mock.push(MockReply::tool_call(
            &format!("call_plan_{n}"),
            "update_plan",
            r#"{"items":[{"step":"Say it in French","status":"in_progress"}]}"#,
        ));
    }
    engine
        .continue_task(task.clone(), Some("Now in French".into()))
        .await
        .unwrap();
    assert_eq!(finished(&reader, &task, 2).await, TaskStatus::MaxSteps);
    assert_eq!(mock.model_requests().len(), 1 + 2);
    idle(&engine).await;
}

/// The timeline's pin buttons: a pin sent while the task waits is journaled at its next turn
/// (or refused, saying why), and what is pinned is sent with every request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pins_from_the_app_are_journaled_at_the_next_turn_and_a_wrong_one_is_refused() {
    use bosun_protocol::{PinOp, PinTarget};
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let repo = fixture_repo(&dir.path().join("repo")).unwrap();
    std::fs::write(repo.join("NOTES.md"), "Pinned note: keep the API stable.\n").unwrap();
    let git = |args: &[&str]| {
        assert!(
            std::process::Command::new("git")
                .args(args)
                .current_dir(&repo)
                .status()
                .unwrap()
                .success()
        )
    };
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "notes"]);
    let db = home.join("bosun.db");
    let engine = Arc::new(Engine::new(
        home,
        Arc::new(Store::open(&db).unwrap()),
        false,
    ));
    let reader = Store::open(&db).unwrap();
    let mock = MockModelServer::start(vec![
        MockReply::tool_call("call_a", "run_command", r#"{"command":"touch a.txt"}"#),
        MockReply::text("Done."),
    ])
    .await
    .unwrap();
    let task = engine.start(request(&repo, &mock)).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let approval = loop {
        if let Some(id) = engine.waiting_for(&task).first() {
            break id.clone();
        }
        assert!(Instant::now() < deadline, "no approval was asked");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let pin = |target: PinTarget| PinOp {
        target,
        pinned: true,
        by: None,
    };
    engine
        .pin(
            &task,
            pin(PinTarget::Message {
                text: "Say hello".into(),
            }),
        )
        .unwrap();
    engine
        .pin(
            &task,
            pin(PinTarget::File {
                path: "NOTES.md".into(),
            }),
        )
        .unwrap();
    engine
        .pin(
            &task,
            pin(PinTarget::Call {
                call_id: "call_zz".into(),
            }),
        )
        .unwrap();
    engine
        .answer(
            &task,
            bosun_protocol::ApprovalAnswer {
                approval_id: approval,
                decision: bosun_protocol::ApprovalDecision::ApproveOnce,
                rule: None,
                scope: None,
                note: None,
                text: None,
                by: None,
            },
        )
        .unwrap();
    finished(&reader, &task, 1).await;
    let events = reader.events(&task, 0, 10_000).unwrap();
    let pinned: Vec<(PinTarget, String)> = events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::ContextPinned(p) if p.pinned => Some((p.target.clone(), p.by.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        pinned,
        [
            (
                PinTarget::Message {
                    text: "Say hello".into()
                },
                "app".to_string()
            ),
            (
                PinTarget::File {
                    path: "NOTES.md".into()
                },
                "app".to_string()
            ),
        ]
    );
    let refused: Vec<String> = events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::Warning(w) if w.code == "pin_refused" => Some(w.message.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert!(
        refused[0].contains("call_zz") && refused[0].contains("call_a"),
        "{refused:?}"
    );
    // The request after the pins carries the pinned file.
    let last = mock.model_requests().pop().unwrap().body.to_string();
    assert!(last.contains("Pinned note: keep the API stable."), "{last}");
    // Pinning a task that is not running says so.
    idle(&engine).await;
    let err = engine
        .pin(
            &task,
            pin(PinTarget::File {
                path: "NOTES.md".into(),
            }),
        )
        .unwrap_err();
    assert_eq!(err.code, "not_running", "{err:?}");
}
