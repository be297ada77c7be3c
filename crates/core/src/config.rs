//! `$BOSUN_HOME/config.toml`: named providers and defaults.
//!
//! ```toml
//! default_provider = "local"
//!
//! [providers.local]
//! api = "openai-chat"
//! base_url = "http://127.0.0.1:11434/v1"
//! model = "qwen2.5-coder:7b"
//!
//! [providers.claude]
//! api = "anthropic"
//! base_url = "https://api.anthropic.com"
//! model = "claude-sonnet-4-5"
//! api_key_env = "ANTHROPIC_API_KEY"
//! first_byte_timeout_secs = 120   # limits, each optional (defaults in `ProviderEntry`)
//! ```
//! Keys are never written here: only the name of the environment variable that holds one.

use crate::CoreError;
use bosun_model::{
    ApiKind, DEFAULT_MAX_OUTPUT_TOKENS, Limits, ModelProfile, ProfileKeys, ProviderConfig,
    RetryPolicy, Secret,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BosunConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_provider: Option<String>,
    /// The policy mode a new task starts in when none is chosen (`ask`, `auto-edit`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_mode: Option<String>,
    #[serde(default)]
    pub providers: BTreeMap<String, ProviderEntry>,
    /// Model requests a new task may make, in every repository (see [`crate::repo_settings`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_steps: Option<u32>,
    /// The most a new task may cost, in US dollars, in every repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cost_usd: Option<f64>,
    /// Failed rounds of checks before a task finishes `checks_failed`, in every repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_check_rounds: Option<u32>,
    /// Nudges (Bosun answering a reply that made no progress) before a task fails, in every
    /// repository (see [`crate::nudge`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_nudges: Option<u32>,
    /// Settings per repository, keyed by its path as `task_started.repo` shows it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub repos: BTreeMap<String, crate::repo_settings::RepoSettings>,
    /// How long transcripts are kept (`[history] retention_days = N`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<HistorySettings>,
    /// Spending limits over every task of every repository (`[budgets]`); per repository in
    /// `[repos."<path>".budgets]` and the project's `.bosun/config.toml`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budgets: Option<BudgetSettings>,
    /// How a task's context is kept within the model's window (`[context]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<ContextSettings>,
    /// What Bosun remembers about each repository across tasks (`[memory]`, see
    /// [`crate::memory`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemorySettings>,
    /// Which provider each role's requests go to (`[routing] main = "claude"`, `worker =
    /// "local"`); see [`crate::routing`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routing: Option<RoutingSettings>,
    /// Sub-agents' caps and how many run at once (`[subagents]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagents: Option<crate::orchestrate::SubagentSettings>,
    /// Named setups for `bosun compare --setup NAME` (`[setups.NAME]`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub setups: BTreeMap<String, crate::orchestrate::compare::Setup>,
    /// MCP servers every task may use (`[mcp_servers.NAME]`, see [`crate::mcp`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub mcp_servers: BTreeMap<String, bosun_mcp::McpServerConfig>,
    /// OpenTelemetry export (`[telemetry]`), off unless an endpoint is set here or in
    /// `OTEL_EXPORTER_OTLP_ENDPOINT`. The CLI and the app export; the core never does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub telemetry: Option<TelemetrySettings>,
}

/// `[telemetry]`: where a task's spans and metrics go (OTLP over HTTP, JSON).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TelemetrySettings {
    /// The collector's OTLP/HTTP base URL (`http://localhost:4318`); `/v1/traces` and
    /// `/v1/metrics` are added. Wins over `OTEL_EXPORTER_OTLP_ENDPOINT`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub otlp_endpoint: Option<String>,
    /// Sent with every export request, literally (no variables are expanded); on top of
    /// `OTEL_EXPORTER_OTLP_HEADERS`. Their values are never logged.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Export prompts, model outputs and tool arguments and results (redacted). Off by default:
    /// only names, numbers and outcomes leave the machine.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub include_content: bool,
    /// The resource's `service.name` (default `OTEL_SERVICE_NAME`, else `bosun`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_name: Option<String>,
}

/// `[routing]`: a provider of this file per role. A role left out uses `main`'s (and `main`
/// left out, the task's own provider: `--provider`, the repository's, `default_provider`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RoutingSettings {
    /// The user's task (the model talking to the user). `--provider` overrides it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub main: Option<String>,
    /// Writes a plan's task graph (`bosun run --plan`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planner: Option<String>,
    /// Sub-agents (`delegate`) and plan nodes, unless they name a role.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker: Option<String>,
    /// Compaction summaries and commit messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summarizer: Option<String>,
    /// A plan node that failed its checks twice runs once more on this model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub escalation: Option<String>,
}

