//! Orchestration: sub-agents (`delegate`), each a task of its own with a fresh context, its
//! own caps and a scope; run in parallel when their scopes are disjoint, merged back one at a
//! time. The loop's side (which calls run, in what order, how results merge) is in
//! `task/delegation.rs`; this module starts a child and follows it.

pub mod batch;
pub mod compare;
pub mod scope;
pub use scope::Scope;

use crate::approvals::ApprovalGate;
use crate::{CoreError, Emitter, TaskSpec};
use bosun_protocol::{
    CheckFinished, EventMsg, Op, SubagentProgress, SubagentStarted, TaskId, TaskStatus,
};
use bosun_store::Store;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// A sub-agent at this depth gets no `delegate` tool (the user's task is depth 0).
pub const MAX_DEPTH: u32 = 2;

/// `[subagents]` in `config.toml`: a child's caps (small by default) and how many run at once.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SubagentSettings {
    /// Model requests per child (default 15).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_steps: Option<u32>,
    /// Tokens of every class per child (default 300,000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    /// US dollars per child (default 0.50; never more than what the parent has left).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cost_usd: Option<f64>,
    /// Seconds per child (default 600).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_wall_secs: Option<u64>,
    /// Children running at once (default 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<u32>,
}

/// A child's caps, resolved.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Caps {
    pub max_steps: u32,
    pub max_tokens: u64,
    pub max_cost_usd: f64,
    pub max_wall_secs: u64,
}

impl SubagentSettings {
    pub fn caps(&self) -> Caps {
        Caps {
            max_steps: self.max_steps.unwrap_or(15).max(1),
            max_tokens: self.max_tokens.unwrap_or(300_000).max(1),
            max_cost_usd: self.max_cost_usd.unwrap_or(0.50).max(0.0),
            max_wall_secs: self.max_wall_secs.unwrap_or(600).max(1),
        }
    }

    pub fn concurrency(&self) -> usize {
        self.concurrency.unwrap_or(3).clamp(1, 16) as usize
    }
}

/// What ties a child task to its parent: passed in [`TaskSpec::link`].
#[derive(Clone)]
pub struct ChildLink {
    pub parent: TaskId,
    /// 1 for a child of the user's task.
    pub depth: u32,
    pub role: String,
    pub scope: Scope,
    /// The parent's gate: an approval the child asks is answered through the parent.
    pub(crate) gate: Arc<ApprovalGate>,
    /// The parent's: stopping the parent stops the child at once.
    pub(crate) cancel: CancellationToken,
    pub max_tokens: u64,
    /// Paths the child's commands changed outside its scope, put back (filled by the child).
    pub(crate) reverted: Arc<Mutex<BTreeSet<String>>>,
}

impl ChildLink {
    pub(crate) fn new(
        parent: TaskId,
        depth: u32,
        role: String,
        scope: Scope,
        gate: Arc<ApprovalGate>,
        cancel: CancellationToken,
        max_tokens: u64,
    ) -> ChildLink {
        ChildLink {
            parent,
            depth,
            role,
            scope,
            gate,
            cancel,
            max_tokens,
            reverted: Default::default(),
        }
    }
}

/// What a child did, as its parent needs it.
#[derive(Debug, Clone)]
pub struct ChildResult {
    pub task_id: TaskId,
    pub status: TaskStatus,
    pub summary: String,
    /// The commit it started from and the one it ended at (None: it wrote no checkpoint).
    pub base_commit: String,
    pub final_commit: Option<String>,
    pub files: Vec<String>,
    pub checks: Vec<CheckFinished>,
    pub cost_usd: f64,
    pub tokens: u64,
    pub steps: u32,
    pub reverted: Vec<String>,
}

/// What the parent says about a child as it starts.
pub struct ChildStart {
    pub brief: String,
    pub call_id: Option<bosun_protocol::CallId>,
    pub plan_node: Option<String>,
    pub parallel: bool,
    pub caps: Caps,
}

type Started = std::pin::Pin<
    Box<dyn std::future::Future<Output = Result<crate::TaskHandle, CoreError>> + Send>,
>;

