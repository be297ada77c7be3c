//! A check's output, digested for the model: the failing tests, the compiler and linter errors
//! at file:line, a one-line summary and the tail of the output.
//!
//! Every parser reads the whole (ANSI-stripped) output; test runners' reports come first, then
//! compiler and linter errors, and Python tracebacks and generic `path:line: error:` lines only
//! when no test report was found (a test report's own tracebacks are part of it).

mod errors;
mod tests_report;

use crate::Runner;
use bosun_protocol::CheckFailure;
use std::path::Path;

/// At most this many failures are kept in a digest.
pub const MAX_FAILURES: usize = 50;
/// A failure's message is cut to this many characters.
pub const MAX_MESSAGE_CHARS: usize = 300;
const TAIL_LINES: usize = 40;
const TAIL_BYTES: usize = 4096;
/// Between a failing test's name and what went wrong, in [`CheckFailure::message`].
pub(crate) const TEST_SEPARATOR: &str = " — ";

/// What a check's output says went wrong.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Digest {
    /// Failing tests (`message` is `name — detail`) and errors at file:line, in output order,
    /// at most [`MAX_FAILURES`].
    pub failures: Vec<CheckFailure>,
    /// One line: "2 tests failed: test_add (…), test_sub (…)", "3 errors: src/lib.rs:4 …",
    /// "exit code 1", "passed".
    pub summary: String,
    /// The last lines of the output (at most 40 lines and 4 KB).
    pub tail: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Test,
    Error,
}

/// A failure as a parser found it.
#[derive(Debug, Clone)]
pub(crate) struct Found {
    pub kind: Kind,
    pub path: Option<String>,
    pub line: Option<u32>,
    /// A test's name, or an error's text.
    pub name: String,
    /// For a test: what went wrong (the assertion, the exception).
    pub detail: Option<String>,
}

impl Found {
    pub fn test(name: impl Into<String>) -> Found {
        Found {
            kind: Kind::Test,
            path: None,
            line: None,
            name: name.into(),
            detail: None,
        }
    }

    pub fn error(path: &str, line: Option<u32>, message: impl Into<String>) -> Found {
        Found {
            kind: Kind::Error,
            path: Some(path.to_string()),
            line,
            name: message.into(),
            detail: None,
        }
    }

    fn into_failure(self) -> CheckFailure {
        let clean = |s: &str| s.replace(TEST_SEPARATOR, " - ");
        let message = match (self.kind, &self.detail) {
            (Kind::Test, Some(detail)) if !detail.is_empty() => {
                format!("{}{TEST_SEPARATOR}{}", clean(&self.name), clean(detail))
            }
            (Kind::Test, _) => clean(&self.name),
            (Kind::Error, _) => clean(&self.name),
        };
        CheckFailure {
            path: self.path,
            line: self.line,
            message: cut_chars(&message, MAX_MESSAGE_CHARS),
            before_task: false,
        }
    }
}

/// Digests a check's output. `runner` (when the command is a known test runner) puts that
/// runner's report first; `root` turns absolute paths under it into paths relative to it, in
/// the failures and in the tail alike.
pub fn digest(
    output: &str,
    exit_code: Option<i32>,
    runner: Option<Runner>,
    root: Option<&Path>,
) -> Digest {
    let text = relativize(&strip_ansi(output), root);
    let mut found = tests_report::parse(&text, runner);
    let tests_found = !found.is_empty();
    found.extend(errors::parse_compiler(&text));
    if !tests_found {
        found.extend(errors::parse_fallback(&text));
    }
    let mut seen = std::collections::HashSet::new();
    let mut tests = Vec::new();
    let mut errors = Vec::new();
    for f in found {
        let kind = f.kind;
        let failure = f.into_failure();
        if !seen.insert((failure.path.clone(), failure.line, failure.message.clone())) {
            continue;
        }
        match kind {
            Kind::Test => tests.push(failure),
            Kind::Error => errors.push(failure),
        }
    }
    let summary = summary(&tests, &errors, exit_code);
    let mut failures = tests;
    failures.extend(errors);
    failures.truncate(MAX_FAILURES);
    Digest {
        failures,
        summary,
        tail: tail(&text),
    }
}