impl RoutingSettings {
    /// The provider named for `role` (`main`, `planner`, `worker`, `summarizer`,
    /// `escalation`), if any.
    pub fn for_role(&self, role: &str) -> Option<&str> {
        match role {
            "main" => self.main.as_deref(),
            "planner" => self.planner.as_deref(),
            "worker" => self.worker.as_deref(),
            "summarizer" => self.summarizer.as_deref(),
            "escalation" => self.escalation.as_deref(),
            _ => None,
        }
    }
}

/// The roles of `[routing]`, in the order Settings shows them.
pub const ROLES: [&str; 5] = ["main", "planner", "worker", "summarizer", "escalation"];

/// `[memory]`: memory per repository.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MemorySettings {
    /// false: nothing is learned from tasks and nothing is put in a new task's prompt (default
    /// true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
}

/// `[context]`: compaction.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ContextSettings {
    /// Old tool outputs become one line when the conversation nears the window (default
    /// true); false goes straight to summarising.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mask_tool_outputs: Option<bool>,
    /// true: a compaction's summary waits, like an approval, until the user accepts, edits or
    /// refuses it (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review_summaries: Option<bool>,
    /// A provider of this file (`[providers.NAME]`) whose model writes compaction summaries
    /// (default: the task's own model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summarizer: Option<String>,
    /// The layered context's split of its budget (`[context.shares] targets = 0.35, …`); a
    /// layer left out keeps its default, and the shares are normalised.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shares: Option<SharesSettings>,
}

/// `[context.shares]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SharesSettings {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub targets: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tests: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub siblings: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symbols: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recent: Option<f64>,
}

impl ContextSettings {
    /// `top`'s fields where set, else `below`'s (a share at a time).
    pub fn over(top: Option<ContextSettings>, below: Option<ContextSettings>) -> ContextSettings {
        let (top, below) = (top.unwrap_or_default(), below.unwrap_or_default());
        let shares = match (top.shares, below.shares) {
            (None, s) | (s, None) => s,
            (Some(t), Some(b)) => Some(SharesSettings {
                targets: t.targets.or(b.targets),
                tests: t.tests.or(b.tests),
                siblings: t.siblings.or(b.siblings),
                symbols: t.symbols.or(b.symbols),
                recent: t.recent.or(b.recent),
            }),
        };
        ContextSettings {
            mask_tool_outputs: top.mask_tool_outputs.or(below.mask_tool_outputs),
            review_summaries: top.review_summaries.or(below.review_summaries),
            summarizer: top.summarizer.or(below.summarizer),
            shares,
        }
    }

    /// The shares, defaults where unset.
    pub fn shares(&self) -> bosun_context::Shares {
        let d = bosun_context::Shares::default();
        let s = self.shares.clone().unwrap_or_default();
        bosun_context::Shares {
            targets: s.targets.unwrap_or(d.targets),
            tests: s.tests.unwrap_or(d.tests),
            siblings: s.siblings.unwrap_or(d.siblings),
            symbols: s.symbols.unwrap_or(d.symbols),
            recent: s.recent.unwrap_or(d.recent),
        }
    }
}

/// `[budgets]`: limits in US dollars that hold across every running task in every process
/// (see [`crate::budget`]). Days, weeks (from Monday) and months are local time.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BudgetSettings {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub daily_usd: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weekly_usd: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub monthly_usd: Option<f64>,
    /// The spend-rate breaker: past this many dollars in the last minute a task pauses and
    /// asks (`approval_requested{kind: spend_rate}`); headless, it stops `budget_exceeded`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_usd_per_minute: Option<f64>,
}

