//! What the model is told: the system prompt and the project's memory files.
//!
//! The first request is kept lean on purpose: local models process the prompt before the first
//! token, and peers send 35–40 KB. Bosun's system prompt is a few hundred bytes plus the project's
//! own instructions (AGENTS.md, CLAUDE.md, …), capped.

use std::fs;
use std::path::Path;

mod layers;
mod live;
pub mod localise_bench;
mod map;
pub mod map_bench;
mod repo;
mod symbols;
mod task_files;
pub use layers::{Assembled, Change, Inputs, Layer, Piece, Shares, assemble};
pub use live::{Keep, LiveMap};
pub use map::{
    BuildStats, FOCUS_BLEND, MAP_FILE_MAX_BYTES, MAP_MAX_FILES, MapFile, RankedFile, Rendered,
    RepoMap, blob_id, estimate_tokens, outline_lines,
};
pub use repo::{
    REPO_CONTEXT_CAP_BYTES, SMALL_REPO_CONTEXT_CAP_BYTES, file_list, named_files_now, repo_context,
    repo_context_within,
};
pub use symbols::{SYMBOL_KINDS, Symbol, SymbolQuery, Weighted, kind_matches};
pub use task_files::{
    TaskFile, files_now, identifiers, is_test_name, listed_files, render_task_files, task_files,
};

/// What the repository map's section of a request starts with.
pub const MAP_HEADING: &str = "# Repository map\nThe source files most related to the task, ranked; each definition as `line│ signature`, nested ones indented.\n";

/// The built-in system prompt (`assets/prompts/system.md`).
pub const BASE_PROMPT: &str = include_str!("../../../assets/prompts/system.md");

/// The base prompt for a model profiled as small: shorter, and pointed at doing the change
/// with what the request already shows (small models plan, promise and claim instead).
pub const SMALL_BASE_PROMPT: &str = include_str!("../../../assets/prompts/system-small.md");

/// The system prompt of the direct turn of a model profiled as small: the task's files are in
/// the request, the edits come back as file listings, and no tools are offered.
pub const DIRECT_PROMPT: &str = include_str!("../../../assets/prompts/system-direct.md");

/// Project memory files read from the worktree root, in this order; the first few that exist are
/// included.
pub const MEMORY_FILES: &[&str] = &[
    "AGENTS.md",
    "CLAUDE.md",
    ".cursorrules",
    ".github/copilot-instructions.md",
];

/// At most this many bytes of project memory go into the system prompt.
pub const MEMORY_CAP_BYTES: usize = 6 * 1024;

/// A project memory file found in the worktree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryFile {
    pub path: String,
    pub content: String,
    /// True when the content was cut to fit [`MEMORY_CAP_BYTES`].
    pub truncated: bool,
}

/// Reads the project memory files that exist in `worktree`, within the shared byte cap.
/// Unreadable or non-UTF-8 files are skipped: they are the project's notes, not Bosun's.
pub fn memory_files(worktree: &Path) -> Vec<MemoryFile> {
    let mut left = MEMORY_CAP_BYTES;
    let mut found = Vec::new();
    for name in MEMORY_FILES {
        if left == 0 {
            break;
        }
        let Some(bytes) = read_in_worktree(worktree, name) else {
            continue;
        };
        let Ok(text) = String::from_utf8(bytes) else {
            continue;
        };
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        let (content, truncated) = cut_at_char_boundary(text, left);
        left -= content.len();
        found.push(MemoryFile {
            path: (*name).to_string(),
            content: content.to_string(),
            truncated,
        });
    }
    found
}

/// Memory files bigger than this are not read at all (only the cap would be used anyway).
const MEMORY_READ_LIMIT: u64 = 1 << 20;

/// A regular file at `rel` in the worktree, reached through real directories only: the
/// worktree is the agent's, so a memory file that is a symlink (to `~/.netrc`, say), sits behind
/// a symlinked directory, or is a FIFO is not read.
fn read_in_worktree(worktree: &Path, rel: &str) -> Option<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let mut path = worktree.to_path_buf();
    let parts: Vec<&str> = rel.split('/').collect();
    for (i, part) in parts.iter().enumerate() {
        path.push(part);
        let meta = fs::symlink_metadata(&path).ok()?;
        let last = i + 1 == parts.len();
        if (last && !meta.is_file()) || (!last && !meta.is_dir()) {
            return None;
        }
    }
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&path)
        .ok()?;
    let mut bytes = Vec::new();
    file.take(MEMORY_READ_LIMIT).read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

fn cut_at_char_boundary(text: &str, max: usize) -> (&str, bool) {
    if text.len() <= max {
        return (text, false);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (&text[..end], true)
}

/// The system prompt for a task in `worktree`.
pub fn system_prompt(worktree: &Path) -> String {
    system_prompt_from(worktree, BASE_PROMPT)
}

/// [`system_prompt`] for a model profiled as small ([`SMALL_BASE_PROMPT`]).
pub fn small_system_prompt(worktree: &Path) -> String {
    system_prompt_from(worktree, SMALL_BASE_PROMPT)
}

/// [`system_prompt`] for the direct turn ([`DIRECT_PROMPT`]).
pub fn direct_system_prompt(worktree: &Path) -> String {
    system_prompt_from(worktree, DIRECT_PROMPT)
}

fn system_prompt_from(worktree: &Path, base: &str) -> String {
    let mut prompt = base.trim_end().to_string();
    for file in memory_files(worktree) {
        prompt.push_str("\n\n# Project instructions from ");
        prompt.push_str(&file.path);
        prompt.push('\n');
        prompt.push_str(&file.content);
        if file.truncated {
            prompt.push_str("\n[… cut; read the file for the rest]");
        }
    }
    prompt
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn prompt_without_memory_files_is_the_base_prompt() {
        let dir = tempfile::tempdir().unwrap();
        let p = system_prompt(dir.path());
        assert_eq!(p, BASE_PROMPT.trim_end());
        assert!(p.len() < 1024, "system prompt grew to {} bytes", p.len());
    }

    #[test]
    fn memory_files_are_included_in_order_and_capped() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("CLAUDE.md"), "Use tabs.").unwrap();
        fs::write(
            dir.path().join("AGENTS.md"),
            "x".repeat(MEMORY_CAP_BYTES + 10),
        )
        .unwrap();
        let files = memory_files(dir.path());
        assert_eq!(files.len(), 1, "the cap is used up by AGENTS.md");
        assert!(files[0].truncated);
        let p = system_prompt(dir.path());
        assert!(p.contains("# Project instructions from AGENTS.md"));
        assert!(p.contains("[… cut; read the file for the rest]"));
        assert!(!p.contains("Use tabs."));
    }

    #[test]
    fn a_memory_file_that_links_outside_or_is_not_a_regular_file_is_not_read() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("netrc"), "machine x password hunter2\n").unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path().join("netrc"), dir.path().join("AGENTS.md"))
            .unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join(".github")).unwrap();
        std::fs::write(
            outside.path().join("copilot-instructions.md"),
            "hunter2 too\n",
        )
        .unwrap();
        std::fs::create_dir(dir.path().join("CLAUDE.md")).unwrap();
        assert_eq!(memory_files(dir.path()), vec![]);
        assert!(!system_prompt(dir.path()).contains("hunter2"));
    }

    #[test]
    fn non_utf8_memory_file_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("AGENTS.md"), [0xff, 0xfe, 0x41]).unwrap();
        fs::write(dir.path().join("CLAUDE.md"), "Run make test.").unwrap();
        let p = system_prompt(dir.path());
        assert!(p.contains("Run make test."));
        assert!(!p.contains("AGENTS.md"));
    }
}
