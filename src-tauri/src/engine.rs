//! The engine inside the app: starts tasks with `bosun_core::start_task` on the app's own journal
//! connection, keeps each running task's op sender, and drains its events (already journaled: the
//! UI gets them through the [`Bridge`]). It tracks which tasks wait for an approval, for the
//! sidebar's badges, and interrupts every task it runs when the app quits.

use crate::bridge::Bridge;
use crate::error::IpcError;
use bosun_core::{BosunConfig, ProviderEntry, TaskSpec, secret_env_names};
use bosun_policy::Mode;
use bosun_protocol::{ApprovalAnswer, EventMsg, Op, PinOp, TaskId};
use bosun_store::Store;
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::sync::mpsc::UnboundedSender;
use tokio::sync::oneshot;

/// Model requests a task makes at most when the form leaves the limit empty.
pub const DEFAULT_MAX_STEPS: u32 = 100;

/// Which model serves a task: a provider of `$BOSUN_HOME/config.toml` by name, or one described
/// in full by the form.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum ProviderChoice {
    Inline {
        /// `openai-chat` or `anthropic`.
        api: String,
        #[serde(default)]
        base_url: Option<String>,
        model: String,
        #[serde(default)]
        api_key_env: Option<String>,
    },
    Named {
        name: String,
        #[serde(default)]
        model: Option<String>,
    },
}

/// What the "New task" form sends.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct LaunchRequest {
    pub repo: String,
    pub prompt: String,
    #[serde(default)]
    pub base: Option<String>,
    /// Absent: the repository's provider, else `[routing] main`, else `default_provider`.
    #[serde(default)]
    pub provider: Option<ProviderChoice>,
    #[serde(default)]
    pub mode: Option<Mode>,
    #[serde(default)]
    pub max_steps: Option<u32>,
    #[serde(default)]
    pub max_cost_usd: Option<f64>,
    /// The checks for this task: absent, the repository's; `[]`, none; a list, exactly these.
    #[serde(default)]
    pub checks: Option<Vec<bosun_protocol::CheckSpec>>,
    /// Files (relative to the repository) kept in every model request, never dropped by
    /// compaction.
    #[serde(default)]
    pub pins: Vec<String>,
    /// "Plan first": the planner role writes a task graph and its nodes run as sub-agents.
    #[serde(default)]
    pub plan: bool,
}

struct Running {
    ops: UnboundedSender<Op>,
    /// Approvals asked and not answered yet, by id.
    waiting: BTreeMap<String, bosun_protocol::ApprovalRequested>,
}

/// What [`Engine::with_approval_hook`] calls: the task and the request it waits on.
pub type ApprovalHook = Box<dyn Fn(&TaskId, &bosun_protocol::ApprovalRequested) + Send + Sync>;

pub struct Engine {
    pub(crate) home: PathBuf,
    pub(crate) store: Arc<Store>,
    bridge: Option<Arc<Bridge>>,
    pub(crate) sandbox: bool,
    /// Called when a task this engine runs starts waiting for an approval (the desktop notification).
    on_approval: Option<ApprovalHook>,
    running: Mutex<HashMap<TaskId, Running>>,
    ended: Condvar,
    /// The worktree the New task form has prepared.
    preparation: crate::prepare::Preparation,
    /// The batches and comparisons this app runs (their tasks run here like any other).
    pub(crate) batches: crate::batch::BatchRuns,
}

fn bad_request(message: impl Into<String>) -> IpcError {
    IpcError::new("bad_request", message)
}

fn not_running(task: &TaskId) -> IpcError {
    IpcError::new(
        "not_running",
        format!(
            "task {task} is not running in this app (it finished, or another process such as `bosun run` owns it: answer it there)"
        ),
    )
}

impl Engine {
    /// An engine writing to `store` (its own connection) with `home` as `$BOSUN_HOME`. Commands run
    /// sandboxed when `sandbox` is true (the app binary is then the trampoline).
    pub fn new(home: PathBuf, store: Arc<Store>, sandbox: bool) -> Engine {
        Engine {
            home,
            store,
            bridge: None,
            sandbox,
            on_approval: None,
            running: Mutex::new(HashMap::new()),
            ended: Condvar::new(),
            preparation: crate::prepare::Preparation::default(),
            batches: crate::batch::BatchRuns::default(),
        }
    }

