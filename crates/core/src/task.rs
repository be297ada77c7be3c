//! A task: setup (repository, base, worktree, journal row) and the loop.

use crate::approvals::ApprovalGate;
use crate::checkpoint::Checkpointer;
use crate::checks::{CheckPlan, ChecksChoice};
use crate::dispatch::{DispatchEnv, dispatch, refuse_duplicate};
use crate::policy_files::PolicyFiles;
use crate::redaction::Redaction;
use crate::sandboxing::Sandboxing;
use crate::turn::{TurnResult, run_turn};
use crate::{Budget, CoreError, Emitter};
use bosun_model::{ChatMessage, ModelClient, ModelRequest, PriceTable, ProviderConfig, ToolCall};
use bosun_policy::{Mode, Policy};
use bosun_protocol::{
    AssistantMessage, ErrorEvent, Event, EventMsg, Nudge, NudgeReason, Op, PlanUpdated,
    TaskFinished, TaskId, TaskStarted, TaskStatus, UserMessage, Warning,
};
use bosun_store::{NewTask, Store, now_rfc3339, process_start_time};
use bosun_tools::{ToolRegistry, Touched};
use bosun_workspace::TaskWorktree;
use std::path::{Path, PathBuf};
use std::sync::RwLock;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use verification::Verification;

mod compaction;
mod direct;
mod edit_blocks;
mod layers;
mod pins;
pub(crate) use pins::{emit_pins, files_to_pin, pins_to_take_back};
mod delegation;
mod plan_graph;
mod repo_map;
mod verification;

/// What to run.
pub struct TaskSpec {
    /// `$BOSUN_HOME`: worktrees, the journal and private indexes live here.
    pub home: PathBuf,
    /// Any path inside the user's repository.
    pub repo: PathBuf,
    pub prompt: String,
    /// Base ref or commit; default the repository's HEAD.
    pub base: Option<String>,
    pub provider: ProviderConfig,
    /// At most this many model requests.
    pub max_steps: u32,
    pub max_cost_usd: Option<f64>,
    /// `--policy FILE`: the highest policy layer.
    pub policy_file: Option<PathBuf>,
    /// `--mode`: overrides the mode the policy files set.
    pub mode: Option<Mode>,
    /// The name of the variable holding the key (recorded so a follow-up can use it again).
    pub api_key_env: Option<String>,
    /// Run commands in the sandbox (default). Off only when the user says so explicitly.
    pub sandbox: bool,
    /// Environment variables a command must not see (e.g. the provider's key variable).
    pub env_remove: Vec<String>,
    /// Which checks judge the task (`--check`, `--no-checks`, else the repository's).
    pub checks: ChecksChoice,
    /// `--max-check-rounds`.
    pub max_check_rounds: Option<u32>,
    /// `--max-nudges`: replies without progress Bosun answers before the task fails.
    pub max_nudges: Option<u32>,
    /// A fork of an earlier task from one of its checkpoints: `repo` and `base` are that task's
    /// (the base is its base commit), the worktree starts at the checkpoint, the conversation
    /// with what led there.
    pub fork: Option<bosun_protocol::ForkedFrom>,
    /// `--pin FILE`: files (relative to the repository) kept in every request, never dropped
    /// by compaction.
    pub pins: Vec<String>,
    /// A sub-agent: its parent, depth, role, scope and caps (None for the user's task).
    pub link: Option<crate::orchestrate::ChildLink>,
    /// The conversation the task starts with, before its prompt (a sub-agent the parent shares
    /// its transcript with).
    pub transcript: Vec<ChatMessage>,
    /// `bosun run --plan`: the `planner` role writes a task graph first, and it runs.
    pub plan: bool,
    /// The task's id, chosen by the caller (a batch's queue records it before the task starts,
    /// so a crash between the two never runs an item twice); `None`: a new one.
    pub id: Option<TaskId>,
    /// `[context]` settings for this task over `config.toml`'s (a compare setup's shares).
    pub context: Option<crate::config::ContextSettings>,
}

