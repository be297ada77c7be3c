//! Rejecting hunks: the worktree file becomes the base with every other hunk applied (the same
//! `compose` a merge uses), recorded as a checkpoint; and putting rejected hunks back.

use super::Rejection;
use super::change::Side;
use super::listing;
use crate::entry::{MODE_FILE, normalise};
use crate::error::{GitContext, Result, WorkspaceError};
use crate::history::DiffPoint;
use crate::materialise::{remove_path, write_blob};
use crate::task::{ChangeHint, Checkpoint, TaskWorktree};
use bosun_protocol::{DiffLine, HunkKind, LineKind, RejectedHunk};
use git2::{Oid, Tree};
use std::collections::BTreeSet;
use std::path::Path;

impl TaskWorktree {
    /// Takes hunks (by id) of `path` out of the worktree and records a checkpoint with `message`.
    pub fn reject_hunks(&mut self, path: &str, ids: &[String], message: &str) -> Result<Rejection> {
        self.ensure_present()?;
        let path = normalise(path)?;
        let history = self.history()?;
        let first = history.analysed_file(&path)?;
        // Unrecorded edits of the file are kept as a checkpoint before it is rewritten.
        let mut touched: Vec<String> = [&first.change.old, &first.change.new]
            .into_iter()
            .flatten()
            .map(|s| s.path.clone())
            .collect();
        touched.dedup();
        let a = match self.checkpoint(
            &ChangeHint::Paths(touched.clone()),
            "Work before rejecting hunks",
        )? {
            Some(_) => history.analysed_file(&path)?,
            None => first,
        };
        for id in ids {
            if !a.hunks.iter().any(|h| &h.id == id) {
                return Err(WorkspaceError::NoSuchHunk {
                    path: path.clone(),
                    hunk: id.clone(),
                    available: a.hunks.len(),
                });
            }
        }
        let rejected = |id: &str| ids.iter().any(|r| r == id);
        let composed = a.compose(&|id| !rejected(id));
        let before = a.change.new.clone();
        if let Some(latest) = before
            .as_ref()
            .filter(|l| composed.as_ref().is_none_or(|c| c.path != l.path))
        {
            remove_path(&self.worktree, &latest.path)?;
        }
        let mut paths: BTreeSet<String> = touched.into_iter().collect();
        if let Some(c) = &composed {
            let blob = c.blob(&self.repo)?;
            write_blob(&self.repo, &self.worktree, &c.path, blob, c.mode)?;
            paths.insert(c.path.clone());
        }
        let chain = history.chain()?;
        let steps = chain.hunk_steps(&history.repo, &a)?;
        let hunks = a
            .hunks
            .iter()
            .enumerate()
            .zip(steps)
            .filter(|((_, h), _)| rejected(&h.id))
            .map(|((i, h), steps)| {
                let mut hunk = listing::review_hunk(&a, h, i as u32 + 1, true);
                hunk.provenance = steps.into_iter().map(super::provenance_of).collect();
                RejectedHunk {
                    hunk,
                    old_path: before.as_ref().map(|s| s.path.clone()),
                    before_blob: before.as_ref().map(|s| s.id.to_string()),
                    before_mode: before.as_ref().map(|s| s.mode),
                }
            })
            .collect();
        let checkpoint =
            self.checkpoint(&ChangeHint::Paths(paths.into_iter().collect()), message)?;
        Ok(Rejection { hunks, checkpoint })
    }

    /// Puts rejected hunks back (as recorded by `reject_hunks`, whose checkpoint was
    /// `reject_checkpoint`); `HunkDoesNotApply` when the file changed so they no longer fit.
    pub fn unreject_hunks(
        &mut self,
        path: &str,
        hunks: &[RejectedHunk],
        reject_checkpoint: Option<u32>,
        message: &str,
    ) -> Result<Option<Checkpoint>> {
        self.ensure_present()?;
        let path = normalise(path)?;
        let mut paths: BTreeSet<String> = hunks.iter().filter_map(|h| h.old_path.clone()).collect();
        paths.insert(path.clone());
        let mut written: Vec<String> = paths.iter().cloned().collect();
        self.checkpoint(
            &ChangeHint::Paths(written.clone()),
            "Work before undoing a reject",
        )?;
        let plan = self.unreject_plan(&path, hunks, reject_checkpoint)?;
        match plan {
            Plan::Exact(entries) => {
                for (p, state) in &entries {
                    match state {
                        Some((id, mode)) => write_blob(&self.repo, &self.worktree, p, *id, *mode)?,
                        None => remove_path(&self.worktree, p)?,
                    }
                }
                written.extend(entries.into_iter().map(|(p, _)| p));
            }
            Plan::Reapply {
                current,
                target,
                file,
            } => {
                if file.as_ref().is_none_or(|_| target != current) {
                    remove_path(&self.worktree, &current)?;
                }
                if let Some((content, mode)) = file {
                    let blob = self
                        .repo
                        .blob(&content)
                        .git_ctx("writing the restored file")?;
                    write_blob(&self.repo, &self.worktree, &target, blob, mode)?;
                }
                written.push(current);
                written.push(target);
            }
        }
        written.sort();
        written.dedup();
        self.checkpoint(&ChangeHint::Paths(written), message)
    }

