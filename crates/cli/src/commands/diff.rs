use super::{find_task, open_store};
use anyhow::Context;
use bosun_store::TaskRow;
use bosun_workspace::{DiffPoint, TaskWorktree};
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

fn open_worktree(row: &TaskRow) -> anyhow::Result<TaskWorktree> {
    TaskWorktree::open(
        &crate::home(),
        Path::new(&row.repo),
        row.id.as_str(),
        Path::new(&row.worktree),
        &row.base_commit,
    )
    .with_context(|| format!("while opening the worktree of task {}", row.id))
}

fn point(n: Option<u32>, default: DiffPoint) -> DiffPoint {
    match n {
        None => default,
        Some(0) => DiffPoint::Base,
        Some(n) => DiffPoint::Checkpoint(n),
    }
}

pub fn diff(
    task: &str,
    from: Option<u32>,
    to: Option<u32>,
    stat: bool,
) -> anyhow::Result<ExitCode> {
    let store = open_store()?;
    let row = find_task(&store, task)?;
    bosun_core::CoreError::refuse_imported(&row, "diffed")?;
    let wt = open_worktree(&row)?;
    let text = wt.diff(
        point(from, DiffPoint::Base),
        point(to, DiffPoint::Latest),
        stat,
    )?;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

pub fn restore(task: &str, n: u32) -> anyhow::Result<ExitCode> {
    let store = std::sync::Arc::new(open_store()?);
    let reviewer = bosun_core::review::Reviewer::open_changes(&crate::home(), store, task)?;
    let changed = reviewer.restore(n)?;
    let state = match n {
        0 => "the base".to_string(),
        n => format!("checkpoint {n}"),
    };
    let mut out = std::io::stdout().lock();
    if changed.is_empty() {
        writeln!(out, "the worktree already matches {state}")?;
    } else {
        writeln!(
            out,
            "restored {state} in {}; changed:",
            reviewer.worktree_path()?
        )?;
        for p in &changed {
            writeln!(out, "  {p}")?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn worktrees(json: bool) -> anyhow::Result<ExitCode> {
    let usage = bosun_workspace::worktree_disk_usage(&crate::home())?;
    let mut out = std::io::stdout().lock();
    if json {
        let list: Vec<serde_json::Value> = usage
            .worktrees
            .iter()
            .map(|w| {
                serde_json::json!({
                    "task_id": w.task_id,
                    "repo": w.repo.as_ref().map(|r| r.display().to_string()),
                    "path": w.path.display().to_string(),
                    "idle": w.idle,
                    "bytes": w.bytes,
                })
            })
            .collect();
        let v = serde_json::json!({
            "worktrees": list,
            "idle_count": usage.idle_count,
            "in_use_count": usage.in_use_count,
            "idle_bytes": usage.idle_bytes,
            "in_use_bytes": usage.in_use_bytes,
        });
        serde_json::to_writer_pretty(&mut out, &v)?;
        writeln!(out)?;
    } else {
        writeln!(out, "{}", usage_summary(&usage))?;
        for w in &usage.worktrees {
            writeln!(
                out,
                "  {:<6} {:>10}  {}  {}",
                if w.idle { "idle" } else { "in use" },
                human_bytes(w.bytes),
                w.task_id,
                w.path.display()
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// One line: how many worktrees, idle and in use, and their disk use.
pub fn usage_summary(u: &bosun_workspace::DiskUsage) -> String {
    format!(
        "{} worktree{} in use ({}), {} idle ({}; idle ones are recycled for later tasks, at most 2 kept per repository)",
        u.in_use_count,
        if u.in_use_count == 1 { "" } else { "s" },
        human_bytes(u.in_use_bytes),
        u.idle_count,
        human_bytes(u.idle_bytes)
    )
}

pub fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut i = 0;
    while v >= 1024.0 && i < UNITS.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", UNITS[i])
    }
}
