//! The accepted tree (the base plus only the accepted hunks), the merge of it into a branch of
//! the user's repository, and its export as a patch.

use super::change::Analysed;
use super::{AcceptedTree, MergePlan, TaskHistory};
use crate::error::{GitContext, Result, WorkspaceError};
use crate::history::DiffPoint;
use crate::tree_edit::{self, Change};
use bosun_protocol::{MergeMode, MergeOutcome};
use git2::build::CheckoutBuilder;
use git2::{
    BranchType, DiffFindOptions, DiffFormat, DiffOptions, Oid, Repository, Signature,
    StatusOptions, Tree,
};
use std::collections::{BTreeSet, HashSet};

impl TaskHistory {
    pub fn accepted_tree(&self, accepted: &HashSet<String>) -> Result<AcceptedTree> {
        let analysed = self.analysed()?;
        let keep = |id: &str| accepted.contains(id);
        let (tree, files) = self.compose_tree(&analysed, &keep)?;
        let (hunks, total) = count(&analysed, &keep);
        Ok(AcceptedTree {
            tree: tree.to_string(),
            files,
            hunks,
            left_out: total - hunks,
        })
    }

    /// The accepted changes as a git patch (binary files included) that `git apply` takes on
    /// the base.
    pub fn export_patch(&self, accepted: &HashSet<String>) -> Result<Vec<u8>> {
        let analysed = self.analysed()?;
        let (tree, _) = self.compose_tree(&analysed, &|id| accepted.contains(id))?;
        let base = self.tree_at(DiffPoint::Base)?;
        let accepted = self
            .repo
            .find_tree(tree)
            .git_ctx("reading the accepted tree")?;
        let mut opts = DiffOptions::new();
        // Without typechange deltas a file that became a symlink is a deletion plus an
        // addition, which is what `git apply` takes.
        opts.show_binary(true).id_abbrev(40);
        let mut diff = self
            .repo
            .diff_tree_to_tree(Some(&base), Some(&accepted), Some(&mut opts))
            .git_ctx("diffing the accepted changes")?;
        diff.find_similar(Some(DiffFindOptions::new().renames(true)))
            .git_ctx("finding renames")?;
        // One chunk per file; a file that became a symlink (or back) comes out as an addition
        // and a deletion of the same path, which `git apply` takes only deletion first.
        let mut chunks: Vec<(git2::Delta, Vec<u8>)> = Vec::new();
        diff.print(DiffFormat::Patch, |delta, _, line| {
            if line.origin() == 'F' || chunks.is_empty() {
                chunks.push((delta.status(), Vec::new()));
            }
            if let Some((_, chunk)) = chunks.last_mut() {
                if matches!(line.origin(), '+' | '-' | ' ') {
                    chunk.push(line.origin() as u8);
                }
                chunk.extend_from_slice(line.content());
            }
            true
        })
        .git_ctx("writing the patch")?;
        for i in 1..chunks.len() {
            let header = |c: &[u8]| c.split(|b| *b == b'\n').next().map(<[u8]>::to_vec);
            if chunks[i - 1].0 == git2::Delta::Added
                && chunks[i].0 == git2::Delta::Deleted
                && header(&chunks[i - 1].1) == header(&chunks[i].1)
            {
                chunks.swap(i - 1, i);
            }
        }
        Ok(chunks.into_iter().flat_map(|(_, c)| c).collect())
    }

