//! Batch runs: a persistent queue of tasks across repositories (`bosun batch`, the app's Batch
//! view), and the runs of a comparison (`compare.rs`) through the same queue.
//!
//! The queue lives in the journal (`batches`, `batch_items`). An item's task id is written when
//! the item is taken, before the task exists, so after a crash or a quit [`run`] knows each item
//! for what it is: queued (start it), started with no task (start it with that id: nothing ran),
//! started with an unfinished task (resume that task from its last checkpoint) or started with a
//! finished one (done). Nothing runs twice.

use crate::checks::ChecksChoice;
use crate::config::ContextSettings;
use crate::{BosunConfig, ContinueSpec, CoreError, TaskHandle, TaskSpec};
use bosun_policy::Mode;
use bosun_protocol::{Op, TaskId, TaskStatus};
use bosun_store::{BatchRow, ClaimedItem, NewBatch, NewBatchItem, Store};
use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Model requests a batch task may make unless it or the repository's settings say otherwise.
pub const DEFAULT_MAX_STEPS: u32 = 100;

/// Tasks a batch runs at once unless `--concurrency` says otherwise.
pub const DEFAULT_CONCURRENCY: u32 = 2;

/// At most this many at once.
pub const MAX_CONCURRENCY: u32 = 16;

/// One task of a batch, as a `[[task]]` table or a JSON line has it (and as the queue keeps it,
/// with `repo` made absolute).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BatchTask {
    /// The repository (any path inside it; relative to the batch file's folder).
    pub repo: String,
    pub prompt: String,
    /// Branch, tag or commit for the worktree (default: the repository's HEAD).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    /// A provider of config.toml (default: the repository's, `[routing] main`, the default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// The provider's model, overridden.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// read-only, ask, auto-edit or full-auto.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_steps: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cost_usd: Option<f64>,
    /// Commands, each a required check run at the end; `[]`: no checks; absent: the
    /// repository's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checks: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_nudges: Option<u32>,
    /// `[context]` over config.toml's (a comparison's setup).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<ContextSettings>,
}

fn bad(origin: &str, message: impl std::fmt::Display) -> CoreError {
    CoreError::Config(format!("{origin}: {message}"))
}

/// The line (1-based) of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Reads a batch file: TOML `[[task]]` tables, or JSON lines (one object per line; blank lines
/// and lines starting with `#` or `//` are skipped). JSON lines when the name ends `.jsonl`,
/// `.ndjson` or `.json`, TOML when it ends `.toml`, else by the first thing in it. Every task is
/// checked (see [`check`]) before anything runs; the first bad one is named by its line.
pub fn parse_file(path: &Path, home: &Path) -> Result<Vec<BatchTask>, CoreError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| bad(&shown, format!("cannot read the batch file: {e}")))?;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let json = match ext.as_deref() {
        Some("jsonl" | "ndjson" | "json") => true,
        Some("toml") => false,
        _ => text
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with("//"))
            .is_some_and(|l| l.starts_with('{')),
    };
    let tasks = if json {
        parse_jsonl(&text, &shown)?
    } else {
        parse_toml(&text, &shown)?
    };
    if tasks.is_empty() {
        return Err(bad(
            &shown,
            if json {
                "no tasks: write one JSON object per line, e.g. {\"repo\": \"../api\", \"prompt\": \"…\"}"
            } else {
                "no tasks: write [[task]] tables with repo and prompt"
            },
        ));
    }
    let config = BosunConfig::load(home)?;
    let mut out = Vec::with_capacity(tasks.len());
    for (line, mut task) in tasks {
        let origin = format!("{shown} line {line}");
        if !Path::new(&task.repo).is_absolute() && !task.repo.trim().is_empty() {
            task.repo = dir.join(task.repo.trim()).display().to_string();
        }
        check(&mut task, &config).map_err(|e| bad(&origin, e))?;
        out.push(task);
    }
    Ok(out)
}

