//! One session file into the journal: the lines after where the last scan stopped, as the task's
//! next events (a new task's first is `task_started`), priced from Bosun's price data.

use crate::session::{Item, Line, ReaderState};
use crate::{ImportError, Source};
use bosun_model::{PriceTable, ServiceTier};
use bosun_protocol::{
    AssistantMessage, CallId, Event, EventMsg, TaskId, TaskStarted, ToolCallBegin, ToolCallEnd,
    ToolCallStatus, UsageEvent, UserMessage,
};
use bosun_store::{ImportedFile, ImportedSession, NewTask, Store, StoreError};
use std::collections::HashSet;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// What one scan of one file did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileScan {
    /// The file was read before: only lines after that were read now.
    pub known: bool,
    /// A task was created for it.
    pub new_session: bool,
    pub lines: u64,
    pub malformed: u64,
    pub unknown: u64,
    pub events: u64,
    pub responses: u64,
    pub cost_usd: f64,
    /// The file is shorter than what was read of it (rewritten): left alone.
    pub shrunk: bool,
}

/// The task id of a session: `cc-<session>` (a sub-agent's `cc-agent-<id>`), `codex-<session>`.
fn task_id(source: Source, path: &Path, state: &ReaderState) -> TaskId {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    match source {
        Source::ClaudeCode if is_agent_file(path) => TaskId(format!("cc-{stem}")),
        Source::ClaudeCode => TaskId(format!("cc-{}", state.session_id.clone().unwrap_or(stem))),
        Source::Codex => TaskId(format!(
            "codex-{}",
            state.session_id.clone().unwrap_or(stem)
        )),
    }
}

/// A Claude Code sub-agent's session file.
pub(crate) fn is_agent_file(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with("agent-"))
}

