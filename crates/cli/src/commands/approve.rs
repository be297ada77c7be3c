//! Answering approval requests from the CLI: `--yes`, one JSON line on stdin with `--json`, an
//! interactive prompt on a terminal, or — with none of these — a deny that says how to allow it.

use bosun_protocol::{
    ApprovalAnswer, ApprovalDecision, ApprovalKind, ApprovalRequested, RuleScope, ToolAction,
};
use std::io::{BufRead, IsTerminal, Write};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answerer {
    /// `--yes`: approve every ask once (a deny is never overridden: it never reaches here).
    Yes,
    /// `--json`: read `{"approval_id":…,"decision":…}` lines on stdin.
    JsonStdin,
    /// A terminal: ask interactively on stderr.
    Terminal,
    /// Nobody to ask.
    Nobody,
}

impl Answerer {
    pub fn choose(yes: bool, json: bool) -> Answerer {
        if yes {
            Answerer::Yes
        } else if json {
            Answerer::JsonStdin
        } else if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
            Answerer::Terminal
        } else {
            Answerer::Nobody
        }
    }

    /// Gets the answer to one request (blocking: run it off the async threads).
    pub fn answer(self, req: &ApprovalRequested) -> ApprovalAnswer {
        let base = |decision, by: &str| ApprovalAnswer {
            approval_id: req.approval_id.clone(),
            decision,
            rule: None,
            scope: None,
            note: None,
            text: None,
            by: Some(by.to_string()),
        };
        let money = matches!(
            req.kind,
            ApprovalKind::SpendRate | ApprovalKind::UnpricedModel
        );
        match self {
            Answerer::Yes if money => {
                let mut a = base(ApprovalDecision::Deny, "--yes");
                a.note =
                    Some("--yes approves tool calls, never spending past a budget's limits".into());
                a
            }
            Answerer::Yes if req.kind == ApprovalKind::PlanNodeFailed => {
                let mut a = base(ApprovalDecision::Deny, "--yes");
                a.note = Some(
                    "--yes approves tool calls; a failed plan node is a person's decision".into(),
                );
                a
            }
            Answerer::Yes => base(ApprovalDecision::ApproveOnce, "--yes"),
            Answerer::JsonStdin => read_json_answer(req).unwrap_or_else(|why| {
                eprintln!("bosun: {why}; denying {}", req.approval_id);
                let mut a = base(ApprovalDecision::Deny, "cli");
                a.note = Some(why);
                a
            }),
            Answerer::Terminal if req.kind == ApprovalKind::Summary => {
                prompt_summary(req).unwrap_or_else(|_| base(ApprovalDecision::Deny, "cli"))
            }
            Answerer::Terminal => {
                prompt(req).unwrap_or_else(|_| base(ApprovalDecision::Deny, "cli"))
            }
            Answerer::Nobody if req.kind == ApprovalKind::Summary => {
                let how = "Bosun had no one to show a compaction's summary to: there is no terminal. The older turns are kept; \
                     rerun with --yes to accept summaries, with --json to answer on stdin, or set [context] review_summaries = false"
                    .to_string();
                eprintln!("bosun: {how}");
                let mut a = base(ApprovalDecision::Deny, "cli (no terminal)");
                a.note = Some(how);
                a
            }
            Answerer::Nobody => {
                let how = format!(
                    "Bosun had no one to ask about {}: there is no terminal. Rerun with --yes to approve asks, \
                     with --json to answer on stdin, or allow it with a policy rule (try `bosun policy check`): {}",
                    describe(&req.action),
                    req.rule
                );
                eprintln!("bosun: {how}");
                let mut a = base(ApprovalDecision::Deny, "cli (no terminal)");
                a.note = Some(how);
                a
            }
        }
    }
}

