//! Unified diffs: parsing (`--- a/x` / `+++ b/x` or `diff --git` headers, `/dev/null` for added
//! and deleted files, `@@` hunks) and applying hunks to text by matching their context near the
//! stated line.

use std::fmt::Write as _;

/// One file's part of a patch. `None` stands for `/dev/null`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FilePatch {
    pub old_path: Option<String>,
    pub new_path: Option<String>,
    pub hunks: Vec<Hunk>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hunk {
    /// 1-based; 0 when the header gave no numbers (a bare `@@`).
    pub old_start: usize,
    /// A line the hunk comes after (`@@ fn main() {` in the `*** Begin Patch` format), used
    /// to place hunks that carry no line numbers.
    pub anchor: Option<String>,
    pub lines: Vec<HunkLine>,
    /// `\ No newline at end of file` after the old side's last line.
    pub old_no_eol: bool,
    /// `\ No newline at end of file` after the new side's last line.
    pub new_no_eol: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HunkLine {
    Context(String),
    Remove(String),
    Add(String),
}

impl Hunk {
    /// Adds a ` `, `-`, `+` or `\\` line (an empty line counts as empty context); false when
    /// `line` is none of those.
    pub fn push_line(&mut self, line: &str) -> bool {
        match line.as_bytes().first() {
            Some(b' ') => self.lines.push(HunkLine::Context(line[1..].to_string())),
            Some(b'-') => self.lines.push(HunkLine::Remove(line[1..].to_string())),
            Some(b'+') => self.lines.push(HunkLine::Add(line[1..].to_string())),
            Some(b'\\') => match self.lines.last() {
                Some(HunkLine::Context(_)) => {
                    self.old_no_eol = true;
                    self.new_no_eol = true;
                }
                Some(HunkLine::Remove(_)) => self.old_no_eol = true,
                Some(HunkLine::Add(_)) => self.new_no_eol = true,
                None => {}
            },
            // An empty line inside a hunk is an empty context line whose space was stripped.
            None => self.lines.push(HunkLine::Context(String::new())),
            Some(_) => return false,
        }
        true
    }

    pub fn old_lines(&self) -> Vec<&str> {
        self.lines
            .iter()
            .filter_map(|l| match l {
                HunkLine::Context(s) | HunkLine::Remove(s) => Some(s.as_str()),
                HunkLine::Add(_) => None,
            })
            .collect()
    }

    pub fn new_lines(&self) -> Vec<String> {
        self.lines
            .iter()
            .filter_map(|l| match l {
                HunkLine::Context(s) | HunkLine::Add(s) => Some(s.clone()),
                HunkLine::Remove(_) => None,
            })
            .collect()
    }
}

/// Parses a multi-file unified diff, or the same changes in the `*** Begin Patch` format.
/// Errors are messages for the model.
pub(crate) fn parse_patch(text: &str) -> Result<Vec<FilePatch>, String> {
    if crate::begin_patch::is_begin_patch(text) {
        crate::begin_patch::parse(text)
    } else {
        parse_unified(text)
    }
}

fn parse_unified(text: &str) -> Result<Vec<FilePatch>, String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut files: Vec<FilePatch> = Vec::new();
    // Whether the current file came from a `diff --git` line and still awaits `---`/`+++`.
    let mut git_header_pending = false;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let file_header = line.starts_with("--- ")
            && lines
                .get(i + 1)
                .is_some_and(|next| next.starts_with("+++ "));
        if let Some(rest) = line.strip_prefix("diff --git ") {
            let (old, new) = split_git_paths(rest);
            files.push(FilePatch {
                old_path: Some(old),
                new_path: Some(new),
                hunks: Vec::new(),
            });
            git_header_pending = true;
            i += 1;
        } else if file_header {
            let old = header_path(&line[4..], "a/");
            let new = header_path(&lines[i + 1][4..], "b/");
            match files.last_mut() {
                Some(fp) if git_header_pending => {
                    fp.old_path = old;
                    fp.new_path = new;
                }
                _ => files.push(FilePatch {
                    old_path: old,
                    new_path: new,
                    hunks: Vec::new(),
                }),
            }
            git_header_pending = false;
            i += 2;
        } else if line.starts_with("@@") {
            let number = files.last().map_or(0, |f| f.hunks.len()) + 1;
            let Some(fp) = files.last_mut() else {
                return Err(format!(
                    "line {}: a hunk (`@@`) before any file header; start each file with `--- a/path` and `+++ b/path`",
                    i + 1
                ));
            };
            git_header_pending = false;
            let (hunk, next) = parse_hunk(&lines, i, number)?;
            fp.hunks.push(hunk);
            i = next;
        } else {
            if git_header_pending && let Some(fp) = files.last_mut() {
                if line.starts_with("new file mode") {
                    fp.old_path = None;
                } else if line.starts_with("deleted file mode") {
                    fp.new_path = None;
                } else if let Some(p) = line.strip_prefix("rename from ") {
                    fp.old_path = Some(p.trim().to_string());
                } else if let Some(p) = line.strip_prefix("rename to ") {
                    fp.new_path = Some(p.trim().to_string());
                } else if line.starts_with("Binary files") || line.starts_with("GIT binary patch") {
                    return Err(
                        "binary patches are not supported; write text files with write_file".into(),
                    );
                }
            }
            i += 1;
        }
    }
    if files.is_empty() {
        return Err("no file headers found: the patch must be a unified diff, each file starting with \
                    `--- a/path` and `+++ b/path` (`/dev/null` for an added or deleted file), followed by `@@ -l,n +l,n @@` hunks"
            .into());
    }
    Ok(files)
}

