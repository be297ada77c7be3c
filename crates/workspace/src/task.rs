//! A task's worktree: creation (fresh or recycled), re-opening, and checkpoints.

use crate::blobs::Blobs;
use crate::entry::normalise;
use crate::error::{GitContext, IoContext, Result, WorkspaceError};
use crate::layout::{Layout, read_trimmed, validate_task_id, write_atomic};
use crate::owned_git::{self, TaskGitSpec};
use crate::scan::{candidates_from_git, scan_paths, scan_tree};
use crate::watch::{CommandScan, Take, WalkReason, Watcher};
use crate::{gitwt, pool, tree_edit};
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

/// Where a task's git state lives, for the command sandbox (see [`TaskWorktree::task_git`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskGitPaths {
    /// The task's own git directory: the worktree's `.git` points here.
    pub git_dir: PathBuf,
    /// The user's checkout.
    pub user_checkout: PathBuf,
    /// The user's git (common) directory.
    pub user_git_dir: PathBuf,
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
    /// The user's repository, opened at the path the user gave (never through the worktree's
    /// `.git`, which the task controls), with the worktree as its working directory: objects
    /// and `refs/bosun/*` are the user's.
    pub(crate) repo: Repository,
    pub(crate) latest: Option<(u32, Oid)>,
    /// Private index entries changed since the index file was last written (None = removed).
    /// The file plus these is exactly the latest checkpoint's tree, with stat data. Kept here
    /// rather than as a live `git2::Index` so a task can move between threads.
    pub(crate) pending: BTreeMap<String, Option<IndexEntry>>,
    /// Whether the git CLI finds command changes (faster than libgit2's walk on large trees).
    pub(crate) git_cli: bool,
    /// Watches the worktree while the task runs, so command checkpoints look only at what
    /// changed (see [`crate::watch`]).
    pub(crate) watcher: Option<Watcher>,
    /// How the latest command checkpoint found its changes.
    pub(crate) last_scan: Option<CommandScan>,
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
        materialise_worktree(&layout, &user, task_id, &path, &branch, tree, base.id())?;
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
        // The path comes from the journal (an imported one, or one edited by hand): Bosun only
        // ever writes, recycles or removes a worktree of its own, under $BOSUN_HOME/worktrees.
        if !inside_worktrees(&layout, worktree) {
            return Err(WorkspaceError::InvalidPath {
                path: worktree.display().to_string(),
                reason: "a task's worktree is a directory of Bosun's own, under $BOSUN_HOME/worktrees/<repository>/; this journal names another place",
            });
        }
        layout.prepare(task_id, repo_root)?;
        if !layout.base_file(task_id).exists() {
            write_atomic(&layout.base_file(task_id), base.id().to_string().as_bytes())?;
        }
        if is_empty_dir(worktree) {
            // A leftover empty directory is not a worktree that had all its files deleted.
            std::fs::remove_dir(worktree).io_ctx("remove", worktree)?;
        }
        if !worktree.is_dir() {
            let branch = format!("bosun/{task_id}");
            if user.find_branch(&branch, git2::BranchType::Local).is_err() {
                user.branch(&branch, &base, false)
                    .git_ctx(format!("re-creating branch {branch}"))?;
            }
            let target = match latest_checkpoint(&user, task_id)? {
                Some((_, commit)) => tree_of(&user, commit)?.id(),
                None => base.tree().git_ctx("reading the base commit")?.id(),
            };
            if std::fs::symlink_metadata(worktree).is_ok() {
                // Not a directory (a file or a symlink stands there): not ours to overwrite.
                return Err(WorkspaceError::TaskExists {
                    task_id: task_id.to_string(),
                    branch,
                    path: worktree.to_path_buf(),
                });
            }
            materialise_worktree(
                &layout,
                &user,
                task_id,
                worktree,
                &branch,
                target,
                base.id(),
            )?;
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
        let repo = open_user_repo(repo_root)?;
        repo.set_workdir(worktree, false)
            .git_ctx(format!("using the worktree {}", worktree.display()))?;
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
        drop(index);
        let branch = format!("bosun/{task_id}");
        let spec = TaskGitSpec {
            worktree,
            branch: &branch,
            base,
        };
        if std::fs::symlink_metadata(layout.task_git_dir(task_id)).is_err() {
            // A worktree made before task git directories (a linked worktree of the user's
            // repository): it gets its own, and the registration in the user's repo goes.
            let git_dir = owned_git::create_task_git(&layout, &repo, task_id, &spec)?;
            let head = tree_of(&repo, base)?;
            gitwt::write_own_index(&git_dir.join("index"), &index_path, expected.id(), &head)?;
            owned_git::forget_linked_registration(&repo, task_id, worktree);
        } else {
            owned_git::repair_task_git(&layout, &repo, task_id, &spec)?;
        }
        owned_git::bosun_git_dir(&layout, &repo)?;
        drop(expected);
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
            watcher: None,
            last_scan: None,
        })
    }

    /// Commits the worktree state if it changed: a tree exactly equal to the worktree (untracked
    /// files included, ignored ones excluded, exec bits and symlinks kept), parent = the previous
    /// checkpoint or the base. Returns None when nothing changed.
    pub fn checkpoint(&mut self, hint: &ChangeHint, message: &str) -> Result<Option<Checkpoint>> {
        let mut took = false;
        let result = self.checkpoint_taking(hint, message, &mut took);
        if result.is_err()
            && took
            && let Some(watcher) = self.watcher.as_mut()
        {
            // The watcher's paths were taken and not recorded: the next command walks.
            watcher.mark_stale();
        }
        result
    }

    fn checkpoint_taking(
        &mut self,
        hint: &ChangeHint,
        message: &str,
        took: &mut bool,
    ) -> Result<Option<Checkpoint>> {
        self.ensure_present()?;
        pool::unidle(&self.layout, &self.task_id);
        // Edit tools: only the named paths, compared with the latest tree (no index load).
        // Commands: with a watcher, the paths its events named (compared with the latest tree
        // like an edit's); else the files whose stat data differs from the private index, plus
        // new untracked ones, as the git CLI (parallel stat) or else libgit2 lists them; only
        // those are hashed.
        let watched = match hint {
            ChangeHint::Unknown => self.take_watched(took)?,
            ChangeHint::Paths(_) => None,
        };
        let from_watcher = watched.is_some();
        let paths = match hint {
            ChangeHint::Paths(paths) => Some(
                paths
                    .iter()
                    .map(|p| normalise(p))
                    .collect::<Result<Vec<_>>>()?,
            ),
            ChangeHint::Unknown if from_watcher => watched,
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
            let latest = self.tree_of_latest()?;
            let mut blobs = Blobs::new(&self.repo, &self.worktree);
            let scan = match &paths {
                // Edit and watcher paths may name ignored files (left out here); the git
                // CLI's list has none.
                Some(paths) => scan_paths(&mut blobs, &latest, paths, edit || from_watcher)?,
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
        if !edit && let Some(watcher) = self.watcher.as_mut() {
            let latest = tree_of(&self.repo, latest_oid(self.latest, &self.base_commit)?)?;
            let recorded = scan
                .changed
                .iter()
                .filter(|(_, entry)| entry.is_some())
                .map(|(path, _)| path.as_str());
            watcher.after_scan(recorded, &latest);
        }
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

    /// The paths the watcher says changed since the last command checkpoint, or None when the
    /// tree is to be walked (recorded in [`TaskWorktree::last_command_scan`] either way).
    fn take_watched(&mut self, took: &mut bool) -> Result<Option<Vec<String>>> {
        let Some(watcher) = self.watcher.as_mut() else {
            self.last_scan = Some(CommandScan::Walk(WalkReason::NoWatcher));
            return Ok(None);
        };
        let latest = tree_of(&self.repo, latest_oid(self.latest, &self.base_commit)?)?;
        *took = true;
        match watcher.take(&latest) {
            Take::Paths(paths, drain) => {
                self.last_scan = Some(CommandScan::Events {
                    paths: paths.len(),
                    drain,
                });
                Ok(Some(paths))
            }
            Take::Walk(reason) => {
                self.last_scan = Some(CommandScan::Walk(reason));
                Ok(None)
            }
        }
    }

    /// The latest checkpoint's commit, or the base.
    pub(crate) fn latest_oid(&self) -> Result<Oid> {
        latest_oid(self.latest, &self.base_commit)
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

    /// Checks the worktree before it is used (before each command): its `.git` file points at
    /// the task's own git directory and that directory's HEAD, config and alternates are
    /// Bosun's; whatever a command changed there is put back. Returns what was put back, in
    /// words (empty when all was in order), for a warning.
    pub fn verify(&mut self) -> Result<Vec<String>> {
        self.ensure_present()?;
        owned_git::bosun_git_dir(&self.layout, &self.repo)?;
        let base = self.base_oid()?;
        let spec = TaskGitSpec {
            worktree: &self.worktree,
            branch: &self.branch,
            base,
        };
        owned_git::repair_task_git(&self.layout, &self.repo, &self.task_id, &spec)
    }

    /// The git state a command of this task may use: its own git directory (writable), the
    /// user's checkout and git directory (only the object store stays visible, read-only).
    /// The commit the worktree's files are recorded in: the latest checkpoint, else the base.
    pub fn latest_commit(&self) -> String {
        match self.latest {
            Some((_, c)) => c.to_string(),
            None => self.base_commit.clone(),
        }
    }

    pub fn task_git(&self) -> TaskGitPaths {
        let user_git_dir = self.repo.commondir().to_path_buf();
        TaskGitPaths {
            git_dir: self.layout.task_git_dir(&self.task_id),
            user_checkout: self.repo_root.clone(),
            user_git_dir: user_git_dir.canonicalize().unwrap_or(user_git_dir),
        }
    }

    /// Clears set-id bits of every file in the worktree, ignored ones included (a walk of the
    /// whole tree; checkpoints already clear them on the files they record). For commands run
    /// where the sandbox could not refuse setting them.
    pub fn strip_set_id_bits(&self) -> Result<Vec<String>> {
        let mut stripped = Vec::new();
        let mut stack = vec![self.worktree.clone()];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                let Ok(meta) = std::fs::symlink_metadata(&path) else {
                    continue;
                };
                if meta.is_dir() {
                    stack.push(path);
                } else if meta.is_file()
                    && std::os::unix::fs::MetadataExt::mode(&meta) & 0o6000 != 0
                {
                    crate::scan::strip_set_id(&path, meta)?;
                    if let Ok(rel) = path.strip_prefix(&self.worktree) {
                        stripped.push(rel.to_string_lossy().into_owned());
                    }
                }
            }
        }
        stripped.sort();
        Ok(stripped)
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
        // Bosun's git directory is brought up to date when the task is opened and before each
        // command (`verify`), not on every checkpoint.
        let git_dir = self.layout.bosun_git_dir();
        let mut paths = candidates_from_git(&git_dir, &self.worktree, &index_file)?;
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
        if self.worktree.is_dir() {
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
        if !self.pending.is_empty() && self.worktree.is_dir() {
            // Best effort: a stale private index only costs re-hashing, never correctness.
            let _ = self.flush_index();
        }
    }
}

/// Gets a worktree for `task_id` at `path` holding `target` (a tree id), its HEAD on `branch` at
/// `head` (a commit): by recycling an idle worktree of this repository, else by a fresh checkout.
/// Either way the worktree gets a new git directory of its own.
fn materialise_worktree(
    layout: &Layout,
    user: &Repository,
    task_id: &str,
    path: &Path,
    branch: &str,
    target: Oid,
    head: Oid,
) -> Result<()> {
    let private = layout.index_path(task_id);
    let recycled = pool::recycle_newest(layout, user, task_id, path, target)?;
    if let Some(old) = &recycled {
        crate::spare::forget(layout, old);
    } else {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).io_ctx("create directory", parent)?;
        }
        gitwt::checkout_fresh(layout, user, path, target, &private)?;
    }
    let spec = TaskGitSpec {
        worktree: path,
        branch,
        base: head,
    };
    let git_dir = owned_git::create_task_git(layout, user, task_id, &spec)?;
    let head_tree = tree_of(user, head)?;
    gitwt::write_own_index(&git_dir.join("index"), &private, target, &head_tree)?;
    write_atomic(&layout.tree_marker(task_id), target.to_string().as_bytes())
}

