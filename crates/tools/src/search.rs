//! `search{pattern, path?, glob?, literal?, context_lines?, max_results?}`: ripgrep's searcher over
//! the worktree's files (.gitignore respected, binary files skipped), results grouped by file:
//!
//! ```text
//! src/app.py
//!   12: def alpha():
//!   13-     return 1
//!   --
//!   40: alpha()
//! … 1,234 more matches in 87 files not shown; narrow with path or glob
//! ```

mod hits;

use crate::path::{confine, normalize_rel};
use crate::read_file::missing;
use crate::{ToolContext, ToolError, ToolHandler, ToolOutput, parse_args, spec};
use bosun_protocol::{ToolAction, ToolSpec};
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder};
use hits::{Allowance, FileHits, thousands};
use ignore::overrides::{Override, OverrideBuilder};
use serde::Deserialize;
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};

/// Matching lines shown at most per call (and by default).
pub const MAX_MATCHES: usize = 200;
/// Context lines before and after a match, at most.
const MAX_CONTEXT_LINES: usize = 10;
/// Bytes of shown lines at most per call; past them, matches are counted, not shown.
const MAX_OUTPUT_BYTES: usize = 100 * 1024;
/// Files larger than this are skipped.
const MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;
/// Matches left out are counted up to this many, then the search stops ("at least N more").
const MAX_COUNTED: usize = 10_000;
/// Past the shown matches, counting the rest stops after this long.
const COUNT_TIME: Duration = Duration::from_secs(5);

pub struct Search;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    pattern: String,
    path: Option<String>,
    glob: Option<String>,
    literal: Option<bool>,
    context_lines: Option<i64>,
    max_results: Option<i64>,
}

