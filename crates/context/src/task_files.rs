//! The files a task is about, shown whole in a small model's first request (the direct turn:
//! the files and the edit format, no tools, as Aider's whole format): the files the prompt
//! names, then the files that define or use the identifiers it names (`calc_total()`,
//! `UserRecord`, `MAX_RETRIES`), then the tests of the named files, each whole or not at all,
//! within one byte budget. Until the context engine's repository map exists, this is how the
//! request finds the callers of a function the prompt renames.

use std::path::Path;

/// One file of the task, whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskFile {
    /// Worktree-relative, `/` separators.
    pub path: String,
    pub content: String,
    /// Why it is shown: `named`, `uses <identifier>` or `test of <path>`.
    pub reason: String,
}

/// Source files bigger than this are never searched for identifiers.
const SEARCH_LIMIT_BYTES: u64 = 256 * 1024;
/// At most this much source is searched for identifiers, in all.
const SEARCH_TOTAL_BYTES: u64 = 8 << 20;
/// At most this many files are shown.
const MAX_FILES: usize = 6;

/// The task's files for `prompt` in `worktree`, within `cap` bytes of content in all. `None`
/// when a file the prompt names cannot be shown whole within the cap (a whole-file edit of a
/// file the model has not seen whole would lose the rest): the task then goes the tool way.
/// Empty when the prompt names no file and no identifier any file has.
pub fn task_files(
    worktree: &Path,
    prompt: &str,
    readable: &dyn Fn(&str) -> bool,
    cap: usize,
) -> Option<Vec<TaskFile>> {
    let mut files = Vec::new();
    crate::repo::list(worktree, "", 0, readable, &mut files);
    files.sort();
    let mut out: Vec<TaskFile> = Vec::new();
    let mut used = 0usize;
    let read = |rel: &str| -> Option<String> {
        String::from_utf8(crate::read_in_worktree(worktree, rel)?).ok()
    };
    for name in crate::repo::named_files(prompt, &files) {
        let content = read(&name)?;
        if used + content.len() > cap || content.contains('\0') {
            return None;
        }
        used += content.len();
        out.push(TaskFile {
            path: name,
            content,
            reason: "named".into(),
        });
    }
    let add = |path: &str, reason: String, out: &mut Vec<TaskFile>, used: &mut usize| {
        if out.len() >= MAX_FILES || out.iter().any(|f| f.path == path) {
            return;
        }
        let Some(content) = read(path) else { return };
        if *used + content.len() > cap || content.contains('\0') {
            return;
        }
        *used += content.len();
        out.push(TaskFile {
            path: path.to_string(),
            content,
            reason,
        });
    };
    // The files that define or use what the prompt names, definitions first.
    let idents = identifiers(prompt);
    if !idents.is_empty() {
        // At most SEARCH_TOTAL_BYTES read in all (a big repository is the map's job).
        let mut budget = SEARCH_TOTAL_BYTES;
        let sources: Vec<(&String, String)> = files
            .iter()
            .filter(|f| is_source(f))
            .filter(|f| {
                std::fs::symlink_metadata(worktree.join(f)).is_ok_and(|m| {
                    let fits = m.is_file() && m.len() <= SEARCH_LIMIT_BYTES && m.len() <= budget;
                    if fits {
                        budget -= m.len();
                    }
                    fits
                })
            })
            .filter_map(|f| Some((f, read(f)?)))
            .collect();
        for ident in &idents {
            let mut defining = Vec::new();
            let mut using = Vec::new();
            for (path, text) in &sources {
                if !has_word(text, ident) {
                    continue;
                }
                if defines(text, ident) {
                    defining.push(path.as_str());
                } else {
                    using.push(path.as_str());
                }
            }
            for path in defining.into_iter().chain(using) {
                add(path, format!("uses {ident}"), &mut out, &mut used);
            }
        }
    }
    // The tests of the named files (`test_x.py`, `x_test.py`, `tests/test_x.py`, `x.test.ts`…).
    let named: Vec<String> = out
        .iter()
        .filter(|f| f.reason == "named")
        .map(|f| f.path.clone())
        .collect();
    for path in named {
        for test in tests_of(&path, &files) {
            add(&test, format!("test of {path}"), &mut out, &mut used);
        }
    }
    Some(out)
}

