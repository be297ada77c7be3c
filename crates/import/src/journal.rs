//! One session file into the journal: the lines after where the last scan stopped, as the task's
//! next events (a new task's first is `task_started`), priced from Bosun's price data.

use crate::session::{Item, Line, ReaderState};
use crate::{ImportError, Source};
use bosun_model::{PriceTable, ServiceTier};
use bosun_policy::redact::Redactor;
use bosun_protocol::{
    AssistantMessage, CallId, Event, EventMsg, Redacted, TaskId, TaskStarted, TokenUsage,
    ToolCallBegin, ToolCallEnd, ToolCallStatus, UsageEvent, UserMessage,
};
use bosun_store::{ImportedFile, ImportedSession, NewTask, Store, StoreError};
use serde_json::Value;
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
    /// The file repeats a session already imported from this other file (a copy): left alone.
    pub copy_of: Option<String>,
    /// Secrets replaced in what was imported.
    pub redacted: usize,
}

/// The task id of a session: `cc-<file name>` (Claude Code names each file by its session; a
/// resumed session's new file starts with the old session's lines, their `sessionId` the old
/// one's; a sub-agent's is `cc-agent-<id>`), `codex-<session>`.
fn task_id(source: Source, path: &Path, state: &ReaderState) -> TaskId {
    match (source, &state.session_id) {
        (Source::Codex, Some(session)) => TaskId(format!("codex-{session}")),
        _ => stem_task_id(source, path),
    }
}

/// A session's task id from its file's name alone.
fn stem_task_id(source: Source, path: &Path) -> TaskId {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    match source {
        Source::ClaudeCode => TaskId(format!("cc-{stem}")),
        Source::Codex => TaskId(format!("codex-{stem}")),
    }
}

/// A Claude Code sub-agent's session file.
pub(crate) fn is_agent_file(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with("agent-"))
}

/// The lines of `bytes` up to its last newline (a line still being written is read by the next
/// scan) through the reader, and where the last complete one ends; None when no line is
/// complete.
fn read_lines(
    source: Source,
    bytes: &[u8],
    state: &mut ReaderState,
    scan: &mut FileScan,
) -> Option<(Vec<Item>, usize)> {
    let end = bytes.iter().rposition(|b| *b == b'\n')?;
    let mut items = Vec::new();
    for raw in bytes[..end].split(|b| *b == b'\n') {
        let text = String::from_utf8_lossy(raw);
        if text.trim().is_empty() {
            continue;
        }
        scan.lines += 1;
        let line = match source {
            Source::ClaudeCode => crate::claude::read_line(state, &text, &mut items),
            Source::Codex => crate::codex::read_line(state, &text, &mut items),
        };
        match line {
            Line::Read => {}
            Line::Unknown => scan.unknown += 1,
            Line::Malformed => scan.malformed += 1,
        }
    }
    Some((items, end))
}

/// The file's key in the journal: its canonical path (the same file reached through a relative
/// path, a symbolic link or `..` is the same file), else the path as given.
fn file_key(path: &Path) -> String {
    std::fs::canonicalize(path)
        .unwrap_or_else(|_| path.to_path_buf())
        .display()
        .to_string()
}

