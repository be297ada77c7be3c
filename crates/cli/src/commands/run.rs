use super::approve::Answerer;
use crate::render::Transcript;
use anyhow::{Context, bail};
use bosun_core::checks::ChecksChoice;
use bosun_core::{
    BosunConfig, ContinueSpec, ProviderEntry, TaskSpec, continue_task, secret_env_names, start_task,
};
use bosun_policy::Mode;
use bosun_protocol::{EventMsg, Op, TaskStatus};
use clap::Args;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::str::FromStr;
use std::sync::Arc;

/// Model requests a new task may make unless `--max-steps` says otherwise.
const DEFAULT_MAX_STEPS: u32 = 100;

#[derive(Args)]
pub struct RunArgs {
    /// The git repository to work on (any path inside it)
    #[arg(long, default_value = ".")]
    repo: PathBuf,
    /// What the agent should do
    #[arg(long)]
    prompt: String,
    /// Base branch, tag or commit for the task's worktree (default: the repository's HEAD)
    #[arg(long)]
    base: Option<String>,
    /// A check for this run instead of the repository's (repeatable): a command, required,
    /// run at the end, 600 s
    #[arg(long = "check", value_name = "CMD", conflicts_with = "no_checks")]
    checks: Vec<String>,
    /// Run no checks: the task is judged on its changes alone
    #[arg(long)]
    no_checks: bool,
    /// Failed rounds of checks before the task ends checks_failed (default 3)
    #[arg(long, value_name = "N", conflicts_with = "no_checks")]
    max_check_rounds: Option<u32>,
    /// The planner role's model writes a task graph first ([routing] planner); its nodes run
    /// as sub-agents in dependency order, each behind its checks
    #[arg(long)]
    plan: bool,
    #[command(flatten)]
    session: SessionArgs,
}

/// The model a task was started with, as its `task_started` recorded it.
fn recorded_model(
    store: &bosun_store::Store,
    task: &bosun_protocol::TaskId,
) -> anyhow::Result<Option<Recorded>> {
    Ok(store
        .events(task, 0, 1)?
        .into_iter()
        .find_map(|e| match e.msg {
            EventMsg::TaskStarted(t) => Some(Recorded {
                name: t.provider,
                api: t.api,
                base_url: t.base_url,
                model: t.model,
                api_key_env: t.api_key_env,
            }),
            _ => None,
        }))
}

/// `bosun fork TASK --checkpoint N --prompt TEXT`.
#[derive(Args)]
pub struct ForkArgs {
    /// The task to fork (id or a unique prefix of it)
    task: String,
    /// Its checkpoint to start from (0 = its base)
    #[arg(long)]
    checkpoint: u32,
    /// What the new task should do
    #[arg(long)]
    prompt: String,
    #[command(flatten)]
    session: SessionArgs,
}

/// A new task from a checkpoint of an earlier one: its worktree at that checkpoint, the
/// conversation up to it, the same model unless flags say otherwise.
pub fn fork(args: ForkArgs) -> anyhow::Result<ExitCode> {
    let store = crate::commands::open_store()?;
    store.reconcile_interrupted()?;
    let row = store.find_task(&args.task)?;
    bosun_core::CoreError::refuse_imported(&row, "forked")?;
    let recorded = recorded_model(&store, &row.id)?;
    let a = &args.session;
    let home = crate::home();
    let root = bosun_workspace::resolve_repo(std::path::Path::new(&row.repo))?;
    let settings = bosun_core::repo_settings::effective(
        &BosunConfig::load(&home)?,
        &root,
        &bosun_core::repo_settings::Explicit {
            provider: a.p.provider.clone(),
            max_steps: a.max_steps,
            max_cost_usd: a.max_cost_usd,
        },
        DEFAULT_MAX_STEPS,
    )?;
    let s = session(a, recorded.as_ref(), None)?;
    let spec = TaskSpec {
        id: None,
        context: None,
        fork: Some(bosun_protocol::ForkedFrom {
            task: row.id.clone(),
            checkpoint: args.checkpoint,
        }),
        checks: ChecksChoice::Repository,
        max_check_rounds: None,
        max_nudges: a.max_nudges,
        pins: a.pins.clone(),
        link: None,
        transcript: Vec::new(),
        plan: false,
        home: s.home,
        repo: root,
        prompt: args.prompt.clone(),
        base: None,
        provider: s.provider,
        max_steps: settings.max_steps.value,
        max_cost_usd: settings.max_cost_usd.map(|c| c.value),
        policy_file: a.policy.clone(),
        sandbox: !a.no_sandbox,
        mode: s.mode,
        api_key_env: s.api_key_env,
        env_remove: s.env_remove,
    };
    let answerer = Answerer::choose(a.yes, a.json);
    refuse_unpriced_headless(answerer, &spec.home, &spec.repo, &spec.provider.model)?;
    let store = Arc::clone(&s.store);
    runtime()?.block_on(async move {
        let handle = start_task(spec, store).await?;
        drive(handle, a.json, answerer).await
    })
}

