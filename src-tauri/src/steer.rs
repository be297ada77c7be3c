//! Steering a task that is not running: a follow-up message to a finished or stopped task, or
//! resuming one interrupted by a crash or a quit. Both run in the app's [`Engine`] like a task
//! started from the form, so approvals and Stop work for them too. The model is the one the task
//! started with (recorded in its `task_started` event), found again in `config.toml` when it
//! named a provider there; its mode, cost limit and step limit carry over too.

use crate::engine::Engine;
use crate::error::IpcError;
use bosun_core::{BosunConfig, ContinueSpec, ProviderEntry, secret_env_names};
use bosun_protocol::{EventMsg, TaskId, TaskStarted};
use std::sync::Arc;

fn bad_request(message: impl Into<String>) -> IpcError {
    IpcError::new("bad_request", message)
}

/// The provider a task started with: the named entry of `config.toml` when it still exists,
/// else the wire format, server and model the task recorded.
fn recorded_provider(
    config: &BosunConfig,
    started: &TaskStarted,
) -> Result<(String, ProviderEntry), IpcError> {
    if config.providers.contains_key(&started.provider) {
        let (name, mut entry) = config
            .provider(Some(&started.provider))
            .map_err(|e| bad_request(e.to_string()))?;
        entry.model = started.model.clone();
        return Ok((name, entry));
    }
    if started.api.is_empty() {
        return Err(bad_request(format!(
            "task's provider {:?} is not in config.toml any more and the task did not record its server: add it back in Settings, or continue it with `bosun continue --api …`",
            started.provider
        )));
    }
    let name = if started.api == "anthropic" {
        "anthropic"
    } else {
        "openai-compat"
    };
    Ok((
        name.to_string(),
        ProviderEntry {
            api: started.api.clone(),
            base_url: Some(started.base_url.clone()).filter(|u| !u.is_empty()),
            model: started.model.clone(),
            api_key_env: started.api_key_env.clone(),
            ..ProviderEntry::default()
        },
    ))
}

impl Engine {
    /// Continues a task that is not running: with `message` a follow-up in the same worktree and
    /// conversation; with `None` a resume from its last checkpoint. Returns once the task runs
    /// again (its `task_resumed` event is in the journal).
    pub async fn continue_task(
        self: &Arc<Self>,
        task: TaskId,
        message: Option<String>,
    ) -> Result<TaskId, IpcError> {
        if let Some(m) = &message
            && m.trim().is_empty()
        {
            return Err(bad_request(
                "say what the agent should do next: the message is empty",
            ));
        }
        if self.running().iter().any(|(id, _)| *id == task) {
            return Err(IpcError::new(
                "running",
                format!("task {task} is still running: stop it first, or wait for it to finish"),
            ));
        }
        let started = self
            .store
            .events(&task, 0, 1)?
            .into_iter()
            .find_map(|e| match e.msg {
                EventMsg::TaskStarted(t) => Some(t),
                _ => None,
            })
            .ok_or_else(|| {
                IpcError::new(
                    "not_found",
                    format!("task {task} has no start in the journal, so it cannot continue"),
                )
            })?;
        let config = BosunConfig::load(&self.home).map_err(|e| bad_request(e.to_string()))?;
        let (name, entry) = recorded_provider(&config, &started)?;
        let mut provider = entry
            .to_provider_config(&name, &|var| std::env::var(var).ok())
            .map_err(|e| bad_request(e.to_string()))?;
        // A saved provider without a key variable may keep its key in the keychain (Settings).
        if config.providers.contains_key(&name)
            && entry.api_key_env.is_none()
            && let Some(key) = crate::secrets::read(&name)
        {
            provider.api_key = Some(bosun_model::Secret::new(key));
        }
        let mut env_remove =
            secret_env_names(std::env::vars_os().filter_map(|(k, _)| k.into_string().ok()));
        if let Some(var) = &entry.api_key_env {
            env_remove.push(var.clone());
        }
        let spec = ContinueSpec {
            home: self.home.clone(),
            task_id: task,
            message,
            provider,
            // The step limit the task was started with, as in the form (the journal's task row).
            max_steps: None,
            max_cost_usd: None,
            policy_file: None,
            mode: None,
            sandbox: self.sandbox,
            env_remove,
            max_nudges: None,
            pins: Vec::new(),
            unpins: Vec::new(),
        };
        let handle = bosun_core::continue_task(spec, Arc::clone(&self.store))
            .await
            .map_err(|e| IpcError::new("continue_failed", e.to_string()))?;
        Ok(self.follow(handle))
    }
}
