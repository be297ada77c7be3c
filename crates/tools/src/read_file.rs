//! `read_file{path, offset?, limit?}`: a text file with numbered lines, a page at a time.

use crate::path::{confine, normalize_rel};
use crate::text::{human_size, looks_binary, truncate_at};
use crate::{ToolContext, ToolError, ToolHandler, ToolOutput, on_worktree, parse_args, spec};
use bosun_protocol::{ToolAction, ToolSpec};
use serde::Deserialize;
use serde_json::json;
use std::path::Path;

/// Lines shown at most per call.
pub const MAX_LINES: usize = 2000;
/// Bytes shown at most per call.
pub const MAX_BYTES: usize = 100 * 1024;
/// Characters shown at most per line.
const MAX_LINE_CHARS: usize = 2000;
/// A file longer than this (lines or bytes), read without offset or limit, comes as its
/// outline and first lines.
pub const OUTLINE_LINES: usize = 400;
pub const OUTLINE_BYTES: usize = 32 * 1024;
/// Lines shown after the outline.
const OUTLINE_FIRST_LINES: usize = 60;
/// Outline lines shown at most.
const OUTLINE_MAX_DEFINITIONS: usize = 200;
/// Files larger than this are not read whole.
const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

pub struct ReadFile;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    path: String,
    offset: Option<usize>,
    limit: Option<usize>,
}

#[async_trait::async_trait]
impl ToolHandler for ReadFile {
    fn spec(&self) -> ToolSpec {
        spec(
            "read_file",
            "Read a text file; lines are numbered.",
            json!({
                "path": {"type": "string"},
                "offset": {"type": "integer", "description": "first line, 1-based"},
                "limit": {"type": "integer", "description": "max lines (2000)"},
            }),
            &["path"],
        )
    }

    fn action(&self, args: &serde_json::Value) -> Result<ToolAction, ToolError> {
        let args: Args = parse_args("read_file", args)?;
        Ok(ToolAction::Read {
            paths: vec![normalize_rel(&args.path)?],
        })
    }

    async fn handle(
        &self,
        args: serde_json::Value,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        on_worktree("read_file", &args, ctx, |w, a| {
            read(w, a).map(ToolOutput::text)
        })
        .await
    }
}

fn read(worktree: &Path, args: &Args) -> Result<String, ToolError> {
    let resolved = confine(worktree, &args.path)?;
    let shown = resolved.shown();
    let meta = std::fs::metadata(&resolved.abs).map_err(|e| missing_in(worktree, shown, &e))?;
    if meta.is_dir() {
        return Err(ToolError::Model(format!(
            "`{shown}` is a directory; use list_dir to see what it contains"
        )));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(ToolError::Model(format!(
            "`{shown}` is {}; too large to read. Use search, or run_command with sed -n to print a range",
            human_size(meta.len())
        )));
    }
    let bytes = std::fs::read(&resolved.abs).map_err(|e| missing(shown, &e))?;
    if looks_binary(&bytes) {
        return Ok(format!(
            "`{shown}` is a binary file ({}); its contents are not shown.",
            human_size(bytes.len() as u64)
        ));
    }
    if bytes.is_empty() {
        return Ok(format!("`{shown}` is empty."));
    }
    let utf8 = std::str::from_utf8(&bytes).is_ok();
    let text = String::from_utf8_lossy(&bytes);
    let body = text.strip_suffix('\n').unwrap_or(&text);
    let total = body.split('\n').count();
    if args.offset.is_none()
        && args.limit.is_none()
        && (total > OUTLINE_LINES || bytes.len() > OUTLINE_BYTES)
    {
        return Ok(outline(shown, &bytes, body, total, utf8));
    }
    let offset = args.offset.unwrap_or(1).max(1);
    if offset > total {
        return Err(ToolError::Model(format!(
            "`{shown}` has {total} lines; offset {offset} is past the end"
        )));
    }
    let limit = args.limit.unwrap_or(MAX_LINES).clamp(1, MAX_LINES);
    let mut out = String::new();
    let mut last = offset - 1;
    for (i, line) in body.split('\n').enumerate().skip(offset - 1).take(limit) {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let cut = truncate_at(line, MAX_LINE_CHARS);
        let more = if cut.len() < line.len() {
            " … [line truncated]"
        } else {
            ""
        };
        let numbered = format!("{:>6}\t{cut}{more}\n", i + 1);
        if out.len() + numbered.len() > MAX_BYTES && last >= offset {
            break;
        }
        out.push_str(&numbered);
        last = i + 1;
    }
    if last < total {
        out.push_str(&format!(
            "[Showing lines {offset}-{last} of {total}. To read on, call read_file with offset={}.]\n",
            last + 1
        ));
    }
    if !utf8 {
        out.push_str(&format!(
            "[`{shown}` is not valid UTF-8: invalid bytes are shown as U+FFFD; edit_file will not edit it.]\n"
        ));
    }
    Ok(out)
}