/// With no one to answer (no terminal, or `--yes`, which approves tool calls and never
/// spending), a model without a price under a budget is refused before the task starts: its
/// spend could not be counted against the budget.
fn refuse_unpriced_headless(
    answerer: Answerer,
    home: &std::path::Path,
    root: &std::path::Path,
    model: &str,
) -> anyhow::Result<()> {
    if !matches!(answerer, Answerer::Nobody | Answerer::Yes) {
        return Ok(());
    }
    let limits = bosun_core::spend::spend_limits(home, root)?;
    if limits.limits.is_empty() || bosun_core::load_prices(home)?.lookup(model).is_some() {
        return Ok(());
    }
    Err(bosun_core::CoreError::Refused {
        code: "unpriced_model",
        message: format!(
            "`{model}` has no price, so its spend cannot be counted against the budgets that apply ({}); add one with `bosun prices set {model} --input USD --output USD` (per million tokens), run it where someone can answer (a terminal, --json, the app), or remove the budgets",
            limits.names().join(", ")
        ),
    }
    .into())
}

/// `bosun continue TASK --prompt TEXT` and `bosun resume TASK`.
#[derive(Args)]
pub struct ContinueArgs {
    /// Task id or a unique prefix of it
    task: String,
    /// Take a pin back (repeatable): a pinned file's path, or `call:ID` for a pinned tool
    /// output
    #[arg(long = "unpin", value_name = "FILE|call:ID")]
    unpins: Vec<String>,
    #[command(flatten)]
    session: SessionArgs,
}

/// How a task runs: the model, limits, policy, approvals, output.
/// Which model a task talks to, and how.
#[derive(Args, Clone)]
pub struct ProviderFlags {
    /// A provider from $BOSUN_HOME/config.toml
    #[arg(long, conflicts_with_all = ["api", "base_url"])]
    pub(crate) provider: Option<String>,
    /// Wire format: openai-chat (OpenAI and compatible servers: Ollama, llama.cpp, vLLM, LM Studio, Gemini), openai-responses (OpenAI's Responses API) or anthropic
    #[arg(long)]
    pub(crate) api: Option<String>,
    /// Server base URL, e.g. http://127.0.0.1:11434/v1
    #[arg(long)]
    pub(crate) base_url: Option<String>,
    /// Model id (overrides the provider's model)
    #[arg(long)]
    pub(crate) model: Option<String>,
    /// Environment variable holding the API key (a local server needs none)
    #[arg(long)]
    pub(crate) api_key_env: Option<String>,
    /// How tools are offered to the model: native (the API's tool calls) or as text in a
    /// chat template's format: hermes, llama3, mistral, json (overrides the provider's profile)
    #[arg(long, value_name = "FORMAT")]
    pub(crate) tool_format: Option<String>,
    /// How the model writes edits: tools, whole (whole-file blocks) or search-replace
    /// (overrides the provider's profile)
    #[arg(long, value_name = "FORMAT")]
    pub(crate) edit_format: Option<String>,
}

#[derive(Args, Clone)]
pub struct SessionArgs {
    #[command(flatten)]
    pub(crate) p: ProviderFlags,
    /// Stop after this many model requests (default 100; a continuation keeps the task's limit)
    #[arg(long)]
    max_steps: Option<u32>,
    /// Stop once the task has cost more than this many US dollars
    #[arg(long)]
    max_cost_usd: Option<f64>,
    /// Replies without progress (a plan in prose, a promise, a question, a rejected call)
    /// Bosun answers before the task fails "no progress" (default 3, or max_nudges in
    /// config.toml)
    #[arg(long, value_name = "N")]
    max_nudges: Option<u32>,
    /// Pin a file (relative to the repository; repeatable): its current content is in every
    /// model request, and compaction never drops it
    #[arg(long = "pin", value_name = "FILE")]
    pins: Vec<String>,
    /// Print one JSON event per line instead of a transcript (approval answers are then read
    /// as JSON lines on stdin)
    #[arg(long)]
    json: bool,
    /// Policy mode: read-only, ask (default), auto-edit or full-auto
    #[arg(long)]
    mode: Option<String>,
    /// A policy file added as the highest layer
    #[arg(long)]
    policy: Option<PathBuf>,
    /// Approve every tool call the policy asks about (never one it denies)
    #[arg(long)]
    yes: bool,
    /// Run commands without the sandbox (they then run with your permissions)
    #[arg(long)]
    no_sandbox: bool,
}

