//! Every metric of `bosun stats` (docs/metrics.md) on a journal built for the purpose: each task
//! an exact sequence of events through the store's append API.

use crate::support::{checkpoint, finished, message, new_task};
use bosun_protocol::{
    ApprovalDecision, ApprovalResolved, CallId, CheckFinished, CheckScope, CheckStarted,
    CheckStatus, ErrorEvent, Event, EventMsg, ReviewEvent, TaskId, TaskStatus, ToolCallEnd,
    ToolCallStatus, UsageEvent, UserMessage,
};
use bosun_store::{ImportTask, StatsFilter, StatsGroup, Store, TaskLimits, TaskMarks};
use pretty_assertions::assert_eq;
use std::collections::BTreeMap;

/// Long enough ago that an unreviewed task counts as abandoned.
const OLD: &str = "2026-10-01T10:00:00.000Z";

fn add_task(store: &Store, id: &str, model: &str, at: &str, msgs: Vec<EventMsg>) {
    let mut t = new_task(id, at);
    t.model = model.into();
    store.create_task(&t).unwrap();
    for (i, msg) in msgs.into_iter().enumerate() {
        store
            .append_event(&Event {
                seq: i as u64 + 1,
                task_id: TaskId::from(id),
                ts: at.into(),
                msg,
            })
            .unwrap();
    }
}

fn review(json: serde_json::Value) -> EventMsg {
    serde_json::from_value(json).unwrap()
}

fn merge() -> EventMsg {
    review(serde_json::json!({
        "type": "review", "action": "merge",
        "outcome": {"branch": "main", "created": false, "commits": ["c"], "files": 1, "hunks": 1,
            "left_out": 0, "checked_out": false, "worktree": "/w", "worktree_bytes": 0},
        "checks": []
    }))
}

fn accept() -> EventMsg {
    EventMsg::Review(ReviewEvent::Accept {
        path: "a.rs".into(),
        hunks: vec!["h1".into()],
    })
}

fn reject() -> EventMsg {
    review(serde_json::json!({
        "type": "review", "action": "reject", "path": "a.rs",
        "hunks": [{"hunk": {"number": 1, "id": "h2", "kind": "text", "state": "rejected",
            "old_start": 1, "old_lines": 1, "new_start": 1, "new_lines": 1, "header": "@@",
            "added": 1, "removed": 1, "lines": [], "provenance": []}}]
    }))
}

fn tool_end(status: ToolCallStatus, error: Option<&str>) -> EventMsg {
    EventMsg::ToolCallEnd(ToolCallEnd {
        call_id: CallId::from("c1"),
        status,
        exit_code: None,
        error: error.map(str::to_string),
        output: String::new(),
        duration_ms: 1,
    })
}

fn check(id: &str, round: u32, status: CheckStatus) -> [EventMsg; 2] {
    [
        EventMsg::CheckStarted(CheckStarted {
            check_id: id.into(),
            name: "test".into(),
            command: "cargo test".into(),
            round,
            scope: CheckScope::Full,
        }),
        EventMsg::CheckFinished(CheckFinished {
            check_id: id.into(),
            name: "test".into(),
            status,
            exit_code: Some(1),
            duration_ms: 10,
            summary: "1 test failed".into(),
            failures: vec![],
            required: true,
            scope: CheckScope::Full,
            only_before_task: false,
        }),
    ]
}

fn spend(cost: f64) -> EventMsg {
    EventMsg::Usage(UsageEvent {
        model: "m".into(),
        input_tokens: 100,
        output_tokens: 10,
        cached_input_tokens: 0,
        cache_write_tokens: 0,
        cache_write_1h_tokens: 0,
        reasoning_tokens: 0,
        cost_usd: Some(cost),
        total_cost_usd: cost,
        priced: true,
        rates: None,
        latency_ms: None,
        reasoning: Vec::new(),
    })
}

fn p() -> EventMsg {
    message("fix the failing test")
}

fn done(status: TaskStatus) -> EventMsg {
    finished(status, "done")
}

