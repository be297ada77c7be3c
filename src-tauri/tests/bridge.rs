//! The event bridge against a real journal file, written by a second connection the way a
//! `bosun run` in another process writes it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bosun_app::bridge::Bridge;
use bosun_app::feed::{FeedEnd, FeedSink, TaskFeed, TaskListFeed};
use bosun_protocol::*;
use bosun_store::{NewTask, Store, StoreError};
use pretty_assertions::assert_eq;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Collects what a subscription sends; can play a closed window.
#[derive(Clone)]
struct Inbox<T> {
    got: Arc<Mutex<Vec<T>>>,
    closed: Arc<AtomicBool>,
}

impl<T> Default for Inbox<T> {
    fn default() -> Self {
        Inbox {
            got: Arc::default(),
            closed: Arc::default(),
        }
    }
}

impl<T: Send + Clone> FeedSink<T> for Inbox<T> {
    fn send(&self, msg: T) -> bool {
        if self.closed.load(Ordering::SeqCst) {
            return false;
        }
        self.got.lock().unwrap().push(msg);
        true
    }
}

impl<T: Clone> Inbox<T> {
    fn take(&self) -> Vec<T> {
        std::mem::take(&mut *self.got.lock().unwrap())
    }
}

/// Seqs of the events, and the end if there was one, in arrival order.
fn summarize(msgs: Vec<TaskFeed>) -> (Vec<Vec<u64>>, Option<FeedEnd>) {
    let mut batches = Vec::new();
    let mut end = None;
    for m in msgs {
        match m {
            TaskFeed::Events { events } => batches.push(events.iter().map(|e| e.seq).collect()),
            TaskFeed::End { end: e } => end = Some(e),
        }
    }
    (batches, end)
}

struct Journal {
    _dir: tempfile::TempDir,
    writer: Store,
    bridge: Bridge,
}

fn journal() -> Journal {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bosun.db");
    let writer = Store::open(&path).unwrap();
    let reader = Store::open(&path).unwrap();
    Journal {
        _dir: dir,
        writer,
        bridge: Bridge::new(Arc::new(reader)),
    }
}

impl Journal {
    fn create(&self, id: &str) -> TaskId {
        self.create_owned(id, std::process::id())
    }

    fn create_owned(&self, id: &str, owner_pid: u32) -> TaskId {
        let task = TaskId::from(id);
        self.writer
            .create_task(&NewTask {
                id: task.clone(),
                repo: "/tmp/repo".into(),
                prompt: format!("task {id}"),
                base_commit: "abc".into(),
                branch: format!("bosun/{id}"),
                worktree: format!("/tmp/wt/{id}"),
                provider: "openai-chat".into(),
                model: "mock-model".into(),
                created_at: bosun_store::now_rfc3339(),
                owner_pid,
                owner_started: None,
                max_steps: 10,
                max_cost_usd: None,
                parent_task_id: None,
                role: None,
                depth: 0,
            })
            .unwrap();
        task
    }

    fn append(&self, task: &TaskId, seq: u64, msg: EventMsg) {
        self.writer
            .append_event(&Event {
                seq,
                task_id: task.clone(),
                ts: bosun_store::now_rfc3339(),
                msg,
            })
            .unwrap();
    }

    fn say(&self, task: &TaskId, seqs: std::ops::RangeInclusive<u64>) {
        for seq in seqs {
            self.append(
                task,
                seq,
                EventMsg::AssistantDelta(AssistantDelta {
                    text: format!("#{seq}"),
                }),
            );
        }
    }

    fn finish(&self, task: &TaskId, seq: u64) {
        self.append(
            task,
            seq,
            EventMsg::TaskFinished(TaskFinished {
                status: TaskStatus::Completed,
                summary: "done".into(),
                checks: Vec::new(),
            }),
        );
    }
}

#[test]
fn a_subscriber_gets_the_history_then_the_live_tail_then_the_end() {
    let j = journal();
    let task = j.create("t1");
    j.say(&task, 1..=3);

    let inbox = Inbox::default();
    j.bridge
        .follow_task(task.clone(), 0, Box::new(inbox.clone()))
        .unwrap();
    assert_eq!(summarize(inbox.take()), (vec![vec![1, 2, 3]], None));

    j.bridge.tick().unwrap();
    assert_eq!(
        summarize(inbox.take()),
        (vec![], None),
        "nothing new, nothing sent"
    );

    j.say(&task, 4..=5);
    j.bridge.tick().unwrap();
    assert_eq!(summarize(inbox.take()), (vec![vec![4, 5]], None));

    j.finish(&task, 6);
    j.bridge.tick().unwrap();
    assert_eq!(
        summarize(inbox.take()),
        (vec![vec![6]], Some(FeedEnd::Finished))
    );
    assert_eq!(j.bridge.subscriptions(), 0);
}

