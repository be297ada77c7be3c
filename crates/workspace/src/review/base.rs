//! Whether the branch a task is based on moved since the task's base ("main moved 3 commits"):
//! read from the user's own refs and object store, through the repository opened at the path
//! the user gave, never through the task's worktree or its git directory.

use super::TaskHistory;
use crate::error::{GitContext, Result};
use bosun_protocol::BaseMoved;
use git2::{BranchType, Oid, Repository};

impl TaskHistory {
    /// Where `branch` (a local branch of the user's repository, e.g. the one the task was
    /// started from) is now, against the task's base. None while it is still at the base, and
    /// when it is no branch (deleted, never one, or not a valid name): nothing to move onto.
    pub fn base_moved(&self, branch: &str) -> Result<Option<BaseMoved>> {
        let name = branch.trim();
        let name = name.strip_prefix("refs/heads/").unwrap_or(name);
        if !git2::Branch::name_is_valid(name).unwrap_or(false) {
            return Ok(None);
        }
        let Ok(found) = self.repo.find_branch(name, BranchType::Local) else {
            return Ok(None);
        };
        let Ok(tip) = found.get().peel_to_commit().map(|c| c.id()) else {
            return Ok(None);
        };
        let base = self.base_oid()?;
        if tip == base {
            return Ok(None);
        }
        let rewritten = !self
            .repo
            .graph_descendant_of(tip, base)
            .git_ctx(format!("finding the task's base on {name}"))?;
        Ok(Some(BaseMoved {
            branch: name.to_string(),
            base_commit: base.to_string(),
            tip: tip.to_string(),
            ahead: commits_between(&self.repo, base, tip)?,
            rewritten,
        }))
    }
}

/// `git rev-list --count base..tip`.
fn commits_between(repo: &Repository, base: Oid, tip: Oid) -> Result<u32> {
    let context = "counting the branch's new commits";
    let mut walk = repo.revwalk().git_ctx(context)?;
    walk.push(tip).git_ctx(context)?;
    walk.hide(base).git_ctx(context)?;
    let mut n: u32 = 0;
    for commit in walk {
        commit.git_ctx(context)?;
        n = n.saturating_add(1);
    }
    Ok(n)
}
