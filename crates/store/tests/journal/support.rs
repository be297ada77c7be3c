use bosun_protocol::{
    CallId, CheckpointCreated, Event, EventMsg, TaskFinished, TaskId, TaskStatus, ToolCallBegin,
    UsageEvent, UserMessage,
};
use bosun_store::{NewTask, Store};
use std::path::PathBuf;
use tempfile::TempDir;

/// A fresh journal in its own directory (kept alive as long as the returned `TempDir`).
pub fn journal() -> (TempDir, PathBuf, Store) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("home").join("bosun.db");
    let store = Store::open(&path).unwrap();
    (dir, path, store)
}

pub fn new_task(id: &str, created_at: &str) -> NewTask {
    NewTask {
        id: TaskId::from(id),
        repo: "/src/app".into(),
        prompt: "fix the failing test".into(),
        base_commit: "0123456789abcdef0123456789abcdef01234567".into(),
        branch: format!("bosun/{id}"),
        worktree: format!("/home/u/.local/share/bosun/worktrees/{id}"),
        provider: "openai".into(),
        model: "gpt-test".into(),
        created_at: created_at.into(),
        owner_pid: std::process::id(),
        owner_started: bosun_store::process_start_time(std::process::id()),
        max_steps: 50,
        max_cost_usd: Some(2.0),
        parent_task_id: None,
        role: None,
        depth: 0,
    }
}

pub fn event(task: &str, seq: u64, msg: EventMsg) -> Event {
    Event {
        seq,
        task_id: TaskId::from(task),
        ts: format!("2026-11-30T03:15:{:02}.{:03}Z", seq % 60, seq % 1000),
        msg,
    }
}

pub fn message(text: &str) -> EventMsg {
    EventMsg::UserMessage(UserMessage {
        text: text.into(),
        origin: None,
    })
}

pub fn tool_call(id: &str) -> EventMsg {
    EventMsg::ToolCallBegin(ToolCallBegin {
        call_id: CallId::from(id),
        tool: "read_file".into(),
        args: serde_json::json!({"path": "README.md"}),
        recovered: false,
    })
}

pub fn usage(model: &str, input: u64, output: u64, cost: f64, priced: bool) -> EventMsg {
    EventMsg::Usage(UsageEvent {
        model: model.into(),
        input_tokens: input,
        output_tokens: output,
        cached_input_tokens: input / 2,
        cache_write_tokens: input / 10,
        cache_write_1h_tokens: 0,
        reasoning_tokens: 0,
        cost_usd: priced.then_some(cost),
        total_cost_usd: cost,
        priced,
        rates: None,
        latency_ms: None,
        reasoning: Vec::new(),
    })
}

pub fn checkpoint(n: u32, files: &[&str], call: Option<&str>) -> EventMsg {
    EventMsg::CheckpointCreated(CheckpointCreated {
        checkpoint: n,
        commit: format!("{n:040x}"),
        files: files.iter().map(|f| f.to_string()).collect(),
        call_id: call.map(CallId::from),
    })
}

pub fn finished(status: TaskStatus, summary: &str) -> EventMsg {
    EventMsg::TaskFinished(TaskFinished {
        status,
        summary: summary.into(),
        checks: Vec::new(),
    })
}

/// Appends `count` user messages to the task, continuing from its last seq.
pub fn append_messages(store: &Store, task: &str, count: u64) {
    let last = store.last_seq(&TaskId::from(task)).unwrap();
    for seq in last + 1..=last + count {
        store
            .append_event(&event(task, seq, message(&format!("message {seq}"))))
            .unwrap();
    }
}

/// Asserts the task's events are exactly 1..=last_seq, in order, and agree with its row.
pub fn assert_contiguous(store: &Store, task: &str) -> u64 {
    let id = TaskId::from(task);
    let last = store.last_seq(&id).unwrap();
    let seqs: Vec<u64> = store
        .events(&id, 0, usize::MAX)
        .unwrap()
        .iter()
        .map(|e| e.seq)
        .collect();
    assert_eq!(seqs, (1..=last).collect::<Vec<_>>(), "events of {task}");
    last
}