/// Starts the child task of `spec` (its `link` set), says so on the parent's timeline, and
/// follows it to its end: its approvals are shown on the parent's stream (and answered through
/// the parent's gate), its totals go out as `subagent_progress`, and past its wall time it is
/// stopped. `subagent_finished` is the caller's, once the child's work is merged.
pub async fn run_child(
    spec: TaskSpec,
    store: Arc<Store>,
    parent: Arc<Emitter>,
    start: ChildStart,
) -> Result<ChildResult, CoreError> {
    let link = spec
        .link
        .clone()
        .ok_or_else(|| CoreError::Internal("a child task without its link".into()))?;
    let (provider, model) = (spec.provider.name.clone(), spec.provider.model.clone());
    let base_commit = spec.base.clone().unwrap_or_default();
    let repo = spec.repo.clone();
    // Boxed: a task's loop starts children, whose loops may start children.
    let started: Started = Box::pin(crate::start_task(spec, store));
    let mut handle = started.await?;
    let child = handle.task_id.clone();
    parent.emit(EventMsg::SubagentStarted(SubagentStarted {
        child_task_id: child.clone(),
        brief: start.brief.clone(),
        scope: link.scope.globs().to_vec(),
        role: link.role.clone(),
        provider,
        model,
        call_id: start.call_id.clone(),
        plan_node: start.plan_node.clone(),
        parallel: start.parallel,
        depth: link.depth,
        max_steps: start.caps.max_steps,
        max_cost_usd: Some(start.caps.max_cost_usd),
        max_tokens: start.caps.max_tokens,
        max_wall_secs: start.caps.max_wall_secs,
    }))?;
    let mut progress = SubagentProgress {
        child_task_id: child.clone(),
        steps: 0,
        tokens: 0,
        cost_usd: 0.0,
        tool_calls: 0,
        files: Vec::new(),
        activity: "thinking".into(),
    };
    let mut files: BTreeSet<String> = BTreeSet::new();
    let mut final_commit: Option<String> = None;
    let mut finished: Option<bosun_protocol::TaskFinished> = None;
    let deadline = tokio::time::sleep(Duration::from_secs(start.caps.max_wall_secs));
    tokio::pin!(deadline);
    let mut timed_out = false;
    loop {
        let ev = tokio::select! {
            ev = handle.events.recv() => ev,
            () = &mut deadline, if !timed_out => {
                timed_out = true;
                let _ = handle.ops.send(Op::Interrupt);
                continue;
            }
        };
        let Some(ev) = ev else { break };
        let mut changed = true;
        match &ev.msg {
            EventMsg::Usage(u) => {
                progress.steps += 1;
                {
                    let t = u.tokens();
                    progress.tokens += t.prompt_tokens() + t.completion_tokens();
                }
                progress.cost_usd = u.total_cost_usd;
                progress.activity = "thinking".into();
            }
            EventMsg::ToolCallBegin(b) => {
                progress.tool_calls += 1;
                progress.activity = b.tool.clone();
            }
            EventMsg::ToolCallEnd(_) => progress.activity = "thinking".into(),
            EventMsg::CheckStarted(c) => progress.activity = format!("check {}", c.name),
            EventMsg::CheckpointCreated(c) => {
                files.extend(c.files.iter().cloned());
                progress.files = files.iter().cloned().collect();
                final_commit = Some(c.commit.clone());
            }
            // Asked in the child, answered by whoever follows the parent.
            EventMsg::ApprovalRequested(_) | EventMsg::ApprovalResolved(_) => {
                parent.emit(ev.msg.clone())?;
                changed = false;
            }
            EventMsg::TaskFinished(f) => {
                finished = Some(f.clone());
                changed = false;
            }
            _ => changed = false,
        }
        if changed {
            parent.emit(EventMsg::SubagentProgress(progress.clone()))?;
        }
    }
    let outcome = handle
        .join
        .await
        .map_err(|e| CoreError::Internal(format!("sub-agent {child} failed: {e}")))?;
    let (mut status, mut summary) = match outcome {
        Ok(o) => (o.status, o.summary),
        Err(e) => (TaskStatus::Failed, e.to_string()),
    };
    if timed_out && status == TaskStatus::Interrupted {
        status = TaskStatus::BudgetExceeded;
        summary = format!(
            "stopped at its wall-time cap of {} s",
            start.caps.max_wall_secs
        );
    }
    let files = match &final_commit {
        Some(end) if !base_commit.is_empty() => {
            let (root, a, b) = (repo, base_commit.clone(), end.clone());
            tokio::task::spawn_blocking(move || bosun_workspace::changed_between(&root, &a, &b))
                .await
                .map_err(|e| CoreError::Internal(format!("git thread failed: {e}")))??
        }
        _ => Vec::new(),
    };
    let reverted = link
        .reverted
        .lock()
        .map(|r| r.iter().cloned().collect())
        .unwrap_or_default();
    Ok(ChildResult {
        task_id: child,
        status,
        summary,
        base_commit,
        final_commit: if files.is_empty() { None } else { final_commit },
        files,
        checks: finished.map(|f| f.checks).unwrap_or_default(),
        cost_usd: progress.cost_usd,
        tokens: progress.tokens,
        steps: progress.steps,
        reverted,
    })
}