/// A running task: submit ops, consume events, await the outcome.
pub struct TaskHandle {
    pub task_id: TaskId,
    pub ops: mpsc::UnboundedSender<Op>,
    pub events: mpsc::UnboundedReceiver<Event>,
    pub join: JoinHandle<Result<TaskOutcome, CoreError>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TaskOutcome {
    pub status: TaskStatus,
    pub summary: String,
}

/// A new task id: a lowercase ULID, sortable by creation time.
pub fn new_task_id() -> TaskId {
    TaskId(ulid::Ulid::new().to_string().to_lowercase())
}

/// The price table: `$BOSUN_HOME/prices.toml`, then a snapshot from `bosun prices update`,
/// then Bosun's overrides, then the generated table (see `bosun_model::PriceTable::load`).
pub fn load_prices(home: &Path) -> Result<PriceTable, CoreError> {
    Ok(PriceTable::load(home)?)
}

/// Sets a task up (worktree, journal row, first events) and starts its loop.
pub async fn start_task(mut spec: TaskSpec, store: Arc<Store>) -> Result<TaskHandle, CoreError> {
    // A local server's model is probed the first time it is used (then cached).
    let completed = crate::profiles::complete(&spec.home, &mut spec.provider).await;
    let client = bosun_model::client(spec.provider.clone())?;
    let prices = load_prices(&spec.home)?;
    let task_id = spec.id.clone().unwrap_or_else(new_task_id);

    // A fork starts from the earlier task's base commit and repository, at its checkpoint.
    let (mut repo, mut base) = (spec.repo.clone(), spec.base.clone());
    let mut fork_point: Option<String> = None;
    let mut conversation: Vec<ChatMessage> = Vec::new();
    if let Some(from) = &spec.fork {
        let source = store.task(&from.task)?;
        repo = PathBuf::from(&source.repo);
        base = Some(source.base_commit.clone());
        fork_point = crate::fork::fork_commit(&store, from)?;
        conversation = crate::rebuild_conversation(&crate::fork::fork_prefix(&store, from, 0)?);
    }
    if conversation.is_empty() {
        conversation = std::mem::take(&mut spec.transcript);
    }
    let (home, id) = (spec.home.clone(), task_id.0.clone());
    let fork_message = spec.fork.as_ref().map(|f| {
        format!(
            "bosun: forked from task {} at checkpoint {}",
            f.task, f.checkpoint
        )
    });
    let (worktree, base_ref, adopted) = tokio::task::spawn_blocking(
        move || -> Result<(TaskWorktree, Option<String>, Option<bosun_workspace::Checkpoint>), CoreError> {
            let root = bosun_workspace::resolve_repo(&repo)?;
            let base_commit = bosun_workspace::resolve_base(&root, base.as_deref())?;
            let base_ref = bosun_workspace::base_branch(&root, base.as_deref());
            let mut worktree = TaskWorktree::create(&home, &root, &id, &base_commit)?;
            let adopted = match (&fork_point, &fork_message) {
                (Some(commit), Some(message)) => match worktree.adopt(commit, message) {
                    Ok(c) => c,
                    Err(e) => {
                        let _ = worktree.release();
                        return Err(e.into());
                    }
                },
                _ => None,
            };
            Ok((worktree, base_ref, adopted))
        },
    )
    .await
    .map_err(|e| CoreError::Internal(format!("worktree thread failed: {e}")))??;

    let policy_files = PolicyFiles::new(
        &spec.home,
        &worktree.repo_root,
        spec.policy_file.clone(),
        spec.mode,
    );
    let policy = match policy_files.load() {
        Ok(p) => p,
        Err(e) => {
            let _ = tokio::task::spawn_blocking(move || worktree.release()).await;
            return Err(e);
        }
    };
    let pins = match pins::files_to_pin(&spec.pins, &worktree.worktree, &policy) {
        Ok(p) => p,
        Err(e) => {
            let _ = tokio::task::spawn_blocking(move || worktree.release()).await;
            return Err(e);
        }
    };
    // The checks are found in the worktree as the task starts (the base, before the agent
    // changed anything), after the configured ones.
    let checks = crate::BosunConfig::load(&spec.home).and_then(|config| {
        crate::checks::plan(
            &config,
            &worktree.repo_root,
            Some(&worktree.worktree),
            &spec.checks,
            spec.max_check_rounds,
        )
    });
    let checks = match checks {
        Ok(c) => c,
        Err(e) => {
            let _ = tokio::task::spawn_blocking(move || worktree.release()).await;
            return Err(e);
        }
    };
    let max_nudges =
        match crate::nudge::load_max_nudges(&spec.home, &worktree.repo_root, spec.max_nudges) {
            Ok(n) => n,
            Err(e) => {
                let _ = tokio::task::spawn_blocking(move || worktree.release()).await;
                return Err(e);
            }
        };

    let redaction = Arc::new(Redaction::from_environment_passing(
        &crate::mcp::passed_names(&spec.home, &worktree.repo_root),
    ));
    let mut prompt = spec.prompt.clone();
    redaction.text(&mut prompt);

    let pid = std::process::id();
    let new_task = NewTask {
        id: task_id.clone(),
        repo: worktree.repo_root.display().to_string(),
        prompt: prompt.clone(),
        base_commit: worktree.base_commit.clone(),
        branch: worktree.branch.clone(),
        worktree: worktree.worktree.display().to_string(),
        provider: spec.provider.name.clone(),
        model: spec.provider.model.clone(),
        created_at: now_rfc3339(),
        owner_pid: pid,
        owner_started: process_start_time(pid),
        max_steps: spec.max_steps,
        max_cost_usd: spec.max_cost_usd,
        parent_task_id: spec.link.as_ref().map(|l| l.parent.clone()),
        role: spec.link.as_ref().map(|l| l.role.clone()),
        depth: spec.link.as_ref().map_or(0, |l| l.depth),
    };
    if let Err(e) = store.create_task(&new_task) {
        let _ = tokio::task::spawn_blocking(move || worktree.release()).await;
        return Err(e.into());
    }

    let (tx, rx) = mpsc::unbounded_channel();
    let emitter = Arc::new(
        Emitter::new(task_id.clone(), store, 0, tx).with_redaction(Arc::clone(&redaction)),
    );
    emitter.emit(EventMsg::TaskStarted(TaskStarted {
        repo: new_task.repo.clone(),
        base_commit: new_task.base_commit.clone(),
        base_ref: base_ref.clone(),
        branch: new_task.branch.clone(),
        worktree: new_task.worktree.clone(),
        prompt: spec.prompt.clone(),
        provider: spec.provider.name.clone(),
        model: spec.provider.model.clone(),
        api: spec.provider.api.as_str().to_string(),
        base_url: spec.provider.base_url.clone(),
        api_key_env: spec.api_key_env.clone(),
        mode: spec.mode.map(|m| m.as_str().to_string()),
        max_cost_usd: spec.max_cost_usd,
        forked_from: spec.fork.clone(),
        profile: crate::profiles::info(&spec.provider.profile),
    }))?;
    if let crate::profiles::Completed::ProbeFailed(why) = &completed {
        emitter.emit(EventMsg::Warning(Warning {
            code: "profile_probe_failed".into(),
            message: format!(
                "could not probe {} at {} ({why}); its tools are offered natively and edits go through the tools — set [providers.{}] profile in config.toml to choose",
                spec.provider.model, spec.provider.base_url, spec.provider.name
            ),
        }))?;
    }
    if let Some(cp) = adopted {
        emitter.emit(EventMsg::CheckpointCreated(
            bosun_protocol::CheckpointCreated {
                checkpoint: cp.n,
                commit: cp.commit,
                files: cp.files,
                call_id: None,
            },
        ))?;
    }
    emitter.emit(EventMsg::UserMessage(UserMessage {
        text: spec.prompt.clone(),
        origin: None,
    }))?;
    pins::emit_pins(&emitter, pins, true)?;
    emitter.emit(EventMsg::ChecksPlanned(bosun_protocol::ChecksPlanned {
        checks: checks.checks.clone(),
        source: checks.source,
        max_rounds: checks.max_rounds,
    }))?;

    let launch = Launch {
        checks,
        home: spec.home,
        task_id,
        worktree,
        policy,
        policy_files,
        redaction,
        emitter,
        events: rx,
        client,
        prices,
        max_steps: spec.max_steps,
        max_cost_usd: spec.max_cost_usd,
        spent_usd: 0.0,
        sandbox: spec.sandbox,
        env_remove: spec.env_remove,
        changed_before: false,
        max_nudges,
        service_tier: spec.provider.service_tier,
        max_output_tokens: spec.provider.max_output_tokens,
        provider: spec.provider.clone(),
        api_key_env: spec.api_key_env.clone(),
        link: spec.link.clone(),
        resume_plan: None,
        plan_first: spec.plan,
        context: spec.context.clone(),
    };
    conversation.push(ChatMessage::User { content: prompt });
    launch.start(conversation)
}

/// Everything a task's loop needs, set up by [`start_task`] or [`crate::continue_task`].
pub(crate) struct Launch {
    /// The checks that judge the task.
    pub checks: CheckPlan,
    pub home: PathBuf,
    pub task_id: TaskId,
    pub worktree: TaskWorktree,
    pub policy: Policy,
    pub policy_files: PolicyFiles,
    pub redaction: Arc<Redaction>,
    pub emitter: Arc<Emitter>,
    pub events: mpsc::UnboundedReceiver<Event>,
    pub client: Arc<dyn ModelClient>,
    pub prices: PriceTable,
    pub max_steps: u32,
    pub max_cost_usd: Option<f64>,
    /// What the task already cost (a continued task): counted against `max_cost_usd`.
    pub spent_usd: f64,
    pub sandbox: bool,
    pub env_remove: Vec<String>,
    /// A resumed task continues its interrupted run: whether that run already changed files.
    pub changed_before: bool,
    /// Nudges this run may send before it fails (see [`crate::nudge`]).
    pub max_nudges: u32,
    /// The provider's service tier (prices) and response limit (budget reservations).
    pub service_tier: bosun_model::ServiceTier,
    pub max_output_tokens: u32,
    /// The task's own provider (its `main` role) and the variable holding its key: what its
    /// sub-agents use when no role routes them elsewhere.
    pub provider: ProviderConfig,
    pub api_key_env: Option<String>,
    /// Set for a sub-agent (see [`crate::orchestrate`]).
    pub link: Option<crate::orchestrate::ChildLink>,
    /// A resumed task that was running a plan as a graph: the call and its nodes, continued
    /// from the first unfinished node before the model is asked again.
    pub resume_plan: Option<(String, Vec<bosun_protocol::PlanItem>)>,
    /// See [`TaskSpec::plan`].
    pub plan_first: bool,
    /// `[context]` over `config.toml`'s, field by field (see [`TaskSpec::context`]).
    pub context: Option<crate::config::ContextSettings>,
}

impl Launch {
    /// Prepares the sandbox and starts the loop with `messages` as the conversation so far.
    pub fn start(self, messages: Vec<ChatMessage>) -> Result<TaskHandle, CoreError> {
        let Launch {
            checks,
            home,
            task_id,
            worktree,
            policy,
            policy_files,
            redaction,
            emitter,
            events,
            client,
            prices,
            max_steps,
            max_cost_usd,
            spent_usd,
            sandbox,
            env_remove,
            changed_before,
            max_nudges,
            service_tier,
            max_output_tokens,
            provider,
            api_key_env,
            link,
            resume_plan,
            plan_first,
            context,
        } = self;
        let spend = crate::spend::Spend::new(
            crate::spend::spend_limits(&home, &worktree.repo_root)?,
            Arc::clone(emitter.store()),
            task_id.clone(),
            worktree.repo_root.display().to_string(),
            service_tier,
            max_output_tokens,
        );
        // The task's git paths come from the workspace crate, which knows them (a worktree's
        // own `.git` file is written by the agent and is never read for this).
        let paths = worktree.task_git();
        let task_git = Some(bosun_exec::TaskGit {
            git_dir: paths.git_dir,
            user_checkout: paths.user_checkout,
            user_git_dir: paths.user_git_dir,
        });
        let mut sandboxing = Sandboxing::for_task(
            &home,
            task_id.as_str(),
            &worktree.worktree,
            sandbox,
            task_git,
        );
        sandboxing.hide_read_denied(&policy);
        // The MCP servers of the repository, started with the loop (a project's wait for
        // approval first); stdio ones confined like commands.
        let mcp_pending = crate::mcp::configured(&home, Some(&worktree.repo_root))?;
        let (mcp_io, mcp_private) = crate::sandboxing::mcp_dirs(&home);
        let mcp_launch = bosun_mcp::Launch {
            worktree: worktree.worktree.clone(),
            scratch: mcp_private.join(task_id.as_str()),
            io_dir: mcp_io,
            cache_dir: crate::sandboxing::mcp_cache(&home),
            confinement: crate::mcp::confinement(&sandboxing, &policy.sandbox()),
            network: crate::mcp::network(&sandboxing, &policy, &emitter),
        };
        let read_rules = policy.sandbox().read_deny.join("\n");
        let committed_secrets = worktree
            .base_files_matching(&read_rules, |path| policy.is_read_denied(path))
            .unwrap_or_default();
        if !committed_secrets.is_empty() {
            emitter.emit(EventMsg::Warning(Warning {
                code: "committed_secrets".into(),
                message: committed_secrets_warning(&committed_secrets),
            }))?;
        }
        match &sandboxing {
            Sandboxing::Off { reason } => {
                emitter.emit(EventMsg::Warning(Warning {
                code: "sandbox_unavailable".into(),
                message: format!(
                    "commands cannot be sandboxed on this machine ({reason}); every command will ask for approval"
                ),
            }))?;
            }
            Sandboxing::Disabled => {
                emitter.emit(EventMsg::Warning(Warning {
                code: "sandbox_disabled".into(),
                message: "the sandbox is turned off for this task (--no-sandbox): commands run with your permissions".into(),
            }))?;
            }
            Sandboxing::On { .. } => {
                if sandboxing.network_uncontained() {
                    emitter.emit(EventMsg::Warning(Warning {
                        code: "network_not_contained".into(),
                        message: "network not contained: this system has neither a network namespace nor seccomp for commands, so a command could reach the network (UDP); every command asks".into(),
                    }))?;
                }
                // What a `kill -9` of an earlier Bosun left running (with a PID namespace per
                // command there is none).
                if let Some(run_dir) = sandboxing.run_dir() {
                    crate::egress::remove_stale_sockets(run_dir);
                }
                let killed = bosun_exec::sweep_leftovers();
                if !killed.is_empty() {
                    let list: Vec<String> = killed
                        .iter()
                        .map(|k| format!("{} `{}`", k.pid, k.command))
                        .collect();
                    emitter.emit(EventMsg::Warning(Warning {
                        code: "leftover_processes".into(),
                        message: format!(
                            "killed {} process{} that earlier commands left running: {}",
                            killed.len(),
                            if killed.len() == 1 { "" } else { "es" },
                            list.join(", ")
                        ),
                    }))?;
                }
            }
        }

        let (ops_tx, ops_rx) = mpsc::unbounded_channel();
        // A sub-agent stops with its parent, and asks its approvals through the parent's gate.
        let cancel = match &link {
            Some(l) => l.cancel.child_token(),
            None => CancellationToken::new(),
        };
        let pending = Arc::new(Mutex::new(Vec::new()));
        let pin_ops = Arc::new(Mutex::new(Vec::new()));
        let gate = match &link {
            Some(l) => Arc::clone(&l.gate),
            None => Arc::new(ApprovalGate::default()),
        };
        tokio::spawn(watch_ops(
            ops_rx,
            cancel.clone(),
            Arc::clone(&pending),
            Arc::clone(&pin_ops),
            Arc::clone(&gate),
        ));

        // The map of the worktree starts now; its tags come from the journal's cache when any
        // worktree of the repository (or the app, when the repository was picked) parsed them.
        let map = {
            let readable = policy.clone();
            bosun_context::LiveMap::start(
                &worktree.worktree,
                Some(Arc::clone(emitter.store())),
                Arc::new(move |p: &str| !readable.is_read_denied(p)),
            )
        };
        let context_settings = crate::config::ContextSettings::over(
            context,
            crate::config::BosunConfig::load(&home)
                .ok()
                .and_then(|c| c.context),
        );
        let mask_outputs = context_settings.mask_tool_outputs.unwrap_or(true);
        let review_summaries = context_settings.review_summaries.unwrap_or(false);
        let mut env_remove = env_remove;
        // The providers this one falls back to: their keys are secrets too, from the start.
        let fallbacks = crate::routing::Fallbacks::new(&home, client.provider());
        env_remove.extend(fallbacks.key_envs());
        let named_summarizer = crate::config::BosunConfig::load(&home)
            .ok()
            .and_then(|c| crate::routing::summarizer(&c));
        let summarizer = match named_summarizer {
            None => None,
            Some((name, key)) => match crate::routing::client_named(&home, &name) {
                Ok((client, key_env)) => {
                    // Its key is a secret too: never in a command's environment.
                    env_remove.extend(key_env);
                    Some(client)
                }
                Err(why) => {
                    emitter.emit(EventMsg::Warning(Warning {
                        code: "summarizer_unavailable".into(),
                        message: format!(
                            "{key} = {name:?} cannot be used ({why}); summaries are written by the task's own model"
                        ),
                    }))?;
                    None
                }
            },
        };
        let shares = context_settings.shares();
        let run = TaskRun {
            mask_outputs,
            review_summaries,
            summarizer,
            fallbacks,
            summary_refused_at: None,
            pins: Default::default(),
            pin_ops,
            shares,
            failures: Default::default(),
            resume_plan,
            plan_first,
            map,
            map_sent: Default::default(),
            token_ratio: None,
            compactions: 0,
            overflowed: None,
            compact_on_overflow: false,
            window_learned: None,
            guard: Default::default(),
            verification: Verification::new(checks),
            home: home.clone(),
            repo_root: worktree.repo_root.clone(),
            base_commit: worktree.base_commit.clone(),
            worktree_path: worktree.worktree.clone(),
            committed_secrets,
            checkpointer: Checkpointer::new(worktree, changed_before),
            client,
            registry: {
                let mut registry = ToolRegistry::builtin();
                // The user's task and its children may delegate; a child's child may not.
                if link
                    .as_ref()
                    .is_none_or(|l| l.depth < crate::orchestrate::MAX_DEPTH)
                {
                    registry.register(Arc::new(bosun_tools::Delegate));
                }
                registry
            },
            policy: RwLock::new(policy),
            policy_files,
            gate,
            sandboxing,
            budget: Budget::new(prices, max_steps, max_cost_usd)
                .with_spent(spent_usd)
                .with_tier(service_tier)
                .with_max_tokens(link.as_ref().map(|l| l.max_tokens)),
            provider,
            api_key_env,
            link,
            spend,
            redaction,
            emitter,
            cancel,
            pending,
            env_remove,
            max_nudges,
            nudges: 0,
            mcp_pending,
            mcp_launch,
            mcp: None,
        };
        let join = tokio::spawn(run.run(messages));
        Ok(TaskHandle {
            task_id,
            ops: ops_tx,
            events,
            join,
        })
    }
}

async fn watch_ops(
    mut ops: mpsc::UnboundedReceiver<Op>,
    cancel: CancellationToken,
    pending: Arc<Mutex<Vec<String>>>,
    pin_ops: Arc<Mutex<Vec<bosun_protocol::PinOp>>>,
    gate: Arc<ApprovalGate>,
) {
    while let Some(op) = ops.recv().await {
        match op {
            Op::Interrupt => cancel.cancel(),
            Op::Approval(answer) => {
                let id = answer.approval_id.clone();
                if !gate.answer(answer) {
                    tracing::warn!("no tool call waits for approval {id}");
                }
            }
            Op::UserMessage(m) => {
                if let Ok(mut p) = pending.lock() {
                    p.push(m.text);
                }
            }
            Op::Pin(pin) => {
                if let Ok(mut p) = pin_ops.lock() {
                    p.push(pin);
                }
            }
        }
    }
}

/// What a tool call (or a check) of the run dispatches with. A macro, not a method: the
/// borrows are of single fields, so the loop's future holds no `&TaskRun` (whose worktree is not
/// `Sync`).
macro_rules! dispatch_env {
    ($run:expr) => {
        DispatchEnv {
            committed_secrets: &$run.committed_secrets,
            registry: &$run.registry,
            policy: &$run.policy,
            policy_files: &$run.policy_files,
            gate: &$run.gate,
            sandboxing: &$run.sandboxing,
            emitter: &$run.emitter,
            worktree: $run.worktree_path.clone(),
            cancel: &$run.cancel,
            env_remove: $run.env_remove.clone(),
            guard: &$run.guard,
            map: Some(std::sync::Arc::clone(&$run.map)),
            scope: $run.link.as_ref().map(|l| &l.scope),
        }
    };
}
use dispatch_env;

struct TaskRun {
    /// The task's own provider and its key variable (see [`Launch::provider`]).
    provider: ProviderConfig,
    api_key_env: Option<String>,
    /// Set for a sub-agent: its parent, depth, role, scope.
    link: Option<crate::orchestrate::ChildLink>,
    /// The edit guard's parse trees (see `crate::guard`).
    guard: std::sync::Mutex<bosun_syntax::GuardCache>,
    /// The checks and what their rounds found so far.
    verification: Verification,
    home: PathBuf,
    repo_root: PathBuf,
    base_commit: String,
    worktree_path: PathBuf,
    /// Read-denied files in the task's base commit: in the object store, where the sandbox
    /// cannot hide them, so git commands that print stored content are denied.
    committed_secrets: Vec<String>,
    checkpointer: Checkpointer,
    client: Arc<dyn ModelClient>,
    registry: ToolRegistry,
    policy: RwLock<Policy>,
    policy_files: PolicyFiles,
    gate: Arc<ApprovalGate>,
    sandboxing: Sandboxing,
    budget: Budget,
    /// The budgets across tasks (see `crate::spend`).
    spend: crate::spend::Spend,
    redaction: Arc<Redaction>,
    emitter: Arc<Emitter>,
    cancel: CancellationToken,
    pending: Arc<Mutex<Vec<String>>>,
    env_remove: Vec<String>,
    /// Nudges this run may send, and those sent so far.
    max_nudges: u32,
    nudges: u32,
    /// MCP servers to start with the loop, how, and once started the running set (dropping it
    /// ends their processes).
    mcp_pending: Vec<crate::mcp::Configured>,
    mcp_launch: bosun_mcp::Launch,
    mcp: Option<bosun_mcp::McpSet>,
    /// The worktree's repository map, built in the background and kept up to date.
    map: Arc<bosun_context::LiveMap>,
    /// What the last request showed of the map.
    map_sent: repo_map::MapSent,
    /// Reported prompt tokens / the bytes-per-3.5 estimate of the request, from the last
    /// response.
    token_ratio: Option<f64>,
    /// Compactions so far.
    compactions: u32,
    /// Set by a request the provider found too long for the model (the loop compacts, then
    /// sends it again), when `compact_on_overflow`.
    overflowed: Option<String>,
    compact_on_overflow: bool,
    /// The window a provider's "too long" revealed, when smaller than the one known.
    window_learned: Option<u64>,
    /// `[context] mask_tool_outputs` (default true).
    mask_outputs: bool,
    /// `[context] review_summaries` (default false): a summary waits for the user.
    review_summaries: bool,
    /// `[context] summarizer` (or `[routing] summarizer`): the model that writes summaries
    /// (None: the task's).
    summarizer: Option<Arc<dyn ModelClient>>,
    /// `[providers.<the task's>] fallback`: who takes over when the provider fails.
    fallbacks: crate::routing::Fallbacks,
    /// The conversation's length when the user last refused a summary.
    summary_refused_at: Option<usize>,
    /// What the user pinned (see [`pins`]), and pins sent while the task runs.
    pins: pins::Pins,
    pin_ops: Arc<Mutex<Vec<bosun_protocol::PinOp>>>,
    /// `[context.shares]`: the layered context's split.
    shares: bosun_context::Shares,
    /// A plan node's last failure, by node id (its retry's digest).
    failures: std::collections::HashMap<String, String>,
    /// See [`Launch::resume_plan`].
    resume_plan: Option<(String, Vec<bosun_protocol::PlanItem>)>,
    /// See [`TaskSpec::plan`].
    plan_first: bool,
}

impl TaskRun {
    async fn run(mut self, messages: Vec<ChatMessage>) -> Result<TaskOutcome, CoreError> {
        let outcome = match self.run_loop(messages).await {
            Ok(outcome) => outcome,
            Err(e) => {
                // Bosun's own fault: say so, then finish the task as failed if the journal allows.
                let message = e.to_string();
                let _ = self.emitter.emit(EventMsg::Error(ErrorEvent {
                    code: e.code().into(),
                    message: message.clone(),
                }));
                TaskOutcome {
                    status: TaskStatus::Failed,
                    summary: message,
                }
            }
        };
        if let Err(e) = self.checkpointer.final_state(&self.emitter).await {
            let _ = self.emitter.emit(EventMsg::Error(ErrorEvent {
                code: e.code().into(),
                message: format!("the final checkpoint failed: {e}"),
            }));
        }
        // "Completed" needs evidence: a task that changed nothing only answered.
        let mut outcome = outcome;
        if outcome.status == TaskStatus::Completed && !self.checkpointer.changed_anything() {
            outcome.status = TaskStatus::Answered;
        }
        self.emitter.emit(EventMsg::TaskFinished(TaskFinished {
            status: outcome.status,
            summary: outcome.summary.clone(),
            checks: self.verification.last.clone(),
        }))?;
        if let Some(servers) = self.mcp.take() {
            servers.stop().await;
        }
        // memory: what the task taught about its repository (crate::memory); never fails it.
        crate::memory::after_task(&self.home, &self.emitter);
        self.checkpointer.release().await?;
        Ok(outcome)
    }

