//! A task's worktree: creation (fresh or recycled), re-opening, and checkpoints.

use crate::blobs::Blobs;
use crate::entry::normalise;
use crate::error::{GitContext, IoContext, Result, WorkspaceError};
use crate::layout::{Layout, read_trimmed, validate_task_id, write_atomic};
use crate::scan::{candidates_from_git, scan_paths, scan_tree};
use crate::{gitwt, materialise, pool, tree_edit};
use git2::{Commit, Index, IndexEntry, Oid, Repository, Signature, Tree};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Pending private-index entries beyond which a command checkpoint writes the index file.
const PERSIST_AFTER: usize = 512;

/// Which paths may have changed since the last checkpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChangeHint {
    /// Exactly these worktree-relative paths may have changed (added, modified or deleted); a
    /// path that is now a directory is looked at whole.
    Paths(Vec<String>),
    /// Anything may have changed (e.g. after a shell command): found from stat data.
    Unknown,
}

/// A checkpoint commit, referenced as `refs/bosun/<task-id>/<n>` in the user's repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    pub n: u32,
    pub commit: String,
    /// Paths that differ from the previous checkpoint (or the base), sorted.
    pub files: Vec<String>,
}

/// One git worktree on branch `bosun/<task-id>`, under `$BOSUN_HOME/worktrees/`.
pub struct TaskWorktree {
    pub task_id: String,
    /// The user's repository (its working directory).
    pub repo_root: PathBuf,
    pub worktree: PathBuf,
    /// `bosun/<task-id>`.
    pub branch: String,
    pub base_commit: String,
    pub(crate) layout: Layout,
    /// Opened at the worktree; objects and `refs/bosun/*` are shared with the user's repository.
    pub(crate) repo: Repository,
    pub(crate) latest: Option<(u32, Oid)>,
    /// Private index entries changed since the index file was last written (None = removed).
    /// The file plus these is exactly the latest checkpoint's tree, with stat data. Kept here
    /// rather than as a live `git2::Index` so a task can move between threads.
    pub(crate) pending: BTreeMap<String, Option<IndexEntry>>,
    /// Whether the git CLI finds command changes (faster than libgit2's walk on large trees).
    pub(crate) git_cli: bool,
}

impl std::fmt::Debug for TaskWorktree {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskWorktree")
            .field("task_id", &self.task_id)
            .field("worktree", &self.worktree)
            .field("branch", &self.branch)
            .field("base_commit", &self.base_commit)
            .field("latest", &self.latest.map(|l| l.0))
            .finish()
    }
}

impl TaskWorktree {
    /// A worktree for a new task at `base_commit`: a released worktree of the same repository is
    /// recycled when there is one (only differing files are rewritten), else `git worktree add`.
    pub fn create(home: &Path, repo_root: &Path, task_id: &str, base_commit: &str) -> Result<Self> {
        validate_task_id(task_id)?;
        let user = open_user_repo(repo_root)?;
        let base = find_commit(&user, repo_root, base_commit)?;
        let layout = Layout::new(home, repo_root);
        let branch = format!("bosun/{task_id}");
        let path = layout.worktree_path(task_id);
        let exists = || WorkspaceError::TaskExists {
            task_id: task_id.to_string(),
            branch: branch.clone(),
            path: path.clone(),
        };
        if path.exists() {
            return Err(exists());
        }
        match user.find_branch(&branch, git2::BranchType::Local) {
            Ok(b) if b.get().target() != Some(base.id()) => return Err(exists()),
            Ok(_) => {}
            Err(_) => {
                user.branch(&branch, &base, false)
                    .git_ctx(format!("creating branch {branch}"))?;
            }
        }
        layout.prepare(task_id, repo_root)?;
        write_atomic(&layout.base_file(task_id), base.id().to_string().as_bytes())?;
        let tree = base.tree().git_ctx("reading the base commit")?.id();
        materialise_worktree(&layout, &user, task_id, &path, &branch, tree)?;
        Self::load(layout, repo_root, task_id, &path, base.id())
    }

