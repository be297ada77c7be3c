//! Edits that small models write as text blocks instead of tool calls, for a profile whose
//! [`EditFormat`] is `Whole` or `SearchReplace`. Pure: the same text gives the same result.
//!
//! **Path line.** A block names its file on the line just before its fence (one blank line in
//! between is allowed), in any of the forms small models write: `path/to/file.py`,
//! `` `path` ``, `**path**`, `# path`, `File: path`, `path:` (and combinations such as
//! ``**`path`**``). A path is one word with a `.` or a `/` in it (or a well-known name such as
//! `Makefile`); prose is never a path. A path that is absolute, starts with `~` or has a `..`
//! component is refused (reported, never applied).
//!
//! **Search/replace blocks** (Aider's format), accepted in both text formats since their markers
//! cannot be mistaken for anything else: a path line, a fence, `<<<<<<< SEARCH`, the old text,
//! `=======`, the new text, `>>>>>>> REPLACE`, the fence's end. Several blocks may share one
//! fence (and its path); blocks without a fence are accepted too, each after a path line or
//! after an earlier block of the same reply (whose path it then shares). The path may also be
//! the first line inside the fence. An empty SEARCH means "create this file" with the REPLACE
//! text; Bosun refuses it when the file exists (it never appends blind).
//!
//! **Whole-file blocks**, only in `Whole` mode: a path line, then a fence whose content is the
//! file's complete new content. In `Whole` mode a fence without a path line is plain code and
//! stays in the text, unless the line before it announces a file ("Here is the updated file:",
//! a line ending with `:` that says file, updated, full, complete or new content): that one is
//! reported, so a file meant to be written is not silently dropped. In `SearchReplace` mode a
//! fence without SEARCH markers is never an edit (with or without a path line).
//!
//! **Fences inside fences.** A fence opened inside a block with a language (a Markdown file's
//! ```` ```sh ```` … ```` ``` ````) is part of the content, and so is any fence line between
//! `<<<<<<< SEARCH` and `>>>>>>> REPLACE`; a bare ```` ``` ```` otherwise ends the block.
//!
//! Never an edit: a fence holding a tool call (`{"name": …, "arguments": …}`; those are
//! [`crate::recover_tool_calls`]'s). What looked like an edit but cannot be applied (markers
//! out of order, no `>>>>>>> REPLACE`, no path, a refused path, a fence never closed) is in
//! [`EditBlocks::problems`], one precise sentence each. CRLF line endings are read as LF.

use crate::EditFormat;

/// One edit found in a reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditBlock {
    /// Relative to the worktree, with `/` separators.
    pub path: String,
    pub kind: EditKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditKind {
    /// The file's complete new content.
    Whole { content: String },
    /// Replace `search` (exactly one place) with `replace`; an empty `search` creates the file.
    SearchReplace { search: String, replace: String },
}

/// What [`parse_edit_blocks`] found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EditBlocks {
    /// In the order written.
    pub edits: Vec<EditBlock>,
    /// One message per block that was meant as an edit but cannot be applied.
    pub problems: Vec<String>,
    /// The text with the blocks (applied or not) taken out.
    pub remaining_text: String,
}

/// The short system-prompt text that tells the model the format, with one tiny example; empty
/// for [`EditFormat::Tools`].
pub fn instructions(format: EditFormat) -> &'static str {
    match format {
        EditFormat::Tools => "",
        EditFormat::Whole => {
            "To change or create a file, do not call edit_file, write_file or apply_patch: write \
the file's path on its own line, then a fence holding the file's complete new content (every \
line, not only the changed ones):\n\
calc.py\n\
```python\n\
def add(a, b):\n    return a + b\n\
```\n\
Call the other tools as usual."
        }
        EditFormat::SearchReplace => {
            "To change a file, do not call edit_file, write_file or apply_patch: write the file's \
path on its own line, then a search/replace block in a fence:\n\
calc.py\n\
```python\n\
<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n\
```\n\
SEARCH must copy the file's current lines exactly (read the file first). Several blocks may \
follow one another. An empty SEARCH creates a new file. Call the other tools as usual."
        }
    }
}

/// The format of the direct turn (a small model given the task's files and no tools); empty
/// for [`EditFormat::Tools`]. [`direct_example`] shows it.
pub fn direct_instructions(format: EditFormat) -> &'static str {
    match format {
        EditFormat::Tools => "",
        EditFormat::Whole => {
            "To change or create a file, write its path on a line of its own, then a fence \
holding the file's complete new content: every line of the file, the unchanged ones too."
        }
        EditFormat::SearchReplace => {
            "To change a file, write its path on a line of its own, then a fence holding a \
search/replace block: `<<<<<<< SEARCH`, the file's current lines copied exactly, `=======`, \
what they become, `>>>>>>> REPLACE`. Several blocks may follow one another; an empty SEARCH \
creates a new file."
        }
    }
}

