//! Budgets' bookkeeping: reservations against daily, weekly and monthly limits, overall and per
//! repository, held across connections and threads, and stale reservations dropped.

use crate::support::{journal, new_task};
use bosun_protocol::{Event, EventMsg, TaskId, UsageEvent};
use bosun_store::{BudgetLimit, BudgetWindow, Reservation, Store};
use std::sync::{Arc, Barrier};

fn limit(name: &str, window: BudgetWindow, repo: Option<&str>, usd: f64) -> BudgetLimit {
    BudgetLimit {
        name: name.into(),
        window,
        repo: repo.map(str::to_string),
        limit_usd: usd,
    }
}

fn spend(store: &Store, task: &str, seq: u64, cost: Option<f64>) {
    store
        .append_event(&Event {
            seq,
            task_id: TaskId::from(task),
            ts: bosun_store::now_rfc3339(),
            msg: EventMsg::Usage(UsageEvent {
                model: "m".into(),
                input_tokens: 1,
                output_tokens: 1,
                cached_input_tokens: 0,
                cache_write_tokens: 0,
                cache_write_1h_tokens: 0,
                reasoning_tokens: 0,
                cost_usd: cost,
                total_cost_usd: 0.0,
                priced: cost.is_some(),
                rates: None,
                latency_ms: None,
                reasoning: Vec::new(),
            }),
        })
        .unwrap();
}

fn reserved(r: Reservation) -> i64 {
    match r {
        Reservation::Reserved { id, .. } => id,
        other => panic!("expected a reservation, got {other:?}"),
    }
}

#[test]
fn a_reservation_that_would_pass_a_limit_is_refused_and_settling_frees_it() {
    let (_dir, _path, store) = journal();
    let mut t = new_task("01a", &bosun_store::now_rfc3339());
    t.repo = "/src/api".into();
    store.create_task(&t).unwrap();
    spend(&store, "01a", 1, Some(6.0));
    spend(&store, "01a", 2, None);
    let limits = [
        limit("daily_usd", BudgetWindow::Day, None, 10.0),
        limit("monthly_usd", BudgetWindow::Month, None, 100.0),
        limit(
            "repos.\"/src/web\".budgets.daily_usd",
            BudgetWindow::Day,
            Some("/src/web"),
            1.0,
        ),
    ];
    let task = TaskId::from("01a");
    let first = match store.reserve(&task, "/src/api", 3.0, &limits).unwrap() {
        Reservation::Reserved { id, statuses } => {
            assert_eq!(statuses.len(), 3);
            assert_eq!(
                (statuses[0].spent_usd, statuses[0].reserved_usd),
                (6.0, 3.0)
            );
            assert_eq!(statuses[2].reserved_usd, 0.0, "another repository's budget");
            id
        }
        other => panic!("{other:?}"),
    };
    // 6 spent + 3 reserved + 2 > 10.
    match store.reserve(&task, "/src/api", 2.0, &limits).unwrap() {
        Reservation::Refused { status, amount_usd } => {
            assert_eq!(status.limit.name, "daily_usd");
            assert_eq!(
                (status.spent_usd, status.reserved_usd, amount_usd),
                (6.0, 3.0, 2.0)
            );
        }
        other => panic!("{other:?}"),
    }
    // The web repository's own budget holds its tasks only.
    assert!(matches!(
        store.reserve(&task, "/src/web", 0.5, &limits).unwrap(),
        Reservation::Reserved { .. }
    ));
    assert!(matches!(
        store.reserve(&task, "/src/web", 0.6, &limits).unwrap(),
        Reservation::Refused { .. }
    ));
    store.settle(first).unwrap();
    store.settle(first).unwrap();
    let statuses = store.budget_statuses(&limits).unwrap();
    assert_eq!(
        (statuses[0].spent_usd, statuses[0].reserved_usd),
        (6.0, 0.5)
    );
    assert_eq!(statuses[0].used_fraction(), 0.65);
    assert!(matches!(
        store.reserve(&task, "/src/api", 3.0, &limits).unwrap(),
        Reservation::Reserved { .. }
    ));
    assert_eq!(store.spend_since("2000-01-01T00:00:00.000Z").unwrap(), 6.0);
    assert_eq!(store.spend_since("2999-01-01T00:00:00.000Z").unwrap(), 0.0);
}

#[test]
fn two_connections_on_one_file_cannot_both_pass_a_limit() {
    let (_dir, path, store) = journal();
    store
        .create_task(&new_task("01a", &bosun_store::now_rfc3339()))
        .unwrap();
    drop(store);
    let limits = Arc::new([limit("daily_usd", BudgetWindow::Day, None, 10.0)]);
    let barrier = Arc::new(Barrier::new(4));
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let (path, limits, barrier) = (path.clone(), limits.clone(), barrier.clone());
            std::thread::spawn(move || {
                let store = Store::open(&path).unwrap();
                barrier.wait();
                (0..10)
                    .filter(|_| {
                        matches!(
                            store
                                .reserve(&TaskId::from("01a"), "/src/app", 1.0, &limits[..])
                                .unwrap(),
                            Reservation::Reserved { .. }
                        )
                    })
                    .count()
            })
        })
        .collect();
    let granted: usize = threads.into_iter().map(|t| t.join().unwrap()).sum();
    assert_eq!(
        granted, 10,
        "exactly the limit's worth across four connections"
    );
    let store = Store::open(&path).unwrap();
    let status = &store.budget_statuses(&limits[..]).unwrap()[0];
    assert_eq!(status.reserved_usd, 10.0);
}

#[test]
fn reservations_of_a_dead_process_or_older_than_thirty_minutes_do_not_count() {
    let (_dir, path, store) = journal();
    store
        .create_task(&new_task("01a", &bosun_store::now_rfc3339()))
        .unwrap();
    let limits = [limit("weekly_usd", BudgetWindow::Week, None, 10.0)];
    reserved(
        store
            .reserve(&TaskId::from("01a"), "/src/app", 9.0, &limits)
            .unwrap(),
    );
    let mut dead = std::process::Command::new("true").spawn().unwrap();
    let dead_pid = dead.id();
    dead.wait().unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    // Another process's reservation (that process is gone), and an old one of this process.
    conn.execute(
        "UPDATE budget_reservations SET pid = ?1, pid_started = NULL",
        [dead_pid],
    )
    .unwrap();
    reserved(
        store
            .reserve(&TaskId::from("01a"), "/src/app", 9.0, &limits)
            .unwrap(),
    );
    conn.execute(
        "UPDATE budget_reservations SET created_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-31 minutes')",
        [],
    )
    .unwrap();
    let status = &store.budget_statuses(&limits).unwrap()[0];
    assert_eq!(status.reserved_usd, 0.0);
    let left: i64 = conn
        .query_row("SELECT count(*) FROM budget_reservations", [], |r| r.get(0))
        .unwrap();
    assert_eq!(left, 0, "stale reservations are deleted");
}