/// Parses the hunk whose `@@` header is at `lines[start]`; returns it and the index after it.
fn parse_hunk(lines: &[&str], start: usize, number: usize) -> Result<(Hunk, usize), String> {
    let (old_start, old_len) = parse_hunk_header(lines[start]).ok_or_else(|| {
        format!(
            "line {}: malformed hunk header `{}`; expected `@@ -start,count +start,count @@`",
            start + 1,
            lines[start]
        )
    })?;
    let mut hunk = Hunk {
        old_start,
        anchor: None,
        lines: Vec::new(),
        old_no_eol: false,
        new_no_eol: false,
    };
    let mut i = start + 1;
    while i < lines.len() {
        let line = lines[i];
        let next_file = line.starts_with("diff --git ")
            || (line.starts_with("--- ")
                && lines.get(i + 1).is_some_and(|n| n.starts_with("+++ ")));
        if line.starts_with("@@") || next_file {
            break;
        }
        if !hunk.push_line(line) {
            let counted = hunk.old_lines().len();
            if old_len.is_some_and(|n| counted >= n) {
                break; // trailing text after a complete hunk
            }
            return Err(format!(
                "hunk {number}, line {} of the patch: `{}` is not part of a hunk; every hunk line must start with ' ', '-' or '+'",
                i + 1,
                line
            ));
        }
        i += 1;
    }
    // Blank lines after the hunk (e.g. between files) are not context the hunk counted.
    if let Some(n) = old_len {
        while hunk.old_lines().len() > n
            && matches!(hunk.lines.last(), Some(HunkLine::Context(s)) if s.is_empty())
        {
            hunk.lines.pop();
        }
    }
    Ok((hunk, i))
}

/// `@@ -12,3 +12,4 @@ …` → `(12, Some(3))`; a bare `@@` → `(0, None)`.
fn parse_hunk_header(line: &str) -> Option<(usize, Option<usize>)> {
    let rest = line.strip_prefix("@@")?.trim_start();
    if rest.is_empty() || rest.starts_with("@@") {
        return Some((0, None));
    }
    let old = rest.strip_prefix('-')?.split_whitespace().next()?;
    let mut parts = old.splitn(2, ',');
    let start = parts.next()?.parse().ok()?;
    let len = match parts.next() {
        Some(n) => n.parse().ok()?,
        None => 1,
    };
    Some((start, Some(len)))
}

/// A `---`/`+++` path: `/dev/null` is `None`; a trailing tab and timestamp and the `a/`/`b/`
/// prefix are dropped.
fn header_path(raw: &str, prefix: &str) -> Option<String> {
    let path = raw.split('\t').next().unwrap_or(raw).trim();
    if path == "/dev/null" {
        return None;
    }
    Some(path.strip_prefix(prefix).unwrap_or(path).to_string())
}

/// `a/x b/y` from a `diff --git` line.
fn split_git_paths(rest: &str) -> (String, String) {
    let rest = rest.trim();
    match rest.rfind(" b/") {
        Some(at) => {
            let old = &rest[..at];
            (
                old.strip_prefix("a/").unwrap_or(old).to_string(),
                rest[at + 3..].to_string(),
            )
        }
        None => (rest.to_string(), rest.to_string()),
    }
}

/// A text file as lines, remembering its line ending and final newline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TextFile {
    pub lines: Vec<String>,
    pub crlf: bool,
    pub final_newline: bool,
}

impl TextFile {
    pub fn parse(text: &str) -> Self {
        let crlf_count = text.matches("\r\n").count();
        let crlf = crlf_count > 0 && crlf_count * 2 >= text.matches('\n').count();
        let body = text.strip_suffix('\n').unwrap_or(text);
        let lines = if text.is_empty() {
            Vec::new()
        } else {
            body.split('\n')
                .map(|l| {
                    if crlf {
                        l.strip_suffix('\r').unwrap_or(l)
                    } else {
                        l
                    }
                })
                .map(str::to_string)
                .collect()
        };
        TextFile {
            lines,
            crlf,
            final_newline: text.is_empty() || text.ends_with('\n'),
        }
    }

