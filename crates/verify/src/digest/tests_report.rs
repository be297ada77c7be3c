//! Test runners' reports: unittest, pytest, `node --test` (TAP and spec reporters), `cargo
//! test`, `go test`.

use super::{Found, cut_chars};
use crate::{Runner, re};
use regex::Regex;
use std::collections::HashMap;
use std::sync::LazyLock;

type Parser = fn(&[&str]) -> Vec<Found>;
/// A pytest section's failure location and last `E ` line.
type Section = (Option<(String, u32)>, Option<String>);

/// Every test report in `text`, the runner's own first.
pub(super) fn parse(text: &str, runner: Option<Runner>) -> Vec<Found> {
    let lines: Vec<&str> = text.lines().collect();
    let all: [(Runner, Parser); 5] = [
        (Runner::Unittest, unittest),
        (Runner::Pytest, pytest),
        (Runner::NodeTest, node),
        (Runner::CargoTest, cargo_test),
        (Runner::GoTest, go_test),
    ];
    let mut found = Vec::new();
    if let Some((_, parse)) = all.iter().find(|(r, _)| Some(*r) == runner) {
        found.extend(parse(&lines));
    }
    for (r, parse) in &all {
        if Some(*r) != runner {
            found.extend(parse(&lines));
        }
    }
    found
}

