//! One changed file between two trees and its hunks: text hunks, plus Mode / Rename / Binary /
//! Empty hunks for what is not lines; and `compose`, the file with only some hunks applied.

use super::text::{self, TextHunk};
use crate::entry::{MODE_EXEC, MODE_FILE, MODE_LINK};
use crate::error::{GitContext, Result};
use bosun_protocol::HunkKind;
use git2::{Delta, DiffFindOptions, DiffOptions, Oid, Repository, Tree};
use std::collections::HashMap;

/// A file's entry on one side of a change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Side {
    pub path: String,
    pub id: Oid,
    pub mode: u32,
}

/// A file that differs between two trees (a rename pairs its two paths).
#[derive(Debug, Clone)]
pub(crate) struct FileChange {
    pub old: Option<Side>,
    pub new: Option<Side>,
}

impl FileChange {
    /// The path a user names it by: the new path, or the old one for a deletion.
    pub fn path(&self) -> &str {
        match (&self.new, &self.old) {
            (Some(new), _) => &new.path,
            (None, Some(old)) => &old.path,
            (None, None) => "",
        }
    }

    pub fn old_path(&self) -> Option<&str> {
        match (&self.old, &self.new) {
            (Some(old), Some(new)) if old.path != new.path => Some(&old.path),
            _ => None,
        }
    }
}

/// The changed files between two trees, renames paired, in path order.
pub(crate) fn changes_between(
    repo: &Repository,
    old: &Tree<'_>,
    new: &Tree<'_>,
) -> Result<Vec<FileChange>> {
    let mut opts = DiffOptions::new();
    opts.include_typechange(true);
    let mut diff = repo
        .diff_tree_to_tree(Some(old), Some(new), Some(&mut opts))
        .git_ctx("comparing the base with the latest checkpoint")?;
    diff.find_similar(Some(DiffFindOptions::new().renames(true)))
        .git_ctx("finding renames")?;
    let empty_blob = Oid::hash_object(git2::ObjectType::Blob, b"").git_ctx("hashing")?;
    let mut out = Vec::new();
    for delta in diff.deltas() {
        let side = |f: git2::DiffFile<'_>| {
            let path = f.path().and_then(|p| p.to_str())?.to_string();
            (!f.id().is_zero()).then(|| Side {
                path,
                id: f.id(),
                mode: u32::from(f.mode()),
            })
        };
        let (old, new) = match delta.status() {
            Delta::Added => (None, side(delta.new_file())),
            Delta::Deleted => (side(delta.old_file()), None),
            Delta::Modified | Delta::Renamed | Delta::Typechange => {
                (side(delta.old_file()), side(delta.new_file()))
            }
            _ => continue,
        };
        let empty = |s: &Option<Side>| s.as_ref().is_some_and(|s| s.id == empty_blob);
        if delta.status() == Delta::Renamed && empty(&old) {
            // Like git, an empty file is no evidence of a move: a deletion and an addition.
            out.push(FileChange { old, new: None });
            out.push(FileChange { old: None, new });
        } else if old.is_some() || new.is_some() {
            out.push(FileChange { old, new });
        }
    }
    out.sort_by(|a, b| a.path().cmp(b.path()));
    Ok(out)
}

/// One hunk of a file: what it changes and its stable id.
#[derive(Debug, Clone)]
pub(crate) struct Hunk {
    pub id: String,
    pub kind: HunkKind,
    /// Index into `Analysed::text_hunks` for text hunks.
    pub text: Option<usize>,
}

/// A change with its contents loaded and its hunks found.
pub(crate) struct Analysed {
    pub change: FileChange,
    pub old_bytes: Vec<u8>,
    pub new_bytes: Vec<u8>,
    /// Content compared as a whole (binary, symlink, type change), not as lines.
    pub binary: bool,
    pub non_utf8: bool,
    pub text_hunks: Vec<TextHunk>,
    pub hunks: Vec<Hunk>,
}

