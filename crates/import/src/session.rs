//! The neutral form both readers produce: what was said, which tools ran with what result, and
//! what each model response used, each with its time.

use bosun_protocol::TokenUsage;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One thing that happened in a session.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    User {
        ts: String,
        text: String,
    },
    Assistant {
        ts: String,
        text: String,
    },
    ToolCall {
        ts: String,
        call_id: String,
        tool: String,
        args: serde_json::Value,
    },
    ToolResult {
        ts: String,
        call_id: String,
        output: String,
        error: bool,
        /// How long the call took, when the session says (else from its begin).
        duration_ms: Option<u64>,
    },
    /// One model response's tokens, in Bosun's disjoint classes.
    Usage {
        ts: String,
        model: String,
        tokens: TokenUsage,
        /// Identifies the response across files (Claude Code copies a resumed session's lines
        /// into the new file), when the session names it.
        key: Option<String>,
        /// A correction: the response's usage as an earlier scan journaled it (Claude Code
        /// repeats a streamed message's usage on each of its lines, the output tokens growing;
        /// a scan may have read only the first lines). The event then carries the difference.
        replaces: Option<TokenUsage>,
    },
}

/// What a line was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Line {
    /// Read (it may have added nothing: a summary, a snapshot of files).
    Read,
    /// A line of a type this reader does not know: skipped.
    Unknown,
    /// Not JSON, or not the shape its type has: skipped.
    Malformed,
}

/// A reader's state between lines, kept in the journal between scans (as JSON), so a re-scan
/// goes on where the last one stopped.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReaderState {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The tool's version, as the session records it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The time of the last line that had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_ts: Option<String>,
    /// Tool calls begun and not yet ended: call id → begin time.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub open_calls: BTreeMap<String, String>,
    /// Claude Code: the key of the last response whose usage was read (its later lines repeat it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_response: Option<String>,
    /// Claude Code: that response's usage as read so far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_usage: Option<TokenUsage>,
    /// The file's task was created (so one missing now was deleted by the user: it stays so).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub task_created: bool,
    /// The file is a copy of another file's session, left alone (never taken for that file
    /// moved).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub copy: bool,
    /// Codex: the session's cumulative usage at the last `token_count`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub totals: Option<[u64; 4]>,
}

impl ReaderState {
    /// `ts` in the journal's format, else the last time seen, else the epoch; remembered.
    pub fn time(&mut self, ts: Option<&str>) -> String {
        let parsed = ts.and_then(|t| {
            time::OffsetDateTime::parse(t, &time::format_description::well_known::Rfc3339).ok()
        });
        if let Some(t) = parsed {
            let t = bosun_store::rfc3339(t);
            self.last_ts = Some(t.clone());
            return t;
        }
        self.last_ts
            .clone()
            .unwrap_or_else(|| "1970-01-01T00:00:00.000Z".to_string())
    }

    /// How long since the call began, when it did in this session.
    pub fn end_call(&mut self, call_id: &str, end: &str) -> Option<u64> {
        let begin = self.open_calls.remove(call_id)?;
        let parse = |t: &str| {
            time::OffsetDateTime::parse(t, &time::format_description::well_known::Rfc3339).ok()
        };
        let d = parse(end)? - parse(&begin)?;
        u64::try_from(d.whole_milliseconds()).ok()
    }
}

/// A tool result's content as text: a string, or the text blocks of an array, joined.
pub fn text_of(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| match b {
                serde_json::Value::String(s) => Some(s.clone()),
                b => b.get("text").and_then(|t| t.as_str()).map(str::to_string),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        serde_json::Value::Null => String::new(),
        other => other.to_string(),
    }
}
