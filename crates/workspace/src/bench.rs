//! `bosun bench checkpoint`: what a checkpoint costs Bosun compared with the shadow-git baseline
//! (`cp index tmp; GIT_INDEX_FILE=tmp git add -A && git write-tree && git commit-tree`), with the
//! worktree watched and without (a stat walk), and what starting a task costs. Prints figures;
//! asserts nothing.

use crate::error::{IoContext, Result, WorkspaceError};
use crate::git_cli::GitCall;
use crate::{ChangeHint, CommandScan, TaskWorktree, WatchCoverage, WatchLimits};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

const FILES_PER_DIR: usize = 100;
const REPEATS: usize = 3;

/// Generates (or reuses) an N-file repository under `dir` and prints the figures to `out`.
pub fn run_checkpoint_bench(files: usize, dir: &Path, out: &mut dyn Write) -> Result<()> {
    let files = files.max(1);
    std::fs::create_dir_all(dir).io_ctx("create directory", dir)?;
    let dir = dir.canonicalize().io_ctx("resolve", dir)?;
    let repo = dir.join(format!("repo-{files}"));
    let ready = dir.join(format!("repo-{files}.ready"));
    let say = |out: &mut dyn Write, line: String| -> Result<()> {
        writeln!(out, "{line}").io_ctx("write benchmark output to", Path::new("<output>"))?;
        out.flush()
            .io_ctx("write benchmark output to", Path::new("<output>"))
    };
    if !ready.exists() {
        let started = Instant::now();
        generate(&repo, files)?;
        std::fs::write(&ready, b"").io_ctx("write", &ready)?;
        say(
            out,
            format!(
                "generated {files} files in {:.1} s at {}",
                secs(started),
                repo.display()
            ),
        )?;
    } else {
        say(
            out,
            format!("reusing the {files}-file repository at {}", repo.display()),
        )?;
    }
    let head = git(&repo, &["rev-parse", "HEAD"], &[])?.trim().to_string();
    let run = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let home = dir.join(format!("home-{files}"));
    if home.exists() {
        std::fs::remove_dir_all(&home).io_ctx("remove", &home)?;
    }
    git(&repo, &["worktree", "prune"], &[])?;

    // Task start: git's own worktree add, then ours (fresh), then a later one (recycled).
    let plain = dir.join(format!("git-worktree-{files}"));
    let started = Instant::now();
    git(
        &repo,
        &[
            "worktree",
            "add",
            "-q",
            "--detach",
            &plain.to_string_lossy(),
            "HEAD",
        ],
        &[],
    )?;
    let git_add_ms = ms(started);
    git(
        &repo,
        &["worktree", "remove", "--force", &plain.to_string_lossy()],
        &[],
    )?;
    let started = Instant::now();
    let mut task = TaskWorktree::create(&home, &repo, &format!("bench-{run}-1"), &head)?;
    let first_ms = ms(started);

    say(
        out,
        format!("checkpoint cost after a tool changed files ({files} files, median of {REPEATS}):"),
    )?;
    say(
        out,
        format!(
            "{:<34}{:>12}{:>12}{:>10}",
            "", "bosun ms", "git ms", "ratio"
        ),
    )?;
    let mut next_file = 0usize;
    let mut walked = (0.0, 0.0);
    for (label, count, hint_paths) in [
        ("edit tool, 1 file", 1, true),
        ("edit tool, 10 files", 10, true),
        ("edit tool, 100 files", 100, true),
        ("command, 10 files (Unknown)", 10, false),
    ] {
        let mut ours = Vec::new();
        let mut theirs = Vec::new();
        for rep in 0..REPEATS {
            let touched = touch_files(&task.worktree, files, &mut next_file, count, rep)?;
            let hint = if hint_paths {
                ChangeHint::Paths(touched)
            } else {
                ChangeHint::Unknown
            };
            let started = Instant::now();
            task.checkpoint(&hint, label)?;
            ours.push(ms(started));
            touch_files(&task.worktree, files, &mut next_file, count, rep)?;
            let started = Instant::now();
            shadow_git_checkpoint(&task.worktree, &task.layout.task_git_dir(&task.task_id))?;
            theirs.push(ms(started));
        }
        let (a, b) = (median(&mut ours), median(&mut theirs));
        if !hint_paths {
            walked = (a, b);
        }
        say(
            out,
            format!("{label:<34}{a:>12.1}{b:>12.1}{:>9.1}x", b / a.max(0.001)),
        )?;
    }
    watched_rows(&mut task, files, &mut next_file, walked, out)?;
    let started = Instant::now();
    task.release()?;
    let release_ms = ms(started);
    let started = Instant::now();
    let later = TaskWorktree::create(&home, &repo, &format!("bench-{run}-2"), &head)?;
    let later_ms = ms(started);
    say(out, "task start:".to_string())?;
    say(
        out,
        format!("  git worktree add                      {git_add_ms:>10.1} ms"),
    )?;
    say(
        out,
        format!("  TaskWorktree::create, first task      {first_ms:>10.1} ms"),
    )?;
    say(
        out,
        format!("  release (final checkpoint + idle)     {release_ms:>10.1} ms"),
    )?;
    say(
        out,
        format!("  TaskWorktree::create, later task      {later_ms:>10.1} ms (recycled)"),
    )?;
    later.release()?;
    Ok(())
}

