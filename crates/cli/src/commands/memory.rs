//! `bosun memory`: what Bosun remembers about a repository (`[--repo PATH] [--json]`), and
//! `pin ID`, `unpin ID`, `delete ID`, `add [--repo PATH] TEXT`. The repository defaults to the one
//! containing the current directory; a path outside any repository, or an id that matches no
//! memory (the error names the nearest ids), is exit 2.

use super::open_store;
use anyhow::Context;
use bosun_store::MemoryRow;
use clap::{Args, Subcommand};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args)]
pub struct MemoryArgs {
    #[command(subcommand)]
    action: Option<MemoryAction>,
    /// The repository (default: the one containing the current directory)
    #[arg(long)]
    repo: Option<PathBuf>,
    /// The memories as a JSON array (the memory changed, for pin, unpin, delete and add)
    #[arg(long, global = true)]
    json: bool,
}

#[derive(Subcommand)]
enum MemoryAction {
    /// Pin a memory: shown first in every new task's prompt and never dropped for room
    Pin { id: String },
    /// Unpin a memory
    Unpin { id: String },
    /// Forget a memory
    Delete { id: String },
    /// Write down a convention for the repository's tasks
    Add {
        /// The repository (default: the one containing the current directory)
        #[arg(long)]
        repo: Option<PathBuf>,
        /// What to remember, one line (at most 1000 characters)
        text: String,
    },
}

pub fn memory(args: MemoryArgs) -> anyhow::Result<ExitCode> {
    let store = open_store()?;
    let mut out = std::io::stdout().lock();
    match args.action {
        None => list(&store, args.repo.as_deref(), args.json, &mut out),
        Some(MemoryAction::Pin { id }) => {
            let m = bosun_core::memory::pin(&store, parse_id(&id)?, true)?;
            said(&mut out, args.json, &m, "pinned")
        }
        Some(MemoryAction::Unpin { id }) => {
            let m = bosun_core::memory::pin(&store, parse_id(&id)?, false)?;
            said(&mut out, args.json, &m, "unpinned")
        }
        Some(MemoryAction::Delete { id }) => {
            let m = bosun_core::memory::delete(&store, parse_id(&id)?)?;
            said(&mut out, args.json, &m, "deleted")
        }
        Some(MemoryAction::Add { repo, text }) => {
            let key = repo_key(repo.as_deref().or(args.repo.as_deref()))?;
            let m = bosun_core::memory::add_convention(&store, &key, &text)?;
            let verb = if m.seen > 1 {
                "remembered again"
            } else {
                "remembered"
            };
            said(&mut out, args.json, &m, verb)
        }
    }
}

/// The repository key for `--repo` (or the current directory).
fn repo_key(repo: Option<&Path>) -> anyhow::Result<String> {
    match repo {
        Some(path) => Ok(bosun_core::memory::repo_key(path)?),
        None => bosun_core::memory::repo_key(Path::new("."))
            .context("name the repository with --repo PATH"),
    }
}

/// `12` or `#12`.
fn parse_id(typed: &str) -> anyhow::Result<i64> {
    typed.trim().trim_start_matches('#').parse().map_err(|_| {
        anyhow::anyhow!("`{typed}` is not a memory id: `bosun memory` lists them (#1, #2, …)")
    })
}

fn list(
    store: &bosun_store::Store,
    repo: Option<&Path>,
    json: bool,
    out: &mut impl Write,
) -> anyhow::Result<ExitCode> {
    let key = repo_key(repo)?;
    let memories = bosun_core::memory::list(store, &key)?;
    if json {
        serde_json::to_writer_pretty(&mut *out, &memories)?;
        writeln!(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    let off = !bosun_core::memory::enabled(&crate::home());
    if off {
        writeln!(
            out,
            "memory is off ([memory] enabled = false in {}): nothing is learned or put in prompts",
            crate::home().join("config.toml").display()
        )?;
    }
    if memories.is_empty() {
        writeln!(
            out,
            "no memories of {key} yet: Bosun learns from the checks that pass and from tasks that fail, are rejected or discarded; write one with `bosun memory add TEXT`"
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(
        out,
        "{} memor{} of {key}:",
        memories.len(),
        if memories.len() == 1 { "y" } else { "ies" }
    )?;
    writeln!(
        out,
        "{:<5}  {:<15}  {:<6}  {:>4}  {:<26}  TEXT",
        "ID", "KIND", "PINNED", "SEEN", "SOURCE"
    )?;
    for m in &memories {
        writeln!(
            out,
            "{:<5}  {:<15}  {:<6}  {:>4}  {:<26}  {}",
            format!("#{}", m.id),
            m.kind.as_str(),
            if m.pinned { "yes" } else { "-" },
            m.seen,
            m.source_task.as_ref().map_or("you", |t| t.as_str()),
            m.text
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `pinned #3 (convention): TEXT`, or the memory as JSON.
fn said(out: &mut impl Write, json: bool, m: &MemoryRow, verb: &str) -> anyhow::Result<ExitCode> {
    if json {
        serde_json::to_writer_pretty(&mut *out, m)?;
        writeln!(out)?;
    } else {
        writeln!(out, "{verb} #{} ({}): {}", m.id, m.kind.as_str(), m.text)?;
    }
    Ok(ExitCode::SUCCESS)
}