    /// Starts the repository's MCP servers and offers their tools. A server a repository
    /// declares asks first (once: the answer is kept for its exact command); one that fails
    /// to start is a warning, and the task goes on without its tools.
    async fn start_mcp(&mut self) -> Result<(), CoreError> {
        let pending = std::mem::take(&mut self.mcp_pending);
        let mut starting = Vec::new();
        for c in pending {
            if !c.declared.config.is_enabled() {
                continue;
            }
            if c.from_project && !crate::mcp::is_approved(&self.home, &self.repo_root, &c.declared)
            {
                let d = &c.declared;
                let action = bosun_protocol::ToolAction::McpServer {
                    server: d.name.clone(),
                    command: crate::mcp::shown_command(&d.config),
                    origin: d.origin.clone(),
                };
                let call_id = format!("mcp_server_{}", d.name);
                let asked = self
                    .gate
                    .ask(
                        crate::approvals::AskRequest {
                            call_id: &call_id,
                            tool: "mcp",
                            action: &action,
                            reason: format!(
                                "{} declares the MCP server `{}`; it starts only once you approve its exact command",
                                d.origin, d.name
                            ),
                            rule: "mcp server".into(),
                            source: "built-in".into(),
                            suggestions: Vec::new(),
                            preview: None,
                        },
                        &self.emitter,
                        &self.cancel,
                    )
                    .await?;
                match asked {
                    crate::approvals::Approval::Approved
                    | crate::approvals::Approval::Always { .. } => {
                        crate::mcp::approve(&self.home, &self.repo_root, d)?;
                    }
                    crate::approvals::Approval::Denied { .. } => {
                        self.emitter.emit(EventMsg::Warning(Warning {
                            code: "mcp_server_not_approved".into(),
                            message: format!(
                                "the MCP server `{}` that {} declares was not approved; its tools are not offered",
                                d.name, d.origin
                            ),
                        }))?;
                        continue;
                    }
                    // The loop sees the cancellation next.
                    crate::approvals::Approval::Cancelled => return Ok(()),
                }
            }
            starting.push(c.declared);
        }
        if starting.is_empty() {
            return Ok(());
        }
        let servers = bosun_mcp::McpSet::new(starting, &self.mcp_launch);
        let (handlers, failed) = servers.start().await;
        for handler in handlers {
            self.registry.register(handler);
        }
        for (name, why) in failed {
            self.emitter.emit(EventMsg::Warning(Warning {
                code: "mcp_server_failed".into(),
                message: format!("{why}; the task goes on without the tools of `{name}`"),
            }))?;
        }
        self.mcp = Some(servers);
        Ok(())
    }

