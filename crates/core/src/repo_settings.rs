//! Per-repository settings, one table that later features add keys to.
//!
//! ```toml
//! # $BOSUN_HOME/config.toml
//! max_steps = 100                      # your defaults for every repository
//! [repos."/home/me/src/api"]           # the path as `task_started.repo` shows it
//! provider = "claude"
//! max_steps = 40
//! max_cost_usd = 2.0
//! ```
//! The repository's own `<repo>/.bosun/config.toml` uses the same keys at top level and, like
//! `.bosun/policy.toml`, can tighten but never loosen: a repository you cloned may lower a limit
//! (its value counts only when it is below your global one), never raise it, and never choose
//! the provider your code is sent to. Precedence: a flag, then your per-repository section, then
//! the project file, then your global value. Unknown keys are errors naming the key and the file.

use crate::CoreError;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The keys a repository can have settings for.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RepoSettings {
    /// The provider tasks of this repository use unless a flag says otherwise (your file only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// Model requests a new task may make.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_steps: Option<u32>,
    /// The most a task may cost, in US dollars.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cost_usd: Option<f64>,
}

/// A value and where it came from, for `bosun` to say why a limit applies.
#[derive(Debug, Clone, PartialEq)]
pub struct Sourced<T> {
    pub value: T,
    /// `--max-steps`, `config.toml [repos."…"]`, `.bosun/config.toml`, `config.toml`, `default`.
    pub source: String,
}

/// The settings a new task of a repository starts with.
#[derive(Debug, Clone, PartialEq)]
pub struct Effective {
    pub provider: Option<Sourced<String>>,
    pub max_steps: Sourced<u32>,
    pub max_cost_usd: Option<Sourced<f64>>,
}

/// What a flag (or the app's form) set explicitly.
#[derive(Debug, Clone, Default)]
pub struct Explicit {
    pub provider: Option<String>,
    pub max_steps: Option<u32>,
    pub max_cost_usd: Option<f64>,
}

fn sourced<T>(value: T, source: &str) -> Sourced<T> {
    Sourced {
        value,
        source: source.to_string(),
    }
}

/// The project file of a repository, `<repo>/.bosun/config.toml`; missing is empty.
pub fn project_settings(repo_root: &Path) -> Result<RepoSettings, CoreError> {
    let path = repo_root.join(".bosun/config.toml");
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(RepoSettings::default()),
        Err(e) => {
            return Err(CoreError::Config(format!(
                "cannot read {}: {e}",
                path.display()
            )));
        }
    };
    let settings: RepoSettings = toml::from_str(&text)
        .map_err(|e| CoreError::Config(format!("{} is not valid: {e}", path.display())))?;
    if settings.provider.is_some() {
        return Err(CoreError::Config(format!(
            "{}: `provider` cannot be set by a repository (it would choose where your code is sent); set it in $BOSUN_HOME/config.toml under [repos.\"{}\"]",
            path.display(),
            repo_root.display()
        )));
    }
    Ok(settings)
}

