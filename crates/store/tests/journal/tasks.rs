use crate::support::{journal, new_task};
use bosun_protocol::{TaskId, TaskStatus};
use bosun_store::{StoreError, TaskRow};
use pretty_assertions::assert_eq;

#[test]
fn a_created_task_reads_back_as_running_with_zero_totals() {
    let (_dir, _path, store) = journal();
    let t = new_task("01jd5x8k2m", "2026-11-30T03:00:00.000Z");
    store.create_task(&t).unwrap();
    let row = store.task(&t.id).unwrap();
    assert_eq!(
        row,
        TaskRow {
            id: t.id.clone(),
            repo: t.repo.clone(),
            prompt: t.prompt.clone(),
            status: TaskStatus::Running,
            summary: None,
            created_at: t.created_at.clone(),
            updated_at: t.created_at.clone(),
            finished_at: None,
            provider: t.provider.clone(),
            model: t.model.clone(),
            base_commit: t.base_commit.clone(),
            branch: t.branch.clone(),
            worktree: t.worktree.clone(),
            input_tokens: 0,
            output_tokens: 0,
            cached_input_tokens: 0,
            cache_write_tokens: 0,
            cache_write_1h_tokens: 0,
            reasoning_tokens: 0,
            cost_usd: 0.0,
            priced: true,
            tool_calls: 0,
            last_seq: 0,
            owner_pid: std::process::id(),
            checks: None,
            review_state: "unreviewed".into(),
            files_changed: 0,
            parent_task_id: None,
            role: None,
            depth: 0,
            source: None,
        }
    );
    assert_eq!(store.last_seq(&t.id).unwrap(), 0);
}

#[test]
fn the_step_limit_a_task_started_with_reads_back_for_its_continuations() {
    let (_dir, _path, store) = journal();
    let mut t = new_task("01jd5x8k2n", "2026-11-30T03:00:00.000Z");
    t.max_steps = 7;
    store.create_task(&t).unwrap();
    assert_eq!(store.task_max_steps(&t.id).unwrap(), 7);
    assert!(matches!(
        store.task_max_steps(&TaskId::from("01nosuchtask")),
        Err(StoreError::NotFound { .. })
    ));
}

#[test]
fn the_same_task_id_cannot_be_created_twice() {
    let (_dir, _path, store) = journal();
    let t = new_task("01dup", "2026-11-30T03:00:00.000Z");
    store.create_task(&t).unwrap();
    let err = store.create_task(&t).unwrap_err();
    assert!(
        matches!(err, StoreError::TaskExists(ref id) if *id == t.id),
        "{err:?}"
    );
}

#[test]
fn tasks_are_listed_newest_first() {
    let (_dir, _path, store) = journal();
    for (id, at) in [
        ("01b", "2026-11-30T03:02:00.000Z"),
        ("01a", "2026-11-30T03:01:00.000Z"),
        ("01c", "2026-11-30T03:03:00.000Z"),
    ] {
        store.create_task(&new_task(id, at)).unwrap();
    }
    let ids: Vec<String> = store.tasks().unwrap().into_iter().map(|t| t.id.0).collect();
    assert_eq!(ids, ["01c", "01b", "01a"]);
}

#[test]
fn the_lists_carry_top_level_tasks_and_children_are_read_from_their_parent() {
    let (_dir, _path, store) = journal();
    let parent = new_task("01p", "2026-11-30T03:00:00.000Z");
    store.create_task(&parent).unwrap();
    for (id, at) in [
        ("01p2", "2026-11-30T03:02:00.000Z"),
        ("01p1", "2026-11-30T03:01:00.000Z"),
    ] {
        let mut child = new_task(id, at);
        child.parent_task_id = Some(parent.id.clone());
        child.role = Some("worker".into());
        child.depth = 1;
        store.create_task(&child).unwrap();
    }
    let ids = |rows: Vec<TaskRow>| rows.into_iter().map(|t| t.id.0).collect::<Vec<_>>();
    assert_eq!(ids(store.tasks().unwrap()), ["01p"]);
    assert_eq!(ids(store.recent_tasks(10).unwrap()), ["01p"]);
    // The app's task list follows changed rows: a child's changes stay out of it too.
    assert_eq!(
        ids(store
            .tasks_updated_since("2026-11-30T00:00:00.000Z")
            .unwrap()),
        ["01p"]
    );
    let children = store.children(&parent.id).unwrap();
    assert_eq!(ids(children.clone()), ["01p1", "01p2"]);
    assert_eq!(
        (children[0].role.as_deref(), children[0].depth),
        (Some("worker"), 1)
    );
}

