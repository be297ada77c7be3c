//! The history: every task, filtered, sorted and paged, and the full-text index of their events
//! (the FTS5 table `search`, one row per event with text; rowid = the task's number << 24 | seq).
//!
//! Finding a word costs one pass over the index for the set of matching tasks (for the total and
//! the facets; a match names its task by its rowid, without a lookup), then one lookup per task
//! of the page for its first matching event and its snippet.

#[doc(hidden)]
pub mod bench;
mod query;

pub use query::{HistoryQuery, Sort, local_now};

use crate::{Store, StoreError, TaskRow, tasks};
use bosun_protocol::{Event, EventMsg, ReviewEvent};
use rusqlite::types::Value;
use rusqlite::{Connection, Transaction, params, params_from_iter};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// The most characters of one event that are indexed (a command's output beyond it is not
/// searchable).
pub const TEXT_CAP: usize = 16_384;

/// Marks around a matched word in FTS5's snippets, split into [`SnippetPart`]s before leaving.
const HIT_START: char = '\u{1}';
const HIT_END: char = '\u{2}';

/// A page of the history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct HistoryPage {
    /// Tasks matching the whole query (every page).
    #[ts(type = "number")]
    pub total: u64,
    pub hits: Vec<HistoryHit>,
    pub facets: Facets,
}

/// A task of the page and, when words were searched, its best-matching event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct HistoryHit {
    pub task: TaskRow,
    /// The first event holding the words: where to open the task.
    #[ts(type = "number | null")]
    pub seq: Option<u64>,
    /// That event's `type` tag.
    pub kind: Option<String>,
    /// Its text around the words, the words marked (empty without words).
    pub snippet: Vec<SnippetPart>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct SnippetPart {
    pub text: String,
    /// A searched word.
    pub hit: bool,
}

/// Counts over every task matching the query, most frequent first.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct Facets {
    pub repos: Vec<FacetCount>,
    pub statuses: Vec<FacetCount>,
    pub models: Vec<FacetCount>,
    /// `bosun`, `claude-code`, `codex`: where the tasks came from.
    pub sources: Vec<FacetCount>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct FacetCount {
    pub value: String,
    #[ts(type = "number")]
    pub count: u64,
}

/// The searchable text of an event, as the migration's backfill computes it: its parts joined by
/// newlines, cut at [`TEXT_CAP`] characters. None for events without text.
pub(crate) fn event_text(msg: &EventMsg) -> Option<String> {
    let parts: Vec<Option<String>> = match msg {
        EventMsg::UserMessage(m) => vec![Some(m.text.clone())],
        EventMsg::AssistantMessage(m) => vec![Some(m.text.clone())],
        EventMsg::ToolCallBegin(c) => {
            let mut leaves = Vec::new();
            string_leaves(&c.args, &mut leaves);
            vec![Some(c.tool.clone()), joined(leaves)]
        }
        EventMsg::ToolCallEnd(e) => vec![Some(e.output.clone()), e.error.clone()],
        EventMsg::CheckpointCreated(c) => {
            vec![joined(c.files.iter().map(String::as_str).collect())]
        }
        EventMsg::Error(e) => vec![Some(e.message.clone())],
        EventMsg::Review(ReviewEvent::Comment { comment }) => vec![Some(comment.body.clone())],
        EventMsg::CheckFinished(c) => vec![
            Some(c.name.clone()),
            Some(c.summary.clone()),
            joined(c.failures.iter().map(|f| f.message.as_str()).collect()),
        ],
        EventMsg::TaskFinished(f) => vec![Some(f.summary.clone())],
        _ => return None,
    };
    let text: Vec<String> = parts.into_iter().flatten().collect();
    let text: String = text.join("\n").chars().take(TEXT_CAP).collect();
    (!text.is_empty()).then_some(text)
}

/// SQLite's `group_concat` over rows: None for none.
fn joined(parts: Vec<&str>) -> Option<String> {
    (!parts.is_empty()).then(|| parts.join("\n"))
}