/// The identity of a failure, compared with the base commit's to tell "failing before this
/// task". A test is its name (`test: tests.test_calc.CalcTest.test_add`): the assertion's
/// values and the line may differ, it is the same test failing. An error is its file and its
/// text with every standalone number replaced by `#` (`src/lib.rs: error[E0308]: mismatched
/// types (expected `String`, found `i32`)`), without its line: lines shift when the task edits
/// above a failure that was already there, and that must not make it look new. Two identical
/// errors in one file have one key; [`crate::mark_before_task`] counts them.
pub fn failure_key(failure: &CheckFailure) -> String {
    if let Some((name, _)) = failure.message.split_once(TEST_SEPARATOR) {
        return format!("test: {name}");
    }
    match &failure.path {
        Some(path) => format!("{path}: {}", without_numbers(&failure.message)),
        None => format!("test: {}", failure.message),
    }
}

fn without_numbers(text: &str) -> String {
    static NUMBER: std::sync::LazyLock<regex::Regex> =
        std::sync::LazyLock::new(|| crate::re(r"\b\d+\b"));
    NUMBER.replace_all(text, "#").into_owned()
}

fn summary(tests: &[CheckFailure], errors: &[CheckFailure], exit_code: Option<i32>) -> String {
    let mut parts = Vec::new();
    if !tests.is_empty() {
        let names: Vec<String> = tests
            .iter()
            .map(|t| match t.message.split_once(TEST_SEPARATOR) {
                Some((name, _)) => name.to_string(),
                None => t.message.clone(),
            })
            .collect();
        parts.push(format!(
            "{} {} failed: {}",
            tests.len(),
            plural(tests.len(), "test", "tests"),
            list(&names, 5)
        ));
    }
    if !errors.is_empty() {
        let items: Vec<String> = errors
            .iter()
            .map(|e| {
                let at = match (&e.path, e.line) {
                    (Some(p), Some(l)) => format!("{p}:{l} "),
                    (Some(p), None) => format!("{p} "),
                    _ => String::new(),
                };
                format!("{at}{}", cut_chars(&e.message, 80))
            })
            .collect();
        parts.push(format!(
            "{} {}: {}",
            errors.len(),
            plural(errors.len(), "error", "errors"),
            list(&items, 3)
        ));
    }
    if parts.is_empty() {
        return match exit_code {
            Some(0) => "passed".to_string(),
            Some(code) => format!("exit code {code}"),
            None => "ended without an exit code (killed)".to_string(),
        };
    }
    parts.join("; ")
}

fn list(items: &[String], shown: usize) -> String {
    let mut text = items[..items.len().min(shown)].join(", ");
    if items.len() > shown {
        text.push_str(&format!(", … and {} more", items.len() - shown));
    }
    text
}

fn plural<'a>(n: usize, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 { one } else { many }
}

pub(crate) fn cut_chars(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// The last [`TAIL_LINES`] lines, at most [`TAIL_BYTES`] bytes (cut at a character boundary).
fn tail(text: &str) -> String {
    let trimmed = text.trim_end();
    let start = trimmed
        .rmatch_indices('\n')
        .nth(TAIL_LINES - 1)
        .map_or(0, |(i, _)| i + 1);
    let mut tail = &trimmed[start..];
    if tail.len() > TAIL_BYTES {
        let mut cut = tail.len() - TAIL_BYTES;
        while !tail.is_char_boundary(cut) {
            cut += 1;
        }
        tail = &tail[cut..];
    }
    tail.to_string()
}

/// Removes ANSI escape sequences (colours, cursor moves).
pub(crate) fn strip_ansi(text: &str) -> String {
    static ANSI: std::sync::LazyLock<regex::Regex> =
        std::sync::LazyLock::new(|| crate::re(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r"));
    if text.contains('\x1b') || text.contains('\r') {
        ANSI.replace_all(text, "").into_owned()
    } else {
        text.to_string()
    }
}

/// `root/…` (and its canonical form) written as `…`.
fn relativize(text: &str, root: Option<&Path>) -> String {
    let Some(root) = root else {
        return text.to_string();
    };
    let mut roots = vec![root.to_path_buf()];
    if let Ok(canonical) = root.canonicalize()
        && canonical != root
    {
        roots.push(canonical);
    }
    let mut text = text.to_string();
    for r in roots {
        let prefix = format!("{}/", r.display().to_string().trim_end_matches('/'));
        if prefix.len() > 1 {
            text = text.replace(&prefix, "");
        }
    }
    text
}

#[cfg(test)]
mod tests;
