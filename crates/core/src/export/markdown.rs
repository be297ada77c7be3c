//! A task as a Markdown document someone can read: what was asked, what the agent said and did
//! (each tool call with its arguments, its output folded), the checks, the approvals, the diff
//! of each checkpoint, and how it ended. Secrets were redacted before they reached the journal.

use crate::CoreError;
use bosun_protocol::{
    ApprovalDecision, CallId, CheckFinished, CheckScope, Event, EventMsg, FileStatus, LineKind,
    PlanStatus, ReviewEvent, ReviewFile, TaskId, ToolCallStatus,
};
use bosun_store::{Store, TaskRow};
use bosun_workspace::{DiffPoint, TaskHistory};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

/// Lines of a tool's output shown in its folded block.
const OUTPUT_LINES: usize = 200;
/// Lines of one checkpoint's diff shown.
const DIFF_LINES: usize = 2000;

/// The task `task` as Markdown. `home` is Bosun's data directory (`$BOSUN_HOME`); the diffs
/// come from the checkpoints in the task's repository.
pub fn markdown(store: &Store, home: &Path, task: &TaskId) -> Result<String, CoreError> {
    let _ = home;
    let row = store.task(task)?;
    let marks = store.task_marks(task)?;
    let mut doc = Doc::new(&row);
    doc.header(&row, store.task_limits(task).ok().map(|l| l.max_steps));
    if let Some(removed) = &marks.transcript_removed {
        let _ = write!(
            doc.out,
            "\n> **The transcript is gone:** {} on {}. The task's row and its cost stay.\n",
            removed.reason,
            local_time(&removed.at)
        );
        return Ok(doc.out);
    }
    doc.out.push_str("\n## Transcript\n");
    let mut after = 0;
    loop {
        let page = store.events(task, after, 1000)?;
        let Some(last) = page.last() else { break };
        after = last.seq;
        for ev in &page {
            doc.event(ev);
        }
    }
    Ok(doc.out)
}

struct Doc<'a> {
    out: String,
    row: &'a TaskRow,
    /// The tool calls begun, by id: their number and name.
    calls: HashMap<CallId, (u32, String)>,
    /// The task's prompt was shown and no `user_message` repeated it yet.
    prompt_shown: bool,
    history: Option<Result<TaskHistory, String>>,
    checks_heading: bool,
    /// The last assistant text shown.
    last_text: String,
}