pub fn describe(action: &ToolAction) -> String {
    match action {
        ToolAction::Command { command } => format!("running `{command}`"),
        ToolAction::Write { paths } => format!("writing {}", paths.join(", ")),
        ToolAction::Read { paths } => format!("reading {}", paths.join(", ")),
        ToolAction::Network {
            host,
            port,
            command,
        } => {
            format!("connecting to {host}:{port} (from `{command}`)")
        }
        ToolAction::Internal => "an internal step".into(),
        ToolAction::Mcp {
            server,
            tool,
            arguments,
        } => format!(
            "calling the MCP tool `{tool}` of the server `{server}` with {}",
            one_line(&arguments.to_string(), 200)
        ),
        ToolAction::McpServer {
            server,
            command,
            origin,
        } => format!("starting the MCP server `{server}` that {origin} declares: `{command}`"),
        ToolAction::SpendRate { .. } | ToolAction::UnpricedModel { .. } => {
            action.budget_question().unwrap_or_default()
        }
        ToolAction::Summary { replaces, .. } => {
            format!("a compaction's summary replacing {replaces} older messages")
        }
        ToolAction::PlanNodeFailed {
            node,
            step,
            attempts,
            ..
        } => format!(
            "plan node {node} ({step}) failed {attempts} times: approve once to retry it on the escalation model, for the task to skip it, deny to stop the plan"
        ),
    }
}

/// `text` cut to `max` characters, with `…` when cut.
fn one_line(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}

/// The lines the terminal prompt shows under an MCP request: the server, the tool and the
/// arguments as indented JSON (long values cut, at most 40 lines); for a server a repository
/// declares, the exact command and the file.
fn details(action: &ToolAction) -> Vec<String> {
    const MAX_LINES: usize = 40;
    match action {
        ToolAction::Mcp {
            server,
            tool,
            arguments,
        } => {
            let mut out = vec![
                format!("  server:    {server}"),
                format!("  tool:      {tool}"),
            ];
            let pretty =
                serde_json::to_string_pretty(arguments).unwrap_or_else(|_| arguments.to_string());
            let lines: Vec<&str> = pretty.lines().collect();
            for (i, line) in lines.iter().take(MAX_LINES).enumerate() {
                let label = if i == 0 { "arguments:" } else { "" };
                out.push(format!("  {label:<10} {}", one_line(line, 160)));
            }
            if lines.len() > MAX_LINES {
                out.push(format!(
                    "  {:<10} … {} more lines",
                    "",
                    lines.len() - MAX_LINES
                ));
            }
            out
        }
        ToolAction::McpServer {
            server,
            command,
            origin,
        } => vec![
            format!("  server:    {server}"),
            format!("  command:   {command}"),
            format!("  declared:  {origin}"),
        ],
        _ => Vec::new(),
    }
}

/// A summary to review on a terminal: shown whole, then accepted, edited (in `$VISUAL` /
/// `$EDITOR`, or typed until a line with a single `.`) or refused.
fn prompt_summary(req: &ApprovalRequested) -> std::io::Result<ApprovalAnswer> {
    let ToolAction::Summary { text, .. } = &req.action else {
        return prompt(req);
    };
    {
        let mut err = std::io::stderr().lock();
        writeln!(
            err,
            "\n\x1b[1;33m? summary to review:\x1b[0m {}\n  {}\n",
            describe(&req.action),
            req.reason
        )?;
        for line in text.lines() {
            writeln!(err, "  │ {line}")?;
        }
        writeln!(
            err,
            "\n  [y] accept  [e] edit  [n] refuse (keep the older turns)"
        )?;
    }
    let mut answer = ApprovalAnswer {
        approval_id: req.approval_id.clone(),
        decision: ApprovalDecision::ApproveOnce,
        rule: None,
        scope: None,
        note: None,
        text: None,
        by: Some(std::env::var("USER").unwrap_or_else(|_| "cli".into())),
    };
    loop {
        match ask_line("> ")?.to_lowercase().as_str() {
            "y" | "yes" => return Ok(answer),
            "e" | "edit" => {
                answer.text = Some(edit_text(text)?);
                return Ok(answer);
            }
            "n" | "no" => {
                answer.decision = ApprovalDecision::Deny;
                return Ok(answer);
            }
            _ => eprintln!("  answer y, e or n"),
        }
    }
}