    /// Writes the accepted tree onto `plan.into`. Refuses with `MergeConflict` when the branch
    /// moved past the base and the change does not apply cleanly, with `DirtyCheckout` when the
    /// branch is checked out in the user's repository and its working tree or index is not
    /// clean, with `NothingToMerge` when nothing is accepted. `worktree` and `worktree_bytes` of
    /// the outcome are left empty/0 for the caller.
    pub fn merge(&self, plan: &MergePlan, accepted: &HashSet<String>) -> Result<MergeOutcome> {
        let branch = plan
            .into
            .trim()
            .trim_start_matches("refs/heads/")
            .to_string();
        if !git2::Branch::name_is_valid(&branch).unwrap_or(false) {
            return Err(WorkspaceError::InvalidBranch { name: branch });
        }
        let analysed = self.analysed()?;
        let keep_all = |id: &str| accepted.contains(id);
        let (hunks, total) = count(&analysed, &keep_all);
        if hunks == 0 {
            return Err(WorkspaceError::NothingToMerge);
        }
        let base = self.base_oid()?;
        let existing = self
            .repo
            .find_branch(&branch, BranchType::Local)
            .ok()
            .and_then(|b| b.get().target());
        let tip = existing.unwrap_or(base);
        // The checkout holding the branch: the user's repository or one of its linked worktrees.
        let holder = self.checkout_of(&branch);
        let checked_out = holder.is_some();
        if let Some(holder) = &holder {
            ensure_clean(holder, &branch)?;
        }
        // Every tree first, so a conflict refuses before anything is written.
        let steps = self.steps(plan, &analysed, accepted)?;
        let base_tree = self.tree_at(DiffPoint::Base)?;
        let tip_tree = crate::task::tree_of(&self.repo, tip)?;
        let mut trees = Vec::new();
        for (message, keep) in &steps {
            let (tree, _) = self.compose_tree(&analysed, &|id| keep.contains(id))?;
            let tree = if tip == base {
                tree
            } else {
                self.merge_onto(&branch, &base_tree, &tip_tree, tree)?
            };
            trees.push((message.clone(), tree));
        }
        let sig = self
            .repo
            .signature()
            .or_else(|_| Signature::now("Bosun", "bosun@localhost"))
            .git_ctx("making a signature")?;
        let mut parent = tip;
        let mut commits = Vec::new();
        for (message, tree) in trees {
            let parent_commit = self
                .repo
                .find_commit(parent)
                .git_ctx("reading the branch tip")?;
            if parent_commit.tree_id() == tree {
                continue;
            }
            let tree = self
                .repo
                .find_tree(tree)
                .git_ctx("reading the merged tree")?;
            parent = self
                .repo
                .commit(None, &sig, &sig, &message, &tree, &[&parent_commit])
                .git_ctx("writing the merge commit")?;
            commits.push(parent.to_string());
        }
        let final_tree = crate::task::tree_of(&self.repo, parent)?;
        let files = self
            .repo
            .diff_tree_to_tree(Some(&tip_tree), Some(&final_tree), None)
            .git_ctx("counting merged files")?
            .deltas()
            .len() as u32;
        if let Some(holder) = holder.as_ref().filter(|_| parent != tip) {
            let mut checkout = CheckoutBuilder::new();
            checkout.safe();
            let target = holder
                .find_tree(final_tree.id())
                .git_ctx("reading the merged tree")?;
            if let Err(e) = holder.checkout_tree(target.as_object(), Some(&mut checkout)) {
                // Untracked files stand where the merge writes: nothing was changed.
                let paths = untracked_in(holder, &target);
                if e.code() == git2::ErrorCode::Conflict && !paths.is_empty() {
                    return Err(WorkspaceError::DirtyCheckout {
                        branch,
                        repo: holder.workdir().unwrap_or(holder.path()).to_path_buf(),
                        paths,
                    });
                }
                return Err(e).git_ctx(format!("updating the checkout of {branch}"));
            }
        }
        let name = format!("refs/heads/{branch}");
        let log = format!("bosun: merge task {}", self.task_id);
        match existing {
            Some(old) => self.repo.reference_matching(&name, parent, true, old, &log),
            None => self.repo.reference(&name, parent, false, &log),
        }
        .git_ctx(format!("moving branch {branch}"))?;
        Ok(MergeOutcome {
            branch,
            created: existing.is_none(),
            commits,
            files,
            hunks,
            left_out: total - hunks,
            checked_out,
            worktree: String::new(),
            worktree_bytes: 0,
        })
    }
}

/// (accepted hunks, all hunks).
fn count(analysed: &[Analysed], keep: &dyn Fn(&str) -> bool) -> (u32, u32) {
    let all = analysed.iter().flat_map(|a| &a.hunks);
    let total = all.clone().count() as u32;
    (all.filter(|h| keep(&h.id)).count() as u32, total)
}

impl TaskHistory {
    /// The base tree with each file composed from its kept hunks; also how many files differ.
    pub(crate) fn compose_tree(
        &self,
        analysed: &[Analysed],
        keep: &dyn Fn(&str) -> bool,
    ) -> Result<(Oid, u32)> {
        let base = self.tree_at(DiffPoint::Base)?;
        let mut changes: Vec<Change> = Vec::new();
        let mut files = 0;
        for a in analysed
            .iter()
            .filter(|a| a.hunks.iter().any(|h| keep(&h.id)))
        {
            let composed = a.compose(keep);
            let old = a.change.old.as_ref();
            let same = match (&composed, old) {
                (Some(c), Some(o)) => {
                    c.path == o.path
                        && c.mode == o.mode
                        && c.id.map_or(c.content == a.old_bytes, |id| id == o.id)
                }
                (None, None) => true,
                _ => false,
            };
            if same {
                continue;
            }
            files += 1;
            if let Some(old) = old {
                changes.push((old.path.clone(), None));
            }
            if let Some(c) = composed {
                let blob = c.blob(&self.repo)?;
                changes.retain(|(p, _)| *p != c.path);
                changes.push((c.path, Some((blob, c.mode))));
            }
        }
        Ok((tree_edit::apply(&self.repo, &base, &changes)?, files))
    }

