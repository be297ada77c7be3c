//! Accept, reject, unmark and undo; comments and "request changes".

use super::Reviewer;
use super::ledger::{ActiveReject, Undo};
use super::select::{self, Pick, Selector};
use crate::{CoreError, Redaction};
use bosun_protocol::{EventMsg, HunkState, Review, ReviewComment, ReviewEvent};
use bosun_store::now_rfc3339;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Accept,
    /// Takes the hunks out of the worktree (a checkpoint records it).
    Reject,
    /// Accepted → unreviewed; rejected → put back into the worktree.
    Unmark,
}

impl std::str::FromStr for Verdict {
    type Err = CoreError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "accept" => Ok(Verdict::Accept),
            "reject" => Ok(Verdict::Reject),
            "unmark" => Ok(Verdict::Unmark),
            other => Err(CoreError::Review {
                code: "bad_request",
                message: format!("unknown verdict `{other}`: use accept, reject or unmark"),
            }),
        }
    }
}

/// A hunk as named by a user: its 1-based number in the file's list, or its id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HunkSel {
    Number(u32),
    Id(String),
}

/// The longest quote kept with a comment.
const QUOTE_MAX_LINES: usize = 40;

/// What a verdict did: the hunks whose state it changed, and the review after it.
#[derive(Debug, Clone, PartialEq)]
pub struct Applied {
    /// `(path, hunk number)` as the review listed them before the verdict.
    pub changed: Vec<(String, u32)>,
    pub review: Review,
}

impl Reviewer {
    /// Applies a verdict to the hunks `selector` picks from the review listing. Accepting a
    /// whole file (or `--all`, or every undecided hunk) leaves its rejected hunks rejected: a
    /// rejected hunk is accepted only when named, and is put back into the worktree first.
    pub fn verdict(&self, verdict: Verdict, selector: &Selector) -> Result<Applied, CoreError> {
        let row = self.ensure_stopped()?;
        let before = self.review(false)?;
        let selection = select::resolve(selector, &before, verdict)?;
        let (change, skipped): (Vec<&Pick>, Vec<&Pick>) = selection
            .picks
            .iter()
            .filter(|p| match verdict {
                Verdict::Accept => p.state != HunkState::Accepted,
                Verdict::Reject => p.state != HunkState::Rejected,
                Verdict::Unmark => p.state != HunkState::Unreviewed,
            })
            .partition(|p| {
                verdict != Verdict::Accept || selection.named || p.state != HunkState::Rejected
            });
        if change.is_empty() && !skipped.is_empty() {
            return Err(CoreError::Review {
                code: "rejected",
                message: format!(
                    "{} rejected, and a rejected hunk is accepted only when named by number (that puts it back into the worktree): `bosun accept {} {}",
                    match skipped.as_slice() {
                        [one] => format!("{} is", hunk_ref(one)),
                        many => format!("{} hunks are", many.len()),
                    },
                    before.task_id,
                    hunks_arg(&skipped)
                ),
            });
        }
        // (path, selected hunk ids with their current state), one entry per file.
        let mut picked: Vec<(String, Vec<(String, HunkState)>)> = Vec::new();
        for p in &change {
            match picked.iter_mut().find(|(path, _)| *path == p.path) {
                Some((_, hs)) => hs.push((p.id.clone(), p.state)),
                None => picked.push((p.path.clone(), vec![(p.id.clone(), p.state)])),
            }
        }
        let ledger = self.ledger()?;
        match verdict {
            Verdict::Accept => {
                self.put_back(&row, &ledger.rejected, &picked, None)?;
                let ids: Vec<String> = picked
                    .iter()
                    .flat_map(|(_, hs)| hs.iter().map(|(id, _)| id.clone()))
                    .collect();
                if !ids.is_empty() {
                    let path = match picked.as_slice() {
                        [(p, _)] => p.clone(),
                        _ => String::new(),
                    };
                    self.append(EventMsg::Review(ReviewEvent::Accept { path, hunks: ids }))?;
                }
            }
            Verdict::Reject => {
                let mut wt = None;
                for (path, hs) in &picked {
                    let ids: Vec<String> = hs.iter().map(|(id, _)| id.clone()).collect();
                    let wt = match &mut wt {
                        Some(w) => w,
                        None => wt.insert(self.worktree(&row)?),
                    };
                    let message = format!("Rejected {} of {path} in review", plural(ids.len()));
                    let rejection = wt.reject_hunks(path, &ids, &message)?;
                    let checkpoint = self.journal_checkpoints(wt)?;
                    self.append(EventMsg::Review(ReviewEvent::Reject {
                        path: path.clone(),
                        hunks: rejection.hunks,
                        checkpoint,
                    }))?;
                }
                if let Some(wt) = wt {
                    wt.release()?;
                }
            }
            Verdict::Unmark => {
                self.put_back(&row, &ledger.rejected, &picked, None)?;
                for (path, hs) in &picked {
                    let ids: Vec<String> = hs
                        .iter()
                        .filter(|(_, s)| *s == HunkState::Accepted)
                        .map(|(id, _)| id.clone())
                        .collect();
                    if !ids.is_empty() {
                        self.append(EventMsg::Review(ReviewEvent::Reset {
                            path: path.clone(),
                            hunks: ids,
                            undoes: None,
                        }))?;
                    }
                }
            }
        }
        let review = self.review(false)?;
        if verdict == Verdict::Reject && crate::memory::all_rejected(&review) {
            let end = crate::memory::ReviewEnd::Rejected;
            crate::memory::learn_from_review(self, &self.home, &self.store, end);
        }
        // Every hunk decided: the review is done (the journal only knows a verdict was given).
        if review.counts.hunks > 0
            && review.counts.unreviewed == 0
            && !matches!(row.review_state.as_str(), "merged" | "discarded")
        {
            self.store.set_review_state(&row.id, "reviewed")?;
        }
        Ok(Applied {
            changed: change.iter().map(|p| (p.path.clone(), p.number)).collect(),
            review,
        })
    }

