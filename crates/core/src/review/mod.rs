//! Reviewing a task: the diff against its base as files and hunks with the user's verdicts,
//! comments and provenance; accept / reject / undo, comments sent back to the agent, the
//! checkpoint timeline, merge, export, rebase (and whether the base branch moved) and discard.
//! The CLI and the app both go through [`Reviewer`]; verdicts and comments are `review` events
//! in the task's journal.

mod base;
mod gate;
mod ledger;
mod outcome;
mod select;
mod steps;
mod verdicts;

pub use ledger::{Ledger, Undo};
pub use select::Selector;
pub use verdicts::{Applied, HunkSel, Verdict};

use crate::CoreError;
use bosun_protocol::{
    EventMsg, FileDiff, FileReviewState, FileStatus, HunkKind, HunkState, Review, ReviewCounts,
    ReviewFile, ReviewHunk, TaskId, TaskStatus,
};
use bosun_store::{Store, TaskRow, now_rfc3339};
use bosun_workspace::{TaskHistory, TaskWorktree};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use steps::Steps;

/// One task under review.
pub struct Reviewer {
    home: PathBuf,
    store: Arc<Store>,
    task: TaskId,
}

impl Reviewer {
    /// The task by id or unique prefix.
    pub fn open(home: &Path, store: Arc<Store>, task: &str) -> Result<Reviewer, CoreError> {
        store.reconcile_interrupted()?;
        let row = store.find_task(task)?;
        Ok(Reviewer {
            home: home.to_path_buf(),
            store,
            task: row.id,
        })
    }

    /// [`Reviewer::open`] for what reads or changes the task's worktree (review, diff, undo,
    /// comments, checks, merge, a patch): refused for a session imported from another agent,
    /// which has none.
    pub fn open_changes(home: &Path, store: Arc<Store>, task: &str) -> Result<Reviewer, CoreError> {
        let reviewer = Reviewer::open(home, store, task)?;
        CoreError::refuse_imported(&reviewer.row()?, "reviewed, diffed, changed or merged")?;
        Ok(reviewer)
    }

    pub fn task_id(&self) -> &TaskId {
        &self.task
    }

    /// The task's worktree directory.
    pub fn worktree_path(&self) -> Result<String, CoreError> {
        Ok(self.row()?.worktree)
    }

    pub(crate) fn row(&self) -> Result<TaskRow, CoreError> {
        Ok(self.store.task(&self.task)?)
    }

    pub(crate) fn history(&self) -> Result<TaskHistory, CoreError> {
        let row = self.row()?;
        Ok(TaskHistory::open(
            Path::new(&row.repo),
            row.id.as_str(),
            &row.base_commit,
        )?)
    }

    pub(crate) fn ledger(&self) -> Result<Ledger, CoreError> {
        let events = self
            .store
            .events_of_kinds(&self.task, &["review", "checkpoint_created"])?;
        Ok(Ledger::from_events(&events))
    }

    /// The branch the task was started from, if any.
    pub fn base_ref(&self) -> Result<Option<String>, CoreError> {
        let started = self.store.events_of_kinds(&self.task, &["task_started"])?;
        Ok(started.into_iter().find_map(|e| match e.msg {
            EventMsg::TaskStarted(t) => t.base_ref,
            _ => None,
        }))
    }

    /// Refuses changes while the task runs (its worktree is the agent's). A task whose process
    /// died already reads as interrupted: [`Reviewer::open`] reconciled the journal.
    pub(crate) fn ensure_stopped(&self) -> Result<TaskRow, CoreError> {
        let row = self.row()?;
        CoreError::refuse_imported(&row, "reviewed, changed or merged")?;
        if row.status == TaskStatus::Running {
            return Err(CoreError::Review {
                code: "running",
                message: format!(
                    "task {} is running: stop it (or wait for it to finish) before reviewing its changes",
                    row.id
                ),
            });
        }
        Ok(row)
    }

    pub(crate) fn worktree(&self, row: &TaskRow) -> Result<TaskWorktree, CoreError> {
        if self.ledger()?.worktree_removed {
            return Err(CoreError::Review {
                code: "worktree_removed",
                message: format!(
                    "the worktree of task {} was removed; its history and checkpoints are kept, but its files can no longer change",
                    row.id
                ),
            });
        }
        Ok(TaskWorktree::open(
            &self.home,
            Path::new(&row.repo),
            row.id.as_str(),
            Path::new(&row.worktree),
            &row.base_commit,
        )?)
    }