fn is_regular(mode: u32) -> bool {
    mode == MODE_FILE || mode == MODE_EXEC
}

pub(crate) fn analyse(repo: &Repository, change: FileChange) -> Result<Analysed> {
    let load = |side: &Option<Side>| -> Result<Vec<u8>> {
        match side {
            Some(s) if s.mode != 0o160000 => Ok(repo
                .find_blob(s.id)
                .git_ctx(format!("reading the content of {}", s.path))?
                .content()
                .to_vec()),
            _ => Ok(Vec::new()),
        }
    };
    let old_bytes = load(&change.old)?;
    let new_bytes = load(&change.new)?;
    let modes = [&change.old, &change.new].map(|s| s.as_ref().map(|s| s.mode));
    let binary = modes.iter().flatten().any(|m| !is_regular(*m))
        || text::is_binary(&old_bytes)
        || text::is_binary(&new_bytes);
    let non_utf8 = !binary
        && (std::str::from_utf8(&old_bytes).is_err() || std::str::from_utf8(&new_bytes).is_err());
    let mut a = Analysed {
        change,
        old_bytes,
        new_bytes,
        binary,
        non_utf8,
        text_hunks: Vec::new(),
        hunks: Vec::new(),
    };
    a.find_hunks();
    Ok(a)
}

impl Analysed {
    fn find_hunks(&mut self) {
        // The base path where there is one, so rejecting a rename keeps the other hunks' ids.
        let path = match &self.change.old {
            Some(old) => old.path.clone(),
            None => self.change.path().to_string(),
        };
        let mut seen: HashMap<String, u32> = HashMap::new();
        let mut push =
            |hunks: &mut Vec<Hunk>, kind: HunkKind, key: Vec<u8>, text: Option<usize>| {
                let mut hasher = sha1_smol::Sha1::new();
                hasher.update(path.as_bytes());
                hasher.update(&[0]);
                hasher.update(format!("{kind:?}").as_bytes());
                hasher.update(&[0]);
                hasher.update(&key);
                let digest = hasher.digest().to_string();
                let occurrence = seen.entry(digest.clone()).or_insert(0);
                *occurrence += 1;
                let mut hasher = sha1_smol::Sha1::new();
                hasher.update(digest.as_bytes());
                hasher.update(&occurrence.to_le_bytes());
                let id = hasher.digest().to_string()[..16].to_string();
                hunks.push(Hunk { id, kind, text });
            };
        let mut hunks = Vec::new();
        match (&self.change.old, &self.change.new) {
            (Some(old), Some(new)) => {
                if old.path != new.path {
                    let key = format!("{}\0{}", old.path, new.path).into_bytes();
                    push(&mut hunks, HunkKind::Rename, key, None);
                }
                if old.mode != new.mode && is_regular(old.mode) && is_regular(new.mode) {
                    let key = format!("{:o}\0{:o}", old.mode, new.mode).into_bytes();
                    push(&mut hunks, HunkKind::Mode, key, None);
                }
                let type_change = is_regular(old.mode) != is_regular(new.mode);
                if old.id != new.id || type_change {
                    if self.binary {
                        let key = format!("{}\0{}\0{:o}", old.id, new.id, new.mode).into_bytes();
                        push(&mut hunks, HunkKind::Binary, key, None);
                    } else {
                        self.push_text_hunks(&mut hunks, &mut push);
                    }
                }
            }
            (None, Some(side)) | (Some(side), None) => {
                let added = self.change.new.is_some();
                let bytes = if added {
                    &self.new_bytes
                } else {
                    &self.old_bytes
                };
                let key = format!("{added}\0{}\0{:o}", side.id, side.mode).into_bytes();
                if bytes.is_empty() && side.mode != MODE_LINK {
                    push(&mut hunks, HunkKind::Empty, key, None);
                } else if self.binary {
                    push(&mut hunks, HunkKind::Binary, key, None);
                } else {
                    self.push_text_hunks(&mut hunks, &mut push);
                }
            }
            (None, None) => {}
        }
        self.hunks = hunks;
    }

