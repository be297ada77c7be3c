//! Where a review ends: the checkpoint timeline and restore, merge, export, rebase, removing the
//! worktree and discarding the task.

use super::Reviewer;
use super::steps::Steps;
use crate::CoreError;
use bosun_protocol::{
    EventMsg, FileDiff, MergeOutcome, MergeRequest, ReviewEvent, ReviewFile, TimelineCheckpoint,
};
use bosun_workspace::{DiffPoint, MergePlan, Rebased, TaskWorktree};
use std::collections::BTreeMap;
use std::path::Path;

/// The subject line of a squashed commit is cut at this many characters.
const SUBJECT_MAX: usize = 72;

impl Reviewer {
    /// Every checkpoint with the step that made it.
    pub fn timeline(&self) -> Result<Vec<TimelineCheckpoint>, CoreError> {
        Ok(Steps::load(&self.store, self.task_id())?.timeline())
    }

    /// The files between two states: checkpoint numbers, 0 = the base, None = the latest.
    pub fn diff(&self, from: u32, to: Option<u32>) -> Result<Vec<ReviewFile>, CoreError> {
        let to = to.map_or(DiffPoint::Latest, point);
        Ok(self.history()?.diff_files(point(from), to, true)?)
    }

    /// One file between two states, opened (lines even when it is large, both texts).
    pub fn diff_file(&self, from: u32, to: Option<u32>, path: &str) -> Result<FileDiff, CoreError> {
        let to = to.map_or(DiffPoint::Latest, point);
        Ok(self.history()?.diff_file(point(from), to, path)?)
    }

    /// The paths restoring checkpoint `n` would rewrite in the worktree.
    pub fn restore_preview(&self, n: u32) -> Result<Vec<String>, CoreError> {
        let row = self.ensure_stopped()?;
        let wt = self.worktree(&row)?;
        let paths = wt.restore_preview(n)?;
        wt.release()?;
        Ok(paths)
    }

    /// Puts the worktree back to checkpoint `n` (unsaved work is saved as a checkpoint first);
    /// returns the paths rewritten.
    /// A removed worktree is made again first (from the task's checkpoints, which stay).
    pub fn restore(&self, n: u32) -> Result<Vec<String>, CoreError> {
        let row = self.ensure_stopped()?;
        if self.ledger()?.worktree_removed {
            if self.store.checkpoints(&row.id)?.iter().all(|c| c.n != n) && n != 0 {
                return Err(CoreError::Workspace(
                    bosun_workspace::WorkspaceError::NoSuchCheckpoint {
                        task_id: row.id.to_string(),
                        n,
                        available: self.store.checkpoints(&row.id)?.last().map_or(0, |c| c.n),
                    },
                ));
            }
            // `open` makes a worktree that is gone again, from the latest checkpoint.
            let wt = TaskWorktree::open(
                &self.home,
                Path::new(&row.repo),
                row.id.as_str(),
                Path::new(&row.worktree),
                &row.base_commit,
            )?;
            wt.release()?;
            self.append(EventMsg::Review(ReviewEvent::RecreateWorktree {
                checkpoint: n,
            }))?;
        }
        let mut wt = self.worktree(&row)?;
        let restored = wt.restore_to(n)?;
        self.journal_checkpoints(&wt)?;
        wt.release()?;
        Ok(restored.paths)
    }

    /// The squashed commit's default message: the prompt's first line as the subject, then the
    /// task's summary.
    pub fn merge_message(&self) -> Result<String, CoreError> {
        let row = self.row()?;
        let first = row
            .prompt
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        let mut subject: String = first.trim().chars().take(SUBJECT_MAX).collect();
        if first.trim().chars().count() > SUBJECT_MAX {
            subject.pop();
            subject.push('…');
        }
        if subject.is_empty() {
            subject = format!("Changes from Bosun task {}", row.id);
        }
        let mut message = subject;
        // A prompt longer than its first line goes in whole below the subject.
        if row.prompt.trim().chars().count() > first.trim().chars().count() {
            message.push_str(&format!("\n\nTask: {}", row.prompt.trim()));
        }
        if let Some(summary) = row.summary.as_deref().filter(|s| !s.trim().is_empty()) {
            message.push_str(&format!("\n\n{}", summary.trim()));
        }
        message.push_str(&format!("\n\nBosun-Task: {}", row.id));
        Ok(message)
    }