#[test]
fn a_subscriber_starting_mid_task_gets_only_later_events() {
    let j = journal();
    let task = j.create("t1");
    j.say(&task, 1..=4);
    let inbox = Inbox::default();
    j.bridge
        .follow_task(task, 2, Box::new(inbox.clone()))
        .unwrap();
    assert_eq!(summarize(inbox.take()), (vec![vec![3, 4]], None));
}

#[test]
fn a_finished_task_streams_its_whole_history_then_ends() {
    let j = journal();
    let task = j.create("t1");
    j.say(&task, 1..=2);
    j.finish(&task, 3);
    let inbox = Inbox::default();
    j.bridge
        .follow_task(task, 0, Box::new(inbox.clone()))
        .unwrap();
    assert_eq!(
        summarize(inbox.take()),
        (vec![vec![1, 2, 3]], Some(FeedEnd::Finished))
    );
}

#[test]
fn a_long_history_arrives_in_ordered_batches() {
    let j = journal();
    let task = j.create("t1");
    j.say(&task, 1..=1200);
    let inbox = Inbox::default();
    j.bridge
        .follow_task(task, 0, Box::new(inbox.clone()))
        .unwrap();
    let (batches, end) = summarize(inbox.take());
    assert_eq!(end, None);
    assert_eq!(batches.len(), 3);
    let all: Vec<u64> = batches.into_iter().flatten().collect();
    assert_eq!(all, (1..=1200).collect::<Vec<u64>>());
}

#[test]
fn following_an_unknown_task_says_it_is_not_in_the_journal() {
    let j = journal();
    let err = j
        .bridge
        .follow_task(
            TaskId::from("nope"),
            0,
            Box::new(Inbox::<TaskFeed>::default()),
        )
        .unwrap_err();
    assert!(matches!(err, StoreError::NotFound { .. }), "{err}");
    let ipc = bosun_app::error::IpcError::from(err);
    assert_eq!(ipc.code, "not_found");
}

#[test]
fn unsubscribing_ends_the_stream_and_stops_sending() {
    let j = journal();
    let task = j.create("t1");
    j.say(&task, 1..=1);
    let inbox = Inbox::default();
    let id = j
        .bridge
        .follow_task(task.clone(), 0, Box::new(inbox.clone()))
        .unwrap();
    inbox.take();
    assert!(j.bridge.unsubscribe(id));
    assert!(!j.bridge.unsubscribe(id), "already ended");
    j.say(&task, 2..=2);
    j.bridge.tick().unwrap();
    assert_eq!(
        summarize(inbox.take()),
        (vec![], Some(FeedEnd::Unsubscribed))
    );
}

#[test]
fn a_closed_window_drops_its_subscription() {
    let j = journal();
    let task = j.create("t1");
    let inbox: Inbox<TaskFeed> = Inbox::default();
    j.bridge
        .follow_task(task.clone(), 0, Box::new(inbox.clone()))
        .unwrap();
    inbox.closed.store(true, Ordering::SeqCst);
    j.say(&task, 1..=1);
    j.bridge.tick().unwrap();
    assert_eq!(j.bridge.subscriptions(), 0);
}

#[test]
fn the_task_list_is_sent_when_it_changes_and_only_then() {
    let j = journal();
    let inbox: Inbox<TaskListFeed> = Inbox::default();
    j.bridge.follow_tasks(Box::new(inbox.clone())).unwrap();
    let ids = |msgs: Vec<TaskListFeed>| -> Vec<Vec<String>> {
        msgs.into_iter()
            .map(|m| match m {
                TaskListFeed::Tasks { tasks, .. } => tasks.into_iter().map(|t| t.id.0).collect(),
                TaskListFeed::End { end } => vec![format!("end {end:?}")],
            })
            .collect()
    };
    assert_eq!(ids(inbox.take()), vec![Vec::<String>::new()]);

    let task = j.create("t1");
    j.bridge.tick().unwrap();
    assert_eq!(ids(inbox.take()), vec![vec!["t1".to_string()]]);

    j.bridge.tick().unwrap();
    assert_eq!(ids(inbox.take()), Vec::<Vec<String>>::new());

    // A new event changes the row (last_seq, updated_at): the list goes out again.
    j.say(&task, 1..=1);
    j.bridge.tick().unwrap();
    let msgs = inbox.take();
    assert_eq!(msgs.len(), 1);
    let TaskListFeed::Tasks { tasks, .. } = &msgs[0] else {
        panic!("expected the list, got {msgs:?}");
    };
    assert_eq!(tasks[0].last_seq, 1);
}

