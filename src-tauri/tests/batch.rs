//! The Batch and Compare views' commands without a window: batches and comparisons started,
//! followed, stopped, resumed and merged through `bosun_app::batch` as the commands call it,
//! against the scripted mock model, on real git repositories and a real journal. Their tasks
//! run in the app's engine, so their approvals are answered through it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bosun_app::batch::{self, BatchRequest, CompareStart};
use bosun_app::engine::Engine;
use bosun_protocol::{ApprovalAnswer, ApprovalDecision, TaskStatus};
use bosun_store::{BatchItemState, BatchStatus, Store};
use bosun_testkit::{MockModelServer, MockReply, fixture_repo};
use pretty_assertions::assert_eq;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

struct Setup {
    dir: tempfile::TempDir,
    home: PathBuf,
    engine: Arc<Engine>,
}

/// A home whose default provider is the mock model at `url`.
fn setup(url: &str) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(
        home.join("config.toml"),
        format!(
            "default_provider = \"mock\"\n\n[providers.mock]\napi = \"openai-chat\"\nbase_url = \"{url}/v1\"\nmodel = \"mock-model\"\n\n[setups.careful]\nmode = \"ask\"\n"
        ),
    )
    .unwrap();
    let store = Arc::new(Store::open(&home.join("bosun.db")).unwrap());
    // The test binary is no sandbox trampoline: commands run unconfined, as the policy says.
    let engine = Arc::new(Engine::new(home.clone(), store, false));
    Setup { dir, home, engine }
}

fn repo(s: &Setup, name: &str) -> PathBuf {
    fixture_repo(&s.dir.path().join(name)).unwrap()
}

