//! `bosun review|accept|reject|unmark|undo|comment|merge|rebase|discard`: reviewing a task's
//! changes from the terminal, the same operations as the app's review screen (`bosun export
//! --patch` is in [`super::export`]).

use anyhow::bail;
use bosun_core::review::{Reviewer, Selector, Verdict};
use bosun_protocol::{
    DiffLine, FileReviewState, FileStatus, HunkState, LineKind, MergeMode, MergeRequest, Review,
};
use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

fn reviewer(task: &str) -> anyhow::Result<Reviewer> {
    let store = Arc::new(super::open_store()?);
    Ok(Reviewer::open_changes(&crate::home(), store, task)?)
}

pub fn review(task: &str, json: bool, lines: bool) -> anyhow::Result<ExitCode> {
    let r = reviewer(task)?;
    let review = r.review(json || lines)?;
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer_pretty(&mut out, &review)?;
        writeln!(out)?;
    } else {
        print_review(&mut out, &review, lines)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn print_review(out: &mut impl Write, r: &Review, lines: bool) -> anyhow::Result<()> {
    let c = &r.counts;
    writeln!(
        out,
        "task {} · base {}{} · {} file{}, {} hunk{}: {} accepted, {} rejected, {} unreviewed",
        r.task_id,
        r.base_ref
            .as_deref()
            .map(|b| format!("{b} "))
            .unwrap_or_default(),
        &r.base_commit[..r.base_commit.len().min(10)],
        c.files,
        if c.files == 1 { "" } else { "s" },
        c.hunks,
        if c.hunks == 1 { "" } else { "s" },
        c.accepted,
        c.rejected,
        c.unreviewed
    )?;
    if let Some(line) = base_moved_line(r) {
        writeln!(out, "{line}")?;
    }
    if r.running {
        writeln!(out, "(the task is running: verdicts wait until it stops)")?;
    }
    for f in &r.files {
        let name = match &f.old_path {
            Some(old) => format!("{old} → {}", f.path),
            None => f.path.clone(),
        };
        writeln!(
            out,
            "\n{} {name}  +{} -{}  {}{}",
            status_letter(f.status),
            f.added,
            f.removed,
            file_state(f.state),
            if f.binary { "  (binary)" } else { "" }
        )?;
        for h in &f.hunks {
            let step = h
                .provenance
                .iter()
                .map(|p| format!("#{} {}", p.checkpoint, p.summary))
                .collect::<Vec<_>>()
                .join("; ");
            writeln!(
                out,
                "  {:>3} {} {}  {}",
                h.number,
                hunk_mark(h.state),
                h.header,
                if step.is_empty() {
                    String::new()
                } else {
                    format!("({step})")
                }
            )?;
            if lines {
                for l in &h.lines {
                    print_line(out, l)?;
                }
            }
        }
    }
    if !r.comments.is_empty() {
        writeln!(out, "\ncomments:")?;
        for cm in &r.comments {
            let state = if cm.resolved {
                "resolved"
            } else if cm.sent_at.is_some() {
                "sent"
            } else {
                "open"
            };
            writeln!(
                out,
                "  [{}] {}:{}-{} ({state}): {}",
                cm.id, cm.path, cm.start_line, cm.end_line, cm.body
            )?;
        }
    }
    if let Some(m) = &r.merged {
        writeln!(
            out,
            "\nmerged into {} ({} commits)",
            m.branch,
            m.commits.len()
        )?;
    }
    if let Some(u) = &r.undo {
        writeln!(out, "\n`bosun undo {}` takes back the {u}", r.task_id)?;
    }
    Ok(())
}

/// `main moved 3 commits since this task started: bosun rebase TASK`, when it did.
fn base_moved_line(r: &Review) -> Option<String> {
    let m = r.base_moved.as_ref()?;
    let rebase = if r.base_ref.as_deref() == Some(m.branch.as_str()) {
        format!("bosun rebase {}", r.task_id)
    } else {
        format!("bosun rebase {} --onto {}", r.task_id, m.branch)
    };
    let commits = |n: u32| format!("{n} commit{}", if n == 1 { "" } else { "s" });
    let what = match (m.rewritten, m.ahead) {
        (false, n) => format!("{} moved {} since this task started", m.branch, commits(n)),
        (true, 0) => format!(
            "{} was rewritten since this task started (the task's base is no longer on it)",
            m.branch
        ),
        (true, n) => format!(
            "{} was rewritten since this task started ({} new, the task's base no longer on it)",
            m.branch,
            commits(n)
        ),
    };
    Some(format!("{what}: {rebase}"))
}

fn print_line(out: &mut impl Write, l: &DiffLine) -> std::io::Result<()> {
    let mark = match l.kind {
        LineKind::Context => ' ',
        LineKind::Added => '+',
        LineKind::Removed => '-',
    };
    writeln!(out, "      {mark}{}", l.text)?;
    if l.no_newline {
        writeln!(out, "      \\ No newline at end of file")?;
    }
    Ok(())
}

fn status_letter(s: FileStatus) -> char {
    match s {
        FileStatus::Added => 'A',
        FileStatus::Modified => 'M',
        FileStatus::Deleted => 'D',
        FileStatus::Renamed => 'R',
        FileStatus::ModeChanged => 'X',
        FileStatus::TypeChanged => 'T',
    }
}

fn file_state(s: FileReviewState) -> &'static str {
    match s {
        FileReviewState::Unreviewed => "unreviewed",
        FileReviewState::Accepted => "accepted",
        FileReviewState::Rejected => "rejected",
        FileReviewState::Partly => "partly reviewed",
    }
}