/// The user's version of `text`: through their editor when one is set, else typed on stdin.
fn edit_text(text: &str) -> std::io::Result<String> {
    let editor = std::env::var("VISUAL")
        .or_else(|_| std::env::var("EDITOR"))
        .ok()
        .filter(|e| !e.trim().is_empty());
    if let Some(editor) = editor {
        let file = tempfile::Builder::new()
            .prefix("bosun-summary-")
            .suffix(".md")
            .tempfile()?;
        std::fs::write(file.path(), text)?;
        let status = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("{editor} \"$1\""))
            .arg("sh")
            .arg(file.path())
            .status()?;
        if status.success() {
            return std::fs::read_to_string(file.path());
        }
        eprintln!("  the editor failed ({status}); type the summary instead");
    }
    eprintln!("  type the summary; end with a line holding a single `.`");
    let mut out = String::new();
    loop {
        let mut line = String::new();
        if std::io::stdin().lock().read_line(&mut line)? == 0 || line.trim_end() == "." {
            break;
        }
        out.push_str(&line);
    }
    Ok(out)
}

fn read_json_answer(req: &ApprovalRequested) -> Result<ApprovalAnswer, String> {
    let stdin = std::io::stdin();
    let mut line = String::new();
    loop {
        line.clear();
        let n = stdin
            .lock()
            .read_line(&mut line)
            .map_err(|e| format!("cannot read the approval answer on stdin: {e}"))?;
        if n == 0 {
            return Err("stdin closed before an approval answer arrived".into());
        }
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<ApprovalAnswer>(line.trim()) {
            Ok(mut a) if a.approval_id == req.approval_id => {
                if a.by.is_none() {
                    a.by = Some("cli --json".into());
                }
                return Ok(a);
            }
            Ok(a) => eprintln!(
                "bosun: ignoring an answer for {} while {} waits",
                a.approval_id, req.approval_id
            ),
            Err(e) => eprintln!(
                "bosun: not an approval answer ({e}); expected {{\"approval_id\":\"{}\",\"decision\":\"approve_once|approve_task|approve_always|deny\",\"rule\":…,\"note\":…}}",
                req.approval_id
            ),
        }
    }
}

fn ask_line(question: &str) -> std::io::Result<String> {
    let mut err = std::io::stderr().lock();
    write!(err, "{question}")?;
    err.flush()?;
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    Ok(line.trim().to_string())
}

