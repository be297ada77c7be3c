//! Which step made a checkpoint: the tool call, its arguments, the assistant text before it and
//! who let it run. Fills in the provenance of hunks and the checkpoint timeline.

use crate::CoreError;
use bosun_protocol::{
    ApprovalDecision, EventMsg, Provenance, ReviewEvent, ReviewHunk, TaskId, TimelineCheckpoint,
};
use bosun_store::{CheckpointRow, Store};
use std::collections::HashMap;

/// The longest assistant text kept with a step.
const ASSISTANT_TEXT_MAX: usize = 600;

pub struct Steps {
    rows: Vec<CheckpointRow>,
    by_checkpoint: HashMap<u32, Provenance>,
}

struct Call {
    tool: String,
    summary: String,
    seq: u64,
    assistant_text: Option<String>,
    approval: Option<String>,
}

impl Steps {
    pub fn load(store: &Store, task: &TaskId) -> Result<Steps, CoreError> {
        let rows = store.checkpoints(task)?;
        let events = store.events_of_kinds(
            task,
            &[
                "assistant_message",
                "tool_call_begin",
                "approval_resolved",
                "review",
            ],
        )?;
        let mut calls: HashMap<String, Call> = HashMap::new();
        let mut last_text: Option<String> = None;
        let mut bosun_made: HashMap<u32, String> = HashMap::new();
        for ev in &events {
            match &ev.msg {
                EventMsg::AssistantMessage(m) if !m.text.trim().is_empty() => {
                    last_text = Some(cap(m.text.trim(), ASSISTANT_TEXT_MAX));
                }
                EventMsg::ToolCallBegin(b) => {
                    let args = crate::summarize_args(&b.args);
                    calls.insert(
                        b.call_id.0.clone(),
                        Call {
                            tool: b.tool.clone(),
                            summary: format!("{} {args}", b.tool).trim().to_string(),
                            seq: ev.seq,
                            assistant_text: last_text.clone(),
                            approval: None,
                        },
                    );
                }
                EventMsg::ApprovalResolved(r) => {
                    if let Some(call) = calls.get_mut(&r.call_id.0) {
                        call.approval = Some(format!("{}: {}", who(&r.by), decision(r.decision)));
                    }
                }
                EventMsg::Review(r) => {
                    if let Some((n, what)) = bosun_step(r) {
                        bosun_made.insert(n, what);
                    }
                }
                _ => {}
            }
        }
        let mut by_checkpoint = HashMap::new();
        for row in &rows {
            let call = row.call_id.as_ref().and_then(|id| calls.get(id));
            let p = match call {
                Some(c) => Provenance {
                    checkpoint: row.n,
                    call_id: row.call_id.clone().map(bosun_protocol::CallId),
                    tool: Some(c.tool.clone()),
                    summary: c.summary.clone(),
                    assistant_text: c.assistant_text.clone(),
                    approval: Some(
                        c.approval
                            .clone()
                            .unwrap_or_else(|| "policy: allowed without asking".into()),
                    ),
                    seq: Some(c.seq),
                },
                None => Provenance {
                    checkpoint: row.n,
                    call_id: None,
                    tool: None,
                    summary: bosun_made
                        .get(&row.n)
                        .cloned()
                        .unwrap_or_else(|| format!("checkpoint {} written by Bosun", row.n)),
                    assistant_text: None,
                    approval: None,
                    seq: Some(row.seq),
                },
            };
            by_checkpoint.insert(row.n, p);
        }
        Ok(Steps {
            rows,
            by_checkpoint,
        })
    }

    /// The step that wrote checkpoint `n`.
    pub fn step(&self, n: u32) -> Provenance {
        self.by_checkpoint.get(&n).cloned().unwrap_or(Provenance {
            checkpoint: n,
            call_id: None,
            tool: None,
            summary: format!("checkpoint {n}"),
            assistant_text: None,
            approval: None,
            seq: None,
        })
    }

    /// Replaces the bare checkpoint numbers of the hunks' provenance with the steps.
    pub fn enrich(&self, hunk: &mut ReviewHunk) {
        for p in &mut hunk.provenance {
            *p = self.step(p.checkpoint);
        }
    }

    pub fn timeline(&self) -> Vec<TimelineCheckpoint> {
        self.rows
            .iter()
            .map(|r| TimelineCheckpoint {
                n: r.n,
                commit: r.commit.clone(),
                files: r.files.clone(),
                provenance: self.step(r.n),
                created_at: r.created_at.clone(),
            })
            .collect()
    }

    /// The commit message of a per-step merge commit for checkpoint `n`.
    pub fn commit_message(&self, n: u32) -> String {
        let p = self.step(n);
        match &p.assistant_text {
            Some(text) => format!("{}\n\n{}", p.summary, text),
            None => p.summary,
        }
    }
}

fn bosun_step(r: &ReviewEvent) -> Option<(u32, String)> {
    let hunks = |k: usize| {
        if k == 1 {
            "1 hunk".to_string()
        } else {
            format!("{k} hunks")
        }
    };
    match r {
        ReviewEvent::Reject {
            path,
            hunks: h,
            checkpoint: Some(n),
        } => Some((*n, format!("you rejected {} of {path}", hunks(h.len())))),
        ReviewEvent::Unreject {
            path,
            hunks: h,
            checkpoint: Some(n),
            ..
        } => Some((*n, format!("you put back {} of {path}", hunks(h.len())))),
        ReviewEvent::Rebase {
            new_base,
            checkpoint: Some(n),
            ..
        } => Some((
            *n,
            format!("rebased onto {}", &new_base[..new_base.len().min(10)]),
        )),
        _ => None,
    }
}

fn who(by: &str) -> &str {
    match by {
        "user" | "" => "you",
        other => other,
    }
}

fn decision(d: ApprovalDecision) -> &'static str {
    match d {
        ApprovalDecision::ApproveOnce => "approved once",
        ApprovalDecision::ApproveTask => "approved for this task",
        ApprovalDecision::ApproveAlways => "approved always",
        ApprovalDecision::Deny => "denied",
    }
}

fn cap(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let cut: String = s.chars().take(max).collect();
    format!("{cut}…")
}