/// `[history]`: what the journal keeps.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct HistorySettings {
    /// Tasks finished more than this many days ago lose their transcript (events), their
    /// checkpoints (`refs/bosun/<id>/*`) and their worktree; their row and cost rows stay. None
    /// (the default): kept forever.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retention_days: Option<u32>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderEntry {
    pub api: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    pub model: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// Retries after the first attempt (default 4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_retries: Option<u32>,
    /// First backoff delay in milliseconds (default 500); it doubles, with jitter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_initial_delay_ms: Option<u64>,
    /// Seconds to open the connection (default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_timeout_secs: Option<u64>,
    /// Seconds from the request to the response's first event (default 300: a local server on
    /// a small machine sends nothing while it reads a long prompt). Retried once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_byte_timeout_secs: Option<u64>,
    /// Seconds between two events of the response (default 60). Not retried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_timeout_secs: Option<u64>,
    /// The response's token limit, sent with the request (default 8192).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
    /// The most bytes of one response (default 8 MB, 8388608); past it the response is cut off
    /// and not retried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_response_bytes: Option<u64>,
    /// The provider's service tier requests are sent and priced in: `standard` (default),
    /// `priority` or `flex` (OpenAI's `service_tier`), `batch` (prices only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_tier: Option<String>,
    /// The sampling temperature, 0 to 2 (default 0: deterministic).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// How the model takes tools and writes edits (`profile = {native_tools = false, edit_format
    /// = "search-replace", context_window = 32768}`); keys set here are never probed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<ProfileEntry>,
    /// Providers of this file used in order when this one fails after its retries (down,
    /// overloaded, rate-limited past its retry budget): `fallback = ["local"]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fallback: Vec<String>,
}

/// `[providers.NAME] profile`: each key optional; what it leaves out comes from a probe (local
/// servers) or the default (native tools, edits through the tools).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileEntry {
    /// The model's own tool calls are reliable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub native_tools: Option<bool>,
    /// How tools are offered when native ones are not reliable: `hermes`, `llama3`, `mistral`,
    /// `json` (or `native`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_format: Option<String>,
    /// `tools`, `whole` or `search-replace`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edit_format: Option<String>,
    /// Tokens the model attends to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u32>,
}

impl ProfileEntry {
    /// No key set.
    pub fn is_empty(&self) -> bool {
        self == &ProfileEntry::default()
    }

    /// The keys as typed values; a value that is not one of the known ones is an error naming
    /// the key and the choices.
    pub fn keys(&self, name: &str) -> Result<ProfileKeys, CoreError> {
        let tool_format = match &self.tool_format {
            Some(f) => Some(f.parse().map_err(|e: String| {
                CoreError::Config(format!("provider {name}: profile.tool_format: {e}"))
            })?),
            None => None,
        };
        let edit_format = match &self.edit_format {
            Some(f) => Some(f.parse().map_err(|e: String| {
                CoreError::Config(format!("provider {name}: profile.edit_format: {e}"))
            })?),
            None => None,
        };
        if let Some(w) = self.context_window
            && w < 512
        {
            return Err(CoreError::Config(format!(
                "provider {name}: profile.context_window = {w} is too small (at least 512 tokens)"
            )));
        }
        Ok(ProfileKeys {
            native_tools: self.native_tools,
            tool_format,
            edit_format,
            context_window: self.context_window,
        })
    }

    /// `base` with the keys set here put over it (see [`ProfileKeys::over`]).
    pub fn apply(&self, name: &str, base: &ModelProfile) -> Result<ModelProfile, CoreError> {
        Ok(self.keys(name)?.over(base))
    }
}

/// The limit keys of a provider entry, as the Settings screen shows and edits them (`None`: the
/// default, which [`ProviderLimits::defaults`] gives).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderLimits {
    #[serde(default)]
    pub connect_timeout_secs: Option<u64>,
    #[serde(default)]
    pub first_byte_timeout_secs: Option<u64>,
    #[serde(default)]
    pub idle_timeout_secs: Option<u64>,
    #[serde(default)]
    pub max_output_tokens: Option<u32>,
    #[serde(default)]
    pub max_response_bytes: Option<u64>,
}

impl ProviderLimits {
    /// Every key with its default value.
    pub fn defaults() -> ProviderLimits {
        ProviderLimits {
            connect_timeout_secs: Some(Limits::DEFAULT_CONNECT_TIMEOUT_SECS),
            first_byte_timeout_secs: Some(Limits::DEFAULT_FIRST_BYTE_TIMEOUT_SECS),
            idle_timeout_secs: Some(Limits::DEFAULT_IDLE_TIMEOUT_SECS),
            max_output_tokens: Some(DEFAULT_MAX_OUTPUT_TOKENS),
            max_response_bytes: Some(Limits::DEFAULT_MAX_RESPONSE_BYTES),
        }
    }
}

pub const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";
pub const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";