fn is_empty_dir(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
        && std::fs::read_dir(path).is_ok_and(|mut entries| entries.next().is_none())
}

/// Whether `worktree` is where Bosun keeps a task worktree of `repo_root` under `home`: a
/// journal's path that is not is never written to or removed.
pub fn is_task_worktree(home: &Path, repo_root: &Path, worktree: &Path) -> bool {
    inside_worktrees(&Layout::new(home, repo_root), worktree)
}

/// Whether `worktree` is a directory of this repository's worktrees under `$BOSUN_HOME` (by its
/// path as written, or as it resolves), with no `..` in it.
fn inside_worktrees(layout: &Layout, worktree: &Path) -> bool {
    use std::path::Component;
    if worktree
        .components()
        .any(|c| matches!(c, Component::ParentDir | Component::CurDir))
    {
        return false;
    }
    let root = layout.worktrees_dir();
    let direct = worktree.parent() == Some(root.as_path());
    let resolved = match (
        worktree.parent().and_then(|p| p.canonicalize().ok()),
        root.canonicalize().ok(),
    ) {
        (Some(parent), Some(root)) => parent == root,
        _ => false,
    };
    direct || resolved
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

pub(crate) fn find_commit<'r>(
    repo: &'r Repository,
    repo_root: &Path,
    id: &str,
) -> Result<Commit<'r>> {
    Oid::from_str(id)
        .and_then(|oid| repo.find_commit(oid))
        .map_err(|_| WorkspaceError::UnknownBase {
            repo: repo_root.to_path_buf(),
            base: id.to_string(),
        })
}

fn latest_oid(latest: Option<(u32, Oid)>, base_commit: &str) -> Result<Oid> {
    match latest {
        Some((_, commit)) => Ok(commit),
        None => Oid::from_str(base_commit).git_ctx("reading the base commit id"),
    }
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