/// One worked exchange of the direct turn in `format` (the user's message, the model's
/// reply), sent before the task: a small model copies the shape of a reply it has seen.
pub fn direct_example(format: EditFormat) -> Option<(&'static str, &'static str)> {
    const USER: &str = "The files of the task, as they are now:\n\n\
greet.py\n```python\ndef greet(name):\n    return \"Hello \" + name\n\n\n\
def shout(text):\n    return text.upper()\n```\n\n\
Task: make greet() more casual.";
    match format {
        EditFormat::Tools => None,
        EditFormat::Whole => Some((
            USER,
            "greet.py\n```python\ndef greet(name):\n    return \"Hey \" + name\n\n\n\
def shout(text):\n    return text.upper()\n```\n\
Changed the greeting of greet() to \"Hey\".",
        )),
        EditFormat::SearchReplace => Some((
            USER,
            "greet.py\n```python\n<<<<<<< SEARCH\n    return \"Hello \" + name\n=======\n\
    return \"Hey \" + name\n>>>>>>> REPLACE\n```\n\
Changed the greeting of greet() to \"Hey\".",
        )),
    }
}

/// Finds the edit blocks in `text` for `format` (nothing for [`EditFormat::Tools`]).
pub fn parse_edit_blocks(text: &str, format: EditFormat) -> EditBlocks {
    if format == EditFormat::Tools {
        return EditBlocks {
            remaining_text: text.to_string(),
            ..Default::default()
        };
    }
    let text = text.replace("\r\n", "\n");
    let lines: Vec<&str> = text.split('\n').collect();
    let mut parser = Parser {
        lines: &lines,
        format,
        taken: vec![false; lines.len()],
        out: EditBlocks::default(),
        last_path: None,
    };
    parser.run();
    let kept: Vec<&str> = lines
        .iter()
        .zip(&parser.taken)
        .filter(|(_, taken)| !**taken)
        .map(|(l, _)| *l)
        .collect();
    let mut out = parser.out;
    out.remaining_text = tidy(&kept.join("\n"));
    out
}

struct Parser<'a> {
    lines: &'a [&'a str],
    format: EditFormat,
    /// Lines that belong to a block (taken out of the remaining text).
    taken: Vec<bool>,
    out: EditBlocks,
    /// The path of the reply's previous search/replace block (unfenced blocks may share it).
    last_path: Option<Result<String, String>>,
}

/// A path line's verdict: a usable path, or the reason it is refused.
type PathVerdict = Result<String, String>;