/// A big file read without a range: its definitions (from the same tags as the repository
/// map) and its first lines, and how to read the rest.
fn outline(shown: &str, bytes: &[u8], body: &str, total: usize, utf8: bool) -> String {
    let lines = bosun_syntax::Language::for_path(shown)
        .and_then(|lang| bosun_syntax::tags(lang, bytes))
        .map(|tags| bosun_context::outline_lines(&tags))
        .unwrap_or_default();
    let mut out = format!(
        "`{shown}` has {total} lines ({}): too long to show at once.\n",
        human_size(bytes.len() as u64)
    );
    if lines.is_empty() {
        out.push_str("It has no outline (no definitions found).\n");
    } else {
        out.push_str(&format!(
            "Its outline ({} definition{}, as `line│ signature`):\n",
            lines.len(),
            if lines.len() == 1 { "" } else { "s" }
        ));
        for l in lines.iter().take(OUTLINE_MAX_DEFINITIONS) {
            out.push_str(l);
        }
        if lines.len() > OUTLINE_MAX_DEFINITIONS {
            // The map (which `symbols` asks) leaves out files over its size limit.
            let hint = if bytes.len() as u64 <= bosun_context::MAP_FILE_MAX_BYTES {
                format!("; symbols with path={shown} lists them")
            } else {
                String::new()
            };
            out.push_str(&format!(
                "    ⋮ {} more{hint}\n",
                lines.len() - OUTLINE_MAX_DEFINITIONS
            ));
        }
    }
    out.push_str(&format!("Lines 1-{}:\n", OUTLINE_FIRST_LINES.min(total)));
    for (i, line) in body.split('\n').take(OUTLINE_FIRST_LINES).enumerate() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let cut = truncate_at(line, MAX_LINE_CHARS);
        let more = if cut.len() < line.len() {
            " … [line truncated]"
        } else {
            ""
        };
        out.push_str(&format!("{:>6}\t{cut}{more}\n", i + 1));
    }
    out.push_str(&format!(
        "[To read more, call read_file with offset and limit: offset={} limit=200 for the next lines, or offset=LINE of a definition above.]\n",
        OUTLINE_FIRST_LINES.min(total) + 1
    ));
    if !utf8 {
        out.push_str(&format!(
            "[`{shown}` is not valid UTF-8: invalid bytes are shown as U+FFFD; edit_file will not edit it.]\n"
        ));
    }
    out
}

/// The worktree's files called `name` (at most 3, in name order; hidden files and
/// directories, `node_modules` and `target` left out; symlinks not followed), relative with
/// `/`: what a model that wrote a wrong directory probably meant.
pub fn files_named(worktree: &Path, name: &str) -> Vec<String> {
    fn walk(
        dir: &Path,
        rel: &str,
        name: &str,
        seen: &mut usize,
        out: &mut Vec<String>,
        depth: usize,
    ) {
        if depth > 6 || *seen > 5000 || out.len() >= 3 {
            return;
        }
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            *seen += 1;
            let n = e.file_name().to_string_lossy().into_owned();
            if n.starts_with('.') || n == "node_modules" || n == "target" {
                continue;
            }
            let path = if rel.is_empty() {
                n.clone()
            } else {
                format!("{rel}/{n}")
            };
            let Ok(meta) = e.path().symlink_metadata() else {
                continue;
            };
            if meta.is_dir() {
                walk(&e.path(), &path, name, seen, out, depth + 1);
            } else if meta.is_file() && n == name {
                out.push(path);
            }
        }
    }
    let mut found = Vec::new();
    walk(worktree, "", name, &mut 0, &mut found, 0);
    found
}

/// [`missing`], naming the files of the worktree the model probably meant: those with the same
/// file name (`src/stats.py` asked, `stats.py` there). Hidden files and directories are never
/// offered.
pub(crate) fn missing_in(worktree: &Path, shown: &str, e: &std::io::Error) -> ToolError {
    if e.kind() != std::io::ErrorKind::NotFound {
        return missing(shown, e);
    }
    let Some(name) = shown
        .rsplit('/')
        .next()
        .filter(|n| !n.is_empty() && !n.starts_with('.'))
    else {
        return missing(shown, e);
    };
    let found = files_named(worktree, name);
    match found.as_slice() {
        [] => missing(shown, e),
        paths => ToolError::Model(format!(
            "`{shown}` does not exist; did you mean {}?",
            paths
                .iter()
                .map(|p| format!("`{p}`"))
                .collect::<Vec<_>>()
                .join(" or ")
        )),
    }
}

pub(crate) fn missing(shown: &str, e: &std::io::Error) -> ToolError {
    if e.kind() == std::io::ErrorKind::NotFound {
        ToolError::Model(format!(
            "`{shown}` does not exist; use list_dir or search to find the right path"
        ))
    } else {
        ToolError::Model(format!("could not read `{shown}`: {e}"))
    }
}
