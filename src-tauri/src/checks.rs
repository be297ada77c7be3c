//! The checks' commands: thin wrappers over [`bosun_core::checks`] and the review's merge gate.

use crate::commands::Runner;
use crate::error::IpcError;
use bosun_core::BosunConfig;
use bosun_core::review::Reviewer;
use bosun_protocol::{CheckSpec, ChecksReport, RepoChecks, TaskId};
use std::path::Path;
use std::sync::Arc;
use tauri::State;

/// The checks a new task in `repo` would run (the New task form).
#[tauri::command(async)]
pub fn checks_for_repo(runner: State<'_, Runner>, repo: String) -> Result<RepoChecks, IpcError> {
    let engine = runner.engine()?;
    let root = bosun_workspace::resolve_repo(Path::new(repo.trim()))
        .map_err(bosun_core::CoreError::from)?;
    let config = BosunConfig::load(&engine.home)?;
    Ok(bosun_core::checks::repo_checks(&config, &root, None)?)
}

/// Writes `checks` as the `[[checks]]` of the repository's `.bosun/config.toml`; the path
/// written.
#[tauri::command(async)]
pub fn save_checks(
    runner: State<'_, Runner>,
    repo: String,
    checks: Vec<CheckSpec>,
) -> Result<String, IpcError> {
    runner.engine()?;
    let root = bosun_workspace::resolve_repo(Path::new(repo.trim()))
        .map_err(bosun_core::CoreError::from)?;
    Ok(bosun_core::checks::save_checks(&root, &checks)?
        .display()
        .to_string())
}

/// Runs a finished task's checks again on its latest checkpoint; the events stream on the
/// task's feed.
#[tauri::command]
pub async fn rerun_checks(
    runner: State<'_, Runner>,
    task_id: TaskId,
) -> Result<ChecksReport, IpcError> {
    let engine = Arc::clone(runner.engine()?);
    Ok(bosun_core::checks::rerun(&engine.home, Arc::clone(&engine.store), &task_id).await?)
}

/// The last checks of the tree a merge would write (`stale` when the accepted hunks changed).
#[tauri::command(async)]
pub fn review_checks(
    runner: State<'_, Runner>,
    task_id: TaskId,
) -> Result<Option<ChecksReport>, IpcError> {
    let engine = Arc::clone(runner.engine()?);
    let reviewer =
        Reviewer::open_changes(&engine.home, Arc::clone(&engine.store), task_id.as_str())?;
    Ok(reviewer.merge_checks()?)
}

/// Runs the checks on the tree a merge would write now.
#[tauri::command]
pub async fn review_run_checks(
    runner: State<'_, Runner>,
    task_id: TaskId,
) -> Result<ChecksReport, IpcError> {
    let engine = Arc::clone(runner.engine()?);
    let reviewer =
        Reviewer::open_changes(&engine.home, Arc::clone(&engine.store), task_id.as_str())?;
    Ok(reviewer.run_merge_checks().await?)
}
