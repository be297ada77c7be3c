//! The Model profile part of the provider editor: the profile a saved provider's tasks use, where
//! each of its keys came from (`profile = {…}` in `config.toml`, the cached probe, or the
//! default), and "Probe now". The keys themselves are saved with the provider
//! ([`super::save_provider`], `ProviderInput.profile`).

use super::config_error;
use crate::error::IpcError;
use bosun_core::config::ProfileEntry;
use bosun_core::profiles::{self, ProbeReport, ProfileView};
use bosun_core::{BosunConfig, ProviderEntry};
use bosun_model::{ModelProfile, ProviderConfig, Secret, is_local_url};
use serde::Serialize;
use std::path::Path;

/// Where one key of the profile in effect came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum KeySource {
    /// `[providers.NAME] profile` sets it.
    Config,
    /// The cached probe of the server and model chose it.
    Probe,
    /// Nothing says: native tools, edits through the tools, context window unknown.
    Default,
}

/// The source of each key of [`ModelProfile`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ProfileSources {
    pub native_tools: KeySource,
    pub tool_format: KeySource,
    pub edit_format: KeySource,
    pub context_window: KeySource,
}

/// What the editor's Model profile section shows for a saved provider.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProviderProfile {
    pub name: String,
    /// The profile its tasks use.
    pub profile: ModelProfile,
    /// The keys `config.toml` sets (the others are "auto": probed or default).
    pub configured: ProfileEntry,
    pub sources: ProfileSources,
    /// The cached probe of its base URL and model, if any.
    pub probe: Option<ProbeReport>,
    /// A task would probe it first.
    pub would_probe: bool,
    /// Its base URL is this machine or the local network (probing elsewhere costs money).
    pub local: bool,
}

/// A key set in the entry is from the config; else from the probe if there is one; else the
/// default.
pub fn sources(configured: &ProfileEntry, probed: bool) -> ProfileSources {
    let of = |set: bool| match (set, probed) {
        (true, _) => KeySource::Config,
        (false, true) => KeySource::Probe,
        (false, false) => KeySource::Default,
    };
    ProfileSources {
        native_tools: of(configured.native_tools.is_some()),
        // Native tools on means the native tool format: the config's doing when it says so.
        tool_format: of(configured.tool_format.is_some() || configured.native_tools == Some(true)),
        edit_format: of(configured.edit_format.is_some()),
        context_window: of(configured.context_window.is_some()),
    }
}

fn saved_entry(home: &Path, name: &str) -> Result<ProviderEntry, IpcError> {
    let config = BosunConfig::load(home).map_err(|e| config_error(e.to_string()))?;
    config.providers.get(name).cloned().ok_or_else(|| {
        IpcError::new(
            "not_found",
            format!("no provider named {name:?} in config.toml: save it first"),
        )
    })
}

/// The provider's client configuration with its key, as a task would get it: the named
/// environment variable, or the keychain entry Settings saved.
fn provider_config(name: &str, entry: &ProviderEntry) -> Result<ProviderConfig, IpcError> {
    let mut cfg = entry
        .to_provider_config(name, &|var| std::env::var(var).ok())
        .map_err(|e| config_error(e.to_string()))?;
    if entry.api_key_env.is_none()
        && let Some(key) = crate::secrets::read(name)
    {
        cfg.api_key = Some(Secret::new(key));
    }
    Ok(cfg)
}

pub fn provider_profile(home: &Path, name: &str) -> Result<ProviderProfile, IpcError> {
    let entry = saved_entry(home, name)?;
    // The view reads only the address and the model, never the key: a key variable that is not
    // set in this process must not hide the profile.
    let cfg = entry
        .to_provider_config(name, &|_| Some("not read".into()))
        .map_err(|e| config_error(e.to_string()))?;
    let ProfileView {
        profile,
        probe,
        would_probe,
    } = profiles::view(home, &cfg);
    let configured = entry.profile.clone().unwrap_or_default();
    Ok(ProviderProfile {
        name: name.to_string(),
        profile,
        sources: sources(&configured, probe.is_some()),
        configured,
        probe,
        would_probe,
        local: is_local_url(&cfg.base_url),
    })
}

/// Probes the saved provider's server and model (a few short requests), keeps the report in the
/// cache and returns it. A failed probe is `probe` with what went wrong.
pub async fn probe_provider(home: &Path, name: &str) -> Result<ProbeReport, IpcError> {
    let entry = saved_entry(home, name)?;
    let cfg = provider_config(name, &entry)?;
    profiles::probe_and_save(home, &cfg)
        .await
        .map_err(|e| IpcError::new("probe", e.to_string()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use pretty_assertions::assert_eq;

    fn write_config(home: &Path, text: &str) {
        std::fs::write(home.join("config.toml"), text).unwrap();
    }

    #[test]
    fn each_key_says_whether_the_config_the_probe_or_the_default_set_it() {
        let configured = ProfileEntry {
            edit_format: Some("search-replace".into()),
            ..ProfileEntry::default()
        };
        assert_eq!(
            sources(&configured, false),
            ProfileSources {
                native_tools: KeySource::Default,
                tool_format: KeySource::Default,
                edit_format: KeySource::Config,
                context_window: KeySource::Default,
            }
        );
        assert_eq!(
            sources(&configured, true),
            ProfileSources {
                native_tools: KeySource::Probe,
                tool_format: KeySource::Probe,
                edit_format: KeySource::Config,
                context_window: KeySource::Probe,
            }
        );
    }

    #[test]
    fn a_saved_providers_profile_shows_the_configured_keys_over_the_default() {
        let home = tempfile::tempdir().unwrap();
        write_config(
            home.path(),
            "[providers.local]\napi = \"openai-chat\"\nbase_url = \"http://127.0.0.1:8080/v1\"\n\
             model = \"qwen\"\napi_key_env = \"BOSUN_TEST_UNSET_KEY_7F3A\"\n\
             profile = {native_tools = false, edit_format = \"search-replace\"}\n",
        );
        let p = provider_profile(home.path(), "local").unwrap();
        assert_eq!(
            p.configured,
            ProfileEntry {
                native_tools: Some(false),
                edit_format: Some("search-replace".into()),
                ..ProfileEntry::default()
            }
        );
        assert!(!p.profile.native_tools);
        assert_eq!(
            p.profile.edit_format,
            bosun_model::EditFormat::SearchReplace
        );
        assert_eq!(p.sources.native_tools, KeySource::Config);
        assert_eq!(p.sources.context_window, KeySource::Default);
        assert!(p.local && p.would_probe && p.probe.is_none());

        let err = provider_profile(home.path(), "nope").unwrap_err();
        assert_eq!(err.code, "not_found");
    }

    #[tokio::test]
    async fn probing_a_provider_whose_key_variable_is_unset_says_so() {
        let home = tempfile::tempdir().unwrap();
        write_config(
            home.path(),
            "[providers.paid]\napi = \"openai-chat\"\nbase_url = \"https://api.example.com/v1\"\n\
             model = \"m\"\napi_key_env = \"BOSUN_TEST_UNSET_KEY_7F3A\"\n",
        );
        let err = probe_provider(home.path(), "paid").await.unwrap_err();
        assert_eq!(err.code, "config");
        assert!(
            err.message.contains("BOSUN_TEST_UNSET_KEY_7F3A"),
            "{}",
            err.message
        );
        assert!(!provider_profile(home.path(), "paid").unwrap().local);
    }
}