    /// Merges the accepted hunks into `req.into` (default: the branch the task started from).
    /// Merges without the checks gate (see [`Reviewer::merge_gated`], which frontends use).
    pub fn merge(&self, req: &MergeRequest) -> Result<MergeOutcome, CoreError> {
        self.merge_with(req, Vec::new(), None, None)
    }

    /// The merge; `checks` and `overridden` (the reason a blocking failure was overridden) go
    /// into the journal's merge event.
    /// `checked_tree`: the tree the checks ran on; the merge is refused (`checks_stale`) when the
    /// accepted hunks no longer make that tree (a verdict came in while the checks ran).
    pub(crate) fn merge_with(
        &self,
        req: &MergeRequest,
        checks: Vec<bosun_protocol::CheckFinished>,
        overridden: Option<String>,
        checked_tree: Option<&str>,
    ) -> Result<MergeOutcome, CoreError> {
        let row = self.ensure_stopped()?;
        let into = match req.into.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
            Some(b) => b.to_string(),
            None => self.base_ref()?.ok_or_else(|| CoreError::Review {
                code: "no_branch",
                message: "the task was not started from a branch: name the branch to merge into (`--into BRANCH`; it is created from the task's base when it does not exist)".into(),
            })?,
        };
        let message = match req
            .message
            .as_deref()
            .map(str::trim)
            .filter(|m| !m.is_empty())
        {
            Some(m) => m.to_string(),
            None => self.merge_message()?,
        };
        let steps = Steps::load(&self.store, self.task_id())?;
        let step_messages: BTreeMap<u32, String> = self
            .store
            .checkpoints(self.task_id())?
            .iter()
            .map(|c| (c.n, steps.commit_message(c.n)))
            .collect();
        let plan = MergePlan {
            into,
            mode: req.mode,
            message,
            step_messages,
        };
        let ledger = self.ledger()?;
        let history = self.history()?;
        if let Some(checked) = checked_tree {
            let now = history.accepted_tree(&ledger.accepted)?.tree;
            if now != checked {
                return Err(CoreError::Review {
                    code: "checks_stale",
                    message: "the accepted hunks changed while the checks ran, so they did not check what would be merged; merge again to check the new selection".into(),
                });
            }
        }
        let mut outcome = history.merge(&plan, &ledger.accepted)?;
        outcome.worktree = row.worktree.clone();
        outcome.worktree_bytes = if ledger.worktree_removed {
            0
        } else {
            dir_bytes(Path::new(&row.worktree))
        };
        self.append(EventMsg::Review(ReviewEvent::Merge {
            outcome: outcome.clone(),
            override_checks: overridden,
            checks,
        }))?;
        let end = crate::memory::ReviewEnd::Merged;
        crate::memory::learn_from_review(self, &self.home, &self.store, end);
        // The task's own `bosun/<task>` branch has served its purpose (its checkpoints stay
        // under refs/bosun/); one left per merged task would pile up in the user's repository.
        if outcome.branch != row.branch
            && let Err(e) =
                bosun_workspace::delete_task_branch(Path::new(&row.repo), row.id.as_str())
        {
            tracing::warn!(
                "merged, but the branch {} could not be deleted: {e}",
                row.branch
            );
        }
        Ok(outcome)
    }

    /// Moves the task's changes onto the tip of `onto` (default: the branch it started from).
    pub fn rebase(&self, onto: Option<&str>) -> Result<Rebased, CoreError> {
        let row = self.ensure_stopped()?;
        let onto = match onto.map(str::trim).filter(|s| !s.is_empty()) {
            Some(o) => o.to_string(),
            None => self.base_ref()?.ok_or_else(|| CoreError::Review {
                code: "no_branch",
                message: "the task was not started from a branch: say which branch to rebase onto"
                    .into(),
            })?,
        };
        let mut wt = self.worktree(&row)?;
        let rebased = wt.rebase(&onto)?;
        self.store
            .set_base_commit(self.task_id(), &rebased.new_base)?;
        let checkpoint = self.journal_checkpoints(&wt)?;
        wt.release()?;
        self.append(EventMsg::Review(ReviewEvent::Rebase {
            old_base: rebased.old_base.clone(),
            new_base: rebased.new_base.clone(),
            conflicts: rebased.conflicts.clone(),
            checkpoint,
            onto: Some(onto),
        }))?;
        Ok(rebased)
    }

    /// Writes the accepted changes as a patch file; returns its size.
    pub fn export(&self, to: &Path) -> Result<u64, CoreError> {
        let ledger = self.ledger()?;
        if ledger.accepted.is_empty() {
            return Err(bosun_workspace::WorkspaceError::NothingToMerge.into());
        }
        let patch = self.history()?.export_patch(&ledger.accepted)?;
        std::fs::write(to, &patch).map_err(|e| CoreError::Review {
            code: "io",
            message: format!("could not write the patch to {}: {e}", to.display()),
        })?;
        Ok(u64::try_from(patch.len()).unwrap_or(u64::MAX))
    }

    /// Removes the task's worktree and its `bosun/<task>` branch; history and checkpoints stay.
    pub fn remove_worktree(&self) -> Result<u64, CoreError> {
        let row = self.ensure_stopped()?;
        let wt = self.worktree(&row)?;
        let mut freed = wt.remove()?;
        freed += self.remove_check_state(&row);
        self.append(EventMsg::Review(ReviewEvent::RemoveWorktree {
            freed_bytes: freed,
        }))?;
        if row.review_state != "merged" {
            let end = crate::memory::ReviewEnd::Discarded;
            crate::memory::learn_from_review(self, &self.home, &self.store, end);
        }
        Ok(freed)
    }

    /// Removes the worktree and branch; with `delete_history` also the checkpoints and the
    /// task's journal.
    pub fn discard(&self, delete_history: bool) -> Result<(), CoreError> {
        let row = self.ensure_stopped()?;
        if !self.ledger()?.worktree_removed {
            self.remove_worktree()?;
        } else {
            // Checks run after the worktree went (a re-run, the merge gate) left theirs.
            self.remove_check_state(&row);
        }
        if delete_history {
            bosun_workspace::delete_history(&self.home, Path::new(&row.repo), row.id.as_str())?;
            // The transcript goes; the row and its cost rows stay, so what was spent still
            // counts against the budgets and in the Costs view.
            self.store.remove_transcript(
                self.task_id(),
                "discard",
                "transcript deleted by `bosun discard --delete-history`",
            )?;
        }
        Ok(())
    }
}

