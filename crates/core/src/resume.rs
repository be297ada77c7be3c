//! Continuing a task: a follow-up message to a finished or stopped task, or resuming one that
//! was interrupted (a crash, a quit) from its last checkpoint. The task keeps its worktree, its
//! journal and its conversation, rebuilt from the journal's events.

use crate::dispatch::tool_result_content;
use crate::policy_files::PolicyFiles;
use crate::redaction::Redaction;
use crate::task::{Launch, TaskHandle, load_prices};
use crate::{CoreError, Emitter};
use bosun_model::{ChatMessage, ProviderConfig, ToolCall};
use bosun_policy::Mode;
use bosun_protocol::{
    CheckpointCreated, Event, EventMsg, ResumeKind, TaskId, TaskResumed, TaskStatus,
    ToolCallStatus, UserMessage,
};
use bosun_store::{Store, process_start_time};
use bosun_workspace::{Checkpoint, TaskWorktree};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio::sync::mpsc;

/// How to continue a task.
pub struct ContinueSpec {
    pub home: PathBuf,
    pub task_id: TaskId,
    /// The follow-up; `None` resumes an interrupted task where it stopped.
    pub message: Option<String>,
    pub provider: ProviderConfig,
    /// Model requests allowed for this continuation; `None`: the limit the task was started with.
    pub max_steps: Option<u32>,
    /// `None`: the limit the task was started with (it covers the whole task's cost).
    pub max_cost_usd: Option<f64>,
    pub policy_file: Option<PathBuf>,
    /// `None`: the mode the task was started with.
    pub mode: Option<Mode>,
    pub sandbox: bool,
    pub env_remove: Vec<String>,
    /// `--max-nudges`; `None`: the configured value (see [`crate::nudge::max_nudges`]).
    pub max_nudges: Option<u32>,
    /// `--pin FILE`: more files kept in every request (the task's earlier pins stay).
    pub pins: Vec<String>,
    /// `--unpin FILE|call:ID`: pins taken back.
    pub unpins: Vec<String>,
}

/// Rebuilds the conversation the model saw from a task's journal. A tool call that began but
/// never ended (the process died) gets a result saying so, keeping the conversation well formed.
pub fn rebuild_conversation(events: &[Event]) -> Vec<ChatMessage> {
    struct Turn {
        text: String,
        calls: Vec<ToolCall>,
        results: Vec<(String, Option<ChatMessage>)>,
        reasoning: Vec<serde_json::Value>,
    }
    fn flush(turn: &mut Option<Turn>, messages: &mut Vec<ChatMessage>) {
        let Some(t) = turn.take() else { return };
        if t.text.is_empty() && t.calls.is_empty() {
            return;
        }
        messages.push(ChatMessage::Assistant {
            content: t.text,
            tool_calls: t.calls,
            reasoning: t.reasoning,
        });
        for (call_id, result) in t.results {
            messages.push(result.unwrap_or(ChatMessage::Tool {
                call_id,
                content: "not finished: the task stopped while this ran".into(),
                is_error: true,
            }));
        }
    }
    let mut messages = Vec::new();
    let mut turn: Option<Turn> = None;
    for ev in events {
        match &ev.msg {
            EventMsg::UserMessage(m) => {
                flush(&mut turn, &mut messages);
                messages.push(ChatMessage::User {
                    content: m.text.clone(),
                });
            }
            // What Bosun answered a reply that made no progress (a no-op edit's answer is its
            // tool result).
            EventMsg::Nudge(n) if n.reason != bosun_protocol::NudgeReason::NoOpEdit => {
                flush(&mut turn, &mut messages);
                messages.push(ChatMessage::User {
                    content: n.message.clone(),
                });
            }
            // A model response ends with its usage; what follows belongs to it.
            EventMsg::Usage(u) => {
                flush(&mut turn, &mut messages);
                turn = Some(Turn {
                    text: String::new(),
                    calls: Vec::new(),
                    results: Vec::new(),
                    // An item the journal's redaction touched would be refused: left out.
                    reasoning: u
                        .reasoning
                        .iter()
                        .filter(|item| !item.to_string().contains("[REDACTED:"))
                        .cloned()
                        .collect(),
                });
            }
            EventMsg::AssistantMessage(m) => {
                if let Some(t) = turn.as_mut() {
                    t.text = m.text.clone();
                }
            }
            EventMsg::ToolCallBegin(b) => {
                if let Some(t) = turn.as_mut() {
                    let arguments = match &b.args {
                        serde_json::Value::String(raw) => raw.clone(),
                        other => other.to_string(),
                    };
                    t.calls.push(ToolCall {
                        id: b.call_id.0.clone(),
                        name: b.tool.clone(),
                        arguments,
                    });
                    t.results.push((b.call_id.0.clone(), None));
                }
            }
            EventMsg::ToolCallEnd(e) => {
                // The first call with this id still waiting (a model can repeat an id; the
                // repeat is refused, and its end is its own).
                if let Some(t) = turn.as_mut()
                    && let Some(slot) = t
                        .results
                        .iter_mut()
                        .find(|(id, result)| *id == e.call_id.0 && result.is_none())
                {
                    slot.1 = Some(ChatMessage::Tool {
                        call_id: e.call_id.0.clone(),
                        content: tool_result_content(e.error.as_deref(), e.output.clone()),
                        is_error: e.status != ToolCallStatus::Success,
                    });
                }
            }
            _ => {}
        }
    }
    flush(&mut turn, &mut messages);
    messages
}

