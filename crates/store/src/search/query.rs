//! What the history search box (and `bosun history`) understands: words, `"phrases"` and filter
//! tokens mixed in any order.
//!
//! | token | keeps tasks… |
//! |---|---|
//! | `repo:TEXT` | whose repository path contains TEXT (any case) |
//! | `status:A,B` | with one of these statuses |
//! | `model:TEXT` | whose model contains TEXT (any case) |
//! | `since:WHEN` / `until:WHEN` | started at or after / at or before WHEN (`until:` a date includes that day) |
//! | `cost>X` / `cost<X` | that cost more / less than X dollars |
//! | `file:TEXT` | with a checkpoint touching a path that contains TEXT |
//! | `has:unreviewed` | whose review is `unreviewed` or `in_review` |
//! | `source:A,B` | that came from one of these: `bosun` (Bosun's own), `claude-code`, `codex` (imported) |
//!
//! WHEN is a date `YYYY-MM-DD` (local midnight), an RFC 3339 time, or `7d` / `2w` / `3m` ago (days,
//! weeks, calendar months). A later token of the same key replaces an earlier one. An unknown
//! `key:` is an error that lists the keys; quote a word with a colon (`"std::io"`) to search it.

use crate::StoreError;
use bosun_protocol::TaskStatus;
use serde::{Deserialize, Serialize};
use time::format_description::well_known::Rfc3339;
use time::{Duration, OffsetDateTime, Time, UtcOffset};
use ts_rs::TS;

/// How the hits are ordered (each newest first on ties).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub enum Sort {
    /// Started, newest first.
    #[default]
    Date,
    /// Cost, highest first.
    Cost,
    /// Finished minus started (now for a running task), longest first.
    Duration,
}

/// A parsed search: words to find in the tasks' events and filters on the tasks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(default)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct HistoryQuery {
    /// Words and phrases (a phrase holds spaces), as typed, without quotes; every one must occur
    /// in the same event. Empty: every task passing the filters.
    pub words: Vec<String>,
    pub repo: Option<String>,
    /// Any of these (empty: any status).
    pub status: Vec<TaskStatus>,
    pub model: Option<String>,
    /// Started at or after this time (RFC 3339, UTC).
    pub since: Option<String>,
    /// Started before this time (RFC 3339, UTC; exclusive: `until:2026-11-30` is stored as the
    /// next local midnight).
    pub until: Option<String>,
    pub cost_gt: Option<f64>,
    pub cost_lt: Option<f64>,
    pub file: Option<String>,
    pub has_unreviewed: bool,
    /// Any of these sources (empty: any): `bosun` for Bosun's own tasks, `claude-code` or
    /// `codex` for imported sessions.
    pub source: Vec<String>,
    pub sort: Sort,
    pub offset: u32,
    pub limit: u32,
}

impl Default for HistoryQuery {
    fn default() -> Self {
        HistoryQuery {
            words: Vec::new(),
            repo: None,
            status: Vec::new(),
            model: None,
            since: None,
            until: None,
            cost_gt: None,
            cost_lt: None,
            file: None,
            has_unreviewed: false,
            source: Vec::new(),
            sort: Sort::Date,
            offset: 0,
            limit: 50,
        }
    }
}

const KEYS: &str =
    "repo:, status:, model:, since:, until:, cost> / cost<, file:, has:unreviewed, source:";

/// Where a task can come from, as `source:` names it.
pub const SOURCES: [&str; 3] = ["bosun", "claude-code", "codex"];

fn bad(message: String) -> StoreError {
    StoreError::BadQuery(message)
}

