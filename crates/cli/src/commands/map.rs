//! `bosun map --repo PATH [--budget TOKENS] [--focus X]… [--json]`: the repository map, ranked
//! (towards the focus: a file when one exists at that path, else a symbol the map defines).

use anyhow::bail;
use bosun_context::RepoMap;
use clap::Args;
use serde_json::json;
use std::io::Write;
use std::process::ExitCode;

#[derive(Args)]
pub struct MapArgs {
    /// The repository (any directory inside it)
    #[arg(long, value_name = "PATH")]
    repo: std::path::PathBuf,
    /// Tokens the rendered map may take (estimated as bytes / 3.5)
    #[arg(long, value_name = "TOKENS", default_value_t = 2048)]
    budget: usize,
    /// Rank towards this file (a path in the repository) or symbol (repeatable)
    #[arg(long, value_name = "X")]
    focus: Vec<String>,
    #[arg(long)]
    json: bool,
}

pub fn map(args: MapArgs) -> anyhow::Result<ExitCode> {
    if args.budget == 0 || args.budget > 1_000_000 {
        bail!(
            "--budget must be between 1 and 1000000 tokens (got {})",
            args.budget
        );
    }
    if !args.repo.is_dir() {
        bail!("--repo {}: not a directory", args.repo.display());
    }
    let root = repo_root(&args.repo);
    // Tags cached in the journal, shared by every worktree (a journal that cannot open costs
    // only the parse).
    let store = bosun_store::Store::open_default().ok();
    let (map, stats) = RepoMap::build_cached(&root, store.as_ref());
    let mut files = Vec::new();
    let mut symbols = Vec::new();
    for x in &args.focus {
        let rel = x.trim_start_matches("./");
        if root.join(rel).is_file() {
            if !map.files.iter().any(|f| f.path == rel) {
                bail!(
                    "--focus {x}: the file is not in the map (not source code the map reads, or left out: ignored, generated, vendored, binary or over 512 KB)"
                );
            }
            files.push(rel.to_string());
        } else if map.files.iter().any(|f| {
            f.tags
                .iter()
                .any(|t| t.role == bosun_syntax::Role::Definition && t.name == *x)
        }) {
            symbols.push(x.clone());
        } else {
            let near = map.nearest_names(x);
            bail!(
                "--focus {x}: no file at that path and no symbol of that name in the map{}",
                if near.is_empty() {
                    String::new()
                } else {
                    format!("; did you mean {}?", near.join(", "))
                }
            );
        }
    }
    let ranked = map.rank(&files, &symbols);
    let rendered = map.render(&ranked, args.budget);
    let mut out = std::io::stdout().lock();
    if args.json {
        let by_path: std::collections::HashMap<&str, &bosun_context::MapFile> =
            map.files.iter().map(|f| (f.path.as_str(), f)).collect();
        let shown: Vec<serde_json::Value> = rendered
            .files
            .iter()
            .map(|r| {
                let defs: Vec<serde_json::Value> = by_path[r.path.as_str()]
                    .tags
                    .iter()
                    .filter(|t| t.role == bosun_syntax::Role::Definition)
                    .map(|t| json!({"name": t.name, "kind": t.kind, "line": t.line, "signature": t.signature}))
                    .collect();
                json!({"path": r.path, "rank": r.rank, "definitions": defs})
            })
            .collect();
        let doc = json!({
            "root": root.display().to_string(),
            "files_read": map.files.len(),
            "parsed": stats.parsed,
            "cached": stats.cached,
            "files": shown,
            "tokens": rendered.tokens,
            "budget": args.budget,
            "text": rendered.text,
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
    } else {
        write!(out, "{}", rendered.text)?;
        writeln!(
            out,
            "({} of {} files, about {} tokens of {}; {} parsed, {} from the cache)",
            rendered.files.len(),
            map.files.len(),
            rendered.tokens,
            args.budget,
            stats.parsed,
            stats.cached
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The repository's top directory (`git rev-parse --show-toplevel`), else the path given.
fn repo_root(path: &std::path::Path) -> std::path::PathBuf {
    std::process::Command::new("git")
        .args(["rev-parse", "--show-toplevel"])
        .current_dir(path)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| std::path::PathBuf::from(s.trim()))
        .unwrap_or_else(|| path.to_path_buf())
}