    /// What putting the hunks back writes: the entries from before the reject when nothing
    /// touched the file since, else the hunks re-applied where their old side is found.
    fn unreject_plan(
        &self,
        path: &str,
        hunks: &[RejectedHunk],
        reject_checkpoint: Option<u32>,
    ) -> Result<Plan> {
        let latest = self.tree_of_latest()?;
        let mut current = path.to_string();
        if let Some(n) = reject_checkpoint {
            let at = self.tree_at(DiffPoint::Checkpoint(n))?;
            let parent = self
                .repo
                .find_reference(&format!("refs/bosun/{}/{n}", self.task_id))
                .and_then(|r| r.peel_to_commit())
                .and_then(|c| c.parent(0))
                .and_then(|p| p.tree())
                .git_ctx("reading the checkpoint before the reject")?;
            let changed = changed_paths(&self.repo, &parent, &at)?;
            if changed.iter().all(|p| entry(&latest, p) == entry(&at, p)) {
                return Ok(Plan::Exact(
                    changed
                        .iter()
                        .map(|p| (p.clone(), entry(&parent, p)))
                        .collect(),
                ));
            }
            if let Some(p) = changed.iter().find(|p| entry(&latest, p).is_some()) {
                current = p.clone();
            }
        }
        let state = entry(&latest, &current);
        let mut content = match state {
            Some((id, _)) => self
                .repo
                .find_blob(id)
                .git_ctx(format!("reading {current}"))?
                .content()
                .to_vec(),
            None => Vec::new(),
        };
        let mut mode = state.map_or(MODE_FILE, |s| s.1);
        let mut target = current.clone();
        let mut exists = state.is_some();
        let mut ordered: Vec<&RejectedHunk> = hunks.iter().collect();
        // Where the hunk sat in the worktree's version (the other hunks stay applied there),
        // bottom first so positions above stay put.
        ordered.sort_by_key(|h| std::cmp::Reverse(h.hunk.new_start));
        for record in ordered {
            let before = before_side(record);
            match record.hunk.kind {
                HunkKind::Text => {
                    content = reapply(&content, &record.hunk.lines, record.hunk.new_start)
                        .ok_or_else(|| WorkspaceError::HunkDoesNotApply {
                            path: path.to_string(),
                        })?;
                    exists = before.is_some();
                }
                HunkKind::Mode => mode = record.before_mode.unwrap_or(mode),
                HunkKind::Rename => target = record.old_path.clone().unwrap_or(target),
                HunkKind::Binary | HunkKind::Empty => {
                    exists = before.is_some();
                    match before {
                        Some(side) => {
                            content = self
                                .repo
                                .find_blob(side.id)
                                .git_ctx(format!("reading the rejected content of {path}"))?
                                .content()
                                .to_vec();
                            mode = side.mode;
                        }
                        None => content.clear(),
                    }
                }
            }
        }
        Ok(Plan::Reapply {
            current,
            target,
            file: exists.then_some((content, mode)),
        })
    }
}

enum Plan {
    Exact(Vec<(String, Option<(Oid, u32)>)>),
    Reapply {
        current: String,
        target: String,
        file: Option<(Vec<u8>, u32)>,
    },
}

fn before_side(record: &RejectedHunk) -> Option<Side> {
    let id = Oid::from_str(record.before_blob.as_deref()?).ok()?;
    Some(Side {
        path: record.old_path.clone()?,
        id,
        mode: record.before_mode?,
    })
}

fn entry(tree: &Tree<'_>, path: &str) -> Option<(Oid, u32)> {
    tree.get_path(Path::new(path))
        .ok()
        .filter(|e| e.kind() == Some(git2::ObjectType::Blob))
        .map(|e| (e.id(), e.filemode() as u32))
}

fn changed_paths(repo: &git2::Repository, old: &Tree<'_>, new: &Tree<'_>) -> Result<Vec<String>> {
    let diff = repo
        .diff_tree_to_tree(Some(old), Some(new), None)
        .git_ctx("comparing two checkpoints")?;
    let mut out = BTreeSet::new();
    for delta in diff.deltas() {
        for file in [delta.old_file(), delta.new_file()] {
            if let Some(p) = file.path().and_then(|p| p.to_str()) {
                out.insert(p.to_string());
            }
        }
    }
    Ok(out.into_iter().collect())
}

/// `content` with the hunk's old side (context and removed lines), found nearest to line
/// `near`, replaced by its new side; None when the old side is nowhere.
fn reapply(content: &[u8], lines: &[DiffLine], near: u32) -> Option<Vec<u8>> {
    let file: Vec<(String, bool)> = super::text::split_lines(content)
        .into_iter()
        .map(|l| match l.strip_suffix(b"\n") {
            Some(t) => (String::from_utf8_lossy(t).into_owned(), false),
            None => (String::from_utf8_lossy(l).into_owned(), true),
        })
        .collect();
    let side = |keep: LineKind| -> Vec<(String, bool)> {
        lines
            .iter()
            .filter(|l| l.kind == LineKind::Context || l.kind == keep)
            .map(|l| (l.text.clone(), l.no_newline))
            .collect()
    };
    let old = side(LineKind::Removed);
    if old.len() > file.len() {
        return None;
    }
    let near = near.saturating_sub(1) as usize;
    let at = (0..=file.len() - old.len())
        .filter(|i| file[*i..*i + old.len()] == old[..])
        .min_by_key(|i| i.abs_diff(near))?;
    let raw = super::text::split_lines(content);
    let mut out = Vec::with_capacity(content.len());
    for line in &raw[..at] {
        out.extend_from_slice(line);
    }
    // Context keeps the file's own bytes; added lines come from the record.
    let mut cursor = at;
    for line in lines {
        match line.kind {
            LineKind::Context => {
                out.extend_from_slice(raw[cursor]);
                cursor += 1;
            }
            LineKind::Removed => cursor += 1,
            LineKind::Added => {
                out.extend_from_slice(line.text.as_bytes());
                if !line.no_newline {
                    out.push(b'\n');
                }
            }
        }
    }
    for line in &raw[cursor..] {
        out.extend_from_slice(line);
    }
    Some(out)
}
