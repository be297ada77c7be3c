//! Secret redaction: everything is passed through a [`Redactor`] before a request goes to a
//! model and before anything is written to the journal.
//!
//! Secrets become `[REDACTED:<kind>]`. Three sources find them: the values of secret-looking
//! environment variables (`env:<NAME>`), known formats (`aws_access_key`, `github_token`,
//! `openai_key`, `anthropic_key`, `slack_token`, `slack_webhook`, `stripe_key`,
//! `google_api_key`, `npm_token`, `gitlab_token`, `huggingface_token`, `pypi_token`,
//! `private_key`, `jwt`, `connection_string_password`, `authorization_header`), and high-entropy values assigned to secret-looking names
//! (`high_entropy_secret`). Hashes, UUIDs and base64 not assigned to a secret name stay.
//! Redacting redacted text changes nothing. Text that arrives in pieces goes through a
//! [`StreamRedactor`], which lets out only whole lines and whole private key blocks.

mod assignment;
mod env;
mod formats;
mod stream;

pub use stream::{KEY_HOLD_BYTES, LINE_HOLD_BYTES, StreamRedactor};

use std::borrow::Cow;

use regex::{Regex, RegexSet};

use formats::{Format, Span};

/// The text with its secrets replaced, and what was replaced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redacted<'a> {
    /// Borrowed when nothing was redacted.
    pub text: Cow<'a, str>,
    /// How many secrets were replaced.
    pub count: usize,
    /// The distinct kinds replaced, in order of first appearance (`openai_key`, `env:API_KEY`).
    pub kinds: Vec<String>,
}

/// Finds and replaces secrets. Built once per task (compiles its patterns), cheap to call on
/// every event; `Send + Sync`.
pub struct Redactor {
    formats: Vec<Format>,
    assignments: Option<assignment::Assignments>,
    /// Pre-filter: which of `formats` (then the assignment pattern) occur at all.
    prefilter: Option<RegexSet>,
    /// `(value, kind)` for each redacted environment value, longest first.
    env_values: Vec<(String, String)>,
    already_redacted: Option<Regex>,
}

impl Redactor {
    /// A redactor for a task run with `env`: the values of its secret-looking variables (names
    /// with KEY, TOKEN, SECRET, PASSWORD, CREDENTIAL …, values of 8 characters or more) are
    /// redacted wherever they appear, on top of the known formats.
    pub fn new(env: &[(String, String)]) -> Redactor {
        // The patterns are constants and a unit test proves they all compile, so the `ok()`s
        // below never drop a source in practice; they keep `new` infallible and panic-free.
        let formats = Format::all().unwrap_or_default();
        let assignments = assignment::Assignments::new().ok();
        let mut sources: Vec<String> = formats
            .iter()
            .map(|f| f.regex.as_str().to_string())
            .collect();
        if let Some(a) = &assignments {
            sources.push(a.regex().as_str().to_string());
        }
        let prefilter = RegexSet::new(&sources).ok();
        Redactor {
            formats,
            assignments,
            prefilter,
            env_values: env::secret_values(env),
            already_redacted: Regex::new(r"\[REDACTED:[^\]\s]+\]").ok(),
        }
    }