impl Parser<'_> {
    fn run(&mut self) {
        let mut i = 0;
        while i < self.lines.len() {
            let line = self.lines[i];
            if let Some(ticks) = fence_open(line) {
                i = self.fence(i, ticks);
            } else if is_search(line) {
                let path = self.path_before(i).or_else(|| self.last_path.clone());
                if let Some(p) = self.path_line_index(i) {
                    self.taken[p] = true;
                }
                i = self.search_replace(i, self.lines.len(), path);
            } else {
                i += 1;
            }
        }
    }

    /// The fence opening at line `open`; returns the line after it.
    fn fence(&mut self, open: usize, ticks: usize) -> usize {
        let close = self.fence_end(open, ticks);
        let end = close.unwrap_or(self.lines.len());
        let body = &self.lines[open + 1..end];
        let after = close.map_or(end, |c| c + 1);
        let path_line = self.path_line_index(open);
        let path = self.path_before(open);
        if body.iter().any(|l| is_search(l)) {
            self.take(open, after);
            if let Some(p) = path_line {
                self.taken[p] = true;
            }
            // The path may be written inside the fence, before the first block.
            let first = body.iter().position(|l| !l.trim().is_empty());
            let (path, start) = match (path, first) {
                (None, Some(f)) if !is_search(body[f]) => match path_verdict(body[f]) {
                    Some(p) => (Some(p), open + 1 + f + 1),
                    None => (None, open + 1),
                },
                (p, _) => (p, open + 1),
            };
            if close.is_none() {
                self.out
                    .problems
                    .push(format!("{}: the fence is never closed", describe(&path)));
            }
            let mut j = start;
            while j < end {
                if is_search(self.lines[j]) {
                    j = self.search_replace(j, end, path.clone());
                } else {
                    j += 1;
                }
            }
            self.last_path = path;
            return after;
        }
        if is_tool_call(body) || self.format != EditFormat::Whole {
            return after;
        }
        match path {
            Some(Ok(p)) if close.is_some() => {
                self.take(open, after);
                if let Some(l) = path_line {
                    self.taken[l] = true;
                }
                let mut content = body.join("\n");
                if !body.is_empty() {
                    content.push('\n');
                }
                self.out.edits.push(EditBlock {
                    path: p,
                    kind: EditKind::Whole { content },
                });
            }
            Some(Ok(p)) => {
                self.take(open, after);
                if let Some(l) = path_line {
                    self.taken[l] = true;
                }
                self.out.problems.push(format!(
                    "the block for `{p}` has no closing ``` (the reply may have been cut off); \
                     the file was not written"
                ));
            }
            Some(Err(why)) => {
                self.take(open, after);
                if let Some(l) = path_line {
                    self.taken[l] = true;
                }
                self.out.problems.push(why);
            }
            None if announces_file(self.line_before(open)) => {
                self.take(open, after);
                self.out.problems.push(
                    "a code block meant as a file has no path line: write the file's path on \
                     its own line just before the ```"
                        .into(),
                );
            }
            None => {}
        }
        after
    }

    /// The line that closes the fence opened at `open`. Fences inside it (a Markdown file's
    /// ```` ```sh ```` … ```` ``` ````) and fence lines inside a search/replace block's text
    /// do not close it.
    fn fence_end(&self, open: usize, ticks: usize) -> Option<usize> {
        let (mut depth, mut in_block, mut unfinished) = (0usize, false, None);
        for j in open + 1..self.lines.len() {
            let line = self.lines[j];
            if is_search(line) {
                in_block = true;
            } else if is_replace(line) {
                in_block = false;
            } else if in_block {
                // Taken as the end if the block never gets its REPLACE line.
                if unfinished.is_none() && fence_close(line, ticks) {
                    unfinished = Some(j);
                }
            } else if fence_close(line, ticks) {
                if depth == 0 {
                    return Some(j);
                }
                depth -= 1;
            } else if fence_open(line).is_some() && line.trim().len() > ticks {
                depth += 1;
            }
        }
        unfinished
    }

    /// A search/replace block whose `<<<<<<< SEARCH` is line `start`, ending before `limit`;
    /// returns the line after it.
    fn search_replace(&mut self, start: usize, limit: usize, path: Option<PathVerdict>) -> usize {
        let divider =
            (start + 1..limit).find(|&j| is_divider(self.lines[j]) || is_search(self.lines[j]));
        let divider = match divider {
            Some(d) if is_divider(self.lines[d]) => d,
            other => {
                let end = other.unwrap_or(limit);
                self.take(start, end);
                self.out.problems.push(format!(
                    "{}: `<<<<<<< SEARCH` has no `=======` after it; nothing in it was applied",
                    describe(&path)
                ));
                return end;
            }
        };
        let replace_end = (divider + 1..limit).find(|&j| {
            is_replace(self.lines[j]) || is_search(self.lines[j]) || is_divider(self.lines[j])
        });
        let replace_end = match replace_end {
            Some(r) if is_replace(self.lines[r]) => r,
            other => {
                let end =
                    other.map_or(limit, |o| if is_divider(self.lines[o]) { o + 1 } else { o });
                self.take(start, end);
                self.out.problems.push(format!(
                    "{}: the block has no `>>>>>>> REPLACE` line; nothing in it was applied",
                    describe(&path)
                ));
                return end;
            }
        };
        self.take(start, replace_end + 1);
        self.last_path = path.clone();
        let search = joined(&self.lines[start + 1..divider]);
        let replace = joined(&self.lines[divider + 1..replace_end]);
        match path {
            Some(Ok(path)) => self.out.edits.push(EditBlock {
                path,
                kind: EditKind::SearchReplace { search, replace },
            }),
            Some(Err(why)) => self.out.problems.push(why),
            None => self.out.problems.push(
                "a search/replace block has no path line: write the file's path on its own line \
                 just before the block's ```"
                    .into(),
            ),
        }
        replace_end + 1
    }

    fn take(&mut self, from: usize, to: usize) {
        for t in &mut self.taken[from..to.min(self.lines.len())] {
            *t = true;
        }
    }

    /// The index of the line just before line `at` (one blank line skipped), if not taken.
    fn path_line_index(&self, at: usize) -> Option<usize> {
        let mut j = at.checked_sub(1)?;
        if self.lines[j].trim().is_empty() {
            j = j.checked_sub(1)?;
        }
        (!self.taken[j] && path_verdict(self.lines[j]).is_some()).then_some(j)
    }

    fn path_before(&self, at: usize) -> Option<PathVerdict> {
        self.path_line_index(at)
            .and_then(|j| path_verdict(self.lines[j]))
    }

    fn line_before(&self, at: usize) -> &str {
        self.lines[..at]
            .iter()
            .rev()
            .find(|l| !l.trim().is_empty())
            .copied()
            .unwrap_or("")
    }
}

