//! Which checks a task runs: `--check` for one run, else `[[checks]]` in your `config.toml`'s
//! `[repos."<path>"]` section, else the repository's `.bosun/config.toml`, else the ones found
//! from what the repository contains. And how many failed rounds a task gets.

use crate::repo_settings::{RepoSettings, project_settings};
use crate::{BosunConfig, CoreError};
use bosun_protocol::{CheckSource, CheckSpec, RepoChecks};
use std::path::{Path, PathBuf};

/// Failed rounds of checks before a task finishes `checks_failed`.
pub const DEFAULT_MAX_CHECK_ROUNDS: u32 = 3;
/// The longest a check may run.
pub const MAX_CHECK_TIMEOUT_SECS: u64 = 24 * 3600;

/// What the user chose for one run.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum ChecksChoice {
    /// The repository's checks (configured, else discovered).
    #[default]
    Repository,
    /// Exactly these (`--check CMD`, or the app's edited list).
    These(Vec<CheckSpec>),
    /// `--no-checks`.
    None,
}

/// The checks of one task.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckPlan {
    pub checks: Vec<CheckSpec>,
    pub source: CheckSource,
    pub max_rounds: u32,
}

impl CheckPlan {
    pub fn none() -> CheckPlan {
        CheckPlan {
            checks: Vec::new(),
            source: CheckSource::None,
            max_rounds: DEFAULT_MAX_CHECK_ROUNDS,
        }
    }
}

/// `--check CMD`: a check named after its command, with the defaults.
pub fn flag_check(command: &str) -> Result<CheckSpec, CoreError> {
    let command = command.trim();
    if command.is_empty() {
        return Err(CoreError::Config(
            "--check needs a command, e.g. --check 'python3 -m unittest'".into(),
        ));
    }
    Ok(CheckSpec::new(command, command))
}

/// Checks a user or a file wrote are sound: a name and a command, a timeout within a day,
/// names unique.
pub fn validate(checks: &[CheckSpec], origin: &str) -> Result<(), CoreError> {
    let mut names = std::collections::HashSet::new();
    for (i, c) in checks.iter().enumerate() {
        let what = format!("{origin}: check {} ({:?})", i + 1, c.name);
        if c.name.trim().is_empty() {
            return Err(CoreError::Config(format!(
                "{origin}: check {} has no name",
                i + 1
            )));
        }
        if c.command.trim().is_empty() {
            return Err(CoreError::Config(format!("{what} has no command")));
        }
        if c.timeout_secs == 0 || c.timeout_secs > MAX_CHECK_TIMEOUT_SECS {
            return Err(CoreError::Config(format!(
                "{what}: timeout_secs = {} is not allowed: use 1 to {MAX_CHECK_TIMEOUT_SECS}",
                c.timeout_secs
            )));
        }
        if !names.insert(c.name.trim().to_string()) {
            return Err(CoreError::Config(format!(
                "{origin}: two checks are named {:?}; give each its own name",
                c.name
            )));
        }
    }
    Ok(())
}

fn mine(config: &BosunConfig, repo_root: &Path) -> RepoSettings {
    config
        .repos
        .get(&repo_root.display().to_string())
        .cloned()
        .unwrap_or_default()
}

/// The checks a new task of `repo_root` would run: configured (yours, then the project's), else
/// discovered in `files` (the tree the task starts from; the checkout when there is none).
pub fn repo_checks(
    config: &BosunConfig,
    repo_root: &Path,
    files: Option<&Path>,
) -> Result<RepoChecks, CoreError> {
    let config_path = project_config_path(repo_root).display().to_string();
    if let Some(checks) = mine(config, repo_root).checks {
        validate(
            &checks,
            &format!("config.toml [repos.\"{}\"]", repo_root.display()),
        )?;
        return Ok(RepoChecks {
            checks,
            source: CheckSource::Configured,
            config_path: format!(
                "$BOSUN_HOME/config.toml [repos.\"{}\"]",
                repo_root.display()
            ),
        });
    }
    if let Some(checks) = project_settings(repo_root)?.checks {
        validate(&checks, &config_path)?;
        return Ok(RepoChecks {
            checks,
            source: CheckSource::Configured,
            config_path,
        });
    }
    Ok(RepoChecks {
        checks: bosun_verify::discover(files.unwrap_or(repo_root)),
        source: CheckSource::Discovered,
        config_path,
    })
}

