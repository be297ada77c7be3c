//! A task as JSON, the whole journal as JSON lines, and importing those lines into a journal.
//!
//! The JSON-lines file is: a header `{"bosun_journal": 1, "exported_at": …}`, then for each task
//! a `{"task": TaskRow, "limits": …, "marks": …}` line followed by its events, one per line, in
//! seq order (the journal's own JSON). Both directions stream: a journal of a million events is
//! never held in memory.

use super::{ExportError, JOURNAL_FORMAT};
use bosun_protocol::{Event, TaskId};
use bosun_store::{ImportTask, Imported, Store, TaskLimits, TaskMarks, TaskRow};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;

/// Events read from the journal at a time.
const PAGE: usize = 1000;

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Header {
    bosun_journal: u32,
    exported_at: String,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskLine {
    task: TaskRow,
    limits: TaskLimits,
    #[serde(default)]
    marks: TaskMarks,
}

/// What [`write_journal_jsonl`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JournalExport {
    pub tasks: u64,
    pub events: u64,
}

/// What [`import_journal`] did, task by task.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportReport {
    /// New in the journal, with their events.
    pub created: Vec<TaskId>,
    /// Already in the journal with the same content.
    pub identical: Vec<TaskId>,
    /// Their id is in the journal with different content: skipped.
    pub conflicts: Vec<TaskId>,
    /// Events written.
    pub events: u64,
}

fn write_err(source: std::io::Error) -> ExportError {
    ExportError::Io {
        what: "write the export".into(),
        source,
    }
}

/// Calls `each` with every event of the task, in seq order, a page at a time.
fn each_event(
    store: &Store,
    task: &TaskId,
    mut each: impl FnMut(&Event) -> Result<(), ExportError>,
) -> Result<u64, ExportError> {
    let (mut after, mut count) = (0, 0);
    loop {
        let page = store
            .events(task, after, PAGE)
            .map_err(crate::CoreError::from)?;
        let Some(last) = page.last() else {
            return Ok(count);
        };
        after = last.seq;
        for ev in &page {
            each(ev)?;
            count += 1;
        }
    }
}

/// One task as `{"task": TaskRow, "events": [Event, …]}`.
pub fn write_task_json(
    store: &Store,
    task: &TaskId,
    out: &mut dyn Write,
) -> Result<u64, ExportError> {
    let row = store.task(task).map_err(crate::CoreError::from)?;
    write!(out, "{{\"task\":").map_err(write_err)?;
    serde_json::to_writer_pretty(&mut *out, &row).map_err(|e| write_err(e.into()))?;
    write!(out, ",\n\"events\":[").map_err(write_err)?;
    let mut first = true;
    let n = each_event(store, task, |ev| {
        out.write_all(if first { b"\n" } else { b",\n" })
            .map_err(write_err)?;
        first = false;
        serde_json::to_writer(&mut *out, ev).map_err(|e| write_err(e.into()))
    })?;
    writeln!(out, "\n]}}").map_err(write_err)?;
    Ok(n)
}

/// `v` as one line of JSON.
fn json_line<T: Serialize>(out: &mut dyn Write, v: &T) -> Result<(), ExportError> {
    serde_json::to_writer(&mut *out, v).map_err(|e| write_err(e.into()))?;
    out.write_all(b"\n").map_err(write_err)
}

/// The whole journal as JSON lines, oldest task first.
pub fn write_journal_jsonl(
    store: &Store,
    out: &mut dyn Write,
) -> Result<JournalExport, ExportError> {
    let header = Header {
        bosun_journal: JOURNAL_FORMAT,
        exported_at: bosun_store::now_rfc3339(),
    };
    json_line(out, &header)?;
    let mut tasks = store.all_tasks().map_err(crate::CoreError::from)?;
    tasks.reverse();
    let marks = store.all_task_marks().map_err(crate::CoreError::from)?;
    let mut done = JournalExport {
        tasks: 0,
        events: 0,
    };
    for row in tasks {
        let limits = store.task_limits(&row.id).map_err(crate::CoreError::from)?;
        let task = TaskLine {
            marks: marks.get(&row.id).cloned().unwrap_or_default(),
            limits,
            task: row,
        };
        json_line(out, &task)?;
        done.events += each_event(store, &task.task.id, |ev| json_line(out, ev))?;
        done.tasks += 1;
    }
    out.flush().map_err(write_err)?;
    Ok(done)
}

/// One line of an export, parsed.
enum Line {
    Task(Box<TaskLine>),
    Event(Box<Event>),
}

fn parse_line(text: &str) -> Result<Line, String> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("not JSON ({e})"))?;
    let Some(obj) = value.as_object() else {
        return Err("not a JSON object".into());
    };
    if obj.contains_key("task") {
        serde_json::from_value(value)
            .map(|t| Line::Task(Box::new(t)))
            .map_err(|e| format!("not a task line ({e})"))
    } else if obj.contains_key("seq") {
        serde_json::from_value(value)
            .map(|e| Line::Event(Box::new(e)))
            .map_err(|e| format!("not an event Bosun knows ({e})"))
    } else {
        Err("neither a task line ({\"task\": …}) nor an event ({\"seq\": …})".into())
    }
}