    /// Says how many secrets were kept out of a model request.
    fn note_redacted(&self, replaced: crate::redaction::Replaced) -> Result<(), CoreError> {
        if replaced.count > 0 {
            self.emitter
                .emit(EventMsg::Redacted(bosun_protocol::Redacted {
                    count: u32::try_from(replaced.count).unwrap_or(u32::MAX),
                    kinds: replaced.kinds,
                    place: "model_request".into(),
                }))?;
        }
        Ok(())
    }

    /// The model's reply as it is sent back to it: its text and the arguments of its tool
    /// calls redacted (a `redacted` event counts what was replaced).
    fn redacted_reply(
        &self,
        text: &str,
        calls: &[ToolCall],
    ) -> Result<(String, Vec<ToolCall>), CoreError> {
        let mut text = text.to_string();
        let mut replaced = self.redaction.text(&mut text);
        let calls = calls
            .iter()
            .map(|call| {
                let (arguments, r) = self.redaction.arguments(&call.arguments);
                replaced.merge(r);
                ToolCall {
                    arguments,
                    ..call.clone()
                }
            })
            .collect();
        self.note_redacted(replaced)?;
        Ok((text, calls))
    }

    /// From the second nudge on, the files the task names, as they are now, go with it: with
    /// deterministic sampling the same conversation gets the same reply, and a small model
    /// that lost track of the file gets it in front of it again.
    fn remind_files(&self, content: &mut String, asked: &str) -> Result<(), CoreError> {
        if self.nudges == 0 {
            return Ok(());
        }
        let mut files = match self.policy.read() {
            Ok(policy) => bosun_context::named_files_now(
                &self.worktree_path,
                asked,
                &|p: &str| !policy.is_read_denied(p),
                3 * 1024,
            ),
            Err(_) => String::new(),
        };
        if files.is_empty() {
            return Ok(());
        }
        self.note_redacted(self.redaction.text(&mut files))?;
        content.push_str("\n\nThe files the task names:\n");
        content.push_str(files.trim_start());
        Ok(())
    }