#[test]
fn after_the_first_page_only_the_rows_that_changed_go_out() {
    let j = journal();
    let a = j.create("a");
    let _b = j.create("b");
    let inbox: Inbox<TaskListFeed> = Inbox::default();
    j.bridge.follow_tasks(Box::new(inbox.clone())).unwrap();
    let first = inbox.take();
    let TaskListFeed::Tasks { tasks, replace, .. } = &first[0] else {
        panic!("{first:?}");
    };
    assert!(*replace);
    assert_eq!(tasks.len(), 2);

    j.say(&a, 1..=3);
    j.bridge.tick().unwrap();
    let msgs = inbox.take();
    assert_eq!(msgs.len(), 1, "{msgs:?}");
    let TaskListFeed::Tasks { tasks, replace, .. } = &msgs[0] else {
        panic!("{msgs:?}");
    };
    assert!(!*replace, "a change is merged, not a new list");
    assert_eq!(
        tasks.iter().map(|t| t.id.0.as_str()).collect::<Vec<_>>(),
        vec!["a"],
        "only the task that changed"
    );
    assert_eq!(tasks[0].last_seq, 3);
    // Nothing new: nothing sent.
    j.bridge.tick().unwrap();
    assert!(inbox.take().is_empty());
}

#[test]
fn an_archived_task_leaves_the_list_and_comes_back_when_unarchived() {
    let j = journal();
    let a = j.create("a");
    let _b = j.create("b");
    let inbox: Inbox<TaskListFeed> = Inbox::default();
    j.bridge.follow_tasks(Box::new(inbox.clone())).unwrap();
    inbox.take();
    let listed = |msgs: Vec<TaskListFeed>| -> Vec<(bool, Vec<String>)> {
        msgs.into_iter()
            .filter_map(|m| match m {
                TaskListFeed::Tasks { tasks, replace, .. } => {
                    Some((replace, tasks.into_iter().map(|t| t.id.0).collect()))
                }
                TaskListFeed::End { .. } => None,
            })
            .collect()
    };
    j.writer.set_archived(&a, true).unwrap();
    j.bridge.tick().unwrap();
    assert_eq!(listed(inbox.take()), vec![(true, vec!["b".to_string()])]);
    j.writer.set_archived(&a, false).unwrap();
    j.bridge.tick().unwrap();
    let back = listed(inbox.take());
    assert_eq!(back.len(), 1);
    assert!(
        back[0].0 && back[0].1.contains(&"a".to_string()),
        "{back:?}"
    );
}

#[test]
fn a_task_whose_process_died_ends_as_interrupted_for_its_subscribers() {
    let j = journal();
    let alive = j.create("alive");
    // pid 0 is never a live owner: the process that ran this task is gone.
    let dead = j.create_owned("dead", 0);
    j.say(&dead, 1..=1);
    let inbox = Inbox::default();
    j.bridge
        .follow_task(dead.clone(), 0, Box::new(inbox.clone()))
        .unwrap();
    inbox.take();

    assert_eq!(j.bridge.reconcile().unwrap(), 1);
    j.bridge.tick().unwrap();
    let msgs = inbox.take();
    let (batches, end) = summarize(msgs.clone());
    assert_eq!((batches, end), (vec![vec![2]], Some(FeedEnd::Finished)));
    let TaskFeed::Events { events } = &msgs[0] else {
        panic!("expected events, got {msgs:?}");
    };
    assert!(
        matches!(&events[0].msg, EventMsg::TaskFinished(f) if f.status == TaskStatus::Interrupted),
        "{events:?}"
    );
    assert_eq!(
        j.writer.task(&alive).unwrap().status,
        TaskStatus::Running,
        "a task whose process lives is left alone"
    );
}

#[test]
fn channel_messages_are_tagged_json_the_ui_reads() {
    let msg = TaskFeed::End {
        end: FeedEnd::Failed {
            message: "disk full".into(),
        },
    };
    assert_eq!(
        serde_json::to_value(&msg).unwrap(),
        serde_json::json!({"kind": "end", "end": {"reason": "failed", "message": "disk full"}})
    );
}

#[test]
fn the_tasks_the_app_runs_go_out_with_the_list_even_when_the_journal_did_not_change() {
    let j = journal();
    let task = j.create("t1");
    let inbox: Inbox<TaskListFeed> = Inbox::default();
    j.bridge.follow_tasks(Box::new(inbox.clone())).unwrap();
    let owned = |msgs: Vec<TaskListFeed>| -> Vec<Vec<(String, usize)>> {
        msgs.into_iter()
            .filter_map(|m| match m {
                TaskListFeed::Tasks { owned, .. } => Some(owned.into_iter().collect()),
                TaskListFeed::End { .. } => None,
            })
            .collect()
    };
    assert_eq!(owned(inbox.take()), vec![vec![]]);

    // The engine starts waiting for an approval: nothing new in the journal, yet it goes out.
    j.bridge
        .set_owned([(task.0.clone(), 1)].into_iter().collect());
    j.bridge.tick().unwrap();
    assert_eq!(owned(inbox.take()), vec![vec![("t1".to_string(), 1)]]);

    // The same again is not news.
    j.bridge
        .set_owned([(task.0.clone(), 1)].into_iter().collect());
    j.bridge.tick().unwrap();
    assert_eq!(owned(inbox.take()), Vec::<Vec<(String, usize)>>::new());

    j.bridge.set_owned(Default::default());
    j.bridge.tick().unwrap();
    assert_eq!(owned(inbox.take()), vec![vec![]]);
}