/// The export's lines after its header, numbered from 2; blank lines are skipped.
struct Lines {
    reader: std::io::Lines<BufReader<std::fs::File>>,
    number: u64,
    pending: Option<(u64, Line)>,
}

impl Lines {
    fn open(path: &Path) -> Result<Lines, ExportError> {
        let file = std::fs::File::open(path).map_err(|source| ExportError::Io {
            what: format!("read {}", path.display()),
            source,
        })?;
        let mut lines = Lines {
            reader: BufReader::new(file).lines(),
            number: 0,
            pending: None,
        };
        let header = lines.next_text()?.unwrap_or_default();
        let ok = serde_json::from_str::<Header>(&header)
            .is_ok_and(|h| h.bosun_journal == JOURNAL_FORMAT);
        if !ok {
            return Err(ExportError::Malformed {
                line: 1,
                reason: format!(
                    "not a Bosun journal export: the first line must be {{\"bosun_journal\": {JOURNAL_FORMAT}, \"exported_at\": …}} (`bosun export --all --jsonl FILE` writes one)"
                ),
            });
        }
        Ok(lines)
    }

    fn next_text(&mut self) -> Result<Option<String>, ExportError> {
        loop {
            let Some(text) = self.reader.next() else {
                return Ok(None);
            };
            self.number += 1;
            let text = text.map_err(|e| ExportError::Malformed {
                line: self.number,
                reason: format!("unreadable ({e})"),
            })?;
            if !text.trim().is_empty() || self.number == 1 {
                return Ok(Some(text));
            }
        }
    }

    fn next_line(&mut self) -> Result<Option<(u64, Line)>, ExportError> {
        if let Some(p) = self.pending.take() {
            return Ok(Some(p));
        }
        let Some(text) = self.next_text()? else {
            return Ok(None);
        };
        let line = parse_line(&text).map_err(|reason| ExportError::Malformed {
            line: self.number,
            reason,
        })?;
        Ok(Some((self.number, line)))
    }

    /// The next event of the current task, or none at the next task line (kept for later).
    fn next_event(&mut self) -> Result<Option<(u64, Event)>, ExportError> {
        match self.next_line()? {
            Some((n, Line::Event(e))) => Ok(Some((n, *e))),
            Some(other) => {
                self.pending = Some(other);
                Ok(None)
            }
            None => Ok(None),
        }
    }
}

/// Checks every line of the export at `path` without writing anything: the header, each task
/// line, and that each task's events are its own, numbered 1, 2, 3….
fn validate(path: &Path) -> Result<(), ExportError> {
    let mut lines = Lines::open(path)?;
    let mut current: Option<(TaskId, u64)> = None;
    let mut seen = std::collections::HashSet::new();
    while let Some((n, line)) = lines.next_line()? {
        let bad = |reason: String| ExportError::Malformed { line: n, reason };
        match line {
            Line::Task(t) => {
                if !seen.insert(t.task.id.clone()) {
                    return Err(bad(format!("task {} appears twice", t.task.id)));
                }
                current = Some((t.task.id.clone(), 0));
            }
            Line::Event(e) => {
                let Some((task, last)) = current.as_mut() else {
                    return Err(bad("an event before any task line".into()));
                };
                if e.task_id != *task {
                    return Err(bad(format!(
                        "event of task {} under the task line of {task}",
                        e.task_id
                    )));
                }
                if e.seq != *last + 1 {
                    return Err(bad(format!(
                        "event {} of task {task} should be event {}",
                        e.seq,
                        *last + 1
                    )));
                }
                *last = e.seq;
            }
        }
    }
    Ok(())
}

/// Reads a `bosun export --all --jsonl` file into the journal. Every line is checked first: a
/// malformed one is [`ExportError::Malformed`] naming it, and nothing is imported. Then each task
/// is imported in its own transaction: a new id is created with its events (their seqs kept), an
/// id the journal has with the same content is left alone, and one with different content is
/// skipped (listed in `conflicts`).
pub fn import_journal(store: &Store, path: &Path) -> Result<ImportReport, ExportError> {
    validate(path)?;
    let mut lines = Lines::open(path)?;
    let mut report = ImportReport::default();
    while let Some((n, line)) = lines.next_line()? {
        let Line::Task(t) = line else {
            // validate() saw every event under a task line; the file changed since.
            return Err(ExportError::Malformed {
                line: n,
                reason: "an event outside its task (the file changed while it was imported)".into(),
            });
        };
        let task = ImportTask {
            row: &t.task,
            limits: t.limits,
            marks: &t.marks,
        };
        let mut written = 0;
        let events = std::iter::from_fn(|| lines.next_event().transpose())
            .map(|r| r.map(|(_, e)| e))
            .inspect(|r| written += u64::from(r.is_ok()));
        let outcome = store
            .import_task(&task, events)
            .map_err(crate::CoreError::from)?;
        match outcome? {
            Imported::Created => {
                report.events += written;
                report.created.push(t.task.id.clone());
            }
            Imported::Identical => report.identical.push(t.task.id.clone()),
            Imported::Conflict => report.conflicts.push(t.task.id.clone()),
        }
        // Skip what the comparison left unread.
        while lines.next_event()?.is_some() {}
    }
    Ok(report)
}
