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
    // What a task may not read is not in its map, nor in this one (the user's and the
    // repository's policy files).
    let policy = bosun_core::PolicyFiles::new(&crate::home(), &root, None, None)
        .load()
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let (map, stats) =
        RepoMap::build_keeping(&root, store.as_ref(), &|p| !policy.is_read_denied(p));
    let mut files = Vec::new();
    let mut symbols = Vec::new();
    for x in &args.focus {
        if x.trim().is_empty() {
            bail!("--focus needs a file of the repository or a symbol, not an empty string");
        }
        let given = std::path::Path::new(x);
        // An absolute path inside the repository counts as its relative path.
        let rel = if given.is_absolute() {
            let real = given.canonicalize().unwrap_or_else(|_| given.to_path_buf());
            let root_real = root.canonicalize().unwrap_or_else(|_| root.clone());
            match real.strip_prefix(&root_real) {
                Ok(r) => r.to_string_lossy().replace('\\', "/"),
                Err(_) => bail!("--focus {x}: not inside the repository {}", root.display()),
            }
        } else {
            x.trim_start_matches("./").to_string()
        };
        if rel.split('/').any(|p| p == "..") {
            bail!("--focus {x}: give a path inside the repository, without `..`");
        }
        if root.join(&rel).is_dir() {
            bail!("--focus {x}: a directory; give one of its files or a symbol");
        }
        if root.join(&rel).is_file() {
            if !map.files.iter().any(|f| f.path == rel) {
                bail!(
                    "--focus {x}: the file is not in the map (not source code the map reads, or left out: ignored, generated, vendored, binary, read-denied or over 512 KB)"
                );
            }
            files.push(rel);
        } else if map.files.iter().any(|f| {
            f.tags
                .iter()
                .any(|t| t.role == bosun_syntax::Role::Definition && t.name == *x)
        }) {
            symbols.push(x.clone());
        } else {
            let mut near = map.nearest_names(x);
            near.extend(nearest_files(&map, &rel));
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
    let rendered = map.render_focused(&ranked, args.budget, &symbols);
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

/// Up to three files of the map whose name is near `x`'s (containing it, or it containing
/// theirs without the extension).
fn nearest_files(map: &RepoMap, x: &str) -> Vec<String> {
    let want = x.rsplit('/').next().unwrap_or(x).to_lowercase();
    let stem = want.split('.').next().unwrap_or(&want).to_string();
    if stem.len() < 2 {
        return Vec::new();
    }
    map.files
        .iter()
        .filter(|f| {
            let name = f.path.rsplit('/').next().unwrap_or(&f.path).to_lowercase();
            let own = name.split('.').next().unwrap_or(&name).to_string();
            name.contains(&stem) || (own.len() > 2 && stem.contains(&own))
        })
        .take(3)
        .map(|f| f.path.clone())
        .collect()
}