    /// Sends a nudge (journaled as a `nudge` event), or, past the task's budget of them, the
    /// outcome that ends the task: `failed`, "no progress after N nudges: <reason>".
    fn nudge(
        &mut self,
        reason: NudgeReason,
        message: &str,
    ) -> Result<Option<TaskOutcome>, CoreError> {
        if self.nudges >= self.max_nudges {
            return Ok(Some(TaskOutcome {
                status: TaskStatus::Failed,
                summary: format!(
                    "no progress after {} nudge{}: {}",
                    self.max_nudges,
                    if self.max_nudges == 1 { "" } else { "s" },
                    reason.as_str()
                ),
            }));
        }
        self.nudges += 1;
        self.emitter.emit(EventMsg::Nudge(Nudge {
            reason,
            message: message.to_string(),
        }))?;
        Ok(None)
    }

    /// The task fails: its conversation cannot fit the model's window.
    fn fail_too_big(&self, message: String) -> Result<TaskOutcome, CoreError> {
        self.emitter.emit(EventMsg::Error(ErrorEvent {
            code: "context_too_big".into(),
            message: message.clone(),
        }))?;
        Ok(TaskOutcome {
            status: TaskStatus::Failed,
            summary: message,
        })
    }

    /// What the user sent while the task ran, each redacted and journaled as a
    /// `user_message`, in order.
    fn take_queued(&mut self) -> Result<Vec<String>, CoreError> {
        let queued: Vec<String> = match self.pending.lock() {
            Ok(mut p) => p.drain(..).collect(),
            Err(_) => return Err(CoreError::Internal("user message queue poisoned".into())),
        };
        let mut out = Vec::with_capacity(queued.len());
        for mut text in queued {
            self.note_redacted(self.redaction.text(&mut text))?;
            self.emitter.emit(EventMsg::UserMessage(UserMessage {
                text: text.clone(),
                origin: None,
            }))?;
            out.push(text);
        }
        Ok(out)
    }

    /// After a call ran and its result is the last of `messages`: a command's changes are
    /// verified (set-id bits stripped), the checkpoint is taken, and the edit checks run on
    /// what an edit tool changed (their failures added to that result).
    async fn after_call(
        &mut self,
        call_id: &str,
        command: bool,
        touched: Touched,
        tool: &str,
        messages: &mut [ChatMessage],
    ) -> Result<(), CoreError> {
        let before = self.checkpointer.latest_commit();
        if command {
            self.checkpointer.verify(&self.emitter).await?;
            if !self.sandboxing.refuses_set_id() {
                self.checkpointer.strip_set_id(&self.emitter).await?;
            }
        }
        let edited = match (&touched, tool) {
            (Touched::Paths(p), "write_file" | "edit_file" | "apply_patch") => p.clone(),
            _ => Vec::new(),
        };
        self.map_after_call(&touched);
        self.checkpointer
            .after_tool(touched, tool, call_id, &self.emitter)
            .await?;
        // A sub-agent's command changed files outside its scope: put back.
        if command && let Some(before) = before {
            self.revert_outside_scope(&before, call_id, messages)
                .await?;
        }
        self.edit_checks(messages, &edited).await
    }