fn parse_jsonl(text: &str, shown: &str) -> Result<Vec<(usize, BatchTask)>, CoreError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let l = line.trim();
        if l.is_empty() || l.starts_with('#') || l.starts_with("//") {
            continue;
        }
        let task: BatchTask =
            serde_json::from_str(l).map_err(|e| bad(&format!("{shown} line {}", i + 1), e))?;
        out.push((i + 1, task));
    }
    Ok(out)
}

fn parse_toml(text: &str, shown: &str) -> Result<Vec<(usize, BatchTask)>, CoreError> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct File {
        #[serde(default)]
        task: Vec<toml::Spanned<BatchTask>>,
    }
    let file: File = toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| line_of(text, s.start));
        let message = e.message().trim().to_string();
        match line {
            Some(l) => bad(&format!("{shown} line {l}"), message),
            None => bad(shown, message),
        }
    })?;
    Ok(file
        .task
        .into_iter()
        .map(|t| {
            let line = line_of(text, t.span().start);
            (line, t.into_inner())
        })
        .collect())
}

/// A task is sound before it is queued: a prompt, a git repository (made its root, absolute),
/// a base that resolves, a known mode and provider, limits that make sense, checks with
/// commands.
pub fn check(task: &mut BatchTask, config: &BosunConfig) -> Result<(), String> {
    if task.prompt.trim().is_empty() {
        return Err("the prompt is empty: say what the agent should do".into());
    }
    if task.repo.trim().is_empty() {
        return Err("no repo: name the repository the task works on".into());
    }
    let root = bosun_workspace::resolve_repo(Path::new(task.repo.trim()))
        .map_err(|e| format!("repo {:?}: {e}", task.repo))?;
    task.repo = root.display().to_string();
    if let Some(base) = task.base.as_deref() {
        bosun_workspace::resolve_base(&root, Some(base))
            .map_err(|e| format!("base {base:?}: {e}"))?;
    }
    if let Some(m) = task.mode.as_deref() {
        Mode::from_str(m).map_err(|_| {
            format!("unknown mode {m:?}: use read-only, ask, auto-edit or full-auto")
        })?;
    }
    if let Some(p) = task.provider.as_deref() {
        config.provider(Some(p)).map_err(|e| e.to_string())?;
    }
    if task.max_steps == Some(0) {
        return Err("max_steps must be at least 1".into());
    }
    if let Some(c) = task.max_cost_usd
        && !(c.is_finite() && c >= 0.0)
    {
        return Err("max_cost_usd must be a non-negative number".into());
    }
    if let Some(checks) = &task.checks
        && checks.iter().any(|c| c.trim().is_empty())
    {
        return Err("a check is empty: each is a command, e.g. \"python3 -m pytest -q\"".into());
    }
    Ok(())
}

/// Batch tasks of one prompt over several repositories (`bosun batch --prompt TEXT --repo A
/// --repo B`), every other field from `common`, each checked.
pub fn prompt_tasks(
    common: &BatchTask,
    repos: &[PathBuf],
    home: &Path,
) -> Result<Vec<BatchTask>, CoreError> {
    if repos.is_empty() {
        return Err(CoreError::Config(
            "--prompt needs at least one --repo (repeat it for each repository)".into(),
        ));
    }
    let config = BosunConfig::load(home)?;
    let mut out = Vec::with_capacity(repos.len());
    for repo in repos {
        let mut task = BatchTask {
            repo: repo.display().to_string(),
            ..common.clone()
        };
        check(&mut task, &config).map_err(|e| bad(&format!("--repo {}", repo.display()), e))?;
        out.push(task);
    }
    Ok(out)
}

/// A new batch id: a lowercase ULID.
pub fn new_batch_id() -> String {
    ulid::Ulid::new().to_string().to_lowercase()
}