    fn push_text_hunks(
        &mut self,
        hunks: &mut Vec<Hunk>,
        push: &mut impl FnMut(&mut Vec<Hunk>, HunkKind, Vec<u8>, Option<usize>),
    ) {
        let old = text::split_lines(&self.old_bytes);
        let new = text::split_lines(&self.new_bytes);
        self.text_hunks = text::diff_hunks(&old, &new);
        for (i, hunk) in self.text_hunks.iter().enumerate() {
            let mut key = Vec::new();
            for line in hunk.removed_lines(&old) {
                key.extend_from_slice(b"-");
                key.extend_from_slice(line);
                key.push(0);
            }
            for line in hunk.added_lines(&new) {
                key.extend_from_slice(b"+");
                key.extend_from_slice(line);
                key.push(0);
            }
            push(hunks, HunkKind::Text, key, Some(i));
        }
    }

    pub fn added_removed(&self) -> (u32, u32) {
        let (mut added, mut removed) = (0, 0);
        for hunk in &self.text_hunks {
            for (o, n) in hunk.changes() {
                removed += o.len() as u32;
                added += n.len() as u32;
            }
        }
        (added, removed)
    }

    /// The file with only the hunks `keep` accepts applied to its old side: None when it does
    /// not exist then.
    pub fn compose(&self, keep: &dyn Fn(&str) -> bool) -> Option<Composed> {
        let kept = |kind: HunkKind| self.hunks.iter().any(|h| h.kind == kind && keep(&h.id));
        let any_kept = self.hunks.iter().any(|h| keep(&h.id));
        let text_mask: Vec<bool> = {
            let mut mask = vec![false; self.text_hunks.len()];
            for hunk in &self.hunks {
                if let Some(i) = hunk.text {
                    mask[i] = keep(&hunk.id);
                }
            }
            mask
        };
        let composed_text = || {
            let old = text::split_lines(&self.old_bytes);
            let new = text::split_lines(&self.new_bytes);
            text::compose(&old, &new, &self.text_hunks, &text_mask)
        };
        let whole = |side: &Side, bytes: &[u8], mode: u32| Composed {
            path: side.path.clone(),
            mode,
            content: bytes.to_vec(),
            id: Some(side.id),
        };
        match (&self.change.old, &self.change.new) {
            (None, None) => None,
            (None, Some(new)) if self.text_hunks.is_empty() => {
                any_kept.then(|| whole(new, &self.new_bytes, new.mode))
            }
            (None, Some(new)) => any_kept.then(|| Composed {
                path: new.path.clone(),
                mode: new.mode,
                content: composed_text(),
                id: None,
            }),
            (Some(old), None) => (!any_kept).then(|| whole(old, &self.old_bytes, old.mode)),
            (Some(old), Some(new)) => {
                let mut composed = if !self.binary {
                    Composed {
                        path: old.path.clone(),
                        mode: old.mode,
                        content: composed_text(),
                        id: None,
                    }
                } else if kept(HunkKind::Binary) {
                    whole(new, &self.new_bytes, new.mode)
                } else {
                    whole(old, &self.old_bytes, old.mode)
                };
                composed.path = if kept(HunkKind::Rename) {
                    new.path.clone()
                } else {
                    old.path.clone()
                };
                if kept(HunkKind::Mode) {
                    composed.mode = new.mode;
                }
                Some(composed)
            }
        }
    }
}

/// A file's composed state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Composed {
    pub path: String,
    pub mode: u32,
    pub content: Vec<u8>,
    /// The blob, when the content is one side's whole (a gitlink's commit id).
    pub id: Option<Oid>,
}

impl Composed {
    /// Its blob id, writing the blob when it is new content.
    pub fn blob(&self, repo: &Repository) -> Result<Oid> {
        match self.id {
            Some(id) => Ok(id),
            None => repo
                .blob(&self.content)
                .git_ctx(format!("writing the content of {}", self.path)),
        }
    }
}
