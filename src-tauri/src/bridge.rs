//! The event bridge: follows the journal and feeds subscribers. One poller thread checks SQLite's
//! `data_version` (it changes when another process, such as a `bosun run`, commits) and, when it
//! changed, sends each task subscriber the events after the last seq it was sent, in seq order, and
//! each task-list subscriber the list if it differs. A new subscriber first gets the history from
//! the seq it asked for, then the live tail; every stream ends with a [`FeedEnd`]. Every few
//! seconds it also closes running tasks whose process died, so they stop showing as running.

use crate::feed::{FeedEnd, FeedSink, TaskFeed, TaskListFeed};
use bosun_protocol::{EventMsg, TaskId};
use bosun_store::{Store, StoreError, TaskRow};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

/// How often the poller looks at the journal.
pub const POLL_EVERY: Duration = Duration::from_millis(200);

/// How often (in poller ticks) running tasks whose process died are closed as interrupted.
const RECONCILE_EVERY_TICKS: u32 = 25;

/// Events per channel message; a long history goes out as several batches.
const BATCH: usize = 500;

/// The id `unsubscribe` takes.
pub type SubscriptionId = u64;

struct TaskFollower {
    task: TaskId,
    /// The last seq sent.
    sent: u64,
    /// Not served yet: serve on the next tick even if the journal did not change.
    fresh: bool,
    sink: Box<dyn FeedSink<TaskFeed>>,
}

/// The tasks this app runs (task id → how many approvals each waits for).
pub type Owned = BTreeMap<String, usize>;

/// A task-list subscriber: it got the newest [`LIST_PAGE`] tasks once, then only the rows that
/// changed (the journal is never read whole on a change).
struct ListFollower {
    /// What it has: none yet, or the newest `updated_at` it was sent, the number of tasks then,
    /// and the tasks the app runs.
    sent: Option<ListSent>,
    fresh: bool,
    sink: Box<dyn FeedSink<TaskListFeed>>,
}

struct ListSent {
    since: String,
    count: u64,
    owned: Owned,
    /// The rows it was sent whose `updated_at` is `since`.
    boundary: Vec<TaskRow>,
    /// The tasks left out (archived, deleted) when it was sent.
    hidden: std::collections::HashSet<bosun_protocol::TaskId>,
}

/// The tasks a list subscriber gets first (the History view pages through the rest).
pub const LIST_PAGE: usize = 500;

#[derive(Default)]
struct Followers {
    tasks: HashMap<SubscriptionId, TaskFollower>,
    lists: HashMap<SubscriptionId, ListFollower>,
    seen_version: Option<i64>,
}

pub struct Bridge {
    store: Arc<Store>,
    followers: Mutex<Followers>,
    next_id: AtomicU64,
    owned: Mutex<Owned>,
}

impl Bridge {
    pub fn new(store: Arc<Store>) -> Bridge {
        Bridge {
            store,
            followers: Mutex::new(Followers::default()),
            next_id: AtomicU64::new(1),
            owned: Mutex::new(Owned::new()),
        }
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Follows one task: its events with `seq > after_seq` now, then new ones as they are written.
    /// Fails with `NotFound` for a task the journal does not have.
    pub fn follow_task(
        &self,
        task: TaskId,
        after_seq: u64,
        sink: Box<dyn FeedSink<TaskFeed>>,
    ) -> Result<SubscriptionId, StoreError> {
        self.store.task(&task)?;
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let follower = TaskFollower {
            task,
            sent: after_seq,
            fresh: true,
            sink,
        };
        self.followers().tasks.insert(id, follower);
        self.tick()?;
        Ok(id)
    }

    /// Follows the task list: the whole list now, then again whenever it changes.
    pub fn follow_tasks(
        &self,
        sink: Box<dyn FeedSink<TaskListFeed>>,
    ) -> Result<SubscriptionId, StoreError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let follower = ListFollower {
            sent: None,
            fresh: true,
            sink,
        };
        self.followers().lists.insert(id, follower);
        self.tick()?;
        Ok(id)
    }

    /// Stops a subscription; its stream ends with `unsubscribed`. False if it had already ended.
    pub fn unsubscribe(&self, id: SubscriptionId) -> bool {
        let mut followers = self.followers();
        if let Some(f) = followers.tasks.remove(&id) {
            f.sink.send(TaskFeed::End {
                end: FeedEnd::Unsubscribed,
            });
            return true;
        }
        if let Some(f) = followers.lists.remove(&id) {
            f.sink.send(TaskListFeed::End {
                end: FeedEnd::Unsubscribed,
            });
            return true;
        }
        false
    }

    /// Sets which tasks the app runs and the approvals they wait for (the app's engine knows it);
    /// task-list subscribers get it with the list, at the next tick.
    pub fn set_owned(&self, owned: Owned) {
        let mut current = self
            .owned
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if *current != owned {
            *current = owned;
            drop(current);
            self.followers().seen_version = None;
        }
    }

    /// How many streams are open.
    pub fn subscriptions(&self) -> usize {
        let followers = self.followers();
        followers.tasks.len() + followers.lists.len()
    }