pub(crate) fn import_file(
    store: &Store,
    prices: &PriceTable,
    redactor: &Redactor,
    source: Source,
    path: &Path,
) -> Result<FileScan, ImportError> {
    let io = |e| ImportError::Io {
        path: path.to_path_buf(),
        source: e,
    };
    let key = file_key(path);
    let mut before = store.imported_file(&key)?;
    let mut scan = FileScan {
        known: before.is_some(),
        ..FileScan::default()
    };
    let mut file = std::fs::File::open(path).map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    let mut moved_from = None;
    let mut own_id = None;
    // A new file is read whole once: what that read found, when it is read from its start.
    let mut first = None;
    if before.is_none() {
        // A session read before from another file: moved or renamed (that file is gone), its
        // reading goes on here; a copy (that file is still there), left alone.
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(io)?;
        let mut state = ReaderState::default();
        let mut probe = FileScan::default();
        // No complete line yet: read by the next scan.
        let Some((items, end)) = read_lines(source, &bytes, &mut state, &mut probe) else {
            return Ok(scan);
        };
        let id = task_id(source, path, &state);
        let others: Vec<ImportedFile> = store
            .imported_files_of(&id)?
            .into_iter()
            .filter(|f| f.path != key)
            .collect();
        let same_name = |f: &&ImportedFile| Path::new(&f.path).file_name() == path.file_name();
        let was_copy =
            |f: &&ImportedFile| serde_json::from_str::<ReaderState>(&f.state).is_ok_and(|s| s.copy);
        if let Some(gone) = others.iter().find(|f| {
            same_name(f) && !was_copy(f) && !Path::new(&f.path).exists() && f.offset <= len
        }) {
            moved_from = Some(gone.path.clone());
            before = Some(ImportedFile {
                path: key.clone(),
                ..gone.clone()
            });
            scan.known = true;
        } else if let Some(copy) = others.iter().find(|f| same_name(f) && !was_copy(f)) {
            scan.copy_of = Some(copy.path.clone());
            state.copy = true;
            let file = ImportedFile {
                path: key,
                source: source.as_str().to_string(),
                task_id: id,
                offset: end as u64 + 1,
                lines: probe.lines,
                malformed: probe.malformed,
                state: serde_json::to_string(&state).unwrap_or_else(|_| "{}".into()),
            };
            store.import_session(&ImportedSession {
                file: &file,
                new_task: None,
                events: &[],
                response_keys: &[],
                moved_from: None,
            })?;
            return Ok(scan);
        } else if !others.is_empty() {
            // Another file that starts as an imported session (Claude Code copies a
            // resumed session's lines into the new one): a session of its own, named by
            // its file; the responses both hold count once (their keys).
            own_id = Some(stem_task_id(source, path));
        }
        if moved_from.is_none() {
            first = Some((state, probe, items, end as u64 + 1));
        }
    }
    let (mut state, mut items, read_to) = match first {
        Some((state, probe, items, read_to)) => {
            scan.lines = probe.lines;
            scan.malformed = probe.malformed;
            scan.unknown = probe.unknown;
            (state, items, read_to)
        }
        None => {
            let offset = before.as_ref().map_or(0, |f| f.offset);
            if len < offset {
                scan.shrunk = true;
                return Ok(scan);
            }
            if len == offset && moved_from.is_none() {
                return Ok(scan);
            }
            file.seek(SeekFrom::Start(offset)).map_err(io)?;
            let mut bytes = Vec::new();
            file.read_to_end(&mut bytes).map_err(io)?;
            let mut state: ReaderState = before
                .as_ref()
                .and_then(|f| serde_json::from_str(&f.state).ok())
                .unwrap_or_default();
            match read_lines(source, &bytes, &mut state, &mut scan) {
                Some((items, end)) => (state, items, offset + end as u64 + 1),
                // Moved with nothing new: only its key changes.
                None if moved_from.is_some() => (state, Vec::new(), offset),
                None => return Ok(scan),
            }
        }
    };
    usage_after_its_blocks(&mut items);
    let id = before
        .as_ref()
        .map(|f| f.task_id.clone())
        .or(own_id)
        .unwrap_or_else(|| task_id(source, path, &state));
    let existing = match store.task(&id) {
        Ok(t) => Some(t),
        Err(StoreError::NotFound { .. }) => None,
        Err(e) => return Err(e.into()),
    };
    // A session the user deleted (`bosun delete` keeps its row, without its transcript) or
    // whose transcript retention removed stays so: what the file adds is read past.
    // A copy of another file's session stays left alone as it grows.
    let removed = state.copy
        || match &existing {
            Some(t) => store.task_marks(&t.id)?.transcript_removed.is_some(),
            None => state.task_created,
        };
    let existing = existing.filter(|_| !removed);
    let transcript = items
        .iter()
        .any(|i| matches!(i, Item::User { .. } | Item::Assistant { .. }));
    let mut new_task = match &existing {
        None if transcript && !removed => Some(new_task(source, path, &id, &state, &items)),
        _ => None,
    };
    if let Some(t) = &mut new_task {
        // The prompt is the first user message's text: its secrets are counted there.
        redact_text(redactor, &mut t.prompt);
        state.task_created = true;
    }
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
                    replaces,
                } => {
                    if let Some(k) = &key
                        && replaces.is_none()
                    {
                        if !seen.insert(k.clone()) || store.response_imported(k)? {
                            continue;
                        }
                        keys.push(k.clone());
                    }
                    let price =
                        |t: &TokenUsage| prices.price(&model, t, ServiceTier::Standard, None);
                    let priced = price(&tokens);
                    // A correction carries what the response used beyond what was journaled.
                    let (tokens, cost, rates) = match &replaces {
                        Some(old) => (
                            difference(&tokens, old),
                            priced
                                .cost_usd
                                .map(|c| c - price(old).cost_usd.unwrap_or(0.0)),
                            priced.rates,
                        ),
                        None => (tokens, priced.cost_usd, priced.rates),
                    };
                    total_cost += cost.unwrap_or(0.0);
                    scan.responses += u64::from(replaces.is_none());
                    scan.cost_usd += cost.unwrap_or(0.0);
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
                            cost_usd: cost,
                            total_cost_usd: total_cost,
                            priced: cost.is_some(),
                            rates,
                            latency_ms: None,
                            reasoning: Vec::new(),
                        }),
                    )
                }
            };
            // Secrets in another agent's transcript are redacted as in Bosun's own.
            let (msg, count, kinds) = redact_event(redactor, msg);
            push(&ts, msg, &mut events);
            if count > 0 {
                scan.redacted += count;
                push(
                    &ts,
                    EventMsg::Redacted(Redacted {
                        count: u32::try_from(count).unwrap_or(u32::MAX),
                        kinds,
                        place: "journal".into(),
                    }),
                    &mut events,
                );
            }
        }
    }
    scan.events = events.len() as u64;
    scan.new_session = new_task.is_some();
    let file = ImportedFile {
        path: key,
        source: source.as_str().to_string(),
        task_id: id,
        offset: read_to,
        lines: before.as_ref().map_or(0, |f| f.lines) + scan.lines,
        malformed: before.as_ref().map_or(0, |f| f.malformed) + scan.malformed,
        state: serde_json::to_string(&state).unwrap_or_else(|_| "{}".into()),
    };
    store.import_session(&ImportedSession {
        file: &file,
        new_task: new_task.as_ref(),
        events: &events,
        response_keys: &keys,
        moved_from: moved_from.as_deref(),
    })?;
    Ok(scan)
}