    /// Calls `hook` whenever a task this engine runs starts waiting for an approval.
    pub fn with_approval_hook(mut self, hook: ApprovalHook) -> Engine {
        self.on_approval = Some(hook);
        self
    }

    /// Reports the tasks waiting for approval to the bridge's task-list subscribers.
    pub fn with_bridge(mut self, bridge: Arc<Bridge>) -> Engine {
        self.bridge = Some(bridge);
        self
    }

    /// Builds the task from the form, starts it, and follows it until it ends. Returns its id
    /// once its worktree exists and its first events are in the journal.
    pub async fn start(self: &Arc<Self>, req: LaunchRequest) -> Result<TaskId, IpcError> {
        self.preparation.settle(&req.repo).await;
        let spec = self.spec(req)?;
        let handle = bosun_core::start_task(spec, Arc::clone(&self.store))
            .await
            .map_err(|e| IpcError::new("start_failed", e.to_string()))?;
        Ok(self.follow(handle))
    }

    /// A new task from checkpoint `checkpoint` of `task` (0: its base) with `prompt`, on the
    /// model the task used; it runs in the app like any task.
    pub async fn fork(
        self: &Arc<Self>,
        task: &TaskId,
        checkpoint: u32,
        prompt: String,
    ) -> Result<TaskId, IpcError> {
        let row = self.store.task(task)?;
        bosun_core::CoreError::refuse_imported(&row, "forked")?;
        let started = self
            .store
            .events(&row.id, 0, 1)?
            .into_iter()
            .find_map(|e| match e.msg {
                bosun_protocol::EventMsg::TaskStarted(t) => Some(t),
                _ => None,
            })
            .ok_or_else(|| bad_request(format!("task {} has no start in the journal", row.id)))?;
        let req = LaunchRequest {
            repo: row.repo.clone(),
            prompt,
            base: None,
            provider: Some(ProviderChoice::Inline {
                api: started.api.clone(),
                base_url: Some(started.base_url.clone()).filter(|u| !u.is_empty()),
                model: started.model.clone(),
                api_key_env: started.api_key_env.clone(),
            }),
            mode: started.mode.as_deref().and_then(|m| m.parse().ok()),
            max_steps: None,
            max_cost_usd: started.max_cost_usd,
            checks: None,
            pins: Vec::new(),
            plan: false,
        };
        let mut spec = self.spec(req)?;
        spec.fork = Some(bosun_protocol::ForkedFrom {
            task: row.id.clone(),
            checkpoint,
        });
        let handle = bosun_core::start_task(spec, Arc::clone(&self.store))
            .await
            .map_err(|e| IpcError::new(e.code(), e.to_string()))?;
        Ok(self.follow(handle))
    }

    /// The New task form picked `repo` (and `base`): prepare a worktree for its task now.
    pub async fn prepare_worktree(&self, repo: &str, base: Option<&str>) -> Result<(), IpcError> {
        self.preparation
            .prepare(&self.home, repo, base, Arc::clone(&self.store))
            .await
    }

    /// The New task form closed without starting: remove what it prepared.
    pub async fn release_prepared_worktree(&self) {
        self.preparation.release(&self.home).await;
    }

    /// Keeps a started task's op sender and drains its events until it ends.
    pub(crate) fn follow(self: &Arc<Self>, handle: bosun_core::TaskHandle) -> TaskId {
        self.follow_until(handle, None)
    }

    /// Follows a task started elsewhere (a batch's runner) like one started here; the receiver
    /// gets its final status when it ends.
    pub fn follow_to_end(
        self: &Arc<Self>,
        handle: bosun_core::TaskHandle,
    ) -> oneshot::Receiver<bosun_protocol::TaskStatus> {
        let (tx, rx) = oneshot::channel();
        self.follow_until(handle, Some(tx));
        rx
    }

