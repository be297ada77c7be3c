//! The review state of a task: the fold of its `review` events (and the checkpoints between them).

use bosun_protocol::{Event, EventMsg, MergeOutcome, RejectedHunk, ReviewComment, ReviewEvent};
use std::collections::{BTreeMap, HashSet};

/// A rejection still in force.
#[derive(Debug, Clone, PartialEq)]
pub struct ActiveReject {
    /// The `seq` of the reject event.
    pub seq: u64,
    pub path: String,
    pub record: RejectedHunk,
    pub checkpoint: Option<u32>,
}

/// A comment and, once sent, the checkpoint that was latest then.
#[derive(Debug, Clone, PartialEq)]
pub struct CommentState {
    pub comment: ReviewComment,
    pub sent_checkpoint: Option<u32>,
}

/// What the review events of a task add up to.
#[derive(Debug, Clone, Default)]
pub struct Ledger {
    pub accepted: HashSet<String>,
    pub rejected: Vec<ActiveReject>,
    pub comments: BTreeMap<u64, CommentState>,
    /// Undoable actions (accept, reject, comment), oldest first, by seq.
    undo: Vec<(u64, ReviewEvent)>,
    pub merged: Option<MergeOutcome>,
    pub worktree_removed: bool,
    pub latest_checkpoint: Option<u32>,
    /// What the latest rebase moved the task onto, as given (none: no rebase, or one journaled
    /// before this was kept).
    pub rebased_onto: Option<String>,
}

impl Ledger {
    /// Folds `review` and `checkpoint_created` events, in seq order.
    pub fn from_events(events: &[Event]) -> Ledger {
        let mut l = Ledger::default();
        for ev in events {
            match &ev.msg {
                EventMsg::CheckpointCreated(c) => l.latest_checkpoint = Some(c.checkpoint),
                EventMsg::Review(r) => l.apply(ev.seq, &ev.ts, r),
                _ => {}
            }
        }
        l
    }

    fn apply(&mut self, seq: u64, ts: &str, r: &ReviewEvent) {
        match r {
            ReviewEvent::Accept { hunks, .. } => {
                self.accepted.extend(hunks.iter().cloned());
                self.undo.push((seq, r.clone()));
            }
            ReviewEvent::Reject {
                path,
                hunks,
                checkpoint,
            } => {
                for h in hunks {
                    self.accepted.remove(&h.hunk.id);
                    self.rejected.retain(|a| a.record.hunk.id != h.hunk.id);
                    self.rejected.push(ActiveReject {
                        seq,
                        path: path.clone(),
                        record: h.clone(),
                        checkpoint: *checkpoint,
                    });
                }
                self.undo.push((seq, r.clone()));
            }
            ReviewEvent::Reset { hunks, undoes, .. } => {
                for h in hunks {
                    self.accepted.remove(h);
                }
                self.drop_undo(*undoes);
            }
            ReviewEvent::Unreject { hunks, undoes, .. } => {
                self.rejected.retain(|a| !hunks.contains(&a.record.hunk.id));
                self.drop_undo(*undoes);
            }
            ReviewEvent::Comment { comment } => {
                let mut comment = comment.clone();
                comment.id = seq;
                self.comments.insert(
                    seq,
                    CommentState {
                        comment,
                        sent_checkpoint: None,
                    },
                );
                self.undo.push((seq, r.clone()));
            }
            ReviewEvent::Uncomment { id, undoes } => {
                self.comments.remove(id);
                self.undo.retain(|(s, _)| s != id);
                self.drop_undo(*undoes);
            }
            ReviewEvent::RequestChanges { comments } => {
                for id in comments {
                    if let Some(c) = self.comments.get_mut(id) {
                        c.comment.sent_at = Some(ts.to_string());
                        c.sent_checkpoint = self.latest_checkpoint;
                    }
                }
                // A sent comment is in the agent's hands: it can no longer be taken back.
                self.undo.retain(|(s, _)| !comments.contains(s));
            }
            ReviewEvent::Merge { outcome, .. } => {
                self.merged = Some(outcome.clone());
                self.undo.clear();
            }
            ReviewEvent::Rebase { onto, .. } => {
                self.rebased_onto = onto.clone();
                self.undo.clear();
            }
            ReviewEvent::RemoveWorktree { .. } => {
                self.worktree_removed = true;
                self.undo.clear();
            }
            ReviewEvent::RecreateWorktree { .. } => {
                self.worktree_removed = false;
                self.undo.clear();
            }
        }
    }

    fn drop_undo(&mut self, undoes: Option<u64>) {
        if let Some(s) = undoes {
            self.undo.retain(|(seq, _)| *seq != s);
        }
    }

    /// The action `undo` takes back: the latest one that still has an effect.
    pub fn undoable(&self) -> Option<Undo> {
        for (seq, ev) in self.undo.iter().rev() {
            match ev {
                ReviewEvent::Accept { path, hunks } => {
                    let still: Vec<String> = hunks
                        .iter()
                        .filter(|h| self.accepted.contains(*h))
                        .cloned()
                        .collect();
                    if !still.is_empty() {
                        return Some(Undo::Accept {
                            seq: *seq,
                            path: path.clone(),
                            hunks: still,
                        });
                    }
                }
                ReviewEvent::Reject { path, .. } => {
                    let still: Vec<ActiveReject> = self
                        .rejected
                        .iter()
                        .filter(|a| a.seq == *seq)
                        .cloned()
                        .collect();
                    if !still.is_empty() {
                        return Some(Undo::Reject {
                            seq: *seq,
                            path: path.clone(),
                            hunks: still,
                        });
                    }
                }
                ReviewEvent::Comment { comment } if self.comments.contains_key(seq) => {
                    return Some(Undo::Comment {
                        seq: *seq,
                        path: comment.path.clone(),
                    });
                }
                _ => {}
            }
        }
        None
    }

