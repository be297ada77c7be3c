//! The suite on disk: `<suite>/<task-id>/{task.toml, repo/, hidden/, solution/}`, fixtures
//! committed into fresh git repositories, and the hidden check run in a copy of a final tree.

use anyhow::{Context, bail};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// How long a hidden check may run.
const CHECK_TIME_LIMIT: Duration = Duration::from_secs(120);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    Implement,
    CrossFile,
    Bugfix,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Implement => "implement",
            Kind::CrossFile => "cross-file",
            Kind::Bugfix => "bugfix",
        }
    }
}

/// `task.toml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskFile {
    prompt: String,
    kind: Kind,
    #[serde(default)]
    files: Vec<String>,
    check: String,
    #[serde(default)]
    time_limit_secs: Option<u64>,
}

#[derive(Debug, Clone)]
pub struct Task {
    pub id: String,
    pub dir: PathBuf,
    pub prompt: String,
    pub kind: Kind,
    /// The files the prompt names (Aider gets them on its command line).
    pub files: Vec<String>,
    pub check: String,
    pub time_limit_secs: Option<u64>,
}

impl Task {
    pub fn repo(&self) -> PathBuf {
        self.dir.join("repo")
    }
    pub fn hidden(&self) -> PathBuf {
        self.dir.join("hidden")
    }
    pub fn solution(&self) -> PathBuf {
        self.dir.join("solution")
    }
}

/// Every task of the suite, by id. A missing suite, a suite without tasks or a task file
/// that does not parse is a usage error.
pub fn load(suite: &Path) -> anyhow::Result<Vec<Task>> {
    if !suite.is_dir() {
        bail!(
            "no suite at {}: a suite is a directory of tasks, each <task-id>/task.toml with repo/ and hidden/ beside it (the built-in one is tests/eval in Bosun's repository)",
            suite.display()
        );
    }
    let mut tasks = Vec::new();
    let entries = std::fs::read_dir(suite)
        .with_context(|| format!("while reading the suite {}", suite.display()))?;
    for entry in entries {
        let dir = entry?.path();
        let toml_path = dir.join("task.toml");
        if !toml_path.is_file() {
            continue;
        }
        let id = dir
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_string();
        let text = std::fs::read_to_string(&toml_path)
            .with_context(|| format!("while reading {}", toml_path.display()))?;
        let file: TaskFile = toml::from_str(&text)
            .map_err(|e| anyhow::anyhow!("{} is not a valid task: {e}", toml_path.display()))?;
        for needed in ["repo", "hidden"] {
            if !dir.join(needed).is_dir() {
                bail!("task {id}: {needed}/ is missing in {}", dir.display());
            }
        }
        tasks.push(Task {
            id,
            dir,
            prompt: file.prompt.trim().to_string(),
            kind: file.kind,
            files: file.files,
            check: file.check,
            time_limit_secs: file.time_limit_secs,
        });
    }
    if tasks.is_empty() {
        bail!(
            "the suite {} has no tasks (no <task-id>/task.toml in it)",
            suite.display()
        );
    }
    tasks.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(tasks)
}

/// The tasks whose id matches one of the globs (all of them when none is given); a glob that
/// matches nothing is a usage error naming the tasks there are.
pub fn select(tasks: Vec<Task>, globs: &[String]) -> anyhow::Result<Vec<Task>> {
    if globs.is_empty() {
        return Ok(tasks);
    }
    for g in globs {
        if !tasks.iter().any(|t| glob_match(g, &t.id)) {
            let ids: Vec<&str> = tasks.iter().map(|t| t.id.as_str()).collect();
            bail!(
                "--task {g:?} matches no task; the suite's tasks are: {}",
                ids.join(", ")
            );
        }
    }
    Ok(tasks
        .into_iter()
        .filter(|t| globs.iter().any(|g| glob_match(g, &t.id)))
        .collect())
}

/// `*` any run of characters, `?` one character, anything else itself.
pub fn glob_match(glob: &str, s: &str) -> bool {
    fn go(g: &[char], s: &[char]) -> bool {
        match g.split_first() {
            None => s.is_empty(),
            Some(('*', rest)) => (0..=s.len()).any(|i| go(rest, &s[i..])),
            Some(('?', rest)) => !s.is_empty() && go(rest, &s[1..]),
            Some((c, rest)) => s.first() == Some(c) && go(rest, &s[1..]),
        }
    }
    let g: Vec<char> = glob.chars().collect();
    let s: Vec<char> = s.chars().collect();
    go(&g, &s)
}