/// Sixteen decided tasks (six successes, three at the first pass, ten failures: one per cause
/// and a recent one that changed nothing), one answered, one pending review, one running and
/// one imported.
fn seeded() -> (tempfile::TempDir, Store) {
    let (dir, _path, store) = crate::support::journal();
    let now = bosun_store::now_rfc3339();
    use TaskStatus::*;
    add_task(
        &store,
        "merged",
        "a",
        OLD,
        vec![p(), spend(1.0), done(Completed), merge()],
    );
    add_task(
        &store,
        "accepted",
        "a",
        OLD,
        vec![p(), done(Completed), accept()],
    );
    store
        .set_review_state(&TaskId::from("accepted"), "reviewed")
        .unwrap();
    add_task(
        &store,
        "follow_up",
        "a",
        OLD,
        vec![p(), message("and the docs"), done(Completed), merge()],
    );
    let checks_feedback = EventMsg::UserMessage(UserMessage {
        text: "the checks failed".into(),
        origin: Some("checks".into()),
    });
    let request = EventMsg::Review(ReviewEvent::RequestChanges { comments: vec![1] });
    add_task(
        &store,
        "changes",
        "a",
        OLD,
        vec![
            p(),
            done(Completed),
            request,
            message("Please address these review comments: 1. a.rs line 3"),
            done(Completed),
            merge(),
        ],
    );
    add_task(
        &store,
        "checks_msg",
        "a",
        OLD,
        vec![p(), checks_feedback, done(Completed), merge()],
    );
    let mut second_round = vec![p()];
    second_round.extend(check("k1", 1, CheckStatus::Failed));
    second_round.extend(check("k2", 2, CheckStatus::Passed));
    second_round.extend([done(Completed), merge()]);
    add_task(&store, "second_round", "b", OLD, second_round);

    add_task(
        &store,
        "rejected",
        "b",
        OLD,
        vec![p(), done(Completed), accept(), reject()],
    );
    store
        .set_review_state(&TaskId::from("rejected"), "reviewed")
        .unwrap();
    add_task(
        &store,
        "abandoned",
        "b",
        OLD,
        vec![
            p(),
            spend(3.0),
            checkpoint(1, &["a.txt"], None),
            done(Completed),
        ],
    );
    let approval = serde_json::json!({
        "type": "approval_requested", "approval_id": "ap1", "call_id": "c1", "tool": "run_command",
        "action": {"kind": "command", "command": "git push"}, "reason": "pushes",
        "rule": "mode ask", "source": "built-in", "suggestions": []
    });
    add_task(
        &store,
        "denied",
        "b",
        OLD,
        vec![
            p(),
            serde_json::from_value(approval).unwrap(),
            EventMsg::ApprovalResolved(ApprovalResolved {
                approval_id: "ap1".into(),
                call_id: CallId::from("c1"),
                decision: ApprovalDecision::Deny,
                rule: None,
                rule_file: None,
                note: None,
                by: "you".into(),
            }),
            tool_end(ToolCallStatus::Denied, Some("denied by you")),
            done(Failed),
        ],
    );
    add_task(
        &store,
        "missing_tool",
        "b",
        OLD,
        vec![
            p(),
            tool_end(
                ToolCallStatus::Error,
                Some("there is no tool named \"browse\"; the tools are: x"),
            ),
            tool_end(ToolCallStatus::Success, None),
            done(Failed),
        ],
    );
    add_task(
        &store,
        "model_error",
        "b",
        OLD,
        vec![
            p(),
            EventMsg::Error(ErrorEvent {
                code: "model_error".into(),
                message: "malformed response after 3 attempts".into(),
            }),
            done(Failed),
        ],
    );
    add_task(&store, "budget", "b", OLD, vec![p(), done(BudgetExceeded)]);
    add_task(&store, "steps", "b", OLD, vec![p(), done(MaxSteps)]);
    let mut failed_checks = vec![p()];
    failed_checks.extend(check("k1", 1, CheckStatus::Failed));
    failed_checks.push(done(ChecksFailed));
    add_task(&store, "checks_failed", "b", OLD, failed_checks);
    add_task(
        &store,
        "interrupted",
        "b",
        OLD,
        vec![p(), done(Interrupted)],
    );

    add_task(&store, "answered", "a", OLD, vec![p(), done(Answered)]);
    // Changed files nobody has looked at yet: pending. (A failure that changed nothing has
    // nothing to review and is decided at once: the `budget` task above.)
    add_task(
        &store,
        "pending",
        "a",
        &now,
        vec![p(), checkpoint(1, &["a.txt"], None), done(Completed)],
    );
    add_task(
        &store,
        "recent_failure",
        "b",
        &now,
        vec![p(), done(MaxSteps)],
    );
    add_task(&store, "running", "a", OLD, vec![p()]);

    // An imported session: a merged task from another journal.
    let (_other_dir, _other_path, other) = crate::support::journal();
    add_task(
        &other,
        "imported",
        "a",
        OLD,
        vec![p(), done(Completed), merge()],
    );
    let row = other.task(&TaskId::from("imported")).unwrap();
    let events = other.events(&row.id, 0, usize::MAX).unwrap();
    store
        .import_task(
            &ImportTask {
                row: &row,
                limits: TaskLimits {
                    max_steps: 50,
                    max_cost_usd: None,
                },
                marks: &TaskMarks {
                    archived_at: None,
                    transcript_removed: None,
                },
            },
            events.into_iter().map(Ok::<_, std::convert::Infallible>),
        )
        .unwrap()
        .unwrap();
    (dir, store)
}

