//! Forks: a new task from a checkpoint of an earlier one — a new worktree holding that
//! checkpoint, the conversation up to that point, a new prompt. The fork's base is the earlier
//! task's base commit (so its review shows everything since that base), and its `task_started`
//! says where it came from. Its journal holds only its own events: the conversation before the
//! fork is read from the earlier task's journal (see [`conversation_events`]).

use crate::CoreError;
use bosun_protocol::{Event, EventMsg, ForkedFrom, TaskId};
use bosun_store::Store;

/// The events of `task` in order, preceded (for a fork) by those of the tasks it was forked
/// from up to the fork point: what its conversation is rebuilt from.
pub fn conversation_events(store: &Store, task: &TaskId) -> Result<Vec<Event>, CoreError> {
    let own = all_events(store, task)?;
    let from = own.iter().find_map(|e| match &e.msg {
        EventMsg::TaskStarted(t) => t.forked_from.clone(),
        _ => None,
    });
    match from {
        Some(from) => {
            let mut events = fork_prefix(store, &from, 0)?;
            events.extend(own);
            Ok(events)
        }
        None => Ok(own),
    }
}

/// The events of the conversation `from` points at: its task's events (with their own fork
/// prefix) up to the checkpoint — for checkpoint N, through the event that wrote it; for 0 (the
/// base), up to the tool call that made the first change.
pub fn fork_prefix(store: &Store, from: &ForkedFrom, depth: u32) -> Result<Vec<Event>, CoreError> {
    if depth > 64 {
        return Err(CoreError::Internal(
            "forks nest more than 64 deep; refusing to follow them further".into(),
        ));
    }
    let events = all_events(store, &from.task)?;
    let checkpoints = store.checkpoints(&from.task)?;
    let cut = match from.checkpoint {
        0 => match checkpoints.first() {
            Some(first) => {
                // Before the call that made the first change (its begin), else before the
                // checkpoint itself.
                let begin = first.call_id.as_ref().and_then(|id| {
                    events.iter().find_map(|e| match &e.msg {
                        EventMsg::ToolCallBegin(b) if &b.call_id.0 == id => Some(e.seq),
                        _ => None,
                    })
                });
                begin.unwrap_or(first.seq).saturating_sub(1)
            }
            None => u64::MAX,
        },
        n => match checkpoints.iter().find(|c| c.n == n) {
            Some(c) => c.seq,
            None => return Err(no_such_checkpoint(from, &checkpoints)),
        },
    };
    let mut prefix = match events.iter().find_map(|e| match &e.msg {
        EventMsg::TaskStarted(t) => t.forked_from.clone(),
        _ => None,
    }) {
        Some(parent) => fork_prefix(store, &parent, depth + 1)?,
        None => Vec::new(),
    };
    prefix.extend(events.into_iter().filter(|e| {
        e.seq <= cut && !matches!(e.msg, EventMsg::TaskStarted(_) | EventMsg::TaskFinished(_))
    }));
    Ok(prefix)
}

/// The commit a fork's worktree starts from: checkpoint `n` of `task` (0: None, the base).
pub fn fork_commit(store: &Store, from: &ForkedFrom) -> Result<Option<String>, CoreError> {
    if from.checkpoint == 0 {
        return Ok(None);
    }
    let checkpoints = store.checkpoints(&from.task)?;
    match checkpoints.iter().find(|c| c.n == from.checkpoint) {
        Some(c) => Ok(Some(c.commit.clone())),
        None => Err(no_such_checkpoint(from, &checkpoints)),
    }
}

/// The fork point names a checkpoint the task does not have: which it has.
fn no_such_checkpoint(from: &ForkedFrom, checkpoints: &[bosun_store::CheckpointRow]) -> CoreError {
    CoreError::Refused {
        code: "no_such_checkpoint",
        message: format!(
            "task {} has no checkpoint {} (it has {}); 0 is its base",
            from.task,
            from.checkpoint,
            match checkpoints.last() {
                Some(last) => format!("1 to {}", last.n),
                None => "none".into(),
            }
        ),
    }
}

pub(crate) fn all_events(store: &Store, task: &TaskId) -> Result<Vec<Event>, CoreError> {
    let mut out = Vec::new();
    loop {
        let after = out.last().map_or(0, |e: &Event| e.seq);
        let page = store.events(task, after, 5000)?;
        if page.is_empty() {
            return Ok(out);
        }
        out.extend(page);
    }
}