    /// Comments not sent to the agent yet.
    pub fn open_comments(&self) -> Vec<&ReviewComment> {
        self.comments
            .values()
            .filter(|c| c.comment.sent_at.is_none())
            .map(|c| &c.comment)
            .collect()
    }
}

/// What `undo` would take back.
#[derive(Debug, Clone, PartialEq)]
pub enum Undo {
    Accept {
        seq: u64,
        path: String,
        hunks: Vec<String>,
    },
    Reject {
        seq: u64,
        path: String,
        hunks: Vec<ActiveReject>,
    },
    Comment {
        seq: u64,
        path: String,
    },
}

impl Undo {
    pub fn describe(&self) -> String {
        let n = |k: usize| {
            if k == 1 {
                "1 hunk".to_string()
            } else {
                format!("{k} hunks")
            }
        };
        match self {
            Undo::Accept { path, hunks, .. } => format!("accept of {} in {path}", n(hunks.len())),
            Undo::Reject { path, hunks, .. } => format!("reject of {} in {path}", n(hunks.len())),
            Undo::Comment { path, .. } => format!("comment on {path}"),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use bosun_protocol::{HunkKind, HunkState, ReviewHunk, TaskId};

    fn ev(seq: u64, r: ReviewEvent) -> Event {
        Event {
            seq,
            task_id: TaskId::from("t"),
            ts: format!("2026-11-30T06:00:{seq:02}.000Z"),
            msg: EventMsg::Review(r),
        }
    }

    fn rejected(id: &str) -> RejectedHunk {
        RejectedHunk {
            hunk: ReviewHunk {
                number: 1,
                id: id.into(),
                kind: HunkKind::Text,
                state: HunkState::Rejected,
                old_start: 1,
                old_lines: 1,
                new_start: 1,
                new_lines: 1,
                header: "@@ -1 +1 @@".into(),
                added: 1,
                removed: 1,
                lines: vec![],
                provenance: vec![],
            },
            old_path: None,
            before_blob: None,
            before_mode: None,
        }
    }

    fn comment(path: &str) -> ReviewComment {
        ReviewComment {
            id: 0,
            path: path.into(),
            start_line: 1,
            end_line: 2,
            checkpoint: Some(1),
            quote: "x".into(),
            body: "why?".into(),
            created_at: String::new(),
            sent_at: None,
            resolved: false,
        }
    }

    #[test]
    fn undo_takes_back_the_latest_action_that_still_has_an_effect() {
        let events = vec![
            ev(
                1,
                ReviewEvent::Accept {
                    path: "a".into(),
                    hunks: vec!["h1".into(), "h2".into()],
                },
            ),
            ev(
                2,
                ReviewEvent::Reject {
                    path: "b".into(),
                    hunks: vec![rejected("h3")],
                    checkpoint: Some(2),
                },
            ),
            // h3 put back by hand (not an undo): the reject no longer has an effect.
            ev(
                3,
                ReviewEvent::Unreject {
                    path: "b".into(),
                    hunks: vec!["h3".into()],
                    checkpoint: Some(3),
                    undoes: None,
                },
            ),
            // h2 rejected after being accepted.
            ev(
                4,
                ReviewEvent::Reject {
                    path: "a".into(),
                    hunks: vec![rejected("h2")],
                    checkpoint: Some(4),
                },
            ),
        ];
        let l = Ledger::from_events(&events);
        assert_eq!(l.accepted, HashSet::from(["h1".to_string()]));
        assert_eq!(l.rejected.len(), 1);
        match l.undoable() {
            Some(Undo::Reject { seq: 4, hunks, .. }) => assert_eq!(hunks[0].record.hunk.id, "h2"),
            other => panic!("{other:?}"),
        }
        let mut events = events;
        events.push(ev(
            5,
            ReviewEvent::Unreject {
                path: "a".into(),
                hunks: vec!["h2".into()],
                checkpoint: Some(5),
                undoes: Some(4),
            },
        ));
        let l = Ledger::from_events(&events);
        // The accept of h1 (h2 is no longer accepted) is next.
        assert_eq!(
            l.undoable(),
            Some(Undo::Accept {
                seq: 1,
                path: "a".into(),
                hunks: vec!["h1".into()]
            })
        );
    }

    #[test]
    fn sent_comments_record_when_and_at_which_checkpoint_and_cannot_be_undone() {
        let mut cp = Event {
            seq: 1,
            task_id: TaskId::from("t"),
            ts: String::new(),
            msg: EventMsg::CheckpointCreated(bosun_protocol::CheckpointCreated {
                checkpoint: 3,
                commit: "c".into(),
                files: vec![],
                call_id: None,
            }),
        };
        cp.seq = 1;
        let events = vec![
            cp,
            ev(
                2,
                ReviewEvent::Comment {
                    comment: comment("a.rs"),
                },
            ),
            ev(
                3,
                ReviewEvent::Comment {
                    comment: comment("b.rs"),
                },
            ),
            ev(4, ReviewEvent::RequestChanges { comments: vec![2] }),
        ];
        let l = Ledger::from_events(&events);
        assert_eq!(l.comments[&2].sent_checkpoint, Some(3));
        assert!(l.comments[&2].comment.sent_at.is_some());
        assert_eq!(l.open_comments().len(), 1);
        assert_eq!(l.open_comments()[0].id, 3);
        assert_eq!(
            l.undoable(),
            Some(Undo::Comment {
                seq: 3,
                path: "b.rs".into()
            }),
            "the sent comment 2 cannot be undone, the open one can"
        );
    }
}