/// `paths` as they are now (with the reason each was shown), those that exist, are readable
/// and hold text, within `cap` bytes: the direct turn shows the files again at every request.
pub fn files_now(
    worktree: &Path,
    paths: &[(String, String)],
    readable: &dyn Fn(&str) -> bool,
    cap: usize,
) -> Vec<TaskFile> {
    let mut used = 0;
    let mut out = Vec::new();
    for (path, reason) in paths {
        if !readable(path) {
            continue;
        }
        let Some(content) =
            crate::read_in_worktree(worktree, path).and_then(|b| String::from_utf8(b).ok())
        else {
            continue;
        };
        if used + content.len() > cap || content.contains('\0') {
            continue;
        }
        used += content.len();
        out.push(TaskFile {
            path: path.clone(),
            content,
            reason: reason.clone(),
        });
    }
    out
}

/// The worktree's files (as the repository section lists them), for the direct turn's list of
/// the files not shown.
pub fn listed_files(worktree: &Path, readable: &dyn Fn(&str) -> bool) -> Vec<String> {
    let mut files = Vec::new();
    crate::repo::list(worktree, "", 0, readable, &mut files);
    files.sort();
    files
}

/// The files in `files` that look like the tests of `path`.
fn tests_of(path: &str, files: &[String]) -> Vec<String> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let Some((stem, ext)) = name.rsplit_once('.') else {
        return Vec::new();
    };
    if is_test_name(name) {
        return Vec::new();
    }
    let wanted = [
        format!("test_{stem}.{ext}"),
        format!("{stem}_test.{ext}"),
        format!("{stem}.test.{ext}"),
        format!("{stem}.spec.{ext}"),
    ];
    files
        .iter()
        .filter(|f| {
            wanted
                .iter()
                .any(|w| f.rsplit('/').next() == Some(w.as_str()))
        })
        .cloned()
        .collect()
}

/// Whether a file name is a test's.
pub fn is_test_name(name: &str) -> bool {
    let name = name.rsplit('/').next().unwrap_or(name);
    name.starts_with("test_")
        || name == "conftest.py"
        || name.rsplit_once('.').is_some_and(|(stem, _)| {
            stem.ends_with("_test") || stem.ends_with(".test") || stem.ends_with(".spec")
        })
}

const SOURCE_EXTENSIONS: &[&str] = &[
    "py", "rs", "ts", "tsx", "js", "jsx", "mjs", "cjs", "go", "java", "kt", "c", "h", "cc", "cpp",
    "hpp", "rb", "php", "cs", "swift", "scala", "lua", "sh",
];

fn is_source(path: &str) -> bool {
    path.rsplit_once('.')
        .is_some_and(|(_, ext)| SOURCE_EXTENSIONS.contains(&ext))
}

/// The identifiers a prompt names: a word written as a call (`calc_total()`), in backticks, or
/// shaped like code (an underscore, an inner capital, or all capitals of three letters or
/// more), in the order named, each once.
pub fn identifiers(prompt: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let chars: Vec<char> = prompt.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if chars[i].is_alphabetic() || chars[i] == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let before = start.checked_sub(1).map(|j| chars[j]);
            let after = chars.get(i).copied();
            // A file name's parts (`stats` of `stats.py`) are not identifiers; the first part
            // of a qualified name (`Transport` of `Transport.send()`) is.
            let next: String = chars
                .get(i + 1..)
                .unwrap_or_default()
                .iter()
                .take_while(|c| c.is_alphanumeric() || **c == '_')
                .collect();
            let dotted = after == Some('.') && !next.is_empty();
            const OTHER_EXTENSIONS: &[&str] = &[
                "md", "txt", "toml", "json", "yaml", "yml", "cfg", "ini", "html", "css",
            ];
            let dotted_file = dotted
                && (SOURCE_EXTENSIONS.contains(&next.as_str())
                    || OTHER_EXTENSIONS.contains(&next.as_str()));
            let call = after == Some('(');
            let ticked = before == Some('`') || after == Some('`');
            let inner_capital = word.chars().skip(1).any(char::is_uppercase)
                && word.chars().any(char::is_lowercase);
            let shaped = word.contains('_')
                || inner_capital
                || (word.len() >= 3
                    && word
                        .chars()
                        .all(|c| c.is_uppercase() || c.is_ascii_digit() || c == '_')
                    && word.chars().any(char::is_alphabetic));
            let ascii = word.is_ascii();
            if ascii
                && !dotted_file
                && (call || ticked || shaped || dotted)
                && word.len() >= 2
                && !out.contains(&word)
            {
                out.push(word);
            }
        } else {
            i += 1;
        }
    }
    out
}

/// Whether `text` holds `word` as a whole word.
fn has_word(text: &str, word: &str) -> bool {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
    })
}