fn hunk_mark(s: HunkState) -> &'static str {
    match s {
        HunkState::Unreviewed => "·",
        HunkState::Accepted => "✓",
        HunkState::Rejected => "✗",
    }
}

/// `bosun accept|reject|unmark TASK [PATH | PATH:N[,N…] | --all]`.
pub fn verdict(
    verdict: Verdict,
    task: &str,
    target: Option<&str>,
    all: bool,
) -> anyhow::Result<ExitCode> {
    let r = reviewer(task)?;
    let selector = Selector::from_args(target, all)?;
    let applied = r.verdict(verdict, &selector)?;
    let done = match verdict {
        Verdict::Accept => "accepted",
        Verdict::Reject => "rejected",
        Verdict::Unmark => "took back the verdict of",
    };
    if applied.changed.is_empty() {
        let state = match verdict {
            Verdict::Accept => "accepted",
            Verdict::Reject => "rejected",
            Verdict::Unmark => "undecided",
        };
        println!("nothing to change: what you named is {state} already");
    } else {
        println!("{done} {}", hunk_list(&applied.changed));
    }
    let c = &applied.review.counts;
    println!(
        "{} accepted, {} rejected, {} unreviewed (of {} hunks)",
        c.accepted, c.rejected, c.unreviewed, c.hunks
    );
    Ok(ExitCode::SUCCESS)
}

/// `a.txt:1,2 b.txt:1`, at most ten files.
fn hunk_list(hunks: &[(String, u32)]) -> String {
    const SHOWN: usize = 10;
    let mut files: Vec<(&str, Vec<String>)> = Vec::new();
    for (path, n) in hunks {
        match files.iter_mut().find(|(p, _)| p == path) {
            Some((_, ns)) => ns.push(n.to_string()),
            None => files.push((path, vec![n.to_string()])),
        }
    }
    let mut out = files
        .iter()
        .take(SHOWN)
        .map(|(p, ns)| format!("{p}:{}", ns.join(",")))
        .collect::<Vec<_>>()
        .join(" ");
    if files.len() > SHOWN {
        out.push_str(&format!(" and {} more files", files.len() - SHOWN));
    }
    out
}

pub fn undo(task: &str) -> anyhow::Result<ExitCode> {
    let r = reviewer(task)?;
    let before = r.review(false)?.undo;
    r.undo()?;
    if let Some(what) = before {
        println!("took back the {what}");
    }
    Ok(ExitCode::SUCCESS)
}

