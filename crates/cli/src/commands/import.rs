//! `bosun import`: other agents' sessions (Claude Code, Codex) read into the journal, read-only,
//! from where each tool keeps them or the folders given; prints what each scan read.

use super::open_store;
use bosun_import::{Source, SourceReport};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct ImportArgs {
    /// Claude Code's directory (the one holding `projects/`); default `$CLAUDE_CONFIG_DIR`, else
    /// ~/.claude
    #[arg(long, value_name = "DIR")]
    claude: Option<PathBuf>,
    /// Codex's directory (the one holding `sessions/`); default `$CODEX_HOME`, else ~/.codex
    #[arg(long, value_name = "DIR")]
    codex: Option<PathBuf>,
    /// Print each source's counts as JSON
    #[arg(long)]
    json: bool,
}

pub fn import(args: ImportArgs) -> anyhow::Result<ExitCode> {
    // Folders named on the command line are the only ones read; with none, both defaults.
    let named = args.claude.is_some() || args.codex.is_some();
    let wanted: Vec<(Source, Option<PathBuf>)> = [
        (Source::ClaudeCode, args.claude),
        (Source::Codex, args.codex),
    ]
    .into_iter()
    .filter(|(_, dir)| !named || dir.is_some())
    .map(|(s, dir)| (s, dir.or_else(|| s.default_dir())))
    .collect();
    let found: Vec<(Source, PathBuf)> = wanted
        .iter()
        .filter_map(|(s, dir)| {
            dir.as_ref()
                .filter(|d| s.sessions_dir(d).is_dir())
                .map(|d| (*s, d.clone()))
        })
        .collect();
    if found.is_empty() {
        let looked: Vec<String> = wanted
            .iter()
            .map(|(s, dir)| match dir {
                Some(d) => format!("{} in {}", s.as_str(), s.sessions_dir(d).display()),
                None => format!("{} (no home directory to look in)", s.as_str()),
            })
            .collect();
        anyhow::bail!(
            "no sessions to import: looked for {}; name a folder with --claude DIR or --codex DIR",
            looked.join(" and ")
        );
    }
    let store = open_store()?;
    let prices = bosun_model::PriceTable::load(&crate::home())?;
    let mut reports = Vec::new();
    for (source, dir) in found {
        reports.push(bosun_import::import_dir(&store, &prices, source, &dir)?);
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &reports)?;
        writeln!(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    for r in &reports {
        writeln!(out, "{}", summary(r))?;
        for path in &r.shrunk {
            writeln!(
                out,
                "  {path} is shorter than what was read of it before: left as it was"
            )?;
        }
        for c in &r.copies {
            writeln!(
                out,
                "  {} repeats the session imported from {}: left alone",
                c.path, c.copy_of
            )?;
        }
        if r.redacted > 0 {
            writeln!(
                out,
                "  {} redacted in the imported transcripts",
                if r.redacted == 1 {
                    "1 secret".to_string()
                } else {
                    format!("{} secrets", r.redacted)
                }
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn summary(r: &SourceReport) -> String {
    let plural = |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    format!(
        "{} ({}): {} ({} with new lines, {}), {} read, {}, {} skipped as malformed, {} of unknown types; {} (${:.4})",
        r.source,
        r.dir,
        plural(r.files, "session file", "session files"),
        r.files_read,
        plural(r.new_sessions, "new session", "new sessions"),
        plural(r.lines, "line", "lines"),
        plural(r.events, "new event", "new events"),
        r.malformed,
        r.unknown,
        plural(r.responses, "model response", "model responses"),
        r.cost_usd
    )
}