fn prompt(req: &ApprovalRequested) -> std::io::Result<ApprovalAnswer> {
    let suggestion = req.suggestions.first().cloned().unwrap_or_default();
    {
        let mut err = std::io::stderr().lock();
        writeln!(
            err,
            "\n\x1b[1;33m? approval needed:\x1b[0m {}",
            describe(&req.action)
        )?;
        for line in details(&req.action) {
            writeln!(err, "{line}")?;
        }
        writeln!(
            err,
            "  asked by {} ({}): {}",
            req.rule, req.source, req.reason
        )?;
        let (task, always) = match &req.action {
            ToolAction::Network { host, .. } => (
                format!("approve {host} for this task"),
                format!("[a] always allow `{suggestion}` ([network] domains)  "),
            ),
            ToolAction::Mcp { server, tool, .. } => (
                format!("approve {server}/{tool} for this task"),
                format!("[a] always allow `{suggestion}` ([mcp] allow, your policy file)  "),
            ),
            // A server is approved for its exact command; there is no rule to save.
            ToolAction::McpServer { .. } => ("approve for this task".to_string(), String::new()),
            _ => (
                "approve for this task".to_string(),
                format!("[a] always allow `{suggestion}`  "),
            ),
        };
        if matches!(req.action, ToolAction::McpServer { .. }) {
            writeln!(
                err,
                "  [y] start it (kept for this exact command: a changed one asks again)  [n] don't start it"
            )?;
        } else {
            writeln!(err, "  [y] approve once  [t] {task}  {always}[n] deny")?;
        }
    }
    let mut answer = ApprovalAnswer {
        approval_id: req.approval_id.clone(),
        decision: ApprovalDecision::Deny,
        rule: None,
        scope: None,
        note: None,
        text: None,
        by: Some(std::env::var("USER").unwrap_or_else(|_| "cli".into())),
    };
    loop {
        match ask_line("> ")?.to_lowercase().as_str() {
            "a" | "t" if matches!(req.action, ToolAction::McpServer { .. }) => {
                eprintln!(
                    "  an MCP server is approved for its exact command (kept until it changes): answer y or n"
                );
                continue;
            }
            "y" | "yes" => answer.decision = ApprovalDecision::ApproveOnce,
            "t" => answer.decision = ApprovalDecision::ApproveTask,
            "a" => {
                answer.decision = ApprovalDecision::ApproveAlways;
                let rule = ask_line(&format!("  rule [{suggestion}]: "))?;
                answer.rule = Some(if rule.is_empty() {
                    suggestion.clone()
                } else {
                    rule
                });
                if matches!(req.action, ToolAction::Mcp { .. }) {
                    // A repository's file cannot allow an MCP tool: only the user's counts.
                    eprintln!(
                        "  saved to your user policy (a repository's cannot allow MCP tools)"
                    );
                    answer.scope = Some(RuleScope::User);
                    return Ok(answer);
                }
                let scope = ask_line("  save to [p]roject or [u]ser policy? [p]: ")?;
                answer.scope = Some(if scope.starts_with('u') {
                    RuleScope::User
                } else {
                    RuleScope::Project
                });
            }
            "n" | "no" => {
                let note = ask_line("  note for the agent (optional): ")?;
                answer.note = (!note.is_empty()).then_some(note);
            }
            _ => {
                eprintln!("  answer y, t, a or n");
                continue;
            }
        }
        return Ok(answer);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_mcp_request_shows_server_tool_and_indented_arguments() {
        let action = ToolAction::Mcp {
            server: "github".into(),
            tool: "create_issue".into(),
            arguments: serde_json::json!({"title": "a bug", "body": "x".repeat(500)}),
        };
        let lines = details(&action);
        assert_eq!(lines[0], "  server:    github");
        assert_eq!(lines[1], "  tool:      create_issue");
        assert_eq!(lines[2], "  arguments: {");
        assert!(
            lines.iter().any(|l| l.contains("\"title\": \"a bug\"")),
            "{lines:?}"
        );
        assert!(lines.iter().all(|l| l.chars().count() < 200), "{lines:?}");
        assert!(describe(&action).contains("`create_issue` of the server `github`"));
        assert!(describe(&action).ends_with('…'));

        let many: serde_json::Map<String, serde_json::Value> = (0..100)
            .map(|i| (format!("k{i:03}"), serde_json::json!(i)))
            .collect();
        let lines = details(&ToolAction::Mcp {
            server: "s".into(),
            tool: "t".into(),
            arguments: serde_json::Value::Object(many),
        });
        assert_eq!(lines.len(), 2 + 40 + 1);
        assert!(lines[42].contains("62 more lines"), "{}", lines[42]);

        let server = details(&ToolAction::McpServer {
            server: "fs".into(),
            command: "npx -y server-filesystem .".into(),
            origin: "/repo/.bosun/config.toml".into(),
        });
        assert_eq!(
            server,
            vec![
                "  server:    fs",
                "  command:   npx -y server-filesystem .",
                "  declared:  /repo/.bosun/config.toml"
            ]
        );
    }
}