    /// Puts back the picked hunks that are rejected, grouped by the reject that took them out.
    fn put_back(
        &self,
        row: &bosun_store::TaskRow,
        rejected: &[ActiveReject],
        picked: &[(String, Vec<(String, HunkState)>)],
        undoes: Option<u64>,
    ) -> Result<(), CoreError> {
        let wanted: Vec<&ActiveReject> = rejected
            .iter()
            .filter(|r| {
                picked.iter().any(|(_, hs)| {
                    hs.iter()
                        .any(|(id, s)| *s == HunkState::Rejected && *id == r.record.hunk.id)
                })
            })
            .collect();
        self.unreject(row, &wanted, undoes)
    }

    fn unreject(
        &self,
        row: &bosun_store::TaskRow,
        records: &[&ActiveReject],
        undoes: Option<u64>,
    ) -> Result<(), CoreError> {
        if records.is_empty() {
            return Ok(());
        }
        let mut groups: BTreeMap<(u64, String), Vec<&ActiveReject>> = BTreeMap::new();
        for r in records {
            groups.entry((r.seq, r.path.clone())).or_default().push(r);
        }
        let history = self.history()?;
        let mut wt = self.worktree(row)?;
        // Newest rejection first, so each is put back onto the state it was taken from.
        for ((_, path), group) in groups.into_iter().rev() {
            // A hunk the agent has since made again is in the worktree already: only its
            // rejection is taken back.
            let present: Vec<String> = match history.review_file(&path) {
                Ok(d) => d.file.hunks.into_iter().map(|h| h.id).collect(),
                Err(_) => Vec::new(),
            };
            let (again, back): (Vec<&ActiveReject>, Vec<&ActiveReject>) = group
                .into_iter()
                .partition(|r| present.contains(&r.record.hunk.id));
            let mut checkpoint = None;
            if let Some(first) = back.first() {
                let hunks: Vec<_> = back.iter().map(|r| r.record.clone()).collect();
                let message = format!("Put back {} of {path} in review", plural(hunks.len()));
                wt.unreject_hunks(&path, &hunks, first.checkpoint, &message)?;
                checkpoint = self.journal_checkpoints(&wt)?;
            }
            self.append(EventMsg::Review(ReviewEvent::Unreject {
                path: path.clone(),
                hunks: back
                    .iter()
                    .chain(again.iter())
                    .map(|r| r.record.hunk.id.clone())
                    .collect(),
                checkpoint,
                undoes,
            }))?;
        }
        wt.release()?;
        Ok(())
    }