impl BosunConfig {
    /// Reads `home/config.toml`; a missing file is an empty config.
    pub fn load(home: &Path) -> Result<BosunConfig, CoreError> {
        let path = home.join("config.toml");
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(e) => {
                return Err(CoreError::Config(format!(
                    "cannot read {}: {e}",
                    path.display()
                )));
            }
        };
        toml::from_str(&text)
            .map_err(|e| CoreError::Config(format!("{} is not valid: {e}", path.display())))
    }

    /// Writes the config to `home/config.toml` (through a temporary file, so a crash never leaves
    /// half a file) and returns its path. Comments in an earlier file are not kept.
    pub fn save(&self, home: &Path) -> Result<PathBuf, CoreError> {
        let path = home.join("config.toml");
        let text = toml::to_string_pretty(self)
            .map_err(|e| CoreError::Config(format!("cannot write the config: {e}")))?;
        std::fs::create_dir_all(home)
            .map_err(|e| CoreError::Config(format!("cannot create {}: {e}", home.display())))?;
        let tmp = path.with_extension("toml.tmp");
        std::fs::write(&tmp, text)
            .and_then(|()| std::fs::rename(&tmp, &path))
            .map_err(|e| CoreError::Config(format!("cannot write {}: {e}", path.display())))?;
        Ok(path)
    }

    /// Adds the provider `name` to `home/config.toml`, or replaces it, and saves the file. The
    /// first provider saved becomes the default. Returns the config as saved.
    pub fn upsert_provider(
        home: &Path,
        name: &str,
        entry: ProviderEntry,
    ) -> Result<BosunConfig, CoreError> {
        check_provider_name(name)?;
        if entry.model.trim().is_empty() {
            return Err(CoreError::Config(format!(
                "provider {name}: choose a model"
            )));
        }
        entry.limits(name)?;
        positive(name, "max_output_tokens", entry.max_output_tokens)?;
        if let Some(p) = &entry.profile {
            p.apply(name, &ModelProfile::DEFAULT)?;
        }
        let mut config = Self::load(home)?;
        config.providers.insert(name.to_string(), entry);
        if config.default_provider.is_none() {
            config.default_provider = Some(name.to_string());
        }
        config.save(home)?;
        Ok(config)
    }

    /// Removes the provider `name` from `home/config.toml` (and as the default). Returns the
    /// config as saved.
    pub fn remove_provider(home: &Path, name: &str) -> Result<BosunConfig, CoreError> {
        let mut config = Self::load(home)?;
        if config.providers.remove(name).is_none() {
            return Err(CoreError::Config(format!(
                "no provider named {name:?} in config.toml"
            )));
        }
        if config.default_provider.as_deref() == Some(name) {
            config.default_provider = config.providers.keys().next().cloned();
        }
        // Roles and fallbacks that named it no longer do.
        if let Some(routing) = &mut config.routing {
            for role in [
                &mut routing.main,
                &mut routing.planner,
                &mut routing.worker,
                &mut routing.summarizer,
                &mut routing.escalation,
            ] {
                if role.as_deref() == Some(name) {
                    *role = None;
                }
            }
            if *routing == RoutingSettings::default() {
                config.routing = None;
            }
        }
        for entry in config.providers.values_mut() {
            entry.fallback.retain(|f| f != name);
        }
        config.save(home)?;
        Ok(config)
    }

    /// Sets `[routing]` in `home/config.toml` (a role left out, or empty, uses `main`'s) and
    /// saves the file. Every name must be a provider of the file. Returns the config as saved.
    pub fn set_routing(home: &Path, routing: RoutingSettings) -> Result<BosunConfig, CoreError> {
        let mut config = Self::load(home)?;
        let pick = |role: &str, name: Option<String>| -> Result<Option<String>, CoreError> {
            match name.map(|n| n.trim().to_string()).filter(|n| !n.is_empty()) {
                None => Ok(None),
                Some(n) => {
                    config
                        .provider(Some(&n))
                        .map_err(|e| CoreError::Config(format!("[routing] {role}: {e}")))?;
                    Ok(Some(n))
                }
            }
        };
        let routing = RoutingSettings {
            main: pick("main", routing.main)?,
            planner: pick("planner", routing.planner)?,
            worker: pick("worker", routing.worker)?,
            summarizer: pick("summarizer", routing.summarizer)?,
            escalation: pick("escalation", routing.escalation)?,
        };
        config.routing = (routing != RoutingSettings::default()).then_some(routing);
        config.save(home)?;
        Ok(config)
    }

    /// Sets `[providers.PROVIDER] fallback` (the providers used in order when it fails) in
    /// `home/config.toml` and saves the file. Each must be another provider of the file, listed
    /// once. Returns the config as saved.
    pub fn set_fallback(
        home: &Path,
        provider: &str,
        fallback: Vec<String>,
    ) -> Result<BosunConfig, CoreError> {
        let mut config = Self::load(home)?;
        config.provider(Some(provider))?;
        let mut list: Vec<String> = Vec::new();
        for name in fallback {
            let name = name.trim().to_string();
            if name == provider {
                return Err(CoreError::Config(format!(
                    "provider {provider} cannot fall back to itself: choose another provider"
                )));
            }
            if list.contains(&name) {
                return Err(CoreError::Config(format!(
                    "provider {provider}: {name:?} is listed twice in its fallback"
                )));
            }
            config
                .provider(Some(&name))
                .map_err(|e| CoreError::Config(format!("provider {provider}: fallback: {e}")))?;
            list.push(name);
        }
        if let Some(entry) = config.providers.get_mut(provider) {
            entry.fallback = list;
        }
        config.save(home)?;
        Ok(config)
    }

    /// A provider renamed from `old` to `new`: the roles and fallback lists that named `old`
    /// name `new` (a list that would then name its own provider drops it). Returns the config
    /// as saved.
    pub fn rename_references(home: &Path, old: &str, new: &str) -> Result<BosunConfig, CoreError> {
        let mut config = Self::load(home)?;
        if let Some(routing) = &mut config.routing {
            for role in [
                &mut routing.main,
                &mut routing.planner,
                &mut routing.worker,
                &mut routing.summarizer,
                &mut routing.escalation,
            ] {
                if role.as_deref() == Some(old) {
                    *role = Some(new.to_string());
                }
            }
        }
        for (name, entry) in config.providers.iter_mut() {
            let mut list: Vec<String> = Vec::new();
            for f in entry.fallback.drain(..) {
                let f = if f == old { new.to_string() } else { f };
                if &f != name && !list.contains(&f) {
                    list.push(f);
                }
            }
            entry.fallback = list;
        }
        config.save(home)?;
        Ok(config)
    }

    /// The named provider, or the default one.
    pub fn provider(&self, name: Option<&str>) -> Result<(String, ProviderEntry), CoreError> {
        let name = match name.or(self.default_provider.as_deref()) {
            Some(n) => n.to_string(),
            None if self.providers.len() == 1 => {
                self.providers.keys().next().cloned().unwrap_or_default()
            }
            None => {
                return Err(CoreError::Config(
                    "no provider chosen: pass --provider NAME, or --api, --base-url and --model, \
                     or set default_provider in config.toml"
                        .into(),
                ));
            }
        };
        match self.providers.get(&name) {
            Some(entry) => Ok((name, entry.clone())),
            None => {
                let known: Vec<&str> = self.providers.keys().map(String::as_str).collect();
                Err(CoreError::Config(format!(
                    "no provider named {name:?} in config.toml (known: {})",
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                )))
            }
        }
    }
}

