//! The tools the model calls: one [`ToolHandler`] trait, a [`ToolRegistry`], and the built-in
//! tools (`read_file`, `list_dir`, `search`, `write_file`, `edit_file`, `apply_patch`,
//! `run_command`, `update_plan`, `symbols`).
//!
//! A tool describes what it would do ([`ToolHandler::action`]) so the policy engine can decide;
//! it never decides policy itself and never talks to the UI. Its result is exactly what the model
//! is told. Errors come in two kinds: [`ToolError::Model`] goes back to the model as the tool
//! result and the loop continues; [`ToolError::Fatal`] means Bosun itself failed and the task
//! aborts. Every path is relative to the task's worktree and confined to it
//! ([`resolve_in_worktree`]).

mod apply_patch;
mod begin_patch;
mod delegate;
mod edit_file;
mod edit_match;
mod list_dir;
mod patch;
mod path;
mod read_file;
mod registry;
mod run_command;
mod search;
mod symbols;
mod text;
mod update_plan;
mod write_file;

pub use apply_patch::ApplyPatch;
pub use delegate::{Delegate, DelegateArgs};
pub use edit_file::EditFile;
pub use list_dir::ListDir;
pub use path::normalize_rel;
pub use path::resolve_in_worktree;
pub use path::resolve_symlinks_in;
pub use read_file::{ReadFile, files_named};
pub use registry::ToolRegistry;
pub use run_command::RunCommand;
pub use search::Search;
pub use symbols::Symbols;
pub use update_plan::{UpdatePlan, runs_plan};
pub use write_file::WriteFile;

use bosun_protocol::{CallId, OutputStream, PlanItem, ToolAction, ToolCallStatus, ToolSpec};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// What a tool call changed in the worktree, so a checkpoint costs O(changed files).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Touched {
    Nothing,
    /// Worktree-relative paths created, modified or deleted.
    Paths(Vec<String>),
    /// A command ran: anything may have changed.
    Unknown,
}

/// Everything a tool may use while it runs.
#[derive(Clone)]
pub struct ToolContext {
    /// The task's worktree; every path a tool is given is relative to it.
    pub worktree: PathBuf,
    pub call_id: CallId,
    pub cancel: CancellationToken,
    /// Streamed command output (lossy UTF-8, never split inside a character).
    pub output: Arc<dyn Fn(OutputStream, String) + Send + Sync>,
    /// `run_command`'s timeout when the model gives none (120 s).
    pub default_timeout: Duration,
    /// The longest timeout the model may ask for (600 s).
    pub max_timeout: Duration,
    /// Variables set for commands.
    pub env: Vec<(String, String)>,
    /// Variables removed from commands' inherited environment.
    pub env_remove: Vec<String>,
    /// When set, commands run inside this sandbox, through the trampoline `sandbox_exe`.
    pub sandbox: Option<bosun_exec::SandboxPolicy>,
    /// A binary that calls `bosun_exec::dispatch_sandbox()` first (the `bosun` binary itself).
    pub sandbox_exe: PathBuf,
    /// The task's repository map (`symbols` asks it); without one, `symbols` builds one.
    pub map: Option<Arc<bosun_context::LiveMap>>,
    /// Whether the policy lets a worktree-relative path be read: a tool that walks the tree
    /// (`search`) skips the files it says no to. None: every file.
    pub readable: Option<Readable>,
}

/// See [`ToolContext::readable`].
pub type Readable = Arc<dyn Fn(&str) -> bool + Send + Sync>;

impl ToolContext {
    /// A context with the default timeouts (120 s, at most 600 s), no output sink and no
    /// environment changes.
    pub fn new(worktree: impl Into<PathBuf>, call_id: CallId) -> Self {
        ToolContext {
            worktree: worktree.into(),
            call_id,
            cancel: CancellationToken::new(),
            output: Arc::new(|_, _| {}),
            default_timeout: Duration::from_secs(120),
            max_timeout: Duration::from_secs(600),
            env: Vec::new(),
            env_remove: Vec::new(),
            sandbox: None,
            sandbox_exe: PathBuf::new(),
            map: None,
            readable: None,
        }
    }
}

/// A tool's result.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// Exactly what the model is told.
    pub content: String,
    pub status: ToolCallStatus,
    pub exit_code: Option<i32>,
    pub touched: Touched,
    /// The new plan, from `update_plan`.
    pub plan: Option<Vec<PlanItem>>,
}

impl ToolOutput {
    /// A successful result that changed nothing.
    pub fn text(content: impl Into<String>) -> Self {
        ToolOutput {
            content: content.into(),
            status: ToolCallStatus::Success,
            exit_code: None,
            touched: Touched::Nothing,
            plan: None,
        }
    }

    /// A successful result that changed these worktree-relative paths.
    pub fn wrote(content: impl Into<String>, paths: Vec<String>) -> Self {
        ToolOutput {
            touched: Touched::Paths(paths),
            ..ToolOutput::text(content)
        }
    }
}

/// How a tool call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    /// Goes back to the model as the tool result; the loop continues.
    #[error("{0}")]
    Model(String),
    /// Bosun itself failed: the task aborts.
    #[error("{0}")]
    Fatal(String),
}

/// One tool the model can call.
#[async_trait::async_trait]
pub trait ToolHandler: Send + Sync {
    /// The name, description and argument schema offered to the model.
    fn spec(&self) -> ToolSpec;
    /// Parses the arguments (a [`ToolError::Model`] when malformed) and describes what the call
    /// would do, for the policy engine and approval cards.
    fn action(&self, args: &serde_json::Value) -> Result<ToolAction, ToolError>;
    /// Runs the call.
    async fn handle(
        &self,
        args: serde_json::Value,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError>;
}

/// Parses a tool's arguments, telling the model what was wrong.
pub(crate) fn parse_args<T: serde::de::DeserializeOwned>(
    tool: &str,
    args: &serde_json::Value,
) -> Result<T, ToolError> {
    // Some models send `null` (or nothing) for a tool whose arguments are all optional.
    let empty = serde_json::Value::Object(serde_json::Map::new());
    let args = if args.is_null() { &empty } else { args };
    T::deserialize(args).map_err(|e| {
        ToolError::Model(format!(
            "invalid arguments for {tool}: {e}; see the tool's schema"
        ))
    })
}

/// Runs blocking file-system work off the async threads.
pub(crate) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ToolError::Fatal(format!("a tool's worker thread failed: {e}")))?
}

/// A file tool's call: its arguments parsed, then `run` on a blocking thread in the worktree.
pub(crate) async fn on_worktree<A: serde::de::DeserializeOwned + Send + 'static>(
    tool: &str,
    args: &serde_json::Value,
    ctx: &ToolContext,
    run: fn(&std::path::Path, &A) -> Result<ToolOutput, ToolError>,
) -> Result<ToolOutput, ToolError> {
    let args: A = parse_args(tool, args)?;
    let worktree = ctx.worktree.clone();
    blocking(move || run(&worktree, &args)).await
}

/// Builds a tool spec whose parameters are a closed JSON Schema object.
pub(crate) fn spec(
    name: &str,
    description: &str,
    properties: serde_json::Value,
    required: &[&str],
) -> ToolSpec {
    ToolSpec {
        name: name.to_string(),
        description: description.to_string(),
        parameters: serde_json::json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false,
        }),
    }
}