/// The provider a task used, as its `task_started` event recorded it.
pub struct Recorded {
    pub name: String,
    pub api: String,
    pub base_url: String,
    pub model: String,
    pub api_key_env: Option<String>,
}

pub(crate) fn provider_entry(
    args: &ProviderFlags,
    config: &BosunConfig,
    recorded: Option<&Recorded>,
) -> anyhow::Result<(String, ProviderEntry)> {
    let (name, mut entry) = named_entry(args, config, recorded)?;
    if args.tool_format.is_some() || args.edit_format.is_some() {
        let mut profile = entry.profile.clone().unwrap_or_default();
        if let Some(f) = &args.tool_format {
            profile.tool_format = Some(f.clone());
        }
        if let Some(f) = &args.edit_format {
            profile.edit_format = Some(f.clone());
        }
        if let Err(e) = profile.keys(&name) {
            // Said as the flag the user typed.
            let said = match e {
                bosun_core::CoreError::Config(m) => m,
                other => other.to_string(),
            };
            return Err(bosun_core::CoreError::Config(
                said.replace("profile.tool_format", "--tool-format")
                    .replace("profile.edit_format", "--edit-format"),
            )
            .into());
        }
        entry.profile = Some(profile);
    }
    Ok((name, entry))
}

fn named_entry(
    args: &ProviderFlags,
    config: &BosunConfig,
    recorded: Option<&Recorded>,
) -> anyhow::Result<(String, ProviderEntry)> {
    let adhoc = |api: &str, base_url: Option<String>, model: String, key: Option<String>| {
        let name = match api {
            "anthropic" => "anthropic",
            _ => "openai-compat",
        };
        (
            name.to_string(),
            ProviderEntry {
                api: api.to_string(),
                base_url,
                model,
                api_key_env: key,
                ..ProviderEntry::default()
            },
        )
    };
    if let Some(api) = &args.api {
        let Some(model) = &args.model else {
            bail!("--api needs --model (and usually --base-url)");
        };
        return Ok(adhoc(
            api,
            args.base_url.clone(),
            model.clone(),
            args.api_key_env.clone(),
        ));
    }
    if args.base_url.is_some() {
        bail!("--base-url needs --api (openai-chat, openai-responses or anthropic)");
    }
    let (name, mut entry) = match (args.provider.as_deref(), recorded) {
        (None, Some(r)) if config.providers.contains_key(&r.name) => {
            config.provider(Some(&r.name))?
        }
        (None, Some(r)) if !r.api.is_empty() => adhoc(
            &r.api,
            Some(r.base_url.clone()).filter(|u| !u.is_empty()),
            r.model.clone(),
            r.api_key_env.clone(),
        ),
        (name, _) => config.provider(name)?,
    };
    if let Some(m) = &args.model {
        entry.model = m.clone();
    }
    if let Some(k) = &args.api_key_env {
        entry.api_key_env = Some(k.clone());
    }
    Ok((name, entry))
}

/// Everything both `run` and `continue` build from the session flags.
struct Session {
    home: PathBuf,
    provider: bosun_model::ProviderConfig,
    api_key_env: Option<String>,
    env_remove: Vec<String>,
    mode: Option<Mode>,
    store: Arc<bosun_store::Store>,
}

fn session(
    args: &SessionArgs,
    recorded: Option<&Recorded>,
    repo_provider: Option<String>,
) -> anyhow::Result<Session> {
    if let Some(max) = args.max_cost_usd
        && !(max.is_finite() && max >= 0.0)
    {
        bail!("--max-cost-usd must be a non-negative number");
    }
    if args.max_steps == Some(0) {
        bail!("--max-steps must be at least 1");
    }
    let home = crate::home();
    let config = BosunConfig::load(&home)?;
    let (name, entry) = match (&args.p.provider, &args.p.api, repo_provider) {
        // The repository's own provider ([repos."…"] provider), or [routing] main, when no
        // flag names one.
        (None, None, Some(repo)) if recorded.is_none() => {
            let mut with = args.p.clone();
            with.provider = Some(repo);
            provider_entry(&with, &config, recorded)?
        }
        _ => provider_entry(&args.p, &config, recorded)?,
    };
    let provider = entry.to_provider_config(&name, &|var| std::env::var(var).ok())?;
    let mut env_remove =
        secret_env_names(std::env::vars_os().filter_map(|(k, _)| k.into_string().ok()));
    if let Some(var) = &entry.api_key_env {
        env_remove.push(var.clone());
    }
    Ok(Session {
        home,
        provider,
        api_key_env: entry.api_key_env.clone(),
        env_remove,
        mode: args.mode.as_deref().map(parse_mode).transpose()?,
        store: Arc::new(crate::commands::open_store()?),
    })
}