pub(crate) fn import_file(
    store: &Store,
    prices: &PriceTable,
    source: Source,
    path: &Path,
) -> Result<FileScan, ImportError> {
    let io = |e| ImportError::Io {
        path: path.to_path_buf(),
        source: e,
    };
    let key = path.display().to_string();
    let before = store.imported_file(&key)?;
    let mut scan = FileScan {
        known: before.is_some(),
        ..FileScan::default()
    };
    let offset = before.as_ref().map_or(0, |f| f.offset);
    let mut file = std::fs::File::open(path).map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    if len < offset {
        scan.shrunk = true;
        return Ok(scan);
    }
    if len == offset {
        return Ok(scan);
    }
    file.seek(SeekFrom::Start(offset)).map_err(io)?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).map_err(io)?;
    // Only complete lines: a line still being written is read by the next scan.
    let Some(end) = bytes.iter().rposition(|b| *b == b'\n') else {
        return Ok(scan);
    };
    let mut state: ReaderState = before
        .as_ref()
        .and_then(|f| serde_json::from_str(&f.state).ok())
        .unwrap_or_default();
    let mut items = Vec::new();
    for raw in bytes[..end].split(|b| *b == b'\n') {
        let text = String::from_utf8_lossy(raw);
        if text.trim().is_empty() {
            continue;
        }
        scan.lines += 1;
        let line = match source {
            Source::ClaudeCode => crate::claude::read_line(&mut state, &text, &mut items),
            Source::Codex => crate::codex::read_line(&mut state, &text, &mut items),
        };
        match line {
            Line::Read => {}
            Line::Unknown => scan.unknown += 1,
            Line::Malformed => scan.malformed += 1,
        }
    }
    usage_after_its_blocks(&mut items);
    let id = before
        .as_ref()
        .map(|f| f.task_id.clone())
        .unwrap_or_else(|| task_id(source, path, &state));
    let existing = match store.task(&id) {
        Ok(t) => Some(t),
        Err(StoreError::NotFound { .. }) => None,
        Err(e) => return Err(e.into()),
    };
    let transcript = items
        .iter()
        .any(|i| matches!(i, Item::User { .. } | Item::Assistant { .. }));
    let new_task = match &existing {
        None if transcript => Some(new_task(source, path, &id, &state, &items)),
        _ => None,
    };
    let mut seq = existing.as_ref().map_or(0, |t| t.last_seq);
    let mut total_cost = existing.as_ref().map_or(0.0, |t| t.cost_usd);
    let mut events = Vec::new();
    let mut keys = Vec::new();
    let mut seen = HashSet::new();
    let mut push = |ts: &str, msg: EventMsg, events: &mut Vec<Event>| {
        seq += 1;
        events.push(Event {
            seq,
            task_id: id.clone(),
            ts: ts.to_string(),
            msg,
        });
    };
    if let Some(t) = &new_task {
        push(&t.created_at, started(t), &mut events);
    }
    if existing.is_some() || new_task.is_some() {
        for item in items {
            let (ts, msg) = match item {
                Item::User { ts, text } => (
                    ts,
                    EventMsg::UserMessage(UserMessage { text, origin: None }),
                ),
                Item::Assistant { ts, text } => {
                    (ts, EventMsg::AssistantMessage(AssistantMessage { text }))
                }
                Item::ToolCall {
                    ts,
                    call_id,
                    tool,
                    args,
                } => (
                    ts,
                    EventMsg::ToolCallBegin(ToolCallBegin {
                        call_id: CallId(call_id),
                        tool,
                        args,
                        recovered: false,
                    }),
                ),
                Item::ToolResult {
                    ts,
                    call_id,
                    output,
                    error,
                    duration_ms,
                } => (
                    ts,
                    EventMsg::ToolCallEnd(ToolCallEnd {
                        call_id: CallId(call_id),
                        status: if error {
                            ToolCallStatus::Error
                        } else {
                            ToolCallStatus::Success
                        },
                        exit_code: None,
                        error: error.then(|| output.lines().next().unwrap_or("").to_string()),
                        output,
                        duration_ms: duration_ms.unwrap_or(0),
                    }),
                ),
                Item::Usage {
                    ts,
                    model,
                    tokens,
                    key,
                } => {
                    if let Some(k) = &key {
                        if !seen.insert(k.clone()) || store.response_imported(k)? {
                            continue;
                        }
                        keys.push(k.clone());
                    }
                    let priced = prices.price(&model, &tokens, ServiceTier::Standard, None);
                    total_cost += priced.cost_usd.unwrap_or(0.0);
                    scan.responses += 1;
                    scan.cost_usd += priced.cost_usd.unwrap_or(0.0);
                    (
                        ts,
                        EventMsg::Usage(UsageEvent {
                            model,
                            input_tokens: tokens.input_tokens,
                            output_tokens: tokens.output_tokens,
                            cached_input_tokens: tokens.cached_input_tokens,
                            cache_write_tokens: tokens.cache_write_tokens,
                            cache_write_1h_tokens: tokens.cache_write_1h_tokens,
                            reasoning_tokens: tokens.reasoning_tokens,
                            cost_usd: priced.cost_usd,
                            total_cost_usd: total_cost,
                            priced: priced.cost_usd.is_some(),
                            rates: priced.rates,
                            latency_ms: None,
                            reasoning: Vec::new(),
                        }),
                    )
                }
            };
            push(&ts, msg, &mut events);
        }
    }
    scan.events = events.len() as u64;
    scan.new_session = new_task.is_some();
    let file = ImportedFile {
        path: key,
        source: source.as_str().to_string(),
        task_id: id,
        offset: offset + end as u64 + 1,
        lines: before.as_ref().map_or(0, |f| f.lines) + scan.lines,
        malformed: before.as_ref().map_or(0, |f| f.malformed) + scan.malformed,
        state: serde_json::to_string(&state).unwrap_or_else(|_| "{}".into()),
    };
    store.import_session(&ImportedSession {
        file: &file,
        new_task: new_task.as_ref(),
        events: &events,
        response_keys: &keys,
    })?;
    Ok(scan)
}

