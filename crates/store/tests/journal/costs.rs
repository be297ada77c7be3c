use crate::support::{journal, new_task, usage};
use bosun_protocol::{Event, TaskId};
use bosun_store::{CostGroup, CostRow};
use pretty_assertions::assert_eq;

fn at(task: &str, seq: u64, ts: &str, msg: bosun_protocol::EventMsg) -> Event {
    Event {
        seq,
        task_id: TaskId::from(task),
        ts: ts.into(),
        msg,
    }
}

#[test]
fn costs_add_up_by_task_repo_model_and_day() {
    let (_dir, _path, store) = journal();
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
            "2026-11-29T10:00:01.000Z",
            usage("gpt-a", 1000, 100, 0.5, true),
        ),
        at(
            "01a",
            2,
            "2026-11-30T00:00:01.000Z",
            usage("gpt-a", 1000, 100, 0.5, true),
        ),
        at(
            "01b",
            1,
            "2026-11-30T10:00:01.000Z",
            usage("gpt-a", 2000, 200, 1.0, true),
        ),
        at(
            "01b",
            2,
            "2026-11-30T10:00:02.000Z",
            usage("local", 500, 50, 0.0, false),
        ),
    ] {
        store.append_event(&ev).unwrap();
    }

    let by_model = store.costs(CostGroup::Model, None).unwrap();
    assert_eq!(
        by_model,
        vec![
            CostRow {
                key: "gpt-a".into(),
                responses: 3,
                input_tokens: 4000,
                output_tokens: 400,
                cached_input_tokens: 2000,
                cache_write_tokens: 400,
                cost_usd: 2.0,
                priced: true,
            },
            CostRow {
                key: "local".into(),
                responses: 1,
                input_tokens: 500,
                output_tokens: 50,
                cached_input_tokens: 250,
                cache_write_tokens: 50,
                cost_usd: 0.0,
                priced: false,
            },
        ]
    );

    let by = |g| -> Vec<(String, f64, bool)> {
        store
            .costs(g, None)
            .unwrap()
            .into_iter()
            .map(|r| (r.key, r.cost_usd, r.priced))
            .collect()
    };
    // Equal costs: by key.
    assert_eq!(
        by(CostGroup::Repo),
        [
            ("/src/api".into(), 1.0, true),
            ("/src/web".into(), 1.0, false)
        ]
    );
    assert_eq!(
        by(CostGroup::Task),
        [("01a".into(), 1.0, true), ("01b".into(), 1.0, false)]
    );
    assert_eq!(
        by(CostGroup::Day),
        [
            ("2026-11-30".into(), 1.5, false),
            ("2026-11-29".into(), 0.5, true)
        ]
    );

    let today = store
        .costs(CostGroup::Task, Some("2026-11-30T00:00:00.000Z"))
        .unwrap();
    assert_eq!(today.iter().map(|r| r.responses).sum::<u64>(), 3);
}
