//! The Settings screen and the first-run setup: providers in `$BOSUN_HOME/config.toml` (keys in
//! the keychain, see [`crate::secrets`]), default provider and mode, the user policy file with
//! validation and a live `policy check`, and the disk used by worktrees.

use crate::error::IpcError;
use crate::probe::{self, Detected, PRESETS, Preset};
use crate::secrets::{self, KeychainStatus};
use bosun_core::config::{ProfileEntry, RoutingSettings};
use bosun_core::{BosunConfig, PolicyFiles, ProviderEntry, ProviderLimits};
use bosun_policy::{Layer, Mode, Policy};
use bosun_protocol::ToolAction;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

fn config_error(message: impl Into<String>) -> IpcError {
    IpcError::new("config", message)
}

/// A saved provider as the UI shows it: never its key, only where the key lives.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProviderView {
    pub name: String,
    pub api: String,
    pub base_url: Option<String>,
    pub model: String,
    pub api_key_env: Option<String>,
    /// The keychain holds a key for it.
    pub key_in_keychain: bool,
    /// Its timeouts and size limits as set (unset ones take `Settings::provider_defaults`).
    pub limits: ProviderLimits,
    /// The providers used in order when it fails (`[providers.NAME] fallback`).
    pub fallback: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Settings {
    pub home: String,
    pub config_path: String,
    pub providers: Vec<ProviderView>,
    pub default_provider: Option<String>,
    pub default_mode: Option<String>,
    pub keychain: KeychainStatus,
    pub presets: Vec<Preset>,
    /// What a provider's unset limits are.
    pub provider_defaults: ProviderLimits,
    /// The provider of each role (`[routing]`; a role left out uses `main`'s).
    pub routing: RoutingSettings,
    /// The roles, in the order Settings shows them.
    pub roles: Vec<String>,
}

/// A provider as the editor sends it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ProviderInput {
    pub api: String,
    #[serde(default)]
    pub base_url: Option<String>,
    pub model: String,
    #[serde(default)]
    pub api_key_env: Option<String>,
    #[serde(default)]
    pub limits: ProviderLimits,
    /// The model profile keys set (the others are left to a probe or the default); absent: the
    /// saved provider's profile is kept as it is.
    #[serde(default)]
    pub profile: Option<ProfileEntry>,
}

fn nonempty(v: Option<String>) -> Option<String> {
    v.map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
}

pub fn settings(home: &Path, keychain: KeychainStatus) -> Result<Settings, IpcError> {
    let config = BosunConfig::load(home).map_err(|e| config_error(e.to_string()))?;
    let providers = config
        .providers
        .iter()
        .map(|(name, p)| ProviderView {
            name: name.clone(),
            api: p.api.clone(),
            base_url: p.base_url.clone(),
            model: p.model.clone(),
            api_key_env: p.api_key_env.clone(),
            key_in_keychain: keychain.available
                && p.api_key_env.is_none()
                && secrets::read(name).is_some(),
            limits: p.limit_keys(),
            fallback: p.fallback.clone(),
        })
        .collect();
    Ok(Settings {
        home: home.display().to_string(),
        config_path: home.join("config.toml").display().to_string(),
        providers,
        default_provider: config.default_provider,
        default_mode: config.default_mode,
        keychain,
        presets: PRESETS.to_vec(),
        provider_defaults: ProviderLimits::defaults(),
        routing: config.routing.unwrap_or_default(),
        roles: bosun_core::config::ROLES.map(String::from).to_vec(),
    })
}

/// Saves a provider (renaming it from `previous` if given). A non-empty `api_key` goes to the
/// keychain, never to the file; with a key variable named, the keychain entry is dropped.
pub fn save_provider(
    home: &Path,
    name: &str,
    input: ProviderInput,
    api_key: Option<String>,
    previous: Option<String>,
) -> Result<(), IpcError> {
    let name = name.trim();
    bosun_core::config::check_provider_name(name).map_err(|e| config_error(e.to_string()))?;
    if !["openai-chat", "openai-responses", "anthropic"].contains(&input.api.as_str()) {
        return Err(config_error(format!(
            "unknown api {:?}: use openai-chat, openai-responses or anthropic",
            input.api
        )));
    }
    // What the editor does not show (retries, service tier, temperature) stays as it was.
    let saved = BosunConfig::load(home)
        .map_err(|e| config_error(e.to_string()))?
        .providers
        .remove(previous.as_deref().unwrap_or(name))
        .unwrap_or_default();
    let profile = match input.profile {
        Some(p) => Some(p).filter(|p| !p.is_empty()),
        None => saved.profile.clone(),
    };
    let entry = ProviderEntry {
        api: input.api,
        base_url: nonempty(input.base_url),
        model: input.model.trim().to_string(),
        api_key_env: nonempty(input.api_key_env),
        profile,
        ..saved
    }
    .with_limit_keys(input.limits);
    let key = nonempty(api_key);
    if let Some(key) = &key {
        if entry.api_key_env.is_some() {
            return Err(config_error(
                "give either a key (kept in the keychain) or the name of a variable holding it, not both",
            ));
        }
        secrets::store(name, key).map_err(config_error)?;
    }
    let uses_env = entry.api_key_env.is_some();
    BosunConfig::upsert_provider(home, name, entry).map_err(|e| config_error(e.to_string()))?;
    if uses_env {
        secrets::forget(name);
    }
    if let Some(old) = previous.filter(|p| p != name) {
        if key.is_none()
            && let Some(old_key) = secrets::read(&old)
        {
            secrets::store(name, &old_key).map_err(config_error)?;
        }
        BosunConfig::rename_references(home, &old, name)
            .map_err(|e| config_error(e.to_string()))?;
        remove_provider(home, &old)?;
    }
    Ok(())
}

