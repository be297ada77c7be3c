//! Batch runs and comparisons in the app (the Batch and Compare views): thin commands over
//! `bosun_core::orchestrate::{batch, compare}`. A batch's runner starts its tasks and hands each
//! to the app's [`Engine`], so their events, approvals, notifications and sidebar badges work as
//! for any task started here. Quitting stops the runners first (their tasks end interrupted and
//! stay theirs); at start the app continues every batch whose owner died.

use crate::commands::Runner;
use crate::engine::Engine;
use crate::error::IpcError;
use bosun_core::orchestrate::batch::{self, BatchTask, Follower};
use bosun_core::orchestrate::compare::{self, CompareRequest, Comparison};
use bosun_core::review::{Reviewer, Selector, Verdict};
use bosun_core::{BosunConfig, CoreError, TaskHandle};
use bosun_protocol::{
    ApprovalRequested, MergeMode, MergeOutcome, MergeRequest, TaskId, TaskStatus,
};
use bosun_store::{BatchItemRow, BatchItemState, BatchRow, BatchStatus, ClaimedItem};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use tauri::State;
use tokio_util::sync::CancellationToken;

/// The batches this app runs now, each with the token that stops its runner.
#[derive(Default)]
pub struct BatchRuns {
    /// Each runner's stop token, its generation (a runner removes only its own entry) and
    /// what says it has ended.
    running: Mutex<HashMap<String, BatchRunner>>,
    generation: std::sync::atomic::AtomicU64,
}

impl BatchRuns {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, BatchRunner>> {
        self.running
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Whether this app runs batch `id` now.
    pub fn is_running(&self, id: &str) -> bool {
        self.lock().contains_key(id)
    }

    /// The batches this app runs now. Taken before reading the journal: a runner that ends
    /// after the snapshot may have ended after the read, so its row is never taken for a
    /// stopped one (see [`Shown`]).
    fn snapshot(&self) -> Shown {
        Shown {
            running: self.lock().keys().cloned().collect(),
        }
    }

    /// Stops batch `id`'s runner: its tasks are interrupted and left for a resume.
    pub fn stop(&self, id: &str) -> bool {
        match self.lock().get(id) {
            Some(r) => {
                r.stop.cancel();
                true
            }
            None => false,
        }
    }

    /// Stops every runner (the app quits).
    pub fn stop_all(&self) {
        for r in self.lock().values() {
            r.stop.cancel();
        }
    }

    /// Registers a runner: its generation, and the end of the stopped runner it takes over
    /// from (still winding down: it must release its batch before the new one claims it).
    /// None when batch `id` has a runner that was not stopped.
    fn insert(&self, id: &str, stop: CancellationToken) -> Option<Registered> {
        let mut running = self.lock();
        if running.get(id).is_some_and(|r| !r.stop.is_cancelled()) {
            return None;
        }
        let generation = self
            .generation
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let (ended, ended_rx) = tokio::sync::watch::channel(false);
        let previous = running.insert(
            id.to_string(),
            BatchRunner {
                stop,
                generation,
                ended: ended_rx,
            },
        );
        Some(Registered {
            generation,
            ended,
            after: previous.map(|p| p.ended),
        })
    }

    /// Removes runner `generation` of batch `id`, not a newer one that took its place.
    fn remove(&self, id: &str, generation: u64) {
        let mut running = self.lock();
        if running.get(id).is_some_and(|r| r.generation == generation) {
            running.remove(id);
        }
    }
}

struct BatchRunner {
    stop: CancellationToken,
    generation: u64,
    ended: tokio::sync::watch::Receiver<bool>,
}

struct Registered {
    generation: u64,
    /// Set when this runner has ended.
    ended: tokio::sync::watch::Sender<bool>,
    /// The end of the runner this one took over from.
    after: Option<tokio::sync::watch::Receiver<bool>>,
}

/// What the Batch view's form sends: a batch file, or one prompt over several repositories
/// (with the provider, model, mode and checks every task of it gets).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct BatchRequest {
    #[serde(default)]
    pub file: Option<String>,
    #[serde(default)]
    pub prompt: Option<String>,
    #[serde(default)]
    pub repos: Vec<String>,
    #[serde(default)]
    pub provider: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub mode: Option<String>,
    /// Absent: each repository's checks; `[]`: none; a list: these commands.
    #[serde(default)]
    pub checks: Option<Vec<String>>,
    /// Tasks at once (default 2).
    #[serde(default)]
    pub concurrency: Option<u32>,
}

/// An approval one of a batch's tasks waits for.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BatchApproval {
    pub task_id: TaskId,
    /// The item's number.
    pub n: u32,
    #[serde(flatten)]
    pub request: ApprovalRequested,
}

