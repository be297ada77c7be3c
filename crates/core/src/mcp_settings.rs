//! Turning one of your MCP servers on or off from the app's Settings: `enabled` in its
//! `[mcp_servers.NAME]` table of `$BOSUN_HOME/config.toml` (or its
//! `[repos."<path>".mcp_servers.NAME]` table, when that is where it is declared). Only that key
//! changes: every other key, comment and blank line of the file stays as it was.
//!
//! A server a repository's own `.bosun/config.toml` declares is not yours to switch here: it is
//! approved or refused when a task of that repository starts.

use crate::mcp::configured;
use crate::{BosunConfig, CoreError};
use std::path::{Path, PathBuf};

/// Sets `enabled` of the server `name` as [`configured`] for `repo_root` finds it (your
/// `[repos."<path>"]` table over your global one) and returns the file's path. Turning a
/// server on whose table has no `enabled` key changes nothing (servers are on by default).
pub fn set_enabled(
    home: &Path,
    name: &str,
    repo_root: Option<&Path>,
    enabled: bool,
) -> Result<PathBuf, CoreError> {
    let path = home.join("config.toml");
    let shown = path.display().to_string();
    let servers = configured(home, repo_root)?;
    let Some(server) = servers.iter().find(|c| c.declared.name == name) else {
        let known: Vec<&str> = servers.iter().map(|c| c.declared.name.as_str()).collect();
        let known = if known.is_empty() {
            format!("none is configured; add [mcp_servers.NAME] to {shown}")
        } else {
            format!("the configured ones are {}", known.join(", "))
        };
        return Err(CoreError::Config(format!(
            "no MCP server is named `{name}`: {known}"
        )));
    };
    if server.from_project {
        return Err(CoreError::Config(format!(
            "the MCP server `{name}` is declared by the repository in {}, not in your {shown}: it cannot be turned {} here; it is approved or refused when a task of that repository starts",
            server.declared.origin,
            if enabled { "on" } else { "off" },
        )));
    }
    let config = BosunConfig::load(home)?;
    // Where `configured` found it: your repository's table when it has one of that name.
    let repo_key = repo_root
        .and_then(|root| crate::repo_settings::repo_section_key(&config, root))
        .filter(|key| {
            config
                .repos
                .get(*key)
                .is_some_and(|s| s.mcp_servers.contains_key(name))
        })
        .map(str::to_string);

    let text = std::fs::read_to_string(&path)
        .map_err(|e| CoreError::Config(format!("cannot read {shown}: {e}")))?;
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e| CoreError::Config(format!("{shown} is not valid TOML: {e}")))?;
    let (table_name, parent) = match &repo_key {
        Some(key) => (
            format!("[repos.\"{key}\".mcp_servers.{name}]"),
            doc.get_mut("repos")
                .and_then(toml_edit::Item::as_table_like_mut)
                .and_then(|t| t.get_mut(key))
                .and_then(toml_edit::Item::as_table_like_mut),
        ),
        None => (
            format!("[mcp_servers.{name}]"),
            Some(doc.as_table_mut() as &mut dyn toml_edit::TableLike),
        ),
    };
    let table = parent
        .and_then(|t| t.get_mut("mcp_servers"))
        .and_then(toml_edit::Item::as_table_like_mut)
        .and_then(|t| t.get_mut(name))
        .and_then(toml_edit::Item::as_table_like_mut)
        .ok_or_else(|| CoreError::Config(format!("{shown}: {table_name} is not a table")))?;
    // An existing value is replaced in place, so the comments around its key stay.
    match table
        .get_mut("enabled")
        .and_then(toml_edit::Item::as_value_mut)
    {
        Some(v) => {
            let decor = v.decor().clone();
            *v = toml_edit::Value::from(enabled);
            *v.decor_mut() = decor;
        }
        None if enabled => return Ok(path),
        None => {
            table.insert("enabled", toml_edit::value(false));
        }
    }
    let out = doc.to_string();
    toml::from_str::<BosunConfig>(&out)
        .map_err(|e| CoreError::Config(format!("{shown} would not be valid after saving: {e}")))?;
    let tmp = path.with_extension("toml.tmp");
    std::fs::write(&tmp, out)
        .and_then(|()| std::fs::rename(&tmp, &path))
        .map_err(|e| CoreError::Config(format!("cannot write {shown}: {e}")))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use pretty_assertions::assert_eq;

    const CONFIG: &str = "# my servers\n[mcp_servers.everything]\ncommand = \"node\"   # pinned\nargs = [\"index.js\", \"stdio\"]\n\n[mcp_servers.docs]\nurl = \"http://127.0.0.1:1/mcp\"\n";

    fn read(home: &Path) -> String {
        std::fs::read_to_string(home.join("config.toml")).unwrap()
    }

    fn enabled_of(home: &Path, repo: Option<&Path>, name: &str) -> bool {
        configured(home, repo)
            .unwrap()
            .into_iter()
            .find(|c| c.declared.name == name)
            .unwrap()
            .declared
            .config
            .is_enabled()
    }

    #[test]
    fn turning_a_server_off_and_on_changes_only_its_enabled_key() {
        let home = tempfile::tempdir().unwrap();
        std::fs::write(home.path().join("config.toml"), CONFIG).unwrap();
        let path = set_enabled(home.path(), "everything", None, false).unwrap();
        assert_eq!(path, home.path().join("config.toml"));
        assert_eq!(
            read(home.path()),
            CONFIG.replace("\"stdio\"]\n", "\"stdio\"]\nenabled = false\n")
        );
        assert!(!enabled_of(home.path(), None, "everything"));
        assert!(enabled_of(home.path(), None, "docs"));
        set_enabled(home.path(), "everything", None, true).unwrap();
        assert_eq!(
            read(home.path()),
            CONFIG.replace("\"stdio\"]\n", "\"stdio\"]\nenabled = true\n")
        );
        assert!(enabled_of(home.path(), None, "everything"));
    }

    #[test]
    fn turning_on_a_server_that_is_on_leaves_the_file_alone() {
        let home = tempfile::tempdir().unwrap();
        std::fs::write(home.path().join("config.toml"), CONFIG).unwrap();
        set_enabled(home.path(), "docs", None, true).unwrap();
        assert_eq!(read(home.path()), CONFIG);
    }

    #[test]
    fn an_inline_table_is_edited_in_place() {
        let home = tempfile::tempdir().unwrap();
        let text = "mcp_servers = { fs = { command = \"node\", enabled = true } }\nmax_steps = 9\n";
        std::fs::write(home.path().join("config.toml"), text).unwrap();
        set_enabled(home.path(), "fs", None, false).unwrap();
        assert_eq!(
            read(home.path()),
            "mcp_servers = { fs = { command = \"node\", enabled = false } }\nmax_steps = 9\n"
        );
    }

    #[test]
    fn a_repositorys_own_table_is_the_one_switched() {
        let home = tempfile::tempdir().unwrap();
        let repo = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(repo.path()).unwrap();
        // Spelled with a trailing slash in the file: still that repository.
        let text = format!(
            "{CONFIG}\n[repos.\"{}/\".mcp_servers.docs]\nurl = \"http://127.0.0.1:2/mcp\"\n",
            root.display()
        );
        std::fs::write(home.path().join("config.toml"), &text).unwrap();
        set_enabled(home.path(), "docs", Some(&root), false).unwrap();
        assert_eq!(read(home.path()), format!("{text}enabled = false\n"));
        assert!(!enabled_of(home.path(), Some(&root), "docs"));
        // The global one is untouched.
        assert!(enabled_of(home.path(), None, "docs"));
        // A global server seen from the repository is switched in the global table.
        set_enabled(home.path(), "everything", Some(&root), false).unwrap();
        assert!(!enabled_of(home.path(), None, "everything"));
    }

    #[test]
    fn a_projects_server_is_refused_and_says_where_it_is_decided() {
        let home = tempfile::tempdir().unwrap();
        let repo = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(repo.path()).unwrap();
        std::fs::write(home.path().join("config.toml"), CONFIG).unwrap();
        std::fs::create_dir_all(root.join(".bosun")).unwrap();
        std::fs::write(
            root.join(".bosun/config.toml"),
            "[mcp_servers.lint]\ncommand = \"node\"\n",
        )
        .unwrap();
        let err = set_enabled(home.path(), "lint", Some(&root), false)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(".bosun/config.toml") && err.contains("when a task"),
            "{err}"
        );
        assert_eq!(read(home.path()), CONFIG);
    }

    #[test]
    fn an_unknown_name_lists_the_known_ones() {
        let home = tempfile::tempdir().unwrap();
        std::fs::write(home.path().join("config.toml"), CONFIG).unwrap();
        let err = set_enabled(home.path(), "evrything", None, false)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("`evrything`") && err.contains("docs, everything"),
            "{err}"
        );
        let empty = tempfile::tempdir().unwrap();
        let err = set_enabled(empty.path(), "x", None, false)
            .unwrap_err()
            .to_string();
        assert!(err.contains("add [mcp_servers.NAME]"), "{err}");
    }
}