impl HistoryQuery {
    /// Parses what was typed. `now` is the local time (its offset is the one dates are read in).
    /// Sort, offset and limit keep their defaults (date, 0, 50).
    pub fn parse(text: &str, now: OffsetDateTime) -> Result<HistoryQuery, StoreError> {
        let mut q = HistoryQuery::default();
        for (token, quoted) in lex(text) {
            if quoted {
                push_word(&mut q.words, &token);
                continue;
            }
            if let Some(v) = token.strip_prefix("cost>") {
                q.cost_gt = Some(cost(v, &token)?);
                continue;
            }
            if let Some(v) = token.strip_prefix("cost<") {
                q.cost_lt = Some(cost(v, &token)?);
                continue;
            }
            let Some((key, value)) = token.split_once(':').filter(|(k, _)| {
                !k.is_empty() && k.chars().all(|c| c.is_ascii_alphabetic() || c == '_')
            }) else {
                push_word(&mut q.words, &token);
                continue;
            };
            let known = [
                "repo", "status", "model", "since", "until", "file", "has", "source",
            ];
            if !known.contains(&key) {
                return Err(bad(format!(
                    "unknown filter `{key}:`; the filters are {KEYS} (put \"{token}\" in quotes to search for it)"
                )));
            }
            if value.is_empty() {
                return Err(bad(format!(
                    "`{key}:` needs a value, e.g. {}",
                    example(key)
                )));
            }
            match key {
                "repo" => q.repo = Some(value.to_string()),
                "model" => q.model = Some(value.to_string()),
                "file" => q.file = Some(value.to_string()),
                "status" => q.status = statuses(value)?,
                "source" => q.source = sources(value)?,
                "since" => q.since = Some(utc(when(value, now, false)?)),
                "until" => q.until = Some(utc(when(value, now, true)?)),
                _ if value == "unreviewed" => q.has_unreviewed = true,
                _ => {
                    return Err(bad(format!(
                        "`has:{value}` is not a filter; `has:unreviewed` is"
                    )));
                }
            }
        }
        Ok(q)
    }

    /// The words as an FTS5 query that cannot be a syntax error: every word and phrase quoted
    /// (quotes inside doubled), a trailing `*` kept as a prefix search. None when no word has
    /// anything to search (only punctuation).
    pub fn fts_query(&self) -> Option<String> {
        let terms: Vec<String> = self
            .words
            .iter()
            .filter(|w| w.chars().any(char::is_alphanumeric))
            .map(|w| {
                let (body, prefix) = match w.strip_suffix('*') {
                    Some(b) if !w.contains(' ') && b.chars().any(char::is_alphanumeric) => (b, "*"),
                    _ => (w.as_str(), ""),
                };
                format!("\"{}\"{prefix}", body.replace('"', "\"\""))
            })
            .collect();
        (!terms.is_empty()).then(|| terms.join(" "))
    }
}

fn push_word(words: &mut Vec<String>, token: &str) {
    let token = token.trim();
    if !token.is_empty() {
        words.push(token.to_string());
    }
}

fn example(key: &str) -> &'static str {
    match key {
        "status" => "status:failed,checks_failed",
        "since" | "until" => "since:7d, since:2026-11-01 or since:2026-11-01T09:00:00Z",
        "has" => "has:unreviewed",
        "source" => "source:claude-code,codex",
        _ => "repo:app",
    }
}

/// Splits on whitespace; `"…"` is one token (quoted), and a quoted part inside a token
/// (`file:"my file.rs"`) is kept with its spaces, without the quotes.
fn lex(text: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
            continue;
        }
        let quoted = c == '"';
        let mut token = String::new();
        let mut in_quotes = false;
        while let Some(&c) = chars.peek() {
            if c == '"' {
                in_quotes = !in_quotes;
                chars.next();
                if quoted && !in_quotes {
                    break;
                }
                continue;
            }
            if c.is_whitespace() && !in_quotes {
                break;
            }
            token.push(c);
            chars.next();
        }
        out.push((token, quoted));
    }
    out
}

fn cost(value: &str, token: &str) -> Result<f64, StoreError> {
    let v = value.trim_start_matches('$');
    v.parse::<f64>()
        .ok()
        .filter(|c| c.is_finite())
        .ok_or_else(|| bad(format!("`{token}`: the cost is dollars, e.g. cost>0.5")))
}