    fn follow_until(
        self: &Arc<Self>,
        mut handle: bosun_core::TaskHandle,
        ended: Option<oneshot::Sender<bosun_protocol::TaskStatus>>,
    ) -> TaskId {
        let task = handle.task_id.clone();
        self.lock().insert(
            task.clone(),
            Running {
                ops: handle.ops.clone(),
                waiting: BTreeMap::new(),
            },
        );
        self.publish_owned();
        let engine = Arc::clone(self);
        let id = task.clone();
        tokio::spawn(async move {
            let mut telemetry = crate::telemetry::start(&engine.home);
            while let Some(ev) = handle.events.recv().await {
                if let Some(t) = telemetry.as_mut() {
                    // A sub-agent's events are in the journal once it has finished.
                    let store = &engine.store;
                    t.observe_tree(&ev, &|child| {
                        store.events(child, 0, usize::MAX).unwrap_or_default()
                    });
                }
                match &ev.msg {
                    EventMsg::ApprovalRequested(r) => {
                        engine.asked(&id, r);
                        if let Some(hook) = &engine.on_approval {
                            hook(&id, r);
                        }
                    }
                    EventMsg::ApprovalResolved(r) => engine.resolved(&id, &r.approval_id),
                    EventMsg::TaskFinished(_) => {
                        engine.lock().remove(&id);
                        engine.publish_owned();
                        engine.ended.notify_all();
                    }
                    _ => {}
                }
            }
            let status = match handle.join.await {
                Ok(Ok(outcome)) => Some(outcome.status),
                Ok(Err(err)) => {
                    tracing::warn!("task {id} stopped with an error: {err}");
                    None
                }
                Err(err) => {
                    tracing::error!("task {id}'s loop panicked: {err}");
                    None
                }
            };
            engine.lock().remove(&id);
            engine.publish_owned();
            engine.ended.notify_all();
            if let Some(ended) = ended {
                // The journal's word when the loop did not say (it failed or panicked).
                let status = status
                    .or_else(|| engine.store.task(&id).ok().map(|t| t.status))
                    .filter(|s| *s != bosun_protocol::TaskStatus::Running)
                    .unwrap_or(bosun_protocol::TaskStatus::Failed);
                let _ = ended.send(status);
            }
            // After the task is over for everyone waiting on it: the export's flush never
            // holds up a batch.
            crate::telemetry::finish(&id, telemetry).await;
        });
        task
    }

    /// Asks a running task to stop; it ends as `interrupted` at its next safe point.
    pub fn stop(&self, task: &TaskId) -> Result<(), IpcError> {
        self.send(task, Op::Interrupt)
    }

    /// Answers one of a running task's approval requests.
    pub fn answer(&self, task: &TaskId, mut answer: ApprovalAnswer) -> Result<(), IpcError> {
        if answer.by.as_deref().is_none_or(str::is_empty) {
            answer.by = Some("app".into());
        }
        let known = self
            .lock()
            .get(task)
            .map(|r| r.waiting.contains_key(&answer.approval_id));
        match known {
            None => Err(not_running(task)),
            Some(false) => Err(IpcError::new(
                "not_waiting",
                format!(
                    "task {task} does not wait for approval {} (already answered?)",
                    answer.approval_id
                ),
            )),
            Some(true) => self.send(task, Op::Approval(answer)),
        }
    }

    /// Pins or unpins something of a running task (see `Op::Pin`).
    pub fn pin(&self, task: &TaskId, mut pin: PinOp) -> Result<(), IpcError> {
        if pin.by.as_deref().is_none_or(str::is_empty) {
            pin.by = Some("app".into());
        }
        self.send(task, Op::Pin(pin))
    }

    /// The tasks this app runs, and how many approvals each waits for.
    pub fn running(&self) -> Vec<(TaskId, usize)> {
        let mut out: Vec<_> = self
            .lock()
            .iter()
            .map(|(id, r)| (id.clone(), r.waiting.len()))
            .collect();
        out.sort();
        out
    }