/// Saves `[routing]` (each role's provider, or none: `main`'s).
pub fn set_routing(home: &Path, routing: RoutingSettings) -> Result<(), IpcError> {
    BosunConfig::set_routing(home, routing).map_err(|e| config_error(e.to_string()))?;
    Ok(())
}

/// Saves `[providers.PROVIDER] fallback`.
pub fn set_fallback(home: &Path, provider: &str, fallback: Vec<String>) -> Result<(), IpcError> {
    BosunConfig::set_fallback(home, provider, fallback).map_err(|e| config_error(e.to_string()))?;
    Ok(())
}

pub fn remove_provider(home: &Path, name: &str) -> Result<(), IpcError> {
    BosunConfig::remove_provider(home, name).map_err(|e| config_error(e.to_string()))?;
    secrets::forget(name);
    Ok(())
}

pub fn set_defaults(
    home: &Path,
    default_provider: Option<String>,
    default_mode: Option<String>,
) -> Result<(), IpcError> {
    let mut config = BosunConfig::load(home).map_err(|e| config_error(e.to_string()))?;
    let default_provider = nonempty(default_provider);
    if let Some(p) = &default_provider
        && !config.providers.contains_key(p)
    {
        return Err(config_error(format!(
            "no provider named {p:?} to make the default"
        )));
    }
    let default_mode = nonempty(default_mode);
    if let Some(m) = &default_mode {
        m.parse::<Mode>().map_err(|e| config_error(e.to_string()))?;
    }
    config.default_provider = default_provider;
    config.default_mode = default_mode;
    config.save(home).map_err(|e| config_error(e.to_string()))?;
    Ok(())
}

/// The key to test a connection with: the one typed, else the saved provider's keychain entry,
/// else the named environment variable.
pub fn key_for_test(
    typed: Option<String>,
    saved_as: Option<&str>,
    api_key_env: Option<&str>,
) -> Option<String> {
    nonempty(typed)
        .or_else(|| saved_as.and_then(secrets::read))
        .or_else(|| {
            api_key_env
                .filter(|v| !v.trim().is_empty())
                .and_then(|v| std::env::var(v.trim()).ok())
        })
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PolicyText {
    pub path: String,
    pub text: String,
    pub exists: bool,
}

pub fn read_policy(home: &Path) -> Result<PolicyText, IpcError> {
    let path = home.join("policy.toml");
    let (text, exists) = match std::fs::read_to_string(&path) {
        Ok(t) => (t, true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (String::new(), false),
        Err(e) => return Err(config_error(format!("cannot read {}: {e}", path.display()))),
    };
    Ok(PolicyText {
        path: path.display().to_string(),
        text,
        exists,
    })
}

/// The user policy with `text` as its file, on top of the built-in defaults.
fn draft_policy(home: &Path, text: &str, mode: Option<Mode>) -> Result<Policy, IpcError> {
    let source = home.join("policy.toml").display().to_string();
    Policy::with_builtin(&[Layer::file(source, text)], mode)
        .map_err(|e| IpcError::new("invalid_policy", e.to_string()))
}

/// Validates `text` and writes it as `$BOSUN_HOME/policy.toml`; an invalid text is refused with
/// its `file:line: message`.
pub fn save_policy(home: &Path, text: &str) -> Result<PathBuf, IpcError> {
    draft_policy(home, text, None)?;
    let path = home.join("policy.toml");
    std::fs::create_dir_all(home)
        .map_err(|e| config_error(format!("cannot create {}: {e}", home.display())))?;
    let tmp = path.with_extension("toml.tmp");
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, &path))
        .map_err(|e| config_error(format!("cannot write {}: {e}", path.display())))?;
    // What a task will load: the saved file through the same loader.
    PolicyFiles::new(home, &home.join("no-repository"), None, None)
        .load()
        .map_err(|e| IpcError::new("invalid_policy", e.to_string()))?;
    Ok(path)
}

