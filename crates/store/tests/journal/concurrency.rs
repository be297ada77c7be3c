use crate::support::{append_messages, assert_contiguous, journal, new_task};
use bosun_protocol::TaskId;
use bosun_store::Store;
use std::sync::{Arc, Barrier};

#[test]
fn two_connections_in_two_threads_write_different_tasks_without_lock_errors() {
    let (_dir, path, store) = journal();
    let tasks = ["01writer_a", "01writer_b", "01writer_c"];
    let barrier = Arc::new(Barrier::new(tasks.len()));
    let writers: Vec<_> = tasks
        .iter()
        .map(|&task| {
            let path = path.clone();
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                let store = Store::open(&path).unwrap();
                store
                    .create_task(&new_task(task, "2026-11-30T03:00:00.000Z"))
                    .unwrap();
                barrier.wait();
                append_messages(&store, task, 300);
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    for task in tasks {
        assert_eq!(assert_contiguous(&store, task), 300);
    }
}

#[test]
fn one_store_shared_by_threads_serialises_their_appends() {
    let (_dir, _path, store) = journal();
    let store = Arc::new(store);
    let writers: Vec<_> = ["01shared_a", "01shared_b"]
        .into_iter()
        .map(|task| {
            let store = store.clone();
            std::thread::spawn(move || {
                store
                    .create_task(&new_task(task, "2026-11-30T03:00:00.000Z"))
                    .unwrap();
                append_messages(&store, task, 200);
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    assert_eq!(assert_contiguous(&store, "01shared_a"), 200);
    assert_eq!(assert_contiguous(&store, "01shared_b"), 200);
}

#[test]
fn a_reader_notices_another_connections_writes_through_data_version() {
    let (_dir, path, writer) = journal();
    let reader = Store::open(&path).unwrap();
    writer
        .create_task(&new_task("01watched", "2026-11-30T03:00:00.000Z"))
        .unwrap();

    let before = reader.data_version().unwrap();
    assert_eq!(
        reader.data_version().unwrap(),
        before,
        "no writes, no change"
    );
    append_messages(&writer, "01watched", 3);
    let after = reader.data_version().unwrap();
    assert_ne!(after, before);
    let seen = reader.events(&TaskId::from("01watched"), 0, 100).unwrap();
    assert_eq!(seen.len(), 3);
    assert_eq!(reader.task(&TaskId::from("01watched")).unwrap().last_seq, 3);
}

#[test]
fn several_processes_creating_the_journal_at_once_all_open_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new").join("bosun.db");
    let barrier = Arc::new(Barrier::new(6));
    let openers: Vec<_> = (0..6)
        .map(|i| {
            let path = path.clone();
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                barrier.wait();
                let store = Store::open(&path).unwrap();
                let task = format!("01opener_{i}");
                store
                    .create_task(&new_task(&task, "2026-11-30T03:00:00.000Z"))
                    .unwrap();
                append_messages(&store, &task, 20);
            })
        })
        .collect();
    for o in openers {
        o.join().unwrap();
    }
    let store = Store::open(&path).unwrap();
    assert_eq!(store.tasks().unwrap().len(), 6);
}