    /// The approvals a running task waits for, as this engine has seen them (a moment after they
    /// reach the journal).
    pub fn waiting_for(&self, task: &TaskId) -> Vec<String> {
        self.lock()
            .get(task)
            .map(|r| r.waiting.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// The approval requests a running task waits for, in the order of their ids.
    pub fn pending_approvals(&self, task: &TaskId) -> Vec<bosun_protocol::ApprovalRequested> {
        self.lock()
            .get(task)
            .map(|r| r.waiting.values().cloned().collect())
            .unwrap_or_default()
    }

    /// Interrupts every running task and waits up to `grace` for them to end (blocking). Returns
    /// how many were still running when the time was up. The batches it runs are stopped first,
    /// so their interrupted tasks stay theirs and resume with them.
    pub fn shutdown(&self, grace: Duration) -> usize {
        self.batches.stop_all();
        let deadline = Instant::now() + grace;
        let mut running = self.lock();
        for r in running.values() {
            let _ = r.ops.send(Op::Interrupt);
        }
        while !running.is_empty() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            running = match self.ended.wait_timeout(running, left) {
                Ok((guard, _)) => guard,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
        running.len()
    }

    fn spec(&self, req: LaunchRequest) -> Result<TaskSpec, IpcError> {
        if req.repo.trim().is_empty() {
            return Err(bad_request("choose a repository: the path of a git folder"));
        }
        if req.prompt.trim().is_empty() {
            return Err(bad_request(
                "say what the agent should do: the prompt is empty",
            ));
        }
        if req.max_steps == Some(0) {
            return Err(bad_request("max steps must be at least 1"));
        }
        if let Some(max) = req.max_cost_usd
            && !(max.is_finite() && max >= 0.0)
        {
            return Err(bad_request(
                "max cost must be a non-negative number of dollars",
            ));
        }
        // Limits the form leaves empty come from the repository's settings (README).
        let settings = bosun_workspace::resolve_repo(Path::new(req.repo.trim()))
            .map_err(|e| IpcError::new("start_failed", e.to_string()))
            .and_then(|root| {
                let config =
                    BosunConfig::load(&self.home).map_err(|e| bad_request(e.to_string()))?;
                bosun_core::repo_settings::effective(
                    &config,
                    &root,
                    &bosun_core::repo_settings::Explicit {
                        provider: None,
                        max_steps: req.max_steps,
                        max_cost_usd: req.max_cost_usd,
                    },
                    DEFAULT_MAX_STEPS,
                )
                .map_err(|e| bad_request(e.to_string()))
            })?;
        let max_steps = settings.max_steps.value;
        let max_cost_usd = settings.max_cost_usd.map(|c| c.value);
        // No choice in the form: the repository's provider, `[routing] main` or the default.
        let choice = match req.provider {
            Some(choice) => choice,
            None => ProviderChoice::Named {
                name: match settings.provider {
                    Some(p) => p.value,
                    None => {
                        BosunConfig::load(&self.home)
                            .and_then(|c| c.provider(None))
                            .map_err(|e| bad_request(e.to_string()))?
                            .0
                    }
                },
                model: None,
            },
        };
        let named = matches!(choice, ProviderChoice::Named { .. });
        let (name, entry) = match choice {
            ProviderChoice::Inline {
                api,
                base_url,
                model,
                api_key_env,
            } => {
                if model.trim().is_empty() {
                    return Err(bad_request("choose a model"));
                }
                let name = if api == "anthropic" {
                    "anthropic"
                } else {
                    "openai-compat"
                };
                let entry = ProviderEntry {
                    api,
                    base_url: base_url.filter(|u| !u.trim().is_empty()),
                    model: model.trim().to_string(),
                    api_key_env: api_key_env.filter(|v| !v.trim().is_empty()),
                    ..ProviderEntry::default()
                };
                (name.to_string(), entry)
            }
            ProviderChoice::Named { name, model } => {
                let config =
                    BosunConfig::load(&self.home).map_err(|e| bad_request(e.to_string()))?;
                let (name, mut entry) = config
                    .provider(Some(&name))
                    .map_err(|e| bad_request(e.to_string()))?;
                if let Some(m) = model.filter(|m| !m.trim().is_empty()) {
                    entry.model = m;
                }
                (name, entry)
            }
        };
        let mut provider = entry
            .to_provider_config(&name, &|var| std::env::var(var).ok())
            .map_err(|e| bad_request(e.to_string()))?;
        // A saved provider without a key variable may keep its key in the keychain (Settings).
        if named
            && entry.api_key_env.is_none()
            && let Some(key) = crate::secrets::read(&name)
        {
            provider.api_key = Some(bosun_model::Secret::new(key));
        }
        let mut env_remove =
            secret_env_names(std::env::vars_os().filter_map(|(k, _)| k.into_string().ok()));
        if let Some(var) = &entry.api_key_env {
            env_remove.push(var.clone());
        }
        let checks = match req.checks {
            None => bosun_core::checks::ChecksChoice::Repository,
            Some(list) if list.is_empty() => bosun_core::checks::ChecksChoice::None,
            Some(list) => bosun_core::checks::ChecksChoice::These(list),
        };
        Ok(TaskSpec {
            id: None,
            context: None,
            fork: None,
            checks,
            max_check_rounds: None,
            max_nudges: None,
            pins: req.pins,
            link: None,
            transcript: Vec::new(),
            plan: req.plan,
            home: self.home.clone(),
            repo: PathBuf::from(req.repo.trim()),
            prompt: req.prompt,
            base: req.base.filter(|b| !b.trim().is_empty()),
            provider,
            max_steps,
            max_cost_usd,
            policy_file: None,
            mode: req.mode,
            api_key_env: entry.api_key_env.clone(),
            sandbox: self.sandbox,
            env_remove,
        })
    }

    fn send(&self, task: &TaskId, op: Op) -> Result<(), IpcError> {
        let running = self.lock();
        let r = running.get(task).ok_or_else(|| not_running(task))?;
        r.ops.send(op).map_err(|_| not_running(task))
    }

    fn asked(&self, task: &TaskId, request: &bosun_protocol::ApprovalRequested) {
        if let Some(r) = self.lock().get_mut(task) {
            r.waiting
                .insert(request.approval_id.clone(), request.clone());
        }
        self.publish_owned();
    }

    fn resolved(&self, task: &TaskId, approval: &str) {
        if let Some(r) = self.lock().get_mut(task) {
            r.waiting.remove(approval);
        }
        self.publish_owned();
    }

    fn publish_owned(&self) {
        if let Some(bridge) = &self.bridge {
            let owned = self
                .running()
                .into_iter()
                .map(|(id, n)| (id.0, n))
                .collect();
            bridge.set_owned(owned);
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<TaskId, Running>> {
        self.running
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use serde_json::json;

    /// The request `ui/src/lib/ipc/tasks.ts` sends, both ways of naming a provider.
    #[test]
    fn the_form_request_deserializes() {
        let req: LaunchRequest = serde_json::from_value(json!({
            "repo": "/work/acme", "prompt": "Fix it",
            "provider": {"api": "openai-chat", "model": "qwen", "base_url": "http://127.0.0.1:11434/v1"},
            "mode": "auto-edit", "max_steps": 20, "max_cost_usd": 0.5
        }))
        .unwrap();
        assert_eq!(req.mode, Some(Mode::AutoEdit));
        assert_eq!(req.max_steps, Some(20));
        assert!(
            matches!(req.provider, Some(ProviderChoice::Inline { ref model, .. }) if model == "qwen")
        );

        let req: LaunchRequest = serde_json::from_value(json!({
            "repo": ".", "prompt": "x", "provider": {"name": "local"}
        }))
        .unwrap();
        assert_eq!(
            req.provider,
            Some(ProviderChoice::Named {
                name: "local".into(),
                model: None
            })
        );
        assert_eq!(req.mode, None);
        let req: LaunchRequest =
            serde_json::from_value(json!({"repo": ".", "prompt": "x"})).unwrap();
        assert_eq!(
            req.provider, None,
            "the repository's, [routing] main or the default"
        );
    }
}