/// A provider name is a TOML key and a keychain account: letters, digits, `-`, `_` and `.`.
pub fn check_provider_name(name: &str) -> Result<(), CoreError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    if ok {
        Ok(())
    } else {
        Err(CoreError::Config(format!(
            "provider name {name:?}: use 1 to 64 letters, digits, '-', '_' or '.'"
        )))
    }
}

impl ProviderEntry {
    /// Its limit keys, as set (unset ones are `None`).
    pub fn limit_keys(&self) -> ProviderLimits {
        ProviderLimits {
            connect_timeout_secs: self.connect_timeout_secs,
            first_byte_timeout_secs: self.first_byte_timeout_secs,
            idle_timeout_secs: self.idle_timeout_secs,
            max_output_tokens: self.max_output_tokens,
            max_response_bytes: self.max_response_bytes,
        }
    }

    /// The entry with its limit keys set to `keys`.
    pub fn with_limit_keys(self, keys: ProviderLimits) -> ProviderEntry {
        ProviderEntry {
            connect_timeout_secs: keys.connect_timeout_secs,
            first_byte_timeout_secs: keys.first_byte_timeout_secs,
            idle_timeout_secs: keys.idle_timeout_secs,
            max_output_tokens: keys.max_output_tokens,
            max_response_bytes: keys.max_response_bytes,
            ..self
        }
    }