/// What `bosun policy check` prints, for a command under the draft policy text.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PolicyCheck {
    pub decision: String,
    pub rule: String,
    pub source: String,
    pub mode: String,
    pub reason: String,
}

pub fn check_policy(
    home: &Path,
    text: &str,
    command: &str,
    mode: Option<String>,
) -> Result<PolicyCheck, IpcError> {
    let mode = nonempty(mode)
        .map(|m| m.parse::<Mode>())
        .transpose()
        .map_err(|e| IpcError::new("bad_request", e.to_string()))?;
    if command.trim().is_empty() {
        return Err(IpcError::new("bad_request", "type a command to check"));
    }
    let policy = draft_policy(home, text, mode)?;
    let d = policy.decide(&ToolAction::Command {
        command: command.trim().to_string(),
    });
    Ok(PolicyCheck {
        decision: d.decision.as_str().to_string(),
        rule: d.rule,
        source: d.source,
        mode: d.mode.as_str().to_string(),
        reason: d.reason,
    })
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DataUsage {
    pub home: String,
    pub worktrees_path: String,
    pub in_use_count: usize,
    pub in_use_bytes: u64,
    pub idle_count: usize,
    pub idle_bytes: u64,
}

pub fn data_usage(home: &Path) -> Result<DataUsage, IpcError> {
    let u = bosun_workspace::worktree_disk_usage(home)
        .map_err(|e| IpcError::new("disk", e.to_string()))?;
    Ok(DataUsage {
        home: home.display().to_string(),
        worktrees_path: home.join("worktrees").display().to_string(),
        in_use_count: u.in_use_count,
        in_use_bytes: u.in_use_bytes,
        idle_count: u.idle_count,
        idle_bytes: u.idle_bytes,
    })
}

/// Local servers answering on their default ports.
pub async fn detect_servers() -> Vec<Detected> {
    probe::detect().await
}

/// The Budgets section: `[budgets]` and `[repos."<path>".budgets]`, and the per-task cost limit.
pub mod budgets;
/// The commands of the Settings screen and the setup screen: each is one call to the above.
pub mod ipc;
/// The Model profile of a saved provider: its keys' sources, and probing it.
pub mod profile;

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_policy_check_explains_the_decision_with_the_drafts_rule_and_line() {
        let home = tempfile::tempdir().unwrap();
        let text = "[commands]\nallow = [\"make test\"]\ndeny = [\"curl *\"]\n";
        let check = check_policy(home.path(), text, "curl https://example.com", None).unwrap();
        assert_eq!(check.decision, "deny");
        assert!(check.rule.contains("curl"), "{check:?}");
        let source = home.path().join("policy.toml").display().to_string();
        assert_eq!(check.source, format!("{source}:3"));
        let check = check_policy(home.path(), text, "make test", None).unwrap();
        assert_eq!(
            (check.decision.as_str(), check.mode.as_str()),
            ("allow", "ask")
        );
        let check = check_policy(home.path(), text, "make test", Some("read-only".into())).unwrap();
        assert_eq!(check.mode, "read-only");
    }

    #[test]
    fn an_invalid_policy_is_refused_with_file_and_line_and_not_written() {
        let home = tempfile::tempdir().unwrap();
        let err = save_policy(home.path(), "[commands]\nallow = \"not a list\"\n").unwrap_err();
        assert_eq!(err.code, "invalid_policy");
        assert!(err.message.contains("policy.toml:"), "{}", err.message);
        assert!(!home.path().join("policy.toml").exists());
        let err = check_policy(home.path(), "mode = \"loose\"\n", "ls", None).unwrap_err();
        assert_eq!(err.code, "invalid_policy");

        save_policy(home.path(), "[commands]\nallow = [\"cargo test\"]\n").unwrap();
        let saved = read_policy(home.path()).unwrap();
        assert!(saved.exists && saved.text.contains("cargo test"));
    }

    #[test]
    fn providers_saved_with_a_key_variable_round_trip_through_config_toml() {
        let home = tempfile::tempdir().unwrap();
        let input = ProviderInput {
            api: "openai-chat".into(),
            base_url: Some(" http://127.0.0.1:8080/v1 ".into()),
            model: "qwen".into(),
            api_key_env: Some("LOCAL_KEY".into()),
            limits: ProviderLimits {
                first_byte_timeout_secs: Some(900),
                ..ProviderLimits::default()
            },
            profile: None,
        };
        save_provider(
            home.path(),
            "bosun-test-local-7f3a",
            input.clone(),
            None,
            None,
        )
        .unwrap();
        save_provider(
            home.path(),
            "bosun-test-llama-7f3a",
            input,
            None,
            Some("bosun-test-local-7f3a".into()),
        )
        .unwrap();
        let unavailable = KeychainStatus {
            available: false,
            message: String::new(),
        };
        let s = settings(home.path(), unavailable.clone()).unwrap();
        assert_eq!(
            s.providers,
            vec![ProviderView {
                name: "bosun-test-llama-7f3a".into(),
                api: "openai-chat".into(),
                base_url: Some("http://127.0.0.1:8080/v1".into()),
                model: "qwen".into(),
                api_key_env: Some("LOCAL_KEY".into()),
                key_in_keychain: false,
                limits: ProviderLimits {
                    first_byte_timeout_secs: Some(900),
                    ..ProviderLimits::default()
                },
                fallback: Vec::new(),
            }]
        );
        // Roles and fallbacks go through the core's checks; the view shows what was saved.
        let named = "bosun-test-llama-7f3a";
        let routing = RoutingSettings {
            main: Some(named.into()),
            ..RoutingSettings::default()
        };
        set_routing(home.path(), routing.clone()).unwrap();
        let refused = set_fallback(home.path(), named, vec![named.into()]).unwrap_err();
        assert_eq!(refused.code, "config");
        assert!(
            refused.message.contains("cannot fall back to itself"),
            "{}",
            refused.message
        );
        let s = settings(home.path(), unavailable.clone()).unwrap();
        assert_eq!(s.routing, routing);
        assert_eq!(
            s.roles,
            ["main", "planner", "worker", "summarizer", "escalation"]
        );
        assert_eq!(s.provider_defaults.first_byte_timeout_secs, Some(300));
        let text = std::fs::read_to_string(home.path().join("config.toml")).unwrap();
        assert!(text.contains("first_byte_timeout_secs = 900"), "{text}");
        assert!(!text.contains("idle_timeout_secs"), "{text}");
        assert_eq!(s.default_provider.as_deref(), Some("bosun-test-llama-7f3a"));
        set_defaults(
            home.path(),
            Some("bosun-test-llama-7f3a".into()),
            Some("auto-edit".into()),
        )
        .unwrap();
        assert!(set_defaults(home.path(), None, Some("yolo".into())).is_err());
        let text = std::fs::read_to_string(home.path().join("config.toml")).unwrap();
        assert!(text.contains("default_mode = \"auto-edit\""), "{text}");
        remove_provider(home.path(), "bosun-test-llama-7f3a").unwrap();
        assert!(
            settings(
                home.path(),
                KeychainStatus {
                    available: false,
                    message: String::new()
                }
            )
            .unwrap()
            .providers
            .is_empty()
        );
    }

    #[test]
    fn a_profile_is_saved_with_only_its_set_keys_and_kept_when_the_editor_sends_none() {
        let home = tempfile::tempdir().unwrap();
        std::fs::write(
            home.path().join("config.toml"),
            "[providers.bosun-test-prof-7f3a]\napi = \"openai-chat\"\nmodel = \"m\"\n\
             base_url = \"http://127.0.0.1:8080/v1\"\ntemperature = 0.5\n",
        )
        .unwrap();
        let input = |profile| ProviderInput {
            api: "openai-chat".into(),
            base_url: Some("http://127.0.0.1:8080/v1".into()),
            model: "m".into(),
            api_key_env: Some("LOCAL_KEY".into()),
            limits: ProviderLimits::default(),
            profile,
        };
        let name = "bosun-test-prof-7f3a";
        let set = ProfileEntry {
            native_tools: Some(false),
            edit_format: Some("search-replace".into()),
            ..ProfileEntry::default()
        };
        save_provider(home.path(), name, input(Some(set.clone())), None, None).unwrap();
        let saved = |home: &Path| BosunConfig::load(home).unwrap().providers[name].clone();
        assert_eq!(saved(home.path()).profile, Some(set.clone()));
        // Not shown in the editor, so not lost by it.
        assert_eq!(saved(home.path()).temperature, Some(0.5));
        let text = std::fs::read_to_string(home.path().join("config.toml")).unwrap();
        assert!(!text.contains("context_window"), "{text}");
        assert!(!text.contains("tool_format"), "{text}");

        save_provider(home.path(), name, input(None), None, None).unwrap();
        assert_eq!(saved(home.path()).profile, Some(set));
        let bad = ProfileEntry {
            context_window: Some(100),
            ..ProfileEntry::default()
        };
        let err = save_provider(home.path(), name, input(Some(bad)), None, None).unwrap_err();
        assert!(err.message.contains("context_window"), "{}", err.message);
        save_provider(
            home.path(),
            name,
            input(Some(ProfileEntry::default())),
            None,
            None,
        )
        .unwrap();
        assert_eq!(saved(home.path()).profile, None);
    }
}
