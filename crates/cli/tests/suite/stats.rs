//! `bosun stats`: the metrics' JSON fields, grouping, and what is refused.

use super::costs::{response, seed_task};
use super::support::*;
use bosun_protocol::{Event, EventMsg, TaskFinished, TaskId, TaskStatus};
use bosun_store::Store;
use pretty_assertions::assert_eq;

fn finish(store: &Store, id: &str, seq: u64, status: TaskStatus) {
    store
        .append_event(&Event {
            seq,
            task_id: TaskId::from(id),
            ts: "2026-10-01T10:00:00.000Z".into(),
            msg: EventMsg::TaskFinished(TaskFinished {
                status,
                summary: "done".into(),
                checks: vec![],
            }),
        })
        .unwrap();
}

#[test]
fn stats_prints_the_issue_s_json_fields_per_model() {
    let env = Env::new();
    let store = Store::open(&env.home.join("bosun.db")).unwrap();
    seed_task(&store, "01a", "/src/api", "gpt-a");
    response(&store, "01a", 1, "gpt-a", true);
    finish(&store, "01a", 2, TaskStatus::BudgetExceeded);
    seed_task(&store, "01b", "/src/api", "gpt-b");
    finish(&store, "01b", 1, TaskStatus::Answered);
    store
        .set_review_state(&TaskId::from("01a"), "in_review")
        .unwrap();
    drop(store);

    let rows = env.json(&["stats", "--by", "model", "--json"]);
    let row = &rows[0];
    assert_eq!(row["key"], "gpt-a");
    for field in [
        "tasks",
        "success_rate",
        "first_pass_rate",
        "interventions_per_task",
        "cost_per_task_usd",
        "cost_per_success_usd",
        "failure_causes",
    ] {
        assert!(row.get(field).is_some(), "{field} missing: {row:#}");
    }
    assert_eq!(row["tasks"], 1);
    assert_eq!(row["success_rate"], 0.0);
    assert_eq!(row["cost_per_task_usd"], 3.0);
    assert_eq!(row["cost_per_success_usd"], serde_json::Value::Null);
    assert_eq!(row["failure_causes"], serde_json::json!({"budget": 1}));
    assert_eq!(rows[1]["key"], "gpt-b");
    assert_eq!(
        (rows[1]["tasks"].clone(), rows[1]["answered"].clone()),
        (0.into(), 1.into())
    );

    let (ok, text, _) = env.text(&["stats"]);
    assert!(ok);
    assert!(text.contains("failure causes: budget 1"), "{text}");
    let run = env.run_args(&["stats", "--by", "day"]);
    assert_eq!(run.code(), Some(2));
    assert!(
        run.stderr().contains("model, repo, week"),
        "{}",
        run.stderr()
    );
    let run = env.run_args(&["stats", "--repo", "/src/none"]);
    assert_eq!(run.code(), Some(2));
    assert!(run.stderr().contains("/src/api"), "{}", run.stderr());
}