    /// Appends a review-made event to the task's journal; returns its seq.
    pub(crate) fn append(&self, msg: EventMsg) -> Result<u64, CoreError> {
        Ok(self.store.append_next(&self.task, now_rfc3339(), msg)?.seq)
    }

    /// Journals the checkpoints the worktree has beyond those in the journal (a reject, restore
    /// or rebase writes one or two); returns the newest.
    pub(crate) fn journal_checkpoints(&self, wt: &TaskWorktree) -> Result<Option<u32>, CoreError> {
        let known = self
            .store
            .checkpoints(&self.task)?
            .last()
            .map_or(0, |c| c.n);
        let mut newest = None;
        for c in wt.checkpoints_after(known)? {
            self.append(EventMsg::CheckpointCreated(
                bosun_protocol::CheckpointCreated {
                    checkpoint: c.n,
                    commit: c.commit,
                    files: c.files,
                    call_id: None,
                },
            ))?;
            newest = Some(c.n);
        }
        Ok(newest)
    }

    /// The review: files and hunks (with lines when asked), verdicts, comments, provenance.
    pub fn review(&self, with_lines: bool) -> Result<Review, CoreError> {
        let row = self.row()?;
        let history = self.history()?;
        let ledger = self.ledger()?;
        let steps = Steps::load(&self.store, &self.task)?;
        let mut files = history.review_files(with_lines)?;
        annotate(&mut files, &ledger, &steps, with_lines, None);
        let mut comments = Vec::new();
        for c in ledger.comments.values() {
            let mut comment = c.comment.clone();
            comment.resolved = comment.sent_at.is_some()
                && history
                    .lines_changed_after(
                        &comment.path,
                        comment.checkpoint,
                        comment.start_line,
                        comment.end_line,
                        c.sent_checkpoint,
                    )
                    .unwrap_or(false);
            comments.push(comment);
        }
        let counts = count(&files);
        // A branch that cannot be read only costs the notice, never the review.
        let base_moved = self.base_moved_with(&history, &ledger).unwrap_or_else(|e| {
            tracing::warn!("could not tell whether the task's base branch moved: {e}");
            None
        });
        Ok(Review {
            task_id: row.id.0.clone(),
            base_commit: row.base_commit.clone(),
            base_ref: self.base_ref()?,
            latest_checkpoint: ledger.latest_checkpoint,
            files,
            comments,
            counts,
            undo: ledger.undoable().map(|u| u.describe()),
            running: row.status == TaskStatus::Running,
            merged: ledger.merged.clone(),
            worktree_removed: ledger.worktree_removed,
            base_moved,
        })
    }

    /// One file opened (by its path, or the old path of a rename): hunks with lines, both
    /// texts, verdicts and provenance — numbered as in [`Reviewer::review`].
    pub fn file(&self, path: &str) -> Result<FileDiff, CoreError> {
        let path = bosun_workspace::normalise_path(path)?;
        let history = self.history()?;
        let ledger = self.ledger()?;
        let steps = Steps::load(&self.store, &self.task)?;
        let mut diff = match history.review_file(&path) {
            Ok(d) => d,
            // A file whose changes were all rejected is no longer in the diff.
            Err(bosun_workspace::WorkspaceError::NotChanged { .. })
                if ledger.rejected.iter().any(|r| r.path == path) =>
            {
                FileDiff {
                    file: rejected_only_file(&path),
                    old_text: None,
                    new_text: None,
                }
            }
            Err(e) => return Err(e.into()),
        };
        // Only this file's rejected hunks join it (another file's would become a file of
        // their own in the list, and could be taken for this one).
        let own = diff.file.path.clone();
        let mut files = vec![diff.file];
        annotate(&mut files, &ledger, &steps, true, Some(&own));
        diff.file = files
            .into_iter()
            .find(|f| f.path == own)
            .ok_or_else(|| CoreError::Internal(format!("{own} went missing from its review")))?;
        Ok(diff)
    }
}