/// The plan of one task.
pub fn plan(
    config: &BosunConfig,
    repo_root: &Path,
    files: Option<&Path>,
    choice: &ChecksChoice,
    max_rounds_flag: Option<u32>,
) -> Result<CheckPlan, CoreError> {
    let max_rounds = max_rounds(config, repo_root, max_rounds_flag)?;
    let (checks, source) = match choice {
        ChecksChoice::None => (Vec::new(), CheckSource::None),
        ChecksChoice::These(checks) => {
            validate(checks, "--check")?;
            (checks.clone(), CheckSource::Flag)
        }
        ChecksChoice::Repository => {
            let found = repo_checks(config, repo_root, files)?;
            (found.checks, found.source)
        }
    };
    Ok(CheckPlan {
        checks,
        source,
        max_rounds,
    })
}

/// `--max-check-rounds`, else yours per repository, else the project's (only lower than your
/// global value, or than 3 when you set none: a repository can tighten, never loosen), else
/// your global value, else 3.
pub fn max_rounds(
    config: &BosunConfig,
    repo_root: &Path,
    flag: Option<u32>,
) -> Result<u32, CoreError> {
    // Tighten only: below your global value, or below the default when you set none.
    let ceiling = config.max_check_rounds.unwrap_or(DEFAULT_MAX_CHECK_ROUNDS);
    let project = project_settings(repo_root)?
        .max_check_rounds
        .filter(|p| *p < ceiling);
    let rounds = flag
        .or(mine(config, repo_root).max_check_rounds)
        .or(project)
        .or(config.max_check_rounds)
        .unwrap_or(DEFAULT_MAX_CHECK_ROUNDS);
    if rounds == 0 {
        return Err(CoreError::Config(
            "max_check_rounds = 0 is not allowed: use at least 1 (or --no-checks to run none)"
                .into(),
        ));
    }
    Ok(rounds)
}

/// `<repo>/.bosun/config.toml`.
pub fn project_config_path(repo_root: &Path) -> PathBuf {
    repo_root.join(".bosun").join("config.toml")
}

