//! `bosun costs` (what the model responses cost, by period, repository, model or task) and
//! `bosun stats` (the execution metrics of finished tasks; definitions in docs/metrics.md).

use super::open_store;
use bosun_store::search::local_now;
use bosun_store::{
    CostFigure, CostFilter, CostGroup, CostRow, HistoryQuery, StatsFilter, StatsGroup, StatsRow,
    Store, StoreError,
};
use std::io::Write;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct CostsArgs {
    /// Rows by `day`, `week` (its Monday), `month` (local time; newest first), `repo`, `model`
    /// or `task` (costliest first). Without it: today, this week, this month and all time
    #[arg(long)]
    by: Option<String>,
    /// Responses from (a date `2026-11-30` at local midnight, an RFC 3339 time, or an age `7d`,
    /// `2w`, `3m`)
    #[arg(long)]
    since: Option<String>,
    /// Responses up to (a date includes its whole day)
    #[arg(long)]
    until: Option<String>,
    /// Only this repository's tasks (a path: `.`, relative, or as the journal has it)
    #[arg(long)]
    repo: Option<String>,
    #[arg(long, conflicts_with = "csv")]
    json: bool,
    #[arg(long)]
    csv: bool,
}

#[derive(clap::Args)]
pub struct StatsArgs {
    /// Rows by `model`, `repo` or `week` (the local week the task finished in); one row
    /// without it
    #[arg(long)]
    by: Option<String>,
    /// Tasks finished from (as for `bosun costs`)
    #[arg(long)]
    since: Option<String>,
    /// Tasks finished up to
    #[arg(long)]
    until: Option<String>,
    #[arg(long)]
    repo: Option<String>,
    #[arg(long)]
    json: bool,
}

/// `--since` / `--until` as the history's `since:` / `until:` read them (RFC 3339, UTC).
fn period(
    since: Option<&str>,
    until: Option<&str>,
) -> anyhow::Result<(Option<String>, Option<String>)> {
    let mut text = String::new();
    for (key, value) in [("since", since), ("until", until)] {
        if let Some(v) = value {
            if v.is_empty() || v.contains(char::is_whitespace) {
                anyhow::bail!(
                    "--{key} `{v}` is not a time; write a date (2026-11-30), an RFC 3339 time (2026-11-30T09:00:00Z) or an age (7d, 2w, 3m)"
                );
            }
            text.push_str(&format!("{key}:{v} "));
        }
    }
    match HistoryQuery::parse(&text, local_now()) {
        Ok(q) => Ok((q.since, q.until)),
        Err(StoreError::BadQuery(message)) => anyhow::bail!("{message}"),
        Err(e) => Err(e.into()),
    }
}

/// The repository key the journal uses for what was typed: the path as it is, else the
/// repository containing it (`.`, a relative or symlinked path). Nothing known: a usage error
/// listing the repositories the journal has.
fn repo_key(store: &Store, typed: &str) -> anyhow::Result<String> {
    let known = store.repos()?;
    if known.iter().any(|r| r == typed) {
        return Ok(typed.to_string());
    }
    let path = std::path::Path::new(typed);
    let mut candidates = Vec::new();
    if let Ok(canonical) = path.canonicalize() {
        candidates.push(canonical.display().to_string());
    }
    if let Ok(root) = bosun_workspace::resolve_repo(path) {
        candidates.push(root.display().to_string());
    }
    if let Some(found) = candidates.into_iter().find(|c| known.contains(c)) {
        return Ok(found);
    }
    if known.is_empty() {
        anyhow::bail!(
            "no task of the repository `{typed}` is in the journal (it has no tasks yet)"
        );
    }
    anyhow::bail!(
        "no task of the repository `{typed}` is in the journal; the repositories are:\n  {}",
        known.join("\n  ")
    )
}

fn group(by: &str) -> anyhow::Result<CostGroup> {
    CostGroup::ALL
        .iter()
        .find(|(name, _)| *name == by)
        .map(|(_, g)| *g)
        .ok_or_else(|| {
            let names: Vec<&str> = CostGroup::ALL.iter().map(|(n, _)| *n).collect();
            anyhow::anyhow!(
                "--by `{by}` is not a grouping; write one of {}",
                names.join(", ")
            )
        })
}

/// A cost as shown: dollars, or `unpriced` when nothing in it had a price.
fn dollars(f: &CostFigure) -> String {
    if f.responses > 0 && f.unpriced_responses == f.responses {
        "unpriced".into()
    } else {
        format!("${:.4}", f.cost_usd)
    }
}

fn total(rows: &[CostRow]) -> CostFigure {
    let mut t = CostFigure::default();
    for r in rows {
        t.add(&r.figure);
    }
    t
}

const HEADER: [&str; 11] = [
    "key",
    "responses",
    "input",
    "cache_read",
    "cache_write_5m",
    "cache_write_1h",
    "output",
    "reasoning",
    "cost_usd",
    "cache_savings_usd",
    "unpriced",
];

fn cells(key: &str, f: &CostFigure, csv: bool) -> Vec<String> {
    let t = &f.tokens;
    let mut v = vec![
        key.to_string(),
        f.responses.to_string(),
        t.input.to_string(),
        t.cache_read.to_string(),
        t.cache_write_5m.to_string(),
        t.cache_write_1h.to_string(),
        t.output.to_string(),
        t.reasoning.to_string(),
    ];
    if csv {
        // A cost nothing priced is empty, never 0.
        let unpriced = f.responses > 0 && f.unpriced_responses == f.responses;
        v.push(if unpriced {
            String::new()
        } else {
            format!("{:.6}", f.cost_usd)
        });
        v.push(format!("{:.6}", f.cache_savings_usd));
    } else {
        v.push(dollars(f));
        v.push(format!("${:.4}", f.cache_savings_usd));
    }
    v.push(f.unpriced_responses.to_string());
    v
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn table(out: &mut dyn Write, rows: &[Vec<String>]) -> std::io::Result<()> {
    let widths: Vec<usize> = (0..HEADER.len())
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    for row in rows {
        let line: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if i == 0 {
                    format!("{c:<w$}", w = widths[i])
                } else {
                    format!("{c:>w$}", w = widths[i])
                }
            })
            .collect();
        writeln!(out, "{}", line.join("  ").trim_end())?;
    }
    Ok(())
}

