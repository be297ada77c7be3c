//! Text edit formats (a profile's `edit_format` of `whole` or `search-replace`): the request
//! offers no edit tools and its system prompt says how to write edit blocks; each block of a
//! reply becomes a synthesized `write_file` or `edit_file` call with the next task-wide
//! `recovered_N` id, and runs through the same dispatch as every other call (policy,
//! approvals, events, checkpoints, provenance, edit checks).

use bosun_model::{EditFormat, EditKind, ToolCall, parse_edit_blocks};
use bosun_protocol::ToolSpec;
use serde_json::json;
use std::path::Path;

/// The tools a text edit format does not offer (a call to one is still served).
const EDIT_TOOLS: [&str; 3] = ["write_file", "edit_file", "apply_patch"];

/// The tools offered in the request: all of them, or, in a text edit format, all but the edit
/// tools. A model profiled as `small` loops on its plan and cannot write a unified diff:
/// neither is offered; writing whole files, it does best with nothing else to choose from but
/// reading a file the request does not show (as Aider's whole format: the files and the
/// format, no tools; the checks still run). A call to a tool not offered is still served.
pub(super) fn offered_tools(all: &[ToolSpec], format: EditFormat, small: bool) -> Vec<ToolSpec> {
    let whole = format == EditFormat::Whole;
    all.iter()
        .filter(|t| {
            let name = t.name.as_str();
            let edit_tool = EDIT_TOOLS.contains(&name);
            match (small, name) {
                _ if edit_tool && format != EditFormat::Tools => false,
                // The map in the request shows a small model the definitions already; a small
                // model does not plan or delegate.
                (true, "update_plan" | "apply_patch" | "symbols" | "delegate") => false,
                (true, "read_file") => true,
                (true, _) => !whole,
                (false, _) => true,
            }
        })
        .cloned()
        .collect()
}

/// The edit blocks of one reply, as calls.
#[derive(Debug, Default)]
pub(super) struct BlockCalls {
    pub calls: Vec<ToolCall>,
    /// Definitions the reply wrote out exactly as they already are (a small model echoing
    /// the stub it was asked to fill in), by name.
    pub echoed: Vec<String>,
    /// What looked like an edit but cannot be applied.
    pub problems: Vec<String>,
    /// The reply's text without the blocks.
    pub text: String,
}

