//! An analysed change as the protocol's `ReviewFile`: status, counts, hunks with their headers
//! and (unless the file is large) their lines.

use super::change::{Analysed, Hunk};
use super::text;
use crate::entry::MODE_LINK;
use bosun_protocol::{FileReviewState, FileStatus, HunkKind, HunkState, ReviewFile, ReviewHunk};

/// Beyond this size (either side) or this many changed lines, a file is `large`.
pub(crate) const LARGE_BYTES: usize = 1024 * 1024;
pub(crate) const LARGE_LINES: u32 = 10_000;

pub(crate) fn status(a: &Analysed) -> FileStatus {
    match (&a.change.old, &a.change.new) {
        (None, _) => FileStatus::Added,
        (_, None) => FileStatus::Deleted,
        (Some(old), Some(new)) => {
            if old.path != new.path {
                FileStatus::Renamed
            } else if (old.mode == MODE_LINK) != (new.mode == MODE_LINK) {
                FileStatus::TypeChanged
            } else if old.mode != new.mode && old.id == new.id {
                FileStatus::ModeChanged
            } else {
                FileStatus::Modified
            }
        }
    }
}

pub(crate) fn is_large(a: &Analysed) -> bool {
    let (added, removed) = a.added_removed();
    a.old_bytes.len() > LARGE_BYTES
        || a.new_bytes.len() > LARGE_BYTES
        || added + removed > LARGE_LINES
}

/// The file as listed; `with_lines` is ignored (no lines) for a large file.
pub(crate) fn review_file(a: &Analysed, with_lines: bool) -> ReviewFile {
    let large = is_large(a);
    let (added, removed) = a.added_removed();
    let lines = with_lines && !large;
    let hunks = a
        .hunks
        .iter()
        .enumerate()
        .map(|(i, h)| review_hunk(a, h, i as u32 + 1, lines))
        .collect();
    ReviewFile {
        path: a.change.path().to_string(),
        old_path: a.change.old_path().map(String::from),
        status: status(a),
        binary: a.binary,
        non_utf8: a.non_utf8,
        old_mode: a.change.old.as_ref().map(|s| s.mode),
        new_mode: a.change.new.as_ref().map(|s| s.mode),
        old_size: a.change.old.as_ref().map(|_| a.old_bytes.len() as u64),
        new_size: a.change.new.as_ref().map(|_| a.new_bytes.len() as u64),
        added,
        removed,
        state: FileReviewState::Unreviewed,
        large,
        hunks,
    }
}

pub(crate) fn review_hunk(a: &Analysed, hunk: &Hunk, number: u32, with_lines: bool) -> ReviewHunk {
    let mut out = ReviewHunk {
        number,
        id: hunk.id.clone(),
        kind: hunk.kind,
        state: HunkState::Unreviewed,
        old_start: 0,
        old_lines: 0,
        new_start: 0,
        new_lines: 0,
        header: String::new(),
        added: 0,
        removed: 0,
        lines: Vec::new(),
        provenance: Vec::new(),
    };
    let old_mode = a.change.old.as_ref().map_or(0, |s| s.mode);
    let new_mode = a.change.new.as_ref().map_or(0, |s| s.mode);
    match (hunk.kind, hunk.text.and_then(|i| a.text_hunks.get(i))) {
        (HunkKind::Text, Some(t)) => {
            out.old_start = if t.old_len == 0 {
                t.old_start
            } else {
                t.old_start + 1
            } as u32;
            out.old_lines = t.old_len as u32;
            out.new_start = if t.new_len == 0 {
                t.new_start
            } else {
                t.new_start + 1
            } as u32;
            out.new_lines = t.new_len as u32;
            out.header = t.header();
            for (o, n) in t.changes() {
                out.removed += o.len() as u32;
                out.added += n.len() as u32;
            }
            if with_lines {
                let old = text::split_lines(&a.old_bytes);
                let new = text::split_lines(&a.new_bytes);
                out.lines = t.lines(&old, &new);
            }
        }
        (HunkKind::Mode, _) => out.header = format!("mode {old_mode:o} → {new_mode:o}"),
        (HunkKind::Rename, _) => {
            out.header = format!(
                "rename {} → {}",
                a.change.old_path().unwrap_or_default(),
                a.change.path()
            );
        }
        (HunkKind::Empty, _) => {
            out.header = if a.change.new.is_some() {
                "empty file added".to_string()
            } else {
                "empty file deleted".to_string()
            };
        }
        _ => {
            let size = |side: bool, len: usize| {
                if side {
                    format!("{len} B")
                } else {
                    "none".to_string()
                }
            };
            out.header = format!(
                "binary {} → {}",
                size(a.change.old.is_some(), a.old_bytes.len()),
                size(a.change.new.is_some(), a.new_bytes.len())
            );
        }
    }
    out
}