/// The string values of a JSON document in document order (what `json_tree` lists as `text`).
fn string_leaves<'a>(v: &'a serde_json::Value, out: &mut Vec<&'a str>) {
    match v {
        serde_json::Value::String(s) => out.push(s),
        serde_json::Value::Array(items) => items.iter().for_each(|i| string_leaves(i, out)),
        serde_json::Value::Object(map) => map.values().for_each(|i| string_leaves(i, out)),
        _ => {}
    }
}

/// Bits of an index rowid that hold the event's seq; the task's number is above them. Events
/// past seq 2^24 − 1 are not indexed.
const SEQ_BITS: u32 = 24;
const SEQ_MASK: u64 = (1 << SEQ_BITS) - 1;

/// The task's number (given one if a writer that did not know about numbers left it out).
fn task_number(tx: &Transaction<'_>, task: &str) -> Result<i64, StoreError> {
    let number: Option<i64> = tx
        .prepare_cached("SELECT number FROM tasks WHERE id = ?1")?
        .query_row([task], |r| r.get(0))?;
    if let Some(n) = number {
        return Ok(n);
    }
    Ok(tx
        .prepare_cached(
            "UPDATE tasks SET number = (SELECT coalesce(max(number), 0) + 1 FROM tasks)
             WHERE id = ?1 RETURNING number",
        )?
        .query_row([task], |r| r.get(0))?)
}

/// Indexes the event just inserted (rowid `number << 24 | seq`), and keeps the task's
/// `files_changed` and `review_state`; inside `append_in`'s transaction.
pub(crate) fn index_in(tx: &Transaction<'_>, ev: &Event) -> Result<(), StoreError> {
    if let Some(text) = event_text(&ev.msg).filter(|_| ev.seq <= SEQ_MASK) {
        let number = task_number(tx, ev.task_id.as_str())?;
        tx.prepare_cached(
            "INSERT INTO search (rowid, text, task_id, seq, kind) VALUES (?1, ?2, ?3, ?4, ?5)",
        )?
        .execute(params![
            (number << SEQ_BITS) | ev.seq as i64,
            text,
            ev.task_id.as_str(),
            ev.seq,
            ev.msg.kind()
        ])?;
    }
    match &ev.msg {
        EventMsg::CheckpointCreated(_) => {
            tx.prepare_cached(
                "UPDATE tasks SET files_changed = (
                     SELECT count(DISTINCT f.value) FROM checkpoints c, json_each(c.files) f
                     WHERE c.task_id = ?1)
                 WHERE id = ?1",
            )?
            .execute([ev.task_id.as_str()])?;
        }
        EventMsg::Review(r) => {
            // A merge is final; removing the worktree of a task never merged discards it; any
            // other review action means the review is under way.
            let state = match r {
                ReviewEvent::Merge { .. } => "merged",
                ReviewEvent::RemoveWorktree { .. } => "discarded",
                _ => "in_review",
            };
            tx.prepare_cached(
                "UPDATE tasks SET review_state = ?2 WHERE id = ?1 AND review_state != 'merged'",
            )?
            .execute(params![ev.task_id.as_str(), state])?;
        }
        _ => {}
    }
    Ok(())
}

/// The review states a task can be in.
pub const REVIEW_STATES: [&str; 5] = ["unreviewed", "in_review", "reviewed", "merged", "discarded"];

impl Store {
    /// Sets a task's review state, for a writer that knows more than the journal's review events
    /// (`reviewed`: every hunk decided, which needs the diff).
    pub fn set_review_state(
        &self,
        task: &bosun_protocol::TaskId,
        state: &str,
    ) -> Result<(), StoreError> {
        if !REVIEW_STATES.contains(&state) {
            return Err(StoreError::BadQuery(format!(
                "unknown review state `{state}`; the states are {}",
                REVIEW_STATES.join(", ")
            )));
        }
        let n = self
            .conn()
            .prepare_cached("UPDATE tasks SET review_state = ?2 WHERE id = ?1")?
            .execute(params![task.as_str(), state])?;
        if n == 0 {
            return Err(StoreError::NotFound {
                id: task.to_string(),
            });
        }
        Ok(())
    }

