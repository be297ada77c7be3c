//! Importing another agent's MCP servers from the app's Settings: what
//! [`bosun_mcp::import::find`] reads from Claude Code or Codex, shown first (nothing written),
//! then written as `[mcp_servers.NAME]` tables of `$BOSUN_HOME/config.toml` — the tables
//! `bosun mcp import` writes, with a comment saying where each came from. The rest of the file
//! (comments included) stays as it was; a server of a name already there is left alone.

use crate::{BosunConfig, CoreError};
use bosun_mcp::import::{ImportSource, ImportedServer, Places, find};
use bosun_mcp::{McpServerConfig, Transport};
use serde::Serialize;
use std::path::{Path, PathBuf};
use toml_edit::{Array, DocumentMut, InlineTable, Item, Table, value};
use ts_rs::TS;

/// What becomes (or became) of one server found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(
    export,
    export_to = "../../../ui/src/lib/bindings/",
    rename = "McpImportOutcome"
)]
pub enum ImportOutcome {
    /// Not in config.toml yet: it can be imported.
    New,
    /// Written just now.
    Imported,
    /// A server of that name is in config.toml already (left as it is).
    Exists,
    /// It would not make a working table (`reason` says why).
    Invalid,
    /// Found, not chosen.
    Skipped,
}

/// One server found, as Settings shows it. Nothing credential-shaped is shown.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(
    export,
    export_to = "../../../ui/src/lib/bindings/",
    rename = "McpImportRow"
)]
pub struct ImportRow {
    /// Bosun's name for it.
    pub name: String,
    /// Its name in the source.
    pub original_name: String,
    /// The file and key it came from.
    pub origin: String,
    pub transport: Transport,
    /// The command line or URL, credentials masked.
    pub target: String,
    pub outcome: ImportOutcome,
    pub reason: Option<String>,
    /// What was changed, dropped or needs doing by hand.
    pub notes: Vec<String>,
}

/// An entry the source holds that is no server Bosun can read.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(
    export,
    export_to = "../../../ui/src/lib/bindings/",
    rename = "McpImportUnreadable"
)]
pub struct ImportUnreadable {
    pub name: String,
    pub origin: String,
    pub reason: String,
}

/// What a source holds, and what was written.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(
    export,
    export_to = "../../../ui/src/lib/bindings/",
    rename = "McpImportReport"
)]
pub struct ImportReport {
    pub config_path: String,
    /// Where it looked: each file and the keys read in it.
    pub looked: Vec<String>,
    pub servers: Vec<ImportRow>,
    pub unreadable: Vec<ImportUnreadable>,
    /// How many were written.
    pub imported: u32,
}