    /// One model request: the step limit, the spend gate, the turn streamed into events, its
    /// usage recorded. `Err(outcome)` when the task ends instead (the step or cost limit, a
    /// model error, the user's stop).
    async fn request_turn(
        &mut self,
        request: &ModelRequest,
    ) -> Result<Result<bosun_model::ModelResponse, TaskOutcome>, CoreError> {
        let interrupted = || TaskOutcome {
            status: TaskStatus::Interrupted,
            summary: "stopped by the user".into(),
        };
        if !self.budget.take_step() {
            return Ok(Err(TaskOutcome {
                status: TaskStatus::MaxSteps,
                summary: format!(
                    "stopped after {} model request{} (the step limit; raise it with --max-steps or max_steps in config.toml)",
                    self.budget.max_steps(),
                    if self.budget.max_steps() == 1 {
                        ""
                    } else {
                        "s"
                    }
                ),
            }));
        }
        if let Some(max) = self.budget.tokens_exceeded() {
            return Ok(Err(TaskOutcome {
                status: TaskStatus::BudgetExceeded,
                summary: format!(
                    "stopped at its token cap of {max} tokens ([subagents] max_tokens in config.toml)"
                ),
            }));
        }
        // The same request goes to the next fallback provider when this one is down.
        let (turn, latency_ms) = loop {
            let gate = self
                .spend
                .before_request(
                    self.budget.prices(),
                    self.client.model(),
                    request,
                    &self.gate,
                    &self.emitter,
                    &self.cancel,
                )
                .await?;
            if let crate::spend::Gate::Stop(outcome) = gate {
                return Ok(Err(outcome));
            }
            let sent = std::time::Instant::now();
            let turn = run_turn(self.client.as_ref(), request, &self.emitter, &self.cancel).await;
            let latency_ms = u64::try_from(sent.elapsed().as_millis()).unwrap_or(u64::MAX);
            if !matches!(turn, Ok(TurnResult::Response(_))) {
                self.spend.settle()?;
            }
            if let Err(CoreError::Model(e)) = &turn
                && !(self.compact_on_overflow && compaction::context_exceeded(e))
                && let Some(next) = self.fallbacks.take_over(e, &self.emitter).await?
            {
                self.use_model(next);
                continue;
            }
            break (turn, latency_ms);
        };
        let response = match turn {
            Ok(TurnResult::Response(r)) => r,
            Ok(TurnResult::Interrupted) => return Ok(Err(interrupted())),
            Err(CoreError::Model(e)) => {
                let message = e.to_string();
                // Too long for the model: the loop compacts and sends it again (twice at most).
                if self.compact_on_overflow && compaction::context_exceeded(&e) {
                    self.overflowed = Some(message.clone());
                    return Ok(Err(TaskOutcome {
                        status: TaskStatus::Failed,
                        summary: message,
                    }));
                }
                self.emitter.emit(EventMsg::Error(ErrorEvent {
                    code: e.code().into(),
                    message: message.clone(),
                }))?;
                return Ok(Err(TaskOutcome {
                    status: TaskStatus::Failed,
                    summary: message,
                }));
            }
            Err(e) => return Err(e),
        };

        let model = if response.model.is_empty() {
            self.client.model().to_string()
        } else {
            response.model.clone()
        };
        self.learn_token_ratio(request, &response.usage);
        let recorded = self.budget.record(&model, self.client.model(), &response);
        let mut usage = recorded.event;
        usage.latency_ms = Some(latency_ms);
        usage.reasoning = response.reasoning.clone();
        self.emitter.emit(EventMsg::Usage(usage))?;
        if !recorded.clamped.is_empty() {
            let said: Vec<String> = recorded
                .clamped
                .iter()
                .map(|(class, n)| format!("{n} {class}"))
                .collect();
            self.emitter.emit(EventMsg::Warning(Warning {
                code: "usage_clamped".into(),
                message: format!(
                    "the server reported {} tokens for one response; each class is counted as at most {}",
                    said.join(", "),
                    crate::budget::MAX_TOKENS_PER_CLASS
                ),
            }))?;
        }
        self.spend.after_response(&self.emitter)?;
        Ok(Ok(response))
    }

    /// From now on the run asks `next` (a fallback): priced as its model, its key kept from
    /// commands.
    fn use_model(&mut self, next: crate::routing::RoleModel) {
        self.client = next.client;
        self.budget.set_tier(next.provider.service_tier);
        self.spend
            .set_model(next.provider.service_tier, next.provider.max_output_tokens);
        if let Some(var) = next.key_env
            && !self.env_remove.contains(&var)
        {
            self.env_remove.push(var);
        }
    }

