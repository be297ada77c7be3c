//! Looking back: the list of checkpoints, diffs between any two states, and restore.

use crate::blobs::Blobs;
use crate::error::{GitContext, Result, WorkspaceError};
use crate::materialise::switch_files;
use crate::scan::{scan_paths, scan_tree};
use crate::task::{ChangeHint, Checkpoint, TaskWorktree, checkpoint_refs, tree_of};
use git2::{DiffFindOptions, DiffFormat, DiffOptions, DiffStatsFormat, Tree};
use std::collections::BTreeSet;
use std::path::Path;

/// A state of the task to diff from or to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffPoint {
    Base,
    Checkpoint(u32),
    /// The latest checkpoint, or the base if there is none.
    Latest,
}

/// What `restore` did: the paths it rewrote and the checkpoint recording the restored state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restored {
    pub paths: Vec<String>,
    pub checkpoint: Option<Checkpoint>,
}

/// The state `restore` puts back: checkpoint `n`, or the base for 0.
fn restore_point(n: u32) -> DiffPoint {
    match n {
        0 => DiffPoint::Base,
        n => DiffPoint::Checkpoint(n),
    }
}

impl TaskWorktree {
    pub fn checkpoints(&self) -> Result<Vec<Checkpoint>> {
        self.checkpoints_after(0)
    }

    /// The number of the newest checkpoint; 0 when there is none (the worktree is the base).
    pub fn latest_checkpoint(&self) -> u32 {
        self.latest.map_or(0, |(n, _)| n)
    }

    /// The checkpoints numbered above `after`, oldest first (e.g. those not journaled yet).
    pub fn checkpoints_after(&self, after: u32) -> Result<Vec<Checkpoint>> {
        let mut out = Vec::new();
        let refs = checkpoint_refs(&self.repo, &self.task_id)?;
        for (n, id) in refs.into_iter().filter(|(n, _)| *n > after) {
            let commit = self.repo.find_commit(id).git_ctx("reading a checkpoint")?;
            let tree = commit.tree().git_ctx("reading a checkpoint")?;
            let parent = match commit.parent(0) {
                Ok(p) => Some(p.tree().git_ctx("reading a checkpoint's parent")?),
                Err(_) => None,
            };
            out.push(Checkpoint {
                n,
                commit: id.to_string(),
                files: self.changed_paths(parent.as_ref(), &tree)?,
            });
        }
        Ok(out)
    }

    /// The files of the task's base that `matches` selects (e.g. the read-denied ones: a `.env`
    /// that was committed is in the object store, where the command sandbox cannot hide it).
    /// `rules` names what `matches` tests (the patterns): the answer is kept per base tree and
    /// rules, so a later task on the same base does not walk the tree again.
    pub fn base_files_matching(
        &self,
        rules: &str,
        matches: impl Fn(&str) -> bool,
    ) -> Result<Vec<String>> {
        let tree = self.tree_at(DiffPoint::Base)?;
        let cache = self.layout.base_scan(&tree.id().to_string(), rules);
        if let Ok(text) = std::fs::read_to_string(&cache) {
            return Ok(text
                .split('\0')
                .filter(|p| !p.is_empty())
                .map(String::from)
                .collect());
        }
        let mut found = Vec::new();
        tree.walk(git2::TreeWalkMode::PreOrder, |root, entry| {
            if entry.kind() == Some(git2::ObjectType::Blob)
                && let Ok(name) = entry.name()
            {
                let path = format!("{root}{name}");
                if matches(&path) {
                    found.push(path);
                }
            }
            git2::TreeWalkResult::Ok
        })
        .git_ctx("listing the base's files")?;
        found.sort();
        if let Some(dir) = cache.parent()
            && std::fs::create_dir_all(dir).is_ok()
        {
            // Best effort: without the note the next task walks the tree again.
            let _ = crate::layout::write_atomic(&cache, found.join("\0").as_bytes());
        }
        Ok(found)
    }

    /// Unified diff text (git style, `a/` and `b/` prefixes), or with `stat` a `git diff --stat`.
    pub fn diff(&self, from: DiffPoint, to: DiffPoint, stat: bool) -> Result<String> {
        // A repository handle whose working directory is the user's checkout: libgit2 reads
        // diff attributes (`-diff` makes a file "binary") from the working directory, and the
        // worktree's `.gitattributes` is the agent's, which must not hide a change.
        let repo = crate::task::open_user_repo(&self.repo_root)?;
        let old = repo
            .find_tree(self.tree_at(from)?.id())
            .git_ctx("reading a checkpoint")?;
        let new = repo
            .find_tree(self.tree_at(to)?.id())
            .git_ctx("reading a checkpoint")?;
        let mut diff = repo
            .diff_tree_to_tree(Some(&old), Some(&new), Some(&mut DiffOptions::new()))
            .git_ctx("diffing two checkpoints")?;
        diff.find_similar(Some(DiffFindOptions::new().renames(true)))
            .git_ctx("finding renames")?;
        if stat {
            let stats = diff.stats().git_ctx("counting changes")?;
            let buf = stats
                .to_buf(DiffStatsFormat::FULL, 80)
                .git_ctx("formatting a diff stat")?;
            return Ok(String::from_utf8_lossy(&buf).into_owned());
        }
        let mut text = String::new();
        diff.print(DiffFormat::Patch, |_, _, line| {
            if matches!(line.origin(), '+' | '-' | ' ') {
                text.push(line.origin());
            }
            text.push_str(&String::from_utf8_lossy(line.content()));
            true
        })
        .git_ctx("formatting a diff")?;
        Ok(text)
    }

