//! The commands of the Settings screen and the setup screen: each is one call to a function of
//! `settings`.

use super::*;

fn home() -> PathBuf {
    bosun_store::bosun_home()
}

#[tauri::command(async)]
pub fn get_settings() -> Result<Settings, IpcError> {
    settings(&home(), secrets::status())
}

#[tauri::command(async)]
pub fn save_provider(
    name: String,
    provider: ProviderInput,
    api_key: Option<String>,
    previous: Option<String>,
) -> Result<Settings, IpcError> {
    super::save_provider(&home(), &name, provider, api_key, previous)?;
    get_settings()
}

#[tauri::command(async)]
pub fn remove_provider(name: String) -> Result<Settings, IpcError> {
    super::remove_provider(&home(), &name)?;
    get_settings()
}

#[tauri::command(async)]
pub fn set_defaults(
    default_provider: Option<String>,
    default_mode: Option<String>,
) -> Result<Settings, IpcError> {
    super::set_defaults(&home(), default_provider, default_mode)?;
    get_settings()
}

/// Saves the provider of each role (`[routing]`); an unknown name: `config`, naming those
/// that exist.
#[tauri::command(async)]
pub fn set_routing(routing: bosun_core::config::RoutingSettings) -> Result<Settings, IpcError> {
    super::set_routing(&home(), routing)?;
    get_settings()
}

/// Saves the providers `provider` falls back to, in order; itself or an unknown name: `config`.
#[tauri::command(async)]
pub fn set_fallback(provider: String, fallback: Vec<String>) -> Result<Settings, IpcError> {
    super::set_fallback(&home(), &provider, fallback)?;
    get_settings()
}

/// Lists the provider's models, which tests the address and the key.
#[tauri::command]
pub async fn test_provider(
    provider: ProviderInput,
    api_key: Option<String>,
    saved_as: Option<String>,
) -> Result<Vec<String>, IpcError> {
    let base_url = nonempty(provider.base_url).unwrap_or_else(|| {
        if provider.api == "anthropic" {
            bosun_core::config::ANTHROPIC_BASE_URL.to_string()
        } else {
            bosun_core::config::OPENAI_BASE_URL.to_string()
        }
    });
    let key = key_for_test(
        api_key,
        saved_as.as_deref(),
        provider.api_key_env.as_deref(),
    );
    probe::list_models(
        &provider.api,
        &base_url,
        key.as_deref(),
        probe::TEST_TIMEOUT,
    )
    .await
    .map_err(|m| IpcError::new("connection", m))
}

#[tauri::command]
pub async fn detect_servers() -> Result<Vec<Detected>, IpcError> {
    Ok(super::detect_servers().await)
}

#[tauri::command(async)]
pub fn read_policy() -> Result<PolicyText, IpcError> {
    super::read_policy(&home())
}

#[tauri::command(async)]
pub fn save_policy(text: String) -> Result<PolicyText, IpcError> {
    super::save_policy(&home(), &text)?;
    super::read_policy(&home())
}

#[tauri::command(async)]
pub fn check_policy(
    text: String,
    command: String,
    mode: Option<String>,
) -> Result<PolicyCheck, IpcError> {
    super::check_policy(&home(), &text, &command, mode)
}

#[tauri::command(async)]
pub fn data_usage() -> Result<DataUsage, IpcError> {
    super::data_usage(&home())
}

/// The budgets of every repository (`repo` null) or of one, and the per-task cost limit.
#[tauri::command(async)]
pub fn get_budgets(repo: Option<String>) -> Result<super::budgets::BudgetsView, IpcError> {
    super::budgets::budgets(&home(), repo)
}

/// Saves them (a negative or non-finite amount: `invalid_budget`) and answers as `get_budgets`.
#[tauri::command(async)]
pub fn save_budgets(
    repo: Option<String>,
    budgets: super::budgets::Budgets,
) -> Result<super::budgets::BudgetsView, IpcError> {
    super::budgets::save_budgets(&home(), repo.clone(), budgets)?;
    super::budgets::budgets(&home(), repo)
}

/// The profile a saved provider's tasks use, each key with where it came from.
#[tauri::command(async)]
pub fn provider_profile(name: String) -> Result<super::profile::ProviderProfile, IpcError> {
    super::profile::provider_profile(&home(), &name)
}

/// Probes a saved provider's model (a few short requests) and keeps the report; `probe` when it
/// fails.
#[tauri::command]
pub async fn probe_provider(name: String) -> Result<bosun_core::profiles::ProbeReport, IpcError> {
    super::profile::probe_provider(&home(), &name).await
}