/// Queues `items` as a new batch owned by this process; returns its id.
pub fn create(
    store: &Store,
    kind: &str,
    name: &str,
    concurrency: u32,
    spec: &serde_json::Value,
    items: &[(Option<String>, BatchTask)],
) -> Result<String, CoreError> {
    let id = new_batch_id();
    let pid = std::process::id();
    let items: Vec<NewBatchItem> = items
        .iter()
        .map(|(label, task)| {
            Ok(NewBatchItem {
                label: label.clone(),
                spec: serde_json::to_string(task)
                    .map_err(|e| CoreError::Internal(format!("a batch task as JSON: {e}")))?,
            })
        })
        .collect::<Result<_, CoreError>>()?;
    store.create_batch(
        &NewBatch {
            id: id.clone(),
            kind: kind.to_string(),
            name: name.to_string(),
            concurrency: concurrency.clamp(1, MAX_CONCURRENCY),
            spec: spec.to_string(),
            owner_pid: pid,
            owner_started: bosun_store::process_start_time(pid),
        },
        &items,
    )?;
    Ok(id)
}

/// Where the surroundings differ: the CLI prints and answers on a terminal, the app follows the
/// task in its engine and answers from the window.
pub trait Follower: Send + Sync + 'static {
    /// Runs commands in the sandbox.
    fn sandbox(&self) -> bool {
        true
    }
    /// A key for a named provider without a key variable (the app's keychain).
    fn key(&self, _provider: &str) -> Option<String> {
        None
    }
    /// An item is about to start (or resume).
    fn starting(&self, _item: &ClaimedItem, _task: &BatchTask, _resumed: bool) {}
    /// An item could not start.
    fn failed_to_start(&self, _item: &ClaimedItem, _task: &BatchTask, _error: &CoreError) {}
    /// Follows a started task to its end: its events, its approvals. Returns its final status.
    fn follow(&self, item: ClaimedItem, handle: TaskHandle) -> BoxFuture<'static, TaskStatus>;
}

/// How each item of a batch ended, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchReport {
    pub id: String,
    /// (item number, its task's final status; None when it could not start or was cut off).
    pub items: Vec<(u32, Option<TaskStatus>)>,
    /// The run was stopped (Ctrl-C, the app quitting): items are left for `resume`.
    pub stopped: bool,
}

impl BatchReport {
    /// Every task completed.
    pub fn all_completed(&self) -> bool {
        !self.stopped
            && self
                .items
                .iter()
                .all(|(_, s)| *s == Some(TaskStatus::Completed))
    }
}

/// The task an item runs, from the queue's JSON.
pub fn item_task(item: &ClaimedItem) -> Result<BatchTask, CoreError> {
    serde_json::from_str(&item.spec)
        .map_err(|e| CoreError::Internal(format!("batch item {} is not a task: {e}", item.n)))
}

/// The provider, limits and environment of a batch task, as `bosun run` would build them.
struct Resolved {
    provider: bosun_model::ProviderConfig,
    api_key_env: Option<String>,
    env_remove: Vec<String>,
    max_steps: u32,
    max_cost_usd: Option<f64>,
    mode: Option<Mode>,
    root: PathBuf,
}

fn resolve(
    home: &Path,
    task: &BatchTask,
    key: &dyn Fn(&str) -> Option<String>,
) -> Result<Resolved, CoreError> {
    let config = BosunConfig::load(home)?;
    let root = bosun_workspace::resolve_repo(Path::new(&task.repo))?;
    let settings = crate::repo_settings::effective(
        &config,
        &root,
        &crate::repo_settings::Explicit {
            provider: task.provider.clone(),
            max_steps: task.max_steps,
            max_cost_usd: task.max_cost_usd,
        },
        DEFAULT_MAX_STEPS,
    )?;
    let (name, mut entry) =
        config.provider(settings.provider.as_ref().map(|p| p.value.as_str()))?;
    if let Some(m) = task.model.as_deref().filter(|m| !m.trim().is_empty()) {
        entry.model = m.to_string();
    }
    let mut provider = entry.to_provider_config(&name, &|var| std::env::var(var).ok())?;
    if entry.api_key_env.is_none()
        && provider.api_key.is_none()
        && let Some(k) = key(&name)
    {
        provider.api_key = Some(bosun_model::Secret::new(k));
    }
    let mut env_remove =
        crate::secret_env_names(std::env::vars_os().filter_map(|(k, _)| k.into_string().ok()));
    if let Some(var) = &entry.api_key_env {
        env_remove.push(var.clone());
    }
    let mode = task
        .mode
        .as_deref()
        .map(|m| Mode::from_str(m).map_err(|_| CoreError::Config(format!("unknown mode {m:?}"))))
        .transpose()?;
    Ok(Resolved {
        provider,
        api_key_env: entry.api_key_env.clone(),
        env_remove,
        max_steps: settings.max_steps.value,
        max_cost_usd: settings.max_cost_usd.map(|c| c.value),
        mode,
        root,
    })
}

