//! Schema 5 on a journal written by schema 4: token classes made disjoint, unpriced costs null,
//! the `usage` events' JSON rewritten to agree, and the metrics' counters backfilled.

use bosun_protocol::{EventMsg, TaskId};
use bosun_store::{SCHEMA_VERSION, StatsFilter, StatsGroup, Store, create_at_version};
use pretty_assertions::assert_eq;

#[test]
fn a_schema_4_journal_gets_disjoint_token_classes_null_unpriced_costs_and_metric_counters() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bosun.db");
    create_at_version(&path, 4).unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    let v: u32 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(v, 4);
    // As Bosun 4 wrote them: input counted the cached and cache-written tokens.
    conn.execute_batch(
        r#"
        INSERT INTO tasks (id, repo, prompt, status, created_at, updated_at, finished_at, provider,
            model, base_commit, branch, worktree, input_tokens, output_tokens, cached_input_tokens,
            cache_write_tokens, cost_usd, priced, last_seq, owner_pid, max_steps, number,
            review_state)
        VALUES ('01old', '/src/app', 'fix it', 'completed', '2026-10-01T10:00:00.000Z',
            '2026-10-01T10:05:00.000Z', '2026-10-01T10:05:00.000Z', 'openai', 'gpt-a', 'b', 'br',
            '/w', 1600, 120, 700, 100, 0.25, 0, 5, 1, 50, 1, 'merged');
        INSERT INTO events (task_id, seq, type, ts, json) VALUES
            ('01old', 1, 'user_message', '2026-10-01T10:00:00.000Z',
             '{"seq":1,"task_id":"01old","ts":"2026-10-01T10:00:00.000Z","type":"user_message","text":"fix it"}'),
            ('01old', 2, 'usage', '2026-10-01T10:01:00.000Z',
             '{"seq":2,"task_id":"01old","ts":"2026-10-01T10:01:00.000Z","type":"usage","model":"gpt-a","input_tokens":1000,"output_tokens":100,"cached_input_tokens":600,"cache_write_tokens":100,"cost_usd":0.25,"total_cost_usd":0.25,"priced":true}'),
            ('01old', 3, 'usage', '2026-10-01T10:02:00.000Z',
             '{"seq":3,"task_id":"01old","ts":"2026-10-01T10:02:00.000Z","type":"usage","model":"local","input_tokens":600,"output_tokens":20,"cached_input_tokens":100,"cache_write_tokens":0,"cost_usd":0.0,"total_cost_usd":0.25,"priced":false}'),
            ('01old', 4, 'user_message', '2026-10-01T10:03:00.000Z',
             '{"seq":4,"task_id":"01old","ts":"2026-10-01T10:03:00.000Z","type":"user_message","text":"and the docs"}'),
            ('01old', 5, 'task_finished', '2026-10-01T10:05:00.000Z',
             '{"seq":5,"task_id":"01old","ts":"2026-10-01T10:05:00.000Z","type":"task_finished","status":"completed","summary":"done","checks":[]}');
        INSERT INTO usage (task_id, seq, model, input_tokens, output_tokens, cached_input_tokens,
            cache_write_tokens, cost_usd, priced, ts) VALUES
            ('01old', 2, 'gpt-a', 1000, 100, 600, 100, 0.25, 1, '2026-10-01T10:01:00.000Z'),
            ('01old', 3, 'local', 600, 20, 100, 0, 0.0, 0, '2026-10-01T10:02:00.000Z');
        "#,
    )
    .unwrap();
    drop(conn);

    let store = Store::open(&path).unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    let v: u32 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(v, SCHEMA_VERSION);
    let id = TaskId::from("01old");
    let rows = store.usage(&id).unwrap();
    assert_eq!(
        rows.iter()
            .map(|r| (
                r.input_tokens,
                r.cached_input_tokens,
                r.cache_write_tokens,
                r.cost_usd
            ))
            .collect::<Vec<_>>(),
        [(300, 600, 100, Some(0.25)), (500, 100, 0, None)]
    );
    let task = store.task(&id).unwrap();
    assert_eq!(task.input_tokens, 800, "1600 − 700 cached − 100 written");
    assert_eq!((task.cache_write_1h_tokens, task.reasoning_tokens), (0, 0));
    // The journal's events say the same as its rows.
    let events = store.events_of_kinds(&id, &["usage"]).unwrap();
    let got: Vec<(u64, Option<f64>)> = events
        .iter()
        .map(|e| match &e.msg {
            EventMsg::Usage(u) => (u.input_tokens, u.cost_usd),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(got, [(300, Some(0.25)), (500, None)]);
    // Rows without rates keep their cost, not split by class.
    let by = store
        .costs(bosun_store::CostGroup::Task, &Default::default())
        .unwrap();
    assert_eq!(by[0].figure.cost_by_class.unsplit, 0.25);
    assert_eq!(by[0].figure.unpriced_responses, 1);
    // The counters were backfilled: one follow-up, merged.
    let stats = store
        .stats(StatsGroup::All, &StatsFilter::default())
        .unwrap();
    assert_eq!(stats.len(), 1);
    assert_eq!(
        (stats[0].tasks, stats[0].successes, stats[0].first_passes),
        (1, 1, 0)
    );
    assert_eq!(stats[0].interventions_per_task, Some(1.0));
}