/// Copies the files of `from` into `to` (created), over what is there; `skip` names entries
/// of the top level left out.
pub fn copy_tree(from: &Path, to: &Path, skip: &dyn Fn(&str) -> bool) -> anyhow::Result<()> {
    std::fs::create_dir_all(to).with_context(|| format!("while creating {}", to.display()))?;
    let entries =
        std::fs::read_dir(from).with_context(|| format!("while reading {}", from.display()))?;
    for entry in entries {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if skip(&name) {
            continue;
        }
        let src = entry.path();
        let dst = to.join(&name);
        let ty = entry.file_type()?;
        if ty.is_dir() {
            copy_tree(&src, &dst, &|_| false)?;
        } else if ty.is_file() {
            std::fs::copy(&src, &dst)
                .with_context(|| format!("while copying {} to {}", src.display(), dst.display()))?;
        } else if ty.is_symlink() {
            // Kept a link, as git would check it out: what it points at (anywhere, even a
            // device) is never read.
            let target = std::fs::read_link(&src)?;
            let _ = std::fs::remove_file(&dst);
            #[cfg(unix)]
            std::os::unix::fs::symlink(&target, &dst)
                .with_context(|| format!("while linking {}", dst.display()))?;
            #[cfg(not(unix))]
            let _ = target;
        }
    }
    Ok(())
}

/// The fixture `repo/` committed into a new git repository at `to`, with a fixed author and
/// date so every run starts from the same commit id.
pub fn prepare_repo(task: &Task, to: &Path) -> anyhow::Result<()> {
    copy_tree(&task.repo(), to, &|n| n == ".git")?;
    git(to, &["init", "-q", "-b", "main"])?;
    git(to, &["add", "-A"])?;
    git(to, &["commit", "-q", "--no-verify", "-m", "fixture"])?;
    Ok(())
}

fn git(dir: &Path, args: &[&str]) -> anyhow::Result<()> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "commit.gpgsign=false",
            "-c",
            "core.hooksPath=/dev/null",
        ])
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "bosun eval")
        .env("GIT_AUTHOR_EMAIL", "eval@bosun.invalid")
        .env("GIT_COMMITTER_NAME", "bosun eval")
        .env("GIT_COMMITTER_EMAIL", "eval@bosun.invalid")
        .env("GIT_AUTHOR_DATE", "2000-01-01T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2000-01-01T00:00:00Z")
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("while running git {args:?} (is git installed?)"))?;
    if !out.status.success() {
        return Err(super::infra(format!(
            "git {args:?} in {} failed: {}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(())
}

/// What a hidden check said.
#[derive(Debug, Clone)]
pub struct CheckResult {
    pub passed: bool,
    /// The end of its output, for the log and the JSON.
    pub output_tail: String,
}

/// Runs the task's check in `dir` (a copy of a final tree made by [`check_copy`]).
pub fn run_check(task: &Task, dir: &Path) -> anyhow::Result<CheckResult> {
    let mut cmd = Command::new("sh");
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut child = cmd
        .arg("-c")
        .arg(&task.check)
        .current_dir(dir)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("while starting the check {:?}", task.check))?;
    let out = super::supervise::wait_output(&mut child, cfg!(unix), CHECK_TIME_LIMIT)?;
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    let tail: String = {
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(15)..].join("\n")
    };
    Ok(CheckResult {
        passed: !out.timed_out && out.status.is_some_and(|s| s.success()),
        output_tail: if out.timed_out {
            format!(
                "{tail}\n(the check ran past {} s)",
                CHECK_TIME_LIMIT.as_secs()
            )
        } else {
            tail
        },
    })
}

/// A copy of `tree` (a final worktree) at `to`, without git's and Aider's own files, with the
/// task's `hidden/` files over it.
pub fn check_copy(task: &Task, tree: &Path, to: &Path) -> anyhow::Result<()> {
    if to.exists() {
        std::fs::remove_dir_all(to).with_context(|| format!("while clearing {}", to.display()))?;
    }
    copy_tree(tree, to, &|n| n == ".git" || n.starts_with(".aider"))?;
    copy_tree(&task.hidden(), to, &|_| false)
}

/// One task's self-test: its check must fail on the bare fixture and pass with `solution/`.
pub struct SelfTest {
    pub bare: CheckResult,
    pub solved: Option<CheckResult>,
}

pub fn self_test(task: &Task, work: &Path) -> anyhow::Result<SelfTest> {
    let bare_dir = work.join(format!("{}-bare", task.id));
    check_copy(task, &task.repo(), &bare_dir)?;
    let bare = run_check(task, &bare_dir)?;
    let solved = if task.solution().is_dir() {
        let dir = work.join(format!("{}-solved", task.id));
        copy_tree(&task.repo(), &dir, &|n| n == ".git")?;
        copy_tree(&task.solution(), &dir, &|_| false)?;
        copy_tree(&task.hidden(), &dir, &|_| false)?;
        Some(run_check(task, &dir)?)
    } else {
        None
    };
    Ok(SelfTest { bare, solved })
}

#[cfg(test)]
mod tests {
    use super::glob_match;

    #[test]
    fn globs_match_whole_ids() {
        assert!(glob_match("bugfix-*", "bugfix-median"));
        assert!(glob_match("*median*", "bugfix-median"));
        assert!(glob_match("bugfix-m?dian", "bugfix-median"));
        assert!(!glob_match("bugfix", "bugfix-median"));
        assert!(glob_match("*", ""));
        assert!(!glob_match("?", ""));
    }
}