#[async_trait::async_trait]
impl ToolHandler for Search {
    fn spec(&self) -> ToolSpec {
        spec(
            "search",
            "Regex (grep -E) search in files, grouped by file.",
            json!({
                "pattern": {"type": "string"},
                "path": {"type": "string", "description": "default ."},
                "glob": {"type": "string", "description": "e.g. *.<ext> (any depth), tests/**"},
                "literal": {"type": "boolean"},
                "context_lines": {"type": "integer", "description": "0-10"},
                "max_results": {"type": "integer", "description": "1-200"},
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
        let args: Args = parse_args("search", &args)?;
        let worktree = ctx.worktree.clone();
        let readable = ctx.readable.clone();
        crate::blocking(move || {
            let all = |_: &str| true;
            let readable: &dyn Fn(&str) -> bool = match &readable {
                Some(r) => r.as_ref(),
                None => &all,
            };
            search(&worktree, &args, readable).map(ToolOutput::text)
        })
        .await
    }
}

/// What the walk saw, for the closing line and the no-match hints.
#[derive(Default)]
struct Tally {
    /// Files searched (past the glob and the ignore rules), binary and large ones included.
    files: usize,
    binary: usize,
    too_large: usize,
    /// Files the policy keeps from the model (`read_deny`), not searched.
    denied: usize,
    /// Matching lines found, shown or not.
    matched: usize,
    shown: usize,
    /// Files with matches that were not shown.
    files_left_out: usize,
    /// The walk stopped before every file was searched: the left-out counts are lower bounds.
    counting_stopped: bool,
}

fn search(
    worktree: &Path,
    args: &Args,
    readable: &dyn Fn(&str) -> bool,
) -> Result<String, ToolError> {
    let max_results = match args.max_results {
        None => MAX_MATCHES,
        Some(n) if n < 1 => {
            return Err(ToolError::Model(format!(
                "max_results must be at least 1 (got {n}); leave it out to see up to {MAX_MATCHES} matches"
            )));
        }
        Some(n) => usize::try_from(n).unwrap_or(MAX_MATCHES).min(MAX_MATCHES),
    };
    let context = match args.context_lines {
        None => 0,
        Some(n) if n < 0 => {
            return Err(ToolError::Model(format!(
                "context_lines must be 0 or more (got {n})"
            )));
        }
        Some(n) => usize::try_from(n)
            .unwrap_or(MAX_CONTEXT_LINES)
            .min(MAX_CONTEXT_LINES),
    };
    let literal = args.literal.unwrap_or(false);
    let matcher = matcher(&args.pattern, literal)?;
    let resolved = confine(worktree, args.path.as_deref().unwrap_or("."))?;
    let shown = resolved.shown();
    std::fs::metadata(&resolved.abs).map_err(|e| missing(shown, &e))?;
    let glob = args
        .glob
        .as_deref()
        .map(|g| glob_filter(&resolved.root, g))
        .transpose()?;

    let mut walk = ignore::WalkBuilder::new(&resolved.abs);
    walk.hidden(false)
        .require_git(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(|e| e.file_name() != ".git");
    let mut with_context = searcher(context);
    let mut counting = searcher(0);
    let started = Instant::now();
    let mut tally = Tally::default();
    let mut out = String::new();
    for entry in walk.build().flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        if glob
            .as_ref()
            .is_some_and(|g| g.matched(entry.path(), false).is_ignore())
        {
            continue;
        }
        let rel = entry
            .path()
            .strip_prefix(&resolved.root)
            .unwrap_or(entry.path())
            .to_string_lossy()
            .replace('\\', "/");
        if !readable(&rel) {
            tally.denied += 1;
            continue;
        }
        tally.files += 1;
        if entry.metadata().map(|m| m.len()).unwrap_or(0) > MAX_FILE_BYTES {
            tally.too_large += 1;
            continue;
        }
        let left_out = tally.matched - tally.shown;
        let full = tally.shown >= max_results || out.len() >= MAX_OUTPUT_BYTES;
        if full && (left_out >= MAX_COUNTED || started.elapsed() > COUNT_TIME) {
            tally.counting_stopped = true;
            break;
        }
        let allowance = Allowance {
            show: if full { 0 } else { max_results - tally.shown },
            bytes: MAX_OUTPUT_BYTES.saturating_sub(out.len()),
            count: MAX_COUNTED - left_out,
        };
        let mut hits = FileHits::new(&matcher, allowance);
        let searcher = if full {
            &mut counting
        } else {
            &mut with_context
        };
        if searcher
            .search_path(&matcher, entry.path(), &mut hits)
            .is_err()
        {
            continue;
        }
        if hits.binary {
            tally.binary += 1;
            continue;
        }
        if hits.matched == 0 {
            continue;
        }
        tally.matched += hits.matched;
        tally.shown += hits.shown;
        if hits.shown < hits.matched {
            tally.files_left_out += 1;
            if tally.matched - tally.shown >= MAX_COUNTED {
                tally.counting_stopped = true;
            }
        }
        if hits.lines.is_empty() {
            continue;
        }
        push_file(&mut out, &rel, &hits.lines, context > 0);
    }
    if tally.matched == 0 {
        return Ok(no_match(args, shown, literal, &tally));
    }
    if tally.shown < tally.matched {
        out.push_str(&left_out_line(&tally, max_results, context));
    }
    Ok(out)
}

/// A file's path on its own line, then its lines (`  12: match`, `  13- context`), with `  --`
/// between groups that are not adjacent when there is context.
fn push_file(out: &mut String, rel: &str, lines: &[hits::Line], separate: bool) {
    out.push_str(rel);
    out.push('\n');
    let mut previous: Option<u64> = None;
    for line in lines {
        if separate && previous.is_some_and(|p| line.number > p + 1) {
            out.push_str("  --\n");
        }
        let mark = if line.is_match { ':' } else { '-' };
        out.push_str(&format!("  {}{mark} {}\n", line.number, line.text));
        previous = Some(line.number);
    }
}

fn matcher(pattern: &str, literal: bool) -> Result<RegexMatcher, ToolError> {
    RegexMatcherBuilder::new()
        .fixed_strings(literal)
        .line_terminator(Some(b'\n'))
        .ban_byte(Some(0))
        .size_limit(4 * 1024 * 1024)
        .dfa_size_limit(16 * 1024 * 1024)
        .build(pattern)
        .map_err(|e| match e.kind() {
            grep_regex::ErrorKind::NotAllowed(_) => ToolError::Model(format!(
                "`{pattern}` cannot match: search looks at one line at a time, so a pattern \
                 cannot contain a line break; search for one line of the text"
            )),
            _ if literal => ToolError::Model(format!("invalid pattern `{pattern}`: {e}")),
            _ => ToolError::Model(format!(
                "invalid regex `{pattern}`: {e}\nTo find the text as written, pass literal: true; \
                 or escape special characters such as ( [ {{ . * + ? | with a backslash."
            )),
        })
}

fn searcher(context: usize) -> Searcher {
    SearcherBuilder::new()
        .binary_detection(BinaryDetection::quit(0))
        .line_number(true)
        .before_context(context)
        .after_context(context)
        .build()
}

/// The glob as ripgrep's `-g` reads it, against paths from the worktree's root: `*.py` matches
/// at any depth, `tests/**` everything under `tests`, `!*.min.js` leaves files out.
fn glob_filter(root: &Path, glob: &str) -> Result<Override, ToolError> {
    let invalid = |e: ignore::Error| ToolError::Model(format!("invalid glob `{glob}`: {e}"));
    let mut builder = OverrideBuilder::new(root);
    builder.add(glob).map_err(invalid)?;
    builder.build().map_err(invalid)
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{} {}", thousands(n), if n == 1 { one } else { many })
}

fn left_out_line(tally: &Tally, max_results: usize, context: usize) -> String {
    let at_least = if tally.counting_stopped {
        "at least "
    } else {
        ""
    };
    let mut hint = String::from("narrow with path or glob");
    if tally.shown < max_results {
        if context > 0 {
            hint.push_str(", or use fewer context_lines");
        }
    } else if max_results < MAX_MATCHES {
        hint.push_str(&format!(", or raise max_results (up to {MAX_MATCHES})"));
    }
    format!(
        "… {at_least}{} in {at_least}{} not shown; {hint}\n",
        plural(tally.matched - tally.shown, "more match", "more matches"),
        plural(tally.files_left_out, "file", "files"),
    )
}

fn no_match(args: &Args, shown: &str, literal: bool, tally: &Tally) -> String {
    let mut out = format!("No matches for `{}` in `{shown}`", args.pattern);
    if let Some(glob) = &args.glob {
        out.push_str(&format!(
            " (the glob `{glob}` matched {} there)",
            plural(tally.files, "file", "files")
        ));
    }
    out.push('.');
    let mut skipped = Vec::new();
    if tally.binary > 0 {
        skipped.push(plural(tally.binary, "binary file", "binary files"));
    }
    if tally.too_large > 0 {
        skipped.push(format!(
            "{} over {} MB",
            plural(tally.too_large, "file", "files"),
            MAX_FILE_BYTES / 1024 / 1024
        ));
    }
    if tally.denied > 0 {
        skipped.push(format!(
            "{} the policy does not let you read",
            plural(tally.denied, "file", "files")
        ));
    }
    if !skipped.is_empty() {
        out.push_str(&format!(" Skipped: {}.", skipped.join(" and ")));
    }
    let mut special: Vec<String> = Vec::new();
    for c in args
        .pattern
        .chars()
        .filter(|c| "()[]{}.*+?|^$".contains(*c))
    {
        let quoted = format!("`{c}`");
        if !special.contains(&quoted) {
            special.push(quoted);
        }
    }
    if !literal && !special.is_empty() {
        out.push_str(&format!(
            " The pattern is a regex, where {} {} special; to find the text as written, pass literal: true.",
            special.join(" "),
            if special.len() == 1 { "is" } else { "are" }
        ));
    }
    if args.glob.as_ref().is_some_and(|_| tally.files == 0) {
        out.push_str(
            " A glob is matched against paths from the worktree's root: `tests/**` is everything \
             under tests, `*.<extension>` a name at any depth.",
        );
    }
    out
}