    /// Re-opens a task (CLI diff/restore, resume). A worktree that was recycled for another task
    /// (or deleted) is re-materialised at `worktree` from the task's latest checkpoint.
    pub fn open(
        home: &Path,
        repo_root: &Path,
        task_id: &str,
        worktree: &Path,
        base_commit: &str,
    ) -> Result<Self> {
        validate_task_id(task_id)?;
        let user = open_user_repo(repo_root)?;
        let base = find_commit(&user, repo_root, base_commit)?;
        let layout = Layout::new(home, repo_root);
        layout.prepare(task_id, repo_root)?;
        if !layout.base_file(task_id).exists() {
            write_atomic(&layout.base_file(task_id), base.id().to_string().as_bytes())?;
        }
        if !worktree.join(".git").exists() {
            let branch = format!("bosun/{task_id}");
            if user.find_branch(&branch, git2::BranchType::Local).is_err() {
                user.branch(&branch, &base, false)
                    .git_ctx(format!("re-creating branch {branch}"))?;
            }
            let target = match latest_checkpoint(&user, task_id)? {
                Some((_, commit)) => tree_of(&user, commit)?.id(),
                None => base.tree().git_ctx("reading the base commit")?.id(),
            };
            if worktree.exists() {
                // An empty leftover directory is fine; anything else is not ours to overwrite.
                std::fs::remove_dir(worktree).map_err(|_| WorkspaceError::TaskExists {
                    task_id: task_id.to_string(),
                    branch: branch.clone(),
                    path: worktree.to_path_buf(),
                })?;
            }
            materialise_worktree(&layout, &user, task_id, worktree, &branch, target)?;
        }
        Self::load(layout, repo_root, task_id, worktree, base.id())
    }

    fn load(
        layout: Layout,
        repo_root: &Path,
        task_id: &str,
        worktree: &Path,
        base: Oid,
    ) -> Result<Self> {
        let repo = Repository::open(worktree)
            .git_ctx(format!("opening the worktree {}", worktree.display()))?;
        let latest = latest_checkpoint(&repo, task_id)?;
        let index_path = layout.index_path(task_id);
        let mut index = Index::open(&index_path).git_ctx("opening the private index")?;
        let expected = match latest {
            Some((_, commit)) => tree_of(&repo, commit)?,
            None => tree_of(&repo, base)?,
        };
        let marker = read_trimmed(&layout.tree_marker(task_id));
        if marker.as_deref() != Some(expected.id().to_string().as_str()) {
            // Keeps the stat data of entries that did not change, so only the rest is re-hashed.
            index
                .read_tree(&expected)
                .git_ctx("rebuilding the private index")?;
            index.write().git_ctx("writing the private index")?;
            write_atomic(
                &layout.tree_marker(task_id),
                expected.id().to_string().as_bytes(),
            )?;
        }
        drop(expected);
        drop(index);
        Ok(TaskWorktree {
            task_id: task_id.to_string(),
            repo_root: repo_root.to_path_buf(),
            worktree: worktree.to_path_buf(),
            branch: format!("bosun/{task_id}"),
            base_commit: base.to_string(),
            layout,
            repo,
            latest,
            pending: BTreeMap::new(),
            git_cli: true,
        })
    }

    /// Commits the worktree state if it changed: a tree exactly equal to the worktree (untracked
    /// files included, ignored ones excluded, exec bits and symlinks kept), parent = the previous
    /// checkpoint or the base. Returns None when nothing changed.
    pub fn checkpoint(&mut self, hint: &ChangeHint, message: &str) -> Result<Option<Checkpoint>> {
        self.ensure_present()?;
        pool::unidle(&self.layout, &self.task_id);
        // Edit tools: only the named paths, compared with the latest tree (no index load).
        // Commands: the files whose stat data differs from the private index, plus new untracked
        // ones, as the git CLI (parallel stat) or else libgit2 lists them; only those are hashed.
        let paths = match hint {
            ChangeHint::Paths(paths) => Some(
                paths
                    .iter()
                    .map(|p| normalise(p))
                    .collect::<Result<Vec<_>>>()?,
            ),
            ChangeHint::Unknown if self.git_cli => {
                let found = self.candidates_from_git();
                self.git_cli = found.is_some();
                found
            }
            ChangeHint::Unknown => None,
        };
        let edit = matches!(hint, ChangeHint::Paths(_));
        let mut index = None;
        let scan = {
            let trees = [
                self.tree_of_latest()?,
                tree_of(&self.repo, self.base_oid()?)?,
            ];
            let mut blobs = Blobs::new(&self.repo, &self.worktree, &trees);
            let scan = match &paths {
                Some(paths) => scan_paths(&mut blobs, &trees[0], paths, edit)?,
                None => {
                    let loaded = index.insert(self.load_index()?);
                    // Stat refreshes of unchanged files land in the private index, never in the
                    // worktree's own index.
                    self.repo
                        .set_index(loaded)
                        .git_ctx("using the private index")?;
                    scan_tree(&mut blobs, loaded, &[], true)?
                }
            };
            if !scan.changed.is_empty() {
                blobs.write()?;
            }
            scan
        };
        let checkpoint = if scan.changed.is_empty() {
            None
        } else {
            let parent_tree = self.tree_of_latest()?;
            let tree = tree_edit::apply(&self.repo, &parent_tree, &scan.changes())?;
            let unchanged = tree == parent_tree.id();
            drop(parent_tree);
            if unchanged {
                None
            } else {
                Some(self.commit(tree, message, scan.changed.keys().cloned().collect())?)
            }
        };
        // Writing a large index costs about as much as the walk, so small changes stay pending
        // (re-checked by content on the next walk) until enough accumulate.
        let persist =
            self.pending.len() + scan.changed.len() + scan.refreshed.len() > PERSIST_AFTER;
        match index {
            Some(mut index) if persist => {
                scan.apply_to(&mut index)?;
                self.persist_index(&mut index)?;
            }
            _ => {
                scan.record_in(&mut self.pending);
                // Edit checkpoints never need the file: they compare with the latest tree.
                if !edit && self.pending.len() > PERSIST_AFTER {
                    self.flush_index()?;
                }
            }
        }
        Ok(checkpoint)
    }