pub(crate) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("while starting the async runtime")
}

pub fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    let a = &args.session;
    let home = crate::home();
    let root = bosun_workspace::resolve_repo(&args.repo)?;
    let settings = bosun_core::repo_settings::effective(
        &BosunConfig::load(&home)?,
        &root,
        &bosun_core::repo_settings::Explicit {
            provider: a.p.provider.clone(),
            max_steps: a.max_steps,
            max_cost_usd: a.max_cost_usd,
        },
        DEFAULT_MAX_STEPS,
    )?;
    // The repository's own provider, else `[routing] main`, when no flag names one.
    let repo_provider = settings
        .provider
        .filter(|p| {
            matches!(
                p.source,
                bosun_core::repo_settings::Source::Repository
                    | bosun_core::repo_settings::Source::Routing
            )
        })
        .map(|p| p.value);
    let s = session(a, None, repo_provider)?;
    let checks = if args.no_checks {
        ChecksChoice::None
    } else if args.checks.is_empty() {
        ChecksChoice::Repository
    } else {
        ChecksChoice::These(
            args.checks
                .iter()
                .map(|c| bosun_core::checks::flag_check(c))
                .collect::<Result<_, _>>()?,
        )
    };
    let spec = TaskSpec {
        id: None,
        context: None,
        fork: None,
        checks,
        max_check_rounds: args.max_check_rounds,
        max_nudges: a.max_nudges,
        pins: a.pins.clone(),
        link: None,
        transcript: Vec::new(),
        plan: args.plan,
        home: s.home,
        repo: args.repo.clone(),
        prompt: args.prompt.clone(),
        base: args.base.clone(),
        provider: s.provider,
        max_steps: settings.max_steps.value,
        max_cost_usd: settings.max_cost_usd.map(|c| c.value),
        policy_file: a.policy.clone(),
        sandbox: !a.no_sandbox,
        mode: s.mode,
        api_key_env: s.api_key_env,
        env_remove: s.env_remove,
    };
    let answerer = Answerer::choose(a.yes, a.json);
    refuse_unpriced_headless(answerer, &spec.home, &root, &spec.provider.model)?;
    let store = Arc::clone(&s.store);
    runtime()?.block_on(async move {
        let handle = start_task(spec, store).await?;
        drive(handle, a.json, answerer).await
    })
}

/// `bosun continue TASK --prompt TEXT` (a follow-up) and `bosun resume TASK` (`message` None).
pub fn continue_or_resume(args: ContinueArgs, message: Option<String>) -> anyhow::Result<ExitCode> {
    continue_then(args, message, || Ok(()))
}

/// `bosun request-changes TASK`: the open review comments go to the agent as one message and
/// the task continues.
pub fn request_changes(args: ContinueArgs) -> anyhow::Result<ExitCode> {
    let store = Arc::new(crate::commands::open_store()?);
    let reviewer = bosun_core::review::Reviewer::open_changes(&crate::home(), store, &args.task)?;
    let (message, ids) = reviewer.changes_message()?;
    eprintln!(
        "bosun: sending {} comment{} to the agent",
        ids.len(),
        if ids.len() == 1 { "" } else { "s" }
    );
    continue_then(args, Some(message), move || Ok(reviewer.mark_sent(ids)?))
}

/// Continues a task; `ready` runs once the model and policy are set up, just before it starts.
fn continue_then(
    args: ContinueArgs,
    message: Option<String>,
    ready: impl FnOnce() -> anyhow::Result<()>,
) -> anyhow::Result<ExitCode> {
    let store = crate::commands::open_store()?;
    store.reconcile_interrupted()?;
    let row = store.find_task(&args.task)?;
    bosun_core::CoreError::refuse_imported(&row, "continued or resumed")?;
    let recorded = recorded_model(&store, &row.id)?;
    let s = session(&args.session, recorded.as_ref(), None)?;
    let a = &args.session;
    let repo_root = std::path::PathBuf::from(&row.repo);
    let spec = ContinueSpec {
        home: s.home,
        task_id: row.id,
        message,
        provider: s.provider,
        max_steps: a.max_steps,
        max_cost_usd: a.max_cost_usd,
        policy_file: a.policy.clone(),
        mode: s.mode,
        sandbox: !a.no_sandbox,
        env_remove: s.env_remove,
        max_nudges: a.max_nudges,
        pins: a.pins.clone(),
        unpins: args.unpins.clone(),
    };
    let answerer = Answerer::choose(a.yes, a.json);
    refuse_unpriced_headless(answerer, &spec.home, &repo_root, &spec.provider.model)?;
    let store = Arc::clone(&s.store);
    ready()?;
    runtime()?.block_on(async move {
        let handle = continue_task(spec, store).await?;
        drive(handle, a.json, answerer).await
    })
}