#[test]
fn every_metric_over_finished_top_level_tasks() {
    let (_dir, store) = seeded();
    let rows = store
        .stats(StatsGroup::All, &StatsFilter::default())
        .unwrap();
    assert_eq!(rows.len(), 1);
    let r = &rows[0];
    assert_eq!(r.key, "all");
    assert_eq!(
        (
            r.tasks,
            r.successes,
            r.first_passes,
            r.pending_review,
            r.answered
        ),
        (16, 6, 3, 1, 1),
        "{r:#?}"
    );
    assert_eq!(r.success_rate, Some(6.0 / 16.0));
    assert_eq!(r.first_pass_rate, Some(3.0 / 16.0));
    // A follow-up, a request for changes (its message is not a follow-up too), a rejected
    // hunk, an approval asked and denied, a stop.
    assert_eq!(r.interventions_per_task, Some(6.0 / 16.0));
    assert_eq!(r.cost_per_task_usd, Some(4.0 / 16.0));
    assert_eq!(r.cost_per_success_usd, Some(4.0 / 6.0));
    assert_eq!(r.tokens_per_task, Some(220.0 / 16.0));
    assert_eq!(r.tokens_per_success, Some(110.0 / 6.0));
    assert_eq!(r.seconds_per_task, Some(0.0));
    let causes: BTreeMap<String, u64> = [
        "permission_blocked",
        "missing_tool",
        "model_error",
        "budget",
        "step_limit",
        "checks_failed",
        "interrupted",
        "abandoned",
        "failed",
    ]
    .iter()
    .map(|c| (c.to_string(), if *c == "step_limit" { 2 } else { 1 }))
    .collect();
    assert_eq!(r.failure_causes, causes);
}

#[test]
fn metrics_group_by_model_and_week_and_filter_by_repo_and_period() {
    let (_dir, store) = seeded();
    let by_model = store
        .stats(StatsGroup::Model, &StatsFilter::default())
        .unwrap();
    let got: Vec<(String, u64, u64)> = by_model
        .iter()
        .map(|r| (r.key.clone(), r.tasks, r.successes))
        .collect();
    assert_eq!(got, [("b".into(), 11, 1), ("a".into(), 5, 5)]);
    let weeks = store
        .stats(StatsGroup::Week, &StatsFilter::default())
        .unwrap();
    assert_eq!(
        weeks.len(),
        2,
        "the old tasks' week and this one's (one pending, one decided)"
    );
    assert!(weeks[0].key > weeks[1].key, "newest first");
    assert_eq!(weeks[1].tasks, 15);
    let none = store
        .stats(
            StatsGroup::All,
            &StatsFilter {
                repo: Some("/elsewhere".into()),
                ..Default::default()
            },
        )
        .unwrap();
    assert!(none.is_empty());
    let recent = store
        .stats(
            StatsGroup::All,
            &StatsFilter {
                since: Some("2026-11-01T00:00:00.000Z".into()),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!((recent[0].tasks, recent[0].pending_review), (1, 1));
    assert_eq!(
        recent[0].success_rate,
        Some(0.0),
        "the recent failure is decided"
    );
}

#[test]
fn a_task_that_failed_after_its_nudges_counts_as_no_progress() {
    let (_dir, _path, store) = crate::support::journal();
    add_task(
        &store,
        "hopeless",
        "a",
        OLD,
        vec![
            p(),
            finished(TaskStatus::Failed, "no progress after 3 nudges: promise"),
        ],
    );
    add_task(
        &store,
        "other",
        "a",
        OLD,
        vec![p(), finished(TaskStatus::Failed, "the model said no")],
    );
    let rows = store
        .stats(StatsGroup::All, &StatsFilter::default())
        .unwrap();
    let causes: BTreeMap<String, u64> = [("failed".to_string(), 1), ("no_progress".to_string(), 1)]
        .into_iter()
        .collect();
    assert_eq!(rows[0].failure_causes, causes);
}