/// Each task writes a file and answers.
fn writes(files: &[&str]) -> Vec<MockReply> {
    files
        .iter()
        .enumerate()
        .flat_map(|(i, f)| {
            [
                MockReply::tool_call(
                    &format!("call_{i}"),
                    "write_file",
                    &format!(r#"{{"path":"{f}","content":"{f}\n"}}"#),
                ),
                MockReply::text(format!("Wrote {f}.")),
            ]
        })
        .collect()
}

fn prompt_over(repos: &[&Path], mode: &str, concurrency: u32) -> BatchRequest {
    BatchRequest {
        prompt: Some("Write the file".into()),
        repos: repos.iter().map(|r| r.display().to_string()).collect(),
        mode: Some(mode.into()),
        checks: Some(Vec::new()),
        concurrency: Some(concurrency),
        ..BatchRequest::default()
    }
}

/// Polls the batch's view until `done` accepts it (failing after a generous deadline).
async fn until(
    engine: &Engine,
    id: &str,
    what: &str,
    done: impl Fn(&batch::BatchView) -> bool,
) -> batch::BatchView {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let view = batch::status(engine, id).unwrap();
        if done(&view) {
            return view;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}: {view:#?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn approve(id: &str) -> ApprovalAnswer {
    ApprovalAnswer {
        approval_id: id.to_string(),
        decision: ApprovalDecision::ApproveOnce,
        rule: None,
        scope: None,
        note: None,
        text: None,
        by: None,
    }
}

fn statuses(view: &batch::BatchView) -> Vec<Option<TaskStatus>> {
    view.items
        .iter()
        .map(|i| i.task.as_ref().map(|t| t.status))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_line_of_a_batch_file_is_refused_by_its_number_and_nothing_is_queued() {
    let mock = MockModelServer::start(Vec::new()).await.unwrap();
    let s = setup(&mock.url());
    let r = repo(&s, "a");
    let file = s.dir.path().join("tasks.toml");
    std::fs::write(
        &file,
        format!(
            "[[task]]\nrepo = \"{}\"\nprompt = \"one\"\n\n[[task]]\nrepo = \"{}\"\nprompt = \"two\"\nmode = \"yolo\"\n",
            r.display(),
            r.display()
        ),
    )
    .unwrap();
    let err = batch::start_batch(
        &s.engine,
        BatchRequest {
            file: Some(file.display().to_string()),
            ..BatchRequest::default()
        },
    )
    .unwrap_err();
    assert_eq!(err.code, "bad_request");
    assert!(
        err.message.contains("tasks.toml line 5") && err.message.contains("yolo"),
        "{}",
        err.message
    );
    let empty = batch::start_batch(&s.engine, prompt_over(&[], "full-auto", 2)).unwrap_err();
    assert_eq!(empty.code, "bad_request");
    assert!(
        batch::list(&s.engine, None).unwrap().is_empty(),
        "nothing queued"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_over_two_repositories_runs_in_the_engine_and_its_approvals_gather_in_one_list() {
    let mock = MockModelServer::start(writes(&["a.txt", "b.txt"]))
        .await
        .unwrap();
    let s = setup(&mock.url());
    let (a, b) = (repo(&s, "a"), repo(&s, "b"));
    let id = batch::start_batch(&s.engine, prompt_over(&[&a, &b], "ask", 1)).unwrap();

    for n in [1, 2] {
        let view = until(&s.engine, &id, "item {n}'s approval", |v| {
            v.approvals.iter().any(|a| a.n == n)
        })
        .await;
        assert_eq!(view.batch.status, BatchStatus::Running);
        assert_eq!(view.approvals.len(), 1, "one task at a time");
        let asked = &view.approvals[0];
        assert_eq!(asked.n, n);
        // Its task runs in the engine, like any task of the app (the sidebar's badge).
        assert_eq!(
            s.engine.running(),
            vec![(asked.task_id.clone(), 1)],
            "the engine follows the batch's task"
        );
        s.engine
            .answer(&asked.task_id, approve(&asked.request.approval_id))
            .unwrap();
    }
    let view = until(&s.engine, &id, "the batch to finish", |v| {
        v.batch.status == BatchStatus::Finished
    })
    .await;
    assert_eq!(
        statuses(&view),
        vec![Some(TaskStatus::Completed), Some(TaskStatus::Completed)]
    );
    let repos: Vec<String> = view
        .items
        .iter()
        .map(|i| i.task.as_ref().unwrap().repo.clone())
        .collect();
    assert_eq!(
        repos,
        vec![a.display().to_string(), b.display().to_string()]
    );
    assert!(view.approvals.is_empty());
    let listed = batch::list(&s.engine, Some("batch")).unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!((listed[0].id.as_str(), listed[0].done), (id.as_str(), 2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_batch_shows_interrupted_and_resumes_where_it_stopped() {
    // The first reply only: the task is stopped while it waits to write.
    let mut first = writes(&["a.txt"]);
    first.truncate(1);
    let mock = MockModelServer::start(first).await.unwrap();
    let s = setup(&mock.url());
    let a = repo(&s, "a");
    let id = batch::start_batch(&s.engine, prompt_over(&[&a], "ask", 1)).unwrap();
    let view = until(&s.engine, &id, "an approval", |v| !v.approvals.is_empty()).await;
    let task = view.approvals[0].task_id.clone();

    batch::stop(&s.engine, &id).unwrap();
    let view = until(&s.engine, &id, "the stop", |v| {
        v.batch.status == BatchStatus::Interrupted && s.engine.running().is_empty()
    })
    .await;
    assert_eq!(statuses(&view), vec![Some(TaskStatus::Interrupted)]);
    assert_eq!(
        view.items[0].state,
        BatchItemState::Started,
        "left for a resume"
    );
    assert_eq!(batch::stop(&s.engine, &id).unwrap_err().code, "not_running");

    // The same task continues (nothing runs twice) and asks again.
    mock.push(MockReply::tool_call(
        "call_again",
        "write_file",
        r#"{"path":"a.txt","content":"a.txt\n"}"#,
    ));
    mock.push(MockReply::text("Wrote a.txt."));
    batch::resume(&s.engine, &id, None).unwrap();
    assert_eq!(
        batch::resume(&s.engine, &id, None).unwrap_err().code,
        "batch_running"
    );
    let view = until(&s.engine, &id, "the approval again", |v| {
        !v.approvals.is_empty()
    })
    .await;
    assert_eq!(view.approvals[0].task_id, task);
    s.engine
        .answer(&task, approve(&view.approvals[0].request.approval_id))
        .unwrap();
    let view = until(&s.engine, &id, "the batch to finish", |v| {
        v.batch.status == BatchStatus::Finished
    })
    .await;
    assert_eq!(statuses(&view), vec![Some(TaskStatus::Completed)]);
    assert_eq!(view.items[0].task_id.as_ref(), Some(&task));
    assert_eq!(
        batch::resume(&s.engine, &id, None).unwrap_err().code,
        "bad_request"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_comparison_runs_its_setups_and_merging_one_run_leaves_the_other_alone() {
    let mock = MockModelServer::start(writes(&["first.txt", "second.txt"]))
        .await
        .unwrap();
    let s = setup(&mock.url());
    let a = repo(&s, "a");
    assert_eq!(
        batch::setups(&s.engine).unwrap(),
        vec!["careful".to_string()]
    );
    let bad = batch::start_compare(
        &s.engine,
        CompareStart {
            repo: a.display().to_string(),
            prompt: "Write a file".into(),
            setups: vec!["mode=full-auto".into()],
            ..CompareStart::default()
        },
    )
    .unwrap_err();
    assert_eq!(bad.code, "bad_request");
    assert!(bad.message.contains("2 to 4 setups"), "{}", bad.message);

    let id = batch::start_compare(
        &s.engine,
        CompareStart {
            repo: a.display().to_string(),
            prompt: "Write a file".into(),
            setups: vec![
                "mode=full-auto,no_checks=true".into(),
                "mode=full-auto,max_steps=5,no_checks=true".into(),
            ],
            concurrency: Some(1),
            ..CompareStart::default()
        },
    )
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let c = loop {
        let c = batch::comparison(&s.engine, Some(&id)).unwrap();
        if c.batch.status == BatchStatus::Finished {
            break c;
        }
        assert!(
            Instant::now() < deadline,
            "the comparison never finished: {c:#?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let runs: Vec<(String, Option<TaskStatus>)> = c
        .runs
        .iter()
        .map(|r| (r.label.clone(), r.figures.as_ref().and_then(|f| f.status)))
        .collect();
    assert_eq!(
        runs,
        vec![
            (
                "mode=full-auto,no_checks=true#1".to_string(),
                Some(TaskStatus::Completed)
            ),
            (
                "mode=full-auto,max_steps=5,no_checks=true#1".to_string(),
                Some(TaskStatus::Completed)
            ),
        ]
    );
    assert!(c.runs[0].diff.as_deref().unwrap().contains("+first.txt"));
    assert!(c.runs[1].diff.as_deref().unwrap().contains("+second.txt"));
    assert_eq!(
        c.setups.iter().map(|s| s.completed).collect::<Vec<_>>(),
        vec![1, 1]
    );

    let merged = batch::merge_run(&s.engine, &id, &c.runs[1].label, Some("picked".into()))
        .await
        .unwrap();
    assert_eq!(merged.branch, "picked");
    let c = batch::comparison(&s.engine, Some(&id)).unwrap();
    let states: Vec<Option<&str>> = c.runs.iter().map(|r| r.review_state.as_deref()).collect();
    assert_eq!(states, vec![Some("unreviewed"), Some("merged")]);
    // The other run's changes are still there to look at.
    assert!(c.runs[0].diff.as_deref().unwrap().contains("+first.txt"));
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(&a)
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    assert_eq!(git(&["show", "picked:second.txt"]), "second.txt\n");
    assert_eq!(git(&["ls-tree", "--name-only", "picked", "first.txt"]), "");
    // Unless told, a run merges into the branch the repository has checked out.
    let head = git(&["branch", "--show-current"]).trim().to_string();
    let first = batch::merge_run(&s.engine, &id, &c.runs[0].label, None)
        .await
        .unwrap();
    assert_eq!(first.branch, head);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_start_the_app_continues_a_batch_whose_process_died() {
    let mock = MockModelServer::start(writes(&["a.txt"])).await.unwrap();
    let s = setup(&mock.url());
    let a = repo(&s, "a");
    // Queued by a process that is gone (a `bosun batch` killed, an app that crashed).
    let task = bosun_core::orchestrate::batch::BatchTask {
        repo: a.display().to_string(),
        prompt: "Write the file".into(),
        mode: Some("full-auto".into()),
        checks: Some(Vec::new()),
        ..Default::default()
    };
    Store::open(&s.home.join("bosun.db"))
        .unwrap()
        .create_batch(
            &bosun_store::NewBatch {
                id: "01dead".into(),
                kind: "batch".into(),
                name: "left behind".into(),
                concurrency: 1,
                spec: "{}".into(),
                owner_pid: 0,
                owner_started: None,
            },
            &[bosun_store::NewBatchItem {
                label: None,
                spec: serde_json::to_string(&task).unwrap(),
            }],
        )
        .unwrap();
    assert_eq!(
        batch::list(&s.engine, None).unwrap()[0].status,
        BatchStatus::Interrupted
    );
    assert_eq!(
        batch::resume_interrupted(&s.engine),
        vec!["01dead".to_string()]
    );
    let view = until(&s.engine, "01dead", "the batch to finish", |v| {
        v.batch.status == BatchStatus::Finished
    })
    .await;
    assert_eq!(statuses(&view), vec![Some(TaskStatus::Completed)]);
    assert!(
        batch::resume_interrupted(&s.engine).is_empty(),
        "nothing is left to continue"
    );
}
