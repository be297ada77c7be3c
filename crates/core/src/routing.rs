//! Model roles (`[routing]`) and provider fallback (`[providers.X] fallback`).
//!
//! A role names a provider of `config.toml`; a role left out uses the task's own provider (the
//! `main` role: `--provider`, the repository's, `[routing] main`, `default_provider`). Keys
//! come from the environment variable the provider names (never from the journal).

use crate::CoreError;
use crate::config::BosunConfig;
use bosun_model::{ModelClient, ProviderConfig};
use std::path::Path;
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
