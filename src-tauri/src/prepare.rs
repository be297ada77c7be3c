//! A worktree prepared while the New task form is open: picking a repository (or another base)
//! starts a spare worktree at that base in the background (`bosun_workspace::prepare_spare`), so
//! Start recycles it instead of checking the repository out. Closing the form unused removes it.

use crate::error::IpcError;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use tokio::task::JoinHandle;

/// The spare being prepared (or ready) for the form, at most one.
#[derive(Default)]
pub struct Preparation {
    current: Mutex<Option<Prepared>>,
    /// Repositories whose map is being warmed now.
    warming: std::sync::Arc<Mutex<std::collections::HashSet<PathBuf>>>,
}

struct Prepared {
    repo: PathBuf,
    job: JoinHandle<Result<PathBuf, String>>,
}

impl Preparation {
    /// Starts preparing a worktree of `repo` at `base` (default: its HEAD). A preparation for
    /// another repository is finished first and its spare removed; one for the same repository
    /// is followed by this one (the spare switches to the new base).
    pub async fn prepare(
        &self,
        home: &Path,
        repo: &str,
        base: Option<&str>,
        store: std::sync::Arc<bosun_store::Store>,
    ) -> Result<(), IpcError> {
        let root = bosun_workspace::resolve_repo(Path::new(repo.trim()))
            .map_err(|e| IpcError::new("not_a_repo", e.to_string()))?;
        self.warm_map(home, &root, store);
        let base = bosun_workspace::resolve_base(&root, base.filter(|b| !b.trim().is_empty()))
            .map_err(|e| IpcError::new("bad_request", e.to_string()))?;
        let previous = self.take();
        if let Some(p) = previous {
            let _ = p.job.await;
            if p.repo != root {
                drop_spares(home, &p.repo).await;
            }
        }
        let (home, job_root) = (home.to_path_buf(), root.clone());
        let job = tokio::task::spawn_blocking(move || {
            bosun_workspace::prepare_spare(&home, &job_root, &base).map_err(|e| e.to_string())
        });
        if let Ok(mut current) = self.current.lock() {
            *current = Some(Prepared { repo: root, job });
        }
        Ok(())
    }

    /// Waits for a preparation of `repo` still running, so a task about to start takes its
    /// worktree rather than checking out another.
    pub async fn settle(&self, repo: &str) {
        let Ok(root) = bosun_workspace::resolve_repo(Path::new(repo.trim())) else {
            return;
        };
        let pending = match self.current.lock() {
            Ok(mut current) if current.as_ref().is_some_and(|p| p.repo == root) => current.take(),
            _ => None,
        };
        if let Some(p) = pending
            && let Ok(Err(e)) = p.job.await
        {
            tracing::warn!("preparing a worktree of {} failed: {e}", root.display());
        }
    }

    /// The form closed without starting: its spare goes (a worktree switched from the pool
    /// stays in it).
    pub async fn release(&self, home: &Path) {
        if let Some(p) = self.take() {
            let _ = p.job.await;
            drop_spares(home, &p.repo).await;
        }
    }

    /// Starts building `root`'s repository map on a thread of its own, so its tags are in the
    /// journal's cache (shared by every worktree) when the task's first request needs the map.
    fn warm_map(&self, home: &Path, root: &Path, store: std::sync::Arc<bosun_store::Store>) {
        // Read-denied files are never parsed (their tags would land in the journal).
        let Ok(policy) = bosun_core::PolicyFiles::new(home, root, None, None).load() else {
            return;
        };
        let Ok(mut warming) = self.warming.lock() else {
            return;
        };
        if !warming.insert(root.to_path_buf()) {
            return;
        }
        let (root, warming) = (root.to_path_buf(), std::sync::Arc::clone(&self.warming));
        let _ = std::thread::Builder::new()
            .name("bosun-map-warm".into())
            .spawn(move || {
                let (_, stats) = bosun_context::RepoMap::build_keeping(&root, Some(&store), &|p| {
                    !policy.is_read_denied(p)
                });
                tracing::debug!(
                    "warmed the map of {}: {} files, {} parsed",
                    root.display(),
                    stats.files,
                    stats.parsed
                );
                if let Ok(mut w) = warming.lock() {
                    w.remove(&root);
                }
            });
    }

    fn take(&self) -> Option<Prepared> {
        self.current.lock().ok().and_then(|mut c| c.take())
    }
}

async fn drop_spares(home: &Path, repo: &Path) {
    let (home, repo) = (home.to_path_buf(), repo.to_path_buf());
    let _ = tokio::task::spawn_blocking(move || bosun_workspace::drop_spares(&home, &repo)).await;
}