    /// The paths that differ between the worktree now and checkpoint `n` (0: the base).
    pub fn restore_preview(&self, n: u32) -> Result<Vec<String>> {
        self.ensure_present()?;
        let target = self.tree_at(restore_point(n))?;
        let latest = &self.tree_of_latest()?;
        // Hashes what changed without writing any object.
        let mut blobs = Blobs::new(&self.repo, &self.worktree);
        let candidates = if self.git_cli {
            self.candidates_from_git()
        } else {
            None
        };
        let pending = match candidates {
            Some(paths) => scan_paths(&mut blobs, latest, &paths, false)?,
            None => {
                let index = self.load_index()?;
                scan_tree(&mut blobs, &index, &[], false)?
            }
        };
        drop(blobs);
        let mut candidates: BTreeSet<String> = self
            .changed_paths(Some(&target), latest)?
            .into_iter()
            .collect();
        candidates.extend(pending.changed.keys().cloned());
        let mut out = Vec::new();
        for path in candidates {
            let now = match pending.changed.get(&path) {
                Some(entry) => entry.as_ref().map(|e| (e.id, e.mode)),
                None => entry_in(latest, &path),
            };
            if now != entry_in(&target, &path) {
                out.push(path);
            }
        }
        Ok(out)
    }

    /// Puts the worktree back to checkpoint `n` (0: the base), touching only the paths that
    /// differ; returns them.
    pub fn restore(&mut self, n: u32) -> Result<Vec<String>> {
        self.restore_to(n).map(|r| r.paths)
    }

    /// Like [`TaskWorktree::restore`], also saying which checkpoints it wrote: uncommitted work is
    /// first saved as a checkpoint, and the restored state becomes a new checkpoint, so the next
    /// checkpoint's parent is exactly what the worktree holds and nothing is ever lost. (A
    /// caller journals both: [`TaskWorktree::checkpoints_after`] lists them.)
    pub fn restore_to(&mut self, n: u32) -> Result<Restored> {
        self.ensure_present()?;
        let point = restore_point(n);
        self.tree_at(point)?;
        let name = match n {
            0 => "the base".to_string(),
            n => format!("checkpoint {n}"),
        };
        self.checkpoint(
            &ChangeHint::Unknown,
            &format!("Work before restoring {name}"),
        )?;
        let target = self.tree_at(point)?.id();
        let (paths, checkpoint) = self.switch_to(target, &format!("Restore {name}"))?;
        Ok(Restored { paths, checkpoint })
    }

    /// Rewrites the files that differ between the latest checkpoint and `target` and records
    /// `target` as the next checkpoint (none when nothing differed).
    fn switch_to(
        &mut self,
        target: git2::Oid,
        message: &str,
    ) -> Result<(Vec<String>, Option<Checkpoint>)> {
        let mut index = self.load_index()?;
        let paths = {
            let from = self.tree_of_latest()?.id();
            let from = self.repo.find_tree(from).git_ctx("reading a checkpoint")?;
            let to = self
                .repo
                .find_tree(target)
                .git_ctx("reading a checkpoint")?;
            switch_files(&self.repo, &self.worktree, &mut index, &from, &to)?
        };
        let checkpoint = if paths.is_empty() {
            None
        } else {
            Some(self.commit(target, message, paths.clone())?)
        };
        self.persist_index(&mut index)?;
        Ok((paths, checkpoint))
    }

    /// Makes the worktree hold the tree of `commit` (a checkpoint of another task, for a fork)
    /// and records it as this task's next checkpoint with `message`. Only the files that differ
    /// are written. Returns the checkpoint, None when the worktree held that tree already.
    pub fn adopt(&mut self, commit: &str, message: &str) -> Result<Option<Checkpoint>> {
        self.ensure_present()?;
        let oid = git2::Oid::from_str(commit).map_err(|_| WorkspaceError::UnknownBase {
            repo: self.repo_root.clone(),
            base: commit.to_string(),
        })?;
        let target = tree_of(&self.repo, oid)?.id();
        Ok(self.switch_to(target, message)?.1)
    }