static PY_FRAME: LazyLock<Regex> = LazyLock::new(|| re(r#"^\s*File "([^"]+)", line (\d+)"#));

/// The last frame of a traceback in the repository (a relative path), else the last frame.
pub(super) fn python_location(block: &[&str]) -> Option<(String, u32)> {
    let frames: Vec<(String, u32)> = block
        .iter()
        .filter_map(|l| PY_FRAME.captures(l))
        .filter_map(|c| Some((c[1].to_string(), c[2].parse().ok()?)))
        .collect();
    frames
        .iter()
        .rev()
        .find(|(p, _)| !p.starts_with('/') && !p.starts_with('<'))
        .or(frames.last())
        .cloned()
}

/// `FAIL: test_add (tests.test_calc.CalcTest.test_add)` / `ERROR: …` blocks.
fn unittest(lines: &[&str]) -> Vec<Found> {
    static HEADER: LazyLock<Regex> = LazyLock::new(|| re(r"^(FAIL|ERROR): (\S+) \((.+)\)\s*$"));
    let mut found = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(c) = HEADER.captures(lines[i]) else {
            i += 1;
            continue;
        };
        let (method, class) = (&c[2], &c[3]);
        let name = if class.starts_with("unittest.loader._FailedTest") {
            method.to_string()
        } else if class.ends_with(&format!(".{method}")) {
            class.to_string()
        } else {
            format!("{class}.{method}")
        };
        let mut end = i + 1;
        // The header's own dashes, then the traceback up to the next block or the summary.
        if lines.get(end).is_some_and(|l| l.starts_with("-----")) {
            end += 1;
        }
        let start = end;
        while end < lines.len()
            && !lines[end].starts_with("=====")
            && !lines[end].starts_with("-----")
        {
            end += 1;
        }
        let block = &lines[start..end];
        let detail = block
            .iter()
            .rev()
            .find(|l| !l.trim().is_empty() && !l.starts_with(' ') && !l.starts_with("Traceback"))
            .map(|l| l.trim().to_string());
        let mut f = Found::test(name);
        f.detail = detail;
        if let Some((path, line)) = python_location(block) {
            f.path = Some(path);
            f.line = Some(line);
        }
        found.push(f);
        i = end;
    }
    found
}

/// pytest's short test summary (`FAILED tests/test_calc.py::test_add - assert 4 == 3`), with
/// the line of each failure from its section of the long report.
fn pytest(lines: &[&str]) -> Vec<Found> {
    static SUMMARY: LazyLock<Regex> =
        LazyLock::new(|| re(r"^(FAILED|ERROR) (\S+?)(?: - (.*))?\s*$"));
    static SECTION: LazyLock<Regex> = LazyLock::new(|| re(r"^_{3,} (.+?) _{3,}\s*$"));
    static AT: LazyLock<Regex> = LazyLock::new(|| re(r"^(\S+\.py):(\d+): \S"));
    // Section title -> (where it failed, its last `E ` line).
    let mut sections: HashMap<String, Section> = HashMap::new();
    let mut current: Option<String> = None;
    let mut block: Vec<&str> = Vec::new();
    let close = |title: &Option<String>, block: &[&str], sections: &mut HashMap<_, _>| {
        if let Some(title) = title {
            let at = block
                .iter()
                .rev()
                .filter_map(|l| AT.captures(l))
                .find_map(|c| Some((c[1].to_string(), c[2].parse().ok()?)));
            let e_lines: Vec<&str> = block.iter().filter_map(|l| l.strip_prefix("E ")).collect();
            let at = at.or_else(|| python_location(&e_lines));
            let last_e = e_lines.last().map(|l| l.trim().to_string());
            sections.insert(title.clone(), (at, last_e));
        }
    };
    let mut in_summary = false;
    let mut found = Vec::new();
    for line in lines {
        if line.starts_with("=====") {
            close(&current, &block, &mut sections);
            current = None;
            block.clear();
            in_summary = line.contains("short test summary info");
            continue;
        }
        if in_summary {
            if let Some(c) = SUMMARY.captures(line) {
                let nodeid = c[2].to_string();
                let (file, rest) = match nodeid.split_once("::") {
                    Some((f, r)) => (f.to_string(), Some(r.replace("::", "."))),
                    None => (nodeid.clone(), None),
                };
                let title = match &rest {
                    Some(r) => r.clone(),
                    None => format!("ERROR collecting {file}"),
                };
                let (at, last_e) = sections.get(&title).cloned().unwrap_or((None, None));
                let mut f = Found::test(nodeid);
                f.detail = c.get(3).map(|m| m.as_str().to_string()).or(last_e);
                match at {
                    Some((p, l)) => {
                        f.path = Some(p);
                        f.line = Some(l);
                    }
                    None => f.path = Some(file),
                }
                found.push(f);
            }
            continue;
        }
        if let Some(c) = SECTION.captures(line) {
            close(&current, &block, &mut sections);
            block.clear();
            current = Some(c[1].to_string());
            continue;
        }
        if current.is_some() {
            block.push(line);
        }
    }
    found
}

/// `node --test`: TAP (what node 20 prints when its output is not a terminal) or, when there
/// is no TAP, the spec reporter's `✖ name (1.2ms)` lines.
fn node(lines: &[&str]) -> Vec<Found> {
    let tap = node_tap(lines);
    if tap.is_empty() {
        node_spec(lines)
    } else {
        tap
    }
}

static JS_AT: LazyLock<Regex> = LazyLock::new(|| re(r"\(?([^\s()']+):(\d+):(\d+)\)?"));

fn node_tap(lines: &[&str]) -> Vec<Found> {
    static NOT_OK: LazyLock<Regex> = LazyLock::new(|| re(r"^(\s*)not ok \d+ - (.+?)(?: # .*)?$"));
    static KEY: LazyLock<Regex> = LazyLock::new(|| re(r"^(\s*)(\w+): ?(.*)$"));
    let mut found = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(c) = NOT_OK.captures(lines[i]) else {
            i += 1;
            continue;
        };
        let name = c[2].to_string();
        let mut end = i + 1;
        let mut yaml = Vec::new();
        if lines.get(end).is_some_and(|l| l.trim() == "---") {
            end += 1;
            while end < lines.len() && lines[end].trim() != "..." {
                yaml.push(lines[end]);
                end += 1;
            }
        }
        i = end;
        let mut fields: HashMap<String, String> = HashMap::new();
        let mut j = 0;
        while j < yaml.len() {
            let Some(k) = KEY.captures(yaml[j]) else {
                j += 1;
                continue;
            };
            let indent = k[1].len();
            let (key, value) = (k[2].to_string(), k[3].trim().to_string());
            j += 1;
            if value.starts_with('|') || value.starts_with('>') {
                let mut body = Vec::new();
                while j < yaml.len()
                    && (yaml[j].trim().is_empty()
                        || yaml[j].len() - yaml[j].trim_start().len() > indent)
                {
                    body.push(yaml[j].trim());
                    j += 1;
                }
                fields.insert(key, body.join("\n"));
            } else {
                fields.insert(key, value.trim_matches('\'').trim_matches('"').to_string());
            }
        }
        if fields.get("failureType").map(String::as_str) == Some("subtestsFailed") {
            continue;
        }
        let location = fields
            .get("location")
            .and_then(|l| JS_AT.captures(l))
            .and_then(|c| Some((c[1].to_string(), c[2].parse::<u32>().ok()?)));
        let mut f = Found::test(match &location {
            Some((file, _)) if *file != name => format!("{file} > {name}"),
            _ => name.clone(),
        });
        f.detail = fields.get("error").map(|e| {
            let words: Vec<&str> = e.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
            cut_chars(&words.join(" "), 240)
        });
        if let Some((file, line)) = location {
            // The assertion's line, when the stack names the test's file.
            let assertion = fields.get("stack").and_then(|s| {
                s.lines()
                    .filter_map(|l| JS_AT.captures(l))
                    .find(|c| c[1] == *file)
                    .and_then(|c| c[2].parse::<u32>().ok())
            });
            f.line = Some(assertion.unwrap_or(line));
            f.path = Some(file);
        }
        found.push(f);
    }
    found
}

