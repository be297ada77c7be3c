//! Other agents' MCP server entries read as [`McpServerConfig`]s, for `bosun mcp import`:
//! Claude Code (`~/.claude.json`: `mcpServers` and the current project's
//! `projects["<path>"].mcpServers`; the project's `.mcp.json`), Codex (`[mcp_servers.NAME]`
//! in `$CODEX_HOME/config.toml`) or a file of either shape.
//!
//! Pure reading: nothing here writes. Each server comes with notes saying what could not be
//! carried over as it was. A secret never crosses: a literal value that looks secret becomes
//! a variable passed by name (`env_vars`), a literal `Authorization` header is dropped, and no
//! note or error repeats a value that could be one.

mod claude;
mod codex;
mod values;

use crate::config::{McpServerConfig, check_server_name};
use std::path::{Path, PathBuf};

/// Where `bosun mcp import --from` reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImportSource {
    Claude,
    Codex,
    File(PathBuf),
}

impl ImportSource {
    /// `claude`, `codex`, or a path.
    pub fn parse(text: &str) -> ImportSource {
        match text {
            "claude" | "claude-code" => ImportSource::Claude,
            "codex" => ImportSource::Codex,
            path => ImportSource::File(PathBuf::from(path)),
        }
    }
}

/// The directories the sources are found in: from the environment ([`Places::from_env`]), or
/// given by a test.
#[derive(Debug, Clone, Default)]
pub struct Places {
    /// `$HOME`.
    pub home: Option<PathBuf>,
    /// `$CLAUDE_CONFIG_DIR`: where Claude Code keeps `.claude.json` instead of `$HOME`.
    pub claude_config_dir: Option<PathBuf>,
    /// `$CODEX_HOME` (default `~/.codex`).
    pub codex_home: Option<PathBuf>,
    /// The current directory: its project's entries and `.mcp.json` are Claude Code's.
    pub cwd: PathBuf,
}

impl Places {
    pub fn from_env() -> Places {
        let var = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        Places {
            home: var("HOME").or_else(|| var("USERPROFILE")),
            claude_config_dir: var("CLAUDE_CONFIG_DIR"),
            codex_home: var("CODEX_HOME"),
            cwd: std::env::current_dir().unwrap_or_default(),
        }
    }
}

/// One server found, ready to be written as `[mcp_servers.NAME]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportedServer {
    /// Bosun's name for it ([`check_server_name`] holds).
    pub name: String,
    /// Its name in the source.
    pub original_name: String,
    /// The file and key it came from: `/home/u/.claude.json: mcpServers`.
    pub origin: String,
    pub config: McpServerConfig,
    /// What was changed, dropped or needs doing by hand, one sentence each.
    pub notes: Vec<String>,
}

/// An entry that could not be read as a server (it is left out, with why).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable {
    pub name: String,
    pub origin: String,
    pub reason: String,
}

/// What a source held.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Found {
    pub servers: Vec<ImportedServer>,
    pub unreadable: Vec<Unreadable>,
    /// Where it looked: each file and the keys read in it.
    pub looked: Vec<String>,
}

impl Found {
    /// One entry of a source, read into a server or kept as unreadable with why.
    fn add(
        &mut self,
        name: &str,
        origin: &str,
        read: Result<(crate::McpServerConfig, Vec<String>), String>,
    ) {
        match read {
            Ok((config, notes)) => self.servers.push(ImportedServer {
                name: name.to_string(),
                original_name: name.to_string(),
                origin: origin.to_string(),
                config,
                notes,
            }),
            Err(reason) => self.unreadable.push(Unreadable {
                name: name.to_string(),
                origin: origin.to_string(),
                reason,
            }),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("cannot read {path}: {message}")]
    Read { path: PathBuf, message: String },
    #[error("{path} is not valid {format}: {message}")]
    Parse {
        path: PathBuf,
        format: &'static str,
        message: String,
    },
    #[error("{path}: {message}")]
    Shape { path: PathBuf, message: String },
}

/// Reads a source. A default place that does not exist is only "looked at"; a named file that
/// does not exist, or any file that does not parse, is an error naming it.
pub fn find(source: &ImportSource, places: &Places) -> Result<Found, ImportError> {
    let mut found = match source {
        ImportSource::Claude => claude::find(places)?,
        ImportSource::Codex => codex::find(places)?,
        ImportSource::File(path) => find_in_file(path)?,
    };
    give_unique_names(&mut found.servers);
    Ok(found)
}

/// A file of either shape, told apart by its content: JSON `{"mcpServers": …}` (Claude Code,
/// Claude Desktop, Cursor) or TOML `[mcp_servers.NAME]` (Codex, Bosun).
fn find_in_file(path: &Path) -> Result<Found, ImportError> {
    let text = read(path)?.ok_or_else(|| ImportError::Read {
        path: path.to_path_buf(),
        message: "no such file".into(),
    })?;
    if text.trim_start().starts_with('{') {
        let json = values::parse_json(&text, path)?;
        let mut found = Found::default();
        found
            .looked
            .push(format!("{} (mcpServers)", path.display()));
        claude::servers_in(&json, "mcpServers", path, &mut found)?;
        Ok(found)
    } else {
        codex::find_in_toml(&text, path)
    }
}

/// The text of a file, `None` when it does not exist.
fn read(path: &Path) -> Result<Option<String>, ImportError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(ImportError::Read {
            path: path.to_path_buf(),
            message: e.to_string(),
        }),
    }
}

/// A name Bosun accepts: other characters become `-`, at most 40 characters.
pub fn sanitise_name(name: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .take(40)
        .collect();
    if out.is_empty() {
        out.push_str("server");
    }
    out
}

/// Sanitises every name, and numbers those that then collide (`my-server`, `my-server-2`).
fn give_unique_names(servers: &mut [ImportedServer]) {
    let mut taken: Vec<String> = Vec::new();
    for server in servers.iter_mut() {
        let base = if check_server_name(&server.original_name).is_ok() {
            server.original_name.clone()
        } else {
            sanitise_name(&server.original_name)
        };
        let mut name = base.clone();
        let mut n = 2;
        while taken.contains(&name) {
            let suffix = format!("-{n}");
            let keep = base.len().min(40 - suffix.len());
            name = format!("{}{suffix}", &base[..keep]);
            n += 1;
        }
        if name != server.original_name {
            server.notes.insert(
                0,
                format!(
                    "renamed from {:?}: a Bosun server name holds only letters, digits, `_` and `-` (at most 40) and is unique",
                    server.original_name
                ),
            );
        }
        taken.push(name.clone());
        server.name = name;
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
