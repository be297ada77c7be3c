use crate::support::{event, finished, journal, message, new_task};
use bosun_protocol::{EventMsg, TaskId, TaskStatus};
use bosun_store::process_start_time;
use std::process::{Child, Command};

fn sleeper() -> Child {
    Command::new("sleep").arg("600").spawn().unwrap()
}

#[test]
fn a_task_whose_process_was_killed_is_closed_as_interrupted_and_live_ones_stay_running() {
    let (_dir, _path, store) = journal();
    let mut dead = sleeper();
    let mut alive = sleeper();

    let mut t = new_task("01dead", "2026-11-30T03:00:00.000Z");
    t.owner_pid = dead.id();
    t.owner_started = process_start_time(dead.id());
    store.create_task(&t).unwrap();
    store
        .append_event(&event("01dead", 1, message("go")))
        .unwrap();

    let mut t = new_task("01alive", "2026-11-30T03:01:00.000Z");
    t.owner_pid = alive.id();
    t.owner_started = process_start_time(alive.id());
    store.create_task(&t).unwrap();

    // Owned by this test process itself.
    store
        .create_task(&new_task("01mine", "2026-11-30T03:02:00.000Z"))
        .unwrap();

    // Finished long ago by a process that is gone: not touched.
    let mut t = new_task("01done", "2026-11-30T02:00:00.000Z");
    t.owner_pid = dead.id();
    store.create_task(&t).unwrap();
    store
        .append_event(&event("01done", 1, finished(TaskStatus::Completed, "done")))
        .unwrap();

    let dead_pid = dead.id();
    dead.kill().unwrap(); // SIGKILL
    dead.wait().unwrap();

    assert_eq!(
        store.reconcile_interrupted().unwrap(),
        vec![TaskId::from("01dead")]
    );

    let row = store.task(&TaskId::from("01dead")).unwrap();
    assert_eq!(row.status, TaskStatus::Interrupted);
    assert_eq!(row.last_seq, 2);
    let summary = row.summary.unwrap();
    assert!(
        summary.contains(&format!("(pid {dead_pid}) stopped")),
        "{summary}"
    );
    let events = store.events(&TaskId::from("01dead"), 1, 10).unwrap();
    assert!(
        matches!(&events[..], [e] if matches!(&e.msg, EventMsg::TaskFinished(f) if f.status == TaskStatus::Interrupted)),
        "{events:?}"
    );

    for id in ["01alive", "01mine"] {
        assert_eq!(
            store.task(&TaskId::from(id)).unwrap().status,
            TaskStatus::Running,
            "{id}"
        );
    }
    assert_eq!(
        store.task(&TaskId::from("01done")).unwrap().status,
        TaskStatus::Completed
    );
    assert!(
        store.reconcile_interrupted().unwrap().is_empty(),
        "each task is closed once"
    );

    alive.kill().unwrap();
    alive.wait().unwrap();
    assert_eq!(
        store.reconcile_interrupted().unwrap(),
        vec![TaskId::from("01alive")]
    );
}

#[cfg(target_os = "linux")]
#[test]
fn a_reused_pid_is_not_mistaken_for_the_owner() {
    let (_dir, _path, store) = journal();
    // Same pid as this process, but the recorded owner started at another time: the owner is gone
    // and the pid now belongs to someone else.
    let mut t = new_task("01reused", "2026-11-30T03:00:00.000Z");
    t.owner_started = t.owner_started.map(|s| s.saturating_sub(1));
    assert!(t.owner_started.is_some());
    store.create_task(&t).unwrap();
    assert_eq!(
        store.reconcile_interrupted().unwrap(),
        vec![TaskId::from("01reused")]
    );
}

#[test]
fn an_interrupted_task_can_be_claimed_by_a_new_process_but_a_live_owner_keeps_it() {
    use bosun_store::StoreError;
    let (_dir, _path, store) = journal();
    let mut owner = sleeper();
    let mut t = new_task("01claim", "2026-11-30T03:00:00.000Z");
    t.owner_pid = owner.id();
    t.owner_started = process_start_time(owner.id());
    store.create_task(&t).unwrap();
    let id = TaskId::from("01claim");
    let me = std::process::id();

    let err = store
        .claim_task(&id, me, process_start_time(me))
        .unwrap_err();
    assert!(
        matches!(err, StoreError::Running { pid, .. } if pid == owner.id()),
        "{err:?}"
    );

    owner.kill().unwrap();
    owner.wait().unwrap();
    assert_eq!(store.reconcile_interrupted().unwrap(), vec![id.clone()]);
    store.claim_task(&id, me, process_start_time(me)).unwrap();
    let row = store.task(&id).unwrap();
    assert_eq!((row.status, row.owner_pid), (TaskStatus::Running, me));
    assert_eq!((row.summary, row.finished_at), (None, None));
    store
        .append_event(&event("01claim", 2, message("resumed")))
        .unwrap();
    assert!(store.reconcile_interrupted().unwrap().is_empty());
}