fn node_spec(lines: &[&str]) -> Vec<Found> {
    static FAIL: LazyLock<Regex> = LazyLock::new(|| re(r"^\s*✖ (.+?) \([\d.]+m?s\)\s*$"));
    static TEST_AT: LazyLock<Regex> = LazyLock::new(|| re(r"^test at (\S+):(\d+):\d+\s*$"));
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(c) = FAIL.captures(line) else {
            continue;
        };
        let location = i
            .checked_sub(1)
            .and_then(|p| TEST_AT.captures(lines[p]))
            .and_then(|c| Some((c[1].to_string(), c[2].parse::<u32>().ok()?)));
        let detail: Vec<&str> = lines[i + 1..]
            .iter()
            .map(|l| l.trim())
            .take_while(|l| !l.starts_with("at ") && !l.starts_with('✖') && !l.starts_with('✔'))
            .filter(|l| !l.is_empty())
            .take(4)
            .collect();
        let mut f = Found::test(c[1].to_string());
        if !detail.is_empty() {
            f.detail = Some(detail.join(" "));
        }
        if let Some((p, l)) = location {
            f.path = Some(p);
            f.line = Some(l);
        }
        found.push(f);
    }
    // A failing test is listed twice (as it runs and under "failing tests:"): keep the one
    // with its location.
    let mut kept: Vec<Found> = Vec::new();
    for f in found {
        match kept.iter_mut().find(|k| k.name == f.name) {
            Some(k) if k.path.is_none() => *k = f,
            Some(_) => {}
            None => kept.push(f),
        }
    }
    kept
}