/// The [`TaskSpec`] of a batch task whose id the queue chose.
pub fn task_spec(
    home: &Path,
    task: &BatchTask,
    id: TaskId,
    sandbox: bool,
    key: &dyn Fn(&str) -> Option<String>,
) -> Result<TaskSpec, CoreError> {
    let r = resolve(home, task, key)?;
    let checks = match &task.checks {
        None => ChecksChoice::Repository,
        Some(list) if list.is_empty() => ChecksChoice::None,
        Some(list) => ChecksChoice::These(
            list.iter()
                .map(|c| crate::checks::flag_check(c))
                .collect::<Result<_, _>>()?,
        ),
    };
    Ok(TaskSpec {
        id: Some(id),
        context: task.context.clone(),
        fork: None,
        checks,
        max_check_rounds: None,
        max_nudges: task.max_nudges,
        pins: Vec::new(),
        link: None,
        transcript: Vec::new(),
        plan: false,
        home: home.to_path_buf(),
        repo: r.root,
        prompt: task.prompt.clone(),
        base: task.base.clone(),
        provider: r.provider,
        max_steps: r.max_steps,
        max_cost_usd: r.max_cost_usd,
        policy_file: None,
        sandbox,
        mode: r.mode,
        api_key_env: r.api_key_env,
        env_remove: r.env_remove,
    })
}

/// The [`ContinueSpec`] that resumes a batch task cut off midway.
pub fn resume_spec(
    home: &Path,
    task: &BatchTask,
    id: TaskId,
    sandbox: bool,
    key: &dyn Fn(&str) -> Option<String>,
) -> Result<ContinueSpec, CoreError> {
    let r = resolve(home, task, key)?;
    Ok(ContinueSpec {
        home: home.to_path_buf(),
        task_id: id,
        message: None,
        provider: r.provider,
        max_steps: None,
        max_cost_usd: None,
        policy_file: None,
        mode: None,
        sandbox,
        env_remove: r.env_remove,
        max_nudges: task.max_nudges,
        pins: Vec::new(),
        unpins: Vec::new(),
    })
}