/// Lines joined, each ending with a newline (the block's text as the file holds it).
fn joined(lines: &[&str]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

fn describe(path: &Option<PathVerdict>) -> String {
    match path {
        Some(Ok(p)) => format!("the search/replace block for `{p}`"),
        _ => "a search/replace block".into(),
    }
}

/// The number of backticks of a fence opening (```` ```lang ````).
fn fence_open(line: &str) -> Option<usize> {
    let t = line.trim_start();
    let ticks = t.chars().take_while(|c| *c == '`').count();
    (ticks >= 3 && !t[ticks..].contains('`')).then_some(ticks)
}

fn fence_close(line: &str, ticks: usize) -> bool {
    let t = line.trim();
    t.len() >= ticks && t.chars().all(|c| c == '`')
}

fn marker(line: &str, c: char, word: &str) -> bool {
    let t = line.trim();
    let n = t.chars().take_while(|x| *x == c).count();
    (5..=9).contains(&n) && t[n..].trim() == word
}

fn is_search(line: &str) -> bool {
    marker(line, '<', "SEARCH")
}

fn is_divider(line: &str) -> bool {
    marker(line, '=', "")
}

fn is_replace(line: &str) -> bool {
    marker(line, '>', "REPLACE")
}

/// A fence body that is a tool call written as JSON.
fn is_tool_call(body: &[&str]) -> bool {
    let Ok(serde_json::Value::Object(o)) = serde_json::from_str(&body.join("\n")) else {
        return false;
    };
    o.contains_key("name")
        && ["arguments", "parameters", "input"]
            .iter()
            .any(|k| o.contains_key(*k))
}

/// The line before a fence without a path says the fence is a file's content.
fn announces_file(line: &str) -> bool {
    let l = line.trim().to_lowercase();
    l.ends_with(':')
        && ["file", "updated", "full", "complete", "new content"]
            .iter()
            .any(|w| l.contains(w))
}

/// Names without a `.` or `/` that are still files.
const BARE_FILES: &[&str] = &[
    "Makefile",
    "Dockerfile",
    "Containerfile",
    "Justfile",
    "Rakefile",
    "Gemfile",
    "Procfile",
    "LICENSE",
    "Jenkinsfile",
];

/// Whether `line` is a path line: `None` when it is not one, else the path or why it is
/// refused.
fn path_verdict(line: &str) -> Option<PathVerdict> {
    let mut s = line.trim();
    // Strip the decorations, outside in, until nothing changes.
    loop {
        let before = s;
        s = s.trim_start_matches('#').trim();
        for w in ["**", "__", "`", "*"] {
            if let Some(inner) = s.strip_prefix(w).and_then(|x| x.strip_suffix(w)) {
                s = inner.trim();
            }
        }
        s = s.strip_suffix(':').unwrap_or(s).trim();
        for prefix in ["file:", "filename:", "file name:", "path:"] {
            if s.len() > prefix.len() && s[..prefix.len()].eq_ignore_ascii_case(prefix) {
                s = s[prefix.len()..].trim();
            }
        }
        if s == before {
            break;
        }
    }
    let plausible = !s.is_empty()
        && !s.ends_with('.')
        && !s.contains("://")
        && s.chars().all(|c| {
            c.is_alphanumeric() || matches!(c, '.' | '/' | '\\' | '_' | '-' | '+' | '@' | '~' | ':')
        })
        && s.chars().any(char::is_alphabetic)
        && (s.contains('.') || s.contains('/') || BARE_FILES.contains(&s));
    if !plausible || s.chars().filter(|c| *c == ':').count() > usize::from(is_drive(s)) {
        return None;
    }
    let path = s.replace('\\', "/");
    if path.starts_with('/') || path.starts_with('~') || is_drive(s) {
        return Some(Err(format!(
            "`{s}` is an absolute path: edits are only made inside the repository, with paths \
             relative to its root"
        )));
    }
    if path.split('/').any(|c| c == "..") {
        return Some(Err(format!(
            "`{s}` has a `..` component: edits are only made inside the repository, with paths \
             relative to its root"
        )));
    }
    let path = path.trim_start_matches("./").to_string();
    if path.is_empty() || path.ends_with('/') {
        return None;
    }
    Some(Ok(path))
}

/// `C:\…` or `C:/…`.
fn is_drive(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() > 2 && b[0].is_ascii_alphabetic() && b[1] == b':' && matches!(b[2], b'\\' | b'/')
}

/// Trims the text and closes the gaps left where blocks were taken out.
fn tidy(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut newlines = 0;
    for c in s.trim().chars() {
        if c == '\n' {
            newlines += 1;
            if newlines > 2 {
                continue;
            }
        } else if !c.is_whitespace() {
            newlines = 0;
        }
        out.push(c);
    }
    out
}