pub fn comment(task: &str, at: &str, text: &str) -> anyhow::Result<ExitCode> {
    let Some((path, range)) = at.rsplit_once(':') else {
        bail!("`{at}` is not PATH:LINE or PATH:LINE-LINE");
    };
    let (start, end) = match range.split_once('-') {
        Some((a, b)) => (a.trim().parse::<u32>(), b.trim().parse::<u32>()),
        None => (range.trim().parse::<u32>(), range.trim().parse::<u32>()),
    };
    let (Ok(start), Ok(end)) = (start, end) else {
        bail!("`{at}` is not PATH:LINE or PATH:LINE-LINE");
    };
    let r = reviewer(task)?;
    let c = r.comment(path, start, end, text)?;
    println!(
        "comment {} on {}:{}-{} (send the open comments with `bosun request-changes {}`)",
        c.id,
        c.path,
        c.start_line,
        c.end_line,
        r.task_id()
    );
    Ok(ExitCode::SUCCESS)
}

pub fn merge(
    task: &str,
    into: Option<String>,
    per_step: bool,
    message: Option<String>,
    override_checks: Option<String>,
) -> anyhow::Result<ExitCode> {
    if override_checks
        .as_deref()
        .is_some_and(|r| r.trim().is_empty())
    {
        anyhow::bail!(
            "--override-checks needs a reason, e.g. --override-checks 'flaky test, tracked in #12'"
        );
    }
    let r = reviewer(task)?;
    let req = MergeRequest {
        into,
        mode: if per_step {
            MergeMode::PerStep
        } else {
            MergeMode::Squash
        },
        message,
        override_checks,
    };
    let o = crate::commands::run::runtime()?.block_on(r.merge_gated(&req))?;
    if req.override_checks.is_some() && !r.merge_overrode()? {
        println!(
            "no required check failed, so --override-checks was not needed (nothing was overridden)"
        );
    }
    println!(
        "merged {} hunk{} in {} file{} into {}{} as {} commit{}: {}",
        o.hunks,
        if o.hunks == 1 { "" } else { "s" },
        o.files,
        if o.files == 1 { "" } else { "s" },
        o.branch,
        if o.created { " (new branch)" } else { "" },
        o.commits.len(),
        if o.commits.len() == 1 { "" } else { "s" },
        o.commits
            .iter()
            .map(|c| &c[..c.len().min(10)])
            .collect::<Vec<_>>()
            .join(" ")
    );
    if o.left_out > 0 {
        println!("{} unreviewed hunk(s) were left out", o.left_out);
    }
    if o.checked_out {
        println!(
            "{} is checked out: its working tree and index were updated",
            o.branch
        );
    }
    if o.worktree_bytes > 0 {
        println!(
            "the task's worktree {} uses {}; remove it with `bosun discard {}` (its history stays)",
            o.worktree,
            super::diff::human_bytes(o.worktree_bytes),
            r.task_id()
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub fn rebase(task: &str, onto: Option<&str>) -> anyhow::Result<ExitCode> {
    let r = reviewer(task)?;
    let rebased = r.rebase(onto)?;
    println!(
        "rebased task {} onto {}",
        r.task_id(),
        &rebased.new_base[..rebased.new_base.len().min(10)]
    );
    if !rebased.conflicts.is_empty() {
        println!(
            "files with conflict markers to resolve (ask the agent with `bosun continue`, or edit them in {}): {}",
            r.worktree_path()?,
            rebased.conflicts.join(", ")
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub fn discard(task: &str, delete_history: bool) -> anyhow::Result<ExitCode> {
    let r = reviewer(task)?;
    let id = r.task_id().clone();
    r.discard(delete_history)?;
    if delete_history {
        println!(
            "discarded task {id}: worktree, branch, checkpoints and transcript removed; its row and cost rows stay"
        );
    } else {
        println!("removed the worktree and branch of task {id}; its history and checkpoints stay");
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changed_hunks_are_listed_as_selectors() {
        let hunks = [
            ("a.txt".to_string(), 1),
            ("b.txt".into(), 1),
            ("a.txt".into(), 3),
        ];
        assert_eq!(hunk_list(&hunks), "a.txt:1,3 b.txt:1");
    }
}