pub fn parse_mode(s: &str) -> anyhow::Result<Mode> {
    Mode::from_str(s).map_err(|_| {
        anyhow::anyhow!("unknown mode {s:?}: use read-only, ask, auto-edit or full-auto")
    })
}

async fn drive(
    mut handle: bosun_core::TaskHandle,
    json: bool,
    answerer: Answerer,
) -> anyhow::Result<ExitCode> {
    let mut transcript = Transcript::new();
    let mut stdout = std::io::stdout().lock();
    let mut status = None;
    let mut interrupts = 0;
    let mut stops = StopSignals::new()?;
    let mut telemetry = crate::telemetry::start();
    loop {
        tokio::select! {
            ev = handle.events.recv() => {
                let Some(ev) = ev else { break };
                if let Some(t) = telemetry.as_mut() {
                    t.observe_tree(&ev, &crate::telemetry::journaled);
                }
                if let EventMsg::TaskFinished(f) = &ev.msg {
                    status = Some(f.status);
                }
                if json {
                    serde_json::to_writer(&mut stdout, &ev)?;
                    writeln!(stdout)?;
                } else {
                    transcript.render(&ev, &mut stdout)?;
                }
                stdout.flush()?;
                if let EventMsg::ApprovalRequested(req) = ev.msg {
                    let answer = tokio::task::spawn_blocking(move || answerer.answer(&req))
                        .await
                        .context("the approval prompt failed")?;
                    let _ = handle.ops.send(Op::Approval(answer));
                }
            }
            signal = stops.next() => {
                interrupts += 1;
                if interrupts > 1 {
                    eprintln!("bosun: interrupted twice ({signal}), exiting; the task will show as interrupted");
                    return Ok(ExitCode::from(130));
                }
                eprintln!("bosun: stopping the task ({signal}; again to exit at once)");
                let _ = handle.ops.send(Op::Interrupt);
            }
        }
    }
    crate::telemetry::finish(telemetry).await;
    let outcome = handle.join.await.context("the task's loop panicked")??;
    let status = status.unwrap_or(outcome.status);
    Ok(ExitCode::from(exit_code(status)))
}

/// Ctrl-C, SIGTERM and SIGHUP: each stops the task the same way (status `interrupted`,
/// exit 130), so a service manager or a closed terminal ends it as cleanly as a user.
pub(crate) struct StopSignals {
    #[cfg(unix)]
    term: tokio::signal::unix::Signal,
    #[cfg(unix)]
    hup: tokio::signal::unix::Signal,
}

impl StopSignals {
    pub(crate) fn new() -> anyhow::Result<StopSignals> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Ok(StopSignals {
                term: signal(SignalKind::terminate()).context("while listening for SIGTERM")?,
                hup: signal(SignalKind::hangup()).context("while listening for SIGHUP")?,
            })
        }
        #[cfg(not(unix))]
        Ok(StopSignals {})
    }

    /// The next stop request, named.
    pub(crate) async fn next(&mut self) -> &'static str {
        #[cfg(unix)]
        {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => "Ctrl-C",
                _ = self.term.recv() => "SIGTERM",
                _ = self.hup.recv() => "SIGHUP",
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            "Ctrl-C"
        }
    }
}

/// The exit code of `bosun run`/`continue`/`resume` for a task's final status (the README's
/// table): 0 completed, 1 failed, 3 budget_exceeded, 4 max_steps, 5 checks_failed, 6 answered
/// (nothing changed), 130 interrupted. 2 is for usage errors, before any task runs.
pub fn exit_code(status: TaskStatus) -> u8 {
    match status {
        TaskStatus::Completed => 0,
        TaskStatus::Failed | TaskStatus::Running => 1,
        TaskStatus::BudgetExceeded => 3,
        TaskStatus::MaxSteps => 4,
        TaskStatus::ChecksFailed => 5,
        TaskStatus::Answered => 6,
        TaskStatus::Interrupted => 130,
    }
}