    pub(crate) fn tree_at(&self, point: DiffPoint) -> Result<Tree<'_>> {
        match point {
            DiffPoint::Base => tree_of(&self.repo, self.base_oid()?),
            DiffPoint::Latest => self.tree_of_latest(),
            DiffPoint::Checkpoint(n) => {
                let name = format!("refs/bosun/{}/{n}", self.task_id);
                match self.repo.find_reference(&name) {
                    Ok(r) => r.peel_to_tree().git_ctx(format!("reading {name}")),
                    Err(_) => Err(WorkspaceError::NoSuchCheckpoint {
                        task_id: self.task_id.clone(),
                        n,
                        available: self.latest.map_or(0, |l| l.0),
                    }),
                }
            }
        }
    }

    fn changed_paths(&self, old: Option<&Tree<'_>>, new: &Tree<'_>) -> Result<Vec<String>> {
        let diff = self
            .repo
            .diff_tree_to_tree(old, Some(new), None)
            .git_ctx("comparing two checkpoints")?;
        let mut paths = BTreeSet::new();
        for delta in diff.deltas() {
            for file in [delta.old_file(), delta.new_file()] {
                if let Some(p) = file
                    .path()
                    .and_then(|p| p.to_str())
                    .filter(|_| !file.id().is_zero())
                {
                    paths.insert(p.to_string());
                }
            }
        }
        Ok(paths.into_iter().collect())
    }
}

fn entry_in(tree: &Tree<'_>, path: &str) -> Option<(git2::Oid, u32)> {
    tree.get_path(Path::new(path))
        .ok()
        .filter(|e| e.kind() != Some(git2::ObjectType::Tree))
        .map(|e| (e.id(), e.filemode() as u32))
}

/// What [`TaskWorktree::merge_in`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MergedIn {
    /// The other side's changes are in the worktree now, recorded as a checkpoint (None when
    /// they changed nothing the worktree did not already hold).
    Merged {
        files: Vec<String>,
        checkpoint: Option<Checkpoint>,
    },
    /// Both sides changed these paths in ways that do not combine: nothing was written.
    Conflicts(Vec<String>),
}

impl TaskWorktree {
    /// Three-way merges the changes `theirs` made since `base` (commits of the repository: a
    /// sub-agent's start and end) into the worktree's recorded state, as a review merge does
    /// (`merge_trees`). Every path is decided before anything is written: a conflict writes
    /// nothing. A clean merge is recorded as the next checkpoint with `message`.
    pub fn merge_in(&mut self, base: &str, theirs: &str, message: &str) -> Result<MergedIn> {
        self.ensure_present()?;
        let oid = |c: &str| {
            git2::Oid::from_str(c).map_err(|_| WorkspaceError::UnknownBase {
                repo: self.repo_root.clone(),
                base: c.to_string(),
            })
        };
        let (base, theirs) = (oid(base)?, oid(theirs)?);
        let merged = {
            let base_tree = tree_of(&self.repo, base)?;
            let ours_tree = self.tree_of_latest()?;
            let theirs_tree = tree_of(&self.repo, theirs)?;
            let mut index = self
                .repo
                .merge_trees(&base_tree, &ours_tree, &theirs_tree, None)
                .git_ctx("merging a sub-agent's changes")?;
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
                return Ok(MergedIn::Conflicts(paths.into_iter().collect()));
            }
            index
                .write_tree_to(&self.repo)
                .git_ctx("writing the merged tree")?
        };
        let (files, checkpoint) = self.switch_to(merged, message)?;
        Ok(MergedIn::Merged { files, checkpoint })
    }

    /// Puts `paths` back as they are in `from` (a commit of the repository; a path it does not
    /// hold is deleted) and records the result as the next checkpoint with `message`: a
    /// sub-agent's changes outside its scope are undone so. Returns the paths rewritten.
    pub fn put_back(
        &mut self,
        from: &str,
        paths: &[String],
        message: &str,
    ) -> Result<(Vec<String>, Option<Checkpoint>)> {
        self.ensure_present()?;
        let from = git2::Oid::from_str(from).map_err(|_| WorkspaceError::UnknownBase {
            repo: self.repo_root.clone(),
            base: from.to_string(),
        })?;
        let target = {
            let old = tree_of(&self.repo, from)?;
            let latest = self.tree_of_latest()?;
            let mut update = git2::build::TreeUpdateBuilder::new();
            for path in paths {
                match old.get_path(Path::new(path)) {
                    Ok(e) if e.kind() != Some(git2::ObjectType::Tree) => {
                        let mode = match e.filemode() {
                            0o100755 => git2::FileMode::BlobExecutable,
                            0o120000 => git2::FileMode::Link,
                            _ => git2::FileMode::Blob,
                        };
                        update.upsert(path.as_str(), e.id(), mode);
                    }
                    _ => {
                        update.remove(path.as_str());
                    }
                }
            }
            update
                .create_updated(&self.repo, &latest)
                .git_ctx("putting paths back")?
        };
        self.switch_to(target, message)
    }
}