/// Verdict states, provenance, rejected hunks, file states and hunk numbers. With `only`, the
/// rejected hunks of other files are left out.
fn annotate(
    files: &mut Vec<ReviewFile>,
    ledger: &Ledger,
    steps: &Steps,
    with_lines: bool,
    only: Option<&str>,
) {
    let current: HashSet<String> = files
        .iter()
        .flat_map(|f| f.hunks.iter().map(|h| h.id.clone()))
        .collect();
    for f in files.iter_mut() {
        for h in &mut f.hunks {
            h.state = if ledger.accepted.contains(&h.id) {
                HunkState::Accepted
            } else {
                HunkState::Unreviewed
            };
            steps.enrich(h);
        }
    }
    for r in &ledger.rejected {
        if only.is_some_and(|p| p != r.path) || current.contains(&r.record.hunk.id) {
            // The agent made the same change again: it is back for review.
            continue;
        }
        let at = match files.iter().position(|f| f.path == r.path) {
            Some(i) => i,
            None => {
                files.push(rejected_only_file(&r.path));
                files.len() - 1
            }
        };
        let file = &mut files[at];
        if file.hunks.iter().any(|h| h.id == r.record.hunk.id) {
            continue;
        }
        let mut hunk = r.record.hunk.clone();
        hunk.state = HunkState::Rejected;
        steps.enrich(&mut hunk);
        if !with_lines || file.large {
            hunk.lines.clear();
        }
        if file.hunks.is_empty() {
            file.status = status_of(&hunk);
            file.binary = hunk.kind == HunkKind::Binary;
            file.old_path = r.record.old_path.clone().filter(|p| *p != r.path);
        }
        file.hunks.push(hunk);
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    for f in files.iter_mut() {
        f.hunks
            .sort_by_key(|h| (kind_rank(h.kind), h.old_start, h.new_start));
        for (i, h) in f.hunks.iter_mut().enumerate() {
            h.number = u32::try_from(i + 1).unwrap_or(u32::MAX);
        }
        f.state = file_state(&f.hunks);
    }
}

fn rejected_only_file(path: &str) -> ReviewFile {
    ReviewFile {
        path: path.to_string(),
        old_path: None,
        status: FileStatus::Modified,
        binary: false,
        non_utf8: false,
        old_mode: None,
        new_mode: None,
        old_size: None,
        new_size: None,
        added: 0,
        removed: 0,
        state: FileReviewState::Rejected,
        large: false,
        hunks: Vec::new(),
    }
}

fn status_of(h: &ReviewHunk) -> FileStatus {
    match h.kind {
        HunkKind::Rename => FileStatus::Renamed,
        HunkKind::Mode => FileStatus::ModeChanged,
        HunkKind::Text if h.old_lines == 0 && h.old_start == 0 => FileStatus::Added,
        HunkKind::Text if h.new_lines == 0 && h.new_start == 0 => FileStatus::Deleted,
        _ => FileStatus::Modified,
    }
}

fn kind_rank(k: HunkKind) -> u8 {
    match k {
        HunkKind::Rename => 0,
        HunkKind::Mode => 1,
        HunkKind::Empty => 2,
        HunkKind::Binary => 3,
        HunkKind::Text => 4,
    }
}

fn file_state(hunks: &[ReviewHunk]) -> FileReviewState {
    let all = |s: HunkState| !hunks.is_empty() && hunks.iter().all(|h| h.state == s);
    if hunks.is_empty() || all(HunkState::Unreviewed) {
        FileReviewState::Unreviewed
    } else if all(HunkState::Accepted) {
        FileReviewState::Accepted
    } else if all(HunkState::Rejected) {
        FileReviewState::Rejected
    } else {
        FileReviewState::Partly
    }
}

fn count(files: &[ReviewFile]) -> ReviewCounts {
    let mut c = ReviewCounts {
        files: u32::try_from(files.len()).unwrap_or(u32::MAX),
        ..ReviewCounts::default()
    };
    for f in files {
        c.added += f.added;
        c.removed += f.removed;
        for h in &f.hunks {
            c.hunks += 1;
            match h.state {
                HunkState::Accepted => c.accepted += 1,
                HunkState::Rejected => c.rejected += 1,
                HunkState::Unreviewed => c.unreviewed += 1,
            }
        }
    }
    c
}