/// Writes `checks` as the `[[checks]]` of the repository's `.bosun/config.toml`, keeping
/// everything else in the file (its other keys and comments). Returns the file written.
pub fn save_checks(repo_root: &Path, checks: &[CheckSpec]) -> Result<PathBuf, CoreError> {
    let path = project_config_path(repo_root);
    validate(checks, &path.display().to_string())?;
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => {
            return Err(CoreError::Config(format!(
                "cannot read {}: {e}",
                path.display()
            )));
        }
    };
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e| CoreError::Config(format!("{} is not valid TOML: {e}", path.display())))?;
    let mut tables = toml_edit::ArrayOfTables::new();
    for c in checks {
        let mut t = toml_edit::Table::new();
        t["name"] = toml_edit::value(c.name.trim());
        t["command"] = toml_edit::value(c.command.trim());
        if c.timeout_secs != bosun_protocol::DEFAULT_CHECK_TIMEOUT_SECS {
            t["timeout_secs"] = toml_edit::value(i64::try_from(c.timeout_secs).unwrap_or(600));
        }
        if !c.required {
            t["required"] = toml_edit::value(false);
        }
        if c.when != bosun_protocol::CheckWhen::End {
            t["when"] = toml_edit::value(c.when.as_str());
        }
        tables.push(t);
    }
    doc.remove("checks");
    if checks.is_empty() {
        // No checks, said explicitly: `checks = []` (nothing is discovered then).
        doc.insert("checks", toml_edit::value(toml_edit::Array::new()));
    } else {
        doc.insert("checks", toml_edit::Item::ArrayOfTables(tables));
    }
    let out = doc.to_string();
    // The file must still be one Bosun reads.
    toml::from_str::<RepoSettings>(&out).map_err(|e| {
        CoreError::Config(format!(
            "{} would not be valid after saving: {e}",
            path.display()
        ))
    })?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| CoreError::Config(format!("cannot create {}: {e}", dir.display())))?;
    }
    let tmp = path.with_extension("toml.tmp");
    std::fs::write(&tmp, out.as_bytes())
        .and_then(|()| std::fs::rename(&tmp, &path))
        .map_err(|e| CoreError::Config(format!("cannot write {}: {e}", path.display())))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn config(text: &str) -> BosunConfig {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn yours_beat_the_projects_beat_discovered_and_a_flag_beats_all() {
        let repo = tempfile::tempdir().unwrap();
        let root = repo.path();
        std::fs::write(root.join("Cargo.toml"), "[package]\nname = \"x\"\n").unwrap();
        let found = plan(
            &BosunConfig::default(),
            root,
            None,
            &ChecksChoice::Repository,
            None,
        )
        .unwrap();
        assert_eq!(found.source, CheckSource::Discovered);
        assert!(
            found
                .checks
                .iter()
                .any(|c| c.command.starts_with("cargo test")),
            "{found:?}"
        );
        assert_eq!(found.max_rounds, 3);

        save_checks(root, &[CheckSpec::new("unit", "make unit")]).unwrap();
        let text = std::fs::read_to_string(root.join(".bosun/config.toml")).unwrap();
        assert!(
            text.contains("[[checks]]") && text.contains("make unit"),
            "{text}"
        );
        let project = plan(
            &BosunConfig::default(),
            root,
            None,
            &ChecksChoice::Repository,
            None,
        )
        .unwrap();
        assert_eq!(project.source, CheckSource::Configured);
        assert_eq!(project.checks, vec![CheckSpec::new("unit", "make unit")]);

        let key = root.display().to_string();
        let mine = config(&format!(
            "max_check_rounds = 5\n[repos.\"{key}\"]\nmax_check_rounds = 2\n[[repos.\"{key}\".checks]]\nname = \"mine\"\ncommand = \"true\"\nrequired = false\n"
        ));
        let p = plan(&mine, root, None, &ChecksChoice::Repository, None).unwrap();
        assert_eq!(p.checks[0].name, "mine");
        assert!(!p.checks[0].required);
        assert_eq!(p.max_rounds, 2);
        let p = plan(
            &mine,
            root,
            None,
            &ChecksChoice::These(vec![flag_check("npm test").unwrap()]),
            Some(7),
        )
        .unwrap();
        assert_eq!((p.source, p.max_rounds), (CheckSource::Flag, 7));
        assert_eq!(p.checks[0].name, "npm test");
        let p = plan(&mine, root, None, &ChecksChoice::None, None).unwrap();
        assert!(p.checks.is_empty());
        assert_eq!(p.source, CheckSource::None);
    }

    #[test]
    fn saving_keeps_the_files_other_keys_and_a_project_cannot_raise_your_rounds() {
        let repo = tempfile::tempdir().unwrap();
        let root = repo.path();
        std::fs::create_dir_all(root.join(".bosun")).unwrap();
        std::fs::write(
            root.join(".bosun/config.toml"),
            "# limits for this repo\nmax_steps = 20\nmax_check_rounds = 9\n[[checks]]\nname = \"old\"\ncommand = \"false\"\n",
        )
        .unwrap();
        let mut spec = CheckSpec::new("lint", "ruff check {files}");
        spec.when = bosun_protocol::CheckWhen::Edit;
        spec.timeout_secs = 30;
        save_checks(root, &[spec.clone()]).unwrap();
        let text = std::fs::read_to_string(root.join(".bosun/config.toml")).unwrap();
        assert!(text.contains("# limits for this repo") && text.contains("max_steps = 20"));
        assert!(!text.contains("old"), "{text}");
        assert_eq!(project_settings(root).unwrap().checks, Some(vec![spec]));
        // Saving none says so: the repository then has no checks, none are discovered.
        save_checks(root, &[]).unwrap();
        assert_eq!(project_settings(root).unwrap().checks, Some(Vec::new()));
        let global = config("max_check_rounds = 4\n");
        assert_eq!(max_rounds(&global, root, None).unwrap(), 4);
        assert_eq!(
            max_rounds(&BosunConfig::default(), root, None).unwrap(),
            3,
            "a project cannot raise the default"
        );
        std::fs::write(root.join(".bosun/config.toml"), "max_check_rounds = 2\n").unwrap();
        assert_eq!(max_rounds(&BosunConfig::default(), root, None).unwrap(), 2);
        assert!(max_rounds(&global, root, Some(0)).is_err());
    }

    #[test]
    fn bad_checks_are_errors_that_name_what_is_wrong() {
        let mut empty = CheckSpec::new("x", " ");
        let err = validate(&[empty.clone()], "--check")
            .unwrap_err()
            .to_string();
        assert!(err.contains("no command"), "{err}");
        empty.command = "true".into();
        empty.timeout_secs = 0;
        let err = validate(&[empty], "f").unwrap_err().to_string();
        assert!(err.contains("timeout_secs = 0"), "{err}");
        let twice = [CheckSpec::new("t", "a"), CheckSpec::new("t", "b")];
        assert!(
            validate(&twice, "f")
                .unwrap_err()
                .to_string()
                .contains("two checks")
        );
        assert!(flag_check("  ").is_err());
        let repo = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(repo.path().join(".bosun")).unwrap();
        std::fs::write(
            repo.path().join(".bosun/config.toml"),
            "[[checks]]\nname = \"t\"\ncommand = \"x\"\nwhen = \"sometimes\"\n",
        )
        .unwrap();
        let err = project_settings(repo.path()).unwrap_err().to_string();
        assert!(err.contains("sometimes"), "{err}");
        std::fs::write(
            repo.path().join(".bosun/config.toml"),
            "[[checks]]\nname = \"t\"\ncommand = \"x\"\ntimeout = 5\n",
        )
        .unwrap();
        let err = project_settings(repo.path()).unwrap_err().to_string();
        assert!(err.contains("timeout"), "{err}");
    }
}