/// Whether `text` defines `ident` (a function, class, type or a top-level constant).
fn defines(text: &str, ident: &str) -> bool {
    text.lines().any(|line| {
        let l = line.trim_start();
        let rest = [
            "def ",
            "async def ",
            "class ",
            "fn ",
            "pub fn ",
            "function ",
            "struct ",
            "enum ",
            "type ",
            "interface ",
            "const ",
            "let ",
            "var ",
            "func ",
        ]
        .iter()
        .find_map(|k| l.strip_prefix(k));
        if let Some(rest) = rest {
            return rest.starts_with(ident)
                && !rest[ident.len()..]
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_alphanumeric() || c == '_');
        }
        // `NAME = …` at the top level.
        line.starts_with(ident)
            && line[ident.len()..].trim_start().starts_with('=')
            && !line[ident.len()..].trim_start().starts_with("==")
    })
}

/// The task's files as file listings (a path line, a fence with the content), for the direct
/// turn's first message.
pub fn render_task_files(files: &[TaskFile]) -> String {
    let mut out = String::new();
    for f in files {
        let lang = fence_language(&f.path);
        let fence = if f.content.contains("```") {
            "````"
        } else {
            "```"
        };
        out.push_str(&f.path);
        out.push('\n');
        out.push_str(fence);
        out.push_str(lang);
        out.push('\n');
        out.push_str(&f.content);
        if !f.content.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(fence);
        out.push_str("\n\n");
    }
    out
}

fn fence_language(path: &str) -> &'static str {
    match path.rsplit_once('.').map(|(_, e)| e) {
        Some("py") => "python",
        Some("rs") => "rust",
        Some("ts" | "tsx") => "typescript",
        Some("js" | "jsx" | "mjs" | "cjs") => "javascript",
        Some("go") => "go",
        Some("java") => "java",
        Some("rb") => "ruby",
        Some("c" | "h") => "c",
        Some("cc" | "cpp" | "hpp") => "cpp",
        Some("sh") => "sh",
        Some("toml") => "toml",
        Some("json") => "json",
        Some("md") => "markdown",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use std::fs;

    #[test]
    fn identifiers_are_the_words_shaped_like_code() {
        assert_eq!(
            identifiers(
                "Rename calc_total() in pricing.py to order_total() and update every caller."
            ),
            ["calc_total", "order_total"]
        );
        assert_eq!(
            identifiers("Rename the class UserRecord in models.py to Account, and update store.py"),
            ["UserRecord"]
        );
        assert_eq!(
            identifiers("MAX_RETRIES is defined in both client.py and worker.py. Move it"),
            ["MAX_RETRIES"]
        );
        assert_eq!(
            identifiers("pass it down to Transport.send() in transport.py; `timeout` too"),
            ["Transport", "send", "timeout"]
        );
        assert!(identifiers("Please fix the bug in the parser. It is OK now?").is_empty());
    }

    #[test]
    fn the_named_files_then_the_callers_then_the_tests_each_whole() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        fs::write(
            p.join("pricing.py"),
            "def calc_total(items):\n    return sum(items)\n",
        )
        .unwrap();
        fs::write(
            p.join("cart.py"),
            "from pricing import calc_total\n\nx = calc_total([1])\n",
        )
        .unwrap();
        fs::write(p.join("other.py"), "def unrelated():\n    pass\n").unwrap();
        fs::write(p.join("test_pricing.py"), "import pricing\n").unwrap();
        fs::write(
            p.join("big.py"),
            format!("calc_total = 1\n{}", "# x\n".repeat(5000)),
        )
        .unwrap();
        let files = task_files(
            p,
            "Rename calc_total() in pricing.py to order_total() and update every caller.",
            &|_| true,
            4096,
        )
        .unwrap();
        let shown: Vec<(&str, &str)> = files
            .iter()
            .map(|f| (f.path.as_str(), f.reason.as_str()))
            .collect();
        assert_eq!(
            shown,
            [
                ("pricing.py", "named"),
                ("cart.py", "uses calc_total"),
                ("test_pricing.py", "test of pricing.py")
            ]
        );
        let text = render_task_files(&files);
        assert!(
            text.starts_with("pricing.py\n```python\ndef calc_total(items):\n"),
            "{text}"
        );
        // A named file that cannot be shown whole: no direct turn.
        assert!(task_files(p, "Look at big.py", &|_| true, 4096).is_none());
        // A read-denied file is neither named nor searched.
        let files = task_files(p, "Fix calc_total()", &|f| f != "cart.py", 4096).unwrap();
        assert!(files.iter().all(|f| f.path != "cart.py"), "{files:?}");
    }
}
