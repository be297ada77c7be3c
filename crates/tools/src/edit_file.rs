//! `edit_file{path, old_string, new_string, replace_all?}`: a string replacement that keeps the
//! file's line endings. Exact first; when `old_string` is not in the file exactly, a unique
//! match ignoring trailing whitespace or with a uniform indentation shift (see
//! [`crate::edit_match`]).

use crate::edit_match::{Loose, LooseMatch, loose_replace};
use crate::path::{confine_for_write, normalize_rel};
use crate::read_file::missing_in;
use crate::text::{looks_binary, truncate_at};
use crate::write_file::write_text;
use crate::{ToolContext, ToolError, ToolHandler, ToolOutput, on_worktree, parse_args, spec};
use bosun_protocol::{ToolAction, ToolSpec};
use serde::Deserialize;
use serde_json::json;
use std::path::Path;

pub struct EditFile;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    path: String,
    old_string: String,
    new_string: String,
    #[serde(default)]
    replace_all: bool,
}

#[async_trait::async_trait]
impl ToolHandler for EditFile {
    fn spec(&self) -> ToolSpec {
        spec(
            "edit_file",
            "Replace exact old_string (unique unless replace_all) with new_string.",
            json!({
                "path": {"type": "string"},
                "old_string": {"type": "string"},
                "new_string": {"type": "string"},
                "replace_all": {"type": "boolean"},
            }),
            &["path", "old_string", "new_string"],
        )
    }

    fn action(&self, args: &serde_json::Value) -> Result<ToolAction, ToolError> {
        let args: Args = parse_args("edit_file", args)?;
        Ok(ToolAction::Write {
            paths: vec![normalize_rel(&args.path)?],
        })
    }

    async fn handle(
        &self,
        args: serde_json::Value,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        on_worktree("edit_file", &args, ctx, edit).await
    }
}

fn edit(worktree: &Path, args: &Args) -> Result<ToolOutput, ToolError> {
    let resolved = confine_for_write(worktree, &args.path)?;
    let rel = resolved.rel.clone();
    if args.old_string.is_empty() {
        return Err(ToolError::Model(
            "old_string is empty; to create a file or replace it whole, use write_file".into(),
        ));
    }
    if args.old_string == args.new_string {
        return Err(ToolError::Model(
            "old_string and new_string are the same: this edit changes nothing; give the text to replace and what to replace it with".into(),
        ));
    }
    if std::fs::metadata(&resolved.abs).is_ok_and(|m| m.is_dir()) {
        return Err(ToolError::Model(format!(
            "`{rel}` is a directory; give a file path"
        )));
    }
    let bytes = std::fs::read(&resolved.abs).map_err(|e| missing_in(worktree, &rel, &e))?;
    if looks_binary(&bytes) {
        return Err(ToolError::Model(format!(
            "`{rel}` is a binary file; edit_file only edits text"
        )));
    }
    let Ok(text) = String::from_utf8(bytes) else {
        return Err(ToolError::Model(format!(
            "`{rel}` is not valid UTF-8; edit_file will not edit it, to avoid mangling its bytes"
        )));
    };
    let crlf = uses_crlf(&text);
    let (old, new) = if crlf {
        (to_crlf(&args.old_string), to_crlf(&args.new_string))
    } else {
        (args.old_string.clone(), args.new_string.clone())
    };
    let mut count = text.matches(&old).count();
    let (old, new) = if count == 0 && crlf {
        // A file with mixed endings: try the text exactly as given.
        count = text.matches(&args.old_string).count();
        (args.old_string.clone(), args.new_string.clone())
    } else {
        (old, new)
    };
    if count == 0 {
        let eol = if crlf { "\r\n" } else { "\n" };
        match loose_replace(&text, &args.old_string, &args.new_string, eol) {
            LooseMatch::Unique { updated, how, line } => {
                write_text(&resolved.abs, &rel, updated.as_bytes())?;
                return Ok(ToolOutput::wrote(
                    format!(
                        "Edited `{rel}`: replaced 1 occurrence at line {line} (matched {}).",
                        how.describe()
                    ),
                    vec![rel],
                ));
            }
            LooseMatch::Ambiguous { lines, how } => {
                let shown: Vec<String> = lines.iter().take(10).map(|l| l.to_string()).collect();
                return Err(ToolError::Model(format!(
                    "old_string was not found exactly in `{rel}`; {} it matches {} places (lines {}); add surrounding lines to make it unique, copied exactly",
                    match how {
                        Loose::TrailingWhitespace => "ignoring trailing whitespace,",
                        Loose::Indentation => "with the indentation shifted,",
                    },
                    lines.len(),
                    shown.join(", ")
                )));
            }
            LooseMatch::None => {}
        }
        let mut msg = format!(
            "old_string was not found in `{rel}`, not even ignoring trailing whitespace or a shift of indentation; every other character must match exactly."
        );
        if let Some(closest) = closest_lines(&text, &args.old_string) {
            msg.push_str(&format!("\nThe closest lines are:\n{closest}"));
        }
        msg.push_str("\nRead the file again and copy the text exactly.");
        return Err(ToolError::Model(msg));
    }
    if count > 1 && !args.replace_all {
        return Err(ToolError::Model(format!(
            "old_string was found {count} times in `{rel}`; add surrounding context to make it unique, or set replace_all"
        )));
    }
    let updated = if args.replace_all {
        text.replace(&old, &new)
    } else {
        text.replacen(&old, &new, 1)
    };
    write_text(&resolved.abs, &rel, updated.as_bytes())?;
    let what = if count == 1 {
        "1 occurrence".to_string()
    } else {
        format!("{count} occurrences")
    };
    Ok(ToolOutput::wrote(
        format!("Edited `{rel}`: replaced {what}."),
        vec![rel],
    ))
}