pub fn costs(args: CostsArgs) -> anyhow::Result<ExitCode> {
    let by = args.by.as_deref().map(group).transpose()?;
    let (since, until) = period(args.since.as_deref(), args.until.as_deref())?;
    let store = open_store()?;
    let repo = args
        .repo
        .as_deref()
        .map(|r| repo_key(&store, r))
        .transpose()?;
    let mut out = std::io::stdout().lock();
    let Some(by) = by else {
        if since.is_some() || until.is_some() {
            anyhow::bail!("--since and --until need --by (day, week, month, repo, model or task)");
        }
        let totals = store.cost_totals(repo.as_deref())?;
        if args.json {
            serde_json::to_writer_pretty(&mut out, &totals)?;
            writeln!(out)?;
            return Ok(ExitCode::SUCCESS);
        }
        let periods = [
            ("today", &totals.today),
            ("this week", &totals.week),
            ("this month", &totals.month),
            ("all time", &totals.all),
        ];
        if args.csv {
            writeln!(out, "{}", HEADER.join(","))?;
            for (k, f) in periods {
                writeln!(out, "{}", cells(k, f, true).join(","))?;
            }
            return Ok(ExitCode::SUCCESS);
        }
        let mut rows = vec![HEADER.iter().map(|h| h.to_string()).collect::<Vec<_>>()];
        rows.extend(periods.iter().map(|(k, f)| cells(k, f, false)));
        table(&mut out, &rows)?;
        return Ok(ExitCode::SUCCESS);
    };
    let filter = CostFilter { since, until, repo };
    let rows = store.costs(by, &filter)?;
    if args.json {
        serde_json::to_writer_pretty(&mut out, &rows)?;
        writeln!(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    if args.csv {
        writeln!(out, "{}", HEADER.join(","))?;
        for r in &rows {
            let line: Vec<String> = cells(&r.key, &r.figure, true)
                .iter()
                .map(|c| csv_field(c))
                .collect();
            writeln!(out, "{}", line.join(","))?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    if rows.is_empty() {
        writeln!(out, "no model responses in that period")?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut lines = vec![HEADER.iter().map(|h| h.to_string()).collect::<Vec<_>>()];
    lines.extend(rows.iter().map(|r| cells(&r.key, &r.figure, false)));
    lines.push(cells("total", &total(&rows), false));
    table(&mut out, &lines)?;
    Ok(ExitCode::SUCCESS)
}

pub fn stats(args: StatsArgs) -> anyhow::Result<ExitCode> {
    let by = match args.by.as_deref() {
        None => StatsGroup::All,
        Some("model") => StatsGroup::Model,
        Some("repo") => StatsGroup::Repo,
        Some("week") => StatsGroup::Week,
        Some(other) => {
            anyhow::bail!("--by `{other}` is not a grouping; write one of model, repo, week")
        }
    };
    let (since, until) = period(args.since.as_deref(), args.until.as_deref())?;
    let store = open_store()?;
    let repo = args
        .repo
        .as_deref()
        .map(|r| repo_key(&store, r))
        .transpose()?;
    let rows = store.stats(by, &StatsFilter { since, until, repo })?;
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &rows)?;
        writeln!(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    if rows.is_empty() {
        writeln!(out, "no finished task yet")?;
        return Ok(ExitCode::SUCCESS);
    }
    for row in &rows {
        stats_block(&mut out, row)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn stats_block(out: &mut dyn Write, r: &StatsRow) -> std::io::Result<()> {
    let pct = |x: Option<f64>| x.map_or("-".into(), |x| format!("{:.1} %", x * 100.0));
    let num = |x: Option<f64>, unit: &str| x.map_or("-".into(), |x| format!("{x:.2}{unit}"));
    let usd = |x: Option<f64>| x.map_or("-".into(), |x| format!("${x:.4}"));
    writeln!(out, "{}", r.key)?;
    writeln!(
        out,
        "  tasks {} decided ({} successes, {} first pass), {} pending review, {} answered",
        r.tasks, r.successes, r.first_passes, r.pending_review, r.answered
    )?;
    writeln!(
        out,
        "  success rate {}   first-pass rate {}   interventions per task {}",
        pct(r.success_rate),
        pct(r.first_pass_rate),
        num(r.interventions_per_task, "")
    )?;
    writeln!(
        out,
        "  cost per task {}   per success {}   tokens per task {}   per success {}",
        usd(r.cost_per_task_usd),
        usd(r.cost_per_success_usd),
        num(r.tokens_per_task, ""),
        num(r.tokens_per_success, "")
    )?;
    writeln!(
        out,
        "  wall time per task {}   per success {}",
        num(r.seconds_per_task, " s"),
        num(r.seconds_per_success, " s")
    )?;
    if !r.failure_causes.is_empty() {
        let causes: Vec<String> = r
            .failure_causes
            .iter()
            .map(|(c, n)| format!("{c} {n}"))
            .collect();
        writeln!(out, "  failure causes: {}", causes.join(", "))?;
    }
    Ok(())
}
