//! `bosun history`: every task, searched by the words of its events and filtered by tokens
//! (`repo:`, `status:`, `model:`, `since:`, `until:`, `cost>`, `cost<`, `file:`,
//! `has:unreviewed`, `source:`), as a table with the matching snippet under each hit, or as JSON.

use super::open_store;
use bosun_store::search::local_now;
use bosun_store::{HistoryHit, HistoryQuery, Sort, StoreError};
use std::io::{IsTerminal, Write};
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct HistoryArgs {
    /// Words, "phrases" and filter tokens, e.g. `cargo test status:failed since:7d`
    words: Vec<String>,
    #[arg(long, value_enum, default_value_t = SortArg::Date)]
    sort: SortArg,
    #[arg(long, default_value_t = 50)]
    limit: u32,
    #[arg(long, default_value_t = 0)]
    offset: u32,
    /// Print the page (total, hits with their snippets, facets) as JSON
    #[arg(long)]
    json: bool,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum SortArg {
    Date,
    Cost,
    Duration,
}

pub fn history(args: HistoryArgs) -> anyhow::Result<ExitCode> {
    let now = local_now();
    let mut query = match HistoryQuery::parse(&args.words.join(" "), now) {
        Ok(q) => q,
        // What was typed is wrong: a usage error (exit 2) with the parser's message.
        Err(StoreError::BadQuery(message)) => anyhow::bail!(message),
        Err(e) => return Err(e.into()),
    };
    query.sort = match args.sort {
        SortArg::Date => Sort::Date,
        SortArg::Cost => Sort::Cost,
        SortArg::Duration => Sort::Duration,
    };
    query.limit = args.limit;
    query.offset = args.offset;
    let store = std::sync::Arc::new(open_store()?);
    // Older transcripts go first, as `bosun tasks` does, when a retention setting says so.
    let retention = bosun_core::export::apply_retention(&crate::home(), &store)?;
    for (id, why) in &retention.failed {
        eprintln!("bosun: the retention setting left task {id} as it was: {why}");
    }
    store.reconcile_interrupted()?;
    let page = store.history(&query)?;
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &page)?;
        writeln!(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    if page.hits.is_empty() {
        if page.total == 0 {
            writeln!(out, "no task matches {:?}", args.words.join(" "))?;
        } else {
            writeln!(out, "no tasks past {} (of {})", args.offset, page.total)?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let bold = std::io::stdout().is_terminal();
    writeln!(
        out,
        "{:<26}  {:<15}  {:<6}  {:<10}  {:>10}  {:<16}  {:<16}  PROMPT",
        "TASK", "STATUS", "CHECKS", "REVIEW", "COST", "STARTED", "REPO"
    )?;
    for hit in &page.hits {
        writeln!(out, "{}", row(hit, now.offset()))?;
        if let Some(seq) = hit.seq {
            writeln!(
                out,
                "    #{seq} {}: {}",
                hit.kind.as_deref().unwrap_or("event"),
                snippet(hit, bold)
            )?;
        }
    }
    let shown = u64::from(args.offset) + page.hits.len() as u64;
    if shown < page.total || args.offset > 0 {
        writeln!(
            out,
            "{}–{} of {} (--offset {} for more)",
            args.offset + 1,
            shown,
            page.total,
            shown
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

fn row(hit: &HistoryHit, offset: time::UtcOffset) -> String {
    let t = &hit.task;
    let repo = std::path::Path::new(&t.repo)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| t.repo.clone());
    let cost = crate::commands::inspect::cost_text(t);
    // An imported session says where it came from before its prompt.
    let prompt = t.prompt.lines().next().unwrap_or("");
    let prompt = match &t.source {
        Some(source) => format!("[{source}] {prompt}"),
        None => prompt.to_string(),
    };
    format!(
        "{:<26}  {:<15}  {:<6}  {:<10}  {:>10}  {:<16}  {:<16}  {}",
        t.id,
        t.status.as_str(),
        t.checks.as_deref().unwrap_or("-"),
        t.review_state,
        cost,
        local(&t.created_at, offset),
        short(&repo, 16),
        short(&prompt, 60),
    )
}

/// `2026-11-30 09:15` in the local offset (the stored text if it does not parse).
fn local(rfc3339: &str, offset: time::UtcOffset) -> String {
    let format = time::macros::format_description!("[year]-[month]-[day] [hour]:[minute]");
    time::OffsetDateTime::parse(rfc3339, &time::format_description::well_known::Rfc3339)
        .ok()
        .and_then(|t| t.to_offset(offset).format(format).ok())
        .unwrap_or_else(|| rfc3339.to_string())
}

/// The snippet on one line, the matched words in bold on a terminal and in `[…]` otherwise.
fn snippet(hit: &HistoryHit, bold: bool) -> String {
    hit.snippet
        .iter()
        .map(|p| {
            let text = p.text.split_whitespace().collect::<Vec<_>>().join(" ");
            let text = if p.text.starts_with(char::is_whitespace) {
                format!(" {text}")
            } else {
                text
            };
            let text = if p.text.ends_with(char::is_whitespace) && !text.ends_with(' ') {
                format!("{text} ")
            } else {
                text
            };
            match (p.hit, bold) {
                (false, _) => text,
                (true, true) => format!("\x1b[1m{text}\x1b[0m"),
                (true, false) => format!("[{text}]"),
            }
        })
        .collect()
}

fn short(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(max - 1).collect::<String>())
    }
}
