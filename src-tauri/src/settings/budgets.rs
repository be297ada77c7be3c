//! The Budgets section of Settings: `[budgets]` (every repository) or `[repos."<path>".budgets]`
//! (one repository) in `$BOSUN_HOME/config.toml`, next to the per-task cost limit
//! (`max_cost_usd`, top level or in the repository's section). Other keys of the file are kept.

use super::config_error;
use crate::error::IpcError;
use bosun_core::BosunConfig;
use bosun_core::config::BudgetSettings;
use bosun_store::{BudgetLimit, BudgetWindow};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The limits of one scope, as the form shows and sends them (null: no limit).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Budgets {
    #[serde(default)]
    pub daily_usd: Option<f64>,
    #[serde(default)]
    pub weekly_usd: Option<f64>,
    #[serde(default)]
    pub monthly_usd: Option<f64>,
    #[serde(default)]
    pub max_usd_per_minute: Option<f64>,
    /// The most one task may cost.
    #[serde(default)]
    pub max_cost_usd: Option<f64>,
}

/// The form's answer: the scope's limits and the repositories that have a section of their own.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BudgetsView {
    pub repo: Option<String>,
    pub budgets: Budgets,
    pub config_path: String,
    pub repos: Vec<String>,
}

fn load(home: &Path) -> Result<BosunConfig, IpcError> {
    BosunConfig::load(home).map_err(|e| config_error(e.to_string()))
}

fn nonempty_repo(repo: Option<String>) -> Option<String> {
    repo.map(|r| r.trim().to_string()).filter(|r| !r.is_empty())
}

pub fn budgets(home: &Path, repo: Option<String>) -> Result<BudgetsView, IpcError> {
    let config = load(home)?;
    let repo = nonempty_repo(repo);
    let (b, max_cost_usd) = match &repo {
        None => (
            config.budgets.clone().unwrap_or_default(),
            config.max_cost_usd,
        ),
        Some(r) => {
            let s = config.repos.get(r).cloned().unwrap_or_default();
            (s.budgets.unwrap_or_default(), s.max_cost_usd)
        }
    };
    Ok(BudgetsView {
        repo,
        budgets: Budgets {
            daily_usd: b.daily_usd,
            weekly_usd: b.weekly_usd,
            monthly_usd: b.monthly_usd,
            max_usd_per_minute: b.max_usd_per_minute,
            max_cost_usd,
        },
        config_path: home.join("config.toml").display().to_string(),
        repos: config.repos.keys().cloned().collect(),
    })
}

/// Each set limit must be a finite number of dollars, zero or more.
fn check(b: &Budgets) -> Result<(), IpcError> {
    for (key, v) in [
        ("daily_usd", b.daily_usd),
        ("weekly_usd", b.weekly_usd),
        ("monthly_usd", b.monthly_usd),
        ("max_usd_per_minute", b.max_usd_per_minute),
        ("max_cost_usd", b.max_cost_usd),
    ] {
        if let Some(v) = v
            && (!v.is_finite() || v < 0.0)
        {
            return Err(IpcError::new(
                "invalid_budget",
                format!(
                    "{key}: {v} is not an amount of dollars; give a number ≥ 0 or leave it empty"
                ),
            ));
        }
    }
    Ok(())
}

/// Saves the scope's limits (every repository, or `repo`'s section); empty limits are removed.
pub fn save_budgets(home: &Path, repo: Option<String>, input: Budgets) -> Result<(), IpcError> {
    check(&input)?;
    let mut config = load(home)?;
    let settings = BudgetSettings {
        daily_usd: input.daily_usd,
        weekly_usd: input.weekly_usd,
        monthly_usd: input.monthly_usd,
        max_usd_per_minute: input.max_usd_per_minute,
    };
    let keep = |_old: Option<BudgetSettings>| {
        (settings != BudgetSettings::default()).then(|| settings.clone())
    };
    match nonempty_repo(repo) {
        None => {
            config.budgets = keep(config.budgets.take());
            config.max_cost_usd = input.max_cost_usd;
        }
        Some(r) => {
            let section = config.repos.entry(r.clone()).or_default();
            section.budgets = keep(section.budgets.take());
            section.max_cost_usd = input.max_cost_usd;
            if *section == bosun_core::repo_settings::RepoSettings::default() {
                config.repos.remove(&r);
            }
        }
    }
    config.save(home).map_err(|e| config_error(e.to_string()))?;
    Ok(())
}