/// Reads the blocks in `text`; ids continue from `seq`. An empty SEARCH creates the file: on a
/// missing file it is a `write_file`, on an existing one a problem (never a blind append).
pub(super) fn block_calls(
    text: &str,
    format: EditFormat,
    worktree: &Path,
    seq: &mut u64,
    change_asked: bool,
) -> BlockCalls {
    // Code in an answer to a question is an example, never an edit, file listing or not.
    if format == EditFormat::Tools || !change_asked {
        return BlockCalls {
            text: text.to_string(),
            ..Default::default()
        };
    }
    let mut found = parse_edit_blocks(text, format);
    let mut echoed = Vec::new();
    if found.edits.is_empty() && found.problems.is_empty() {
        // No block, but perhaps the corrected function written out as plain code.
        let (edits, same) = definition_edits_and_echoes(&found.remaining_text, worktree);
        found.edits = edits;
        echoed = same;
    }
    let mut out = BlockCalls {
        echoed,
        problems: found.problems,
        text: found.remaining_text,
        calls: Vec::new(),
    };
    // A "whole file" of a Python file that only holds some of its definitions is those
    // definitions (a small model writes out the function it changed, not the file): taken as
    // such, so the rest of the file is not deleted.
    let mut refused = Vec::new();
    // Code left out ("# ...", "# rest of the code") would be written over what is there.
    found.edits.retain(|edit| {
        let (old, new) = match &edit.kind {
            EditKind::Whole { content } => (
                std::fs::read_to_string(worktree.join(&edit.path)).unwrap_or_default(),
                content.as_str(),
            ),
            EditKind::SearchReplace { search, replace } => (search.clone(), replace.as_str()),
        };
        let Some(line) = elided_line(new, &old) else {
            return true;
        };
        refused.push(format!(
            "the block for `{}` leaves code out (`{}`): nothing was written; write the \
             complete code, every line of it, with nothing left for later",
            edit.path,
            line.trim()
        ));
        false
    });
    // The definitions each whole-file block of the reply holds, by path.
    let defined: Vec<(String, Vec<String>)> = found
        .edits
        .iter()
        .filter_map(|e| match &e.kind {
            EditKind::Whole { content } if e.path.ends_with(".py") => Some((
                e.path.clone(),
                top_level_definitions(content)
                    .into_iter()
                    .map(|(n, _)| n)
                    .collect(),
            )),
            _ => None,
        })
        .collect();
    let edits: Vec<bosun_model::EditBlock> = found
        .edits
        .into_iter()
        .flat_map(|edit| match &edit.kind {
            EditKind::Whole { content } if edit.path.ends_with(".py") => {
                let elsewhere: Vec<String> = defined
                    .iter()
                    .filter(|(p, _)| *p != edit.path)
                    .flat_map(|(_, names)| names.iter().cloned())
                    .collect();
                match partial_file_edits(worktree, &edit.path, content, &elsewhere) {
                    Some(Ok(parts)) => parts,
                    Some(Err(problem)) => {
                        refused.push(problem);
                        Vec::new()
                    }
                    None => vec![edit],
                }
            }
            _ => vec![edit],
        })
        .collect();
    out.problems.extend(refused);
    for mut edit in edits {
        // A path that does not exist, in a directory that does not either, for a file name
        // the worktree has once (`src/stats.py` written, `stats.py` there): that file.
        if let Some(meant) = meant_path(worktree, &edit.path)
            && match &edit.kind {
                // SEARCH must match the file anyway.
                EditKind::SearchReplace { search, .. } => !search.trim().is_empty(),
                // A whole file only when it is that Python file again (it redefines something
                // of it), never a new file that happens to share a name.
                EditKind::Whole { content } => {
                    meant.ends_with(".py")
                        && std::fs::read_to_string(worktree.join(&meant)).is_ok_and(|old| {
                            let have: Vec<String> = top_level_definitions(&old)
                                .into_iter()
                                .map(|(n, _)| n)
                                .collect();
                            top_level_definitions(content)
                                .iter()
                                .any(|(n, _)| have.contains(n))
                        })
                }
            }
        {
            edit.path = meant;
        }
        let (name, args) = match edit.kind {
            EditKind::Whole { content } => {
                ("write_file", json!({"path": edit.path, "content": content}))
            }
            EditKind::SearchReplace { search, replace } if search.trim().is_empty() => {
                if worktree.join(&edit.path).symlink_metadata().is_ok() {
                    out.problems.push(format!(
                        "the block for `{}` has an empty SEARCH, which creates a new file, but \
                         `{}` exists: put the lines to change in SEARCH, copied exactly",
                        edit.path, edit.path
                    ));
                    continue;
                }
                ("write_file", json!({"path": edit.path, "content": replace}))
            }
            EditKind::SearchReplace { search, replace } => (
                "edit_file",
                json!({"path": edit.path, "old_string": search, "new_string": replace}),
            ),
        };
        *seq += 1;
        out.calls.push(ToolCall {
            id: format!("recovered_{seq}"),
            name: name.to_string(),
            arguments: args.to_string(),
        });
    }
    out
}

/// A line of `new` that stands for code left out, which `old` does not have: `...`, `# ...`,
/// `// ...`, "rest of the code", "your code here", "implementation goes here", "unchanged", a
/// `TODO` to implement.
fn elided_line<'a>(new: &'a str, old: &str) -> Option<&'a str> {
    let old_lines: std::collections::HashSet<&str> = old.lines().map(str::trim).collect();
    new.lines().find(|line| {
        let t = line.trim();
        if t.is_empty() || old_lines.contains(t) {
            return false;
        }
        let comment = t
            .strip_prefix('#')
            .or_else(|| t.strip_prefix("//"))
            .map(|c| c.trim().to_ascii_lowercase());
        match comment {
            Some(c) => {
                c.starts_with("...")
                    || c.ends_with("...")
                    || [
                        "unchanged",
                        "same as before",
                        "rest of",
                        "remaining code",
                        "existing code",
                        "your code",
                        "implement this",
                        "todo: implement",
                        "todo implement",
                    ]
                    .iter()
                    .any(|w| c.starts_with(w))
                    || [
                        "code here",
                        "goes here",
                        "rest of the code",
                        "rest of the file",
                        "rest of the function",
                        "existing code",
                    ]
                    .iter()
                    .any(|w| c.contains(w))
            }
            None => t == "..." || t == "…",
        }
    })
}

