//! Model profiles: what `config.toml` says, what a probe found, and the cache of probes in
//! `$BOSUN_HOME/model-profiles.json` keyed by (base URL, model).
//!
//! A loopback or LAN `openai-chat` server's model is probed the first time it is used; any
//! other server only on `bosun models probe` (never a paid API unasked). Keys the provider's
//! `profile = {…}` sets are never probed.

use crate::CoreError;
use bosun_model::{ModelProfile, ProfileSource, ProviderConfig};
use bosun_protocol::ModelProfileInfo;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The cache file under `$BOSUN_HOME`.
pub const PROFILES_FILE: &str = "model-profiles.json";

/// What one probe of a (base URL, model) found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbeReport {
    pub base_url: String,
    pub model: String,
    /// The profile the probe chose (source `probe`).
    pub profile: ModelProfile,
    /// Where the chat template was read (`llama.cpp /props`, `ollama /api/show`), if anywhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template_from: Option<String>,
    /// What the probe observed, one line each ("2 of 2 native tool calls were valid", …).
    pub findings: Vec<String>,
    /// When it ran (RFC 3339, UTC).
    pub probed_at: String,
}

/// The profile a provider's tasks use, and where each part came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProfileView {
    pub profile: ModelProfile,
    /// The cached probe, if the (base URL, model) was probed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<ProbeReport>,
    /// Whether a task would probe it first (a local server, not yet probed, not fully
    /// configured).
    pub would_probe: bool,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct CacheFile {
    /// `"<base_url> <model>"` → report.
    #[serde(default)]
    profiles: BTreeMap<String, ProbeReport>,
}

fn key(base_url: &str, model: &str) -> String {
    format!("{} {model}", base_url.trim_end_matches('/'))
}

fn cache_path(home: &Path) -> PathBuf {
    home.join(PROFILES_FILE)
}

fn load_cache(home: &Path) -> CacheFile {
    std::fs::read_to_string(cache_path(home))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

/// The cached probe of (base URL, model), if any.
pub fn cached(home: &Path, base_url: &str, model: &str) -> Option<ProbeReport> {
    load_cache(home).profiles.remove(&key(base_url, model))
}

/// Keeps `report` in the cache (through a temporary file, so a crash never leaves half a file).
pub fn save(home: &Path, report: &ProbeReport) -> Result<PathBuf, CoreError> {
    let mut cache = load_cache(home);
    cache
        .profiles
        .insert(key(&report.base_url, &report.model), report.clone());
    let path = cache_path(home);
    let text = serde_json::to_string_pretty(&cache)
        .map_err(|e| CoreError::Config(format!("cannot write {}: {e}", path.display())))?;
    std::fs::create_dir_all(home)
        .map_err(|e| CoreError::Config(format!("cannot create {}: {e}", home.display())))?;
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, &path))
        .map_err(|e| CoreError::Config(format!("cannot write {}: {e}", path.display())))?;
    Ok(path)
}

/// The profile for `cfg`: its configured keys over the cached probe, or over the default.
pub fn view(home: &Path, cfg: &ProviderConfig) -> ProfileView {
    let probe = cached(home, &cfg.base_url, &cfg.model);
    let base = probe
        .as_ref()
        .map(|p| p.profile.clone())
        .unwrap_or(ModelProfile::DEFAULT);
    ProfileView {
        profile: cfg.profile_keys.over(&base),
        would_probe: probe.is_none() && cfg.auto_probe(),
        probe,
    }
}

/// Probes `cfg`'s server and model (a few short requests: the chat template, two native tool
/// calls), keeps the report in the cache and returns it. The user asked: any server is probed.
pub async fn probe_and_save(home: &Path, cfg: &ProviderConfig) -> Result<ProbeReport, CoreError> {
    match probe_into_cache(home, cfg, true).await? {
        Some(report) => Ok(report),
        None => Err(CoreError::Config(format!(
            "{} at {} could not be probed",
            cfg.model, cfg.base_url
        ))),
    }
}