/// The same task with its worktree watched: the watcher's setup, its first command checkpoint
/// (which walks), then "command, 10 files" from events next to the stat walk and shadow git.
fn watched_rows(
    task: &mut TaskWorktree,
    files: usize,
    next_file: &mut usize,
    walked: (f64, f64),
    out: &mut dyn Write,
) -> Result<()> {
    let say = |out: &mut dyn Write, line: String| -> Result<()> {
        writeln!(out, "{line}").io_ctx("write benchmark output to", Path::new("<output>"))?;
        out.flush()
            .io_ctx("write benchmark output to", Path::new("<output>"))
    };
    let limits = WatchLimits::from_env();
    let report = task.watch_with(limits);
    let coverage = match &report.coverage {
        WatchCoverage::Full { watched } => format!("{watched} directories watched"),
        WatchCoverage::Partial { watched, total } => format!(
            "partial: {watched} of {total} directories (BOSUN_WATCH_MAX {}); commands walk",
            limits.max_dirs
        ),
        WatchCoverage::Unavailable { reason } => format!("unavailable: {reason}; commands walk"),
    };
    say(
        out,
        format!(
            "with the worktree watched (notify/inotify):\n  watcher setup{:>30.1} ms ({coverage})",
            report.setup.as_secs_f64() * 1000.0
        ),
    )?;
    touch_files(&task.worktree, files, next_file, 10, 0)?;
    let started = Instant::now();
    task.checkpoint(&ChangeHint::Unknown, "first command after watch()")?;
    say(
        out,
        format!(
            "  first command checkpoint{:>19.1} ms ({})",
            ms(started),
            describe(task.last_command_scan())
        ),
    )?;
    let (mut ours, mut theirs, mut drains) = (Vec::new(), Vec::new(), Vec::new());
    let mut how = String::new();
    for rep in 0..REPEATS {
        touch_files(&task.worktree, files, next_file, 10, rep)?;
        let started = Instant::now();
        task.checkpoint(&ChangeHint::Unknown, "command, watched")?;
        ours.push(ms(started));
        if let Some(CommandScan::Events { drain, .. }) = task.last_command_scan() {
            drains.push(drain.as_secs_f64() * 1000.0);
        }
        how = describe(task.last_command_scan());
        touch_files(&task.worktree, files, next_file, 10, rep)?;
        let started = Instant::now();
        shadow_git_checkpoint(&task.worktree, &task.layout.task_git_dir(&task.task_id))?;
        theirs.push(ms(started));
    }
    let (a, b) = (median(&mut ours), median(&mut theirs));
    say(
        out,
        format!(
            "{:<34}{:>12}{:>12}{:>10}{:>14}",
            "", "bosun ms", "git ms", "ratio", "vs stat walk"
        ),
    )?;
    say(
        out,
        format!(
            "{:<34}{a:>12.1}{b:>12.1}{:>9.1}x{:>13.1}x   ({how})",
            "command, 10 files (watcher)",
            b / a.max(0.001),
            walked.0 / a.max(0.001)
        ),
    )?;
    say(
        out,
        format!(
            "{:<34}{:>12.1}{:>12.1}{:>9.1}x",
            "command, 10 files (stat walk)",
            walked.0,
            walked.1,
            walked.1 / walked.0.max(0.001)
        ),
    )?;
    // A command that makes a directory: looked at whole.
    let mut made = Vec::new();
    for rep in 0..REPEATS {
        let dir = task.worktree.join(format!("made-by-command-{rep}"));
        for i in 0..10 {
            let path = dir.join(format!("sub/f{i}.txt"));
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).io_ctx("create directory", parent)?;
            }
            std::fs::write(&path, content(i, rep)).io_ctx("write", &path)?;
        }
        let started = Instant::now();
        task.checkpoint(&ChangeHint::Unknown, "command made a directory")?;
        made.push(ms(started));
        how = describe(task.last_command_scan());
    }
    say(
        out,
        format!(
            "{:<34}{:>12.1}{:>24}   ({how})",
            "command, new dir of 10 (watcher)",
            median(&mut made),
            ""
        ),
    )?;
    if !drains.is_empty() {
        say(
            out,
            format!(
                "  of which waiting for the events (barrier){:>5.2} ms median",
                median(&mut drains)
            ),
        )?;
    }
    task.unwatch();
    Ok(())
}