/// Small models asked for a fix often answer with the corrected function in a plain
/// ```` ```python ```` fence and no block at all. Each top-level `def`/`class` of such a fence
/// that matches exactly one definition of that name, at any depth, in exactly one Python file
/// of the worktree (test files aside: a fix never rewrites the test that judges it) replaces
/// that definition (its decorators and body, found by indentation), re-indented to where it
/// stands. A definition that is already the same, or matches nothing or several, is left
/// alone: the fence stays code. Python only (its blocks are delimited by indentation).
#[cfg(test)]
pub(super) fn definition_edits(text: &str, worktree: &Path) -> Vec<bosun_model::EditBlock> {
    definition_edits_and_echoes(text, worktree).0
}

/// [`definition_edits`], and the names of the definitions written out unchanged.
fn definition_edits_and_echoes(
    text: &str,
    worktree: &Path,
) -> (Vec<bosun_model::EditBlock>, Vec<String>) {
    let mut out = Vec::new();
    let mut echoed = Vec::new();
    let fences = python_fences(text);
    if fences.is_empty() {
        return (out, echoed);
    }
    let files = python_files(worktree);
    let sources: Vec<(String, String)> = files
        .iter()
        .filter_map(|rel| {
            Some((
                rel.clone(),
                std::fs::read_to_string(worktree.join(rel)).ok()?,
            ))
        })
        .collect();
    'fences: for fence in fences {
        // A fence is taken whole or not at all: each of its definitions must match exactly
        // one, and it may hold nothing else at the top level but imports the file has (a new
        // helper, a constant or a call would otherwise be lost).
        let defs = top_level_definitions(&fence);
        if defs.is_empty() {
            continue;
        }
        let mut edits = Vec::new();
        let mut same = Vec::new();
        let mut target: Option<&str> = None;
        for (name, new_def) in defs {
            let hits: Vec<(&str, &str, usize)> =
                sources
                    .iter()
                    .flat_map(|(rel, source)| {
                        find_definitions(source, &name).into_iter().map(
                            move |(start, end, indent)| (rel.as_str(), &source[start..end], indent),
                        )
                    })
                    .collect();
            let [(path, old, indent)] = hits.as_slice() else {
                continue 'fences;
            };
            if target.is_some_and(|t| t != *path) {
                continue 'fences;
            }
            target = Some(path);
            // A class is replaced only by one that keeps every method it has.
            if !methods_of(old)
                .iter()
                .all(|m| methods_of(&new_def).contains(m))
            {
                continue 'fences;
            }
            let new = reindent(&new_def, indent);
            if old.trim_end() == new.trim_end() {
                same.push(name);
                continue;
            }
            // The old text ends where the definition's last line ends; so does the new.
            let new = if old.ends_with('\n') && !new.ends_with('\n') {
                format!("{new}\n")
            } else {
                new
            };
            edits.push(bosun_model::EditBlock {
                path: path.to_string(),
                kind: EditKind::SearchReplace {
                    search: old.to_string(),
                    replace: new,
                },
            });
        }
        let Some(source) = target.and_then(|t| sources.iter().find(|(r, _)| r == t)) else {
            continue;
        };
        if !only_definitions_and_known_imports(&fence, &source.1) {
            continue;
        }
        out.extend(edits);
        echoed.extend(same);
    }
    (out, echoed)
}

/// The names of the methods (`def` one level in) of a class's text; empty for a function.
fn methods_of(def: &str) -> Vec<String> {
    let mut lines = def.lines().skip_while(|l| l.trim_start().starts_with('@'));
    let Some(head) = lines.next() else {
        return Vec::new();
    };
    if !head.trim_start().starts_with("class ") {
        return Vec::new();
    }
    let base = indent_of(head);
    let step = lines
        .clone()
        .find(|l| !l.trim().is_empty())
        .map(indent_of)
        .unwrap_or(base + 4);
    lines
        .filter(|l| indent_of(l) == step)
        .filter_map(|l| def_name(l).map(str::to_string))
        .collect()
}

