//! `bosun checks`: the checks a new task of a repository would run (`--repo PATH [--save]`), or
//! a task's (`TASK`: its last round; `--run` runs them again on its latest checkpoint;
//! `--accepted` on the tree a merge would write). Exit 5 when a required check fails.

use crate::exit;
use anyhow::bail;
use bosun_core::BosunConfig;
use bosun_core::review::Reviewer;
use bosun_protocol::{CheckFinished, CheckStatus, ChecksReport, EventMsg, RepoChecks, TaskId};
use clap::Args;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Args)]
pub struct ChecksArgs {
    /// A task (id or unique prefix): its checks
    #[arg(conflicts_with = "repo")]
    task: Option<String>,
    /// A repository: the checks a new task would run there (configured, else discovered)
    #[arg(long)]
    repo: Option<PathBuf>,
    /// With --repo: write them to the repository's .bosun/config.toml
    #[arg(long, requires = "repo")]
    save: bool,
    /// With TASK: run them again on the task's latest checkpoint
    #[arg(long, requires = "task")]
    run: bool,
    /// With TASK: the checks of the tree a merge would write (the accepted hunks), run now
    /// unless they already ran on that very tree
    #[arg(long, requires = "task")]
    accepted: bool,
    #[arg(long)]
    json: bool,
}

pub fn checks(args: ChecksArgs) -> anyhow::Result<ExitCode> {
    match (&args.task, &args.repo) {
        (Some(task), None) => task_checks(task, &args),
        (None, Some(repo)) => repo_checks(repo, &args),
        (None, None) => {
            bail!("name a task (`bosun checks TASK`) or a repository (`bosun checks --repo PATH`)")
        }
        (Some(_), Some(_)) => bail!("name a task or a repository, not both"),
    }
}