fn describe(scan: Option<CommandScan>) -> String {
    match scan {
        Some(CommandScan::Events { paths: 1, .. }) => "from events, 1 path".into(),
        Some(CommandScan::Events { paths, .. }) => format!("from events, {paths} paths"),
        Some(CommandScan::Walk(reason)) => format!("walked: {reason:?}"),
        None => "no command checkpoint".into(),
    }
}

/// `bosun bench review`: a task that changed `changed` files of an N-file repository; the time
/// to list its files, to compute every file's diff with lines, and to open one file, next to
/// `git diff --stat` and `git diff` between the same two trees.
pub fn run_review_bench(
    files: usize,
    changed: usize,
    dir: &Path,
    out: &mut dyn Write,
) -> Result<()> {
    let files = files.max(1);
    let changed = changed.clamp(1, files);
    let repo = generate_repo(files, dir)?;
    let say = |out: &mut dyn Write, line: String| -> Result<()> {
        writeln!(out, "{line}").io_ctx("write benchmark output to", Path::new("<output>"))
    };
    say(
        out,
        format!("repository: {files} files at {}", repo.display()),
    )?;
    let head = git(&repo, &["rev-parse", "HEAD"], &[])?.trim().to_string();
    let run = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let home = repo.with_file_name(format!("review-home-{run}"));
    let task_id = format!("review-{run}");
    let mut task = TaskWorktree::create(&home, &repo, &task_id, &head)?;
    let stride = files / changed;
    let mut touched = Vec::with_capacity(changed);
    for k in 0..changed {
        let i = k * stride;
        let rel = file_path(i);
        let path = task.worktree.join(&rel);
        let text = std::fs::read_to_string(&path).io_ctx("read", &path)?;
        // Two edited lines far apart and one appended: two or three hunks per file.
        let mut lines: Vec<String> = text.lines().map(String::from).collect();
        for at in [5, lines.len().saturating_sub(10)] {
            if let Some(line) = lines.get_mut(at) {
                line.push_str(" (edited by the task)");
            }
        }
        lines.push(format!("appended to file {i}"));
        std::fs::write(&path, lines.join("\n") + "\n").io_ctx("write", &path)?;
        touched.push(rel);
    }
    let checkpoint = task
        .checkpoint(&ChangeHint::Paths(touched), "bench edits")?
        .ok_or_else(|| WorkspaceError::InvalidPath {
            path: String::new(),
            reason: "the benchmark's edits made no checkpoint",
        })?;
    say(
        out,
        format!("task changed {changed} files ({REPEATS} runs each, median):"),
    )?;
    let history = task.history()?;
    let mut list = Vec::new();
    let mut diffs = Vec::new();
    let mut first = Vec::new();
    let mut stat = Vec::new();
    let mut patch = Vec::new();
    let mut hunks = 0;
    let range = [head.as_str(), checkpoint.commit.as_str()];
    for _ in 0..REPEATS {
        let started = Instant::now();
        let listed = history.review_files(false)?;
        list.push(ms(started));
        let started = Instant::now();
        let full = history.review_files(true)?;
        diffs.push(ms(started));
        hunks = full.iter().map(|f| f.hunks.len()).sum::<usize>();
        if let Some(file) = listed.first() {
            let started = Instant::now();
            history.review_file(&file.path)?;
            first.push(ms(started));
        }
        let started = Instant::now();
        git(&repo, &["diff", "--stat", range[0], range[1]], &[])?;
        stat.push(ms(started));
        let started = Instant::now();
        git(&repo, &["diff", range[0], range[1]], &[])?;
        patch.push(ms(started));
    }
    let (list, diffs, first) = (median(&mut list), median(&mut diffs), median(&mut first));
    let (stat, patch) = (median(&mut stat), median(&mut patch));
    say(out, format!("{:<44}{:>12}", "", "ms"))?;
    say(
        out,
        format!(
            "{:<44}{list:>12.1}   {:.2}x git diff --stat",
            "file list (review_files without lines)",
            list / stat.max(0.001)
        ),
    )?;
    say(out, format!("{:<44}{stat:>12.1}", "git diff --stat"))?;
    say(
        out,
        format!(
            "{:<44}{diffs:>12.1}   {:.2}x git diff ({hunks} hunks)",
            "all per-file diffs with lines",
            diffs / patch.max(0.001)
        ),
    )?;
    say(out, format!("{:<44}{patch:>12.1}", "git diff"))?;
    say(
        out,
        format!("{:<44}{first:>12.1}", "first file opened (review_file)"),
    )?;
    let wt = task.worktree.clone();
    task.remove()?;
    crate::delete_history(&home, &repo, &task_id)?;
    if wt.exists() {
        std::fs::remove_dir_all(&wt).io_ctx("remove", &wt)?;
    }
    if home.exists() {
        std::fs::remove_dir_all(&home).io_ctx("remove", &home)?;
    }
    Ok(())
}