/// Runs a batch to its end (or until `stop`): the items cut off before first, then the queue in
/// order, `concurrency` at a time (the batch's own when None; stored for a later resume). The
/// batch must be this process's (see [`bosun_store::Store::claim_batch`]). Stopping interrupts
/// the running tasks and leaves them, and the queued items, for a resume.
pub async fn run(
    home: PathBuf,
    store: Arc<Store>,
    batch: &str,
    concurrency: Option<u32>,
    follower: Arc<dyn Follower>,
    stop: CancellationToken,
) -> Result<BatchReport, CoreError> {
    let pid = std::process::id();
    store.claim_batch(
        batch,
        pid,
        bosun_store::process_start_time(pid),
        concurrency.map(|c| c.clamp(1, MAX_CONCURRENCY)),
    )?;
    // Tasks whose process died show as interrupted, so they resume.
    store.reconcile_interrupted()?;
    let row = store.find_batch(batch, None)?;
    let slots = Arc::new(tokio::sync::Semaphore::new(row.concurrency.max(1) as usize));
    let mut jobs = tokio::task::JoinSet::new();
    let mut pending: std::collections::VecDeque<ClaimedItem> =
        store.started_items(batch)?.into_iter().collect();
    // An error claiming the next item ends the queue, not the items running: they are waited
    // for (and marked done) before it is returned. Dropping them would abort their jobs and
    // leave tasks that go on running with items never marked done.
    let mut failed: Option<CoreError> = None;
    loop {
        let permit = tokio::select! {
            p = Arc::clone(&slots).acquire_owned() => match p {
                Ok(p) => p,
                Err(_) => {
                    failed = Some(CoreError::Internal("the batch's slots closed".into()));
                    break;
                }
            },
            _ = stop.cancelled() => break,
        };
        if stop.is_cancelled() {
            break;
        }
        let item = match pending.pop_front() {
            Some(i) => i,
            None => {
                let id = crate::new_task_id();
                match store.claim_next_item(batch, &id) {
                    Ok(Some(i)) => i,
                    Ok(None) => break,
                    Err(e) => {
                        failed = Some(e.into());
                        break;
                    }
                }
            }
        };
        let (home, store, follower, stop) = (
            home.clone(),
            Arc::clone(&store),
            Arc::clone(&follower),
            stop.clone(),
        );
        let batch = batch.to_string();
        jobs.spawn(async move {
            let _permit = permit;
            let n = item.n;
            let status = run_item(&home, &store, &batch, item, follower.as_ref(), &stop).await;
            (n, status)
        });
    }
    let mut ended = Vec::new();
    while let Some(done) = jobs.join_next().await {
        match done {
            Ok(r) => ended.push(r),
            Err(e) => tracing::error!("a batch item's job failed: {e}"),
        }
    }
    store.release_batch(batch, pid)?;
    if let Some(e) = failed {
        return Err(e);
    }
    // The report covers every item, those run before this process too.
    let items = store
        .batch_items(batch)?
        .into_iter()
        .map(|i| {
            let status = match i.state {
                bosun_store::BatchItemState::Done => i.task.map(|t| t.status),
                _ => None,
            };
            (i.n, status)
        })
        .collect();
    Ok(BatchReport {
        id: batch.to_string(),
        items,
        stopped: stop.is_cancelled(),
    })
}

/// One item: started, resumed or found done; marked done unless the run was stopped under it.
async fn run_item(
    home: &Path,
    store: &Arc<Store>,
    batch: &str,
    item: ClaimedItem,
    follower: &dyn Follower,
    stop: &CancellationToken,
) -> Option<TaskStatus> {
    let finish = |error: Option<&str>| {
        if let Err(e) = store.finish_item(batch, item.n, error) {
            tracing::warn!("batch {batch} item {}: {e}", item.n);
        }
    };
    let task = match item_task(&item) {
        Ok(t) => t,
        Err(e) => {
            finish(Some(&e.to_string()));
            return None;
        }
    };
    let existing = match store.task(&item.task_id) {
        Ok(t) => Some(t),
        Err(bosun_store::StoreError::NotFound { .. }) => None,
        Err(e) => {
            finish(Some(&e.to_string()));
            return None;
        }
    };
    let key = |name: &str| follower.key(name);
    let started = match &existing {
        Some(t) if t.status != TaskStatus::Running && t.status != TaskStatus::Interrupted => {
            // It ended before the queue heard (a crash between the two).
            finish(None);
            return Some(t.status);
        }
        Some(_) => {
            follower.starting(&item, &task, true);
            match resume_spec(home, &task, item.task_id.clone(), follower.sandbox(), &key) {
                Ok(spec) => crate::continue_task(spec, Arc::clone(store)).await,
                Err(e) => Err(e),
            }
        }
        None => {
            follower.starting(&item, &task, false);
            match task_spec(home, &task, item.task_id.clone(), follower.sandbox(), &key) {
                Ok(spec) => crate::start_task(spec, Arc::clone(store)).await,
                Err(e) => Err(e),
            }
        }
    };
    let handle = match started {
        Ok(h) => h,
        Err(e) => {
            follower.failed_to_start(&item, &task, &e);
            finish(Some(&e.to_string()));
            return None;
        }
    };
    let ops = handle.ops.clone();
    let follow = follower.follow(item.clone(), handle);
    tokio::pin!(follow);
    let status = tokio::select! {
        s = &mut follow => s,
        _ = stop.cancelled() => {
            let _ = ops.send(Op::Interrupt);
            follow.await
        }
    };
    if status == TaskStatus::Interrupted && stop.is_cancelled() {
        // Left started: a resume continues it.
        return None;
    }
    finish(None);
    Some(status)
}

