//! Review: the diff between a task's base and its latest checkpoint as files and hunks, rejecting
//! hunks in the worktree (and putting them back), the tree of the accepted hunks, merging it into
//! a branch of the user's repository, exporting it as a patch, rebasing (and noticing that the
//! branch a task is based on moved), removing the worktree.
//!
//! Verdicts are not stored here: callers pass the set of accepted hunk ids (the journal holds
//! them). Hunk ids are stable while the change itself is the same.

mod base;
mod change;
mod discard;
mod listing;
mod merge;
mod provenance;
mod rebase;
mod reject;
mod text;

pub use discard::{delete_history, delete_task_branch};

use crate::entry::normalise;
use crate::error::{GitContext, Result, WorkspaceError};
use crate::history::DiffPoint;
use crate::layout::validate_task_id;
use crate::task::{Checkpoint, TaskWorktree, checkpoint_refs, open_user_repo, tree_of};
use bosun_protocol::{FileDiff, MergeMode, Provenance, RejectedHunk, ReviewFile};
use change::Analysed;
use provenance::Chain;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Read-only view of a task's history in the user's repository: needs only the base commit and
/// the `refs/bosun/<task>/<n>` checkpoints, not the worktree (which may be recycled or removed).
pub struct TaskHistory {
    pub task_id: String,
    pub repo_root: PathBuf,
    pub base_commit: String,
    pub(crate) repo: git2::Repository,
}

/// The base plus only the accepted hunks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcceptedTree {
    /// The tree id.
    pub tree: String,
    /// Files that differ from the base in that tree.
    pub files: u32,
    /// Accepted hunks it holds.
    pub hunks: u32,
    /// Hunks of the diff that were not accepted (unreviewed) and are left out.
    pub left_out: u32,
}

/// How to merge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergePlan {
    /// A local branch of the user's repository; created at the task's base when it does not exist.
    pub into: String,
    pub mode: MergeMode,
    /// The squashed commit's message (for per-step: the message of commits without a step
    /// message).
    pub message: String,
    /// Per-step commit messages by checkpoint number.
    pub step_messages: BTreeMap<u32, String>,
}

/// What `reject_hunks` did.
#[derive(Debug, Clone, PartialEq)]
pub struct Rejection {
    /// The hunks taken out, with their lines, as the journal records them.
    pub hunks: Vec<RejectedHunk>,
    /// The checkpoint recording the worktree without them.
    pub checkpoint: Option<Checkpoint>,
}

/// What `rebase` did.
#[derive(Debug, Clone, PartialEq)]
pub struct Rebased {
    pub old_base: String,
    pub new_base: String,
    /// Files left with conflict markers.
    pub conflicts: Vec<String>,
    pub checkpoint: Option<Checkpoint>,
}

/// A file's change opened: hunks with lines (also when it is large) and both texts up to the
/// full-text limit.
fn opened(a: &Analysed) -> FileDiff {
    let mut file = listing::review_file(a, true);
    if file.large {
        for (hunk, h) in file.hunks.iter_mut().zip(&a.hunks) {
            hunk.lines = listing::review_hunk(a, h, hunk.number, true).lines;
        }
    }
    let text_of = |exists: bool, bytes: &[u8]| {
        (exists && !a.binary && bytes.len() <= FULL_TEXT_LIMIT)
            .then(|| String::from_utf8_lossy(bytes).into_owned())
    };
    FileDiff {
        old_text: text_of(a.change.old.is_some(), &a.old_bytes),
        new_text: text_of(a.change.new.is_some(), &a.new_bytes),
        file,
    }
}

impl TaskHistory {
    pub fn open(repo_root: &Path, task_id: &str, base_commit: &str) -> Result<TaskHistory> {
        validate_task_id(task_id)?;
        let repo = open_user_repo(repo_root)?;
        let unknown = || WorkspaceError::UnknownBase {
            repo: repo_root.to_path_buf(),
            base: base_commit.to_string(),
        };
        let base = git2::Oid::from_str(base_commit).map_err(|_| unknown())?;
        repo.find_commit(base).map_err(|_| unknown())?;
        Ok(TaskHistory {
            task_id: task_id.to_string(),
            repo_root: repo_root.to_path_buf(),
            base_commit: base.to_string(),
            repo,
        })
    }

