use thiserror::Error;

/// A fault of Bosun itself (or of its setup) that stops a task. Errors of the model's making
/// (bad tool arguments, unknown tools, failing commands) never become a `CoreError`: they go back
/// to the model as tool results.
#[derive(Debug, Error)]
pub enum CoreError {
    // Transparent: the message is the source's own, printed once (not "x: x" in an error chain).
    #[error(transparent)]
    Workspace(#[from] bosun_workspace::WorkspaceError),
    /// Not a `source`: the message already carries it (an error chain would print it twice).
    #[error("the journal failed: {0}")]
    Store(bosun_store::StoreError),
    #[error(transparent)]
    Model(#[from] bosun_model::ModelError),
    #[error("tool failed inside Bosun: {0}")]
    Tool(String),
    #[error("configuration error: {0}")]
    Config(String),
    #[error("internal error: {0}")]
    Internal(String),
    /// A review operation refused (`code` says which kind for the UI).
    #[error("{message}")]
    Review { code: &'static str, message: String },
    /// An operation refused before it changed anything (e.g. resuming a finished task); the
    /// message says what to do instead.
    #[error("{message}")]
    Refused { code: &'static str, message: String },
}

impl CoreError {
    /// Refuses `what` (`continued`, `reviewed`, …) on a session imported from another agent
    /// (`bosun import`): it is read-only, Bosun has no worktree or conversation to go on with.
    pub fn refuse_imported(row: &bosun_store::TaskRow, what: &str) -> Result<(), CoreError> {
        match &row.source {
            Some(source) => Err(CoreError::Refused {
                code: "imported_task",
                message: format!(
                    "task {} is a {source} session read by `bosun import`: it is read-only and \
                     cannot be {what}; start a new task with `bosun run`",
                    row.id
                ),
            }),
            None => Ok(()),
        }
    }
}

impl From<bosun_store::StoreError> for CoreError {
    fn from(e: bosun_store::StoreError) -> Self {
        CoreError::Store(e)
    }
}

impl CoreError {
    /// A stable code for `error{code, message}` events.
    pub fn code(&self) -> &'static str {
        match self {
            CoreError::Workspace(e) => match e {
                bosun_workspace::WorkspaceError::MergeConflict { .. } => "merge_conflict",
                bosun_workspace::WorkspaceError::DirtyCheckout { .. } => "dirty_checkout",
                bosun_workspace::WorkspaceError::NothingToMerge => "nothing_to_merge",
                bosun_workspace::WorkspaceError::NoSuchHunk { .. }
                | bosun_workspace::WorkspaceError::NotChanged { .. } => "not_found",
                bosun_workspace::WorkspaceError::HunkDoesNotApply { .. } => "does_not_apply",
                bosun_workspace::WorkspaceError::InvalidBranch { .. } => "bad_request",
                _ => "worktree_error",
            },
            CoreError::Store(_) => "journal_error",
            CoreError::Model(e) => e.code(),
            CoreError::Tool(_) => "tool_fault",
            CoreError::Config(_) => "config_error",
            CoreError::Internal(_) => "internal_error",
            CoreError::Review { code, .. } | CoreError::Refused { code, .. } => code,
        }
    }
}
