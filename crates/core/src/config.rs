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
//! ```
//! Keys are never written here: only the name of the environment variable that holds one.

use crate::CoreError;
use bosun_model::{ApiKind, ProviderConfig, RetryPolicy, Secret};
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
    /// Settings per repository, keyed by its path as `task_started.repo` shows it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub repos: BTreeMap<String, crate::repo_settings::RepoSettings>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
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
                "provider {name}: unknown api {:?} (use openai-chat or anthropic)",
                self.api
            ))
        })?;
        let (default_url, default_key_env) = match api {
            ApiKind::OpenAiChat => (OPENAI_BASE_URL, "OPENAI_API_KEY"),
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
            max_output_tokens: 8192,
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
            request_timeout: Duration::from_secs(600),
        })
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
            max_retries: None,
            retry_initial_delay_ms: None,
        }
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