/// A batch, its items with their tasks, and the approvals its running tasks wait for.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BatchView {
    pub batch: BatchRow,
    pub items: Vec<BatchItemRow>,
    pub approvals: Vec<BatchApproval>,
}

/// What the Compare view's form sends.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct CompareStart {
    pub repo: String,
    pub prompt: String,
    #[serde(default)]
    pub base: Option<String>,
    /// Names of `[setups.NAME]` or inline `key=value,…`, 2 to 4.
    pub setups: Vec<String>,
    /// Runs per setup (default 1).
    #[serde(default)]
    pub runs: Option<u32>,
    /// Runs at once (default: every run of one round, at most 4).
    #[serde(default)]
    pub concurrency: Option<u32>,
}

fn bad_request(message: impl Into<String>) -> IpcError {
    IpcError::new("bad_request", message)
}

/// A bad file, line, repository or setup is the user's to fix: `bad_request` with the
/// parser's words (they name the line).
fn refused(err: CoreError) -> IpcError {
    match err {
        CoreError::Config(message) => bad_request(message),
        other => other.into(),
    }
}

/// The tasks of a batch run in the app's engine; keys come from the keychain.
struct AppFollower {
    engine: Arc<Engine>,
}

impl Follower for AppFollower {
    fn sandbox(&self) -> bool {
        self.engine.sandbox
    }

    fn key(&self, provider: &str) -> Option<String> {
        crate::secrets::read(provider)
    }

    fn failed_to_start(&self, item: &ClaimedItem, task: &BatchTask, error: &CoreError) {
        tracing::warn!(
            "batch item {} ({}) could not start: {error}",
            item.n,
            task.repo
        );
    }

    fn follow(
        &self,
        _item: ClaimedItem,
        handle: TaskHandle,
    ) -> Pin<Box<dyn Future<Output = TaskStatus> + Send + 'static>> {
        let ended = self.engine.follow_to_end(handle);
        Box::pin(async move { ended.await.unwrap_or(TaskStatus::Failed) })
    }
}

/// Runs batch `id` in the background (resuming what it left); refused when it runs already.
fn spawn_run(engine: &Arc<Engine>, id: &str, concurrency: Option<u32>) -> Result<(), IpcError> {
    let stop = CancellationToken::new();
    let Some(registered) = engine.batches.insert(id, stop.clone()) else {
        return Err(IpcError::new(
            "batch_running",
            format!("batch {id} is running already"),
        ));
    };
    let follower: Arc<dyn Follower> = Arc::new(AppFollower {
        engine: Arc::clone(engine),
    });
    let (engine, id) = (Arc::clone(engine), id.to_string());
    tauri::async_runtime::spawn(async move {
        // A stopped runner still interrupting its tasks ends first (a dropped sender is an end).
        if let Some(mut after) = registered.after {
            let _ = after.wait_for(|ended| *ended).await;
        }
        let (home, store) = (engine.home.clone(), Arc::clone(&engine.store));
        match batch::run(home, store, &id, concurrency, follower, stop).await {
            Ok(report) if report.stopped => tracing::info!("batch {id} stopped; resume it later"),
            Ok(report) => tracing::info!(
                "batch {id} ended: {} of {} completed",
                report
                    .items
                    .iter()
                    .filter(|(_, s)| *s == Some(TaskStatus::Completed))
                    .count(),
                report.items.len()
            ),
            Err(e) => tracing::warn!("batch {id} stopped with an error: {e}"),
        }
        engine.batches.remove(&id, registered.generation);
        let _ = registered.ended.send(true);
    });
    Ok(())
}

/// The batches this app ran just before a read of the journal.
struct Shown {
    running: std::collections::HashSet<String>,
}

impl Shown {
    /// A batch as the window should see it: one this app owns but did not run before the row
    /// was read (it was stopped) is interrupted, not running. Asking the runners after the
    /// read instead took a batch whose runner finished between the two — its row still
    /// running, its last item not yet done — for a stopped one, and the window stopped
    /// reading it again.
    fn row(&self, mut row: BatchRow) -> BatchRow {
        if row.status == BatchStatus::Running
            && row.owner_pid == std::process::id()
            && !self.running.contains(&row.id)
        {
            row.status = BatchStatus::Interrupted;
        }
        row
    }
}