use crate::fork::all_events;

/// Continues a task that is not running: same worktree, same branch, the conversation so far.
pub async fn continue_task(spec: ContinueSpec, store: Arc<Store>) -> Result<TaskHandle, CoreError> {
    store.reconcile_interrupted()?;
    let row = store.task(&spec.task_id)?;
    CoreError::refuse_imported(&row, "continued or resumed")?;
    if row.status == TaskStatus::Running {
        return Err(CoreError::Config(format!(
            "task {} is still running (process {}); stop it first",
            row.id, row.owner_pid
        )));
    }
    let resume = spec.message.is_none();
    if resume {
        refuse_unless_resumable(&row)?;
    }
    let events = all_events(&store, &row.id)?;
    // What the task was started with carries over unless this continuation says otherwise.
    let started = events.iter().find_map(|e| match &e.msg {
        EventMsg::TaskStarted(t) => Some(t.clone()),
        _ => None,
    });
    let recorded_mode = started
        .as_ref()
        .and_then(|t| t.mode.as_deref())
        .and_then(|m| m.parse::<Mode>().ok());
    let mode = spec.mode.or(recorded_mode);
    let max_cost_usd = spec
        .max_cost_usd
        .or(started.as_ref().and_then(|t| t.max_cost_usd));
    // A fork's conversation began in the task it was forked from.
    let mut messages = rebuild_conversation(&crate::fork::conversation_events(&store, &row.id)?);
    let mut provider = spec.provider.clone();
    // The profile the task ran with, unless this continuation configures the keys anew.
    let recorded_profile = started
        .as_ref()
        .and_then(|t| t.profile.as_ref())
        .and_then(crate::profiles::from_info);
    match recorded_profile {
        Some(p)
            if provider.profile_keys.is_empty()
                && started.as_ref().is_some_and(|t| {
                    t.model == provider.model && t.base_url == provider.base_url
                }) =>
        {
            provider.profile = p;
        }
        _ => {
            crate::profiles::complete(&spec.home, &mut provider).await;
        }
    }
    let client = bosun_model::client(provider)?;
    let prices = load_prices(&spec.home)?;

    let (home, repo, id, path, base) = (
        spec.home.clone(),
        PathBuf::from(&row.repo),
        row.id.0.clone(),
        PathBuf::from(&row.worktree),
        row.base_commit.clone(),
    );
    let journaled = store.checkpoints(&row.id)?.last().map_or(0, |c| c.n);
    let reopened = tokio::task::spawn_blocking(move || {
        reopen(&home, &repo, &id, &path, &base, resume, journaled)
    })
    .await
    .map_err(|e| CoreError::Internal(format!("worktree thread failed: {e}")))??;
    let Reopened {
        worktree,
        restored_to,
        restored_files,
        unjournaled,
        changed_before,
    } = reopened;

    let policy_files = PolicyFiles::new(
        &spec.home,
        &worktree.repo_root,
        spec.policy_file.clone(),
        mode,
    );
    let policy = policy_files.load()?;
    let pins = crate::task::files_to_pin(&spec.pins, &worktree.worktree, &policy)?;
    let unpins = crate::task::pins_to_take_back(
        &spec.unpins,
        &store.events_of_kinds(&row.id, &["context_pinned"])?,
    )?;
    let pid = std::process::id();
    store.claim_task(&row.id, pid, process_start_time(pid))?;

    let redaction = Arc::new(Redaction::from_environment_passing(
        &crate::mcp::passed_names(&spec.home, &worktree.repo_root),
    ));
    let (tx, rx) = mpsc::unbounded_channel();
    let last_seq = store.last_seq(&row.id)?;
    let emitter = Arc::new(
        Emitter::new(row.id.clone(), Arc::clone(&store), last_seq, tx)
            .with_redaction(Arc::clone(&redaction)),
    );
    // Every checkpoint ref gets its event and row, in order: the ones a restore just wrote,
    // and any a killed process wrote before it could journal them.
    for cp in unjournaled {
        emitter.emit(EventMsg::CheckpointCreated(CheckpointCreated {
            checkpoint: cp.n,
            commit: cp.commit,
            files: cp.files,
            call_id: None,
        }))?;
    }
    emitter.emit(EventMsg::TaskResumed(TaskResumed {
        kind: if resume {
            ResumeKind::Resume
        } else {
            ResumeKind::FollowUp
        },
        restored_checkpoint: restored_to,
        restored_files: restored_files.clone(),
    }))?;
    let mut text = match &spec.message {
        Some(m) => m.clone(),
        None => {
            let mut t =
                "Bosun stopped while you were working on this task; it now continues.".to_string();
            let put_back = match restored_to {
                Some(0) => Some("the state the task started from (its base commit)".to_string()),
                Some(n) => Some(format!("checkpoint {n}")),
                None => None,
            };
            if let Some(state) = put_back {
                t.push_str(&format!(
                    " The worktree was put back to {state}, so anything the interrupted step changed after it is undone ({} file(s): {}).",
                    restored_files.len(),
                    restored_files.join(", ")
                ));
            }
            t.push_str(" Check the state of the work and carry on.");
            t
        }
    };
    redaction.text(&mut text);
    emitter.emit(EventMsg::UserMessage(UserMessage {
        text: text.clone(),
        origin: None,
    }))?;
    crate::task::emit_pins(&emitter, unpins, false)?;
    crate::task::emit_pins(&emitter, pins, true)?;
    messages.push(ChatMessage::User { content: text });
    let max_steps = match spec.max_steps {
        Some(n) => n,
        None => store.task_max_steps(&row.id)?,
    };

    // The task keeps the checks it planned at its start.
    let checks = crate::checks::task_plan(&spec.home, &store, &row)?;
    let max_nudges =
        crate::nudge::load_max_nudges(&spec.home, Path::new(&row.repo), spec.max_nudges)?;
    Launch {
        checks,
        home: spec.home,
        task_id: row.id,
        worktree,
        policy,
        policy_files,
        redaction,
        emitter,
        events: rx,
        client,
        prices,
        max_steps,
        max_cost_usd,
        spent_usd: row.cost_usd,
        sandbox: spec.sandbox,
        env_remove: spec.env_remove,
        changed_before,
        max_nudges,
        service_tier: spec.provider.service_tier,
        max_output_tokens: spec.provider.max_output_tokens,
        provider: spec.provider.clone(),
        api_key_env: started.as_ref().and_then(|t| t.api_key_env.clone()),
        link: None,
        resume_plan: if resume {
            interrupted_plan(&events)
        } else {
            None
        },
        plan_first: false,
        context: None,
    }
    .start(messages)
}