fn statuses(value: &str) -> Result<Vec<TaskStatus>, StoreError> {
    value
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|s| {
            TaskStatus::parse(s).ok_or_else(|| {
                let valid: Vec<&str> = TaskStatus::ALL.iter().map(TaskStatus::as_str).collect();
                bad(format!(
                    "unknown status `{s}`; the statuses are {}",
                    valid.join(", ")
                ))
            })
        })
        .collect()
}

fn sources(value: &str) -> Result<Vec<String>, StoreError> {
    let mut out: Vec<String> = Vec::new();
    for s in value.split(',').filter(|s| !s.is_empty()) {
        let s = s.to_ascii_lowercase();
        // What people call them: "claude", "claude_code" and "claudecode" mean Claude Code.
        let canonical = match s.as_str() {
            "claude" | "claude_code" | "claudecode" => "claude-code",
            other => other,
        };
        if !SOURCES.contains(&canonical) {
            return Err(bad(format!(
                "unknown source `{s}`; the sources are {}",
                SOURCES.join(", ")
            )));
        }
        if !out.iter().any(|o| o == canonical) {
            out.push(canonical.to_string());
        }
    }
    if out.is_empty() {
        return Err(bad(format!(
            "`source:{value}` names no source; the sources are {}",
            SOURCES.join(", ")
        )));
    }
    Ok(out)
}

/// `7d`, `2w`, `3m` ago; a local date (its midnight, or the next one for an `until:`); or an
/// RFC 3339 time (for an `until:`, the millisecond after it, so the bound includes it).
fn when(value: &str, now: OffsetDateTime, until: bool) -> Result<OffsetDateTime, StoreError> {
    let fail = || {
        bad(format!(
            "`{value}` is not a time; write a date (2026-11-30), an RFC 3339 time (2026-11-30T09:00:00Z) or an age (7d, 2w, 3m)"
        ))
    };
    if let Some(unit) = value.chars().last().filter(|u| "dwm".contains(*u))
        && let Ok(n) = value[..value.len() - 1].parse::<u32>()
    {
        // An age further back than the calendar goes is not a time either.
        return match unit {
            'd' => now
                .checked_sub(Duration::days(i64::from(n)))
                .ok_or_else(fail),
            'w' => now
                .checked_sub(Duration::weeks(i64::from(n)))
                .ok_or_else(fail),
            _ => months_before(now, n).ok_or_else(fail),
        };
    }
    let date_format = time::macros::format_description!("[year]-[month]-[day]");
    if let Ok(date) = time::Date::parse(value, date_format) {
        let day = if until {
            date.next_day().ok_or_else(fail)?
        } else {
            date
        };
        return Ok(day.with_time(Time::MIDNIGHT).assume_offset(now.offset()));
    }
    let t = OffsetDateTime::parse(value, &Rfc3339).map_err(|_| fail())?;
    Ok(if until {
        t + Duration::milliseconds(1)
    } else {
        t
    })
}

fn months_before(now: OffsetDateTime, n: u32) -> Option<OffsetDateTime> {
    let index = now.year() * 12 + i32::from(u8::from(now.month())) - 1 - i32::try_from(n).ok()?;
    let (year, month) = (index.div_euclid(12), index.rem_euclid(12) + 1);
    let month = time::Month::try_from(u8::try_from(month).ok()?).ok()?;
    let day = now.day().min(month.length(year));
    let date = time::Date::from_calendar_date(year, month, day).ok()?;
    Some(now.replace_date(date))
}

/// The journal's time format: RFC 3339 in UTC with milliseconds, as `created_at` is written.
fn utc(t: OffsetDateTime) -> String {
    const FORMAT: &[time::format_description::FormatItem<'static>] = time::macros::format_description!(
        "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
    );
    t.to_offset(UtcOffset::UTC)
        .format(FORMAT)
        .unwrap_or_else(|_| "1970-01-01T00:00:00.000Z".to_string())
}

/// The local time now, or UTC when the local offset cannot be read (time refuses to read it in
/// a multi-threaded process on some platforms).
pub fn local_now() -> OffsetDateTime {
    OffsetDateTime::now_local().unwrap_or_else(|_| OffsetDateTime::now_utc())
}