/// Queues the tasks of a batch file, or of one prompt over several repositories, and runs them
/// `concurrency` at a time. Nothing is queued when a task is bad.
pub fn start_batch(engine: &Arc<Engine>, req: BatchRequest) -> Result<String, IpcError> {
    let file = req.file.filter(|f| !f.trim().is_empty());
    let prompt = req.prompt.filter(|p| !p.trim().is_empty());
    let concurrency = req.concurrency.unwrap_or(batch::DEFAULT_CONCURRENCY);
    if !(1..=batch::MAX_CONCURRENCY).contains(&concurrency) {
        return Err(bad_request(format!(
            "concurrency must be between 1 and {}",
            batch::MAX_CONCURRENCY
        )));
    }
    let (name, spec, tasks) = match (file, prompt) {
        (Some(file), None) => {
            let tasks = batch::parse_file(Path::new(file.trim()), &engine.home).map_err(refused)?;
            let spec = serde_json::json!({ "file": file });
            (file, spec, tasks)
        }
        (None, Some(prompt)) => {
            let repos: Vec<PathBuf> = req
                .repos
                .iter()
                .map(|r| r.trim())
                .filter(|r| !r.is_empty())
                .map(PathBuf::from)
                .collect();
            if repos.is_empty() {
                return Err(bad_request(
                    "add at least one repository for the prompt to run in",
                ));
            }
            let common = BatchTask {
                prompt: prompt.clone(),
                provider: req.provider.filter(|p| !p.trim().is_empty()),
                model: req.model.filter(|m| !m.trim().is_empty()),
                mode: req.mode.filter(|m| !m.trim().is_empty()),
                checks: req.checks,
                ..BatchTask::default()
            };
            let tasks = batch::prompt_tasks(&common, &repos, &engine.home).map_err(refused)?;
            let spec = serde_json::json!({ "prompt": prompt, "repos": repos });
            (prompt, spec, tasks)
        }
        (Some(_), Some(_)) => {
            return Err(bad_request(
                "choose a batch file or write a prompt, not both",
            ));
        }
        (None, None) => {
            return Err(bad_request(
                "choose a batch file, or write a prompt and add the repositories it runs in",
            ));
        }
    };
    let items: Vec<(Option<String>, BatchTask)> = tasks.into_iter().map(|t| (None, t)).collect();
    let id = batch::create(&engine.store, "batch", &name, concurrency, &spec, &items)?;
    spawn_run(engine, &id, None)?;
    Ok(id)
}

/// Every batch and comparison, newest first.
pub fn list(engine: &Engine, kind: Option<&str>) -> Result<Vec<BatchRow>, IpcError> {
    let shown = engine.batches.snapshot();
    Ok(engine
        .store
        .batches(kind)?
        .into_iter()
        .map(|b| shown.row(b))
        .collect())
}

/// Batch `id` (a unique prefix), its items, and the approvals its running tasks wait for.
pub fn status(engine: &Engine, id: &str) -> Result<BatchView, IpcError> {
    let shown = engine.batches.snapshot();
    let row = shown.row(engine.store.find_batch(id, None)?);
    let items = engine.store.batch_items(&row.id)?;
    let approvals = items
        .iter()
        .filter(|i| i.state == BatchItemState::Started)
        .filter_map(|i| i.task_id.as_ref().map(|t| (i.n, t)))
        .flat_map(|(n, task)| {
            engine
                .pending_approvals(task)
                .into_iter()
                .map(move |request| BatchApproval {
                    task_id: task.clone(),
                    n,
                    request,
                })
        })
        .collect();
    Ok(BatchView {
        batch: row,
        items,
        approvals,
    })
}

/// Continues a stopped or interrupted batch (with a new concurrency when given).
pub fn resume(engine: &Arc<Engine>, id: &str, concurrency: Option<u32>) -> Result<(), IpcError> {
    let shown = engine.batches.snapshot();
    let row = shown.row(engine.store.find_batch(id, None)?);
    match row.status {
        BatchStatus::Finished => Err(bad_request(format!(
            "batch {} is finished: every item ran",
            row.id
        ))),
        BatchStatus::Running if engine.batches.is_running(&row.id) => Err(IpcError::new(
            "batch_running",
            format!("batch {} is running already", row.id),
        )),
        BatchStatus::Running => Err(IpcError::new(
            "batch_running",
            format!(
                "batch {} is run by another process (pid {}): stop it there first",
                row.id, row.owner_pid
            ),
        )),
        BatchStatus::Interrupted => spawn_run(engine, &row.id, concurrency),
    }
}

/// Stops batch `id`: its running tasks end interrupted, the rest waits for a resume.
pub fn stop(engine: &Engine, id: &str) -> Result<(), IpcError> {
    let row = engine.store.find_batch(id, None)?;
    // A runner winding down (its batch already released: interrupted or finished) is not
    // running any more, whatever its entry says.
    if row.status == BatchStatus::Running && engine.batches.stop(&row.id) {
        Ok(())
    } else {
        Err(IpcError::new(
            "not_running",
            format!("batch {} is not running in this app", row.id),
        ))
    }
}

