//! Codex's servers: `[mcp_servers.NAME]` in `$CODEX_HOME/config.toml` (default
//! `~/.codex/config.toml`). The same reader takes a Bosun-style file (`headers` for
//! `http_headers`).
//!
//! Mapped: command, args, env, env_vars, url, bearer_token_env_var, http_headers,
//! startup_timeout_sec / startup_timeout_ms, tool_timeout_sec, enabled. Noted and dropped:
//! cwd, enabled_tools, disabled_tools, env_http_headers, a literal bearer_token.

use super::values::{carry_env, carry_header, note_unexpanded, parse_toml};
use super::{Found, ImportError, Places, read};
use crate::config::McpServerConfig;
use std::path::Path;
use toml::Value;

pub(super) fn find(places: &Places) -> Result<Found, ImportError> {
    let dir = places
        .codex_home
        .clone()
        .or_else(|| places.home.as_ref().map(|h| h.join(".codex")));
    let Some(path) = dir.map(|d| d.join("config.toml")) else {
        return Ok(Found {
            looked: vec!["~/.codex/config.toml (neither CODEX_HOME nor HOME is set)".into()],
            ..Found::default()
        });
    };
    match read(&path)? {
        Some(text) => find_in_toml(&text, &path),
        None => Ok(Found {
            looked: vec![format!("{} ([mcp_servers]; no such file)", path.display())],
            ..Found::default()
        }),
    }
}

/// The `[mcp_servers.NAME]` tables of a TOML file.
pub(super) fn find_in_toml(text: &str, path: &Path) -> Result<Found, ImportError> {
    let table = parse_toml(text, path)?;
    let mut found = Found {
        looked: vec![format!("{} ([mcp_servers])", path.display())],
        ..Found::default()
    };
    let Some(servers) = table.get("mcp_servers") else {
        return Ok(found);
    };
    let servers = servers.as_table().ok_or_else(|| ImportError::Shape {
        path: path.to_path_buf(),
        message: "`mcp_servers` must be a table of servers by name".into(),
    })?;
    let origin = format!("{}: mcp_servers", path.display());
    for (name, entry) in servers {
        found.add(name, &origin, server(entry));
    }
    Ok(found)
}

const KNOWN: &[&str] = &[
    "command",
    "args",
    "env",
    "env_vars",
    "cwd",
    "url",
    "bearer_token_env_var",
    "bearer_token",
    "http_headers",
    "headers",
    "env_http_headers",
    "startup_timeout_sec",
    "startup_timeout_ms",
    "tool_timeout_sec",
    "enabled",
    "enabled_tools",
    "disabled_tools",
];

