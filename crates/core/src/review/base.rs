//! Whether the branch a task is based on moved since its base: the branch the task was started
//! from, or the one it was last rebased onto. A task based on a commit (a detached HEAD, a
//! commit id, a tag) follows no branch and never moves.

use super::Reviewer;
use super::ledger::Ledger;
use crate::CoreError;
use bosun_protocol::BaseMoved;
use bosun_workspace::TaskHistory;
use std::path::Path;

impl Reviewer {
    /// The branch the task follows: the one it was last rebased onto, else the one it was
    /// started from; None when that was a commit.
    pub fn followed_branch(&self) -> Result<Option<String>, CoreError> {
        self.followed_with(&self.ledger()?)
    }

    /// Where the followed branch is now against the task's base; None when it did not move,
    /// when the task follows no branch, and once it was merged or its worktree removed (a rebase
    /// has nothing to do then).
    pub fn base_moved(&self) -> Result<Option<BaseMoved>, CoreError> {
        let ledger = self.ledger()?;
        self.base_moved_with(&self.history()?, &ledger)
    }

    pub(crate) fn base_moved_with(
        &self,
        history: &TaskHistory,
        ledger: &Ledger,
    ) -> Result<Option<BaseMoved>, CoreError> {
        if ledger.merged.is_some() || ledger.worktree_removed {
            return Ok(None);
        }
        match self.followed_with(ledger)? {
            Some(branch) => Ok(history.base_moved(&branch)?),
            None => Ok(None),
        }
    }

    fn followed_with(&self, ledger: &Ledger) -> Result<Option<String>, CoreError> {
        match ledger.rebased_onto.as_deref().map(str::trim) {
            // `HEAD` is whatever is checked out at the time: the commit it was, not a branch.
            Some("HEAD") => Ok(None),
            Some(onto) => {
                let repo = self.row()?.repo;
                Ok(bosun_workspace::base_branch(Path::new(&repo), Some(onto)))
            }
            None => self.base_ref(),
        }
    }
}