/// At start: continues every batch (and comparison) whose owner died, in the background.
/// Returns their ids.
pub fn resume_interrupted(engine: &Arc<Engine>) -> Vec<String> {
    let rows = match engine.store.batches(None) {
        Ok(rows) => rows,
        Err(e) => {
            tracing::warn!("the interrupted batches could not be read: {e}");
            return Vec::new();
        }
    };
    rows.into_iter()
        .filter(|b| b.status == BatchStatus::Interrupted)
        .filter_map(|b| match spawn_run(engine, &b.id, None) {
            Ok(()) => Some(b.id),
            Err(e) => {
                tracing::warn!("batch {} could not be continued: {e}", b.id);
                None
            }
        })
        .collect()
}

/// Queues a comparison's runs and runs them; returns its id.
pub fn start_compare(engine: &Arc<Engine>, req: CompareStart) -> Result<String, IpcError> {
    if req.repo.trim().is_empty() {
        return Err(bad_request("choose a repository: the path of a git folder"));
    }
    if req.prompt.trim().is_empty() {
        return Err(bad_request(
            "say what the agent should do: the prompt is empty",
        ));
    }
    let request = CompareRequest {
        repo: PathBuf::from(req.repo.trim()),
        prompt: req.prompt,
        base: req.base.filter(|b| !b.trim().is_empty()),
        setups: req
            .setups
            .into_iter()
            .filter(|s| !s.trim().is_empty())
            .collect(),
        runs: req.runs.unwrap_or(1),
        concurrency: req.concurrency,
    };
    let id = compare::create(&engine.store, &engine.home, &request).map_err(refused)?;
    spawn_run(engine, &id, None)?;
    Ok(id)
}

/// Comparison `id` (the latest when None) with its figures and each run's diff.
pub fn comparison(engine: &Engine, id: Option<&str>) -> Result<Comparison, IpcError> {
    let shown = engine.batches.snapshot();
    let mut c = compare::comparison(&engine.store, &engine.home, id, true)?;
    c.batch = shown.row(c.batch);
    Ok(c)
}

/// Accepts every hunk of one run (`A#2`, or its task's id) and merges it, as the review view's
/// "accept all" and "merge" do; the other runs are left as they are.
pub async fn merge_run(
    engine: &Arc<Engine>,
    id: &str,
    run: &str,
    into: Option<String>,
) -> Result<MergeOutcome, IpcError> {
    let c = compare::comparison(&engine.store, &engine.home, Some(id), false)?;
    let picked = compare::pick(&c, run).map_err(refused)?;
    let task = match (&picked.task_id, picked.state) {
        (Some(task), BatchItemState::Done) => task.clone(),
        _ => {
            return Err(bad_request(format!(
                "run {} has not finished: merge it once it has",
                picked.label
            )));
        }
    };
    // The runs start from a commit, not a branch: by default the branch the comparison named
    // as its base, else the one the repository has checked out.
    let into = match into.filter(|b| !b.trim().is_empty()) {
        Some(b) => b,
        None => default_branch(&c)?,
    };
    let reviewer = Reviewer::open(&engine.home, Arc::clone(&engine.store), task.as_str())?;
    reviewer.verdict(Verdict::Accept, &Selector::All)?;
    Ok(reviewer
        .merge_gated(&MergeRequest {
            into: Some(into),
            mode: MergeMode::Squash,
            message: None,
            override_checks: None,
        })
        .await?)
}

/// Where a run merges unless told: the branch the comparison's base was on (as `bosun compare
/// merge` does), else the branch checked out in its repository.
fn default_branch(c: &Comparison) -> Result<String, IpcError> {
    if let Some(base) = &c.base_ref {
        return Ok(base.clone());
    }
    let branches = crate::branches::local_branches(Path::new(&c.repo))?;
    branches.current.ok_or_else(|| {
        bad_request(
            "the repository has no branch checked out: name the branch to merge the run into",
        )
    })
}

/// The `[setups.NAME]` names of config.toml, for the Compare form.
pub fn setups(engine: &Engine) -> Result<Vec<String>, IpcError> {
    let config = BosunConfig::load(&engine.home).map_err(refused)?;
    Ok(config.setups.keys().cloned().collect())
}

#[tauri::command(async)]
pub fn batch_start(runner: State<'_, Runner>, request: BatchRequest) -> Result<String, IpcError> {
    start_batch(runner.engine()?, request)
}