/// What `new` used beyond `old`, class by class.
fn difference(new: &TokenUsage, old: &TokenUsage) -> TokenUsage {
    TokenUsage {
        input_tokens: new.input_tokens.saturating_sub(old.input_tokens),
        output_tokens: new.output_tokens.saturating_sub(old.output_tokens),
        cached_input_tokens: new
            .cached_input_tokens
            .saturating_sub(old.cached_input_tokens),
        cache_write_tokens: new
            .cache_write_tokens
            .saturating_sub(old.cache_write_tokens),
        cache_write_1h_tokens: new
            .cache_write_1h_tokens
            .saturating_sub(old.cache_write_1h_tokens),
        reasoning_tokens: new.reasoning_tokens.saturating_sub(old.reasoning_tokens),
    }
}

fn redact_text(redactor: &Redactor, text: &mut String) -> (usize, Vec<String>) {
    let r = redactor.redact(text);
    let (count, kinds) = (r.count, r.kinds);
    if let std::borrow::Cow::Owned(t) = r.text {
        *text = t;
    }
    (count, kinds)
}

/// `msg` with every secret in its strings replaced, as the emitter does to Bosun's own events;
/// how many, and of which kinds.
fn redact_event(redactor: &Redactor, msg: EventMsg) -> (EventMsg, usize, Vec<String>) {
    fn walk(r: &Redactor, v: &mut Value, count: &mut usize, kinds: &mut Vec<String>) {
        match v {
            Value::String(s) => {
                let (n, k) = redact_text(r, s);
                *count += n;
                for k in k {
                    if !kinds.contains(&k) {
                        kinds.push(k);
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| walk(r, v, count, kinds)),
            Value::Object(map) => map.values_mut().for_each(|v| walk(r, v, count, kinds)),
            _ => {}
        }
    }
    let Ok(mut value) = serde_json::to_value(&msg) else {
        return (msg, 0, Vec::new());
    };
    let (mut count, mut kinds) = (0, Vec::new());
    walk(redactor, &mut value, &mut count, &mut kinds);
    if count == 0 {
        return (msg, 0, kinds);
    }
    match serde_json::from_value(value) {
        Ok(redacted) => (redacted, count, kinds),
        // Only strings changed, so the shape holds; were it broken, the secret must not leak.
        Err(_) => (
            EventMsg::Redacted(Redacted {
                count: u32::try_from(count).unwrap_or(u32::MAX),
                kinds: kinds.clone(),
                place: "journal".into(),
            }),
            0,
            kinds,
        ),
    }
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
            replaces: None,
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
