use crate::support::{journal, new_task};
use bosun_protocol::{Event, EventMsg, Rates, TaskId, UsageEvent};
use bosun_store::{CostFilter, CostGroup, CostQuery, Stack, Store, TokenClasses};
use pretty_assertions::assert_eq;

fn at(task: &str, seq: u64, ts: &str, msg: EventMsg) -> Event {
    Event {
        seq,
        task_id: TaskId::from(task),
        ts: ts.into(),
        msg,
    }
}

fn rates(source: &str) -> Rates {
    Rates {
        input: 3.0,
        output: 15.0,
        cache_read: 0.3,
        cache_write: 3.75,
        cache_write_1h: 6.0,
        reasoning: 20.0,
        tier: None,
        source: source.into(),
        entry: "model-a".into(),
    }
}

/// 1 000 000 uncached, 2 000 000 read, 100 000 5-minute and 100 000 1-hour writes, 200 000
/// output and 50 000 reasoning tokens at `rates`: $3 + $0.6 + $0.375 + $0.6 + $3 + $1 = $8.575.
fn priced(model: &str, cost: f64, source: &str) -> EventMsg {
    EventMsg::Usage(UsageEvent {
        model: model.into(),
        input_tokens: 1_000_000,
        output_tokens: 200_000,
        cached_input_tokens: 2_000_000,
        cache_write_tokens: 100_000,
        cache_write_1h_tokens: 100_000,
        reasoning_tokens: 50_000,
        cost_usd: Some(cost),
        total_cost_usd: cost,
        priced: true,
        rates: Some(rates(source)),
        latency_ms: Some(1234),
        reasoning: Vec::new(),
    })
}

fn unpriced(model: &str) -> EventMsg {
    EventMsg::Usage(UsageEvent {
        model: model.into(),
        input_tokens: 10,
        output_tokens: 5,
        cached_input_tokens: 0,
        cache_write_tokens: 0,
        cache_write_1h_tokens: 0,
        reasoning_tokens: 0,
        cost_usd: None,
        total_cost_usd: 0.0,
        priced: false,
        rates: None,
        latency_ms: None,
        reasoning: Vec::new(),
    })
}