/// Whether every top-level line of `code` belongs to a definition, is blank or a comment, or
/// is an import `source` already has.
fn only_definitions_and_known_imports(code: &str, source: &str) -> bool {
    code.lines().all(|l| {
        l.trim().is_empty()
            || indent_of(l) > 0
            || l.starts_with('@')
            || l.starts_with('#')
            || def_name(l).is_some()
            || ((l.starts_with("import ") || l.starts_with("from "))
                && source.lines().any(|s| s.trim_end() == l.trim_end()))
    })
}

/// The one file of the worktree named like `path` when `path` and its directory do not exist.
fn meant_path(worktree: &Path, path: &str) -> Option<String> {
    let asked = worktree.join(path);
    if asked.symlink_metadata().is_ok() || asked.parent().is_some_and(|p| p.exists()) {
        return None;
    }
    let name = path.rsplit('/').next()?;
    let found = bosun_tools::files_named(worktree, name);
    match found.as_slice() {
        [one] => Some(one.clone()),
        _ => None,
    }
}

/// The definitions of a whole-file block for `path`, as edits of the file as it is, when the
/// block leaves out some of the file's top-level definitions and holds nothing else at the top
/// level but definitions the file has and imports it has; `None` when it reads as a file.
///
/// A block that leaves definitions out is still the whole file when each of them moved (the
/// same reply's block for another file defines it) or was renamed (the block defines as many
/// names the file does not have).
fn partial_file_edits(
    worktree: &Path,
    path: &str,
    content: &str,
    elsewhere: &[String],
) -> Option<Result<Vec<bosun_model::EditBlock>, String>> {
    let source = std::fs::read_to_string(worktree.join(path)).ok()?;
    let old: Vec<String> = top_level_definitions(&source)
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    let new = top_level_definitions(content);
    let left_out: Vec<&String> = old
        .iter()
        .filter(|o| !new.iter().any(|(n, _)| n == *o))
        .collect();
    let gone = left_out.iter().filter(|n| !elsewhere.contains(n)).count();
    let added = new.iter().filter(|(n, _)| !old.contains(n)).count();
    if left_out.is_empty() || gone == 0 || added >= gone {
        return None;
    }
    let refuse = || {
        Some(Err(format!(
            "the block for `{path}` leaves out {} of the file, so it is not the whole file and was not written: write the whole file, or only the functions you change (each whole)",
            left_out
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )))
    };
    if new.is_empty()
        || !new.iter().all(|(n, _)| old.contains(n))
        || !only_definitions_and_known_imports(content, &source)
    {
        return refuse();
    }
    let mut out = Vec::new();
    for (name, def) in new {
        let found = find_definitions(&source, &name);
        let [(start, end, 0)] = found.as_slice() else {
            return refuse();
        };
        let old_def = &source[*start..*end];
        let new_def = if old_def.ends_with('\n') && !def.ends_with('\n') {
            format!("{def}\n")
        } else {
            def
        };
        if old_def.trim_end() != new_def.trim_end() {
            out.push(bosun_model::EditBlock {
                path: path.to_string(),
                kind: EditKind::SearchReplace {
                    search: old_def.to_string(),
                    replace: new_def,
                },
            });
        }
    }
    Some(Ok(out))
}

/// The contents of the ```` ```python ````, ```` ```py ```` and bare fences of `text`.
fn python_fences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let t = line.trim();
        let Some(lang) = t.strip_prefix("```") else {
            continue;
        };
        let lang = lang.trim().to_ascii_lowercase();
        let mut body = String::new();
        let mut closed = false;
        for l in lines.by_ref() {
            if l.trim() == "```" {
                closed = true;
                break;
            }
            body.push_str(l);
            body.push('\n');
        }
        // A fence never closed (a reply cut at its token limit) is never an edit.
        if closed && matches!(lang.as_str(), "python" | "py" | "python3" | "") {
            out.push(body);
        }
    }
    out
}