/// The latest batch of `kind`, or the one `id` names.
pub fn find(store: &Store, id: Option<&str>, kind: &str) -> Result<BatchRow, CoreError> {
    match id {
        Some(id) => Ok(store.find_batch(id, Some(kind))?),
        None => store
            .batches(Some(kind))?
            .into_iter()
            .next()
            .ok_or_else(|| {
                CoreError::Store(bosun_store::StoreError::NoBatch { id: String::new() })
            }),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn repo(dir: &Path) -> PathBuf {
        let root = dir.join("r");
        std::fs::create_dir_all(&root).unwrap();
        let repo = git2::Repository::init(&root).unwrap();
        std::fs::write(root.join("a.txt"), "a\n").unwrap();
        let mut index = repo.index().unwrap();
        index.add_path(Path::new("a.txt")).unwrap();
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let sig = git2::Signature::now("t", "t@example.com").unwrap();
        repo.commit(Some("HEAD"), &sig, &sig, "init", &tree, &[])
            .unwrap();
        root
    }

    #[test]
    fn a_toml_batch_names_the_line_of_its_bad_task_and_a_good_one_parses_with_paths_made_absolute()
    {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        repo(dir.path());
        let file = dir.path().join("tasks.toml");
        std::fs::write(
            &file,
            "[[task]]\nrepo = \"r\"\nprompt = \"one\"\n\n[[task]]\nrepo = \"r\"\nprompt = \"two\"\nmode = \"yolo\"\n",
        )
        .unwrap();
        let err = parse_file(&file, &home).unwrap_err().to_string();
        assert!(
            err.contains("tasks.toml line 5") && err.contains("yolo"),
            "{err}"
        );
        std::fs::write(
            &file,
            "[[task]]\nrepo = \"r\"\nprompt = \"one\"\nmax_steps = \"x\"\n",
        )
        .unwrap();
        let err = parse_file(&file, &home).unwrap_err().to_string();
        assert!(err.contains("line 4"), "{err}");
        std::fs::write(
            &file,
            "[[task]]\nrepo = \"r\"\nprompt = \"one\"\nchecks = []\n",
        )
        .unwrap();
        let tasks = parse_file(&file, &home).unwrap();
        assert!(Path::new(&tasks[0].repo).is_absolute());
        assert_eq!(tasks[0].checks, Some(vec![]));
    }

    #[test]
    fn a_jsonl_batch_names_its_bad_line_and_skips_comments() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        repo(dir.path());
        let file = dir.path().join("tasks.jsonl");
        std::fs::write(
            &file,
            "# two tasks\n{\"repo\": \"r\", \"prompt\": \"one\"}\n\n{\"repo\": \"r\", \"promt\": \"two\"}\n",
        )
        .unwrap();
        let err = parse_file(&file, &home).unwrap_err().to_string();
        assert!(
            err.contains("tasks.jsonl line 4") && err.contains("promt"),
            "{err}"
        );
        std::fs::write(&file, "{\"repo\": \"nowhere\", \"prompt\": \"one\"}\n").unwrap();
        let err = parse_file(&file, &home).unwrap_err().to_string();
        assert!(err.contains("line 1") && err.contains("nowhere"), "{err}");
        std::fs::write(&file, "\n").unwrap();
        assert!(
            parse_file(&file, &home)
                .unwrap_err()
                .to_string()
                .contains("no tasks")
        );
    }
}