    /// Takes back the last verdict or comment still in effect.
    pub fn undo(&self) -> Result<Review, CoreError> {
        let row = self.ensure_stopped()?;
        let ledger = self.ledger()?;
        let Some(undo) = ledger.undoable() else {
            return Err(CoreError::Review {
                code: "nothing_to_undo",
                message: "nothing to undo: no verdict or unsent comment is left to take back"
                    .into(),
            });
        };
        match undo {
            Undo::Accept { seq, path, hunks } => {
                self.append(EventMsg::Review(ReviewEvent::Reset {
                    path,
                    hunks,
                    undoes: Some(seq),
                }))?;
            }
            Undo::Reject { seq, hunks, .. } => {
                let refs: Vec<&ActiveReject> = hunks.iter().collect();
                self.unreject(&row, &refs, Some(seq))?;
            }
            Undo::Comment { seq, .. } => {
                self.append(EventMsg::Review(ReviewEvent::Uncomment {
                    id: seq,
                    undoes: Some(seq),
                }))?;
            }
        }
        self.review(false)
    }

    /// Comments on lines `start..=end` (1-based) of the latest version of `path`.
    pub fn comment(
        &self,
        path: &str,
        start: u32,
        end: u32,
        body: &str,
    ) -> Result<ReviewComment, CoreError> {
        let bad = |message: String| CoreError::Review {
            code: "bad_request",
            message,
        };
        let mut body = body.trim().to_string();
        if body.is_empty() {
            return Err(bad("the comment is empty: say what should change".into()));
        }
        if start == 0 || end < start {
            return Err(bad(format!(
                "lines {start}-{end} are not a range: give 1-based lines, the first not after the last"
            )));
        }
        let diff = self.history()?.review_file(path)?;
        let mut quote = String::new();
        if let Some(text) = &diff.new_text {
            let lines: Vec<&str> = text.lines().collect();
            let last = u32::try_from(lines.len()).unwrap_or(u32::MAX);
            if end > last {
                return Err(bad(format!(
                    "{path} has {last} lines in the task's latest version; line {end} is beyond it"
                )));
            }
            let from = usize::try_from(start - 1).unwrap_or(0);
            let to = usize::try_from(end).unwrap_or(lines.len());
            let picked = &lines[from..to];
            quote = picked
                .iter()
                .take(QUOTE_MAX_LINES)
                .copied()
                .collect::<Vec<_>>()
                .join("\n");
            if picked.len() > QUOTE_MAX_LINES {
                quote.push_str("\n…");
            }
        }
        let redaction = Redaction::from_environment();
        redaction.text(&mut body);
        redaction.text(&mut quote);
        let comment = ReviewComment {
            id: 0,
            path: diff.file.path.clone(),
            start_line: start,
            end_line: end,
            checkpoint: self.ledger()?.latest_checkpoint,
            quote,
            body,
            created_at: now_rfc3339(),
            sent_at: None,
            resolved: false,
        };
        let seq = self.append(EventMsg::Review(ReviewEvent::Comment {
            comment: comment.clone(),
        }))?;
        Ok(ReviewComment { id: seq, ..comment })
    }