    pub(crate) fn commit(
        &mut self,
        tree: Oid,
        message: &str,
        files: Vec<String>,
    ) -> Result<Checkpoint> {
        let n = self.latest.map_or(1, |(n, _)| n + 1);
        let parent_id = self
            .latest
            .map_or_else(|| self.base_oid(), |(_, c)| Ok(c))?;
        let parent = self
            .repo
            .find_commit(parent_id)
            .git_ctx("reading the previous checkpoint")?;
        let tree = self
            .repo
            .find_tree(tree)
            .git_ctx("reading the checkpoint tree")?;
        let sig = Signature::now("Bosun", "bosun@localhost").git_ctx("making a signature")?;
        let message = if message.trim().is_empty() {
            "checkpoint"
        } else {
            message
        };
        let commit = self
            .repo
            .commit(None, &sig, &sig, message, &tree, &[&parent])
            .git_ctx("writing a checkpoint commit")?;
        let name = format!("refs/bosun/{}/{n}", self.task_id);
        self.repo
            .reference(&name, commit, false, "bosun: checkpoint")
            .git_ctx(format!("creating {name}"))?;
        self.latest = Some((n, commit));
        Ok(Checkpoint {
            n,
            commit: commit.to_string(),
            files,
        })
    }

    /// Whether command checkpoints ask the git CLI which files changed (the default when git is
    /// installed; it stats in parallel) or walk with libgit2 only.
    pub fn use_git_cli(&mut self, enabled: bool) {
        self.git_cli = enabled;
    }

    pub(crate) fn base_oid(&self) -> Result<Oid> {
        Oid::from_str(&self.base_commit).git_ctx("reading the base commit id")
    }

    /// The latest checkpoint's tree, or the base's.
    pub(crate) fn tree_of_latest(&self) -> Result<Tree<'_>> {
        let commit = self
            .latest
            .map_or_else(|| self.base_oid(), |(_, c)| Ok(c))?;
        tree_of(&self.repo, commit)
    }

    /// Paths a command may have changed, from the git CLI comparing the worktree with the
    /// private index file, plus the pending paths, where that file is not the latest tree.
    pub(crate) fn candidates_from_git(&self) -> Option<Vec<String>> {
        let index_file = self.layout.index_path(&self.task_id);
        let mut paths = candidates_from_git(&self.worktree, &index_file)?;
        if !self.pending.is_empty() {
            paths.extend(self.pending.keys().cloned());
            paths.sort();
            paths.dedup();
        }
        Some(paths)
    }

    /// The private index file with the pending entries applied: the latest checkpoint's tree.
    pub(crate) fn load_index(&self) -> Result<Index> {
        let mut index = Index::open(&self.layout.index_path(&self.task_id))
            .git_ctx("opening the private index")?;
        for (path, entry) in &self.pending {
            match entry {
                Some(entry) => index.add(entry).git_ctx("updating the private index")?,
                None => {
                    if index.get_path(Path::new(path), 0).is_some() {
                        index
                            .remove_path(Path::new(path))
                            .git_ctx("updating the private index")?;
                    }
                }
            }
        }
        Ok(index)
    }

    /// Writes the private index (which must describe the latest checkpoint) and records which
    /// tree it describes.
    pub(crate) fn persist_index(&mut self, index: &mut Index) -> Result<()> {
        index.write().git_ctx("writing the private index")?;
        let tree = self.tree_of_latest()?.id();
        write_atomic(
            &self.layout.tree_marker(&self.task_id),
            tree.to_string().as_bytes(),
        )?;
        self.pending.clear();
        Ok(())
    }

    /// Writes pending private-index entries to disk (done on release and drop).
    pub(crate) fn flush_index(&mut self) -> Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let mut index = self.load_index()?;
        self.persist_index(&mut index)
    }

    pub(crate) fn ensure_present(&self) -> Result<()> {
        if self.worktree.join(".git").exists() {
            Ok(())
        } else {
            Err(WorkspaceError::WorktreeVanished {
                task_id: self.task_id.clone(),
                path: self.worktree.clone(),
            })
        }
    }
}