/// `from` is `claude`, `codex` or a file. With `write` false nothing is written (every new,
/// valid server is `new`); with it, the new, valid servers `names` lists (all of them without
/// `names`) are written and become `imported`, the others `skipped`.
pub fn import(
    home: &Path,
    from: &str,
    places: &Places,
    names: Option<&[String]>,
    write: bool,
) -> Result<ImportReport, CoreError> {
    let from = from.trim();
    if from.is_empty() {
        return Err(CoreError::Config(
            "say where to import from: `claude`, `codex` or a file".into(),
        ));
    }
    let source = ImportSource::parse(from);
    if let ImportSource::File(path) = &source
        && !path.exists()
    {
        return Err(CoreError::Config(format!(
            "{from}: not `claude`, `codex` or a file that exists"
        )));
    }
    let found = find(&source, places).map_err(|e| CoreError::Config(e.to_string()))?;
    if let Some(names) = names
        && let Some(unknown) = names
            .iter()
            .find(|n| !found.servers.iter().any(|s| &s.name == *n))
    {
        let known: Vec<&str> = found.servers.iter().map(|s| s.name.as_str()).collect();
        return Err(CoreError::Config(format!(
            "no server named `{unknown}` was found; found: {}",
            if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            }
        )));
    }

    let path = home.join("config.toml");
    let shown = path.display().to_string();
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(CoreError::Config(format!("cannot read {shown}: {e}"))),
    };
    // The file must be one Bosun reads before it is edited: a broken one is the user's to fix.
    BosunConfig::load(home)?;
    let mut doc: DocumentMut = text
        .parse()
        .map_err(|_| CoreError::Config(format!("{shown} is not valid TOML; fix it first")))?;
    let existing: Vec<String> = match doc.get("mcp_servers") {
        None => Vec::new(),
        Some(item) => item
            .as_table_like()
            .map(|t| t.iter().map(|(k, _)| k.to_string()).collect())
            .ok_or_else(|| CoreError::Config(format!("{shown}: `mcp_servers` must be a table")))?,
    };

    let redactor = bosun_policy::redact::Redactor::new(&[]);
    let wanted = |n: &str| names.is_none_or(|names| names.iter().any(|x| x == n));
    let mut rows = Vec::new();
    let mut chosen: Vec<(&ImportedServer, Vec<String>)> = Vec::new();
    for server in &found.servers {
        let c = &server.config;
        let mut notes = server.notes.clone();
        notes.extend(credential_note(&redactor, c));
        let (outcome, reason) = match c.validate(&server.name, "config.toml") {
            Err(e) => (ImportOutcome::Invalid, Some(e)),
            Ok(()) if existing.contains(&server.name) => (
                ImportOutcome::Exists,
                Some("already in config.toml: left as it is".to_string()),
            ),
            Ok(()) if !write => (ImportOutcome::New, None),
            Ok(()) if wanted(&server.name) => {
                chosen.push((server, notes.clone()));
                (ImportOutcome::Imported, None)
            }
            Ok(()) => (ImportOutcome::Skipped, None),
        };
        let raw = match c.transport() {
            Transport::Stdio => c.command_line(),
            Transport::Http => c.url.clone().unwrap_or_default(),
        };
        rows.push(ImportRow {
            name: server.name.clone(),
            original_name: server.original_name.clone(),
            origin: server.origin.clone(),
            transport: c.transport(),
            target: redactor.redact(&raw).text.into_owned(),
            outcome,
            reason,
            notes,
        });
    }

    if write && !chosen.is_empty() {
        if !doc.contains_key("mcp_servers") {
            let mut t = Table::new();
            t.set_implicit(true);
            doc.insert("mcp_servers", Item::Table(t));
        }
        let table = doc["mcp_servers"].as_table_mut().ok_or_else(|| {
            CoreError::Config(format!(
                "{shown}: `mcp_servers` is an inline table; write it as [mcp_servers.NAME] tables to import into it"
            ))
        })?;
        for (server, notes) in &chosen {
            table.insert(
                &server.name,
                Item::Table(server_table(server, notes, "Bosun's Settings")),
            );
        }
        let out = doc.to_string();
        toml::from_str::<BosunConfig>(&out).map_err(|e| {
            CoreError::Config(format!("{shown} would not be valid after importing: {e}"))
        })?;
        write_config(&path, &out)?;
    }
    Ok(ImportReport {
        config_path: shown,
        looked: found.looked,
        servers: rows,
        unreadable: found
            .unreadable
            .into_iter()
            .map(|u| ImportUnreadable {
                name: u.name,
                origin: u.origin,
                reason: u.reason,
            })
            .collect(),
        imported: u32::try_from(chosen.len()).unwrap_or(u32::MAX),
    })
}

fn credential_note(r: &bosun_policy::redact::Redactor, c: &McpServerConfig) -> Option<String> {
    let raw = format!("{} {}", c.command_line(), c.url.as_deref().unwrap_or(""));
    let found = r.redact(&raw);
    (found.count > 0).then(|| {
        format!(
            "the {} holds what looks like a credential ({}), copied as it was: better move it into a variable passed by name",
            if c.url.is_some() { "URL" } else { "command line" },
            found.kinds.join(", ")
        )
    })
}

/// `[mcp_servers.NAME]`, with a comment saying who imported it (`by`) from where, and what to
/// do by hand. The table `bosun mcp import` writes too.
pub fn server_table(server: &ImportedServer, notes: &[String], by: &str) -> Table {
    let c = &server.config;
    let mut t = Table::new();
    let list = |items: &[String]| {
        let mut a = Array::new();
        a.extend(items.iter().map(String::as_str));
        value(a)
    };
    let map = |m: &std::collections::BTreeMap<String, String>| {
        let mut i = InlineTable::new();
        for (k, v) in m {
            i.insert(k, v.as_str().into());
        }
        value(i)
    };
    if let Some(command) = &c.command {
        t.insert("command", value(command.as_str()));
    }
    if !c.args.is_empty() {
        t.insert("args", list(&c.args));
    }
    if !c.env.is_empty() {
        t.insert("env", map(&c.env));
    }
    if !c.env_vars.is_empty() {
        t.insert("env_vars", list(&c.env_vars));
    }
    if let Some(url) = &c.url {
        t.insert("url", value(url.as_str()));
    }
    if !c.headers.is_empty() {
        t.insert("headers", map(&c.headers));
    }
    if let Some(var) = &c.bearer_token_env_var {
        t.insert("bearer_token_env_var", value(var.as_str()));
    }
    if let Some(enabled) = c.enabled {
        t.insert("enabled", value(enabled));
    }
    for (key, secs) in [
        ("startup_timeout_sec", c.startup_timeout_sec),
        ("tool_timeout_sec", c.tool_timeout_sec),
    ] {
        if let Some(secs) = secs {
            t.insert(key, value(i64::try_from(secs).unwrap_or(i64::MAX)));
        }
    }
    let one_line = |s: &str| s.replace(['\n', '\r'], " ");
    let mut prefix = format!("\n# imported by {by} from {}\n", one_line(&server.origin));
    for note in notes {
        prefix.push_str(&format!("# note: {}\n", one_line(note)));
    }
    t.decor_mut().set_prefix(prefix);
    t
}

