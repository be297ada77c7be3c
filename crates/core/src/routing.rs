//! Model roles (`[routing]`) and provider fallback (`[providers.X] fallback`).
//!
//! A role names a provider of `config.toml`; a role left out uses the task's own provider (the
//! `main` role: `--provider`, the repository's, `[routing] main`, `default_provider`). Keys
//! come from the environment variable the provider names (never from the journal).

use crate::config::BosunConfig;
use crate::{CoreError, Emitter};
use bosun_model::{ModelClient, ModelError, ProviderConfig};
use bosun_protocol::{EventMsg, ProviderFallback, Warning};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A role's model, ready to be asked.
#[derive(Clone)]
pub struct RoleModel {
    /// The role it serves.
    pub role: String,
    pub provider: ProviderConfig,
    pub client: Arc<dyn ModelClient>,
    /// The variable holding its key, kept out of commands' environments.
    pub key_env: Option<String>,
}

/// The provider a config entry names, its key from the environment.
pub fn provider_named(
    config: &BosunConfig,
    name: &str,
) -> Result<(ProviderConfig, Option<String>), CoreError> {
    let (name, entry) = config.provider(Some(name))?;
    let provider = entry.to_provider_config(&name, &|var| std::env::var(var).ok())?;
    Ok((provider, entry.api_key_env.clone()))
}

/// The model of `role`: `[routing] <role>` when set, else the task's own (`main`). An unknown
/// role is an error that lists the roles.
pub fn role_model(
    home: &Path,
    role: &str,
    main: &ProviderConfig,
    main_key_env: Option<&str>,
) -> Result<RoleModel, CoreError> {
    if !crate::config::ROLES.contains(&role) {
        return Err(CoreError::Config(format!(
            "unknown role {role:?} (the roles are {})",
            crate::config::ROLES.join(", ")
        )));
    }
    let config = BosunConfig::load(home)?;
    let named = config
        .routing
        .as_ref()
        .and_then(|r| r.for_role(role))
        .filter(|_| role != "main");
    let (provider, key_env) = match named {
        Some(name) if name != main.name => provider_named(&config, name)
            .map_err(|e| CoreError::Config(format!("[routing] {role} = {name:?}: {e}")))?,
        _ => (main.clone(), main_key_env.map(str::to_string)),
    };
    Ok(RoleModel {
        role: role.to_string(),
        client: bosun_model::client(provider.clone())?,
        provider,
        key_env,
    })
}

/// The providers `name` falls back to, in order (`[providers.NAME] fallback`), without `name`
/// itself or repeats.
pub fn fallbacks(home: &Path, name: &str) -> Vec<String> {
    let Ok(config) = BosunConfig::load(home) else {
        return Vec::new();
    };
    let mut out: Vec<String> = Vec::new();
    if let Some(entry) = config.providers.get(name) {
        for f in &entry.fallback {
            if f != name && !out.contains(f) {
                out.push(f.clone());
            }
        }
    }
    out
}

/// Whether a failure, after the provider's own retries, is one another provider may not have:
/// the server down or unreachable, overloaded (5xx, 529), rate-limited past its retry budget,
/// a broken stream or a timeout. Auth errors, bad requests, unknown models and requests too
/// long for the model are the user's to fix, and an unreadable response or a runaway one
/// (`max_response_bytes`) says nothing about the server's health: those never fall back.
pub fn falls_back(error: &ModelError) -> bool {
    match error {
        ModelError::Http { status, .. } => matches!(status, 408 | 500..=599),
        ModelError::RateLimited { .. }
        | ModelError::Connection { .. }
        | ModelError::Interrupted { .. }
        | ModelError::Timeout { .. } => true,
        ModelError::TooLarge { .. } | ModelError::Malformed { .. } | ModelError::Config(_) => false,
    }
}

/// A task's way down its provider's `fallback` list: each provider of the list is tried once,
/// in order; a fallback's own list is not followed.
pub struct Fallbacks {
    home: PathBuf,
    /// The names still to try, in order.
    queue: VecDeque<String>,
    /// The providers used so far, the task's own first: the last is the one in use.
    used: Vec<String>,
}

impl Fallbacks {
    /// The fallbacks of `provider` (the task's own), as `home/config.toml` lists them now.
    pub fn new(home: &Path, provider: &str) -> Self {
        Fallbacks {
            home: home.to_path_buf(),
            queue: fallbacks(home, provider).into(),
            used: vec![provider.to_string()],
        }
    }

    /// The key variables of the providers it may fall back to, so commands never see them
    /// (also before one is used).
    pub fn key_envs(&self) -> Vec<String> {
        let Ok(config) = BosunConfig::load(&self.home) else {
            return Vec::new();
        };
        self.queue
            .iter()
            .filter_map(|name| config.providers.get(name)?.api_key_env.clone())
            .collect()
    }

