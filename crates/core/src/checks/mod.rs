//! Verification: the project's checks, run by Bosun itself — at the end of a task (the loop in
//! `task.rs` feeds failures back to the model), after edits, again on request, and on the tree a
//! merge would write (the merge gate). Discovery, digests and the base-commit cache live in
//! `bosun-verify`; this module runs checks under the task's policy and sandbox and journals
//! them.

mod feedback;
mod plan;
pub(crate) mod run;

pub(crate) use feedback::{round_failed, summary_line};

/// The end of a check's output, as an edit check's note shows it.
pub(crate) fn feedback_tail(tail: &str) -> &str {
    feedback::tail_of(tail, 2000)
}
pub use plan::{
    CheckPlan, ChecksChoice, DEFAULT_MAX_CHECK_ROUNDS, MAX_CHECK_TIMEOUT_SECS, flag_check,
    max_rounds, plan, project_config_path, repo_checks, save_checks, validate,
};
pub(crate) use run::{CheckContext, RoundSpec, any_required_ran, blocking, task_slot};

use crate::policy_files::PolicyFiles;
use crate::redaction::Redaction;
use crate::sandboxing::Sandboxing;
use crate::{BosunConfig, CoreError, Emitter};
use bosun_protocol::{
    CheckFinished, CheckScope, CheckSource, CheckSpec, CheckWhen, ChecksReport, EventMsg, TaskId,
};
use bosun_store::{Store, TaskRow};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// The checks a task planned (its `checks_planned` event); a task from before checks existed
/// gets the repository's.
pub fn task_plan(home: &Path, store: &Store, row: &TaskRow) -> Result<CheckPlan, CoreError> {
    let planned = store.events_of_kinds(&row.id, &["checks_planned"])?;
    if let Some(p) = planned.into_iter().rev().find_map(|e| match e.msg {
        EventMsg::ChecksPlanned(p) => Some(p),
        _ => None,
    }) {
        return Ok(CheckPlan {
            checks: p.checks,
            source: p.source,
            max_rounds: p.max_rounds,
        });
    }
    let config = BosunConfig::load(home)?;
    plan(
        &config,
        Path::new(&row.repo),
        None,
        &ChecksChoice::Repository,
        None,
    )
}

/// The `end` checks of a plan (the ones the loop and the merge gate run).
pub fn end_checks(plan: &CheckPlan) -> Vec<CheckSpec> {
    plan.checks
        .iter()
        .filter(|c| c.when == CheckWhen::End)
        .cloned()
        .collect()
}

/// Runs `checks` on `tree` for the finished task `row`, journaling the events in its stream:
/// a re-run (scope full) or the merge gate (scope accepted). Sandboxed under the repository's
/// policy, without the network (there is no one to ask about a host).
pub(crate) async fn run_outside_task(
    home: &Path,
    store: &Arc<Store>,
    row: &TaskRow,
    spec: &RoundSpec<'_>,
) -> Result<Vec<CheckFinished>, CoreError> {
    let repo_root = PathBuf::from(&row.repo);
    let policy = PolicyFiles::new(home, &repo_root, None, None).load()?;
    let user_git_dir = {
        let r = repo_root.clone();
        tokio::task::spawn_blocking(move || bosun_workspace::user_git_dir(&r))
            .await
            .map_err(|e| CoreError::Internal(format!("git thread failed: {e}")))??
    };
    let sandboxing = Sandboxing::for_task(
        home,
        row.id.as_str(),
        Path::new(&row.worktree),
        true,
        Some(bosun_exec::TaskGit {
            git_dir: home.join("tmp").join(row.id.as_str()).join("checks"),
            user_checkout: repo_root.clone(),
            user_git_dir,
        }),
    );
    let redaction = Arc::new(Redaction::from_environment());
    let emitter =
        Arc::new(Emitter::appending(row.id.clone(), Arc::clone(store)).with_redaction(redaction));
    let env_remove = crate::secret_env_names(std::env::vars().map(|(k, _)| k));
    let cancel = CancellationToken::new();
    let ctx = CheckContext {
        home,
        repo_root: &repo_root,
        base_commit: &row.base_commit,
        policy: &policy,
        sandboxing: &sandboxing,
        emitter: &emitter,
        cancel: &cancel,
        env_remove: &env_remove,
        dispatch: None,
    };
    Ok(ctx.run_round(spec).await?.results)
}

/// Runs a finished task's checks again on its latest checkpoint (the app's Re-run,
/// `bosun checks TASK --run`).
pub async fn rerun(
    home: &Path,
    store: Arc<Store>,
    task: &TaskId,
) -> Result<ChecksReport, CoreError> {
    let row = store.task(task)?;
    CoreError::refuse_imported(&row, "checked")?;
    if row.status == bosun_protocol::TaskStatus::Running {
        return Err(CoreError::Refused {
            code: "running",
            message: format!(
                "task {} is running: its checks run when the model says it is done",
                row.id
            ),
        });
    }
    let plan = task_plan(home, &store, &row)?;
    let checks = end_checks(&plan);
    if checks.is_empty() {
        return Err(no_checks(&row, plan.source));
    }
    let (repo, id, base) = (
        row.repo.clone(),
        row.id.to_string(),
        row.base_commit.clone(),
    );
    let tree = tokio::task::spawn_blocking(move || {
        bosun_workspace::latest_checkpoint_commit(Path::new(&repo), &id)
    })
    .await
    .map_err(|e| CoreError::Internal(format!("git thread failed: {e}")))??
    .unwrap_or(base);
    let changed = changed_files(&store, &row.id)?;
    let spec = RoundSpec {
        checks: &checks,
        tree: &tree,
        round: 0,
        scope: CheckScope::Full,
        changed: &changed,
        slot: task_slot(row.id.as_str()),
    };
    let results = run_outside_task(home, &store, &row, &spec).await?;
    Ok(ChecksReport {
        blocked: blocking(&results),
        tree,
        checks: results,
        stale: false,
    })
}

/// The error for a task with nothing to check, saying how to get checks.
pub(crate) fn no_checks(row: &TaskRow, source: CheckSource) -> CoreError {
    let why = match source {
        CheckSource::None => "it was run with --no-checks",
        _ => "none are configured or found in the repository",
    };
    CoreError::Refused {
        code: "no_checks",
        message: format!(
            "task {} has no checks to run ({why}); add [[checks]] to {} (`bosun checks --repo {} --save` writes the ones Bosun finds)",
            row.id,
            project_config_path(Path::new(&row.repo)).display(),
            row.repo
        ),
    }
}

/// The paths the task's checkpoints changed, from the journal.
pub(crate) fn changed_files(store: &Store, task: &TaskId) -> Result<Vec<String>, CoreError> {
    let mut files: Vec<String> = store
        .checkpoints(task)?
        .into_iter()
        .flat_map(|c| c.files)
        .collect();
    files.sort();
    files.dedup();
    Ok(files)
}
