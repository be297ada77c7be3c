//! `delegate{brief, scope, checks?, role?, share_transcript?}`: a subtask for a sub-agent with a
//! fresh context. The task loop runs it (crate `bosun-core`, `orchestrate`); this is its schema
//! and the validation of its arguments.

use crate::{ToolContext, ToolError, ToolHandler, ToolOutput, parse_args, spec};
use bosun_protocol::{ToolAction, ToolSpec};
use serde::Deserialize;
use serde_json::json;

pub struct Delegate;

/// A `delegate` call's arguments.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DelegateArgs {
    /// What the sub-agent is to do, in full: it sees nothing else of the conversation.
    pub brief: String,
    /// Globs of the files it may change (relative to the worktree), e.g. `src/parser/**`.
    pub scope: Vec<String>,
    /// Names of the task's checks that judge it.
    #[serde(default)]
    pub checks: Vec<String>,
    /// `worker` (default), `planner`, `escalation` or `main`.
    #[serde(default)]
    pub role: Option<String>,
    /// Give the sub-agent this conversation too (default false: a fresh context).
    #[serde(default)]
    pub share_transcript: bool,
}

impl DelegateArgs {
    /// The arguments of a call, checked: a brief, at least one scope glob, each relative and
    /// inside the worktree.
    pub fn parse(args: &serde_json::Value) -> Result<DelegateArgs, ToolError> {
        let mut a: DelegateArgs = parse_args("delegate", args)?;
        a.brief = a.brief.trim().to_string();
        if a.brief.is_empty() {
            return Err(ToolError::Model(
                "delegate needs a brief: say in full what the sub-agent is to do (it sees nothing else of this conversation)".into(),
            ));
        }
        a.scope = a
            .scope
            .iter()
            .map(|g| g.trim().trim_start_matches("./").to_string())
            .filter(|g| !g.is_empty())
            .collect();
        if a.scope.is_empty() {
            return Err(ToolError::Model(
                "delegate needs a scope: the globs of the files the sub-agent may change, e.g. [\"src/parser/**\", \"tests/test_parser.py\"] (\"**\" for every file)".into(),
            ));
        }
        for glob in &a.scope {
            if glob.starts_with('/') || glob.split('/').any(|part| part == "..") {
                return Err(ToolError::Model(format!(
                    "scope {glob:?} is outside the worktree: use globs relative to it, without `..`"
                )));
            }
            if globset::Glob::new(glob).is_err() {
                return Err(ToolError::Model(format!(
                    "scope {glob:?} is not a valid glob"
                )));
            }
        }
        Ok(a)
    }
}

#[async_trait::async_trait]
impl ToolHandler for Delegate {
    fn spec(&self) -> ToolSpec {
        spec(
            "delegate",
            "Hand a self-contained subtask to a sub-agent with a fresh context. It sees only \
             the brief, the project's instructions and the repository map, may change only the \
             files its scope matches, and returns a summary, the files it changed and its \
             checks. Calls in one reply whose scopes do not overlap run in parallel.",
            json!({
                "brief": {"type": "string", "description": "The subtask in full: what to change, where, and how to know it is done."},
                "scope": {"type": "array", "items": {"type": "string"}, "description": "Globs of the files the sub-agent may change, e.g. [\"src/parser/**\"]."},
                "checks": {"type": "array", "items": {"type": "string"}, "description": "Names of the task's checks that judge the subtask."},
                "role": {"type": "string", "enum": ["worker", "planner", "escalation", "main"], "description": "Whose model runs it (default worker)."},
                "share_transcript": {"type": "boolean", "description": "Give it this conversation too (default false)."},
            }),
            &["brief", "scope"],
        )
    }

    fn action(&self, args: &serde_json::Value) -> Result<ToolAction, ToolError> {
        DelegateArgs::parse(args)?;
        Ok(ToolAction::Internal)
    }

    async fn handle(
        &self,
        _args: serde_json::Value,
        _ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        // The task loop runs sub-agents itself; a registry without a loop cannot.
        Err(ToolError::Model(
            "delegate runs only inside a task's loop".into(),
        ))
    }
}