    /// Base → latest checkpoint, renames found. States all `Unreviewed`; each hunk's
    /// `provenance` lists the checkpoints that made it (only `checkpoint` set, `summary` empty).
    /// Lines only when `with_lines` and the file is not `large`.
    pub fn review_files(&self, with_lines: bool) -> Result<Vec<ReviewFile>> {
        let analysed = self.analysed()?;
        let chain = self.chain()?;
        let mut out = Vec::with_capacity(analysed.len());
        for a in &analysed {
            let mut file = listing::review_file(a, with_lines);
            let steps = chain.hunk_steps(&self.repo, a)?;
            for (hunk, steps) in file.hunks.iter_mut().zip(steps) {
                hunk.provenance = steps.into_iter().map(provenance_of).collect();
            }
            out.push(file);
        }
        Ok(out)
    }

    /// One file (by its latest path, or its old path for a deletion) with lines and both texts.
    pub fn review_file(&self, path: &str) -> Result<FileDiff> {
        let a = self.analysed_file(path)?;
        let mut diff = opened(&a);
        let steps = self.chain()?.hunk_steps(&self.repo, &a)?;
        for (hunk, steps) in diff.file.hunks.iter_mut().zip(steps) {
            hunk.provenance = steps.into_iter().map(provenance_of).collect();
        }
        Ok(diff)
    }

    /// Files between any two states (no provenance), e.g. two checkpoints of the timeline.
    pub fn diff_files(
        &self,
        from: DiffPoint,
        to: DiffPoint,
        with_lines: bool,
    ) -> Result<Vec<ReviewFile>> {
        let old = self.tree_at(from)?;
        let new = self.tree_at(to)?;
        change::changes_between(&self.repo, &old, &new)?
            .into_iter()
            .map(|c| change::analyse(&self.repo, c).map(|a| listing::review_file(&a, with_lines)))
            .collect()
    }

    /// One file between any two states, opened: lines (also of a large file) and both texts;
    /// no verdicts or provenance.
    pub fn diff_file(&self, from: DiffPoint, to: DiffPoint, path: &str) -> Result<FileDiff> {
        Ok(opened(&self.analysed_between(from, to, path)?))
    }

    /// Whether a checkpoint after `sent` changed any of lines `start..=end` of `path`, the range
    /// being in the file as it was at checkpoint `at` (None: the base) and followed to `sent`
    /// through the changes in between.
    pub fn lines_changed_after(
        &self,
        path: &str,
        at: Option<u32>,
        start: u32,
        end: u32,
        sent: Option<u32>,
    ) -> Result<bool> {
        let point = |n: Option<u32>| n.map_or(DiffPoint::Base, DiffPoint::Checkpoint);
        let mut states = vec![self.file_at(point(at), path)?];
        let numbers: Vec<u32> = self.checkpoints()?.into_iter().map(|(n, _)| n).collect();
        let (from, sent) = (at.unwrap_or(0), sent.unwrap_or(0));
        let mut range = Some((start.max(1) as usize - 1, end.max(start).max(1) as usize));
        for n in numbers.into_iter().filter(|n| *n > from) {
            let next = self.file_at(DiffPoint::Checkpoint(n), path)?;
            let previous = states.last().cloned().flatten();
            let (touched, moved) = follow_range(previous.as_deref(), next.as_deref(), range);
            if n > sent && touched {
                return Ok(true);
            }
            range = moved;
            states.push(next);
        }
        Ok(false)
    }
}

/// Full texts of a file beyond this size are not sent with its diff.
const FULL_TEXT_LIMIT: usize = 8 * 1024 * 1024;

fn provenance_of(checkpoint: u32) -> Provenance {
    Provenance {
        checkpoint,
        call_id: None,
        tool: None,
        summary: String::new(),
        assistant_text: None,
        approval: None,
        seq: None,
    }
}

/// Whether the change from `old` to `new` touches lines `range` (0-based, end exclusive) of
/// `old`, and where those lines are in `new`.
fn follow_range(
    old: Option<&[u8]>,
    new: Option<&[u8]>,
    range: Option<(usize, usize)>,
) -> (bool, Option<(usize, usize)>) {
    let Some((start, end)) = range else {
        return (false, None);
    };
    let (Some(old), Some(new)) = (old, new) else {
        return (old != new, None);
    };
    let (old, new) = (text::split_lines(old), text::split_lines(new));
    let mut touched = false;
    let (mut first, mut last) = (None, None);
    for op in text::diff_ops(&old, &new) {
        let (tag, o, n) = op.as_tag_tuple();
        if tag == similar::DiffTag::Equal {
            for (i, j) in o.zip(n) {
                if (start..end).contains(&i) {
                    first.get_or_insert(j);
                    last = Some(j + 1);
                }
            }
        } else if (o.is_empty() && o.start > start && o.start < end)
            || (o.start < end && o.end > start)
        {
            touched = true;
        }
    }
    (touched, first.zip(last))
}