#[tauri::command(async)]
pub fn batch_list(runner: State<'_, Runner>) -> Result<Vec<BatchRow>, IpcError> {
    list(runner.engine()?, Some("batch"))
}

#[tauri::command(async)]
pub fn batch_status(runner: State<'_, Runner>, id: String) -> Result<BatchView, IpcError> {
    status(runner.engine()?, &id)
}

#[tauri::command(async)]
pub fn batch_resume(
    runner: State<'_, Runner>,
    id: String,
    concurrency: Option<u32>,
) -> Result<(), IpcError> {
    resume(runner.engine()?, &id, concurrency)
}

#[tauri::command(async)]
pub fn batch_stop(runner: State<'_, Runner>, id: String) -> Result<(), IpcError> {
    stop(runner.engine()?, &id)
}

#[tauri::command(async)]
pub fn compare_start(runner: State<'_, Runner>, request: CompareStart) -> Result<String, IpcError> {
    start_compare(runner.engine()?, request)
}

#[tauri::command(async)]
pub fn compare_list(runner: State<'_, Runner>) -> Result<Vec<BatchRow>, IpcError> {
    list(runner.engine()?, Some("compare"))
}

#[tauri::command(async)]
pub fn compare_status(
    runner: State<'_, Runner>,
    id: Option<String>,
) -> Result<Comparison, IpcError> {
    comparison(runner.engine()?, id.as_deref())
}

#[tauri::command]
pub async fn compare_merge(
    runner: State<'_, Runner>,
    id: String,
    run: String,
    into: Option<String>,
) -> Result<MergeOutcome, IpcError> {
    let engine = Arc::clone(runner.engine()?);
    merge_run(&engine, &id, &run, into).await
}

#[tauri::command(async)]
pub fn setups_list(runner: State<'_, Runner>) -> Result<Vec<String>, IpcError> {
    setups(runner.engine()?)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn row(id: &str, status: BatchStatus, owner_pid: u32) -> BatchRow {
        BatchRow {
            id: id.into(),
            kind: "compare".into(),
            name: "n".into(),
            concurrency: 1,
            status,
            created_at: "2026-12-03T00:00:00Z".into(),
            finished_at: None,
            owner_pid,
            items: 2,
            queued: 0,
            started: 1,
            done: 1,
            spec: "{}".into(),
        }
    }

    /// A runner that ended after the snapshot (between it and the journal's read, whose row
    /// still says running) keeps its batch running for the window, which then reads it again;
    /// one this app owns without a runner at the snapshot was stopped.
    #[tokio::test]
    async fn a_batch_whose_runner_ends_during_the_read_is_not_shown_stopped() {
        let runs = BatchRuns::default();
        let me = std::process::id();
        let registered = runs.insert("b1", CancellationToken::new()).unwrap();
        let shown = runs.snapshot();
        // The runner finishes now, after the snapshot, before the row is looked at.
        runs.remove("b1", registered.generation);
        assert!(!runs.is_running("b1"));
        assert_eq!(
            shown.row(row("b1", BatchStatus::Running, me)).status,
            BatchStatus::Running
        );
        // Not run here when the read began: stopped (interrupted), unless another process owns it.
        let later = runs.snapshot();
        assert_eq!(
            later.row(row("b1", BatchStatus::Running, me)).status,
            BatchStatus::Interrupted
        );
        assert_eq!(
            later.row(row("b1", BatchStatus::Running, me + 1)).status,
            BatchStatus::Running
        );
        assert_eq!(
            later.row(row("b1", BatchStatus::Finished, me)).status,
            BatchStatus::Finished
        );
    }

    /// The requests `ui/src/lib/ipc/batch.ts` sends.
    #[test]
    fn the_forms_requests_deserialize() {
        let req: BatchRequest = serde_json::from_value(json!({
            "prompt": "Fix it", "repos": ["/a", "/b"], "mode": "full-auto", "checks": null, "concurrency": 3
        }))
        .unwrap();
        assert_eq!(req.repos, vec!["/a".to_string(), "/b".to_string()]);
        assert_eq!(req.checks, None);
        assert_eq!(req.concurrency, Some(3));
        let req: BatchRequest = serde_json::from_value(json!({"file": "/t.toml"})).unwrap();
        assert_eq!(req.file.as_deref(), Some("/t.toml"));
        let req: CompareStart = serde_json::from_value(json!({
            "repo": "/a", "prompt": "x", "setups": ["mode=full-auto", "fast"], "runs": 2
        }))
        .unwrap();
        assert_eq!(req.runs, Some(2));
        assert_eq!(req.base, None);
    }
}