    /// One page of the history for `q`: the tasks passing its filters whose events hold every
    /// word, sorted and paged, with the total, the facets and a snippet per hit.
    pub fn history(&self, q: &HistoryQuery) -> Result<HistoryPage, StoreError> {
        let conn = self.conn();
        let fts = q.fts_query();
        // A deleted task keeps its row for the cost totals; it is not in the history.
        let mut clauses: Vec<String> = vec![
            "t.id NOT IN (SELECT task_id FROM task_marks WHERE transcript_removed_by = 'delete')"
                .into(),
        ];
        let mut args: Vec<Value> = Vec::new();
        let arg = |v: Value, args: &mut Vec<Value>| {
            args.push(v);
            format!("?{}", args.len())
        };
        if let Some(fts) = &fts {
            let p = arg(Value::Text(fts.clone()), &mut args);
            clauses.push(format!(
                "t.number IN (SELECT rowid >> {SEQ_BITS} FROM search WHERE search MATCH {p})"
            ));
        }
        if let Some(repo) = &q.repo {
            let p = arg(Value::Text(repo.to_lowercase()), &mut args);
            clauses.push(format!("instr(lower(t.repo), {p}) > 0"));
        }
        if let Some(model) = &q.model {
            let p = arg(Value::Text(model.to_lowercase()), &mut args);
            clauses.push(format!("instr(lower(t.model), {p}) > 0"));
        }
        if !q.status.is_empty() {
            let list: Vec<&str> = q.status.iter().map(|s| s.as_str()).collect();
            let p = arg(Value::Text(serde_json::to_string(&list)?), &mut args);
            clauses.push(format!("t.status IN (SELECT value FROM json_each({p}))"));
        }
        if let Some(since) = &q.since {
            let p = arg(Value::Text(since.clone()), &mut args);
            clauses.push(format!("t.created_at >= {p}"));
        }
        if let Some(until) = &q.until {
            let p = arg(Value::Text(until.clone()), &mut args);
            clauses.push(format!("t.created_at < {p}"));
        }
        if let Some(c) = q.cost_gt {
            let p = arg(Value::Real(c), &mut args);
            clauses.push(format!("t.cost_usd > {p}"));
        }
        if let Some(c) = q.cost_lt {
            let p = arg(Value::Real(c), &mut args);
            clauses.push(format!("t.cost_usd < {p}"));
        }
        if let Some(file) = &q.file {
            let p = arg(Value::Text(file.clone()), &mut args);
            clauses.push(format!(
                "EXISTS (SELECT 1 FROM checkpoints c, json_each(c.files) f
                         WHERE c.task_id = t.id AND instr(f.value, {p}) > 0)"
            ));
        }
        if q.has_unreviewed {
            clauses.push("t.review_state IN ('unreviewed', 'in_review')".into());
        }
        if !q.source.is_empty() {
            let p = arg(Value::Text(serde_json::to_string(&q.source)?), &mut args);
            clauses.push(format!(
                "coalesce(t.source, 'bosun') IN (SELECT value FROM json_each({p}))"
            ));
        }
        // History counts top-level tasks: a sub-agent is shown inside its parent.
        clauses.push("t.parent_task_id IS NULL".into());
        let filter = format!("WHERE {}", clauses.join(" AND "));
        // The matching set once, in a temporary table: the count, the facets and the page all
        // read it.
        conn.execute_batch(
            "CREATE TEMP TABLE IF NOT EXISTS history_hits (id TEXT PRIMARY KEY) WITHOUT ROWID;
             DELETE FROM temp.history_hits;",
        )?;
        let total = conn.execute(
            &format!("INSERT INTO temp.history_hits SELECT t.id FROM tasks t {filter}"),
            params_from_iter(args.iter()),
        )? as u64;
        let facets = Facets {
            repos: facet(&conn, "t.repo")?,
            statuses: facet(&conn, "t.status")?,
            models: facet(&conn, "t.model")?,
            sources: facet(&conn, "coalesce(t.source, 'bosun')")?,
        };
        let order = match q.sort {
            Sort::Date => "t.created_at DESC, t.id DESC",
            Sort::Cost => "t.cost_usd DESC, t.created_at DESC, t.id DESC",
            Sort::Duration => {
                "julianday(coalesce(t.finished_at, t.updated_at)) - julianday(t.created_at) DESC, \
                 t.created_at DESC, t.id DESC"
            }
        };
        let mut stmt = conn.prepare(&format!(
            "SELECT {}, t.number AS number FROM tasks t JOIN temp.history_hits h ON h.id = t.id
             ORDER BY {order} LIMIT ?1 OFFSET ?2",
            tasks::COLUMNS_OF_T
        ))?;
        let rows: Vec<(TaskRow, Option<i64>)> = stmt
            .query_map(params![q.limit, q.offset], |r| {
                Ok((tasks::from_row(r)?, r.get("number")?))
            })?
            .collect::<Result<_, _>>()?;
        let mut hits = Vec::with_capacity(rows.len());
        for (task, number) in rows {
            let best = match (&fts, number) {
                (Some(fts), Some(number)) => first_match(&conn, fts, number)?,
                _ => None,
            };
            let (seq, kind, snippet) = match best {
                Some((seq, kind, snippet)) => (Some(seq), Some(kind), parts(&snippet)),
                None => (None, None, Vec::new()),
            };
            hits.push(HistoryHit {
                task,
                seq,
                kind,
                snippet,
            });
        }
        conn.execute_batch("DELETE FROM temp.history_hits")?;
        Ok(HistoryPage {
            total,
            hits,
            facets,
        })
    }
}