/// What SQLite calls the local day of `ts` (the store's local time; `TZ` decides it).
fn local_day(ts: &str) -> String {
    rusqlite::Connection::open_in_memory()
        .unwrap()
        .query_row("SELECT date(?1, 'localtime')", [ts], |r| r.get(0))
        .unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

/// Two tasks in two repositories: a priced response split by class, one the provider priced
/// itself, one of a local model without a price.
fn seeded() -> (tempfile::TempDir, Store) {
    let (dir, _path, store) = journal();
    let mut a = new_task("01a", "2026-11-29T10:00:00.000Z");
    a.repo = "/src/api".into();
    let mut b = new_task("01b", "2026-11-30T10:00:00.000Z");
    b.repo = "/src/web".into();
    store.create_task(&a).unwrap();
    store.create_task(&b).unwrap();
    for ev in [
        at(
            "01a",
            1,
            "2026-11-29T12:00:00.000Z",
            priced("model-a", 8.575, "litellm 1.0"),
        ),
        at(
            "01b",
            1,
            "2026-11-30T12:00:00.000Z",
            priced("router/x", 0.5, "provider"),
        ),
        at("01b", 2, "2026-11-30T12:00:01.000Z", unpriced("local")),
    ] {
        store.append_event(&ev).unwrap();
    }
    (dir, store)
}

#[test]
fn a_figure_splits_cost_by_token_class_from_the_stored_rates_and_counts_what_caching_saved() {
    let (_dir, store) = seeded();
    let rows = store
        .costs(CostGroup::Model, &CostFilter::default())
        .unwrap();
    let keys: Vec<&str> = rows.iter().map(|r| r.key.as_str()).collect();
    assert_eq!(keys, ["model-a", "router/x", "local"], "costliest first");
    let f = &rows[0].figure;
    let c = &f.cost_by_class;
    assert!(close(f.cost_usd, 8.575), "{f:?}");
    assert!(close(c.input, 3.0) && close(c.cache_read, 0.6), "{c:?}");
    assert!(
        close(c.cache_write_5m, 0.375) && close(c.cache_write_1h, 0.6),
        "{c:?}"
    );
    assert!(close(c.output, 3.0) && close(c.reasoning, 1.0), "{c:?}");
    assert!(close(c.reported, 0.0) && close(c.unsplit, 0.0), "{c:?}");
    // 2M read × (3 − 0.3) − 100k × (3.75 − 3) − 100k × (6 − 3), per million.
    assert!(close(f.cache_savings_usd, 5.4 - 0.075 - 0.3), "{f:?}");
    assert_eq!(
        f.tokens,
        TokenClasses {
            input: 1_000_000,
            cache_read: 2_000_000,
            cache_write_5m: 100_000,
            cache_write_1h: 100_000,
            output: 200_000,
            reasoning: 50_000,
        }
    );
    // The provider's own cost is not split by class.
    let r = &rows[1].figure;
    assert!(
        close(r.cost_usd, 0.5) && close(r.cost_by_class.reported, 0.5),
        "{r:?}"
    );
    assert!(close(r.cost_by_class.input, 0.0), "{r:?}");
    // Unpriced: counted, never $0 of cost.
    let l = &rows[2].figure;
    assert_eq!((l.responses, l.unpriced_responses), (1, 1));
    assert!(close(l.cost_usd, 0.0));
}

#[test]
fn costs_add_up_by_repo_task_and_local_day_week_and_month() {
    let (_dir, store) = seeded();
    let by = |g| -> Vec<(String, u64, u64)> {
        store
            .costs(g, &CostFilter::default())
            .unwrap()
            .into_iter()
            .map(|r| (r.key, r.figure.responses, r.figure.unpriced_responses))
            .collect()
    };
    assert_eq!(
        by(CostGroup::Repo),
        [("/src/api".into(), 1, 0), ("/src/web".into(), 2, 1)]
    );
    assert_eq!(
        by(CostGroup::Task),
        [("01a".into(), 1, 0), ("01b".into(), 2, 1)]
    );
    let (d1, d2) = (
        local_day("2026-11-29T12:00:00.000Z"),
        local_day("2026-11-30T12:00:01.000Z"),
    );
    assert_eq!(by(CostGroup::Day), [(d2, 2, 1), (d1, 1, 0)], "newest first");
    let months = by(CostGroup::Month);
    let month_of = |ts: &str| -> String { local_day(ts)[..7].to_string() };
    let (m1, m2) = (
        month_of("2026-11-29T12:00:00.000Z"),
        month_of("2026-11-30T12:00:01.000Z"),
    );
    if m1 == m2 {
        assert_eq!(months, [(m1, 3, 1)]);
    } else {
        assert_eq!(months, [(m2, 2, 1), (m1, 1, 0)], "newest first");
    }
    // 2026-11-29 is a Sunday, the 30th a Monday: two local weeks (unless TZ moves the noon).
    let weeks = by(CostGroup::Week);
    assert_eq!(weeks.iter().map(|w| w.1).sum::<u64>(), 3);
    for (monday, ..) in &weeks {
        let weekday: String = rusqlite::Connection::open_in_memory()
            .unwrap()
            .query_row("SELECT strftime('%w', ?1)", [monday], |r| r.get(0))
            .unwrap();
        assert_eq!(weekday, "1", "{monday} is a Monday");
    }

    let filtered = store
        .costs(
            CostGroup::Task,
            &CostFilter {
                since: Some("2026-11-30T00:00:00.000Z".into()),
                until: Some("2026-11-30T12:00:01.000Z".into()),
                repo: Some("/src/web".into()),
            },
        )
        .unwrap();
    assert_eq!(filtered.len(), 1);
    assert_eq!(filtered[0].figure.responses, 1, "until is exclusive");
    assert_eq!(store.repos().unwrap(), ["/src/api", "/src/web"]);
}

#[test]
fn a_task_lists_each_request_with_its_tokens_rates_cost_and_latency() {
    let (_dir, store) = seeded();
    let rows = store.usage(&TaskId::from("01b")).unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].ts, "2026-11-30T12:00:00.000Z");
    assert_eq!(rows[0].rates, Some(rates("provider")));
    assert_eq!(rows[0].latency_ms, Some(1234));
    assert_eq!(rows[0].cost_usd, Some(0.5));
    assert_eq!(
        (rows[0].cache_write_1h_tokens, rows[0].reasoning_tokens),
        (100_000, 50_000)
    );
    assert_eq!(
        (rows[1].cost_usd, rows[1].priced, rows[1].rates.clone()),
        (None, false, None)
    );
    let task = store.task(&TaskId::from("01b")).unwrap();
    assert!(!task.priced);
    assert!(close(task.cost_usd, 0.5));
    assert_eq!(task.cache_write_1h_tokens, 100_000);
    assert_eq!(task.reasoning_tokens, 50_000);
}