/// Through a temporary file beside the real one, keeping its permissions; a symlinked
/// config.toml is written where it points.
fn write_config(path: &Path, text: &str) -> Result<(), CoreError> {
    let target: PathBuf = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let fail =
        |e: std::io::Error| CoreError::Config(format!("cannot write {}: {e}", target.display()));
    if let Some(dir) = target.parent() {
        std::fs::create_dir_all(dir).map_err(fail)?;
    }
    let tmp = target.with_extension("toml.tmp");
    std::fs::write(&tmp, text).map_err(fail)?;
    if let Ok(meta) = std::fs::metadata(&target) {
        std::fs::set_permissions(&tmp, meta.permissions()).map_err(fail)?;
    }
    std::fs::rename(&tmp, &target).map_err(fail)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use pretty_assertions::assert_eq;

    const CODEX: &str = "[mcp_servers.everything]\ncommand = \"node\"\nargs = [\"index.js\", \"stdio\"]\n\n[mcp_servers.docs]\nurl = \"https://docs.example.com/mcp\"\n\n[mcp_servers.mine]\ncommand = \"other\"\n";
    const MINE: &str =
        "# my config\ndefault_provider = \"local\"\n\n[mcp_servers.mine]\ncommand = \"mine\"\n";

    fn setup() -> (tempfile::TempDir, PathBuf, Places) {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("bosun");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(home.join("config.toml"), MINE).unwrap();
        let codex = dir.path().join("codex");
        std::fs::create_dir_all(&codex).unwrap();
        std::fs::write(codex.join("config.toml"), CODEX).unwrap();
        let places = Places {
            home: Some(dir.path().join("user")),
            claude_config_dir: None,
            codex_home: Some(codex),
            cwd: dir.path().to_path_buf(),
        };
        (dir, home, places)
    }

    fn outcomes(r: &ImportReport) -> Vec<(&str, ImportOutcome)> {
        r.servers
            .iter()
            .map(|s| (s.name.as_str(), s.outcome))
            .collect()
    }

    #[test]
    fn a_preview_writes_nothing_and_says_which_are_new() {
        let (_dir, home, places) = setup();
        let r = import(&home, "codex", &places, None, false).unwrap();
        assert_eq!(
            outcomes(&r),
            vec![
                ("docs", ImportOutcome::New),
                ("everything", ImportOutcome::New),
                ("mine", ImportOutcome::Exists),
            ]
        );
        assert_eq!(r.imported, 0);
        assert_eq!(r.servers[1].target, "node index.js stdio");
        assert_eq!(
            std::fs::read_to_string(home.join("config.toml")).unwrap(),
            MINE
        );
    }

    #[test]
    fn importing_the_chosen_ones_appends_their_tables_and_keeps_the_rest() {
        let (_dir, home, places) = setup();
        let names = vec!["everything".to_string()];
        let r = import(&home, "codex", &places, Some(&names), true).unwrap();
        assert_eq!(
            outcomes(&r),
            vec![
                ("docs", ImportOutcome::Skipped),
                ("everything", ImportOutcome::Imported),
                ("mine", ImportOutcome::Exists),
            ]
        );
        assert_eq!(r.imported, 1);
        let text = std::fs::read_to_string(home.join("config.toml")).unwrap();
        assert!(text.starts_with(MINE), "{text}");
        assert!(
            text.contains("# imported by Bosun's Settings from ")
                && text.contains("[mcp_servers.everything]\ncommand = \"node\"\nargs = [\"index.js\", \"stdio\"]\n"),
            "{text}"
        );
        let config = BosunConfig::load(&home).unwrap();
        assert_eq!(
            config.mcp_servers.keys().collect::<Vec<_>>(),
            vec!["everything", "mine"]
        );
        assert_eq!(config.mcp_servers["mine"].command.as_deref(), Some("mine"));
    }

    #[test]
    fn bad_input_says_what_to_do() {
        let (dir, home, places) = setup();
        let e = import(&home, "", &places, None, false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("`claude`, `codex` or a file"), "{e}");
        let missing = dir.path().join("nope.json").display().to_string();
        let e = import(&home, &missing, &places, None, false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("nope.json"), "{e}");
        let names = vec!["evrything".to_string()];
        let e = import(&home, "codex", &places, Some(&names), true)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`evrything`") && e.contains("docs, everything, mine"),
            "{e}"
        );
        assert_eq!(
            std::fs::read_to_string(home.join("config.toml")).unwrap(),
            MINE
        );
    }
}