impl Reviewer {
    /// Removes what the task's checks keep: its check directories (its own and its merge
    /// gate's), the merge gate's report, its temp directory. Returns the bytes freed.
    fn remove_check_state(&self, row: &bosun_store::TaskRow) -> u64 {
        let repo = Path::new(&row.repo);
        let mut freed = 0;
        for slot in [
            crate::checks::run::task_slot(row.id.as_str()),
            crate::checks::run::merge_slot(row.id.as_str()),
        ] {
            let dir = bosun_workspace::check_dir_path(&self.home, repo, &slot);
            let bytes = dir_bytes(&dir);
            match bosun_workspace::remove_check_dir(&self.home, repo, &slot) {
                Ok(()) => freed += bytes,
                Err(e) => tracing::warn!("the check directory {} stays: {e}", dir.display()),
            }
        }
        let _ = std::fs::remove_file(self.gate_report_path());
        let tmp = self.home.join("tmp").join(row.id.as_str());
        freed += dir_bytes(&tmp);
        let _ = std::fs::remove_dir_all(&tmp);
        freed
    }
}

/// A checkpoint number as a diff point: 0 is the base.
fn point(n: u32) -> DiffPoint {
    match n {
        0 => DiffPoint::Base,
        n => DiffPoint::Checkpoint(n),
    }
}

/// Bytes of the regular files under `dir` (0 when it does not exist).
fn dir_bytes(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(e.path()),
                Ok(t) if t.is_file() => total += e.metadata().map_or(0, |m| m.len()),
                _ => {}
            }
        }
    }
    total
}