impl TaskHistory {
    pub(crate) fn checkpoints(&self) -> Result<Vec<(u32, git2::Oid)>> {
        checkpoint_refs(&self.repo, &self.task_id)
    }

    pub(crate) fn base_oid(&self) -> Result<git2::Oid> {
        git2::Oid::from_str(&self.base_commit).git_ctx("reading the base commit id")
    }

    pub(crate) fn tree_at(&self, point: DiffPoint) -> Result<git2::Tree<'_>> {
        match point {
            DiffPoint::Base => tree_of(&self.repo, self.base_oid()?),
            DiffPoint::Latest => match self.checkpoints()?.last() {
                Some((_, commit)) => tree_of(&self.repo, *commit),
                None => tree_of(&self.repo, self.base_oid()?),
            },
            DiffPoint::Checkpoint(n) => {
                let name = format!("refs/bosun/{}/{n}", self.task_id);
                match self.repo.find_reference(&name) {
                    Ok(r) => r.peel_to_tree().git_ctx(format!("reading {name}")),
                    Err(_) => Err(WorkspaceError::NoSuchCheckpoint {
                        task_id: self.task_id.clone(),
                        n,
                        available: self.checkpoints()?.last().map_or(0, |c| c.0),
                    }),
                }
            }
        }
    }

    /// The base, then each checkpoint in order.
    pub(crate) fn chain(&self) -> Result<Chain<'_>> {
        let mut trees = vec![(0, self.tree_at(DiffPoint::Base)?)];
        for (n, commit) in self.checkpoints()? {
            trees.push((n, tree_of(&self.repo, commit)?));
        }
        Chain::new(&self.repo, trees)
    }

    /// Every changed file of base → latest, analysed.
    pub(crate) fn analysed(&self) -> Result<Vec<Analysed>> {
        let base = self.tree_at(DiffPoint::Base)?;
        let latest = self.tree_at(DiffPoint::Latest)?;
        change::changes_between(&self.repo, &base, &latest)?
            .into_iter()
            .map(|c| change::analyse(&self.repo, c))
            .collect()
    }

    /// The change of one file, by its latest path or (for a deletion or rename) its old path.
    pub(crate) fn analysed_file(&self, path: &str) -> Result<Analysed> {
        self.analysed_between(DiffPoint::Base, DiffPoint::Latest, path)
    }

    /// One file's change between two states.
    pub(crate) fn analysed_between(
        &self,
        from: DiffPoint,
        to: DiffPoint,
        path: &str,
    ) -> Result<Analysed> {
        let path = normalise(path)?;
        let base = self.tree_at(from)?;
        let latest = self.tree_at(to)?;
        // A path on both sides cannot be half of a rename: no need to diff the whole trees.
        let side = |tree: &git2::Tree<'_>| {
            tree.get_path(Path::new(&path))
                .ok()
                .filter(|e| e.kind() != Some(git2::ObjectType::Tree))
                .map(|e| change::Side {
                    path: path.clone(),
                    id: e.id(),
                    mode: e.filemode() as u32,
                })
        };
        if let (Some(old), Some(new)) = (side(&base), side(&latest)) {
            if old == new {
                return Err(WorkspaceError::NotChanged { path });
            }
            let change = change::FileChange {
                old: Some(old),
                new: Some(new),
            };
            return change::analyse(&self.repo, change);
        }
        let changes = change::changes_between(&self.repo, &base, &latest)?;
        let found = changes
            .iter()
            .position(|c| c.path() == path)
            .or_else(|| changes.iter().position(|c| c.old_path() == Some(&path)));
        match found {
            Some(i) => change::analyse(&self.repo, changes[i].clone()),
            None => Err(WorkspaceError::NotChanged { path }),
        }
    }

    fn file_at(&self, point: DiffPoint, path: &str) -> Result<Option<Vec<u8>>> {
        let tree = self.tree_at(point)?;
        let Ok(entry) = tree.get_path(Path::new(path)) else {
            return Ok(None);
        };
        let blob = self
            .repo
            .find_blob(entry.id())
            .git_ctx(format!("reading {path}"))?;
        Ok(Some(blob.content().to_vec()))
    }
}

impl TaskWorktree {
    /// The read-only history of this task.
    pub fn history(&self) -> Result<TaskHistory> {
        TaskHistory::open(&self.repo_root, &self.task_id, &self.base_commit)
    }
}
