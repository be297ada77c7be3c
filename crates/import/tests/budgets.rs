//! Imported spend shows in the costs but counts toward no budget: another agent's sessions were
//! paid for already, and a budget holds Bosun's own tasks.

use bosun_import::{Source, import_dir};
use bosun_model::PriceTable;
use bosun_store::{BudgetLimit, BudgetWindow, Store};

#[test]
#[allow(clippy::unwrap_used)]
fn a_session_imported_today_is_in_todays_costs_and_in_no_budget() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("bosun.db")).unwrap();
    let codex = dir.path().join("codex");
    let day = codex.join("sessions/2026/01/01");
    std::fs::create_dir_all(&day).unwrap();
    let now = bosun_store::now_rfc3339();
    let lines = [
        serde_json::json!({"timestamp": now, "type": "session_meta", "payload": {"id": "s-1",
            "cwd": "/src/app", "cli_version": "0.46.0", "model_provider": "openai"}}),
        serde_json::json!({"timestamp": now, "type": "turn_context", "payload": {"cwd": "/src/app",
            "model": "gpt-5-codex"}}),
        serde_json::json!({"timestamp": now, "type": "event_msg", "payload": {"type": "user_message",
            "message": "hello", "kind": "plain"}}),
        serde_json::json!({"timestamp": now, "type": "event_msg", "payload": {"type": "token_count",
            "info": {"total_token_usage": {"input_tokens": 1000000, "cached_input_tokens": 0,
                "output_tokens": 0, "reasoning_output_tokens": 0, "total_tokens": 1000000}}}}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(day.join("rollout-2026-01-01T00-00-00-s-1.jsonl"), text).unwrap();

    let report = import_dir(&store, &PriceTable::builtin(), Source::Codex, &codex).unwrap();
    assert_eq!((report.new_sessions, report.responses), (1, 1));

    let today = store.cost_totals(None).unwrap().today;
    assert!((today.cost_usd - 1.25).abs() < 1e-9, "{today:?}");
    let limit = BudgetLimit {
        name: "daily_usd".into(),
        window: BudgetWindow::Day,
        repo: None,
        limit_usd: 1.0,
    };
    let status = store.budget_statuses(&[limit]).unwrap();
    assert_eq!(status[0].spent_usd, 0.0);
    assert_eq!(store.spend_since("1970-01-01T00:00:00.000Z").unwrap(), 0.0);
}
