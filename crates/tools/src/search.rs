//! `search{pattern, path?, glob?}`: a regex over file contents, .gitignore respected, results as
//! `path:line: text`.

use crate::path::{confine, normalize_rel};
use crate::read_file::missing;
use crate::text::{looks_binary, truncate_at};
use crate::{ToolContext, ToolError, ToolHandler, ToolOutput, on_worktree, parse_args, spec};
use bosun_protocol::{ToolAction, ToolSpec};
use serde::Deserialize;
use serde_json::json;
use std::path::Path;

/// Matching lines shown at most per call.
pub const MAX_MATCHES: usize = 200;
const MAX_LINE_CHARS: usize = 300;
/// Files larger than this are skipped.
const MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;

pub struct Search;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    pattern: String,
    path: Option<String>,
    glob: Option<String>,
}

#[async_trait::async_trait]
impl ToolHandler for Search {
    fn spec(&self) -> ToolSpec {
        spec(
            "search",
            "Regex search in files (path:line: text).",
            json!({
                "pattern": {"type": "string", "description": "a regular expression, as for grep -E"},
                "path": {"type": "string", "description": "a directory or file of the repository; default ."},
                "glob": {"type": "string", "description": "only files whose path matches this glob, e.g. **/*.<extension> or tests/**"},
            }),
            &["pattern"],
        )
    }

    fn action(&self, args: &serde_json::Value) -> Result<ToolAction, ToolError> {
        let args: Args = parse_args("search", args)?;
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
        on_worktree("search", &args, ctx, |w, a| {
            search(w, a).map(ToolOutput::text)
        })
        .await
    }
}

fn search(worktree: &Path, args: &Args) -> Result<String, ToolError> {
    let regex = regex::RegexBuilder::new(&args.pattern)
        .size_limit(4 * 1024 * 1024)
        .build()
        .map_err(|e| {
            ToolError::Model(format!(
                "invalid regex `{}`: {e}\nEscape special characters such as ( [ {{ . * + ? | with a backslash to match them literally.",
                args.pattern
            ))
        })?;
    let resolved = confine(worktree, args.path.as_deref().unwrap_or("."))?;
    let shown = resolved.shown();
    std::fs::metadata(&resolved.abs).map_err(|e| missing(shown, &e))?;
    let mut walk = ignore::WalkBuilder::new(&resolved.abs);
    walk.hidden(false)
        .require_git(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(|e| e.file_name() != ".git");
    if let Some(glob) = &args.glob {
        let mut overrides = ignore::overrides::OverrideBuilder::new(&resolved.abs);
        overrides
            .add(glob)
            .map_err(|e| ToolError::Model(format!("invalid glob `{glob}`: {e}")))?;
        let built = overrides
            .build()
            .map_err(|e| ToolError::Model(format!("invalid glob `{glob}`: {e}")))?;
        walk.overrides(built);
    }

    let mut out = String::new();
    let mut matches = 0;
    let mut capped = false;
    'files: for entry in walk.build().flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        if entry.metadata().map(|m| m.len()).unwrap_or(0) > MAX_FILE_BYTES {
            continue;
        }
        let Ok(bytes) = std::fs::read(entry.path()) else {
            continue;
        };
        if looks_binary(&bytes) {
            continue;
        }
        let rel = entry
            .path()
            .strip_prefix(&resolved.root)
            .unwrap_or(entry.path())
            .to_string_lossy()
            .into_owned();
        let text = String::from_utf8_lossy(&bytes);
        for (i, line) in text.lines().enumerate() {
            if !regex.is_match(line) {
                continue;
            }
            if matches == MAX_MATCHES {
                capped = true;
                break 'files;
            }
            matches += 1;
            let cut = truncate_at(line, MAX_LINE_CHARS);
            let more = if cut.len() < line.len() { " …" } else { "" };
            out.push_str(&format!("{rel}:{}: {cut}{more}\n", i + 1));
        }
    }
    if matches == 0 {
        let filter = args
            .glob
            .as_ref()
            .map(|g| format!(" (files matching `{g}`)"))
            .unwrap_or_default();
        return Ok(format!(
            "No matches for `{}` in `{shown}`{filter}.",
            args.pattern
        ));
    }
    if capped {
        out.push_str(&format!(
            "[Showing the first {MAX_MATCHES} matches; narrow the search with path or glob, or a more specific pattern.]\n"
        ));
    }
    Ok(out)
}