fn generate(repo: &Path, files: usize) -> Result<()> {
    if repo.exists() {
        std::fs::remove_dir_all(repo).io_ctx("remove", repo)?;
    }
    for i in 0..files {
        let path = repo.join(file_path(i));
        if let Some(parent) = path.parent().filter(|_| i % FILES_PER_DIR == 0) {
            std::fs::create_dir_all(parent).io_ctx("create directory", parent)?;
        }
        std::fs::write(&path, content(i, 0)).io_ctx("write", &path)?;
    }
    git(repo, &["init", "-q"], &[])?;
    git(repo, &["add", "-A"], &[])?;
    git(repo, &["commit", "-q", "-m", "generated"], &[])?;
    Ok(())
}

/// `d03/d47/f034712.txt`: 100 files per directory, two levels.
fn file_path(i: usize) -> String {
    let dir = i / FILES_PER_DIR;
    format!("d{:02}/d{:02}/f{i:06}.txt", dir / 100, dir % 100)
}

/// About 4 KB of text that differs per file and per version.
fn content(i: usize, version: usize) -> String {
    let mut text = String::with_capacity(4200);
    let mut line = 0usize;
    while text.len() < 4000 {
        text.push_str(&format!(
            "file {i} version {version} line {line}: lorem ipsum dolor sit amet\n"
        ));
        line += 1;
    }
    text
}

fn touch_files(
    wt: &Path,
    files: usize,
    next: &mut usize,
    count: usize,
    rep: usize,
) -> Result<Vec<String>> {
    let mut touched = Vec::new();
    for _ in 0..count {
        let i = *next % files;
        *next += 1;
        let rel = file_path(i);
        let path = wt.join(&rel);
        std::fs::write(&path, content(i, rep + *next)).io_ctx("write", &path)?;
        touched.push(rel);
    }
    Ok(touched)
}

/// What a shadow-git checkpointer pays: a copy of the index, `add -A`, `write-tree`, `commit-tree`
/// (on the task's git directory, named explicitly like every git call Bosun makes).
fn shadow_git_checkpoint(wt: &Path, git_dir: &Path) -> Result<()> {
    let tmp = git_dir.join("bench-shadow-index");
    std::fs::copy(git_dir.join("index"), &tmp).io_ctx("copy the index to", &tmp)?;
    let call = GitCall::new(git_dir).work_tree(wt).index(&tmp);
    let run = |args: &[&str]| finish(call.command().args(args).output(), wt, args);
    run(&["add", "-A"])?;
    let tree = run(&["write-tree"])?;
    run(&["commit-tree", tree.trim(), "-p", "HEAD", "-m", "shadow"])?;
    std::fs::remove_file(&tmp).io_ctx("remove", &tmp)
}

/// git in the benchmark's own generated repository (Bosun made every byte of it).
fn git(dir: &Path, args: &[&str], env: &[(&str, &Path)]) -> Result<String> {
    let mut cmd = Command::new("git");
    cmd.current_dir(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "bench")
        .env("GIT_AUTHOR_EMAIL", "bench@localhost")
        .env("GIT_COMMITTER_NAME", "bench")
        .env("GIT_COMMITTER_EMAIL", "bench@localhost");
    for (k, v) in env {
        cmd.env(k, v);
    }
    finish(cmd.output(), dir, args)
}

fn finish(
    output: std::io::Result<std::process::Output>,
    dir: &Path,
    args: &[&str],
) -> Result<String> {
    let output = output.io_ctx("run git in", dir)?;
    if !output.status.success() {
        let message = format!(
            "git {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr)
        );
        return Err(std::io::Error::other(message)).io_ctx("run git in", dir);
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

fn ms(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1000.0
}

fn secs(started: Instant) -> f64 {
    started.elapsed().as_secs_f64()
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(|a, b| a.total_cmp(b));
    values.get(values.len() / 2).copied().unwrap_or(0.0)
}

/// Where a benchmark run keeps its repositories by default.
pub fn default_bench_dir(home: &Path) -> PathBuf {
    home.join("bench")
}

/// Generates (or reuses) the benchmark's N-file repository under `dir` and returns its path.
pub fn generate_repo(files: usize, dir: &Path) -> Result<PathBuf> {
    let files = files.max(1);
    std::fs::create_dir_all(dir).io_ctx("create directory", dir)?;
    let dir = dir.canonicalize().io_ctx("resolve", dir)?;
    let repo = dir.join(format!("repo-{files}"));
    let ready = dir.join(format!("repo-{files}.ready"));
    if !ready.exists() {
        generate(&repo, files)?;
        std::fs::write(&ready, b"").io_ctx("write", &ready)?;
    }
    Ok(repo)
}