/// A response's usage after what it said and called, as Bosun's own tasks have it: Claude Code
/// writes the usage with the first line of a streamed message, before its later blocks. A usage
/// moves past the assistant text and tool calls that follow it, up to a tool result, a user
/// message or another usage.
fn usage_after_its_blocks(items: &mut [Item]) {
    let mut i = 0;
    while i < items.len() {
        if matches!(items[i], Item::Usage { .. }) {
            let mut j = i;
            while j + 1 < items.len()
                && matches!(items[j + 1], Item::Assistant { .. } | Item::ToolCall { .. })
            {
                items.swap(j, j + 1);
                j += 1;
            }
            i = j + 1;
        } else {
            i += 1;
        }
    }
}

fn new_task(
    source: Source,
    path: &Path,
    id: &TaskId,
    state: &ReaderState,
    items: &[Item],
) -> NewTask {
    let first = items.iter().find_map(|i| match i {
        Item::User { ts, text } => Some((ts.clone(), text.clone())),
        _ => None,
    });
    let created_at = items
        .first()
        .map(|i| match i {
            Item::User { ts, .. }
            | Item::Assistant { ts, .. }
            | Item::ToolCall { ts, .. }
            | Item::ToolResult { ts, .. }
            | Item::Usage { ts, .. } => ts.clone(),
        })
        .or_else(|| first.as_ref().map(|f| f.0.clone()))
        .unwrap_or_else(bosun_store::now_rfc3339);
    let agent = source == Source::ClaudeCode && is_agent_file(path);
    NewTask {
        id: id.clone(),
        repo: state.cwd.clone().unwrap_or_default(),
        prompt: first.map(|f| f.1).unwrap_or_default(),
        base_commit: String::new(),
        branch: String::new(),
        worktree: String::new(),
        provider: source.provider().to_string(),
        model: state.model.clone().unwrap_or_default(),
        created_at,
        owner_pid: 0,
        owner_started: None,
        max_steps: 0,
        max_cost_usd: None,
        parent_task_id: agent
            .then(|| state.session_id.as_ref().map(|s| TaskId(format!("cc-{s}"))))
            .flatten(),
        role: agent.then(|| "subagent".to_string()),
        depth: u32::from(agent),
    }
}

fn started(t: &NewTask) -> EventMsg {
    EventMsg::TaskStarted(TaskStarted {
        repo: t.repo.clone(),
        base_commit: String::new(),
        base_ref: None,
        branch: String::new(),
        worktree: String::new(),
        prompt: t.prompt.clone(),
        provider: t.provider.clone(),
        model: t.model.clone(),
        api: String::new(),
        base_url: String::new(),
        api_key_env: None,
        mode: None,
        max_cost_usd: None,
        forked_from: None,
        profile: None,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn kinds(items: &[Item]) -> Vec<&'static str> {
        items
            .iter()
            .map(|i| match i {
                Item::User { .. } => "user",
                Item::Assistant { .. } => "assistant",
                Item::ToolCall { .. } => "call",
                Item::ToolResult { .. } => "result",
                Item::Usage { .. } => "usage",
            })
            .collect()
    }

    #[test]
    fn a_usage_follows_the_text_and_calls_of_its_response() {
        let ts = String::new();
        let usage = || Item::Usage {
            ts: ts.clone(),
            model: "m".into(),
            tokens: Default::default(),
            key: None,
        };
        let text = || Item::Assistant {
            ts: ts.clone(),
            text: "t".into(),
        };
        let call = || Item::ToolCall {
            ts: ts.clone(),
            call_id: "c".into(),
            tool: "Read".into(),
            args: serde_json::Value::Null,
        };
        let result = || Item::ToolResult {
            ts: ts.clone(),
            call_id: "c".into(),
            output: String::new(),
            error: false,
            duration_ms: None,
        };
        let mut items = vec![usage(), text(), call(), result(), usage(), text(), usage()];
        usage_after_its_blocks(&mut items);
        assert_eq!(
            kinds(&items),
            [
                "assistant",
                "call",
                "usage",
                "result",
                "assistant",
                "usage",
                "usage"
            ]
        );
    }
}