/// `test tests::adds ... FAILED` and its `---- tests::adds stdout ----` section.
fn cargo_test(lines: &[&str]) -> Vec<Found> {
    static FAILED: LazyLock<Regex> = LazyLock::new(|| re(r"^test (\S+) \.\.\. FAILED\s*$"));
    static SECTION: LazyLock<Regex> = LazyLock::new(|| re(r"^---- (\S+) stdout ----\s*$"));
    static PANIC: LazyLock<Regex> = LazyLock::new(|| re(r"panicked at (\S+?):(\d+):(\d+):\s*$"));
    static OLD_PANIC: LazyLock<Regex> =
        LazyLock::new(|| re(r"panicked at '(.*)', (\S+?):(\d+):(\d+)\s*$"));
    let names: Vec<String> = lines
        .iter()
        .filter_map(|l| FAILED.captures(l))
        .map(|c| c[1].to_string())
        .collect();
    let mut panics: HashMap<String, (String, u32, String)> = HashMap::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(c) = SECTION.captures(line) else {
            continue;
        };
        let name = c[1].to_string();
        let section = lines[i + 1..]
            .iter()
            .take_while(|l| !l.starts_with("---- ") && l.trim() != "failures:");
        let mut section = section.peekable();
        while let Some(l) = section.next() {
            if let Some(p) = PANIC.captures(l) {
                let mut message: Vec<String> = Vec::new();
                for next in section.by_ref() {
                    let t = next.trim();
                    if t.is_empty() || t.starts_with("stack backtrace:") || t.starts_with("note:") {
                        break;
                    }
                    message.push(t.to_string());
                }
                let text = match message.split_first() {
                    Some((first, rest)) if !rest.is_empty() => {
                        format!("{first} ({})", rest.join(", "))
                    }
                    Some((first, _)) => first.clone(),
                    None => String::new(),
                };
                if let Ok(line) = p[2].parse() {
                    panics.insert(name.clone(), (p[1].to_string(), line, text));
                }
                break;
            }
            if let Some(p) = OLD_PANIC.captures(l) {
                if let Ok(line) = p[3].parse() {
                    panics.insert(name.clone(), (p[2].to_string(), line, p[1].to_string()));
                }
                break;
            }
        }
    }
    names
        .into_iter()
        .map(|name| {
            let mut f = Found::test(name.clone());
            if let Some((path, line, message)) = panics.remove(&name) {
                f.path = Some(path);
                f.line = Some(line);
                f.detail = Some(message);
            }
            f
        })
        .collect()
}

/// `--- FAIL: TestAdd (0.00s)` with its `calc_test.go:12: …` lines, and the package from the
/// `FAIL\texample.com/calc\t0.01s` line after them.
fn go_test(lines: &[&str]) -> Vec<Found> {
    static FAIL: LazyLock<Regex> = LazyLock::new(|| re(r"^(\s*)--- FAIL: (\S+) \("));
    static AT: LazyLock<Regex> = LazyLock::new(|| re(r"^\s+(\S+\.go):(\d+): (.*)$"));
    static PACKAGE: LazyLock<Regex> = LazyLock::new(|| re(r"^FAIL\s+(\S+)\s+(?:[\d.]+s|\[)"));
    let mut found: Vec<Found> = Vec::new();
    let mut unassigned = 0;
    for (i, line) in lines.iter().enumerate() {
        if let Some(c) = PACKAGE.captures(line) {
            let start = found.len() - unassigned;
            for f in &mut found[start..] {
                f.name = format!("{} ({})", f.name, &c[1]);
            }
            unassigned = 0;
            continue;
        }
        let Some(c) = FAIL.captures(line) else {
            continue;
        };
        let mut f = Found::test(c[2].to_string());
        if let Some(a) = lines[i + 1..]
            .iter()
            .take_while(|l| !l.trim_start().starts_with("--- ") && !l.starts_with("FAIL"))
            .find_map(|l| AT.captures(l))
        {
            f.path = Some(a[1].to_string());
            f.line = a[2].parse().ok();
            f.detail = Some(a[3].trim().to_string());
        }
        found.push(f);
        unassigned += 1;
    }
    // A parent test fails when a subtest does: keep only the subtests.
    let names: Vec<String> = found.iter().map(|f| f.name.clone()).collect();
    found.retain(|f| {
        let base = f.name.split(' ').next().unwrap_or("");
        !names.iter().any(|n| {
            n.split(' ')
                .next()
                .is_some_and(|o| o.starts_with(&format!("{base}/")))
        })
    });
    found
}
