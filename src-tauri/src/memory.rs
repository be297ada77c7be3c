//! The Memory panel's commands: a repository's memories (what Bosun learned across its tasks and
//! what the user wrote down), pinning, deleting and writing one, and `[memory] enabled` in
//! `$BOSUN_HOME/config.toml`. Thin wrappers over [`bosun_core::memory`] on the engine's journal
//! connection; an unknown id is `not_found`, its message naming the nearest ids.

use crate::commands::Runner;
use crate::error::IpcError;
use bosun_store::{MemoryRow, Store};
use serde::Serialize;
use std::path::Path;
use tauri::State;

/// What the panel shows: one repository's memories, the repositories that have any, and whether
/// memory is on (for every repository).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemoryView {
    /// The repository as the journal keys it (the canonical work-tree path); null when none was
    /// asked for.
    pub repo: Option<String>,
    /// Pinned first, then the newest.
    pub memories: Vec<MemoryRow>,
    /// Every repository that has memories.
    pub repos: Vec<String>,
    /// `[memory] enabled` (true when unset).
    pub enabled: bool,
    pub config_path: String,
}

/// The journal's key for `repo`: the repository containing the path, or the path as given when
/// it is no repository any more (a moved or deleted one keeps its memories until they are
/// deleted).
fn key(repo: &str) -> String {
    let repo = repo.trim();
    bosun_core::memory::repo_key(Path::new(repo)).unwrap_or_else(|_| repo.to_string())
}

pub fn view(home: &Path, store: &Store, repo: Option<&str>) -> Result<MemoryView, IpcError> {
    let repo = repo.filter(|r| !r.trim().is_empty()).map(key);
    let memories = match &repo {
        Some(r) => bosun_core::memory::list(store, r)?,
        None => Vec::new(),
    };
    Ok(MemoryView {
        repo,
        memories,
        repos: store.memory_repos()?,
        enabled: bosun_core::memory::enabled(home),
        config_path: home.join("config.toml").display().to_string(),
    })
}

/// The panel for `repo` (none: only the repositories that have memories, and the switch).
#[tauri::command(async)]
pub fn memories(runner: State<'_, Runner>, repo: Option<String>) -> Result<MemoryView, IpcError> {
    let engine = runner.engine()?;
    view(&engine.home, &engine.store, repo.as_deref())
}

/// Pins a memory (shown first in every new task's prompt, never dropped for room) or unpins it.
#[tauri::command(async)]
pub fn pin_memory(runner: State<'_, Runner>, id: i64, pinned: bool) -> Result<MemoryRow, IpcError> {
    Ok(bosun_core::memory::pin(
        &runner.engine()?.store,
        id,
        pinned,
    )?)
}

/// Forgets a memory; returns it as it was.
#[tauri::command(async)]
pub fn delete_memory(runner: State<'_, Runner>, id: i64) -> Result<MemoryRow, IpcError> {
    Ok(bosun_core::memory::delete(&runner.engine()?.store, id)?)
}

/// Writes down a convention for the tasks of the repository containing `repo` (one line, at most
/// 1000 characters); a folder in no repository is refused, as by `bosun memory add`.
#[tauri::command(async)]
pub fn add_memory(
    runner: State<'_, Runner>,
    repo: String,
    text: String,
) -> Result<MemoryRow, IpcError> {
    let key = bosun_core::memory::repo_key(Path::new(repo.trim()))?;
    Ok(bosun_core::memory::add_convention(
        &runner.engine()?.store,
        &key,
        &text,
    )?)
}

/// Turns memory on or off for every repository (`[memory] enabled` in `config.toml`, the rest
/// of the file kept); returns whether it is on now.
#[tauri::command(async)]
pub fn set_memory_enabled(enabled: bool) -> Result<bool, IpcError> {
    let home = bosun_store::bosun_home();
    bosun_core::memory::set_enabled(&home, enabled)?;
    Ok(bosun_core::memory::enabled(&home))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_view_keys_a_folder_inside_a_repository_by_its_root_and_says_whether_memory_is_on() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let repo = bosun_testkit::fixture_repo(dir.path()).unwrap();
        let store = Store::open(&home.join("bosun.db")).unwrap();
        let root = bosun_core::memory::repo_key(&repo).unwrap();
        bosun_core::memory::add_convention(&store, &root, "tabs, not spaces").unwrap();

        let inside = repo.join("src");
        let v = view(&home, &store, Some(&inside.display().to_string())).unwrap();
        assert_eq!(v.repo.as_deref(), Some(root.as_str()));
        assert_eq!(
            v.memories
                .iter()
                .map(|m| m.text.as_str())
                .collect::<Vec<_>>(),
            ["tabs, not spaces"]
        );
        assert_eq!(v.repos, vec![root.clone()]);
        assert!(v.enabled);

        bosun_core::memory::set_enabled(&home, false).unwrap();
        let v = view(&home, &store, None).unwrap();
        assert_eq!((v.repo, v.memories.len(), v.enabled), (None, 0, false));
        // A repository that went away still shows what was kept under its path.
        let gone = "/no/such/repository";
        let v = view(&home, &store, Some(gone)).unwrap();
        assert_eq!(v.repo.as_deref(), Some(gone));
    }

    #[test]
    fn an_unknown_id_is_not_found_and_names_the_nearest_ids() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("bosun.db")).unwrap();
        let kept = bosun_core::memory::add_convention(&store, "/r", "a").unwrap();
        let err: IpcError = bosun_core::memory::delete(&store, kept.id + 40)
            .unwrap_err()
            .into();
        assert_eq!(err.code, "not_found");
        assert!(
            err.message.contains(&format!("#{}", kept.id + 40))
                && err.message.contains(&format!("#{}", kept.id)),
            "{}",
            err.message
        );
    }
}