    /// One look at the journal: serves new subscribers, and everyone if the journal changed.
    /// A follower whose journal read failed gets its stream ended with the reason; a busy journal
    /// is only retried at the next tick.
    pub fn tick(&self) -> Result<(), StoreError> {
        let mut followers = self.followers();
        let version = self.store.data_version()?;
        let changed = followers.seen_version != Some(version);
        followers.seen_version = Some(version);

        let mut ended = Vec::new();
        for (id, f) in followers.tasks.iter_mut() {
            if !(changed || f.fresh) {
                continue;
            }
            match self.serve_task(f) {
                Ok(true) => f.fresh = false,
                Ok(false) => ended.push(*id),
                Err(StoreError::Busy(_)) => f.fresh = true,
                Err(err) => {
                    f.sink.send(TaskFeed::End {
                        end: FeedEnd::Failed {
                            message: err.to_string(),
                        },
                    });
                    ended.push(*id);
                }
            }
        }
        for id in ended.drain(..) {
            followers.tasks.remove(&id);
        }

        if changed || followers.lists.values().any(|f| f.fresh) {
            let owned = self
                .owned
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .clone();
            for (id, f) in followers.lists.iter_mut() {
                if !(changed || f.fresh) {
                    continue;
                }
                match self.serve_list(f, &owned) {
                    Ok(true) => f.fresh = false,
                    Ok(false) => ended.push(*id),
                    Err(StoreError::Busy(_)) => f.fresh = true,
                    Err(err) => {
                        f.sink.send(TaskListFeed::End {
                            end: FeedEnd::Failed {
                                message: err.to_string(),
                            },
                        });
                        ended.push(*id);
                    }
                }
            }
            for id in ended {
                followers.lists.remove(&id);
            }
        }
        Ok(())
    }

    /// Closes the running tasks whose process is gone (a `bosun run` killed with -9, a crash) as
    /// `interrupted`, and makes sure subscribers see it: this connection's own writes do not change
    /// its `data_version`. Returns how many tasks it closed.
    pub fn reconcile(&self) -> Result<usize, StoreError> {
        let closed = self.store.reconcile_interrupted()?;
        if !closed.is_empty() {
            self.followers().seen_version = None;
        }
        Ok(closed.len())
    }

    /// Sends a list follower what changed since it was last served: first (or after a task was
    /// deleted) the newest tasks to replace its list, then only the rows that changed and the
    /// tasks the app runs when they changed. False once the receiver is gone.
    fn serve_list(&self, f: &mut ListFollower, owned: &Owned) -> Result<bool, StoreError> {
        let count = self.store.task_count()?;
        // Archived and deleted tasks are not listed; one archived (or back) makes a new list.
        let hidden = self.store.hidden_tasks()?;
        let (mut tasks, replace) = match &f.sent {
            Some(sent) if count >= sent.count && hidden == sent.hidden => {
                (self.store.tasks_updated_since(&sent.since)?, false)
            }
            _ => (self.store.recent_tasks(LIST_PAGE + hidden.len())?, true),
        };
        tasks.retain(|t| !hidden.contains(&t.id));
        tasks.truncate(LIST_PAGE);
        if let (false, Some(sent)) = (replace, &f.sent) {
            // Rows changed at the very instant of the last message come again (`>=`: two
            // changes can share a millisecond); those it already has are not news.
            tasks.retain(|t| !sent.boundary.contains(t));
        }
        let owned_changed = f.sent.as_ref().is_none_or(|s| &s.owned != owned);
        let since = tasks
            .iter()
            .map(|t| t.updated_at.clone())
            .max()
            .or_else(|| f.sent.as_ref().map(|s| s.since.clone()))
            .unwrap_or_default();
        let mut boundary: Vec<TaskRow> = tasks
            .iter()
            .filter(|t| t.updated_at == since)
            .cloned()
            .collect();
        if let Some(sent) = &f.sent
            && sent.since == since
        {
            boundary.extend(
                sent.boundary
                    .iter()
                    .filter(|b| !tasks.iter().any(|t| t.id == b.id))
                    .cloned(),
            );
        }
        if replace || owned_changed || !tasks.is_empty() {
            let sent = f.sink.send(TaskListFeed::Tasks {
                tasks,
                owned: owned.clone(),
                replace,
            });
            if !sent {
                return Ok(false);
            }
        }
        f.sent = Some(ListSent {
            since,
            count,
            owned: owned.clone(),
            boundary,
            hidden,
        });
        Ok(true)
    }

    /// Sends a task follower everything after what it was sent. False once its stream is over
    /// (the task finished, or the receiver is gone).
    fn serve_task(&self, f: &mut TaskFollower) -> Result<bool, StoreError> {
        loop {
            let events = self.store.events(&f.task, f.sent, BATCH)?;
            let Some(last) = events.last() else {
                return Ok(true);
            };
            let last_seq = last.seq;
            // A continued task has several `task_finished`: the stream ends at the last event only.
            let finished = matches!(last.msg, EventMsg::TaskFinished(_));
            let full = events.len() == BATCH;
            if !f.sink.send(TaskFeed::Events { events }) {
                return Ok(false);
            }
            f.sent = last_seq;
            if finished {
                f.sink.send(TaskFeed::End {
                    end: FeedEnd::Finished,
                });
                return Ok(false);
            }
            if !full {
                return Ok(true);
            }
        }
    }

    /// Starts the poller thread. It runs until the process exits.
    pub fn spawn_poller(self: &Arc<Self>) -> std::io::Result<JoinHandle<()>> {
        let bridge = Arc::clone(self);
        std::thread::Builder::new()
            .name("bosun-journal-poller".into())
            .spawn(move || {
                let mut ticks = 0u32;
                loop {
                    if ticks.is_multiple_of(RECONCILE_EVERY_TICKS)
                        && let Err(err) = bridge.reconcile()
                    {
                        tracing::warn!("closing tasks whose process died failed: {err}");
                    }
                    ticks = ticks.wrapping_add(1);
                    if let Err(err) = bridge.tick() {
                        tracing::warn!("reading the journal failed, retrying: {err}");
                    }
                    std::thread::sleep(POLL_EVERY);
                }
            })
    }

    fn followers(&self) -> MutexGuard<'_, Followers> {
        // A panic while serving cannot leave the map half-updated in a way that matters: take it over.
        self.followers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
