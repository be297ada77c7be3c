//! What the first request says about the repository, so a small model need not discover it
//! with tool calls: a list of the repository's files (a few levels deep, the usual build and
//! dependency folders left out) and the files the prompt names, each capped. Until the context
//! engine's repository map exists, this is the "named files and a file list" of the first
//! request; it stays within [`REPO_CONTEXT_CAP_BYTES`] (about 1,500 tokens).

use std::fs;
use std::path::Path;

/// The whole section, at most.
pub const REPO_CONTEXT_CAP_BYTES: usize = 6 * 1024;
/// Of it, the file list.
const LIST_CAP_BYTES: usize = 2 * 1024;
/// One named file's content, at most.
const NAMED_FILE_CAP_BYTES: usize = 3 * 1024;
/// Directories never listed: dependencies, build outputs, caches, version control.
const SKIPPED_DIRS: &[&str] = &[
    ".git",
    "node_modules",
    "target",
    "dist",
    "build",
    "__pycache__",
    ".venv",
    "venv",
    ".tox",
    ".mypy_cache",
    ".pytest_cache",
    ".next",
    "vendor",
    ".idea",
    ".vscode",
];
const MAX_DEPTH: usize = 4;

/// The repository section for a task in `worktree` whose prompt is `prompt`; `readable` says
/// whether the policy lets a worktree-relative path be read (a read-denied file is neither
/// listed nor shown). Empty when the worktree holds nothing to list.
pub fn repo_context(worktree: &Path, prompt: &str, readable: &dyn Fn(&str) -> bool) -> String {
    repo_context_within(worktree, prompt, readable, REPO_CONTEXT_CAP_BYTES)
}

/// The most bytes of the repository section for a model profiled as small (about 1,000
/// tokens): its whole first request stays under 2,000 tokens with the tools as text.
pub const SMALL_REPO_CONTEXT_CAP_BYTES: usize = 4 * 1024;

/// [`repo_context`] within `cap` bytes.
pub fn repo_context_within(
    worktree: &Path,
    prompt: &str,
    readable: &dyn Fn(&str) -> bool,
    cap: usize,
) -> String {
    let mut files = Vec::new();
    list(worktree, "", 0, readable, &mut files);
    files.sort();
    if files.is_empty() {
        return String::new();
    }
    let mut out = String::from("# The repository\nFiles (more with list_dir):\n");
    let mut shown = 0;
    for f in &files {
        if out.len() + f.len() + 1 > LIST_CAP_BYTES {
            break;
        }
        out.push_str(f);
        out.push('\n');
        shown += 1;
    }
    if shown < files.len() {
        out.push_str(&format!("… and {} more\n", files.len() - shown));
    }
    named_sections(worktree, prompt, &files, cap, "named in the task", &mut out);
    out
}

/// The list of the repository's files alone (the first part of [`repo_context`]): for a request
/// whose layered context shows the files the prompt names.
pub fn file_list(worktree: &Path, readable: &dyn Fn(&str) -> bool) -> String {
    let mut files = Vec::new();
    list(worktree, "", 0, readable, &mut files);
    files.sort();
    if files.is_empty() {
        return String::new();
    }
    let mut out = String::from("# The repository\nFiles (more with list_dir):\n");
    let mut shown = 0;
    for f in &files {
        if out.len() + f.len() + 1 > LIST_CAP_BYTES {
            break;
        }
        out.push_str(f);
        out.push('\n');
        shown += 1;
    }
    if shown < files.len() {
        out.push_str(&format!("… and {} more\n", files.len() - shown));
    }
    out
}

/// The files `prompt` names as they are now, within `cap` bytes (empty when it names none): a
/// later reminder for a small model that lost track of them.
pub fn named_files_now(
    worktree: &Path,
    prompt: &str,
    readable: &dyn Fn(&str) -> bool,
    cap: usize,
) -> String {
    let mut files = Vec::new();
    list(worktree, "", 0, readable, &mut files);
    files.sort();
    let mut out = String::new();
    named_sections(worktree, prompt, &files, cap, "as it is now", &mut out);
    out
}

fn named_sections(
    worktree: &Path,
    prompt: &str,
    files: &[String],
    cap: usize,
    note: &str,
    out: &mut String,
) {
    for name in named_files(prompt, files) {
        let Some(bytes) = crate::read_in_worktree(worktree, &name) else {
            continue;
        };
        let Ok(text) = String::from_utf8(bytes) else {
            continue;
        };
        let left = cap.saturating_sub(out.len() + name.len() + 32);
        if left < 256 {
            break;
        }
        let (content, cut) = crate::cut_at_char_boundary(&text, left.min(NAMED_FILE_CAP_BYTES));
        out.push_str(&format!("\n## {name} ({note})\n```\n{content}"));
        if !content.ends_with('\n') {
            out.push('\n');
        }
        out.push_str("```\n");
        if cut {
            out.push_str(&format!("[… cut: read_file {name} for the rest]\n"));
        }
    }
}