#[test]
fn find_task_accepts_a_unique_prefix_and_explains_ambiguity_and_absence() {
    let (_dir, _path, store) = journal();
    for (id, at) in [
        ("01jd5x8k2m", "2026-11-30T03:01:00.000Z"),
        ("01jd5y0000", "2026-11-30T03:02:00.000Z"),
        ("01ka_prefix", "2026-11-30T03:03:00.000Z"),
    ] {
        store.create_task(&new_task(id, at)).unwrap();
    }
    assert_eq!(store.find_task("01jd5x").unwrap().id.0, "01jd5x8k2m");
    assert_eq!(store.find_task("01JD5X").unwrap().id.0, "01jd5x8k2m");
    assert_eq!(store.find_task("01jd5y0000").unwrap().id.0, "01jd5y0000");

    let err = store.find_task("01jd5").unwrap_err();
    match &err {
        StoreError::Ambiguous { prefix, candidates } => {
            assert_eq!(prefix, "01jd5");
            assert_eq!(
                candidates,
                &vec![TaskId::from("01jd5y0000"), TaskId::from("01jd5x8k2m")]
            );
        }
        other => panic!("expected Ambiguous, got {other:?}"),
    }
    let msg = err.to_string();
    assert!(msg.contains("matches 2 tasks"), "{msg}");
    assert!(
        msg.contains("01jd5x8k2m") && msg.contains("type more"),
        "{msg}"
    );

    // `_` and `%` are literal characters, not wildcards.
    assert_eq!(store.find_task("01ka_").unwrap().id.0, "01ka_prefix");
    let err = store.find_task("01k%").unwrap_err();
    assert!(matches!(err, StoreError::NotFound { .. }), "{err:?}");

    let err = store.find_task("zz").unwrap_err();
    assert!(
        matches!(&err, StoreError::NotFound { id } if id == "zz"),
        "{err:?}"
    );
    assert!(err.to_string().contains("bosun tasks"), "{err}");
    assert!(matches!(
        store.find_task("  ").unwrap_err(),
        StoreError::NotFound { .. }
    ));
    assert!(matches!(
        store.task(&TaskId::from("01jd5")).unwrap_err(),
        StoreError::NotFound { .. }
    ));
}

#[test]
fn a_task_row_serializes_with_snake_case_fields_for_the_cli_and_the_ui() {
    let (_dir, _path, store) = journal();
    let t = new_task("01json", "2026-11-30T03:00:00.000Z");
    store.create_task(&t).unwrap();
    let v = serde_json::to_value(store.task(&t.id).unwrap()).unwrap();
    assert_eq!(v["id"], "01json");
    assert_eq!(v["status"], "running");
    assert_eq!(v["cost_usd"], 0.0);
    assert_eq!(v["cached_input_tokens"], 0);
    assert_eq!(v["summary"], serde_json::Value::Null);
}

#[test]
fn a_rebased_task_reads_back_with_its_new_base_and_a_deleted_one_is_gone_with_its_events() {
    use crate::support::{checkpoint, event, message};
    let (_dir, _path, store) = journal();
    let keep = new_task("01keep", "2026-11-30T03:00:00.000Z");
    let gone = new_task("01gone", "2026-11-30T03:01:00.000Z");
    store.create_task(&keep).unwrap();
    store.create_task(&gone).unwrap();
    for id in ["01keep", "01gone"] {
        store.append_event(&event(id, 1, message("hi"))).unwrap();
        store
            .append_event(&event(id, 2, checkpoint(1, &["a.txt"], None)))
            .unwrap();
    }
    store.set_base_commit(&keep.id, "feedbeef").unwrap();
    assert_eq!(store.task(&keep.id).unwrap().base_commit, "feedbeef");

    store.delete_task(&gone.id).unwrap();
    assert!(matches!(
        store.task(&gone.id),
        Err(StoreError::NotFound { .. })
    ));
    assert!(store.events(&gone.id, 0, 10).unwrap().is_empty());
    assert!(store.checkpoints(&gone.id).unwrap().is_empty());
    // The other task keeps everything.
    assert_eq!(store.events(&keep.id, 0, 10).unwrap().len(), 2);
    assert_eq!(store.checkpoints(&keep.id).unwrap()[0].seq, 2);
    let only_checkpoints = store
        .events_of_kinds(&keep.id, &["checkpoint_created"])
        .unwrap();
    assert_eq!(only_checkpoints.len(), 1);
    assert_eq!(only_checkpoints[0].seq, 2);
    assert!(matches!(
        store.delete_task(&TaskId::from("01nope")),
        Err(StoreError::NotFound { .. })
    ));
}