/// `bosun resume` continues a run that was cut short; a task that finished is given more work
/// with a follow-up instead, and is left exactly as it was.
fn refuse_unless_resumable(row: &bosun_store::TaskRow) -> Result<(), CoreError> {
    if matches!(row.status, TaskStatus::Interrupted | TaskStatus::Failed) {
        return Ok(());
    }
    Err(CoreError::Refused {
        code: "not_resumable",
        message: format!(
            "task {id} is {status}, not interrupted: resume continues a task that was stopped part way (a crash, a quit, Ctrl-C); to give it more work, use `bosun continue {id} --prompt TEXT`",
            id = row.id,
            status = row.status.as_str()
        ),
    })
}

/// The worktree of a continued task and, for a resume, what was put back.
struct Reopened {
    worktree: TaskWorktree,
    /// The state the worktree was put back to: checkpoint n, or 0 for the base (no checkpoint
    /// preceded the interrupted step); None when nothing was undone and there is no checkpoint.
    restored_to: Option<u32>,
    restored_files: Vec<String>,
    /// Checkpoints in the repository that the journal has no event for, oldest first.
    unjournaled: Vec<Checkpoint>,
    /// A resume: whether the interrupted run had changed files (a checkpoint preceded it).
    changed_before: bool,
}

/// Re-opens the worktree (re-materialised if it was recycled); for a resume, puts it back to the
/// last checkpoint (or the base, when there is none) when the interrupted step left changes
/// after it. `journaled`: the newest checkpoint the journal has.
fn reopen(
    home: &Path,
    repo: &Path,
    task_id: &str,
    path: &Path,
    base: &str,
    resume: bool,
    journaled: u32,
) -> Result<Reopened, CoreError> {
    let mut wt = TaskWorktree::open(home, repo, task_id, path, base)?;
    let (mut restored_to, mut restored_files, mut changed_before) = (None, Vec::new(), false);
    if resume {
        // 0: the base, when the interrupted step was the task's first change.
        let last = wt.latest_checkpoint();
        changed_before = last > 0;
        if !wt.restore_preview(last)?.is_empty() {
            restored_files = wt.restore_to(last)?.paths;
            restored_to = Some(last);
        } else if last > 0 {
            restored_to = Some(last);
        }
    }
    let unjournaled = wt.checkpoints_after(journaled)?;
    Ok(Reopened {
        worktree: wt,
        restored_to,
        restored_files,
        unjournaled,
        changed_before,
    })
}

/// The plan a task was running as a graph when its process died: the `update_plan{run: true}`
/// call that began and never ended, with the nodes as the last `plan_updated` left them.
fn interrupted_plan(events: &[Event]) -> Option<(String, Vec<bosun_protocol::PlanItem>)> {
    let mut open: Option<String> = None;
    let mut items: Option<Vec<bosun_protocol::PlanItem>> = None;
    for e in events {
        match &e.msg {
            EventMsg::ToolCallBegin(b)
                if b.tool == "update_plan" && bosun_tools::runs_plan(&b.args) =>
            {
                open = Some(b.call_id.0.clone());
                items = None;
            }
            EventMsg::ToolCallEnd(end) if open.as_deref() == Some(end.call_id.0.as_str()) => {
                open = None;
            }
            EventMsg::PlanUpdated(p) if open.is_some() => items = Some(p.items.clone()),
            _ => {}
        }
    }
    Some((open?, items?))
}