    pub fn uncomment(&self, id: u64) -> Result<(), CoreError> {
        let ledger = self.ledger()?;
        match ledger.comments.get(&id) {
            None => Err(CoreError::Review {
                code: "not_found",
                message: format!("task {} has no comment {id}", self.task_id()),
            }),
            Some(c) if c.comment.sent_at.is_some() => Err(CoreError::Review {
                code: "bad_request",
                message: format!("comment {id} was already sent to the agent"),
            }),
            Some(_) => {
                self.append(EventMsg::Review(ReviewEvent::Uncomment {
                    id,
                    undoes: None,
                }))?;
                Ok(())
            }
        }
    }

    /// The open comments as one message for the agent, and their ids; an error when there are
    /// none. Call [`Reviewer::mark_sent`] once the message is on its way.
    pub fn changes_message(&self) -> Result<(String, Vec<u64>), CoreError> {
        self.ensure_stopped()?;
        let ledger = self.ledger()?;
        let open = ledger.open_comments();
        if open.is_empty() {
            return Err(CoreError::Review {
                code: "no_comments",
                message: "no open comments to send: comment on lines first".into(),
            });
        }
        let mut text = format!(
            "The user reviewed your changes and requests changes. Address each of these {} comment{} (file, lines in the current version, the code they refer to, the comment), then summarise what you changed.\n",
            open.len(),
            if open.len() == 1 { "" } else { "s" }
        );
        for (i, c) in open.iter().enumerate() {
            let lines = if c.start_line == c.end_line {
                format!("line {}", c.start_line)
            } else {
                format!("lines {}-{}", c.start_line, c.end_line)
            };
            text.push_str(&format!("\n{}. {} {lines}\n", i + 1, c.path));
            if !c.quote.is_empty() {
                text.push_str(&format!("```\n{}\n```\n", c.quote));
            }
            text.push_str(&format!("Comment: {}\n", c.body));
        }
        Ok((text, open.iter().map(|c| c.id).collect()))
    }

    pub fn mark_sent(&self, ids: Vec<u64>) -> Result<(), CoreError> {
        self.append(EventMsg::Review(ReviewEvent::RequestChanges {
            comments: ids,
        }))?;
        Ok(())
    }

    /// Opens sent comments again (as new comments) when the message never reached the agent.
    pub fn reopen(&self, ids: &[u64]) -> Result<(), CoreError> {
        let ledger = self.ledger()?;
        for id in ids {
            if let Some(c) = ledger.comments.get(id) {
                let comment = ReviewComment {
                    sent_at: None,
                    ..c.comment.clone()
                };
                self.append(EventMsg::Review(ReviewEvent::Comment { comment }))?;
                self.append(EventMsg::Review(ReviewEvent::Uncomment {
                    id: *id,
                    undoes: None,
                }))?;
            }
        }
        Ok(())
    }
}

/// `PATH:N`.
fn hunk_ref(p: &Pick) -> String {
    format!("{}:{}", p.path, p.number)
}

/// The picks as selectors, `PATH:N[,N…]` per file, for up to five files (then the closing
/// backquote of the command they end, and how many files more).
fn hunks_arg(picks: &[&Pick]) -> String {
    const SHOWN: usize = 5;
    let mut files: Vec<(&str, Vec<String>)> = Vec::new();
    for p in picks {
        match files.iter_mut().find(|(path, _)| *path == p.path) {
            Some((_, ns)) => ns.push(p.number.to_string()),
            None => files.push((&p.path, vec![p.number.to_string()])),
        }
    }
    let mut out = files
        .iter()
        .take(SHOWN)
        .map(|(path, ns)| format!("{path}:{}", ns.join(",")))
        .collect::<Vec<_>>()
        .join(" ");
    out.push('`');
    if files.len() > SHOWN {
        out.push_str(&format!(
            ", and so on for {} more files",
            files.len() - SHOWN
        ));
    }
    out
}

fn plural(n: usize) -> String {
    if n == 1 {
        "1 hunk".into()
    } else {
        format!("{n} hunks")
    }
}