impl Drop for TaskWorktree {
    fn drop(&mut self) {
        if !self.pending.is_empty() && self.worktree.join(".git").exists() {
            // Best effort: a stale private index only costs re-hashing, never correctness.
            let _ = self.flush_index();
        }
    }
}

/// Gets a worktree for `task_id` at `path` holding `target` (a tree id) on `branch`: by recycling
/// an idle worktree of this repository, else with a fresh `git worktree add`.
fn materialise_worktree(
    layout: &Layout,
    user: &Repository,
    task_id: &str,
    path: &Path,
    branch: &str,
    target: Oid,
) -> Result<()> {
    for idle in pool::idle_tasks(layout) {
        if !pool::claim(layout, &idle.task_id) {
            continue;
        }
        match pool::recycle_into(layout, user, &idle, task_id, path, branch, target) {
            Ok(()) => return Ok(()),
            Err(_) => pool::discard(layout, &idle.task_id, &idle.worktree)?,
        }
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).io_ctx("create directory", parent)?;
    }
    gitwt::add(user, task_id, path, branch)?;
    let admin = gitwt::admin_dir(path).ok_or_else(|| WorkspaceError::WorktreeVanished {
        task_id: task_id.to_string(),
        path: path.to_path_buf(),
    })?;
    let private = layout.index_path(task_id);
    std::fs::copy(admin.join("index"), &private).io_ctx("write", &private)?;
    let head_commit = user
        .find_branch(branch, git2::BranchType::Local)
        .ok()
        .and_then(|b| b.get().target())
        .ok_or_else(|| WorkspaceError::UnknownBase {
            repo: user.workdir().unwrap_or(path).to_path_buf(),
            base: branch.to_string(),
        })?;
    let head_tree = tree_of(user, head_commit)?;
    if Index::open(&private).is_err() {
        // An index libgit2 cannot read (e.g. a newer format): start without stat data, so the
        // first command checkpoint hashes every file once.
        std::fs::remove_file(&private).io_ctx("remove", &private)?;
        let mut index = Index::open(&private).git_ctx("creating the private index")?;
        index
            .read_tree(&head_tree)
            .git_ctx("filling the private index")?;
        index.write().git_ctx("writing the private index")?;
    }
    if head_tree.id() != target {
        let mut index = Index::open(&private).git_ctx("opening the private index")?;
        let to = user
            .find_tree(target)
            .git_ctx("reading the latest checkpoint")?;
        materialise::switch_files(user, path, &mut index, &head_tree, &to)?;
        index.write().git_ctx("writing the private index")?;
    }
    write_atomic(&layout.tree_marker(task_id), target.to_string().as_bytes())
}

pub(crate) fn open_user_repo(repo_root: &Path) -> Result<Repository> {
    let repo = Repository::open(repo_root).map_err(|_| WorkspaceError::NotARepository {
        path: repo_root.to_path_buf(),
    })?;
    if repo.is_bare() {
        return Err(WorkspaceError::BareRepository {
            path: repo_root.to_path_buf(),
        });
    }
    Ok(repo)
}

fn find_commit<'r>(repo: &'r Repository, repo_root: &Path, id: &str) -> Result<Commit<'r>> {
    Oid::from_str(id)
        .and_then(|oid| repo.find_commit(oid))
        .map_err(|_| WorkspaceError::UnknownBase {
            repo: repo_root.to_path_buf(),
            base: id.to_string(),
        })
}

pub(crate) fn tree_of(repo: &Repository, commit: Oid) -> Result<Tree<'_>> {
    repo.find_commit(commit)
        .and_then(|c| c.tree())
        .git_ctx(format!("reading the tree of commit {commit}"))
}

/// The highest-numbered `refs/bosun/<task-id>/<n>`.
pub(crate) fn latest_checkpoint(repo: &Repository, task_id: &str) -> Result<Option<(u32, Oid)>> {
    Ok(checkpoint_refs(repo, task_id)?.into_iter().last())
}

/// All `refs/bosun/<task-id>/<n>`, ordered by n.
pub(crate) fn checkpoint_refs(repo: &Repository, task_id: &str) -> Result<Vec<(u32, Oid)>> {
    let prefix = format!("refs/bosun/{task_id}/");
    let mut out = Vec::new();
    let refs = repo
        .references_glob(&format!("{prefix}*"))
        .git_ctx("listing checkpoints")?;
    for reference in refs.flatten() {
        let n = reference
            .name()
            .ok()
            .and_then(|name| name.strip_prefix(&prefix))
            .and_then(|n| n.parse::<u32>().ok());
        if let (Some(n), Some(target)) = (n, reference.target()) {
            out.push((n, target));
        }
    }
    out.sort_by_key(|(n, _)| *n);
    Ok(out)
}
