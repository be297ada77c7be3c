//! The probe behind a model profile: what the server says about the model's chat template and
//! context window, and whether the model's native tool calls come back valid.

use crate::{ModelError, ModelProfile, ProviderConfig};

/// What [`probe_profile`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeFindings {
    pub profile: ModelProfile,
    /// Where the chat template was read (`llama.cpp /props`, `ollama /api/show`).
    pub template_from: Option<String>,
    /// One line per observation.
    pub findings: Vec<String>,
}

/// Probes the server behind `cfg` (see the module docs).
pub async fn probe_profile(cfg: &ProviderConfig) -> Result<ProbeFindings, ModelError> {
    Err(ModelError::Config(format!(
        "probing {} is not built yet",
        cfg.model
    )))
}
