use super::{find_task, open_store};
use crate::render::Transcript;
use bosun_protocol::TaskStatus;
use bosun_store::TaskRow;
use std::io::Write;
use std::process::ExitCode;

/// A task's cost: `$0.1234`, `$0.1234+` when some of its responses were unpriced (a lower
/// bound), `unpriced` when none was priced.
pub(crate) fn cost_text(t: &TaskRow) -> String {
    if t.priced {
        format!("${:.4}", t.cost_usd)
    } else if t.cost_usd > 0.0 {
        format!("${:.4}+", t.cost_usd)
    } else {
        "unpriced".into()
    }
}

fn short(s: &str, max: usize) -> String {
    let one: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() <= max {
        one
    } else {
        format!("{}…", one.chars().take(max - 1).collect::<String>())
    }
}

/// `--status` values, each one of the task statuses; anything else is an error naming them.
fn parse_statuses(given: &[String]) -> anyhow::Result<Vec<TaskStatus>> {
    given
        .iter()
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .map(|s| {
            TaskStatus::parse(s).ok_or_else(|| {
                let all: Vec<&str> = TaskStatus::ALL.iter().map(|t| t.as_str()).collect();
                anyhow::anyhow!("unknown status {s:?}: use one of {}", all.join(", "))
            })
        })
        .collect()
}

pub fn tasks(json: bool, statuses: &[String], archived: bool) -> anyhow::Result<ExitCode> {
    let wanted = parse_statuses(statuses)?;
    let store = std::sync::Arc::new(open_store()?);
    store.reconcile_interrupted()?;
    let retention = bosun_core::export::apply_retention(&crate::home(), &store)?;
    for (id, why) in &retention.failed {
        eprintln!("bosun: the retention setting left task {id} as it was: {why}");
    }
    let mut tasks = store.tasks()?;
    if !wanted.is_empty() {
        tasks.retain(|t| wanted.contains(&t.status));
    }
    // Deleted tasks keep their row (for cost totals) but are not listed; archived ones only
    // with --archived.
    let marks = store.all_task_marks()?;
    tasks.retain(|t| {
        let m = marks.get(&t.id);
        let deleted = m
            .and_then(|m| m.transcript_removed.as_ref())
            .is_some_and(|r| r.by == "delete");
        !deleted && m.is_some_and(|m| m.archived_at.is_some()) == archived
    });
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer_pretty(&mut out, &tasks)?;
        writeln!(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    if tasks.is_empty() && archived {
        writeln!(out, "no archived tasks: `bosun archive TASK` archives one")?;
        return Ok(ExitCode::SUCCESS);
    }
    if tasks.is_empty() {
        writeln!(
            out,
            "no tasks yet: start one with `bosun run --repo PATH --prompt TEXT`"
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(
        out,
        "{:<26}  {:<15}  {:<6}  {:>10}  {:<20}  {:<16}  PROMPT",
        "TASK", "STATUS", "CHECKS", "COST", "STARTED", "REPO"
    )?;
    for t in &tasks {
        let repo = std::path::Path::new(&t.repo)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| t.repo.clone());
        writeln!(
            out,
            "{:<26}  {:<15}  {:<6}  {:>10}  {:<20}  {:<16}  {}",
            t.id,
            t.status.as_str(),
            t.checks.as_deref().unwrap_or("-"),
            cost_text(t),
            t.created_at
                .get(..19)
                .unwrap_or(&t.created_at)
                .replace('T', " "),
            short(&repo, 16),
            short(&t.prompt, 60)
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

pub fn show(task: &str, json: bool) -> anyhow::Result<ExitCode> {
    let store = open_store()?;
    store.reconcile_interrupted()?;
    let row = find_task(&store, task)?;
    let mut out = std::io::stdout().lock();
    let mut after = 0;
    let mut transcript = Transcript::new();
    if !json {
        let tokens = crate::render::token_classes(&bosun_protocol::TokenUsage {
            input_tokens: row.input_tokens,
            output_tokens: row.output_tokens,
            cached_input_tokens: row.cached_input_tokens,
            cache_write_tokens: row.cache_write_tokens,
            cache_write_1h_tokens: row.cache_write_1h_tokens,
            reasoning_tokens: row.reasoning_tokens,
        });
        writeln!(
            out,
            "task {} · {} · {} · {} tool calls · tokens {tokens} · {}",
            row.id,
            row.status.as_str(),
            row.model,
            row.tool_calls,
            cost_text(&row)
        )?;
        if let Some(removed) = store.task_marks(&row.id)?.transcript_removed {
            writeln!(out, "{}", removed.reason)?;
        }
    }
    let mut nudges = 0u64;
    loop {
        let events = store.events(&row.id, after, 1000)?;
        let Some(last) = events.last() else { break };
        after = last.seq;
        for ev in &events {
            if matches!(ev.msg, bosun_protocol::EventMsg::Nudge(_)) {
                nudges += 1;
            }
            if json {
                serde_json::to_writer(&mut out, ev)?;
                writeln!(out)?;
            } else {
                transcript.render(ev, &mut out)?;
            }
        }
    }
    // Why a task shows few or no tool calls: replies Bosun answered instead of running them.
    if !json && nudges > 0 {
        writeln!(
            out,
            "{} tool call{} ran; {nudges} repl{} made no progress and {} answered with a nudge (the ↻ lines)",
            row.tool_calls,
            if row.tool_calls == 1 { "" } else { "s" },
            if nudges == 1 { "y" } else { "ies" },
            if nudges == 1 { "was" } else { "were" },
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

pub fn checkpoints(task: &str, json: bool) -> anyhow::Result<ExitCode> {
    let store = open_store()?;
    let row = find_task(&store, task)?;
    let cps = store.checkpoints(&row.id)?;
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer_pretty(&mut out, &cps)?;
        writeln!(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    if cps.is_empty() {
        writeln!(
            out,
            "task {} has no checkpoints (it changed no files)",
            row.id
        )?;
    }
    for cp in &cps {
        writeln!(
            out,
            "{:>3}  {}  refs/bosun/{}/{}  {} file{}: {}",
            cp.n,
            &cp.commit[..cp.commit.len().min(12)],
            row.id,
            cp.n,
            cp.files.len(),
            if cp.files.len() == 1 { "" } else { "s" },
            short(&cp.files.join(", "), 80)
        )?;
    }
    Ok(ExitCode::SUCCESS)
}
