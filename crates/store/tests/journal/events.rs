use crate::support::{checkpoint, event, finished, journal, message, new_task, tool_call, usage};
use bosun_protocol::{Event, TaskId, TaskStatus};
use bosun_store::{CheckpointRow, StoreError, UsageRow};
use pretty_assertions::assert_eq;

const T: &str = "01events";

fn seqs(events: &[Event]) -> Vec<u64> {
    events.iter().map(|e| e.seq).collect()
}

#[test]
fn events_read_back_whole_in_order_and_page_after_a_seq() {
    let (_dir, _path, store) = journal();
    store
        .create_task(&new_task(T, "2026-11-30T03:00:00.000Z"))
        .unwrap();
    let written: Vec<Event> = (1..=25)
        .map(|seq| match seq % 3 {
            0 => event(T, seq, tool_call(&format!("call_{seq}"))),
            _ => event(T, seq, message(&format!("message {seq} ✓"))),
        })
        .collect();
    for ev in &written {
        store.append_event(ev).unwrap();
    }
    let id = TaskId::from(T);
    assert_eq!(store.events(&id, 0, 1000).unwrap(), written);
    assert_eq!(
        seqs(&store.events(&id, 0, 10).unwrap()),
        (1..=10).collect::<Vec<_>>()
    );
    assert_eq!(
        seqs(&store.events(&id, 10, 10).unwrap()),
        (11..=20).collect::<Vec<_>>()
    );
    assert_eq!(
        seqs(&store.events(&id, 20, 10).unwrap()),
        (21..=25).collect::<Vec<_>>()
    );
    assert!(store.events(&id, 25, 10).unwrap().is_empty());
    assert!(store.events(&id, 0, 0).unwrap().is_empty());
    assert_eq!(store.last_seq(&id).unwrap(), 25);
    assert!(
        store
            .events(&TaskId::from("01other"), 0, 10)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn an_event_for_an_unknown_task_is_refused() {
    let (_dir, _path, store) = journal();
    let err = store
        .append_event(&event("01ghost", 1, message("hi")))
        .unwrap_err();
    assert!(matches!(err, StoreError::NotFound { .. }), "{err:?}");
    assert!(matches!(
        store.last_seq(&TaskId::from("01ghost")).unwrap_err(),
        StoreError::NotFound { .. }
    ));
}

#[test]
fn a_gap_or_a_repeated_seq_is_refused_and_writes_nothing() {
    let (_dir, _path, store) = journal();
    store
        .create_task(&new_task(T, "2026-11-30T03:00:00.000Z"))
        .unwrap();
    store.append_event(&event(T, 1, message("one"))).unwrap();
    store.append_event(&event(T, 2, message("two"))).unwrap();
    let id = TaskId::from(T);
    let before = store.task(&id).unwrap();

    let err = store
        .append_event(&event(T, 4, usage("m", 10, 10, 1.0, true)))
        .unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::SeqGap {
                last: 2,
                got: 4,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("the next must be 3"), "{err}");

    let err = store
        .append_event(&event(T, 2, checkpoint(1, &["a.rs"], None)))
        .unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::DuplicateSeq {
                last: 2,
                got: 2,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("another process"), "{err}");

    let err = store
        .append_event(&event(T, 0, tool_call("c")))
        .unwrap_err();
    assert!(
        matches!(err, StoreError::DuplicateSeq { got: 0, .. }),
        "{err:?}"
    );

    assert_eq!(store.task(&id).unwrap(), before);
    assert_eq!(seqs(&store.events(&id, 0, 100).unwrap()), [1, 2]);
    assert!(store.usage(&id).unwrap().is_empty());
    assert!(store.checkpoints(&id).unwrap().is_empty());

    store.append_event(&event(T, 3, message("three"))).unwrap();
    assert_eq!(store.last_seq(&id).unwrap(), 3);
}

#[test]
fn usage_events_add_up_on_the_task_and_one_unpriced_response_marks_it_unpriced() {
    let (_dir, _path, store) = journal();
    store
        .create_task(&new_task(T, "2026-11-30T03:00:00.000Z"))
        .unwrap();
    let id = TaskId::from(T);
    store
        .append_event(&event(T, 1, usage("gpt-a", 1000, 200, 0.25, true)))
        .unwrap();
    store
        .append_event(&event(T, 2, usage("gpt-a", 500, 100, 0.125, true)))
        .unwrap();
    let row = store.task(&id).unwrap();
    assert_eq!((row.input_tokens, row.output_tokens), (1500, 300));
    assert_eq!(
        (row.cached_input_tokens, row.cache_write_tokens),
        (750, 150)
    );
    assert_eq!(row.cost_usd, 0.375);
    assert!(row.priced);

    store
        .append_event(&event(T, 3, usage("local-llm", 300, 50, 0.0, false)))
        .unwrap();
    store
        .append_event(&event(T, 4, usage("gpt-a", 100, 10, 0.125, true)))
        .unwrap();
    let row = store.task(&id).unwrap();
    assert_eq!((row.input_tokens, row.output_tokens), (1900, 360));
    assert_eq!(row.cost_usd, 0.5);
    assert!(
        !row.priced,
        "one unpriced response makes the total a lower bound"
    );
    assert_eq!(row.updated_at, event(T, 4, message("")).ts);

    let rows = store.usage(&id).unwrap();
    assert_eq!(rows.len(), 4);
    assert_eq!(
        rows[2],
        UsageRow {
            seq: 3,
            ts: event(T, 3, message("")).ts,
            model: "local-llm".into(),
            input_tokens: 300,
            output_tokens: 50,
            cached_input_tokens: 150,
            cache_write_tokens: 30,
            cache_write_1h_tokens: 0,
            reasoning_tokens: 0,
            cost_usd: None,
            priced: false,
            rates: None,
            latency_ms: None,
        }
    );
}

#[test]
fn checkpoint_tool_call_and_finish_events_update_the_task() {
    let (_dir, _path, store) = journal();
    store
        .create_task(&new_task(T, "2026-11-30T03:00:00.000Z"))
        .unwrap();
    let id = TaskId::from(T);
    store
        .append_event(&event(T, 1, tool_call("call_1")))
        .unwrap();
    store
        .append_event(&event(
            T,
            2,
            checkpoint(1, &["src/a.rs", "src/b.rs"], Some("call_1")),
        ))
        .unwrap();
    store
        .append_event(&event(T, 3, tool_call("call_2")))
        .unwrap();
    store
        .append_event(&event(T, 4, checkpoint(2, &[], None)))
        .unwrap();
    store
        .append_event(&event(
            T,
            5,
            finished(TaskStatus::Completed, "All tests pass."),
        ))
        .unwrap();

    assert_eq!(
        store.checkpoints(&id).unwrap(),
        vec![
            CheckpointRow {
                n: 1,
                commit: format!("{:040x}", 1),
                files: vec!["src/a.rs".into(), "src/b.rs".into()],
                call_id: Some("call_1".into()),
                created_at: event(T, 2, message("")).ts,
                seq: 2,
            },
            CheckpointRow {
                n: 2,
                commit: format!("{:040x}", 2),
                files: vec![],
                call_id: None,
                created_at: event(T, 4, message("")).ts,
                seq: 4,
            },
        ]
    );
    let row = store.task(&id).unwrap();
    assert_eq!(row.tool_calls, 2);
    assert_eq!(row.status, TaskStatus::Completed);
    assert_eq!(row.summary.as_deref(), Some("All tests pass."));
    let finished_at = event(T, 5, message("")).ts;
    assert_eq!(row.finished_at.as_deref(), Some(finished_at.as_str()));
    assert_eq!(row.last_seq, 5);
}