fn server(entry: &Value) -> Result<(McpServerConfig, Vec<String>), String> {
    let entry = entry
        .as_table()
        .ok_or("an entry must be a table with `command` or `url`")?;
    let text = |key: &str| -> Result<Option<String>, String> {
        match entry.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(format!("`{key}` must be a string")),
        }
    };
    let list = |key: &str| -> Result<Vec<String>, String> {
        match entry.get(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(a)) => a
                .iter()
                .map(|v| {
                    v.as_str()
                        .map(str::to_string)
                        .ok_or_else(|| format!("`{key}` must be a list of strings"))
                })
                .collect(),
            Some(_) => Err(format!("`{key}` must be a list of strings")),
        }
    };
    let map = |key: &str| -> Result<Vec<(String, String)>, String> {
        match entry.get(key) {
            None => Ok(Vec::new()),
            Some(Value::Table(t)) => t
                .iter()
                .map(|(k, v)| match v {
                    Value::String(s) => Ok((k.clone(), s.clone())),
                    Value::Integer(_) | Value::Float(_) | Value::Boolean(_) => {
                        Ok((k.clone(), v.to_string()))
                    }
                    _ => Err(format!("`{key}.{k}` must be a string")),
                })
                .collect(),
            Some(_) => Err(format!("`{key}` must be a table of strings")),
        }
    };
    let command = text("command")?;
    let url = text("url")?;
    let args = list("args")?;
    let env = map("env")?;
    let env_vars = list("env_vars")?;
    let mut headers = map("http_headers")?;
    headers.extend(map("headers")?);
    let env_headers = map("env_http_headers")?;
    let bearer_env = text("bearer_token_env_var")?;

    let mut notes = Vec::new();
    let mut config = McpServerConfig::default();
    match (command, url) {
        (Some(_), Some(_)) => return Err("has both `command` and `url`; Codex takes one".into()),
        (None, None) => return Err("has neither `command` nor `url`".into()),
        (Some(command), None) => {
            note_unexpanded("the command line", &[&command], &mut notes);
            config.command = Some(command);
            config.args = args;
            for (k, v) in &env {
                carry_env(k, v, &mut config, &mut notes);
            }
            for v in env_vars {
                if !config.env_vars.contains(&v) {
                    config.env_vars.push(v);
                }
            }
            let http_keys: Vec<&str> = [
                ("http_headers", !headers.is_empty()),
                ("bearer_token_env_var", bearer_env.is_some()),
                ("env_http_headers", !env_headers.is_empty()),
            ]
            .iter()
            .filter(|k| k.1)
            .map(|k| k.0)
            .collect();
            if !http_keys.is_empty() {
                notes.push(format!(
                    "dropped {} (for an HTTP server)",
                    http_keys.join(", ")
                ));
            }
        }
        (None, Some(url)) => {
            note_unexpanded("the URL", &[&url], &mut notes);
            config.url = Some(url);
            config.bearer_token_env_var = bearer_env;
            for (k, v) in &headers {
                carry_header(k, v, &mut config, &mut notes);
            }
            if !env_headers.is_empty() {
                let shown: Vec<String> = env_headers
                    .iter()
                    .map(|(h, var)| format!("{h} from {var}"))
                    .collect();
                notes.push(format!(
                    "dropped env_http_headers ({}): Bosun sends literal headers and a bearer token from bearer_token_env_var only",
                    shown.join(", ")
                ));
            }
            if !args.is_empty() || !env.is_empty() || !env_vars.is_empty() {
                notes.push("dropped args, env and env_vars (for a stdio server)".into());
            }
        }
    }
    if entry.contains_key("bearer_token") {
        notes.push("the literal bearer_token was not copied: put it in an environment variable and set bearer_token_env_var = \"NAME\"".into());
    }
    if let Some(cwd) = text("cwd")? {
        notes.push(format!(
            "dropped cwd = {cwd:?}: Bosun starts a stdio server in the task's worktree"
        ));
    }
    for key in ["enabled_tools", "disabled_tools"] {
        let tools = list(key)?;
        if entry.contains_key(key) {
            notes.push(format!(
                "dropped {key} = [{}]: Bosun offers every tool of a server and its policy decides each call (rules on mcp__<server>__<tool>)",
                tools.join(", ")
            ));
        }
    }
    match entry.get("enabled") {
        None => {}
        Some(Value::Boolean(b)) => config.enabled = Some(*b),
        Some(_) => return Err("`enabled` must be true or false".into()),
    }
    config.startup_timeout_sec = match (
        entry.get("startup_timeout_sec"),
        entry.get("startup_timeout_ms"),
    ) {
        (Some(s), _) => Some(seconds(s, 1.0, "startup_timeout_sec")?),
        (None, Some(ms)) => Some(seconds(ms, 1000.0, "startup_timeout_ms")?),
        (None, None) => None,
    };
    config.tool_timeout_sec = entry
        .get("tool_timeout_sec")
        .map(|v| seconds(v, 1.0, "tool_timeout_sec"))
        .transpose()?;
    let unknown: Vec<&str> = entry
        .keys()
        .map(String::as_str)
        .filter(|k| !KNOWN.contains(k))
        .collect();
    if !unknown.is_empty() {
        notes.push(format!(
            "dropped (Bosun has no equivalent): {}",
            unknown.join(", ")
        ));
    }
    Ok((config, notes))
}

/// Whole seconds (rounded up) from a number of `per_second` units.
fn seconds(value: &Value, per_second: f64, key: &str) -> Result<u64, String> {
    let n = match value {
        Value::Integer(i) => *i as f64,
        Value::Float(f) => *f,
        _ => return Err(format!("`{key}` must be a number")),
    };
    if !n.is_finite() || n < 0.0 {
        return Err(format!("`{key}` must be a positive number"));
    }
    Ok((n / per_second).ceil().max(1.0) as u64)
}
