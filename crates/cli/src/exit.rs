//! Exit codes of the `bosun` binary, one table (the README's):
//!
//! | code | meaning |
//! |---|---|
//! | 0 | completed (a task), or the command did what it was asked |
//! | 1 | failed: the task failed, or Bosun itself failed (journal, git, I/O, the model server) |
//! | 2 | usage error, a selector or name that matches nothing, or a refusal |
//! | 3 | budget_exceeded |
//! | 4 | max_steps |
//! | 5 | checks_failed (also `bosun checks` with a failing required check, and a refused merge) |
//! | 6 | answered: the task changed nothing |
//! | 130 | interrupted (Ctrl-C, SIGTERM, SIGHUP) |
//!
//! A task's status gives its code ([`crate::commands::run::exit_code`]); an error before or
//! outside a task gives 2 when the user can fix the command (it named nothing, or was refused)
//! and 1 when Bosun or its surroundings failed.

use bosun_core::CoreError;
use bosun_workspace::WorkspaceError;

pub const FAILED: u8 = 1;
pub const USAGE: u8 = 2;
pub const CHECKS_FAILED: u8 = 5;

/// The error is a write to a pipe whose reader has gone.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// The exit code for an error a command returned.
pub fn for_error(err: &anyhow::Error) -> u8 {
    for cause in err.chain() {
        if let Some(e) = cause.downcast_ref::<CoreError>() {
            return match e {
                CoreError::Review {
                    code: "checks_failed",
                    ..
                } => CHECKS_FAILED,
                CoreError::Workspace(w) => for_workspace(w),
                CoreError::Config(_)
                | CoreError::Review { .. }
                | CoreError::Refused { .. }
                | CoreError::Model(bosun_model::ModelError::Config(_)) => USAGE,
                CoreError::Store(s) => for_store(s),
                CoreError::Model(_) | CoreError::Tool(_) | CoreError::Internal(_) => FAILED,
            };
        }
        if let Some(w) = cause.downcast_ref::<WorkspaceError>() {
            return for_workspace(w);
        }
        if let Some(m) = cause.downcast_ref::<bosun_model::ModelError>() {
            return match m {
                bosun_model::ModelError::Config(_) => USAGE,
                _ => FAILED,
            };
        }
        if let Some(s) = cause.downcast_ref::<bosun_store::StoreError>() {
            return for_store(s);
        }
        if let Some(l) = cause.downcast_ref::<bosun_context::localise_bench::LocaliseError>() {
            // A task list that does not parse is what was typed; a download or an archive
            // that fails is the surroundings'.
            return match l {
                bosun_context::localise_bench::LocaliseError::Tasks { .. } => USAGE,
                _ => FAILED,
            };
        }
        if cause.downcast_ref::<std::io::Error>().is_some() {
            return FAILED;
        }
    }
    // Errors the CLI makes itself are about what was typed: an unknown task, mode or selector.
    USAGE
}

/// A task id that matches no task or several, or a task that is running elsewhere, is what the
/// user typed; anything else the journal says is Bosun's failure.
fn for_store(e: &bosun_store::StoreError) -> u8 {
    use bosun_store::StoreError;
    match e {
        StoreError::NotFound { .. }
        | StoreError::Ambiguous { .. }
        | StoreError::Running { .. }
        | StoreError::NoMemory { .. }
        | StoreError::NoBatch { .. }
        | StoreError::AmbiguousBatch { .. }
        | StoreError::BatchFinished { .. }
        | StoreError::BatchRunning { .. } => USAGE,
        _ => FAILED,
    }
}

fn for_workspace(e: &WorkspaceError) -> u8 {
    match e {
        WorkspaceError::Git { .. }
        | WorkspaceError::Io { .. }
        | WorkspaceError::WorktreeVanished { .. }
        | WorkspaceError::WorktreeBusy { .. } => FAILED,
        _ => USAGE,
    }
}