    pub fn render(&self) -> String {
        let eol = if self.crlf { "\r\n" } else { "\n" };
        let mut out = self.lines.join(eol);
        if self.final_newline && !self.lines.is_empty() {
            out.push_str(eol);
        }
        out
    }
}

/// Applies `hunks` in order, each where its old lines match nearest the line it states (exact
/// first, then ignoring trailing and then surrounding whitespace). Error: the failing hunk's
/// number and what it expected.
pub(crate) fn apply_hunks(file: &mut TextFile, hunks: &[Hunk]) -> Result<(), (usize, String)> {
    let mut shift: isize = 0;
    let mut min_pos = 0;
    for (k, hunk) in hunks.iter().enumerate() {
        let old = hunk.old_lines();
        let new = hunk.new_lines();
        // A hunk placed by its anchor line matches only after that line.
        let after_anchor = hunk.anchor.as_ref().and_then(|anchor| {
            file.lines[min_pos.min(file.lines.len())..]
                .iter()
                .position(|l| l.trim() == anchor.trim())
                .map(|i| min_pos + i + 1)
        });
        let lowest = after_anchor.unwrap_or(min_pos);
        let stated = if hunk.old_start == 0 {
            lowest as isize
        } else if old.is_empty() {
            hunk.old_start as isize
        } else {
            hunk.old_start as isize - 1
        };
        let drift = if hunk.old_start == 0 { 0 } else { shift };
        let expected = (stated + drift).clamp(lowest as isize, file.lines.len() as isize) as usize;
        let Some(pos) = find_block(&file.lines, &old, expected, lowest) else {
            let mut shown = String::new();
            for l in &old {
                let _ = writeln!(shown, "  {l}");
            }
            return Err((k + 1, shown));
        };
        let (old_len, new_len) = (old.len(), new.len());
        file.lines.splice(pos..pos + old_len, new);
        shift = pos as isize - stated + new_len as isize - old_len as isize;
        min_pos = pos + new_len;
        if min_pos == file.lines.len() {
            if hunk.new_no_eol {
                file.final_newline = false;
            } else if hunk.old_no_eol || !file.final_newline && new_len > 0 {
                file.final_newline = true;
            }
        }
    }
    Ok(())
}

fn find_block(lines: &[String], old: &[&str], expected: usize, min_pos: usize) -> Option<usize> {
    if old.is_empty() {
        return Some(expected.clamp(min_pos, lines.len()));
    }
    if lines.len() < old.len() || min_pos > lines.len() - old.len() {
        return None;
    }
    let last = lines.len() - old.len();
    let comparators: [fn(&str, &str) -> bool; 3] = [
        |a, b| a == b,
        |a, b| a.trim_end() == b.trim_end(),
        |a, b| a.trim() == b.trim(),
    ];
    for same in comparators {
        let matches_at = |p: usize| {
            old.iter()
                .zip(&lines[p..])
                .all(|(o, l)| same(l.as_str(), o))
        };
        let start = expected.clamp(min_pos, last);
        for d in 0..=(last - min_pos) {
            if start + d <= last && matches_at(start + d) {
                return Some(start + d);
            }
            if d > 0 && start >= min_pos + d && matches_at(start - d) {
                return Some(start - d);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn parses_headers_hunks_and_dev_null() {
        let patch = "diff --git a/src/x.rs b/src/x.rs\nindex 1..2 100644\n--- a/src/x.rs\n+++ b/src/x.rs\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hi\n";
        let files = parse_patch(patch).unwrap();
        assert_eq!(files.len(), 2);
        assert_eq!(files[0].old_path.as_deref(), Some("src/x.rs"));
        assert_eq!(files[0].hunks[0].old_lines(), vec!["a", "b"]);
        assert_eq!(files[1].old_path, None);
        assert_eq!(files[1].new_path.as_deref(), Some("new.txt"));
    }

    #[test]
    fn applies_with_an_offset_when_lines_moved() {
        let mut file = TextFile::parse("x\ny\none\ntwo\nthree\n");
        let hunk = Hunk {
            old_start: 1,
            anchor: None,
            lines: vec![
                HunkLine::Context("one".into()),
                HunkLine::Remove("two".into()),
                HunkLine::Add("2".into()),
            ],
            old_no_eol: false,
            new_no_eol: false,
        };
        apply_hunks(&mut file, &[hunk]).unwrap();
        assert_eq!(file.render(), "x\ny\none\n2\nthree\n");
    }

    #[test]
    fn no_newline_marker_is_honoured() {
        let patch = "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n\\ No newline at end of file\n";
        let files = parse_patch(patch).unwrap();
        let mut file = TextFile::parse("a\n");
        apply_hunks(&mut file, &files[0].hunks).unwrap();
        assert_eq!(file.render(), "b");
    }
}
