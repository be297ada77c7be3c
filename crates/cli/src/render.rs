//! The readable live transcript of `bosun run` (and `bosun show`).

use bosun_protocol::{
    CheckOutputDelta, CheckScope, CheckStatus, Event, EventMsg, OutputStream, PlanStatus,
    ToolCallStatus, ToolOutputDelta,
};
use std::io::{self, IsTerminal, Write};

pub struct Transcript {
    color: bool,
    /// True while assistant text is streaming on the current line.
    in_text: bool,
    /// True when the last output chunk did not end with a newline.
    open_line: bool,
    /// Assistant text streamed since the last whole assistant message.
    streamed: bool,
}

impl Transcript {
    pub fn new() -> Self {
        Transcript {
            color: io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
            in_text: false,
            open_line: false,
            streamed: false,
        }
    }

    fn paint(&self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    fn end_text(&mut self, out: &mut dyn Write) -> io::Result<()> {
        if self.in_text || self.open_line {
            writeln!(out)?;
        }
        self.in_text = false;
        self.open_line = false;
        Ok(())
    }

    pub fn render(&mut self, ev: &Event, out: &mut dyn Write) -> io::Result<()> {
        match &ev.msg {
            EventMsg::AssistantDelta(d) => {
                self.in_text = true;
                self.streamed = true;
                write!(out, "{}", d.text)?;
                return Ok(());
            }
            EventMsg::ToolOutputDelta(ToolOutputDelta { stream, chunk, .. })
            | EventMsg::CheckOutputDelta(CheckOutputDelta { stream, chunk, .. }) => {
                if self.in_text {
                    self.end_text(out)?;
                }
                let code = match stream {
                    OutputStream::Stdout => "2",
                    OutputStream::Stderr => "2;31",
                };
                write!(out, "{}", self.paint(code, chunk))?;
                self.open_line = !chunk.ends_with('\n');
                return Ok(());
            }
            _ => {}
        }
        // Assistant text was already streamed: only its line ends. Text that never streamed
        // (a session imported from another agent) is written whole.
        if let EventMsg::AssistantMessage(m) = &ev.msg {
            if std::mem::take(&mut self.streamed) {
                return self.end_text(out);
            }
            self.end_text(out)?;
            return writeln!(out, "{}", m.text.trim_end());
        }
        self.end_text(out)?;
        match &ev.msg {
            EventMsg::TaskStarted(t) => {
                writeln!(
                    out,
                    "{} {} · {} · {}",
                    self.paint("1;36", "▸ task"),
                    ev.task_id,
                    t.branch,
                    t.model
                )?;
                if !t.worktree.is_empty() {
                    writeln!(out, "  worktree {}", t.worktree)?;
                }
                if let Some(p) = t.profile.as_ref().and_then(bosun_core::profiles::from_info) {
                    writeln!(out, "  profile {}", bosun_core::profiles::describe(&p))?;
                }
            }
            EventMsg::TaskResumed(r) => {
                let what = match r.kind {
                    bosun_protocol::ResumeKind::FollowUp => "▸ follow-up".to_string(),
                    bosun_protocol::ResumeKind::Resume => match r.restored_checkpoint {
                        Some(0) => format!(
                            "▸ resumed from the base (put back: {})",
                            r.restored_files.join(", ")
                        ),
                        Some(n) if !r.restored_files.is_empty() => format!(
                            "▸ resumed from checkpoint {n} (put back: {})",
                            r.restored_files.join(", ")
                        ),
                        Some(n) => format!("▸ resumed at checkpoint {n}"),
                        None => "▸ resumed".to_string(),
                    },
                };
                writeln!(out, "{}", self.paint("1;36", &what))?;
            }
            EventMsg::UserMessage(m) => {
                let who = match m.origin.as_deref() {
                    Some("checks") => "checks → model:",
                    _ => "you:",
                };
                writeln!(out, "{} {}", self.paint("1", who), m.text)?
            }
            EventMsg::ToolCallBegin(c) => {
                let args = bosun_core::summarize_args(&c.args);
                let recovered = if c.recovered {
                    " (recovered from text)"
                } else {
                    ""
                };
                writeln!(
                    out,
                    "{} {} {}{}",
                    self.paint("1;34", "●"),
                    c.tool,
                    args,
                    recovered
                )?;
            }
            EventMsg::ToolCallEnd(e) => {
                let (mark, code) = match e.status {
                    ToolCallStatus::Success => ("✓", "32"),
                    ToolCallStatus::Error => ("✗", "31"),
                    ToolCallStatus::Denied => ("⊘", "33"),
                    ToolCallStatus::TimedOut => ("⏱", "31"),
                };
                let mut line = format!("{mark} {:.1}s", e.duration_ms as f64 / 1000.0);
                if let Some(c) = e.exit_code {
                    line.push_str(&format!(" · exit {c}"));
                }
                if let Some(err) = &e.error {
                    line.push_str(&format!(" · {}", first_line(err)));
                }
                writeln!(out, "  {}", self.paint(code, &line))?;
            }
            EventMsg::PlanUpdated(p) => {
                writeln!(out, "{}", self.paint("1", "plan:"))?;
                for item in &p.items {
                    let mark = match item.status {
                        PlanStatus::Pending => "[ ]",
                        PlanStatus::InProgress => "[~]",
                        PlanStatus::Completed => "[x]",
                        PlanStatus::Failed => "[!]",
                    };
                    let node = match (&item.id, item.depends_on.is_empty()) {
                        (Some(id), true) => format!("{id}: "),
                        (Some(id), false) => {
                            format!("{id} (after {}): ", item.depends_on.join(", "))
                        }
                        (None, _) => String::new(),
                    };
                    writeln!(out, "  {mark} {node}{}", item.step)?;
                }
            }
            EventMsg::CheckpointCreated(c) => writeln!(
                out,
                "{}",
                self.paint(
                    "35",
                    &format!(
                        "◆ checkpoint {} · {} file{} · {}",
                        c.checkpoint,
                        c.files.len(),
                        if c.files.len() == 1 { "" } else { "s" },
                        &c.commit[..c.commit.len().min(10)]
                    )
                )
            )?,
            EventMsg::Usage(u) => {
                let cost = match u.cost_usd {
                    Some(usd) => format!("${usd:.4} (task ${:.4})", u.total_cost_usd),
                    None => format!("unpriced ({} has no price)", u.model),
                };
                let parts = token_classes(&u.tokens());
                let latency = u
                    .latency_ms
                    .map(|ms| format!(" · {:.1} s", ms as f64 / 1000.0))
                    .unwrap_or_default();
                writeln!(
                    out,
                    "{}",
                    self.paint("2", &format!("  tokens {parts} · {cost}{latency}"))
                )?;
            }
            EventMsg::ModelRetry(r) => writeln!(
                out,
                "{}",
                self.paint(
                    "33",
                    &format!(
                        "↻ retrying the model request ({}/{}) in {} ms: {}",
                        r.attempt, r.max_attempts, r.delay_ms, r.reason
                    )
                )
            )?,
            EventMsg::Nudge(n) => writeln!(
                out,
                "{}",
                self.paint(
                    "2",
                    &format!(
                        "↻ nudge ({}): {}",
                        n.reason.as_str(),
                        nudge_line(&n.message)
                    )
                )
            )?,
            EventMsg::ContextAssembled(c) => {
                let files: Vec<&str> = c
                    .items
                    .iter()
                    .take(6)
                    .filter_map(|i| i.path.as_deref())
                    .collect();
                let more = c.items.len().saturating_sub(files.len());
                writeln!(
                    out,
                    "{}",
                    self.paint(
                        "2",
                        &format!(
                            "◇ {} (budget {}): {}{}",
                            c.summary(),
                            bosun_protocol::short_count(c.budget_tokens),
                            files.join(", "),
                            if more > 0 {
                                format!(", +{more}")
                            } else {
                                String::new()
                            }
                        )
                    )
                )?
            }
            EventMsg::ContextCompacted(c) => writeln!(
                out,
                "{}",
                self.paint(
                    "2",
                    &format!(
                        "◇ context compacted: {} → {} tokens of a {}-token window ({} tool output{} masked{})",
                        bosun_protocol::short_count(c.tokens_before),
                        bosun_protocol::short_count(c.tokens_after),
                        bosun_protocol::short_count(c.window_tokens),
                        c.masked.len(),
                        if c.masked.len() == 1 { "" } else { "s" },
                        if c.summarised.is_empty() {
                            String::new()
                        } else {
                            format!(", {} messages summarised", c.summarised.len())
                        }
                    )
                )
            )?,
            EventMsg::ContextPinned(p) => writeln!(
                out,
                "{}",
                self.paint(
                    "2",
                    &format!(
                        "◇ {} {}{}",
                        if p.pinned { "pinned" } else { "unpinned" },
                        p.target.describe(),
                        if p.pinned {
                            ": compaction never drops it"
                        } else {
                            ""
                        }
                    )
                )
            )?,
            EventMsg::Error(e) => writeln!(out, "{} {}", self.paint("1;31", "error:"), e.message)?,
            EventMsg::ChecksPlanned(p) => {
                let names: Vec<&str> = p.checks.iter().map(|c| c.name.as_str()).collect();
                let line = if names.is_empty() {
                    format!("checks ({}): none", p.source.as_str())
                } else {
                    format!("checks ({}): {}", p.source.as_str(), names.join(" · "))
                };
                writeln!(out, "{}", self.paint("36", &line))?;
            }
            EventMsg::CheckStarted(c) => writeln!(
                out,
                "{} {} ({}) {}",
                self.paint("1;36", "▶ check"),
                c.name,
                check_scope(c.scope),
                self.paint("2", &c.command)
            )?,
            EventMsg::CheckFinished(c) => {
                let (mark, code) = match c.status {
                    CheckStatus::Passed => ("✓", "32"),
                    CheckStatus::Failed | CheckStatus::TimedOut => ("✗", "31"),
                    CheckStatus::Denied => ("⊘", "33"),
                    CheckStatus::Error => ("!", "33"),
                };
                let scope = match c.scope {
                    CheckScope::Full => String::new(),
                    other => format!(" ({})", check_scope(other)),
                };
                let mut line = format!(
                    "{mark} check {}{scope} {} · {:.1}s",
                    c.name,
                    c.status.as_str(),
                    c.duration_ms as f64 / 1000.0
                );
                if let Some(code) = c.exit_code {
                    line.push_str(&format!(" · exit {code}"));
                }
                if !c.summary.is_empty() && c.status != CheckStatus::Passed {
                    line.push_str(&format!(" · {}", first_line(&c.summary)));
                }
                writeln!(out, "  {}", self.paint(code, &line))?;
                for f in c.failures.iter().take(10) {
                    writeln!(out, "    {}", failure_line(f))?;
                }
                if c.failures.len() > 10 {
                    writeln!(out, "    … and {} more", c.failures.len() - 10)?;
                }
            }
            EventMsg::Review(r) => {
                writeln!(out, "{} {}", self.paint("1;35", "review"), review_line(r))?
            }
            EventMsg::ProviderFallback(f) => writeln!(
                out,
                "{}",
                self.paint(
                    "1;33",
                    &format!(
                        "↷ {} failed ({}); {} ({}) takes over",
                        f.from,
                        first_line(&f.reason),
                        f.to,
                        f.model
                    )
                )
            )?,
            EventMsg::SubagentStarted(s) => writeln!(
                out,
                "{} {} · {} · {} · scope {}{}\n  {}",
                self.paint("1;36", "▸ sub-agent"),
                s.child_task_id,
                s.role,
                s.model,
                if s.scope.is_empty() {
                    "everything".to_string()
                } else {
                    s.scope.join(" ")
                },
                if s.parallel { " · parallel" } else { "" },
                first_line(&s.brief)
            )?,
            EventMsg::SubagentProgress(_) => {}
            EventMsg::SubagentFinished(f) => {
                let code = if f.status == bosun_protocol::TaskStatus::Completed {
                    "36"
                } else {
                    "31"
                };
                let mut line = format!(
                    "◂ sub-agent {} {} · {} step{} · ${:.4} · {} file{} · {}",
                    f.child_task_id,
                    f.status.as_str(),
                    f.steps,
                    if f.steps == 1 { "" } else { "s" },
                    f.cost_usd,
                    f.files.len(),
                    if f.files.len() == 1 { "" } else { "s" },
                    f.merge
                );
                if !f.conflicts.is_empty() {
                    line.push_str(&format!(" ({})", f.conflicts.join(", ")));
                }
                writeln!(out, "{}", self.paint(code, &line))?;
            }
            EventMsg::TaskFinished(f) => {
                let code = if f.status == bosun_protocol::TaskStatus::Completed {
                    "1;32"
                } else {
                    "1;31"
                };
                writeln!(
                    out,
                    "{}",
                    self.paint(
                        code,
                        &if f.status == bosun_protocol::TaskStatus::Answered {
                            "■ answered — no changes made".to_string()
                        } else {
                            format!("■ {}", f.status.as_str())
                        }
                    )
                )?;
            }
            EventMsg::ApprovalRequested(a) => writeln!(
                out,
                "{} {} — {} ({}, {})",
                self.paint("1;33", "? approval:"),
                crate::commands::approve::describe(&a.action),
                a.reason,
                a.rule,
                a.source
            )?,
            EventMsg::ApprovalResolved(r) => {
                let what = match r.decision {
                    bosun_protocol::ApprovalDecision::ApproveOnce => "approved once".to_string(),
                    bosun_protocol::ApprovalDecision::ApproveTask => {
                        "approved for this task".to_string()
                    }
                    bosun_protocol::ApprovalDecision::ApproveAlways => format!(
                        "approved always: {} → {}",
                        r.rule.as_deref().unwrap_or("?"),
                        r.rule_file.as_deref().unwrap_or("not saved")
                    ),
                    bosun_protocol::ApprovalDecision::Deny => match &r.note {
                        Some(n) => format!("denied: {n}"),
                        None => "denied".to_string(),
                    },
                };
                writeln!(
                    out,
                    "  {}",
                    self.paint("33", &format!("{what} (by {})", r.by))
                )?;
            }
            EventMsg::Redacted(r) => writeln!(
                out,
                "{}",
                self.paint(
                    "2",
                    &format!(
                        "  {} secret(s) redacted ({}) before the {}",
                        r.count,
                        r.kinds.join(", "),
                        r.place
                    )
                )
            )?,
            EventMsg::Warning(w) => {
                writeln!(out, "{} {}", self.paint("1;33", "warning:"), w.message)?
            }
            EventMsg::NetworkConnection(c) => {
                let code = match c.decision {
                    bosun_protocol::NetworkDecision::Denied => "33",
                    _ => "2",
                };
                writeln!(out, "  {}", self.paint(code, &network_line(c)))?
            }
            EventMsg::AssistantDelta(_)
            | EventMsg::AssistantMessage(_)
            | EventMsg::ToolOutputDelta(_)
            | EventMsg::CheckOutputDelta(_) => {}
        }
        Ok(())
    }
}

/// One line for a connection through the egress proxy: `⇄ pypi.org:443 · allowed by … · ↑ 517 B ↓ 4.0 KB`.
pub fn network_line(c: &bosun_protocol::NetworkConnection) -> String {
    use bosun_protocol::NetworkDecision;
    let by = c
        .rule
        .as_deref()
        .map(|r| format!(" by {r}"))
        .unwrap_or_default();
    match c.decision {
        NetworkDecision::Denied => format!(
            "⊘ {}:{} · denied{by}: {}",
            c.host,
            c.port,
            c.reason.as_deref().unwrap_or("refused")
        ),
        decision => format!(
            "⇄ {}:{} · {}{by} · ↑ {} ↓ {}",
            c.host,
            c.port,
            decision.as_str(),
            size(c.bytes_up),
            size(c.bytes_down)
        ),
    }
}

fn size(bytes: u64) -> String {
    match bytes {
        0..1024 => format!("{bytes} B"),
        1024..1_048_576 => format!("{:.1} KB", bytes as f64 / 1024.0),
        _ => format!("{:.1} MB", bytes as f64 / 1_048_576.0),
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

/// One line for a review event in a transcript.
pub fn review_line(r: &bosun_protocol::ReviewEvent) -> String {
    use bosun_protocol::ReviewEvent as R;
    let n = |k: usize| {
        if k == 1 {
            "1 hunk".to_string()
        } else {
            format!("{k} hunks")
        }
    };
    match r {
        R::Accept { path, hunks } => format!("accepted {} of {path}", n(hunks.len())),
        R::Reject { path, hunks, .. } => format!("rejected {} of {path}", n(hunks.len())),
        R::Reset { path, hunks, .. } => format!("{} of {path} back to unreviewed", n(hunks.len())),
        R::Unreject { path, hunks, .. } => format!("put back {} of {path}", n(hunks.len())),
        R::Comment { comment } => format!(
            "comment on {}:{}-{}: {}",
            comment.path, comment.start_line, comment.end_line, comment.body
        ),
        R::Uncomment { id, .. } => format!("comment {id} removed"),
        R::RequestChanges { comments } => {
            format!("requested changes ({} comments)", comments.len())
        }
        R::Merge {
            outcome,
            override_checks,
            ..
        } => {
            let mut line = format!(
                "merged {} into {} ({} commit{})",
                n(outcome.hunks as usize),
                outcome.branch,
                outcome.commits.len(),
                if outcome.commits.len() == 1 { "" } else { "s" }
            );
            if let Some(reason) = override_checks {
                line.push_str(&format!(" · failing checks overridden: {reason}"));
            }
            line
        }
        R::Rebase {
            new_base,
            conflicts,
            ..
        } => format!(
            "rebased onto {} ({} conflicting files)",
            &new_base[..new_base.len().min(10)],
            conflicts.len()
        ),
        R::RemoveWorktree { freed_bytes } => {
            format!("worktree removed ({} MB freed)", freed_bytes / 1_000_000)
        }
        R::RecreateWorktree { checkpoint } => match checkpoint {
            0 => "worktree made again at the base".to_string(),
            n => format!("worktree made again at checkpoint {n}"),
        },
    }
}

fn check_scope(scope: CheckScope) -> &'static str {
    match scope {
        CheckScope::Related => "related tests",
        CheckScope::Full => "full",
        CheckScope::Base => "on the base commit",
        CheckScope::Accepted => "accepted tree",
        CheckScope::Edit => "after edit",
    }
}

/// One failure of a check: `path:line: message (failing before this task)`, on one line.
pub fn failure_line(f: &bosun_protocol::CheckFailure) -> String {
    let at = match (&f.path, f.line) {
        (Some(p), Some(l)) => format!("{p}:{l}: "),
        (Some(p), None) => format!("{p}: "),
        _ => String::new(),
    };
    let before = if f.before_task {
        " (failing before this task)"
    } else {
        ""
    };
    format!("{at}{}{before}", first_line(&f.message))
}

/// The first line of a nudge, at most 100 characters (the whole of it is in the journal).
fn nudge_line(message: &str) -> String {
    let line = message.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let mut out: String = line.chars().take(100).collect();
    if line.chars().count() > 100 {
        out.push('…');
    }
    out
}

/// A response's or a task's tokens by class, the classes it has: `in 1200 · cache read 800 ·
/// out 60` (input and output always).
pub(crate) fn token_classes(t: &bosun_protocol::TokenUsage) -> String {
    let mut parts = vec![format!("in {}", t.input_tokens)];
    for (n, name) in [
        (t.cached_input_tokens, "cache read"),
        (t.cache_write_tokens, "cache write 5m"),
        (t.cache_write_1h_tokens, "cache write 1h"),
    ] {
        if n > 0 {
            parts.push(format!("{name} {n}"));
        }
    }
    parts.push(format!("out {}", t.output_tokens));
    if t.reasoning_tokens > 0 {
        parts.push(format!("reasoning {}", t.reasoning_tokens));
    }
    parts.join(" · ")
}