    async fn run_loop(&mut self, mut messages: Vec<ChatMessage>) -> Result<TaskOutcome, CoreError> {
        // Commands' checkpoints follow the watcher's events from here on (a resumed task's first
        // one walks the tree: what changed while no Bosun ran is known only from a walk).
        self.checkpointer.watch(&self.emitter).await?;
        self.start_mcp().await?;
        self.load_pins()?;
        let small = self.client.profile().is_small();
        let mut system = if small {
            bosun_context::small_system_prompt(&self.worktree_path)
        } else {
            bosun_context::system_prompt(&self.worktree_path)
        };
        // What the user last asked (a nudge is not the user speaking): a question is answered,
        // never nudged.
        let mut asked = messages
            .iter()
            .rev()
            .find_map(|m| match m {
                ChatMessage::User { content } => Some(content.clone()),
                _ => None,
            })
            .unwrap_or_default();
        // A small model with a text edit format, and the task's files fit whole: the direct
        // turn (the files in the request, file listings back, no tools).
        if let Some(shown) = self.direct_files(&asked) {
            return self.run_direct(messages, asked, shown).await;
        }
        // The repository's files and the ones the prompt names, so a small model starts from
        // what the task needs (read-denied files are neither listed nor shown).
        let repo = match self.policy.read() {
            // The layered context (a model not profiled as small) shows the named files itself.
            Ok(policy) if !small => {
                bosun_context::file_list(&self.worktree_path, &|p: &str| !policy.is_read_denied(p))
            }
            // A small model's first request stays under 2,000 tokens.
            Ok(policy) => bosun_context::repo_context_within(
                &self.worktree_path,
                &asked,
                &|p: &str| !policy.is_read_denied(p),
                if small {
                    bosun_context::SMALL_REPO_CONTEXT_CAP_BYTES
                } else {
                    bosun_context::REPO_CONTEXT_CAP_BYTES
                },
            ),
            Err(_) => String::new(),
        };
        if !repo.is_empty() {
            system.push_str("\n\n");
            system.push_str(&repo);
        }
        // memory: what Bosun remembers about the repository (crate::memory).
        crate::memory::append_section(&mut system, &self.home, &self.emitter, &self.repo_root);
        // A text edit format: the edits come as blocks in the reply, so the request says how
        // and offers no edit tools (a call to one is still served: `all_tools` is what calls
        // are recovered against, and dispatch has the whole registry).
        let edit_format = self.client.profile().edit_format;
        if edit_format != bosun_model::EditFormat::Tools {
            system.push_str("\n\n");
            system.push_str(bosun_model::instructions(edit_format));
        }
        self.note_redacted(self.redaction.text(&mut system))?;
        let all_tools = self.registry.specs();
        let tools = edit_blocks::offered_tools(&all_tools, edit_format, small);
        // The repository map: the first request waits for it a moment; after that it joins
        // the request when it is ready or what it shows changed.
        let base_system = system.clone();
        self.map_sent.base_items = repo_map::section_items(&base_system, 1.0);
        self.compact_on_overflow = true;
        let mut overflows = 0u32;
        self.wait_for_map().await;
        // A plan interrupted by a crash goes on from its first unfinished node.
        if let Some((call_id, items)) = self.resume_plan.take() {
            let (result, ended) = self
                .run_plan(&call_id, items, std::time::Instant::now())
                .await?;
            if let ChatMessage::Tool {
                content, is_error, ..
            } = result
                && let Some(ChatMessage::Tool {
                    content: dead,
                    is_error: dead_error,
                    ..
                }) = messages
                    .iter_mut()
                    .find(|m| matches!(m, ChatMessage::Tool { call_id: id, .. } if *id == call_id))
            {
                *dead = content;
                *dead_error = is_error;
            }
            if let Some(outcome) = ended {
                return Ok(outcome);
            }
        }
        if std::mem::take(&mut self.plan_first)
            && let Some(outcome) = self
                .plan_first(&base_system, &all_tools, &mut messages)
                .await?
        {
            return Ok(outcome);
        }
        // Recovered calls are numbered across the task, after those of the conversation so far
        // (a continued or resumed task).
        let mut recovered_seq = last_recovered_id(&messages);
        // Calls that failed in this run (name and arguments): the same one again is answered
        // differently.
        let mut failed_calls: std::collections::HashSet<(String, String)> = Default::default();
        // Calls that only look (read, list, search, plan) and ran in this run: the same look
        // again is answered.
        let mut seen_calls: std::collections::HashSet<(String, String)> = Default::default();
        let interrupted = || TaskOutcome {
            status: TaskStatus::Interrupted,
            summary: "stopped by the user".into(),
        };
        loop {
            for text in self.take_queued()? {
                asked = text.clone();
                messages.push(ChatMessage::User { content: text });
            }
            if self.cancel.is_cancelled() {
                return Ok(interrupted());
            }
            if let Some(with_map) = self
                .system_with_map(&base_system, &asked, &tools, &messages)
                .await?
            {
                system = with_map;
            }
            // Pins sent meanwhile; the pinned files as they are now.
            self.take_pins(&messages)?;
            let system = self.with_pinned_files(&system);
            // Near the model's window: old tool outputs masked, then older turns summarised.
            if let compaction::Compacted::TooBig(m) =
                self.compact(&system, &tools, &mut messages, None).await?
            {
                return self.fail_too_big(m);
            }
            let request = ModelRequest {
                system: system.clone(),
                messages: messages.clone(),
                tools: tools.clone(),
                retry_sampling: None,
            };
            let response = match self.request_turn(&request).await? {
                Ok(response) => {
                    overflows = 0;
                    response
                }
                Err(outcome) => match self.overflowed.take() {
                    Some(why) => {
                        overflows += 1;
                        let compacted = if overflows <= 2 {
                            self.compact(&system, &tools, &mut messages, Some(&why))
                                .await?
                        } else {
                            compaction::Compacted::No
                        };
                        match compacted {
                            compaction::Compacted::Yes => continue,
                            compaction::Compacted::TooBig(m) => return self.fail_too_big(m),
                            compaction::Compacted::No => {
                                return self.fail_too_big(format!(
                                    "{why} (compacting did not make the request small enough)"
                                ));
                            }
                        }
                    }
                    None => return Ok(outcome),
                },
            };

            let (mut calls, recovered, text, invalid) = if response.tool_calls.is_empty() {
                let found = bosun_model::recover_tool_calls(&response.text, &all_tools);
                if found.calls.is_empty() {
                    (Vec::new(), false, response.text.clone(), found.invalid)
                } else {
                    // Ids unique across the whole task (the parser numbers each reply from 1),
                    // so every hunk's provenance names the call that really made it.
                    let calls = found
                        .calls
                        .into_iter()
                        .map(|c| {
                            recovered_seq += 1;
                            ToolCall {
                                id: format!("recovered_{recovered_seq}"),
                                ..c
                            }
                        })
                        .collect();
                    // What else the reply meant but cannot run is said after the calls run.
                    (calls, true, found.remaining_text, found.invalid)
                }
            } else {
                (
                    response.tool_calls.clone(),
                    false,
                    response.text.clone(),
                    Vec::new(),
                )
            };
            // Edit blocks run after the reply's own calls, with the next ids; what is shown and
            // replayed is the prose without them (they show as the calls).
            let blocks = edit_blocks::block_calls(
                &text,
                edit_format,
                &self.worktree_path,
                &mut recovered_seq,
                !crate::nudge::prompt_is_question(&asked),
            );
            let from_blocks: std::collections::HashSet<String> =
                blocks.calls.iter().map(|c| c.id.clone()).collect();
            calls.extend(blocks.calls);
            let (text, problems, echoed) = (blocks.text, blocks.problems, blocks.echoed);
            let recovered_call = |call: &ToolCall| recovered || from_blocks.contains(&call.id);
            if !text.trim().is_empty() {
                self.emitter
                    .emit(EventMsg::AssistantMessage(AssistantMessage {
                        text: text.clone(),
                    }))?;
            }
            // What the model wrote goes back to it redacted, as the journal has it; the tools
            // run with the arguments as written.
            let (text, replayed) = self.redacted_reply(&text, &calls)?;
            // A reasoning model's reasoning items go back with the reply (OpenAI Responses).
            messages.push(ChatMessage::Assistant {
                content: text.clone(),
                tool_calls: replayed,
                reasoning: response.reasoning.clone(),
            });

            if let Some(max) = self.budget.cost_exceeded() {
                skip_calls(
                    &mut messages,
                    &calls,
                    "not run: the task's cost limit was reached",
                );
                return Ok(TaskOutcome {
                    status: TaskStatus::BudgetExceeded,
                    summary: format!(
                        "stopped: the task cost ${:.4}, over its limit of ${max:.4} (--max-cost-usd)",
                        self.budget.cost_with_children_usd()
                    ),
                });
            }
            if calls.is_empty() {
                // A call written as text that cannot run: say why, with the tools and the
                // format; the same rejected call again gets told to do something different.
                if !invalid.is_empty() {
                    let key = ("<invalid>".to_string(), invalid.join("\n"));
                    let (reason, mut content) = if failed_calls.contains(&key) {
                        (
                            NudgeReason::RepeatedCall,
                            format!(
                                "{}\n\n{}",
                                crate::nudge::repeated_call_message(&invalid.join("\n")),
                                crate::nudge::how_to_call(&tools)
                            ),
                        )
                    } else {
                        (
                            crate::nudge::invalid_reason(&invalid),
                            crate::nudge::invalid_calls_message(&invalid, &tools),
                        )
                    };
                    failed_calls.insert(key);
                    if !problems.is_empty() {
                        content.push_str("\n\n");
                        content.push_str(&edit_blocks::problems_message(&problems, None));
                    }
                    self.note_redacted(self.redaction.text(&mut content))?;
                    self.remind_files(&mut content, &asked)?;
                    if let Some(outcome) = self.nudge(reason, &content)? {
                        return Ok(outcome);
                    }
                    messages.push(ChatMessage::User { content });
                    continue;
                }
                // Edit blocks that cannot be applied, and nothing else: said precisely, with
                // the format again.
                if !problems.is_empty() {
                    let mut content = edit_blocks::problems_message(&problems, Some(edit_format));
                    self.note_redacted(self.redaction.text(&mut content))?;
                    self.remind_files(&mut content, &asked)?;
                    if let Some(outcome) = self.nudge(NudgeReason::SchemaError, &content)? {
                        return Ok(outcome);
                    }
                    messages.push(ChatMessage::User { content });
                    continue;
                }
                // A plan, a promise or a question instead of work: answered, and the loop goes on.
                let changed = self.checkpointer.changed_anything();
                // The code asked for, written out as it already is: nothing was done.
                let change_asked = !changed && !crate::nudge::prompt_is_question(&asked);
                let claimed = crate::nudge::claims_unmade_change(&asked, &text, changed)
                    || (change_asked && !echoed.is_empty());
                let reason = crate::nudge::classify(&asked, &text, changed)
                    .or(claimed.then_some(NudgeReason::Promise));
                if let Some(reason) = reason {
                    let mut content = if claimed && reason == NudgeReason::Promise {
                        let how = if edit_format == bosun_model::EditFormat::Tools {
                            String::new()
                        } else {
                            " Write each function or class you change out whole in a fenced \
                             code block, or use a SEARCH/REPLACE block."
                                .to_string()
                        };
                        format!(
                            "{}{how}\n\n{}",
                            crate::nudge::CLAIM_MESSAGE,
                            crate::nudge::how_to_call(&tools)
                        )
                    } else {
                        crate::nudge::message(reason, &tools)
                    };
                    // Edits are blocks in this format, not tool calls: said again.
                    if edit_format != bosun_model::EditFormat::Tools {
                        content.push_str("\n\n");
                        content.push_str(bosun_model::instructions(edit_format));
                    }
                    self.remind_files(&mut content, &asked)?;
                    if let Some(outcome) = self.nudge(reason, &content)? {
                        return Ok(outcome);
                    }
                    messages.push(ChatMessage::User { content });
                    continue;
                }
                match self.verify_done(&mut messages, text.trim()).await? {
                    Some(outcome) => return Ok(outcome),
                    None => continue,
                }
            }
            // Degenerate calls of this reply, answered once all its calls ran.
            let mut repeated: Vec<String> = Vec::new();
            // A reply of edits only that leaves every file as it was (a file written back as
            // it is) is an edit that changes nothing.
            let tree_before = self.checkpointer.latest_commit();
            let only_writes = calls
                .iter()
                .all(|c| matches!(c.name.as_str(), "write_file" | "edit_file" | "apply_patch"));
            // Sub-agents first: the reply's `delegate` calls run together (side by side when
            // their scopes are disjoint), their results taken in the order of the calls.
            let mut delegated = if self.can_delegate() && calls.iter().any(|c| c.name == "delegate")
            {
                let recovered_ids: Vec<String> = calls
                    .iter()
                    .filter(|c| recovered_call(c))
                    .map(|c| c.id.clone())
                    .collect();
                self.run_delegates(&calls, &messages, &recovered_ids)
                    .await?
            } else {
                Default::default()
            };
            for (i, call) in calls.iter().enumerate() {
                if self.cancel.is_cancelled() {
                    skip_calls(&mut messages, &calls[i..], "not run: the task was stopped");
                    return Ok(interrupted());
                }
                if calls[..i].iter().any(|earlier| earlier.id == call.id) {
                    let mut refused = refuse_duplicate(call, recovered_call(call), &self.emitter)?;
                    if let ChatMessage::Tool { content, .. } = &mut refused {
                        self.note_redacted(self.redaction.text(content))?;
                    }
                    messages.push(refused);
                    continue;
                }
                if call.name == "delegate"
                    && let Some(result) = delegated.remove(&call.id)
                {
                    messages.push(result);
                    continue;
                }
                // A plan to run as a task graph.
                if call.name == "update_plan"
                    && let Ok(args) = serde_json::from_str::<serde_json::Value>(&call.arguments)
                    && bosun_tools::runs_plan(&args)
                {
                    let (result, ended) =
                        self.start_plan(call, &args, recovered_call(call)).await?;
                    messages.push(result);
                    if let Some(outcome) = ended {
                        skip_calls(&mut messages, &calls[i + 1..], "not run: the task ended");
                        return Ok(outcome);
                    }
                    continue;
                }
                let command = call.name == "run_command";
                if command {
                    self.checkpointer.verify(&self.emitter).await?;
                }
                let env = dispatch_env!(self);
                let mut done = dispatch(call, recovered_call(call), &env).await?;
                if let ChatMessage::Tool { content, .. } = &mut done.message {
                    self.note_redacted(self.redaction.text(content))?;
                }
                let failure = match &done.message {
                    ChatMessage::Tool {
                        content,
                        is_error: true,
                        ..
                    } => Some(content.clone()),
                    _ => None,
                };
                if let Some(error) = failure {
                    let key = (call.name.clone(), canonical_arguments(&call.arguments));
                    if failed_calls.contains(&key) {
                        repeated.push(crate::nudge::repeated_call_message(&error));
                    } else if is_no_op_edit(call)
                        && let Some(outcome) = self.nudge(NudgeReason::NoOpEdit, &error)?
                    {
                        messages.push(done.message);
                        skip_calls(&mut messages, &calls[i + 1..], "not run: the task ended");
                        return Ok(outcome);
                    }
                    failed_calls.insert(key);
                } else if matches!(
                    call.name.as_str(),
                    "read_file" | "list_dir" | "search" | "update_plan"
                ) {
                    // The same look again changes nothing: said, so the model moves on.
                    let key = (call.name.clone(), canonical_arguments(&call.arguments));
                    if !seen_calls.insert(key) {
                        repeated.push(format!(
                            "You already called `{}` with these arguments, and its result is \
                             above: calling it again changes nothing. Do the next step of the \
                             task now.",
                            call.name
                        ));
                    }
                }
                messages.push(done.message);
                self.after_call(&call.id, command, done.touched, &done.tool, &mut messages)
                    .await?;
                if let Some(items) = done.plan {
                    self.emitter
                        .emit(EventMsg::PlanUpdated(PlanUpdated { items }))?;
                }
            }
            let mut unapplied = Vec::new();
            if !invalid.is_empty() {
                unapplied.push(format!(
                    "The calls above ran. These in your reply were not run:\n{}",
                    invalid.join("\n")
                ));
            }
            if !problems.is_empty() {
                let ran = if invalid.is_empty() {
                    "The calls above ran. "
                } else {
                    ""
                };
                unapplied.push(format!(
                    "{ran}{}",
                    edit_blocks::problems_message(&problems, None)
                ));
            }
            if !unapplied.is_empty() {
                let mut content = unapplied.join("\n\n");
                self.note_redacted(self.redaction.text(&mut content))?;
                // Every rejected call is in the journal, also beside calls that ran (not a
                // nudge: the reply made progress).
                self.emitter.emit(EventMsg::Warning(Warning {
                    code: "calls_not_run".into(),
                    message: content.clone(),
                }))?;
                messages.push(ChatMessage::User { content });
            }
            if !repeated.is_empty() {
                let mut content = repeated.join("\n\n");
                self.remind_files(&mut content, &asked)?;
                if let Some(outcome) = self.nudge(NudgeReason::RepeatedCall, &content)? {
                    return Ok(outcome);
                }
                messages.push(ChatMessage::User { content });
            } else if only_writes
                && unapplied.is_empty()
                && self.checkpointer.latest_commit() == tree_before
                && messages.last().is_some_and(|m| {
                    matches!(
                        m,
                        ChatMessage::Tool {
                            is_error: false,
                            ..
                        }
                    )
                })
            {
                let mut content = "Your edits left every file as it was: nothing changed. \
                                   Write the change itself."
                    .to_string();
                self.remind_files(&mut content, &asked)?;
                if let Some(outcome) = self.nudge(NudgeReason::NoOpEdit, &content)? {
                    return Ok(outcome);
                }
                messages.push(ChatMessage::User { content });
            }
        }
    }
}

/// The highest `recovered_N` of a conversation so far (0 for none): recovered calls are
/// numbered across the task, after those of earlier runs (a continued or resumed task).
fn last_recovered_id(messages: &[ChatMessage]) -> u64 {
    messages
        .iter()
        .filter_map(|m| match m {
            ChatMessage::Assistant { tool_calls, .. } => Some(tool_calls),
            _ => None,
        })
        .flatten()
        .filter_map(|c| c.id.strip_prefix("recovered_")?.parse::<u64>().ok())
        .max()
        .unwrap_or(0)
}

/// A call's arguments in one spelling, so the same call written with other spacing or key
/// order is recognised.
fn canonical_arguments(arguments: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(arguments) {
        Ok(v) => v.to_string(),
        Err(_) => arguments.trim().to_string(),
    }
}

/// An `edit_file` whose old and new text are the same.
fn is_no_op_edit(call: &ToolCall) -> bool {
    if call.name != "edit_file" {
        return false;
    }
    let Ok(args) = serde_json::from_str::<serde_json::Value>(&call.arguments) else {
        return false;
    };
    matches!(
        (args.get("old_string"), args.get("new_string")),
        (Some(old), Some(new)) if old == new && old.is_string()
    )
}

/// What the user is told when the base commit holds files the policy says no one reads.
fn committed_secrets_warning(paths: &[String]) -> String {
    const SHOWN: usize = 10;
    let mut list = paths
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if paths.len() > SHOWN {
        list.push_str(&format!(" and {} more", paths.len() - SHOWN));
    }
    format!(
        "the base commit contains {} read-denied file{} ({list}): commands cannot read {} in the worktree, but git's object store holds {} and cannot be filtered, so in this task git runs only for status, staging, commits, branches and logs or diffs that print names and counts (show, cat-file, log -p, diff, grep, archive and the rest are denied). That cannot stop a script or build that runs git itself: remove the secret from the repository's history and rotate it.",
        paths.len(),
        if paths.len() == 1 { "" } else { "s" },
        if paths.len() == 1 { "it" } else { "them" },
        if paths.len() == 1 { "it" } else { "them" },
    )
}

/// Tool calls that will not run still get a result, so the conversation stays well-formed.
fn skip_calls(messages: &mut Vec<ChatMessage>, calls: &[ToolCall], why: &str) {
    for call in calls {
        messages.push(ChatMessage::Tool {
            call_id: call.id.clone(),
            content: why.to_string(),
            is_error: true,
        });
    }
}