/// Resolves the settings of a new task of `repo_root` (canonical, as `task_started.repo`).
pub fn effective(
    config: &crate::BosunConfig,
    repo_root: &Path,
    explicit: &Explicit,
    default_max_steps: u32,
) -> Result<Effective, CoreError> {
    let key = repo_root.display().to_string();
    let mine = config.repos.get(&key).cloned().unwrap_or_default();
    let project = project_settings(repo_root)?;
    let section = format!("config.toml [repos.\"{key}\"]");

    let provider = match (&explicit.provider, &mine.provider, &config.default_provider) {
        (Some(p), _, _) => Some(sourced(p.clone(), "--provider")),
        (None, Some(p), _) => Some(sourced(p.clone(), &section)),
        (None, None, Some(p)) => Some(sourced(p.clone(), "config.toml")),
        _ => None,
    };
    // A project value counts only where it is stricter than yours.
    let tightened_u32 = |project: Option<u32>, global: Option<u32>| match (project, global) {
        (Some(p), Some(g)) if p >= g => None,
        (p, _) => p,
    };
    let max_steps = match (
        explicit.max_steps,
        mine.max_steps,
        tightened_u32(project.max_steps, config.max_steps),
        config.max_steps,
    ) {
        (Some(n), ..) => sourced(n, "--max-steps"),
        (None, Some(n), ..) => sourced(n, &section),
        (None, None, Some(n), _) => sourced(n, ".bosun/config.toml"),
        (None, None, None, Some(n)) => sourced(n, "config.toml"),
        (None, None, None, None) => sourced(default_max_steps, "default"),
    };
    let project_cost = match (project.max_cost_usd, config.max_cost_usd) {
        (Some(p), Some(g)) if p >= g => None,
        (p, _) => p,
    };
    let max_cost_usd = match (
        explicit.max_cost_usd,
        mine.max_cost_usd,
        project_cost,
        config.max_cost_usd,
    ) {
        (Some(x), ..) => Some(sourced(x, "--max-cost-usd")),
        (None, Some(x), ..) => Some(sourced(x, &section)),
        (None, None, Some(x), _) => Some(sourced(x, ".bosun/config.toml")),
        (None, None, None, Some(x)) => Some(sourced(x, "config.toml")),
        (None, None, None, None) => None,
    };
    for (what, value) in [
        ("max_steps", (max_steps.value == 0).then_some(0.0)),
        (
            "max_cost_usd",
            max_cost_usd
                .as_ref()
                .map(|c| c.value)
                .filter(|c| !(c.is_finite() && *c >= 0.0)),
        ),
    ] {
        if let Some(bad) = value {
            return Err(CoreError::Config(format!(
                "{what} = {bad} is not allowed: use a positive number"
            )));
        }
    }
    Ok(Effective {
        provider,
        max_steps,
        max_cost_usd,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::BosunConfig;

    fn config(text: &str) -> BosunConfig {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn a_flag_beats_your_repository_section_beats_the_project_beats_your_global_value() {
        let repo = tempfile::tempdir().unwrap();
        let root = repo.path();
        std::fs::create_dir_all(root.join(".bosun")).unwrap();
        std::fs::write(
            root.join(".bosun/config.toml"),
            "max_steps = 30\nmax_cost_usd = 5.0\n",
        )
        .unwrap();
        let key = root.display().to_string();
        let global = config("max_steps = 50\nmax_cost_usd = 1.0\ndefault_provider = \"local\"\n");
        let e = effective(&global, root, &Explicit::default(), 100).unwrap();
        assert_eq!(
            e.max_steps,
            Sourced {
                value: 30,
                source: ".bosun/config.toml".into()
            }
        );
        // The project may not raise your cost limit.
        assert_eq!(e.max_cost_usd.unwrap().source, "config.toml");
        assert_eq!(e.provider.unwrap().source, "config.toml");

        let mine = config(&format!(
            "max_steps = 50\ndefault_provider = \"local\"\n[repos.\"{key}\"]\nmax_steps = 80\nprovider = \"claude\"\n"
        ));
        let e = effective(&mine, root, &Explicit::default(), 100).unwrap();
        assert_eq!(
            e.max_steps.value, 80,
            "your own per-repository value wins over the project's"
        );
        assert_eq!(e.provider.unwrap().value, "claude");
        let flags = Explicit {
            max_steps: Some(7),
            provider: Some("x".into()),
            ..Explicit::default()
        };
        let e = effective(&mine, root, &flags, 100).unwrap();
        assert_eq!(
            (e.max_steps.value, e.provider.unwrap().value),
            (7, "x".to_string())
        );

        let e = effective(&BosunConfig::default(), root, &Explicit::default(), 100).unwrap();
        assert_eq!(
            e.max_steps.value, 30,
            "with no global value the project's counts"
        );
    }

    #[test]
    fn unknown_keys_and_a_project_provider_are_errors_naming_key_and_file() {
        let repo = tempfile::tempdir().unwrap();
        let root = repo.path();
        std::fs::create_dir_all(root.join(".bosun")).unwrap();
        std::fs::write(root.join(".bosun/config.toml"), "max_stepz = 3\n").unwrap();
        let err = effective(&BosunConfig::default(), root, &Explicit::default(), 100)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("max_stepz") && err.contains(".bosun/config.toml"),
            "{err}"
        );
        std::fs::write(root.join(".bosun/config.toml"), "provider = \"evil\"\n").unwrap();
        let err = effective(&BosunConfig::default(), root, &Explicit::default(), 100)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("`provider` cannot be set by a repository"),
            "{err}"
        );
        let err = toml::from_str::<BosunConfig>("[repos.\"/x\"]\nmodel = \"m\"\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("model"), "{err}");
    }
}