    /// Per step: the message and the accepted hunks up to that step; squash: one step.
    fn steps(
        &self,
        plan: &MergePlan,
        analysed: &[Analysed],
        accepted: &HashSet<String>,
    ) -> Result<Vec<(String, HashSet<String>)>> {
        if plan.mode == MergeMode::Squash {
            return Ok(vec![(plan.message.clone(), accepted.clone())]);
        }
        let chain = self.chain()?;
        let mut owner: Vec<(u32, String)> = Vec::new();
        for a in analysed {
            let steps = chain.hunk_steps(&self.repo, a)?;
            for (hunk, steps) in a.hunks.iter().zip(steps) {
                if accepted.contains(&hunk.id) {
                    owner.push((steps.iter().copied().max().unwrap_or(0), hunk.id.clone()));
                }
            }
        }
        let numbers: BTreeSet<u32> = owner.iter().map(|(n, _)| *n).collect();
        Ok(numbers
            .into_iter()
            .map(|n| {
                let keep = owner
                    .iter()
                    .filter(|(m, _)| *m <= n)
                    .map(|(_, id)| id.clone())
                    .collect();
                let message = plan
                    .step_messages
                    .get(&n)
                    .cloned()
                    .unwrap_or_else(|| plan.message.clone());
                (message, keep)
            })
            .collect())
    }

    /// Three-way: the accepted change (base → `accepted`) applied onto `tip`.
    fn merge_onto(
        &self,
        branch: &str,
        base: &Tree<'_>,
        tip: &Tree<'_>,
        accepted: Oid,
    ) -> Result<Oid> {
        let accepted = self
            .repo
            .find_tree(accepted)
            .git_ctx("reading the accepted tree")?;
        let mut index = self
            .repo
            .merge_trees(base, tip, &accepted, None)
            .git_ctx(format!("merging the accepted changes onto {branch}"))?;
        if index.has_conflicts() {
            let mut paths = BTreeSet::new();
            for conflict in index.conflicts().git_ctx("listing conflicts")?.flatten() {
                for entry in [conflict.our, conflict.their, conflict.ancestor]
                    .into_iter()
                    .flatten()
                {
                    paths.insert(String::from_utf8_lossy(&entry.path).into_owned());
                }
            }
            return Err(WorkspaceError::MergeConflict {
                branch: branch.to_string(),
                paths: paths.into_iter().collect(),
            });
        }
        index
            .write_tree_to(&self.repo)
            .git_ctx("writing the merged tree")
    }

    /// The repository whose HEAD is `branch`: the user's checkout, or a linked worktree of it
    /// (Bosun's own task worktrees are on `bosun/*` branches and never match another branch).
    fn checkout_of(&self, branch: &str) -> Option<Repository> {
        let wanted = format!("refs/heads/{branch}");
        let holds = |repo: &Repository| {
            !repo.is_bare()
                && repo
                    .find_reference("HEAD")
                    .ok()
                    .and_then(|head| head.symbolic_target().ok().flatten().map(String::from))
                    .is_some_and(|target| target == wanted)
        };
        if holds(&self.repo) {
            return Repository::open(&self.repo_root).ok();
        }
        let names = self.repo.worktrees().ok()?;
        names
            .iter()
            .filter_map(|name| name.ok().flatten())
            .filter_map(|name| self.repo.find_worktree(name).ok())
            // Opened from its admin directory in the user's `.git`, never through the `.git`
            // file in the worktree (an old Bosun task worktree's is the agent's).
            .filter_map(|wt| Repository::open_from_worktree(&wt).ok())
            .find(|repo| holds(repo))
    }
}

/// Untracked files of the checkout at paths `tree` holds.
fn untracked_in(repo: &Repository, tree: &Tree<'_>) -> Vec<String> {
    let mut opts = StatusOptions::new();
    opts.include_untracked(true).recurse_untracked_dirs(true);
    let Ok(statuses) = repo.statuses(Some(&mut opts)) else {
        return Vec::new();
    };
    statuses
        .iter()
        .filter(|s| s.status().contains(git2::Status::WT_NEW))
        .filter_map(|s| s.path().ok().map(String::from))
        .filter(|p| tree.get_path(std::path::Path::new(p)).is_ok())
        .collect()
}

/// The checkout's working tree and index must hold exactly the branch tip.
fn ensure_clean(repo: &Repository, branch: &str) -> Result<()> {
    let mut opts = StatusOptions::new();
    opts.include_untracked(false)
        .include_ignored(false)
        .exclude_submodules(true);
    let statuses = repo
        .statuses(Some(&mut opts))
        .git_ctx("checking the checkout for uncommitted changes")?;
    let paths: Vec<String> = statuses
        .iter()
        .filter(|s| s.status() != git2::Status::CURRENT)
        .filter_map(|s| s.path().ok().map(String::from))
        .collect();
    if paths.is_empty() {
        return Ok(());
    }
    Err(WorkspaceError::DirtyCheckout {
        branch: branch.to_string(),
        repo: repo.workdir().unwrap_or(repo.path()).to_path_buf(),
        paths,
    })
}