/// Python files of the worktree (at most 2,000, each at most 1 MB; test files, virtual
/// environments and caches left out), relative, with `/`.
fn python_files(worktree: &Path) -> Vec<String> {
    fn walk(dir: &Path, rel: &str, out: &mut Vec<String>, depth: usize) {
        if depth > 6 || out.len() >= 2000 {
            return;
        }
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let name = e.file_name().to_string_lossy().into_owned();
            let path = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            let Ok(meta) = e.path().symlink_metadata() else {
                continue;
            };
            if meta.is_dir() {
                if !name.starts_with('.')
                    && !matches!(
                        name.as_str(),
                        "node_modules"
                            | "venv"
                            | "__pycache__"
                            | "site-packages"
                            | "build"
                            | "dist"
                    )
                {
                    walk(&e.path(), &path, out, depth + 1);
                }
            } else if meta.is_file()
                // A huge (or agent-grown) file is no module a fix rewrites, and not read.
                && meta.len() <= 1024 * 1024
                && name.ends_with(".py")
                && !bosun_context::is_test_name(&name)
                && !path.split('/').any(|c| c == "tests")
            {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(worktree, "", &mut out, 0);
    out
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

fn def_name(line: &str) -> Option<&str> {
    let t = line.trim_start();
    let rest = t
        .strip_prefix("async def ")
        .or_else(|| t.strip_prefix("def "))
        .or_else(|| t.strip_prefix("class "))?;
    let end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
}

/// The top-level definitions of a fence: (name, its text from its decorators to its last
/// indented line).
fn top_level_definitions(code: &str) -> Vec<(String, String)> {
    let lines: Vec<&str> = code.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if indent_of(line) == 0 && (def_name(line).is_some() || line.starts_with('@')) {
            let start = i;
            while i < lines.len() && lines[i].starts_with('@') {
                i += 1;
            }
            let Some(name) = lines
                .get(i)
                .and_then(|l| def_name(l))
                .filter(|_| indent_of(lines[i]) == 0)
            else {
                i += 1;
                continue;
            };
            let mut end = i + 1;
            while end < lines.len() && (lines[end].trim().is_empty() || indent_of(lines[end]) > 0) {
                end += 1;
            }
            let mut last = end;
            while last > i + 1 && lines[last - 1].trim().is_empty() {
                last -= 1;
            }
            out.push((name.to_string(), lines[start..last].join("\n")));
            i = end;
        } else {
            i += 1;
        }
    }
    out
}

/// Where `def NAME`/`class NAME` is defined in `source`: byte range (decorators to the last
/// line of its body, with that line's newline) and the definition's indentation.
fn find_definitions(source: &str, name: &str) -> Vec<(usize, usize, usize)> {
    let mut starts = Vec::new();
    let mut offset = 0;
    for line in source.split_inclusive('\n') {
        starts.push((offset, line));
        offset += line.len();
    }
    let mut out = Vec::new();
    for (k, (at, line)) in starts.iter().enumerate() {
        if def_name(line) != Some(name) {
            continue;
        }
        let indent = indent_of(line);
        let mut first = k;
        while first > 0 && {
            let prev = starts[first - 1].1;
            prev.trim_start().starts_with('@') && indent_of(prev) == indent
        } {
            first -= 1;
        }
        let mut end = k + 1;
        let mut last = k + 1;
        while end < starts.len() {
            let l = starts[end].1;
            if l.trim().is_empty() {
                end += 1;
                continue;
            }
            if indent_of(l) <= indent {
                break;
            }
            end += 1;
            last = end;
        }
        let stop = starts.get(last).map_or(source.len(), |(o, _)| *o);
        let _ = at;
        out.push((starts[first].0, stop, indent));
    }
    out
}

/// `code` (written at indentation 0) moved to `indent` spaces.
fn reindent(code: &str, indent: &usize) -> String {
    let pad = " ".repeat(*indent);
    code.lines()
        .map(|l| {
            if l.trim().is_empty() {
                String::new()
            } else {
                format!("{pad}{l}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// What the model is told about blocks that were not applied; `instructions` says the format
/// again when nothing in the reply ran.
pub(super) fn problems_message(problems: &[String], format: Option<EditFormat>) -> String {
    let list: Vec<String> = problems.iter().map(|p| format!("- {p}")).collect();
    let mut out = format!("These in your reply were not applied:\n{}", list.join("\n"));
    if let Some(format) = format {
        out.push_str("\n\n");
        out.push_str(bosun_model::instructions(format));
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_fence_is_taken_whole_or_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("a.py"),
            "def f():\n    return 1\n\n\ndef g():\n    return 3\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("k.py"),
            "class A:\n    def f(self):\n        return 1\n\n    def g(self):\n        return 2\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("conftest.py"),
            "def fixture_x():\n    return 1\n",
        )
        .unwrap();
        // A new helper beside the fixed function: nothing (the helper would be lost).
        assert!(
            definition_edits(
                "```python\ndef _helper():\n    return 2\n\ndef f():\n    return _helper()\n```",
                dir.path()
            )
            .is_empty()
        );
        // New top-level code, or an import the file lacks: nothing.
        assert!(
            definition_edits(
                "```python\nimport sys\n\ndef f():\n    return 2\n```",
                dir.path()
            )
            .is_empty()
        );
        // A class without all its methods: nothing; with them: replaced.
        assert!(
            definition_edits(
                "```python\nclass A:\n    def f(self):\n        return 10\n```",
                dir.path()
            )
            .is_empty()
        );
        assert_eq!(
            definition_edits("```python\nclass A:\n    def f(self):\n        return 10\n\n    def g(self):\n        return 2\n```", dir.path()).len(),
            1
        );
        // conftest.py is a test file.
        assert!(
            definition_edits("```python\ndef fixture_x():\n    return 2\n```", dir.path())
                .is_empty()
        );
        // A question's example code is never an edit.
        let mut seq = 0;
        let found = block_calls(
            "```python\ndef f():\n    return 2\n```",
            EditFormat::SearchReplace,
            dir.path(),
            &mut seq,
            false,
        );
        assert!(found.calls.is_empty());
    }

    #[test]
    fn a_new_file_is_never_redirected_onto_a_file_that_shares_its_name() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("x.py"), "def keep():\n    return 1\n").unwrap();
        std::fs::write(dir.path().join("config.json"), "{}").unwrap();
        let mut seq = 0;
        let found = block_calls(
            "tests/x.py\n```python\ndef test_keep():\n    assert True\n```\n\nsrc/config.json\n```json\n{\"a\": 1}\n```",
            EditFormat::Whole,
            dir.path(),
            &mut seq,
            true,
        );
        let paths: Vec<String> = found
            .calls
            .iter()
            .map(|c| {
                serde_json::from_str::<serde_json::Value>(&c.arguments).unwrap()["path"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect();
        assert_eq!(paths, vec!["tests/x.py", "src/config.json"]);
    }

    #[test]
    fn a_block_for_a_made_up_directory_goes_to_the_one_file_of_that_name() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("stats.py"), "x = 1\n").unwrap();
        std::fs::create_dir(dir.path().join("pkg")).unwrap();
        assert_eq!(
            meant_path(dir.path(), "src/stats.py").as_deref(),
            Some("stats.py")
        );
        // An existing directory, or no file of that name: the path as written (a new file).
        assert_eq!(meant_path(dir.path(), "pkg/stats.py"), None);
        assert_eq!(meant_path(dir.path(), "src/other.py"), None);
        let mut seq = 0;
        std::fs::write(dir.path().join("stats.py"), "def mean():\n    return 1\n").unwrap();
        let found = block_calls(
            "src/stats.py\n```python\ndef mean():\n    return 2\n```",
            EditFormat::Whole,
            dir.path(),
            &mut seq,
            true,
        );
        assert!(
            found.calls[0].arguments.contains("\"path\":\"stats.py\""),
            "{:?}",
            found.calls
        );
    }

    #[test]
    fn a_whole_file_block_with_only_the_changed_function_keeps_the_rest_of_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let source = "import re\n\n\ndef a():\n    return 1\n\n\ndef b():\n    return 2\n";
        std::fs::write(dir.path().join("m.py"), source).unwrap();
        let partial = "import re\n\ndef b():\n    return 3\n";
        let edits = partial_file_edits(dir.path(), "m.py", partial, &[])
            .unwrap()
            .unwrap();
        assert_eq!(edits.len(), 1);
        let EditKind::SearchReplace { search, replace } = &edits[0].kind else {
            panic!()
        };
        assert_eq!(
            (search.as_str(), replace.as_str()),
            ("def b():\n    return 2\n", "def b():\n    return 3\n")
        );
        // The whole file, or a file with new top-level code, is a file.
        assert!(partial_file_edits(dir.path(), "m.py", source, &[]).is_none());
        // A partial file with something else new is refused, never written over the file.
        let refused = partial_file_edits(
            dir.path(),
            "m.py",
            "import sys\n\ndef b():\n    return 3\n",
            &[],
        );
        assert!(refused.unwrap().unwrap_err().contains("leaves out `a`"));
        assert!(partial_file_edits(dir.path(), "new.py", partial, &[]).is_none());
    }

    #[test]
    fn a_whole_file_that_renames_or_moves_a_definition_is_the_whole_file() {
        let dir = tempfile::tempdir().unwrap();
        let source = "RATE = 2\n\n\ndef calc_total(x):\n    return x * RATE\n\n\ndef other():\n    return 1\n";
        std::fs::write(dir.path().join("m.py"), source).unwrap();
        // Renamed: a new name for the one left out.
        let renamed = source.replace("calc_total", "order_total");
        assert!(partial_file_edits(dir.path(), "m.py", &renamed, &[]).is_none());
        // Moved: another block of the reply defines it.
        let moved = "RATE = 2\n\n\ndef other():\n    return 1\n";
        assert!(
            partial_file_edits(dir.path(), "m.py", moved, &["calc_total".to_string()]).is_none()
        );
        // Left out and defined nowhere: the definitions it has, as edits.
        let edits = partial_file_edits(dir.path(), "m.py", "def other():\n    return 2\n", &[])
            .unwrap()
            .unwrap();
        assert_eq!(edits.len(), 1);
        // Through block_calls: a rename across two files is two whole files.
        let reply = format!(
            "m.py\n```python\n{renamed}```\nuse.py\n```python\nfrom m import order_total\n```\n"
        );
        let mut seq = 0;
        let found = block_calls(&reply, EditFormat::Whole, dir.path(), &mut seq, true);
        assert!(found.problems.is_empty(), "{:?}", found.problems);
        let names: Vec<&str> = found.calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["write_file", "write_file"]);
    }

    #[test]
    fn code_left_out_is_never_written() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("m.py"),
            "def a():\n    return 1\n\n\ndef b():\n    return 2\n",
        )
        .unwrap();
        for elided in [
            "# ...",
            "    # ... rest of the code",
            "...",
            "# rest of the file unchanged",
            "    # your code here",
            "// ...",
        ] {
            let reply = format!("m.py\n```python\ndef a():\n    return 3\n\n\n{elided}\n```\n");
            let mut seq = 0;
            let found = block_calls(&reply, EditFormat::Whole, dir.path(), &mut seq, true);
            assert!(found.calls.is_empty(), "{elided}: {:?}", found.calls);
            assert!(
                found.problems[0].contains(&format!("leaves code out (`{}`)", elided.trim())),
                "{:?}",
                found.problems
            );
        }
        // A comment that only mentions such words, and `...` the file already has, are code.
        std::fs::write(dir.path().join("p.py"), "class P:\n    ...\n").unwrap();
        let reply = "p.py\n```python\n# the order stays the same as before\nclass P:\n    ...\n\n\nX = 1\n```\n";
        let mut seq = 0;
        let found = block_calls(reply, EditFormat::Whole, dir.path(), &mut seq, true);
        assert!(found.problems.is_empty(), "{:?}", found.problems);
        assert_eq!(found.calls.len(), 1);
        // A plain fence cut off before its end is never an edit.
        let cut = "```python\ndef a():\n    return 3\n";
        assert!(definition_edits(cut, dir.path()).is_empty());
    }

    #[test]
    fn a_corrected_function_in_a_plain_fence_replaces_its_one_definition() {
        let dir = tempfile::tempdir().unwrap();
        let source = "import math\n\n\ndef counts(xs):\n    return {}\n\n\n@cache\ndef dedupe(items):\n    \"\"\"Doc.\"\"\"\n    return list(set(items))\n\n\nclass Box:\n    def size(self):\n        return 0\n";
        std::fs::write(dir.path().join("util.py"), source).unwrap();
        std::fs::write(dir.path().join("test_util.py"), "def dedupe():\n    pass\n").unwrap();
        let reply = "Here is the fix:\n\n```python\n@cache\ndef dedupe(items):\n    seen = set()\n    return [x for x in items if not (x in seen or seen.add(x))]\n```\nAnd:\n```py\ndef size(self):\n    return 1\n```\n```python\ndef counts(xs):\n    return {}\n```";
        let edits = definition_edits(reply, dir.path());
        assert_eq!(edits.len(), 2, "{edits:?}");
        let EditKind::SearchReplace { search, replace } = &edits[0].kind else {
            panic!()
        };
        assert_eq!(edits[0].path, "util.py");
        assert_eq!(
            search,
            "@cache\ndef dedupe(items):\n    \"\"\"Doc.\"\"\"\n    return list(set(items))\n"
        );
        assert!(
            replace.starts_with("@cache\ndef dedupe(items):\n    seen = set()"),
            "{replace}"
        );
        assert!(replace.ends_with("seen.add(x))]\n"), "{replace:?}");
        // A method is re-indented to where it stands; an unchanged definition is no edit.
        let EditKind::SearchReplace { search, replace } = &edits[1].kind else {
            panic!()
        };
        assert_eq!(search, "    def size(self):\n        return 0\n");
        assert_eq!(replace, "    def size(self):\n        return 1\n");
        // A name defined twice, or nowhere, is left alone.
        std::fs::write(dir.path().join("other.py"), "def size():\n    pass\n").unwrap();
        assert!(
            definition_edits("```python\ndef size(self):\n    return 2\n```", dir.path())
                .is_empty()
        );
        assert!(
            definition_edits("```python\ndef nowhere():\n    return 2\n```", dir.path()).is_empty()
        );
    }

    #[test]
    fn blocks_become_calls_numbered_after_the_task_s_earlier_ones() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("old.txt"), "x\n").unwrap();
        let text = "new.txt\n<<<<<<< SEARCH\n=======\nhello\n>>>>>>> REPLACE\n\nold.txt\n<<<<<<< SEARCH\n=======\nagain\n>>>>>>> REPLACE\n\nold.txt\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n";
        let mut seq = 4;
        let found = block_calls(text, EditFormat::SearchReplace, dir.path(), &mut seq, true);
        assert_eq!(seq, 6);
        let shown: Vec<(&str, &str, &str)> = found
            .calls
            .iter()
            .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
            .collect();
        assert_eq!(
            shown,
            vec![
                (
                    "recovered_5",
                    "write_file",
                    r#"{"content":"hello\n","path":"new.txt"}"#
                ),
                (
                    "recovered_6",
                    "edit_file",
                    r#"{"new_string":"y\n","old_string":"x\n","path":"old.txt"}"#
                ),
            ]
        );
        assert_eq!(found.problems.len(), 1);
        assert!(found.problems[0].contains("`old.txt` exists"));
    }

    #[test]
    fn a_text_format_offers_no_edit_tools() {
        let all = bosun_tools::ToolRegistry::builtin().specs();
        let names_for = |f, small| -> Vec<String> {
            offered_tools(&all, f, small)
                .into_iter()
                .map(|t| t.name)
                .collect()
        };
        let names = |f| names_for(f, false);
        assert_eq!(names(EditFormat::Tools).len(), all.len());
        let offered = names(EditFormat::Whole);
        assert!(offered.contains(&"read_file".to_string()));
        for gone in EDIT_TOOLS {
            assert!(!offered.contains(&gone.to_string()), "{gone}");
        }
        assert_eq!(offered, names(EditFormat::SearchReplace));
        // A small model: no plan or patch tool; writing whole files, only read_file.
        let small = names_for(EditFormat::SearchReplace, true);
        assert!(small.contains(&"run_command".to_string()), "{small:?}");
        assert!(!small.contains(&"update_plan".to_string()), "{small:?}");
        let small_tools = names_for(EditFormat::Tools, true);
        assert!(
            small_tools.contains(&"edit_file".to_string()),
            "{small_tools:?}"
        );
        assert!(
            !small_tools.contains(&"apply_patch".to_string()),
            "{small_tools:?}"
        );
        assert_eq!(
            names_for(EditFormat::Whole, true),
            vec!["read_file".to_string()]
        );
    }
}