    /// After `error` (the provider in use failed past its retries): the next provider of the
    /// list that can be built, announced with `provider_fallback{from, to, reason, model}`, or
    /// None when the failure is not of the falling-back kind or none is left. One that cannot
    /// be built (no such provider, its key variable unset) is a `fallback_unavailable`
    /// warning, and the next is tried.
    pub async fn take_over(
        &mut self,
        error: &ModelError,
        emitter: &Emitter,
    ) -> Result<Option<RoleModel>, CoreError> {
        if !falls_back(error) {
            return Ok(None);
        }
        let from = self.used.last().cloned().unwrap_or_default();
        while let Some(name) = self.queue.pop_front() {
            if self.used.contains(&name) {
                continue;
            }
            self.used.push(name.clone());
            let made = async {
                let config = BosunConfig::load(&self.home)?;
                let (mut provider, key_env) = provider_named(&config, &name)?;
                // A local server's model is profiled as a task's own would be.
                crate::profiles::complete(&self.home, &mut provider).await;
                Ok::<_, CoreError>(RoleModel {
                    role: "main".into(),
                    client: bosun_model::client(provider.clone())?,
                    provider,
                    key_env,
                })
            }
            .await;
            match made {
                Ok(next) => {
                    emitter.emit(EventMsg::ProviderFallback(ProviderFallback {
                        from,
                        to: name,
                        reason: error.to_string(),
                        model: next.provider.model.clone(),
                    }))?;
                    return Ok(Some(next));
                }
                Err(e) => {
                    emitter.emit(EventMsg::Warning(Warning {
                        code: "fallback_unavailable".into(),
                        message: format!(
                            "{from} failed and its fallback {name:?} cannot be used ({e}){}",
                            if self.queue.is_empty() {
                                ""
                            } else {
                                "; trying the next one"
                            }
                        ),
                    }))?;
                }
            }
        }
        Ok(None)
    }
}

/// The provider that writes compaction summaries and the key it was named by:
/// `[context] summarizer` when set, else `[routing] summarizer`; None: the task's own model.
pub fn summarizer(config: &BosunConfig) -> Option<(String, &'static str)> {
    let context = config.context.as_ref().and_then(|c| c.summarizer.clone());
    let routing = config.routing.as_ref().and_then(|r| r.summarizer.clone());
    match (context, routing) {
        (Some(name), _) => Some((name, "[context] summarizer")),
        (None, Some(name)) => Some((name, "[routing] summarizer")),
        (None, None) => None,
    }
}

/// The client of the provider `name` of `home/config.toml` and the variable holding its key.
pub fn client_named(
    home: &Path,
    name: &str,
) -> Result<(Arc<dyn ModelClient>, Option<String>), CoreError> {
    let (provider, key_env) = provider_named(&BosunConfig::load(home)?, name)?;
    Ok((bosun_model::client(provider)?, key_env))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use std::time::Duration;

    #[test]
    fn only_a_failing_server_falls_back_never_the_users_own_errors() {
        let http = |status| ModelError::Http {
            provider: "a".into(),
            status,
            message: String::new(),
            attempts: 3,
        };
        for s in [500, 502, 503, 504, 529, 408] {
            assert!(falls_back(&http(s)), "{s}");
        }
        for s in [400, 401, 403, 404, 409, 413, 422] {
            assert!(!falls_back(&http(s)), "{s}");
        }
        assert!(falls_back(&ModelError::RateLimited {
            provider: "a".into(),
            retry_after: None,
            message: String::new(),
            attempts: 5,
        }));
        assert!(falls_back(&ModelError::Connection {
            provider: "a".into(),
            message: "refused".into(),
            attempts: 2,
        }));
        assert!(falls_back(&ModelError::Timeout {
            provider: "a".into(),
            phase: bosun_model::TimeoutPhase::Idle,
            limit: Duration::from_secs(1),
            attempts: 1,
        }));
        assert!(!falls_back(&ModelError::Malformed {
            provider: "a".into(),
            message: String::new(),
        }));
        assert!(!falls_back(&ModelError::Config("no key".into())));
    }

    #[test]
    fn the_context_summarizer_wins_over_the_routing_one() {
        let mut config: BosunConfig =
            toml::from_str("[routing]\nsummarizer = \"small\"\n").unwrap();
        assert_eq!(
            summarizer(&config),
            Some(("small".to_string(), "[routing] summarizer"))
        );
        config.context = Some(crate::config::ContextSettings {
            summarizer: Some("other".into()),
            ..Default::default()
        });
        assert_eq!(
            summarizer(&config),
            Some(("other".to_string(), "[context] summarizer"))
        );
        config.context = None;
        config.routing = None;
        assert_eq!(summarizer(&config), None);
    }
}
