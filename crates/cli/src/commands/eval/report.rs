//! The figures of a suite run: one row per task × runner × try, totals per runner, as a
//! table or one JSON document.

use super::suite::Kind;
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::Write;

#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub task: String,
    pub kind: Kind,
    pub runner: &'static str,
    /// 1-based.
    #[serde(rename = "try")]
    pub attempt: u32,
    pub passed: bool,
    /// Bosun: the task's final status (`completed`, `answered`, …); Aider: how it exited.
    /// `time limit` when the run was stopped.
    pub status: String,
    pub time_secs: f64,
    pub requests: u64,
    pub first_request_tokens: Option<u64>,
    pub total_tokens: u64,
    /// Bosun only (None for the peer).
    pub native_calls: Option<u64>,
    pub recovered_calls: Option<u64>,
    pub nudges: Option<u64>,
    /// Bosun's task id (in the suite run's BOSUN_HOME).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// The end of the hidden check's output.
    pub check_output: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Totals {
    pub passed: u64,
    pub runs: u64,
    pub wall_secs: f64,
    pub requests: u64,
    pub total_tokens: u64,
    /// Over the runs that made a request.
    pub mean_first_request_tokens: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub suite: String,
    pub model: String,
    pub tries: u32,
    pub tasks: Vec<Row>,
    pub totals: SuiteTotals,
    pub commands: Commands,
    /// Where the suite run's BOSUN_HOME, fixtures, logs and check copies are.
    pub work_dir: String,
}

/// The commands each runner was started with, as printed at the start (keys masked); `aider`
/// is null without a peer.
#[derive(Debug, Clone, Serialize)]
pub struct Commands {
    pub bosun: String,
    pub aider: Option<String>,
}

/// Per runner, the suite's wall time and, with a peer, Bosun's passes over the peer's.
#[derive(Debug, Clone, Serialize)]
pub struct SuiteTotals {
    #[serde(flatten)]
    pub runners: BTreeMap<&'static str, Totals>,
    pub wall_secs: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pass_ratio: Option<f64>,
}

pub fn totals(rows: &[Row], wall_secs: f64) -> SuiteTotals {
    let mut runners: BTreeMap<&'static str, Totals> = BTreeMap::new();
    let mut firsts: BTreeMap<&'static str, Vec<u64>> = BTreeMap::new();
    for r in rows {
        let t = runners.entry(r.runner).or_insert(Totals {
            passed: 0,
            runs: 0,
            wall_secs: 0.0,
            requests: 0,
            total_tokens: 0,
            mean_first_request_tokens: None,
        });
        t.runs += 1;
        t.passed += u64::from(r.passed);
        t.wall_secs += r.time_secs;
        t.requests += r.requests;
        t.total_tokens += r.total_tokens;
        if let Some(f) = r.first_request_tokens {
            firsts.entry(r.runner).or_default().push(f);
        }
    }
    for (name, f) in firsts {
        if let Some(t) = runners.get_mut(name)
            && !f.is_empty()
        {
            t.mean_first_request_tokens = Some(f.iter().sum::<u64>() as f64 / f.len() as f64);
        }
    }
    let pass_ratio = match (runners.get("bosun"), runners.get("aider")) {
        (Some(b), Some(a)) if a.passed > 0 => Some(b.passed as f64 / a.passed as f64),
        _ => None,
    };
    SuiteTotals {
        runners,
        wall_secs,
        pass_ratio,
    }
}

fn opt(n: Option<u64>) -> String {
    n.map_or("–".to_string(), |n| n.to_string())
}

/// The table, the totals and the ratio, as `bosun eval` prints them.
pub fn print_table(report: &Report, out: &mut impl Write) -> std::io::Result<()> {
    let header = [
        "task",
        "kind",
        "runner",
        "passed",
        "status",
        "time",
        "requests",
        "first tok",
        "total tok",
        "calls n/r",
        "nudges",
    ];
    let show_try = report.tries > 1;
    let cells: Vec<Vec<String>> = report
        .tasks
        .iter()
        .map(|r| {
            vec![
                if show_try {
                    format!("{}#{}", r.task, r.attempt)
                } else {
                    r.task.clone()
                },
                r.kind.as_str().to_string(),
                r.runner.to_string(),
                if r.passed { "✓" } else { "✗" }.to_string(),
                r.status.clone(),
                format!("{:.1}s", r.time_secs),
                r.requests.to_string(),
                opt(r.first_request_tokens),
                r.total_tokens.to_string(),
                match (r.native_calls, r.recovered_calls) {
                    (Some(n), Some(rc)) => format!("{n}/{rc}"),
                    _ => "–".to_string(),
                },
                opt(r.nudges),
            ]
        })
        .collect();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in &cells {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cols: &[String], out: &mut dyn Write| -> std::io::Result<()> {
        let mut s = String::new();
        for (i, (c, w)) in cols.iter().zip(&widths).enumerate() {
            if i > 0 {
                s.push_str("  ");
            }
            s.push_str(c);
            s.extend(std::iter::repeat_n(' ', w - c.chars().count()));
        }
        writeln!(out, "{}", s.trim_end())
    };
    let head: Vec<String> = header.iter().map(|h| h.to_string()).collect();
    line(&head, out)?;
    for row in &cells {
        line(row, out)?;
    }
    writeln!(out)?;
    for name in ["bosun", "aider"] {
        let Some(t) = report.totals.runners.get(name) else {
            continue;
        };
        writeln!(
            out,
            "{name}: passed {}/{}, wall time {:.1}s, {} requests, {} tokens, mean first-request tokens {}",
            t.passed,
            t.runs,
            t.wall_secs,
            t.requests,
            t.total_tokens,
            t.mean_first_request_tokens
                .map_or("–".to_string(), |m| format!("{m:.0}"))
        )?;
    }
    if let (Some(b), Some(a)) = (
        report.totals.runners.get("bosun"),
        report.totals.runners.get("aider"),
    ) {
        match report.totals.pass_ratio {
            Some(r) => writeln!(
                out,
                "passes bosun/aider: {}/{} = {r:.2}",
                b.passed, a.passed
            )?,
            None => writeln!(
                out,
                "passes bosun/aider: {}/0 (aider passed none)",
                b.passed
            )?,
        }
    }
    writeln!(out, "suite wall time: {:.1}s", report.totals.wall_secs)?;
    Ok(())
}
