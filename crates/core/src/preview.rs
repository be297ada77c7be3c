//! What an edit would change, shown on its approval request: a unified diff computed from the
//! tool's arguments and the file as it is now.

use std::path::Path;

/// Previews longer than this are cut, with a note.
pub const PREVIEW_CAP_BYTES: usize = 64 * 1024;

/// The diff an edit tool call would make, or `None` for other tools (or unreadable input).
pub fn edit_preview(worktree: &Path, tool: &str, args: &serde_json::Value) -> Option<String> {
    let text = |k: &str| args.get(k).and_then(|v| v.as_str());
    let diff = match tool {
        "apply_patch" => text("patch")?.to_string(),
        "write_file" | "edit_file" => {
            let path = text("path")?;
            let abs = bosun_tools::resolve_in_worktree(worktree, path).ok()?;
            let old = match std::fs::read(&abs) {
                Ok(bytes) => String::from_utf8(bytes).ok()?,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
                Err(_) => return None,
            };
            let new = if tool == "write_file" {
                text("content")?.to_string()
            } else {
                let (from, to) = (text("old_string")?, text("new_string")?);
                let all = args.get("replace_all").and_then(|v| v.as_bool()) == Some(true);
                if from.is_empty() || !old.contains(from) {
                    return None;
                }
                if all {
                    old.replace(from, to)
                } else {
                    old.replacen(from, to, 1)
                }
            };
            similar::TextDiff::from_lines(&old, &new)
                .unified_diff()
                .context_radius(3)
                .header(&format!("a/{path}"), &format!("b/{path}"))
                .to_string()
        }
        _ => return None,
    };
    Some(cap(diff))
}

fn cap(mut s: String) -> String {
    if s.len() <= PREVIEW_CAP_BYTES {
        return s;
    }
    let mut end = PREVIEW_CAP_BYTES;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    let omitted = s.len() - end;
    s.truncate(end);
    s.push_str(&format!(
        "\n[… {omitted} more bytes of the diff not shown]\n"
    ));
    s
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn edits_and_writes_preview_as_unified_diffs() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "one\ntwo\nthree\n").unwrap();
        let edit = edit_preview(
            dir.path(),
            "edit_file",
            &json!({"path": "a.txt", "old_string": "two", "new_string": "2"}),
        )
        .unwrap();
        assert!(
            edit.contains("--- a/a.txt") && edit.contains("+++ b/a.txt"),
            "{edit}"
        );
        assert!(edit.contains("-two\n") && edit.contains("+2\n"), "{edit}");
        let new = edit_preview(
            dir.path(),
            "write_file",
            &json!({"path": "b.txt", "content": "hi\n"}),
        )
        .unwrap();
        assert!(new.contains("+hi\n"), "{new}");
        assert_eq!(
            edit_preview(
                dir.path(),
                "apply_patch",
                &json!({"patch": "--- a/x\n+++ b/x\n"})
            )
            .as_deref(),
            Some("--- a/x\n+++ b/x\n")
        );
        assert_eq!(
            edit_preview(dir.path(), "run_command", &json!({"command": "ls"})),
            None
        );
        // A path outside the worktree is never read for a preview.
        assert_eq!(
            edit_preview(
                dir.path(),
                "write_file",
                &json!({"path": "../../etc/passwd", "content": "x"})
            ),
            None
        );
    }

    #[test]
    fn huge_previews_are_cut_with_a_note() {
        let s = cap("x".repeat(PREVIEW_CAP_BYTES + 10));
        assert!(s.ends_with("[… 10 more bytes of the diff not shown]\n"));
    }
}