    /// Builds the client configuration. The key is read from the environment variable named by
    /// `api_key_env`; without one, the provider's standard variable is used only for the
    /// provider's own endpoint, so a key is never sent to some other server by accident.
    pub fn to_provider_config(
        &self,
        name: &str,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<ProviderConfig, CoreError> {
        let api = ApiKind::from_str(&self.api).map_err(|_| {
            CoreError::Config(format!(
                "provider {name}: unknown api {:?} (use openai-chat, openai-responses or anthropic)",
                self.api
            ))
        })?;
        let (default_url, default_key_env) = match api {
            ApiKind::OpenAiChat | ApiKind::OpenAiResponses => (OPENAI_BASE_URL, "OPENAI_API_KEY"),
            ApiKind::Anthropic => (ANTHROPIC_BASE_URL, "ANTHROPIC_API_KEY"),
        };
        let base_url = self
            .base_url
            .clone()
            .unwrap_or_else(|| default_url.to_string());
        let key_env = match &self.api_key_env {
            Some(var) => Some(var.clone()),
            None if base_url.trim_end_matches('/') == default_url => {
                Some(default_key_env.to_string())
            }
            None => None,
        };
        let api_key = match key_env {
            Some(var) => match env(&var).filter(|v| !v.is_empty()) {
                Some(v) => Some(Secret::new(v)),
                None if self.api_key_env.is_some() => {
                    return Err(CoreError::Config(format!(
                        "provider {name}: the environment variable {var} is not set"
                    )));
                }
                None => None,
            },
            None => None,
        };
        Ok(ProviderConfig {
            name: name.to_string(),
            api,
            base_url,
            model: self.model.clone(),
            api_key,
            max_output_tokens: positive(name, "max_output_tokens", self.max_output_tokens)?
                .unwrap_or(DEFAULT_MAX_OUTPUT_TOKENS),
            limits: self.limits(name)?,
            service_tier: match &self.service_tier {
                Some(t) => t.parse().map_err(|_: bosun_model::ModelError| {
                    CoreError::Config(format!(
                        "provider {name}: unknown service_tier `{t}`: use standard, batch, \
                         priority or flex"
                    ))
                })?,
                None => Default::default(),
            },
            profile: match &self.profile {
                Some(p) => p.apply(name, &ModelProfile::DEFAULT)?,
                None => ModelProfile::DEFAULT,
            },
            profile_keys: match &self.profile {
                Some(p) => p.keys(name)?,
                None => ProfileKeys::default(),
            },
            temperature: match self.temperature {
                Some(t) if !(0.0..=2.0).contains(&t) => {
                    return Err(CoreError::Config(format!(
                        "provider {name}: temperature = {t} is not allowed: use 0 to 2 (0, the default, samples deterministically)"
                    )));
                }
                Some(t) => Some(t),
                None => Some(bosun_model::DEFAULT_TEMPERATURE),
            },
            retry: {
                let mut r = RetryPolicy::default();
                if let Some(n) = self.max_retries {
                    r.max_retries = n;
                }
                if let Some(ms) = self.retry_initial_delay_ms {
                    r.initial_delay = Duration::from_millis(ms);
                }
                r
            },
        })
    }

    fn limits(&self, name: &str) -> Result<Limits, CoreError> {
        let defaults = Limits::default();
        let secs = |key, v: Option<u64>, default: Duration| {
            Ok::<_, CoreError>(positive(name, key, v)?.map_or(default, Duration::from_secs))
        };
        Ok(Limits {
            connect_timeout: secs(
                "connect_timeout_secs",
                self.connect_timeout_secs,
                defaults.connect_timeout,
            )?,
            first_byte_timeout: secs(
                "first_byte_timeout_secs",
                self.first_byte_timeout_secs,
                defaults.first_byte_timeout,
            )?,
            idle_timeout: secs(
                "idle_timeout_secs",
                self.idle_timeout_secs,
                defaults.idle_timeout,
            )?,
            max_response_bytes: positive(name, "max_response_bytes", self.max_response_bytes)?
                .unwrap_or(defaults.max_response_bytes),
        })
    }
}

/// A limit of 0 would fail every request: it is refused with the key that set it.
fn positive<T: PartialEq + Default + Copy>(
    provider: &str,
    key: &str,
    value: Option<T>,
) -> Result<Option<T>, CoreError> {
    match value {
        Some(v) if v == T::default() => Err(CoreError::Config(format!(
            "provider {provider}: {key} must be at least 1 (leave it out for the default)"
        ))),
        other => Ok(other),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn entry(api: &str, base_url: Option<&str>, key_env: Option<&str>) -> ProviderEntry {
        ProviderEntry {
            api: api.into(),
            base_url: base_url.map(Into::into),
            model: "m".into(),
            api_key_env: key_env.map(Into::into),
            ..ProviderEntry::default()
        }
    }

    #[test]
    fn limits_come_from_the_entry_with_defaults_and_zero_is_refused() {
        let cfg = entry("openai-chat", Some("http://h/v1"), None)
            .to_provider_config("local", &|_| None)
            .unwrap();
        assert_eq!(cfg.limits, Limits::default());
        assert_eq!(cfg.limits.first_byte_timeout, Duration::from_secs(300));
        assert_eq!(cfg.max_output_tokens, 8192);
        let text = "[providers.local]\napi = \"openai-chat\"\nbase_url = \"http://h/v1\"\nmodel = \"m\"\n\
                    connect_timeout_secs = 2\nfirst_byte_timeout_secs = 30\nidle_timeout_secs = 5\n\
                    max_output_tokens = 1024\nmax_response_bytes = 65536\n";
        let config: BosunConfig = toml::from_str(text).unwrap();
        let (_, local) = config.provider(Some("local")).unwrap();
        let cfg = local.to_provider_config("local", &|_| None).unwrap();
        assert_eq!(
            cfg.limits,
            Limits {
                connect_timeout: Duration::from_secs(2),
                first_byte_timeout: Duration::from_secs(30),
                idle_timeout: Duration::from_secs(5),
                max_response_bytes: 65536,
            }
        );
        assert_eq!(cfg.max_output_tokens, 1024);
        let zero = ProviderEntry {
            idle_timeout_secs: Some(0),
            ..local
        };
        let err = zero.to_provider_config("local", &|_| None).unwrap_err();
        assert!(
            err.to_string()
                .contains("idle_timeout_secs must be at least 1"),
            "{err}"
        );
        let unknown: Result<BosunConfig, _> =
            toml::from_str("[providers.x]\napi = \"anthropic\"\nmodel = \"m\"\ntimeout = 3\n");
        assert!(unknown.unwrap_err().to_string().contains("timeout"));
    }

    #[test]
    fn standard_key_is_only_sent_to_the_providers_own_endpoint() {
        let env = |v: &str| (v == "OPENAI_API_KEY").then(|| "sk-test".to_string());
        let local = entry("openai-chat", Some("http://127.0.0.1:11434/v1"), None)
            .to_provider_config("local", &env)
            .unwrap();
        assert!(local.api_key.is_none());
        let openai = entry("openai-chat", None, None)
            .to_provider_config("openai", &env)
            .unwrap();
        assert_eq!(
            openai.api_key.map(|k| k.expose().to_string()),
            Some("sk-test".into())
        );
    }

    #[test]
    fn a_named_key_variable_that_is_missing_is_an_error() {
        let err = entry("anthropic", None, Some("MY_KEY"))
            .to_provider_config("c", &|_| None)
            .unwrap_err();
        assert!(err.to_string().contains("MY_KEY is not set"), "{err}");
    }

    #[test]
    fn saved_providers_load_back_and_removing_the_default_picks_another() {
        let dir = tempfile::tempdir().unwrap();
        let local = entry("openai-chat", Some("http://127.0.0.1:11434/v1"), None);
        let claude = entry("anthropic", None, Some("ANTHROPIC_API_KEY"));
        BosunConfig::upsert_provider(dir.path(), "local", local.clone()).unwrap();
        BosunConfig::upsert_provider(dir.path(), "claude", claude.clone()).unwrap();
        let text = std::fs::read_to_string(dir.path().join("config.toml")).unwrap();
        assert!(text.contains("[providers.local]"), "{text}");
        assert!(!text.contains("max_retries"), "{text}");
        let cfg = BosunConfig::load(dir.path()).unwrap();
        assert_eq!(cfg.default_provider.as_deref(), Some("local"));
        assert_eq!(cfg.providers.get("local"), Some(&local));
        assert_eq!(cfg.providers.get("claude"), Some(&claude));

        let mut edited = local.clone();
        edited.model = "qwen3".into();
        BosunConfig::upsert_provider(dir.path(), "local", edited).unwrap();
        let cfg = BosunConfig::remove_provider(dir.path(), "local").unwrap();
        assert_eq!(cfg, BosunConfig::load(dir.path()).unwrap());
        assert_eq!(cfg.default_provider.as_deref(), Some("claude"));
        assert!(BosunConfig::remove_provider(dir.path(), "local").is_err());
        let err = BosunConfig::upsert_provider(dir.path(), "a b]", local).unwrap_err();
        assert!(err.to_string().contains("letters, digits"), "{err}");
    }

    #[test]
    fn routing_and_fallbacks_name_providers_of_the_file_and_never_the_provider_itself() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path();
        for name in ["a", "b", "c"] {
            BosunConfig::upsert_provider(
                home,
                name,
                entry("openai-chat", Some("http://h/v1"), None),
            )
            .unwrap();
        }
        let saved = BosunConfig::set_routing(
            home,
            RoutingSettings {
                main: Some("a".into()),
                summarizer: Some("c".into()),
                worker: Some("".into()),
                ..Default::default()
            },
        )
        .unwrap();
        let routing = saved.routing.clone().unwrap();
        assert_eq!(
            (
                routing.main.as_deref(),
                routing.worker.as_deref(),
                routing.summarizer.as_deref()
            ),
            (Some("a"), None, Some("c"))
        );
        assert_eq!(saved, BosunConfig::load(home).unwrap());
        let text = std::fs::read_to_string(home.join("config.toml")).unwrap();
        assert!(
            text.contains("[routing]\nmain = \"a\"\nsummarizer = \"c\""),
            "{text}"
        );

        let err = BosunConfig::set_routing(
            home,
            RoutingSettings {
                planner: Some("zzz".into()),
                ..Default::default()
            },
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("[routing] planner") && err.contains("known: a, b, c"),
            "{err}"
        );
        // A refused change leaves the file as it was.
        assert_eq!(BosunConfig::load(home).unwrap().routing, Some(routing));

        let saved = BosunConfig::set_fallback(home, "a", vec!["c".into(), "b".into()]).unwrap();
        assert_eq!(saved.providers["a"].fallback, vec!["c", "b"]);
        assert_eq!(
            BosunConfig::load(home).unwrap().providers["a"].fallback,
            vec!["c", "b"]
        );
        let err = BosunConfig::set_fallback(home, "a", vec!["b".into(), "a".into()])
            .unwrap_err()
            .to_string();
        assert!(err.contains("cannot fall back to itself"), "{err}");
        let err = BosunConfig::set_fallback(home, "a", vec!["b".into(), "b".into()])
            .unwrap_err()
            .to_string();
        assert!(err.contains("listed twice"), "{err}");
        let err = BosunConfig::set_fallback(home, "a", vec!["nope".into()])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("no provider named \"nope\"") && err.contains("known: a, b, c"),
            "{err}"
        );
        let err = BosunConfig::set_fallback(home, "nope", vec![])
            .unwrap_err()
            .to_string();
        assert!(err.contains("no provider named \"nope\""), "{err}");
        assert_eq!(
            BosunConfig::load(home).unwrap().providers["a"].fallback,
            vec!["c", "b"]
        );

        // A renamed provider keeps its place in the roles and the lists.
        let cfg = BosunConfig::rename_references(home, "b", "bee").unwrap();
        assert_eq!(cfg.providers["a"].fallback, vec!["c", "bee"]);

        // Removing a provider takes it out of the roles and the fallback lists.
        let cfg = BosunConfig::remove_provider(home, "c").unwrap();
        assert_eq!(cfg.providers["a"].fallback, vec!["bee"]);
        assert_eq!(cfg.routing.unwrap().summarizer, None);
        let cfg = BosunConfig::set_fallback(home, "a", vec![]).unwrap();
        assert!(cfg.providers["a"].fallback.is_empty());
    }

    #[test]
    fn config_file_parses_and_picks_the_default() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("config.toml"),
            "default_provider = \"b\"\n[providers.a]\napi = \"anthropic\"\nmodel = \"x\"\n\
             [providers.b]\napi = \"openai-chat\"\nbase_url = \"http://h/v1\"\nmodel = \"y\"\n",
        )
        .unwrap();
        let cfg = BosunConfig::load(dir.path()).unwrap();
        let (name, p) = cfg.provider(None).unwrap();
        assert_eq!((name.as_str(), p.model.as_str()), ("b", "y"));
        let err = cfg.provider(Some("zzz")).unwrap_err();
        assert!(err.to_string().contains("known: a, b"), "{err}");
    }
}
