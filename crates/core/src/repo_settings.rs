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
    /// The project's checks (`[[checks]]`): replace the discovered ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checks: Option<Vec<bosun_protocol::CheckSpec>>,
    /// Failed rounds of checks before a task finishes `checks_failed` (default 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_check_rounds: Option<u32>,
    /// Nudges before a task fails `no progress` (default 3; yours only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_nudges: Option<u32>,
    /// This repository's budgets, on top of the overall ones (a project file can add limits,
    /// which only ever tightens).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budgets: Option<crate::config::BudgetSettings>,
    /// MCP servers of this repository's tasks (`[repos."<path>".mcp_servers.NAME]`, or
    /// `[mcp_servers.NAME]` in the project file, where each starts only once you approved its
    /// exact command).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub mcp_servers: std::collections::BTreeMap<String, bosun_mcp::McpServerConfig>,
}

/// Where a setting came from, in precedence order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A flag, or the app's form.
    Flag,
    /// Your `config.toml`'s `[repos."<path>"]` section.
    Repository,
    /// The repository's `.bosun/config.toml`.
    Project,
    /// Your `config.toml`'s `[routing] main`.
    Routing,
    /// Your `config.toml`'s top level.
    Global,
    /// Bosun's own default.
    Default,
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Source::Flag => "a flag",
            Source::Repository => "config.toml [repos.\"…\"]",
            Source::Project => ".bosun/config.toml",
            Source::Routing => "config.toml [routing] main",
            Source::Global => "config.toml",
            Source::Default => "default",
        })
    }
}

/// A value and where it came from, for `bosun` to say why a limit applies.
#[derive(Debug, Clone, PartialEq)]
pub struct Sourced<T> {
    pub value: T,
    pub source: Source,
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

/// The first value set in precedence order; a project's value counts only where it is below
/// your global one (it can tighten, never loosen).
fn pick<T: PartialOrd + Copy>(
    flag: Option<T>,
    mine: Option<T>,
    project: Option<T>,
    global: Option<T>,
) -> Option<Sourced<T>> {
    let project = project.filter(|p| global.is_none_or(|g| *p < g));
    [
        (flag, Source::Flag),
        (mine, Source::Repository),
        (project, Source::Project),
        (global, Source::Global),
    ]
    .into_iter()
    .find_map(|(value, source)| value.map(|value| Sourced { value, source }))
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

/// Your `[repos."<path>"]` section for `repo_root` (canonical, as `task_started.repo`): the key
/// as the journal has it, or any key that names the same directory (a trailing slash, a
/// symlink, `~`-free relative spellings resolved from the current directory).
pub fn repo_section<'a>(
    config: &'a crate::BosunConfig,
    repo_root: &Path,
) -> Option<&'a RepoSettings> {
    repo_section_key(config, repo_root).and_then(|k| config.repos.get(k))
}

/// The key of your `[repos."<path>"]` section for `repo_root`, spelled as in the file (see
/// [`repo_section`]).
pub fn repo_section_key<'a>(config: &'a crate::BosunConfig, repo_root: &Path) -> Option<&'a str> {
    let key = repo_root.display().to_string();
    if let Some((k, _)) = config.repos.get_key_value(&key) {
        return Some(k.as_str());
    }
    let same = |k: &str| {
        std::fs::canonicalize(Path::new(k)).is_ok_and(|p| p == repo_root)
            || Path::new(k.trim_end_matches('/')) == repo_root
    };
    config.repos.keys().find(|k| same(k)).map(String::as_str)
}

/// Resolves the settings of a new task of `repo_root` (canonical, as `task_started.repo`).
pub fn effective(
    config: &crate::BosunConfig,
    repo_root: &Path,
    explicit: &Explicit,
    default_max_steps: u32,
) -> Result<Effective, CoreError> {
    let mine = repo_section(config, repo_root).cloned().unwrap_or_default();
    let project = project_settings(repo_root)?;
    let provider = [
        (explicit.provider.clone(), Source::Flag),
        (mine.provider, Source::Repository),
        (
            config.routing.as_ref().and_then(|r| r.main.clone()),
            Source::Routing,
        ),
        (config.default_provider.clone(), Source::Global),
    ]
    .into_iter()
    .find_map(|(value, source)| value.map(|value| Sourced { value, source }));
    let max_steps = pick(
        explicit.max_steps,
        mine.max_steps,
        project.max_steps,
        config.max_steps,
    )
    .unwrap_or(Sourced {
        value: default_max_steps,
        source: Source::Default,
    });
    let max_cost_usd = pick(
        explicit.max_cost_usd,
        mine.max_cost_usd,
        project.max_cost_usd,
        config.max_cost_usd,
    );
    if max_steps.value == 0 {
        return Err(CoreError::Config(format!(
            "max_steps = 0 ({}) is not allowed: use at least 1",
            max_steps.source
        )));
    }
    if let Some(cost) = max_cost_usd
        .as_ref()
        .filter(|c| !(c.value.is_finite() && c.value >= 0.0))
    {
        return Err(CoreError::Config(format!(
            "max_cost_usd = {} ({}) is not allowed: use a number of dollars, 0 or more",
            cost.value, cost.source
        )));
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
    fn the_provider_is_the_flag_then_the_repositorys_then_routing_main_then_the_default() {
        let repo = tempfile::tempdir().unwrap();
        let root = repo.path();
        let key = root.display().to_string();
        let provider = |text: &str, flag: Option<&str>| {
            let explicit = Explicit {
                provider: flag.map(Into::into),
                ..Explicit::default()
            };
            let p = effective(&config(text), root, &explicit, 100)
                .unwrap()
                .provider
                .unwrap();
            (p.value, p.source)
        };
        let routed = "default_provider = \"d\"\n[routing]\nmain = \"m\"\n";
        assert_eq!(provider(routed, None), ("m".into(), Source::Routing));
        assert_eq!(provider(routed, Some("f")), ("f".into(), Source::Flag));
        let mine = format!("{routed}[repos.\"{key}\"]\nprovider = \"r\"\n");
        assert_eq!(provider(&mine, None), ("r".into(), Source::Repository));
        assert_eq!(
            provider("default_provider = \"d\"\n", None),
            ("d".into(), Source::Global)
        );
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
                source: Source::Project
            }
        );
        // The project may not raise your cost limit.
        assert_eq!(e.max_cost_usd.unwrap().source, Source::Global);
        assert_eq!(e.provider.unwrap().source, Source::Global);

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
