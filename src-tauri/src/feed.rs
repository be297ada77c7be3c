//! What a subscription sends down its channel. Every stream ends with an explicit [`FeedEnd`].
//!
//! `FeedEnd` is exported to TypeScript by ts-rs; `TaskFeed` and `TaskListFeed` wrap types of other
//! crates, which ts-rs cannot import across crates at different depths, so their TypeScript is
//! written beside the channel code (`ui/src/lib/ipc/journal.ts`) and pinned by a JSON test here.

use bosun_protocol::Event;
use bosun_store::TaskRow;
use serde::Serialize;
use std::collections::BTreeMap;
use ts_rs::TS;

/// One message of a task's stream: its history from the requested seq, then the live tail, in
/// seq order, batched.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TaskFeed {
    Events { events: Vec<Event> },
    End { end: FeedEnd },
}

/// One message of the task list stream: the whole list (newest first) and the tasks this app runs
/// (id → how many approvals each waits for), whenever either changed.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TaskListFeed {
    /// `replace`: the newest tasks, replacing the list; else the rows that changed (new ones
    /// included), to merge by id.
    Tasks {
        tasks: Vec<TaskRow>,
        owned: BTreeMap<String, usize>,
        replace: bool,
    },
    End {
        end: FeedEnd,
    },
}

/// Why a stream stopped.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(tag = "reason", rename_all = "snake_case")]
#[ts(export, export_to = "../../ui/src/lib/bindings/")]
pub enum FeedEnd {
    /// The task finished; its `task_finished` event was the last one sent.
    Finished,
    /// The UI asked to stop (`unsubscribe`).
    Unsubscribed,
    /// The journal could not be read; `message` says why and what to do.
    Failed { message: String },
}

/// Where a subscription's messages go: a Tauri channel in the app, a vector in tests. `send`
/// returns false once the receiver is gone (a closed or reloaded window), which ends the stream.
pub trait FeedSink<T>: Send {
    fn send(&self, msg: T) -> bool;
}

impl<T: Serialize + Clone + tauri::ipc::IpcResponse + Send> FeedSink<T> for tauri::ipc::Channel<T> {
    fn send(&self, msg: T) -> bool {
        tauri::ipc::Channel::send(self, msg).is_ok()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use bosun_protocol::{AssistantDelta, EventMsg, TaskId};
    use serde_json::json;

    /// The shapes `ui/src/lib/ipc/journal.ts` declares for the two channels.
    #[test]
    fn feeds_serialize_as_the_ui_declares_them() {
        let events = TaskFeed::Events {
            events: vec![Event {
                seq: 1,
                task_id: TaskId::from("t1"),
                ts: "2026-11-30T03:15:00.000Z".into(),
                msg: EventMsg::AssistantDelta(AssistantDelta { text: "hi".into() }),
            }],
        };
        assert_eq!(
            serde_json::to_value(&events).unwrap(),
            json!({"kind": "events", "events": [{"seq": 1, "task_id": "t1", "ts": "2026-11-30T03:15:00.000Z", "type": "assistant_delta", "text": "hi"}]})
        );
        let end = TaskListFeed::End {
            end: FeedEnd::Unsubscribed,
        };
        assert_eq!(
            serde_json::to_value(&end).unwrap(),
            json!({"kind": "end", "end": {"reason": "unsubscribed"}})
        );
        let list = TaskListFeed::Tasks {
            tasks: vec![],
            owned: BTreeMap::from([("t1".to_string(), 2)]),
            replace: true,
        };
        assert_eq!(
            serde_json::to_value(&list).unwrap(),
            json!({"kind": "tasks", "tasks": [], "owned": {"t1": 2}, "replace": true})
        );
    }
}
