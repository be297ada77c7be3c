//! The `*** Begin Patch` format that many models write for a tool named `apply_patch`:
//!
//! ```text
//! *** Begin Patch
//! *** Update File: src/main.rs
//! @@ fn main() {
//! -    old();
//! +    new();
//! *** Add File: notes.md
//! +hello
//! *** Delete File: old.txt
//! *** End Patch
//! ```
//!
//! It is read into the same [`FilePatch`]es as a unified diff; its hunks carry no line numbers,
//! so they are placed by their context (and the `@@` anchor line, when given).

use crate::patch::{FilePatch, Hunk, HunkLine};

pub(crate) fn is_begin_patch(text: &str) -> bool {
    text.trim_start().starts_with("*** Begin Patch")
}

pub(crate) fn parse(text: &str) -> Result<Vec<FilePatch>, String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut i = lines
        .iter()
        .position(|l| l.trim() == "*** Begin Patch")
        .map_or(0, |p| p + 1);
    let mut files = Vec::new();
    while i < lines.len() {
        let line = lines[i].trim_end();
        i += 1;
        if line == "*** End Patch" {
            break;
        }
        if line.is_empty() {
            continue;
        }
        if let Some(path) = line.strip_prefix("*** Add File: ") {
            let mut hunk = empty_hunk(None);
            while i < lines.len() && !lines[i].starts_with("*** ") {
                let body = lines[i].strip_prefix('+').ok_or_else(|| {
                    format!(
                        "line {}: every line of an added file must start with '+'",
                        i + 1
                    )
                })?;
                hunk.lines.push(HunkLine::Add(body.to_string()));
                i += 1;
            }
            files.push(FilePatch {
                old_path: None,
                new_path: Some(path.trim().to_string()),
                hunks: vec![hunk],
            });
        } else if let Some(path) = line.strip_prefix("*** Delete File: ") {
            files.push(FilePatch {
                old_path: Some(path.trim().to_string()),
                new_path: None,
                hunks: Vec::new(),
            });
        } else if let Some(path) = line.strip_prefix("*** Update File: ") {
            let mut new_path = path.trim().to_string();
            if let Some(to) = lines.get(i).and_then(|l| l.strip_prefix("*** Move to: ")) {
                new_path = to.trim().to_string();
                i += 1;
            }
            let (hunks, next) = parse_update(&lines, i)?;
            i = next;
            files.push(FilePatch {
                old_path: Some(path.trim().to_string()),
                new_path: Some(new_path),
                hunks,
            });
        } else {
            return Err(format!(
                "line {i}: `{line}` is not understood; expected `*** Update File: path`, `*** Add File: path`, \
                 `*** Delete File: path` or `*** End Patch`"
            ));
        }
    }
    if files.is_empty() {
        return Err("the patch names no file to add, update or delete".into());
    }
    Ok(files)
}

/// The hunks of an `*** Update File:` section starting at `lines[start]`.
fn parse_update(lines: &[&str], start: usize) -> Result<(Vec<Hunk>, usize), String> {
    let mut hunks: Vec<Hunk> = Vec::new();
    let mut i = start;
    while i < lines.len() {
        let line = lines[i];
        if line.trim_end() == "*** End of File" {
            i += 1;
            continue;
        }
        if line.starts_with("*** ") {
            break;
        }
        if let Some(rest) = line.strip_prefix("@@") {
            let anchor = rest.trim();
            hunks.push(empty_hunk((!anchor.is_empty()).then(|| anchor.to_string())));
        } else {
            if hunks.is_empty() {
                hunks.push(empty_hunk(None));
            }
            let number = hunks.len();
            if let Some(hunk) = hunks.last_mut()
                && !hunk.push_line(line)
            {
                return Err(format!(
                    "hunk {number}, line {} of the patch: `{line}` is not part of a hunk; every hunk line must start with ' ', '-' or '+'",
                    i + 1
                ));
            }
        }
        i += 1;
    }
    // A blank line before the next `***` header is separation, not context.
    for hunk in &mut hunks {
        while matches!(hunk.lines.last(), Some(HunkLine::Context(s)) if s.is_empty()) {
            hunk.lines.pop();
        }
    }
    hunks.retain(|h| !h.lines.is_empty());
    Ok((hunks, i))
}

fn empty_hunk(anchor: Option<String>) -> Hunk {
    Hunk {
        old_start: 0,
        anchor,
        lines: Vec::new(),
        old_no_eol: false,
        new_no_eol: false,
    }
}
