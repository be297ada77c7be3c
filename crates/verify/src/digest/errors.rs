//! Compiler and linter errors at file:line: rustc/clippy, tsc, eslint; and, when no test
//! report was found, Python tracebacks and generic `path:line[:col]: error: message` lines
//! (gcc, clang, mypy) and go's `./file.go:4:2: message`.

use super::Found;
use super::tests_report::python_location;
use crate::re;
use regex::Regex;
use std::sync::LazyLock;

pub(super) fn parse_compiler(text: &str) -> Vec<Found> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = rustc(&lines);
    found.extend(tsc(&lines));
    found.extend(eslint(&lines));
    found
}

pub(super) fn parse_fallback(text: &str) -> Vec<Found> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = python_traceback(&lines);
    found.extend(generic(&lines));
    found
}

/// `error[E0308]: mismatched types` + ` --> src/lib.rs:2:21` (+ the primary label `^^^ …`).
/// Cargo's own `error: could not compile …` lines have no location and are skipped.
fn rustc(lines: &[&str]) -> Vec<Found> {
    static HEAD: LazyLock<Regex> = LazyLock::new(|| re(r"^error(\[E\d+\])?: (.+)$"));
    static ARROW: LazyLock<Regex> = LazyLock::new(|| re(r"^\s*--> (\S+?):(\d+):(\d+)\s*$"));
    static LABEL: LazyLock<Regex> = LazyLock::new(|| re(r"^\s*\d*\s*\|[\s|\-]*\^+ (.+)$"));
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(h) = HEAD.captures(line) else {
            continue;
        };
        let Some((j, at)) = lines[i + 1..]
            .iter()
            .take(3)
            .enumerate()
            .find_map(|(j, l)| ARROW.captures(l).map(|c| (j, c)))
        else {
            continue;
        };
        let label = lines[i + 2 + j..]
            .iter()
            .take_while(|l| !l.trim().is_empty())
            .find_map(|l| LABEL.captures(l))
            .map(|c| c[1].trim().to_string());
        let code = h.get(1).map_or("", |m| m.as_str());
        let mut message = format!("error{code}: {}", &h[2]);
        if let Some(label) = label {
            message.push_str(&format!(" ({label})"));
        }
        found.push(Found::error(&at[1], at[2].parse().ok(), message));
    }
    found
}

/// `src/a.ts(3,7): error TS2322: …` and the pretty form `src/a.ts:3:7 - error TS2322: …`.
fn tsc(lines: &[&str]) -> Vec<Found> {
    static PLAIN: LazyLock<Regex> =
        LazyLock::new(|| re(r"^(\S+?)\((\d+),\d+\): error (TS\d+): (.+)$"));
    static PRETTY: LazyLock<Regex> =
        LazyLock::new(|| re(r"^(\S+?):(\d+):\d+ - error (TS\d+): (.+)$"));
    lines
        .iter()
        .filter_map(|l| PLAIN.captures(l).or_else(|| PRETTY.captures(l)))
        .map(|c| Found::error(&c[1], c[2].parse().ok(), format!("{}: {}", &c[3], &c[4])))
        .collect()
}

/// eslint's stylish format: a file's path on a line of its own, then `  3:7  error  message
/// rule` lines (warnings are not failures).
fn eslint(lines: &[&str]) -> Vec<Found> {
    static FILE: LazyLock<Regex> = LazyLock::new(|| re(r"^(/?[\w.@+\-]+(?:/[\w.@+\-]+)*\.\w+)$"));
    static ERR: LazyLock<Regex> =
        LazyLock::new(|| re(r"^\s+(\d+):\d+\s+error\s+(.+?)(?:\s{2,}(\S+))?\s*$"));
    let mut found = Vec::new();
    let mut file: Option<&str> = None;
    for line in lines {
        if line.trim().is_empty() {
            file = None;
        } else if FILE.is_match(line) {
            file = Some(line);
        } else if let (Some(path), Some(c)) = (file, ERR.captures(line)) {
            let message = match c.get(3) {
                Some(rule) => format!("{} ({})", &c[2], rule.as_str()),
                None => c[2].to_string(),
            };
            found.push(Found::error(path, c[1].parse().ok(), message));
        }
    }
    found
}

/// A Python traceback or `SyntaxError`: the exception line, at the last frame in the
/// repository.
fn python_traceback(lines: &[&str]) -> Vec<Found> {
    static EXCEPTION: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt)|SyntaxError|IndentationError)(?::\s*(.*))?$",
        )
    });
    static FRAME: LazyLock<Regex> = LazyLock::new(|| re(r#"^\s*File "[^"]+", line \d+"#));
    let mut found = Vec::new();
    let mut start: Option<usize> = None;
    for (i, line) in lines.iter().enumerate() {
        if line.starts_with("Traceback (most recent call last)")
            || (start.is_none() && FRAME.is_match(line))
        {
            start.get_or_insert(i);
            continue;
        }
        let Some(s) = start else {
            continue;
        };
        if let Some(c) = EXCEPTION.captures(line) {
            if let Some((path, at)) = python_location(&lines[s..i]) {
                let message = match c.get(2) {
                    Some(m) if !m.as_str().is_empty() => format!("{}: {}", &c[1], m.as_str()),
                    _ => c[1].to_string(),
                };
                found.push(Found::error(&path, Some(at), message));
            }
            start = None;
        } else if !line.starts_with(' ') && !line.trim().is_empty() && !FRAME.is_match(line) {
            start = None;
        }
    }
    found
}

/// `path:line[:col]: error: message` (gcc, clang, mypy, …) and go's `./calc.go:4:2: message`.
fn generic(lines: &[&str]) -> Vec<Found> {
    static ERROR: LazyLock<Regex> = LazyLock::new(|| {
        re(r"^(\.?/?[^\s:()]+\.[A-Za-z0-9]+):(\d+)(?::\d+)?: (?:fatal )?error: (.+)$")
    });
    static GO: LazyLock<Regex> = LazyLock::new(|| re(r"^(\.?/?[^\s:()]+\.go):(\d+):\d+: (.+)$"));
    lines
        .iter()
        .filter_map(|l| ERROR.captures(l).or_else(|| GO.captures(l)))
        .map(|c| {
            let path = c[1].trim_start_matches("./");
            Found::error(path, c[2].parse().ok(), c[3].trim().to_string())
        })
        .collect()
}