/// A file uses CRLF when most of its line breaks are `\r\n`.
fn uses_crlf(text: &str) -> bool {
    let crlf = text.matches("\r\n").count();
    crlf > 0 && crlf * 2 >= text.matches('\n').count()
}

fn to_crlf(s: &str) -> String {
    s.replace("\r\n", "\n").replace('\n', "\r\n")
}

/// The lines of `text` that look most like the start of `wanted`, numbered, for the model to
/// copy from. `None` when nothing is similar or the file is too large to scan cheaply.
fn closest_lines(text: &str, wanted: &str) -> Option<String> {
    if text.len() > 2 * 1024 * 1024 {
        return None;
    }
    let first = wanted.lines().map(str::trim).find(|l| !l.is_empty())?;
    let want: Vec<&str> = words(first);
    if want.is_empty() {
        return None;
    }
    let lines: Vec<&str> = text.lines().collect();
    let (best, score) = lines
        .iter()
        .enumerate()
        .map(|(i, line)| {
            let have = words(line);
            let common = want.iter().filter(|w| have.contains(w)).count();
            let union = want.len() + have.len() - common;
            (i, common as f64 / union.max(1) as f64)
        })
        .fold((0, 0.0), |acc, x| if x.1 > acc.1 { x } else { acc });
    if score < 0.3 {
        return None;
    }
    let span = wanted.lines().count().max(1);
    let end = (best + span + 1).min(lines.len());
    let start = best.saturating_sub(1);
    Some(
        (start..end)
            .map(|i| {
                let line = lines[i].strip_suffix('\r').unwrap_or(lines[i]);
                format!("{:>6}\t{}\n", i + 1, truncate_at(line, 300))
            })
            .collect(),
    )
}

fn words(line: &str) -> Vec<&str> {
    line.split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| !w.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crlf_detection_needs_a_majority() {
        assert!(uses_crlf("a\r\nb\r\n"));
        assert!(!uses_crlf("a\nb\nc\r\n"));
        assert!(!uses_crlf("a\nb\n"));
    }

    #[test]
    fn closest_lines_point_at_the_near_miss() {
        let text = "fn main() {\n    let total = compute(1, 2);\n    println!(\"{total}\");\n}\n";
        let found = closest_lines(text, "let total = compute(1, 3);").unwrap_or_default();
        assert!(
            found.contains("     2\t    let total = compute(1, 2);"),
            "{found}"
        );
    }
}