/// Every budget `config.toml` sets, overall and per repository, as the store counts them.
pub fn limits(home: &Path) -> Result<Vec<BudgetLimit>, IpcError> {
    let config = load(home)?;
    let mut out = Vec::new();
    let mut add = |prefix: &str, repo: Option<&String>, b: &BudgetSettings| {
        for (key, window, v) in [
            ("daily_usd", BudgetWindow::Day, b.daily_usd),
            ("weekly_usd", BudgetWindow::Week, b.weekly_usd),
            ("monthly_usd", BudgetWindow::Month, b.monthly_usd),
        ] {
            if let Some(limit_usd) = v {
                out.push(BudgetLimit {
                    name: format!("{prefix}{key}"),
                    window,
                    repo: repo.cloned(),
                    limit_usd,
                });
            }
        }
    };
    if let Some(b) = &config.budgets {
        add("", None, b);
    }
    for (path, s) in &config.repos {
        if let Some(b) = &s.budgets {
            add(&format!("repos.{path:?}.budgets."), Some(path), b);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn budgets_round_trip_overall_and_per_repository_and_keep_the_other_keys() {
        let home = tempfile::tempdir().unwrap();
        std::fs::write(
            home.path().join("config.toml"),
            "default_mode = \"ask\"\nmax_steps = 40\n[repos.\"/src/api\"]\nmax_steps = 9\n",
        )
        .unwrap();
        let overall = Budgets {
            daily_usd: Some(0.01),
            monthly_usd: Some(50.0),
            max_cost_usd: Some(2.5),
            ..Budgets::default()
        };
        save_budgets(home.path(), None, overall.clone()).unwrap();
        let api = Budgets {
            weekly_usd: Some(3.0),
            max_usd_per_minute: Some(0.5),
            ..Budgets::default()
        };
        save_budgets(home.path(), Some("/src/api".into()), api.clone()).unwrap();
        assert_eq!(budgets(home.path(), None).unwrap().budgets, overall);
        let view = budgets(home.path(), Some("/src/api".into())).unwrap();
        assert_eq!(view.budgets, api);
        assert_eq!(view.repos, vec!["/src/api".to_string()]);
        let text = std::fs::read_to_string(home.path().join("config.toml")).unwrap();
        assert!(text.contains("default_mode = \"ask\""), "{text}");
        assert!(text.contains("max_steps = 9"), "{text}");
        assert!(
            text.contains("[budgets]") && text.contains("daily_usd = 0.01"),
            "{text}"
        );
        let names: Vec<String> = limits(home.path())
            .unwrap()
            .into_iter()
            .map(|l| l.name)
            .collect();
        assert_eq!(
            names,
            vec![
                "daily_usd".to_string(),
                "monthly_usd".into(),
                "repos.\"/src/api\".budgets.weekly_usd".into()
            ]
        );
        // Emptied, the section goes.
        save_budgets(home.path(), None, Budgets::default()).unwrap();
        let text = std::fs::read_to_string(home.path().join("config.toml")).unwrap();
        assert!(!text.contains("[budgets]"), "{text}");
    }

    #[test]
    fn a_negative_or_infinite_limit_is_refused_and_nothing_is_written() {
        let home = tempfile::tempdir().unwrap();
        for bad in [-1.0, f64::INFINITY, f64::NAN] {
            let err = save_budgets(
                home.path(),
                None,
                Budgets {
                    weekly_usd: Some(bad),
                    ..Budgets::default()
                },
            )
            .unwrap_err();
            assert_eq!(err.code, "invalid_budget");
            assert!(err.message.contains("weekly_usd"), "{}", err.message);
        }
        assert!(!home.path().join("config.toml").exists());
    }
}