    /// The secrets of `text` in order, each with the kind its placeholder names: what
    /// [`Redactor::redact`] replaces.
    pub fn secrets<'a>(&self, text: &'a str) -> Vec<(String, &'a str)> {
        self.spans(text)
            .iter()
            .map(|s| (s.kind.to_string(), &text[s.start..s.end]))
            .collect()
    }

    /// Replaces every secret in `text` with `[REDACTED:<kind>]`.
    pub fn redact<'a>(&self, text: &'a str) -> Redacted<'a> {
        let spans = self.spans(text);
        if spans.is_empty() {
            return Redacted {
                text: Cow::Borrowed(text),
                count: 0,
                kinds: Vec::new(),
            };
        }
        let mut out = String::with_capacity(text.len());
        let mut kinds: Vec<String> = Vec::new();
        let mut at = 0;
        for span in &spans {
            out.push_str(&text[at..span.start]);
            out.push_str("[REDACTED:");
            out.push_str(span.kind);
            out.push(']');
            at = span.end;
            if !kinds.iter().any(|k| k == span.kind) {
                kinds.push(span.kind.to_string());
            }
        }
        out.push_str(&text[at..]);
        Redacted {
            text: Cow::Owned(out),
            count: spans.len(),
            kinds,
        }
    }

    /// Where a private key's BEGIN marker starts in `line`, if it has one.
    pub(crate) fn key_begin(&self, line: &str) -> Option<usize> {
        self.formats
            .iter()
            .find(|f| f.kind == "private_key")
            .and_then(|f| f.regex.find(line))
            .map(|m| m.start())
    }

    /// Redacts every string inside `value` in place, and returns how many secrets it replaced.
    /// A string under a secret-looking key (`"client_secret": "…"`) is redacted whole when it
    /// looks random, as it would be in the text form.
    pub fn redact_json(&self, value: &mut serde_json::Value) -> usize {
        match value {
            serde_json::Value::String(s) => self.redact_string(s),
            serde_json::Value::Array(items) => items.iter_mut().map(|v| self.redact_json(v)).sum(),
            serde_json::Value::Object(map) => map
                .iter_mut()
                .map(|(key, v)| match v {
                    serde_json::Value::String(s)
                        if assignment::is_secret_name(key)
                            && assignment::is_secret_value(s)
                            && self.redact(s).count == 0 =>
                    {
                        *s = format!("[REDACTED:{}]", assignment::KIND);
                        1
                    }
                    _ => self.redact_json(v),
                })
                .sum(),
            _ => 0,
        }
    }

    fn redact_string(&self, s: &mut String) -> usize {
        let redacted = self.redact(s);
        let count = redacted.count;
        if let Cow::Owned(text) = redacted.text {
            *s = text;
        }
        count
    }

    /// The spans to replace, sorted and merged so none overlap, none touching existing
    /// `[REDACTED:…]` markers. On the same span an environment value wins, then formats in
    /// their listed order; assignments only fill the gaps.
    fn spans(&self, text: &str) -> Vec<Span<'_>> {
        let mut spans = Vec::new();
        // A plain substring search per value: a handful of values, each a fast memchr-driven
        // scan, and nothing that can fail to compile whatever the values hold.
        for (value, kind) in &self.env_values {
            for (start, _) in text.match_indices(value.as_str()) {
                spans.push(Span {
                    start,
                    end: start + value.len(),
                    kind,
                });
            }
        }
        let hits: Vec<usize> = match &self.prefilter {
            Some(set) => set.matches(text).into_iter().collect(),
            None => (0..=self.formats.len()).collect(),
        };
        let mut assigned = Vec::new();
        for i in hits {
            match self.formats.get(i) {
                Some(format) => format.find(text, &mut spans),
                None => {
                    if let Some(a) = &self.assignments {
                        a.find(text, &mut assigned);
                    }
                }
            }
        }
        // A value assigned to a secret name only counts where nothing more specific matched
        // (`OPENAI_API_KEY=sk-…` is an `openai_key`, `token:github_pat_…@host` keeps its host).
        assigned.retain(|a| !spans.iter().any(|s| a.start < s.end && s.start < a.end));
        spans.append(&mut assigned);
        if spans.is_empty() {
            return spans;
        }
        let protected: Vec<(usize, usize)> = self
            .already_redacted
            .iter()
            .flat_map(|r| r.find_iter(text).map(|m| (m.start(), m.end())))
            .collect();
        spans.retain(|s| {
            s.start < s.end && !protected.iter().any(|&(ps, pe)| s.start < pe && ps < s.end)
        });
        // Stable: equal spans keep their source order.
        spans.sort_by(|a, b| a.start.cmp(&b.start).then(b.end.cmp(&a.end)));
        merge(spans)
    }
}

/// Overlapping spans become one, named after the one that starts first (the longest on a tie),
/// so no part of a secret is left out.
fn merge(spans: Vec<Span<'_>>) -> Vec<Span<'_>> {
    let mut merged: Vec<Span<'_>> = Vec::with_capacity(spans.len());
    for span in spans {
        match merged.last_mut() {
            Some(last) if span.start < last.end => last.end = last.end.max(span.end),
            _ => merged.push(span),
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn every_pattern_compiles_into_the_redactor() {
        let redactor = Redactor::new(&[]);
        assert_eq!(redactor.formats.len(), formats::sources().len());
        assert!(redactor.assignments.is_some());
        assert_eq!(
            redactor.prefilter.as_ref().map(RegexSet::len),
            Some(formats::sources().len() + 1)
        );
        assert!(redactor.already_redacted.is_some());
    }

    #[test]
    fn overlapping_spans_merge_under_the_first_kind() {
        let span = |start, end, kind| Span { start, end, kind };
        let merged = merge(vec![
            span(0, 10, "a"),
            span(5, 15, "b"),
            span(15, 20, "c"),
            span(30, 40, "d"),
            span(31, 35, "e"),
        ]);
        assert_eq!(
            merged,
            vec![span(0, 15, "a"), span(15, 20, "c"), span(30, 40, "d")]
        );
    }

    #[test]
    fn the_same_environment_value_twice_keeps_the_first_name() {
        let env = [
            ("API_TOKEN".to_string(), "Zq9xLm2Pw7".to_string()),
            ("OTHER_SECRET".to_string(), "Zq9xLm2Pw7".to_string()),
        ];
        let out = Redactor::new(&env).redact("Zq9xLm2Pw7Zq9xLm2Pw7");
        assert_eq!(out.text, "[REDACTED:env:API_TOKEN][REDACTED:env:API_TOKEN]");
        assert_eq!(out.count, 2);
    }
}