impl<'a> Doc<'a> {
    fn new(row: &'a TaskRow) -> Doc<'a> {
        Doc {
            out: String::new(),
            row,
            calls: HashMap::new(),
            prompt_shown: false,
            history: None,
            checks_heading: false,
            last_text: String::new(),
        }
    }

    fn header(&mut self, row: &TaskRow, max_steps: Option<u32>) {
        let title = row
            .prompt
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("(no prompt)");
        let _ = writeln!(self.out, "# {}\n", inline(title.trim()));
        let cost = if row.priced {
            format!("${:.4}", row.cost_usd)
        } else if row.cost_usd > 0.0 {
            format!("${:.4} or more (a model had no price)", row.cost_usd)
        } else {
            "unknown (the model has no price)".to_string()
        };
        let mut rows = vec![
            ("Task", format!("`{}`", row.id)),
            ("Repository", format!("`{}`", cell(&row.repo))),
            ("Base", format!("`{}`", short_commit(&row.base_commit))),
            ("Branch", format!("`{}`", cell(&row.branch))),
            (
                "Model",
                format!("{} · {}", cell(&row.provider), cell(&row.model)),
            ),
            ("Status", row.status.as_str().to_string()),
            ("Started", local_time(&row.created_at)),
            (
                "Finished",
                row.finished_at.as_deref().map_or("—".into(), local_time),
            ),
            (
                "Cost",
                format!(
                    "{cost} · {} tokens in, {} out, {} cached",
                    row.input_tokens, row.output_tokens, row.cached_input_tokens
                ),
            ),
            ("Tool calls", row.tool_calls.to_string()),
            (
                "Checks",
                row.checks.clone().unwrap_or_else(|| "none ran".into()),
            ),
        ];
        if let Some(n) = max_steps {
            rows.push(("Step limit", n.to_string()));
        }
        self.out.push_str("| | |\n|---|---|\n");
        for (k, v) in rows {
            let _ = writeln!(self.out, "| {k} | {v} |");
        }
    }

    fn event(&mut self, ev: &Event) {
        if !matches!(
            ev.msg,
            EventMsg::CheckFinished(_)
                | EventMsg::CheckStarted(_)
                | EventMsg::CheckOutputDelta(_)
                | EventMsg::ChecksPlanned(_)
                | EventMsg::Usage(_)
        ) {
            // Checks after anything else are a new round, under a heading of their own.
            self.checks_heading = false;
        }
        match &ev.msg {
            EventMsg::TaskStarted(t) => {
                self.prompt_shown = true;
                let _ = write!(self.out, "\n**Prompt**\n\n{}", quote(&t.prompt));
                if let Some(f) = &t.forked_from {
                    let _ = writeln!(
                        self.out,
                        "\n*Forked from task `{}` at checkpoint {}.*",
                        f.task, f.checkpoint
                    );
                }
            }
            EventMsg::UserMessage(m) => {
                if self.prompt_shown && m.text == self.row.prompt {
                    // The prompt, sent as the first message: shown already.
                    self.prompt_shown = false;
                    return;
                }
                let who = m.origin.as_deref().unwrap_or("follow-up");
                let _ = write!(
                    self.out,
                    "\n**User ({})**\n\n{}",
                    inline(who),
                    quote(&m.text)
                );
            }
            EventMsg::TaskResumed(r) => {
                let _ = writeln!(
                    self.out,
                    "\n*Resumed ({}){}.*",
                    serde_tag(&r.kind),
                    r.restored_checkpoint
                        .map(|n| format!(" from checkpoint {n}"))
                        .unwrap_or_default()
                );
            }
            EventMsg::AssistantMessage(m) if !m.text.trim().is_empty() => {
                let _ = writeln!(self.out, "\n{}", m.text.trim_end());
                self.last_text = m.text.trim().to_string();
            }
            EventMsg::ToolCallBegin(b) => self.tool_begin(b),
            EventMsg::ToolCallEnd(e) => self.tool_end(e),
            EventMsg::PlanUpdated(p) => {
                self.out.push_str("\n**Plan**\n\n");
                for item in &p.items {
                    let mark = match item.status {
                        PlanStatus::Completed => "x",
                        _ => " ",
                    };
                    let _ = writeln!(self.out, "- [{mark}] {}", inline(&item.step));
                }
            }
            EventMsg::CheckpointCreated(c) => self.checkpoint(c.checkpoint, &c.files),
            EventMsg::ApprovalRequested(a) => {
                let _ = write!(
                    self.out,
                    "\n**Approval asked** for `{}`: {} (rule `{}`, {})\n",
                    a.tool,
                    inline(&a.reason),
                    cell(&a.rule),
                    inline(&a.source)
                );
                if let Some(preview) = &a.preview {
                    self.out.push('\n');
                    self.out.push_str(&fenced("diff", preview));
                }
            }
            EventMsg::ApprovalResolved(a) => {
                let decision = match a.decision {
                    ApprovalDecision::ApproveOnce => "approved once",
                    ApprovalDecision::ApproveTask => "approved for this task",
                    ApprovalDecision::ApproveAlways => "approved always",
                    ApprovalDecision::Deny => "denied",
                };
                let _ = write!(self.out, "\n**Answer:** {decision} by {}", inline(&a.by));
                if let Some(rule) = &a.rule {
                    let _ = write!(self.out, " (rule `{}`)", cell(rule));
                }
                if let Some(note) = &a.note {
                    let _ = write!(self.out, " — “{}”", inline(note));
                }
                self.out.push('\n');
            }
            EventMsg::CheckFinished(c) => {
                if !self.checks_heading {
                    self.out.push_str("\n### Checks\n\n");
                    self.checks_heading = true;
                }
                self.check(c);
            }
            EventMsg::Error(e) => {
                let _ = writeln!(
                    self.out,
                    "\n> **Error** (`{}`): {}",
                    e.code,
                    inline(&e.message)
                );
            }
            EventMsg::Warning(w) => {
                let _ = writeln!(self.out, "\n> *Warning:* {}", inline(&w.message));
            }
            EventMsg::Nudge(n) => {
                let _ = writeln!(
                    self.out,
                    "\n> *Nudge ({}):* {}",
                    n.reason.as_str(),
                    inline(&n.message)
                );
            }
            EventMsg::Review(r) => self.review(r),
            EventMsg::TaskFinished(f) => {
                self.checks_heading = false;
                let _ = writeln!(self.out, "\n## Result: {}\n", f.status.as_str());
                // The summary usually starts with the last answer, shown just above.
                let summary = f.summary.trim();
                let summary = summary
                    .strip_prefix(self.last_text.as_str())
                    .filter(|_| !self.last_text.is_empty())
                    .unwrap_or(summary)
                    .trim();
                if !summary.is_empty() {
                    let _ = writeln!(self.out, "{summary}");
                }
                if !f.checks.is_empty() {
                    self.out.push('\n');
                    for c in &f.checks {
                        self.check(c);
                    }
                }
            }
            _ => {}
        }
    }

    fn tool_begin(&mut self, b: &bosun_protocol::ToolCallBegin) {
        let n = u32::try_from(self.calls.len() + 1).unwrap_or(u32::MAX);
        self.calls.insert(b.call_id.clone(), (n, b.tool.clone()));
        let summary = crate::summarize_args(&b.args).replace('`', "'");
        let _ = writeln!(
            self.out,
            "\n### {n}. `{}`{}\n",
            b.tool,
            if summary.is_empty() {
                String::new()
            } else {
                format!(" · `{summary}`")
            }
        );
        let arg = |k: &str| b.args.get(k).and_then(|v| v.as_str());
        let block = match b.tool.as_str() {
            "run_command" => arg("command").map(|c| fenced("sh", c)),
            "apply_patch" => arg("patch").map(|p| fenced("diff", p)),
            "write_file" => arg("path").map(|p| {
                let content = arg("content").unwrap_or("");
                fenced(
                    "text",
                    &format!("{p}\n(writes {} lines)", content.lines().count()),
                )
            }),
            "edit_file" => arg("path").map(|p| {
                let old = arg("old_string").unwrap_or("");
                let new = arg("new_string").unwrap_or("");
                let all = b.args.get("replace_all").and_then(|v| v.as_bool()) == Some(true);
                fenced(
                    "text",
                    &format!(
                        "{p}\n(replaces {} line{} with {}{})",
                        old.lines().count(),
                        if old.lines().count() == 1 { "" } else { "s" },
                        new.lines().count(),
                        if all { ", every occurrence" } else { "" }
                    ),
                )
            }),
            _ => None,
        };
        let block = block.unwrap_or_else(|| {
            fenced(
                "json",
                &serde_json::to_string_pretty(&b.args).unwrap_or_default(),
            )
        });
        self.out.push_str(&block);
    }

    fn tool_end(&mut self, e: &bosun_protocol::ToolCallEnd) {
        let status = match e.status {
            ToolCallStatus::Success => "ok".to_string(),
            ToolCallStatus::Error => "error".to_string(),
            ToolCallStatus::Denied => "denied".to_string(),
            ToolCallStatus::TimedOut => "timed out".to_string(),
        };
        let exit = e
            .exit_code
            .map(|c| format!(", exit {c}"))
            .unwrap_or_default();
        let lines: Vec<&str> = e.output.lines().collect();
        if lines.is_empty() {
            let _ = writeln!(
                self.out,
                "\n*No output · {status}{exit} · {} ms.*",
                e.duration_ms
            );
            self.tool_error(e);
            return;
        }
        let _ = write!(
            self.out,
            "\n<details><summary>output ({} line{}) · {status}{exit} · {} ms</summary>\n\n",
            lines.len(),
            if lines.len() == 1 { "" } else { "s" },
            e.duration_ms
        );
        let mut shown = lines
            .iter()
            .take(OUTPUT_LINES)
            .copied()
            .collect::<Vec<_>>()
            .join("\n");
        if lines.len() > OUTPUT_LINES {
            let _ = write!(
                shown,
                "\n… {} more lines not shown (`bosun show {}` has them all)",
                lines.len() - OUTPUT_LINES,
                self.row.id
            );
        }
        self.out.push_str(&fenced("text", &shown));
        self.out.push_str("\n</details>\n");
        self.tool_error(e);
    }

    /// The tool's error, unless its output says it already.
    fn tool_error(&mut self, e: &bosun_protocol::ToolCallEnd) {
        if let Some(err) = e.error.as_deref().filter(|err| !e.output.contains(*err)) {
            let _ = writeln!(self.out, "\n> **Tool error:** {}", inline(err));
        }
    }

    fn check(&mut self, c: &CheckFinished) {
        let scope = match c.scope {
            CheckScope::Related => " (related tests)",
            CheckScope::Full => "",
            CheckScope::Base => " (on the base commit)",
            CheckScope::Accepted => " (on the accepted changes)",
            CheckScope::Edit => " (after an edit)",
        };
        let status = serde_tag(&c.status).replace('_', " ");
        let _ = write!(
            self.out,
            "- **{}**{scope}: {status}{}",
            inline(&c.name),
            if c.required { "" } else { " (optional)" },
        );
        if c.summary.trim() != status {
            let _ = write!(self.out, " — {}", inline(&c.summary));
        }
        self.out.push('\n');
        for f in c.failures.iter().take(20) {
            let place = match (&f.path, f.line) {
                (Some(p), Some(l)) => format!("`{}:{l}` ", cell(p)),
                (Some(p), None) => format!("`{}` ", cell(p)),
                _ => String::new(),
            };
            let _ = writeln!(
                self.out,
                "  - {place}{}{}",
                inline(&f.message),
                if f.before_task {
                    " (failing before this task)"
                } else {
                    ""
                }
            );
        }
    }

    fn review(&mut self, r: &ReviewEvent) {
        let line = match r {
            ReviewEvent::Accept { path, hunks } => {
                format!("accepted {} hunk(s) of `{}`", hunks.len(), cell(path))
            }
            ReviewEvent::Reject { path, hunks, .. } => {
                format!("rejected {} hunk(s) of `{}`", hunks.len(), cell(path))
            }
            ReviewEvent::Reset { path, .. } => {
                format!("took back the verdicts on `{}`", cell(path))
            }
            ReviewEvent::Unreject { path, .. } => {
                format!("put back rejected hunks of `{}`", cell(path))
            }
            ReviewEvent::Comment { comment } => format!(
                "comment on `{}:{}`: “{}”",
                cell(&comment.path),
                comment.start_line,
                inline(&comment.body)
            ),
            ReviewEvent::Uncomment { .. } => "took a comment back".into(),
            ReviewEvent::RequestChanges { comments } => {
                format!("sent {} comment(s) to the agent", comments.len())
            }
            ReviewEvent::Merge {
                override_checks, ..
            } => match override_checks {
                Some(why) => format!("merged, overriding failing checks: “{}”", inline(why)),
                None => "merged".into(),
            },
            ReviewEvent::Rebase {
                new_base,
                conflicts,
                ..
            } => format!(
                "rebased onto `{}`{}",
                short_commit(new_base),
                if conflicts.is_empty() {
                    String::new()
                } else {
                    format!(" ({} conflicting files)", conflicts.len())
                }
            ),
            ReviewEvent::RemoveWorktree { .. } => "removed the worktree".into(),
            ReviewEvent::RecreateWorktree { checkpoint } => {
                format!("made the worktree again at checkpoint {checkpoint}")
            }
        };
        let _ = writeln!(self.out, "\n*Review: {line}.*");
    }

    fn checkpoint(&mut self, n: u32, files: &[String]) {
        let _ = writeln!(
            self.out,
            "\n#### Checkpoint {n} · {} file{}: {}\n",
            files.len(),
            if files.len() == 1 { "" } else { "s" },
            files
                .iter()
                .map(|f| format!("`{}`", cell(f)))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let row = self.row;
        let history = self.history.get_or_insert_with(|| {
            TaskHistory::open(Path::new(&row.repo), row.id.as_str(), &row.base_commit)
                .map_err(|e| e.to_string())
        });
        let from = match n {
            0 | 1 => DiffPoint::Base,
            n => DiffPoint::Checkpoint(n - 1),
        };
        let diff = match history {
            Ok(h) => h
                .diff_files(from, DiffPoint::Checkpoint(n), true)
                .map_err(|e| e.to_string()),
            Err(e) => Err(e.clone()),
        };
        match diff {
            Ok(files) => {
                let text = unified(&files);
                let lines: Vec<&str> = text.lines().collect();
                let mut shown = lines
                    .iter()
                    .take(DIFF_LINES)
                    .copied()
                    .collect::<Vec<_>>()
                    .join("\n");
                if lines.len() > DIFF_LINES {
                    let _ = write!(
                        shown,
                        "\n… {} more lines (`bosun diff {} --from {} --to {n}`)",
                        lines.len() - DIFF_LINES,
                        row.id,
                        n - 1
                    );
                }
                self.out.push_str(&fenced("diff", &shown));
            }
            Err(e) => {
                let _ = writeln!(self.out, "*(the diff is not available: {})*", inline(&e));
            }
        }
    }
}

/// Unified-diff text of the files, git style.
fn unified(files: &[ReviewFile]) -> String {
    let mut out = String::new();
    for f in files {
        let old = f.old_path.as_deref().unwrap_or(&f.path);
        let _ = writeln!(out, "diff --git a/{old} b/{}", f.path);
        let (a, b) = match f.status {
            FileStatus::Added => ("/dev/null".to_string(), format!("b/{}", f.path)),
            FileStatus::Deleted => (format!("a/{old}"), "/dev/null".to_string()),
            _ => (format!("a/{old}"), format!("b/{}", f.path)),
        };
        if f.binary {
            let _ = writeln!(out, "Binary files {a} and {b} differ");
            continue;
        }
        if f.large {
            let _ = writeln!(
                out,
                "(large file: +{} -{} lines, not shown; `bosun diff` shows it)",
                f.added, f.removed
            );
            continue;
        }
        if f.hunks.iter().any(|h| !h.lines.is_empty()) {
            let _ = writeln!(out, "--- {a}\n+++ {b}");
        }
        for h in &f.hunks {
            let _ = writeln!(out, "{}", h.header);
            for l in &h.lines {
                let mark = match l.kind {
                    LineKind::Context => ' ',
                    LineKind::Added => '+',
                    LineKind::Removed => '-',
                };
                let _ = writeln!(out, "{mark}{}", l.text);
                if l.no_newline {
                    out.push_str("\\ No newline at end of file\n");
                }
            }
        }
    }
    out
}

/// `text` in a fenced block whose fence is longer than any backtick run inside it.
fn fenced(lang: &str, text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest.max(2) + 1);
    let body = text.strip_suffix('\n').unwrap_or(text);
    format!("{fence}{lang}\n{body}\n{fence}\n")
}

/// Every line of `text` as a Markdown quote.
fn quote(text: &str) -> String {
    let mut out = String::new();
    for line in text.trim_end().lines() {
        if line.is_empty() {
            out.push_str(">\n");
        } else {
            let _ = writeln!(out, "> {line}");
        }
    }
    out
}

/// One line of text for running prose: newlines become spaces.
fn inline(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Text for a table cell or inline code: one line, no pipes or backticks to break it.
fn cell(s: &str) -> String {
    inline(s).replace('|', "\\|").replace('`', "'")
}

fn short_commit(c: &str) -> &str {
    c.get(..12).unwrap_or(c)
}

/// The snake_case name serde gives a unit enum value.
fn serde_tag<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// An RFC 3339 journal time as local time, `2026-12-01 15:54:19 +01:00` (UTC when the local
/// offset cannot be known).
fn local_time(ts: &str) -> String {
    use time::format_description::well_known::Rfc3339;
    let Ok(t) = time::OffsetDateTime::parse(ts, &Rfc3339) else {
        return ts.to_string();
    };
    let offset = time::UtcOffset::current_local_offset().unwrap_or(time::UtcOffset::UTC);
    let t = t.to_offset(offset);
    const FORMAT: &[time::format_description::FormatItem<'static>] = time::macros::format_description!(
        "[year]-[month]-[day] [hour]:[minute]:[second] [offset_hour sign:mandatory]:[offset_minute]"
    );
    t.format(FORMAT).unwrap_or_else(|_| ts.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fence_is_longer_than_the_backticks_inside() {
        assert_eq!(fenced("sh", "echo hi\n"), "```sh\necho hi\n```\n");
        assert_eq!(fenced("", "a ```` b"), "`````\na ```` b\n`````\n");
    }

    #[test]
    fn quotes_keep_blank_lines_inside_the_quote() {
        assert_eq!(quote("one\n\ntwo\n"), "> one\n>\n> two\n");
    }

    #[test]
    fn journal_times_read_as_local_times() {
        let t = local_time("2026-11-30T03:15:00.123Z");
        assert!(
            t.starts_with("2026-11-30 ") || t.starts_with("2026-11-29 "),
            "{t}"
        );
        assert_eq!(t.len(), "2026-11-30 03:15:00 +00:00".len(), "{t}");
    }
}
