//! `list_dir{path?, depth?}`: a directory tree, .gitignore respected, `.git` skipped.

use crate::path::{confine, normalize_rel};
use crate::read_file::missing;
use crate::{ToolContext, ToolError, ToolHandler, ToolOutput, on_worktree, parse_args, spec};
use bosun_protocol::{ToolAction, ToolSpec};
use serde::Deserialize;
use serde_json::json;
use std::path::Path;

/// Entries listed at most per call.
pub const MAX_ENTRIES: usize = 500;
const DEFAULT_DEPTH: usize = 2;
const MAX_DEPTH: usize = 10;

pub struct ListDir;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    path: Option<String>,
    depth: Option<usize>,
}

#[async_trait::async_trait]
impl ToolHandler for ListDir {
    fn spec(&self) -> ToolSpec {
        spec(
            "list_dir",
            "List a directory tree (gitignored files skipped).",
            json!({
                "path": {"type": "string", "description": "default ."},
                "depth": {"type": "integer", "description": "default 2"},
            }),
            &[],
        )
    }

    fn action(&self, args: &serde_json::Value) -> Result<ToolAction, ToolError> {
        let args: Args = parse_args("list_dir", args)?;
        let path = normalize_rel(args.path.as_deref().unwrap_or("."))?;
        Ok(ToolAction::Read {
            paths: vec![if path.is_empty() { ".".into() } else { path }],
        })
    }

    async fn handle(
        &self,
        args: serde_json::Value,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        on_worktree("list_dir", &args, ctx, |w, a| {
            list(w, a).map(ToolOutput::text)
        })
        .await
    }
}

fn list(worktree: &Path, args: &Args) -> Result<String, ToolError> {
    let resolved = confine(worktree, args.path.as_deref().unwrap_or("."))?;
    let shown = resolved.shown();
    let meta = std::fs::metadata(&resolved.abs).map_err(|e| missing(shown, &e))?;
    if !meta.is_dir() {
        return Err(ToolError::Model(format!(
            "`{shown}` is a file, not a directory; use read_file to read it"
        )));
    }
    let depth = args.depth.unwrap_or(DEFAULT_DEPTH).clamp(1, MAX_DEPTH);
    let walk = ignore::WalkBuilder::new(&resolved.abs)
        .hidden(false)
        .require_git(false)
        .max_depth(Some(depth))
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(|e| e.file_name() != ".git")
        .build();
    let mut out = format!("{shown}/\n");
    let mut count = 0;
    let mut capped = false;
    for entry in walk.flatten() {
        if entry.depth() == 0 {
            continue;
        }
        if count == MAX_ENTRIES {
            capped = true;
            break;
        }
        count += 1;
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        let indent = "  ".repeat(entry.depth());
        let name = entry.file_name().to_string_lossy();
        out.push_str(&format!(
            "{indent}{name}{}\n",
            if is_dir { "/" } else { "" }
        ));
    }
    if count == 0 {
        out.push_str("  (empty)\n");
    }
    if capped {
        out.push_str(&format!(
            "[Listing stopped at {MAX_ENTRIES} entries; list a subdirectory or use a smaller depth.]\n"
        ));
    }
    Ok(out)
}
