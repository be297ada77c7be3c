//! `bosun export|import-journal|archive|delete`: keeping what matters out of the journal, and
//! the end of a task's history.

use anyhow::{Context, bail};
use bosun_core::export::{self, ExportError};
use bosun_core::review::Reviewer;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

#[derive(clap::Args)]
pub struct ExportArgs {
    /// Task id or a unique prefix of it (not with --all)
    pub task: Option<String>,
    /// The accepted changes as a patch file (`git apply` takes it on the base)
    #[arg(long, value_name = "FILE")]
    pub patch: Option<PathBuf>,
    /// The task as readable Markdown: prompt, assistant text, tool calls with their output
    /// folded, checks, approvals, the diff of each checkpoint
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// The task as JSON: {"task": …, "events": […]}
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Every task of the journal (with --jsonl)
    #[arg(long)]
    pub all: bool,
    /// The whole journal as JSON lines, for `bosun import-journal` (with --all)
    #[arg(long, value_name = "FILE")]
    pub jsonl: Option<PathBuf>,
}

const FORMATS: &str = "export one task in exactly one format, `bosun export TASK --patch FILE`, `--markdown FILE` or `--json FILE`, or the whole journal with `bosun export --all --jsonl FILE`";

/// Where an export goes and in which format.
enum Target<'a> {
    Patch(&'a Path),
    Markdown(&'a Path),
    Json(&'a Path),
}

pub fn export(args: &ExportArgs) -> anyhow::Result<ExitCode> {
    if args.all || args.jsonl.is_some() {
        let (true, Some(file), None, None, None, None) = (
            args.all,
            &args.jsonl,
            &args.task,
            &args.patch,
            &args.markdown,
            &args.json,
        ) else {
            bail!("{FORMATS}");
        };
        return export_all(file);
    }
    let targets: Vec<Target<'_>> = [
        args.patch.as_deref().map(Target::Patch),
        args.markdown.as_deref().map(Target::Markdown),
        args.json.as_deref().map(Target::Json),
    ]
    .into_iter()
    .flatten()
    .collect();
    let (Some(task), [target]) = (&args.task, targets.as_slice()) else {
        bail!("{FORMATS}");
    };
    match target {
        Target::Patch(file) => patch(task, file),
        Target::Markdown(file) => markdown(task, file),
        Target::Json(file) => json(task, file),
    }
}

fn patch(task: &str, file: &Path) -> anyhow::Result<ExitCode> {
    let store = Arc::new(super::open_store()?);
    let r = Reviewer::open_changes(&crate::home(), store, task)?;
    let bytes = r
        .export(file)
        .with_context(|| format!("while exporting task {task}"))?;
    println!("wrote {} ({bytes} bytes)", file.display());
    Ok(ExitCode::SUCCESS)
}

fn markdown(task: &str, file: &Path) -> anyhow::Result<ExitCode> {
    let store = super::open_store()?;
    store.reconcile_interrupted()?;
    let row = super::find_task(&store, task)?;
    let text = export::markdown(&store, &crate::home(), &row.id)?;
    std::fs::write(file, &text).with_context(|| format!("while writing {}", file.display()))?;
    println!("wrote {} ({} bytes)", file.display(), text.len());
    Ok(ExitCode::SUCCESS)
}

/// Creates `file` for writing, buffered.
fn create(file: &Path) -> anyhow::Result<BufWriter<std::fs::File>> {
    let f = std::fs::File::create(file)
        .with_context(|| format!("while creating {}", file.display()))?;
    Ok(BufWriter::new(f))
}

/// An export error for `anyhow`, its I/O cause kept (exit 1).
fn export_err(e: ExportError) -> anyhow::Error {
    match e {
        ExportError::Core(c) => c.into(),
        ExportError::Io { what, source } => {
            anyhow::Error::new(source).context(format!("could not {what}"))
        }
        malformed @ ExportError::Malformed { .. } => anyhow::anyhow!("{malformed}"),
    }
}

fn json(task: &str, file: &Path) -> anyhow::Result<ExitCode> {
    let store = super::open_store()?;
    store.reconcile_interrupted()?;
    let row = super::find_task(&store, task)?;
    let mut out = create(file)?;
    let n = export::write_task_json(&store, &row.id, &mut out).map_err(export_err)?;
    out.flush()
        .with_context(|| format!("while writing {}", file.display()))?;
    println!("wrote {} (task {} with {n} events)", file.display(), row.id);
    Ok(ExitCode::SUCCESS)
}

fn export_all(file: &Path) -> anyhow::Result<ExitCode> {
    let store = super::open_store()?;
    store.reconcile_interrupted()?;
    let mut out = create(file)?;
    let done = export::write_journal_jsonl(&store, &mut out).map_err(export_err)?;
    println!(
        "wrote {} ({} tasks, {} events)",
        file.display(),
        done.tasks,
        done.events
    );
    Ok(ExitCode::SUCCESS)
}

/// `bosun import-journal FILE`: 0 when every task was imported or was there already, 1 when a
/// task was skipped (its id is in the journal with different content), 2 for a malformed file.
pub fn import_journal(file: &Path) -> anyhow::Result<ExitCode> {
    let store = super::open_store()?;
    let report = match export::import_journal(&store, file) {
        Ok(r) => r,
        Err(ExportError::Malformed { line, reason }) => {
            eprintln!(
                "bosun: {}:{line}: {reason}; nothing was imported",
                file.display()
            );
            return Ok(ExitCode::from(crate::exit::USAGE));
        }
        Err(e) => return Err(export_err(e)),
    };
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "imported {} task{} ({} events); {} already here",
        report.created.len(),
        if report.created.len() == 1 { "" } else { "s" },
        report.events,
        report.identical.len()
    )?;
    for id in &report.conflicts {
        writeln!(
            out,
            "skipped task {id}: the journal has a task with this id and different content"
        )?;
    }
    Ok(if report.conflicts.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(crate::exit::FAILED)
    })
}

pub fn archive(task: &str, undo: bool) -> anyhow::Result<ExitCode> {
    let store = super::open_store()?;
    let row = super::find_task(&store, task)?;
    let changed = store.set_archived(&row.id, !undo)?;
    match (undo, changed) {
        (false, true) => println!(
            "archived task {} (`bosun tasks --archived` lists it; `bosun archive {} --undo` brings it back)",
            row.id, row.id
        ),
        (false, false) => println!("task {} is archived already", row.id),
        (true, true) => println!("task {} is back in `bosun tasks`", row.id),
        (true, false) => println!("task {} was not archived", row.id),
    }
    Ok(ExitCode::SUCCESS)
}

pub fn delete(task: &str) -> anyhow::Result<ExitCode> {
    let store = Arc::new(super::open_store()?);
    let deleted = export::delete_task(&crate::home(), &store, task)?;
    println!(
        "deleted task {}: {} events, its checkpoints and worktree{}; its row and usage rows stay, so cost totals still count it",
        deleted.id,
        deleted.events_removed,
        if deleted.git_removed {
            ""
        } else {
            " (its repository is gone: nothing to remove there)"
        }
    );
    Ok(ExitCode::SUCCESS)
}
