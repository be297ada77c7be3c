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
/// tools.
pub(super) fn offered_tools(all: &[ToolSpec], format: EditFormat) -> Vec<ToolSpec> {
    if format == EditFormat::Tools {
        return all.to_vec();
    }
    all.iter()
        .filter(|t| !EDIT_TOOLS.contains(&t.name.as_str()))
        .cloned()
        .collect()
}

/// The edit blocks of one reply, as calls.
#[derive(Debug, Default)]
pub(super) struct BlockCalls {
    pub calls: Vec<ToolCall>,
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
) -> BlockCalls {
    if format == EditFormat::Tools {
        return BlockCalls {
            text: text.to_string(),
            ..Default::default()
        };
    }
    let found = parse_edit_blocks(text, format);
    let mut out = BlockCalls {
        problems: found.problems,
        text: found.remaining_text,
        calls: Vec::new(),
    };
    for edit in found.edits {
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
    fn blocks_become_calls_numbered_after_the_task_s_earlier_ones() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("old.txt"), "x\n").unwrap();
        let text = "new.txt\n<<<<<<< SEARCH\n=======\nhello\n>>>>>>> REPLACE\n\nold.txt\n<<<<<<< SEARCH\n=======\nagain\n>>>>>>> REPLACE\n\nold.txt\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n";
        let mut seq = 4;
        let found = block_calls(text, EditFormat::SearchReplace, dir.path(), &mut seq);
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
        let names =
            |f| -> Vec<String> { offered_tools(&all, f).into_iter().map(|t| t.name).collect() };
        assert_eq!(names(EditFormat::Tools).len(), all.len());
        let offered = names(EditFormat::Whole);
        assert!(offered.contains(&"read_file".to_string()));
        for gone in EDIT_TOOLS {
            assert!(!offered.contains(&gone.to_string()), "{gone}");
        }
        assert_eq!(offered, names(EditFormat::SearchReplace));
    }
}