/// Worktree files, relative, through real directories only (no symlinks followed).
pub(crate) fn list(
    dir: &Path,
    rel: &str,
    depth: usize,
    readable: &dyn Fn(&str) -> bool,
    out: &mut Vec<String>,
) {
    if depth > MAX_DEPTH || out.len() > 2000 {
        return;
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let Ok(name) = e.file_name().into_string() else {
            continue;
        };
        // A newline in a name would write lines of its own into the request.
        if name.chars().any(char::is_control) {
            continue;
        }
        let path = if rel.is_empty() {
            name.clone()
        } else {
            format!("{rel}/{name}")
        };
        let Ok(meta) = fs::symlink_metadata(e.path()) else {
            continue;
        };
        if meta.is_dir() {
            if !SKIPPED_DIRS.contains(&name.as_str()) && !name.ends_with(".egg-info") {
                list(&e.path(), &path, depth + 1, readable, out);
            }
        } else if meta.is_file() && name != ".git" && readable(&path) {
            // (A worktree's `.git` is a file pointing at the repository: not the project's.)
            out.push(path);
        }
    }
}

/// The files the prompt names: a word that is a listed path, or the file name of exactly one
/// listed file (`stats.py` for `src/stats.py`), in the order named, each once.
pub(crate) fn named_files(prompt: &str, files: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in prompt.split(|c: char| c.is_whitespace() || "`'\"(),;:<>[]{}".contains(c)) {
        let word = word
            .trim_end_matches(['.', '?', '!'])
            .trim_start_matches("./");
        if word.is_empty() || !word.contains('.') {
            continue;
        }
        let found = if files.iter().any(|f| f == word) {
            Some(word.to_string())
        } else {
            let by_name: Vec<&String> = files
                .iter()
                .filter(|f| f.rsplit('/').next() == Some(word))
                .collect();
            (by_name.len() == 1).then(|| by_name[0].clone())
        };
        if let Some(f) = found
            && !out.contains(&f)
        {
            out.push(f);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn repo() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        fs::create_dir_all(p.join("src/pkg")).unwrap();
        fs::create_dir_all(p.join("tests")).unwrap();
        fs::create_dir_all(p.join("node_modules/left-pad")).unwrap();
        fs::create_dir_all(p.join(".git")).unwrap();
        fs::write(
            p.join("src/pkg/stats.py"),
            "def mean(xs):\n    \"\"\"Average.\"\"\"\n",
        )
        .unwrap();
        fs::write(
            p.join("tests/test_stats.py"),
            "from pkg.stats import mean\n",
        )
        .unwrap();
        fs::write(p.join("node_modules/left-pad/index.js"), "x").unwrap();
        fs::write(p.join(".git/config"), "x").unwrap();
        fs::write(p.join(".env"), "TOKEN=hunter2\n").unwrap();
        fs::write(p.join("README.md"), "# stats\n").unwrap();
        dir
    }

    #[test]
    fn lists_the_files_and_shows_the_ones_the_prompt_names() {
        let dir = repo();
        let readable = |p: &str| p != ".env";
        let c = repo_context(
            dir.path(),
            "Implement mean() in stats.py so tests/test_stats.py passes.",
            &readable,
        );
        assert!(c.starts_with("# The repository\n"), "{c}");
        for f in ["README.md", "src/pkg/stats.py", "tests/test_stats.py"] {
            assert!(c.contains(&format!("{f}\n")), "{f} in {c}");
        }
        assert!(!c.contains("node_modules") && !c.contains(".git/"), "{c}");
        assert!(!c.contains(".env") && !c.contains("hunter2"), "{c}");
        assert!(
            c.contains("## src/pkg/stats.py (named in the task)\n```\ndef mean(xs):"),
            "{c}"
        );
        assert!(
            c.contains("## tests/test_stats.py (named in the task)"),
            "{c}"
        );
        assert!(c.len() <= REPO_CONTEXT_CAP_BYTES, "{}", c.len());
    }

    #[test]
    fn a_symlink_is_neither_listed_nor_read_and_the_section_stays_within_its_cap() {
        let dir = repo();
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("secret.txt"), "hunter2\n").unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("secret.txt"),
            dir.path().join("notes.txt"),
        )
        .unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("linked")).unwrap();
        fs::write(dir.path().join("big.py"), "x = 1\n".repeat(10_000)).unwrap();
        for i in 0..500 {
            fs::write(dir.path().join(format!("f{i:03}.txt")), "").unwrap();
        }
        let c = repo_context(dir.path(), "look at notes.txt and big.py", &|_| true);
        assert!(
            !c.contains("hunter2") && !c.contains("notes.txt") && !c.contains("linked"),
            "{c}"
        );
        assert!(c.contains("… and "), "the list is capped");
        assert!(c.contains("[… cut: read_file big.py for the rest]"), "{c}");
        assert!(c.len() <= REPO_CONTEXT_CAP_BYTES, "{}", c.len());
    }

    #[test]
    fn an_empty_worktree_has_no_section() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(repo_context(dir.path(), "hi", &|_| true), "");
    }
}