#[test]
fn the_dashboard_totals_charts_and_tables_agree_and_the_runaway_task_is_an_outlier() {
    let (_dir, _path, store) = journal();
    let now = bosun_store::now_rfc3339();
    for i in 0..40u64 {
        let id = format!("01t{i:02}");
        let mut t = new_task(&id, &now);
        t.repo = format!("/src/r{}", i % 4);
        store.create_task(&t).unwrap();
        let cost = if i == 7 {
            500.0
        } else {
            1.0 + (i % 3) as f64 * 0.1
        };
        let model = format!("model-{}", i % 10);
        store
            .append_event(&at(&id, 1, &now, priced(&model, cost, "litellm 1.0")))
            .unwrap();
    }
    store.create_task(&new_task("01local", &now)).unwrap();
    store
        .append_event(&at("01local", 1, &now, unpriced("local")))
        .unwrap();

    let d = store
        .cost_dashboard(&CostQuery {
            days: 30,
            stack: Stack::Model,
            limit: 5,
            ..Default::default()
        })
        .unwrap();
    let total: f64 = 500.0
        + (0..40)
            .filter(|i| *i != 7)
            .map(|i| 1.0 + (i % 3) as f64 * 0.1)
            .sum::<f64>();
    for f in [
        &d.totals.today,
        &d.totals.week,
        &d.totals.month,
        &d.totals.all,
    ] {
        assert!(close(f.cost_usd, total), "{f:?}");
        assert_eq!((f.responses, f.unpriced_responses), (41, 1));
    }
    assert_eq!(d.days.len(), 30);
    assert_eq!(d.days.last(), Some(&local_day(&now)));
    // Ten models: the eight costliest, then `other`; each series one value per day.
    assert_eq!(d.series.len(), 9);
    assert_eq!(d.series[0].key, "model-7");
    assert_eq!(d.series[8].key, "other");
    let charted: f64 = d
        .series
        .iter()
        .map(|s| s.cost_usd.iter().sum::<f64>())
        .sum();
    assert!(close(charted, total), "{charted} vs {total}");
    assert!(d.series.iter().all(|s| s.cost_usd.len() == 30));

    assert_eq!(d.by_task.len(), 5, "limit");
    assert_eq!(d.by_task[0].key, "01t07");
    assert!(d.by_task[0].outlier);
    assert!(d.by_task[1..].iter().all(|r| !r.outlier));
    let task = d.by_task[0].task.as_ref().unwrap();
    assert_eq!(
        (task.repo.as_str(), task.status.as_str()),
        ("/src/r3", "running")
    );
    assert!(close(d.by_task[0].figure.cost_by_class.input, 3.0));
    assert_eq!(d.by_repo[0].key, "/src/r3");
    assert_eq!(d.by_model[0].key, "model-7");
    assert_eq!(d.unpriced_models, ["local"]);

    let only = store
        .cost_dashboard(&CostQuery {
            days: 90,
            stack: Stack::Repo,
            repo: Some("/src/r0".into()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(only.totals.all.responses, 10);
    assert_eq!(only.series.len(), 1);
    assert_eq!(only.series[0].key, "/src/r0");
    assert!(only.unpriced_models.is_empty());
}

#[test]
fn the_hourly_rollup_agrees_with_the_usage_rows_for_any_period_and_after_a_task_is_deleted() {
    let (_dir, _path, store) = journal();
    let times = [
        "2026-11-28T09:59:59.999Z",
        "2026-11-28T10:00:00.000Z",
        "2026-11-28T10:30:00.000Z",
        "2026-11-28T11:15:00.000Z",
        "2026-11-29T23:45:00.000Z",
    ];
    for (t, repo) in [("01x", "/src/x"), ("01y", "/src/y")] {
        let mut task = new_task(t, times[0]);
        task.repo = repo.into();
        store.create_task(&task).unwrap();
        for (i, ts) in times.iter().enumerate() {
            let cost = (i + 1) as f64;
            let msg = if i == 3 {
                unpriced("local")
            } else {
                priced("model-a", cost, "litellm 1.0")
            };
            store.append_event(&at(t, i as u64 + 1, ts, msg)).unwrap();
        }
    }
    let periods = [
        (None, None),
        (Some("2026-11-28T10:00:00.000Z"), None),
        (
            Some("2026-11-28T10:15:00.000Z"),
            Some("2026-11-28T11:20:00.000Z"),
        ),
        (
            Some("2026-11-28T10:15:00.000Z"),
            Some("2026-11-28T10:45:00.000Z"),
        ),
        (None, Some("2026-11-28T10:00:00.000Z")),
        (Some("2026-11-28T11:00:00+01:00"), None),
    ];
    let check = |store: &Store| {
        for (since, until) in periods {
            for repo in [None, Some("/src/y")] {
                let filter = CostFilter {
                    since: since.map(str::to_string),
                    until: until.map(str::to_string),
                    repo: repo.map(str::to_string),
                };
                let raw = store.costs(CostGroup::Model, &filter).unwrap();
                let d = store
                    .cost_dashboard(&CostQuery {
                        days: 30,
                        since: filter.since.clone(),
                        until: filter.until.clone(),
                        repo: filter.repo.clone(),
                        ..Default::default()
                    })
                    .unwrap();
                let mut from_dashboard: Vec<(String, u64, u64, String)> = d
                    .by_model
                    .iter()
                    .map(|r| {
                        let f = &r.figure;
                        (
                            r.key.clone(),
                            f.responses,
                            f.unpriced_responses,
                            format!("{:.6}", f.cost_usd),
                        )
                    })
                    .collect();
                let mut from_rows: Vec<(String, u64, u64, String)> = raw
                    .iter()
                    .map(|r| {
                        let f = &r.figure;
                        (
                            r.key.clone(),
                            f.responses,
                            f.unpriced_responses,
                            format!("{:.6}", f.cost_usd),
                        )
                    })
                    .collect();
                from_dashboard.sort();
                from_rows.sort();
                assert_eq!(from_dashboard, from_rows, "{since:?}..{until:?} {repo:?}");
            }
        }
    };
    check(&store);
    // Local periods over all time come from the rollup (where the offset is whole hours): the
    // same figures as from the rows (a `since` makes `costs` read the rows).
    for g in [CostGroup::Day, CostGroup::Week, CostGroup::Month] {
        let rows = |since: Option<&str>| -> Vec<(String, u64, u64, String)> {
            store
                .costs(
                    g,
                    &CostFilter {
                        since: since.map(str::to_string),
                        ..Default::default()
                    },
                )
                .unwrap()
                .into_iter()
                .map(|r| {
                    let f = r.figure;
                    let t = f.tokens;
                    (
                        r.key,
                        f.responses,
                        t.input + t.cache_read + t.cache_write_5m + t.output + t.reasoning,
                        format!("{:.6} {:.6}", f.cost_usd, f.cost_by_class.input),
                    )
                })
                .collect()
        };
        assert_eq!(rows(None), rows(Some("2000-01-01T00:00:00.000Z")), "{g:?}");
    }
    let bad = store.costs(
        CostGroup::Day,
        &CostFilter {
            since: Some("last tuesday".into()),
            ..Default::default()
        },
    );
    assert!(
        matches!(bad, Err(bosun_store::StoreError::BadQuery(_))),
        "{bad:?}"
    );
    store.delete_task(&TaskId::from("01x")).unwrap();
    check(&store);
    let all = store.cost_totals(None).unwrap().all;
    assert_eq!((all.responses, all.unpriced_responses), (5, 1));
}

/// `bosun bench costs` without the CLI, for an optimised build:
/// `cargo nextest run --release -p bosun-store --run-ignored only -E 'test(/bench_costs/)' --no-capture`.
#[test]
#[ignore = "builds or reuses the 10 000-task / 1 000 000-event journal in /var/tmp/bosun-bench"]
fn bench_costs_on_the_generated_journal() {
    let dir = std::path::PathBuf::from(
        std::env::var("BOSUN_BENCH_DIR").unwrap_or_else(|_| "/var/tmp/bosun-bench".into()),
    );
    bosun_store::search::bench::run_costs(10_000, 1_000_000, &dir, &mut std::io::stdout()).unwrap();
}