fn repo_checks(repo: &std::path::Path, args: &ChecksArgs) -> anyhow::Result<ExitCode> {
    let home = crate::home();
    let root = bosun_workspace::resolve_repo(repo)?;
    let config = BosunConfig::load(&home)?;
    let found: RepoChecks = bosun_core::checks::repo_checks(&config, &root, None)?;
    if args.save {
        if found.checks.is_empty() {
            bail!(
                "no checks found in {} to save: write [[checks]] into {} yourself (name, command)",
                root.display(),
                bosun_core::checks::project_config_path(&root).display()
            );
        }
        let path = bosun_core::checks::save_checks(&root, &found.checks)?;
        if !args.json {
            println!(
                "wrote {} check{} to {}",
                found.checks.len(),
                if found.checks.len() == 1 { "" } else { "s" },
                path.display()
            );
        }
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string(&found)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    if found.checks.is_empty() && found.source == bosun_protocol::CheckSource::Configured {
        writeln!(
            out,
            "no checks: {} configures none for {} (tasks there are judged on their changes alone)",
            found.config_path,
            root.display()
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    if found.checks.is_empty() {
        writeln!(
            out,
            "no checks found in {} (nothing Bosun recognises: Cargo.toml, package.json scripts, pytest/unittest tests, go.mod, Makefile targets, AGENTS.md); add [[checks]] to {}",
            root.display(),
            found.config_path
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(
        out,
        "checks of {} ({}{}):",
        root.display(),
        found.source.as_str(),
        if found.source == bosun_protocol::CheckSource::Configured {
            format!(", {}", found.config_path)
        } else {
            String::new()
        }
    )?;
    for c in &found.checks {
        let mut notes = Vec::new();
        if !c.required {
            notes.push("optional".to_string());
        }
        if c.when == bosun_protocol::CheckWhen::Edit {
            notes.push("after each edit".to_string());
        }
        if c.timeout_secs != bosun_protocol::DEFAULT_CHECK_TIMEOUT_SECS {
            notes.push(format!("timeout {} s", c.timeout_secs));
        }
        let notes = if notes.is_empty() {
            String::new()
        } else {
            format!("  ({})", notes.join(", "))
        };
        writeln!(out, "  {:<12} {}{notes}", c.name, c.command)?;
    }
    if found.source == bosun_protocol::CheckSource::Discovered && !args.save {
        writeln!(
            out,
            "keep them (and edit them) with `bosun checks --repo {} --save`",
            repo.display()
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

fn task_checks(task: &str, args: &ChecksArgs) -> anyhow::Result<ExitCode> {
    let home = crate::home();
    let store = Arc::new(super::open_store()?);
    let row = super::find_task(&store, task)?;
    let runtime = crate::commands::run::runtime()?;
    let report: Option<ChecksReport> = if args.accepted {
        let reviewer = Reviewer::open_changes(&home, Arc::clone(&store), row.id.as_str())?;
        let cached = if args.run {
            None
        } else {
            reviewer.merge_checks()?.filter(|r| !r.stale)
        };
        Some(match cached {
            Some(r) => r,
            None => runtime.block_on(reviewer.run_merge_checks())?,
        })
    } else if args.run {
        Some(runtime.block_on(bosun_core::checks::rerun(
            &home,
            Arc::clone(&store),
            &row.id,
        ))?)
    } else {
        last_round(&store, &row.id)?
    };
    let mut out = std::io::stdout().lock();
    let Some(report) = report else {
        if args.json {
            writeln!(out, "{}", serde_json::json!({"task": row.id, "checks": []}))?;
        } else {
            writeln!(
                out,
                "task {} ran no checks (run them with `bosun checks {} --run`)",
                row.id, row.id
            )?;
        }
        return Ok(ExitCode::SUCCESS);
    };
    if args.json {
        writeln!(
            out,
            "{}",
            serde_json::json!({
                "task": row.id,
                "tree": report.tree,
                "scope": if args.accepted { "accepted" } else { "task" },
                "blocked": report.blocked,
                "checks": report.checks,
            })
        )?;
    } else {
        let what = if args.accepted {
            "the accepted changes (what a merge would write)"
        } else {
            "the task's latest checkpoint"
        };
        writeln!(out, "checks of task {} on {what}:", row.id)?;
        for c in &report.checks {
            print_check(&mut out, c)?;
        }
        if report.blocked {
            writeln!(
                out,
                "a required check fails{}",
                if args.accepted {
                    ": `bosun merge` refuses (merge anyway with --override-checks REASON)"
                } else {
                    ""
                }
            )?;
        }
    }
    Ok(if report.blocked {
        ExitCode::from(exit::CHECKS_FAILED)
    } else {
        ExitCode::SUCCESS
    })
}

/// The last round a task ran: its `task_finished` checks, or those of a re-run after it
/// (`bosun checks TASK --run`, the app's Re-run: round 0 on the latest checkpoint; the merge
/// gate's runs are not the task's), one result per check.
fn last_round(store: &bosun_store::Store, task: &TaskId) -> anyhow::Result<Option<ChecksReport>> {
    use bosun_protocol::CheckScope;
    let events = store.events_of_kinds(task, &["task_finished", "check_finished"])?;
    let mut last: Vec<CheckFinished> = Vec::new();
    let mut rerun: Vec<CheckFinished> = Vec::new();
    for ev in &events {
        match &ev.msg {
            EventMsg::TaskFinished(f) => {
                if !f.checks.is_empty() {
                    last = f.checks.clone();
                }
                rerun.clear();
            }
            EventMsg::CheckFinished(c)
                if matches!(c.scope, CheckScope::Full | CheckScope::Related) =>
            {
                // A loop round's results come with task_finished; these are a re-run's.
                rerun.retain(|r| r.name != c.name);
                rerun.push(c.clone());
            }
            _ => {}
        }
    }
    // Check events before the task's end belong to its rounds (task_finished has them).
    if !rerun.is_empty() {
        last = rerun;
    }
    if last.is_empty() {
        return Ok(None);
    }
    Ok(Some(ChecksReport {
        tree: String::new(),
        blocked: last.iter().any(CheckFinished::blocks),
        checks: last,
        stale: false,
    }))
}

fn print_check(out: &mut dyn Write, c: &CheckFinished) -> std::io::Result<()> {
    let mark = match c.status {
        CheckStatus::Passed => "✓",
        CheckStatus::Failed | CheckStatus::TimedOut => "✗",
        CheckStatus::Denied => "⊘",
        CheckStatus::Error => "!",
    };
    let optional = if c.required { "" } else { " (optional)" };
    writeln!(
        out,
        "  {mark} {}{optional} {} · {:.1}s · {}",
        c.name,
        c.status.as_str(),
        c.duration_ms as f64 / 1000.0,
        c.summary
    )?;
    for f in c.failures.iter().take(20) {
        writeln!(out, "      {}", crate::render::failure_line(f))?;
    }
    Ok(())
}