async fn probe_into_cache(
    home: &Path,
    cfg: &ProviderConfig,
    asked: bool,
) -> Result<Option<ProbeReport>, CoreError> {
    let Some(found) = bosun_model::probe_profile(cfg, asked).await? else {
        return Ok(None);
    };
    let report = ProbeReport {
        base_url: cfg.base_url.trim_end_matches('/').to_string(),
        model: cfg.model.clone(),
        profile: found.profile,
        template_from: found.template_from,
        findings: found.findings,
        probed_at: bosun_store::rfc3339(time::OffsetDateTime::now_utc()),
    };
    save(home, &report)?;
    Ok(Some(report))
}

/// What [`complete`] did for a task's provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Completed {
    /// Nothing to find out (not a local server, or every key configured).
    AsConfigured,
    /// The cached probe filled in the keys the user left out.
    Cached(ProbeReport),
    /// A probe ran now and filled them in (and is cached).
    Probed(ProbeReport),
    /// The probe failed: the configured keys over the default are used; the message says why.
    ProbeFailed(String),
}

/// Fills in the profile of a task's provider: the keys the user set, over the cached probe of
/// a local server's model, or a probe run now the first time that model is used.
pub async fn complete(home: &Path, cfg: &mut ProviderConfig) -> Completed {
    let done = complete_profile(home, cfg).await;
    small_output_limit(cfg);
    done
}

/// The response limit of a model profiled as small, when none is configured: a small model
/// that falls into repeating itself stops within about a minute and a half on a CPU instead
/// of six (2,048 tokens; every edit the suite's tasks need is far shorter).
pub const SMALL_MAX_OUTPUT_TOKENS: u32 = 2048;

fn small_output_limit(cfg: &mut ProviderConfig) {
    if cfg.profile.is_small() && cfg.max_output_tokens == bosun_model::DEFAULT_MAX_OUTPUT_TOKENS {
        cfg.max_output_tokens = SMALL_MAX_OUTPUT_TOKENS;
    }
}

async fn complete_profile(home: &Path, cfg: &mut ProviderConfig) -> Completed {
    if !cfg.auto_probe() {
        return Completed::AsConfigured;
    }
    if let Some(report) = cached(home, &cfg.base_url, &cfg.model) {
        cfg.profile = cfg.profile_keys.over(&report.profile);
        return Completed::Cached(report);
    }
    match probe_into_cache(home, cfg, false).await {
        Ok(Some(report)) => {
            cfg.profile = cfg.profile_keys.over(&report.profile);
            Completed::Probed(report)
        }
        Ok(None) => Completed::AsConfigured,
        Err(e) => Completed::ProbeFailed(e.to_string()),
    }
}

/// The profile as a task records it; `None` for the default profile.
pub fn info(profile: &ModelProfile) -> Option<ModelProfileInfo> {
    if profile == &ModelProfile::DEFAULT {
        return None;
    }
    Some(ModelProfileInfo {
        native_tools: profile.native_tools,
        tool_format: profile.tool_format.as_str().to_string(),
        edit_format: profile.edit_format.as_str().to_string(),
        context_window: profile.context_window,
        source: profile.source.as_str().to_string(),
    })
}

/// The profile a task recorded, read back (a resumed or continued task keeps it).
pub fn from_info(info: &ModelProfileInfo) -> Option<ModelProfile> {
    Some(ModelProfile {
        native_tools: info.native_tools,
        tool_format: info.tool_format.parse().ok()?,
        edit_format: info.edit_format.parse().ok()?,
        context_window: info.context_window,
        source: match info.source.as_str() {
            "config" => ProfileSource::Config,
            "probe" => ProfileSource::Probe,
            _ => ProfileSource::Default,
        },
    })
}

/// One line saying how the model is talked to ("tools as hermes text, edits as whole files,
/// 4096-token context (probed)").
pub fn describe(profile: &ModelProfile) -> String {
    let tools = if profile.native_tools {
        "native tool calls".to_string()
    } else {
        format!("tools as {} text", profile.tool_format)
    };
    let edits = match profile.edit_format {
        bosun_model::EditFormat::Tools => "edits through the tools".to_string(),
        bosun_model::EditFormat::Whole => "edits as whole files".to_string(),
        f => format!("edits as {f} blocks"),
    };
    let window = profile
        .context_window
        .map(|w| format!(", {w}-token context"))
        .unwrap_or_default();
    format!("{tools}, {edits}{window} ({})", profile.source.as_str())
}
