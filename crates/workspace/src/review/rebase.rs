//! Moving a task's changes onto a new base: a three-way merge of the trees, conflicting files
//! written with git-style conflict markers, the worktree's branch, HEAD and index moved.

use super::Rebased;
use super::text::is_binary;
use crate::error::{GitContext, Result, WorkspaceError};
use crate::layout::write_atomic;
use crate::materialise::switch_files;
use crate::task::{ChangeHint, TaskWorktree, open_user_repo, tree_of};
use crate::{gitwt, owned_git};
use git2::{IndexEntry, MergeFileInput, MergeFileOptions, Oid, Repository};
use std::collections::BTreeSet;
use std::path::Path;

impl TaskWorktree {
    /// Moves the task's changes onto the tip of `onto` (a branch or commit): the base becomes
    /// that commit, files that conflict get conflict markers, and a checkpoint records the result.
    pub fn rebase(&mut self, onto: &str) -> Result<Rebased> {
        self.ensure_present()?;
        let new_base = self
            .repo
            .revparse_single(onto)
            .and_then(|o| o.peel_to_commit())
            .map(|c| c.id())
            .map_err(|_| WorkspaceError::UnknownBase {
                repo: self.repo_root.clone(),
                base: onto.to_string(),
            })?;
        let old_base = self.base_oid()?;
        self.checkpoint(&ChangeHint::Unknown, "Work before rebasing")?;
        let mut rebased = Rebased {
            old_base: old_base.to_string(),
            new_base: new_base.to_string(),
            conflicts: Vec::new(),
            checkpoint: None,
        };
        if new_base == old_base {
            return Ok(rebased);
        }
        let latest = self.tree_of_latest()?.id();
        // Merged on a handle whose working directory is the user's checkout: merge attributes
        // (`merge=union`) come from there, not from the agent's `.gitattributes`.
        let user = open_user_repo(&self.repo_root)?;
        let (result, conflicts) = merge_three(&user, old_base, new_base, latest)?;
        drop(user);
        rebased.conflicts = conflicts;
        let mut index = self.load_index()?;
        let paths = {
            let from = self
                .repo
                .find_tree(latest)
                .git_ctx("reading the latest checkpoint")?;
            let to = self
                .repo
                .find_tree(result)
                .git_ctx("reading the rebased tree")?;
            switch_files(&self.repo, &self.worktree, &mut index, &from, &to)?
        };
        if result != latest {
            let short = &rebased.new_base[..rebased.new_base.len().min(12)];
            let message = format!("Rebase onto {onto} ({short})");
            rebased.checkpoint = Some(self.commit(result, &message, paths)?);
        }
        self.persist_index(&mut index)?;
        let branch = format!("refs/heads/{}", self.branch);
        self.repo
            .reference(&branch, new_base, true, "bosun: rebase")
            .git_ctx(format!("moving {}", self.branch))?;
        // The task's own git directory follows: its branch at the new base, its index on it.
        owned_git::move_task_branch(&self.layout, &self.task_id, &self.branch, new_base)?;
        let onto_tree = tree_of(&self.repo, new_base)?;
        let private = self.layout.index_path(&self.task_id);
        let own = self.layout.task_git_dir(&self.task_id).join("index");
        gitwt::write_own_index(&own, &private, result, &onto_tree)?;
        self.base_commit = new_base.to_string();
        write_atomic(
            &self.layout.base_file(&self.task_id),
            self.base_commit.as_bytes(),
        )?;
        Ok(rebased)
    }
}

/// A conflicted file's content and mode as written into the worktree.
type Resolved = (Vec<u8>, u32);

/// The tree of `latest` moved from `old_base` onto `new_base`, and the paths that conflicted
/// (written with conflict markers, or the task's side for binaries and deletions).
fn merge_three(
    repo: &Repository,
    old_base: Oid,
    new_base: Oid,
    latest: Oid,
) -> Result<(Oid, Vec<String>)> {
    let ancestor = tree_of(repo, old_base)?;
    let ours = tree_of(repo, new_base)?;
    let theirs = repo
        .find_tree(latest)
        .git_ctx("reading the latest checkpoint")?;
    let mut index = repo
        .merge_trees(&ancestor, &ours, &theirs, None)
        .git_ctx("merging the task's changes onto the new base")?;
    let mut resolved: Vec<(String, Option<Resolved>)> = Vec::new();
    for conflict in index.conflicts().git_ctx("listing conflicts")?.flatten() {
        let path = [&conflict.their, &conflict.our, &conflict.ancestor]
            .into_iter()
            .flatten()
            .map(|e| String::from_utf8_lossy(&e.path).into_owned())
            .next()
            .unwrap_or_default();
        let content = |e: &Option<IndexEntry>| -> Result<Vec<u8>> {
            match e {
                Some(e) => Ok(repo
                    .find_blob(e.id)
                    .git_ctx(format!("reading {path}"))?
                    .content()
                    .to_vec()),
                None => Ok(Vec::new()),
            }
        };
        let (base, mine, task) = (
            content(&conflict.ancestor)?,
            content(&conflict.our)?,
            content(&conflict.their)?,
        );
        let state = match (&conflict.our, &conflict.their) {
            (Some(o), Some(t)) if !is_binary(&mine) && !is_binary(&task) => {
                let mut opts = MergeFileOptions::new();
                opts.our_label("base")
                    .their_label("task")
                    .ancestor_label("old base");
                let (mut in_base, mut in_mine, mut in_task) = (
                    MergeFileInput::new(),
                    MergeFileInput::new(),
                    MergeFileInput::new(),
                );
                in_base.content(&base);
                in_mine.content(&mine);
                in_task.content(&task);
                let merged = git2::merge_file(&in_base, &in_mine, &in_task, Some(&mut opts))
                    .git_ctx(format!("merging {path}"))?;
                Some((merged.content().to_vec(), t.mode.max(o.mode)))
            }
            (_, Some(t)) => Some((task, t.mode)),
            (Some(o), None) => Some((mine, o.mode)),
            (None, None) => None,
        };
        resolved.push((path, state));
    }
    let mut conflicts = BTreeSet::new();
    for (path, state) in resolved {
        index
            .conflict_remove(Path::new(&path))
            .git_ctx("resolving a conflict")?;
        if let Some((content, mode)) = state {
            let id = repo.blob(&content).git_ctx("writing a conflicted file")?;
            let entry = IndexEntry {
                ctime: git2::IndexTime::new(0, 0),
                mtime: git2::IndexTime::new(0, 0),
                dev: 0,
                ino: 0,
                mode,
                uid: 0,
                gid: 0,
                file_size: content.len() as u32,
                id,
                flags: path.len().min(0xfff) as u16,
                flags_extended: 0,
                path: path.as_bytes().to_vec(),
            };
            index.add(&entry).git_ctx("resolving a conflict")?;
        }
        conflicts.insert(path);
    }
    let tree = index
        .write_tree_to(repo)
        .git_ctx("writing the rebased tree")?;
    Ok((tree, conflicts.into_iter().collect()))
}