/// The counts of `value` (an expression over the task `t`) among the hits.
fn facet(conn: &Connection, value: &str) -> Result<Vec<FacetCount>, StoreError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {value} AS v, count(*) FROM tasks t JOIN temp.history_hits h ON h.id = t.id
         GROUP BY v ORDER BY count(*) DESC, v LIMIT 50"
    ))?;
    let rows = stmt.query_map([], |r| {
        Ok(FacetCount {
            value: r.get(0)?,
            count: r.get(1)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The task's first event holding the words: its seq, kind and snippet. (Ranking the task's
/// matches with bm25 would cost a pass over every match of the index per hit, for its global
/// statistics: 1.5–6 ms a task.)
fn first_match(
    conn: &Connection,
    fts: &str,
    number: i64,
) -> Result<Option<(u64, String, String)>, StoreError> {
    let lo = number << SEQ_BITS;
    let mut stmt = conn.prepare_cached(
        "SELECT seq, kind, snippet(search, 0, char(1), char(2), '…', 16) FROM search
         WHERE search MATCH ?1 AND rowid BETWEEN ?2 AND ?3 ORDER BY rowid LIMIT 1",
    )?;
    let mut rows = stmt.query(params![fts, lo, lo | SEQ_MASK as i64])?;
    match rows.next()? {
        Some(r) => Ok(Some((r.get(0)?, r.get(1)?, r.get(2)?))),
        None => Ok(None),
    }
}

/// Splits a snippet with [`HIT_START`] / [`HIT_END`] marks into parts.
fn parts(snippet: &str) -> Vec<SnippetPart> {
    let mut out: Vec<SnippetPart> = Vec::new();
    let mut hit = false;
    let mut text = String::new();
    let flush = |text: &mut String, hit: bool, out: &mut Vec<SnippetPart>| {
        if !text.is_empty() {
            out.push(SnippetPart {
                text: std::mem::take(text),
                hit,
            });
        }
    };
    for c in snippet.chars() {
        match c {
            HIT_START => {
                flush(&mut text, hit, &mut out);
                hit = true;
            }
            HIT_END => {
                flush(&mut text, hit, &mut out);
                hit = false;
            }
            c => text.push(c),
        }
    }
    flush(&mut text, hit, &mut out);
    out
}
