//! Claude Code's servers: `~/.claude.json` (`$CLAUDE_CONFIG_DIR/.claude.json` when set) holds
//! the user's (`mcpServers`) and each project's (`projects["<path>"].mcpServers`); a project's
//! `.mcp.json` at its root holds the shared ones. Where a name is in several, Claude Code's
//! order decides: the project's private entry, then `.mcp.json`, then the user's.
//!
//! An entry: `{"type": "stdio"|"http"|"sse", "command", "args", "env", "url", "headers"}`.

use super::values::{carry_env, carry_header, note_unexpanded, parse_json};
use super::{Found, ImportError, Places, read};
use crate::config::McpServerConfig;
use serde_json::Value;
use std::path::{Path, PathBuf};

pub(super) fn find(places: &Places) -> Result<Found, ImportError> {
    let mut found = Found::default();
    let root = git_root(&places.cwd).unwrap_or_else(|| places.cwd.clone());
    let config = places
        .claude_config_dir
        .clone()
        .or_else(|| places.home.clone())
        .map(|dir| dir.join(".claude.json"));
    let mut user = Found::default();
    // The project's `.mcp.json` servers the user turned off in Claude Code.
    let mut disabled: Vec<String> = Vec::new();
    // And those it approved (`enabledMcpjsonServers`, or all of them).
    let mut approved: Vec<String> = Vec::new();
    let mut approve_all = false;
    if let Some(path) = &config {
        let key = project_key(&places.cwd, &root);
        found.looked.push(format!(
            "{} (mcpServers, projects[{key:?}].mcpServers)",
            path.display()
        ));
        if let Some(text) = read(path)? {
            let json = parse_json(&text, path)?;
            if let Some((at, project)) = project_entry(&json, &places.cwd, &root) {
                let key = format!("projects[{at:?}].mcpServers");
                servers_at(project.get("mcpServers"), &key, path, &mut found)?;
                for s in &mut found.servers {
                    s.notes.push(format!(
                        "Claude Code uses it in {at} only; under [mcp_servers] Bosun offers it in every repository"
                    ));
                }
                approved = project
                    .get("enabledMcpjsonServers")
                    .and_then(Value::as_array)
                    .map(|names| {
                        names
                            .iter()
                            .filter_map(Value::as_str)
                            .map(str::to_string)
                            .collect()
                    })
                    .unwrap_or_default();
                approve_all = project
                    .get("enableAllProjectMcpServers")
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                disabled = project
                    .get("disabledMcpjsonServers")
                    .and_then(Value::as_array)
                    .map(|names| {
                        names
                            .iter()
                            .filter_map(Value::as_str)
                            .map(str::to_string)
                            .collect()
                    })
                    .unwrap_or_default();
            }
            servers_in(&json, "mcpServers", path, &mut user)?;
        }
    }
    let shared = root.join(".mcp.json");
    found
        .looked
        .push(format!("{} (mcpServers)", shared.display()));
    let mut project = Found::default();
    if let Some(text) = read(&shared)? {
        let json = parse_json(&text, &shared)?;
        servers_in(&json, "mcpServers", &shared, &mut project)?;
        for s in &mut project.servers {
            s.notes.push(format!(
                "shared by the project {}; under [mcp_servers] Bosun offers it in every repository (a repository can declare its own in .bosun/config.toml)",
                root.display()
            ));
            if disabled.contains(&s.original_name) {
                s.config.enabled = Some(false);
                s.notes.push(
                    "turned off for this project in Claude Code (disabledMcpjsonServers): imported with enabled = false".into(),
                );
            } else if !approve_all && !approved.contains(&s.original_name) {
                // A repository's file nobody approved must not start in every repository.
                s.config.enabled = Some(false);
                s.notes.push(
                    "never approved for this project in Claude Code (not in enabledMcpjsonServers): imported with enabled = false; read its command before you turn it on".into(),
                );
            }
        }
    }
    for more in [project, user] {
        for server in more.servers {
            match found
                .servers
                .iter_mut()
                .find(|s| s.original_name == server.original_name)
            {
                Some(kept) => kept.notes.push(format!(
                    "also in {}, which Claude Code lets this one override (that one was not imported)",
                    server.origin
                )),
                None => found.servers.push(server),
            }
        }
        found.unreadable.extend(more.unreadable);
    }
    Ok(found)
}

/// The entry of `projects` for the current directory or its repository's root.
fn project_entry<'a>(json: &'a Value, cwd: &Path, root: &Path) -> Option<(String, &'a Value)> {
    let projects = json.get("projects")?.as_object()?;
    let mut keys = vec![cwd.to_path_buf(), root.to_path_buf()];
    keys.extend([cwd, root].iter().filter_map(|p| p.canonicalize().ok()));
    keys.iter().find_map(|k| {
        let k = k.display().to_string();
        projects.get(&k).map(|v| (k, v))
    })
}

fn project_key(cwd: &Path, root: &Path) -> String {
    if cwd == root {
        cwd.display().to_string()
    } else {
        format!("{}\" or \"{}", cwd.display(), root.display())
    }
}

/// The nearest directory at or above `dir` holding `.git` (a directory, or a worktree's file).
fn git_root(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|d| d.join(".git").exists())
        .map(Path::to_path_buf)
}

/// The servers of `json[key]` (absent: none), each entry that cannot be read left out with why.
pub(super) fn servers_in(
    json: &Value,
    key: &str,
    path: &Path,
    found: &mut Found,
) -> Result<(), ImportError> {
    servers_at(json.get(key), key, path, found)
}

fn servers_at(
    servers: Option<&Value>,
    key: &str,
    path: &Path,
    found: &mut Found,
) -> Result<(), ImportError> {
    let Some(servers) = servers.filter(|v| !v.is_null()) else {
        return Ok(());
    };
    let servers = servers.as_object().ok_or_else(|| ImportError::Shape {
        path: path.to_path_buf(),
        message: format!("`{key}` must be an object of servers by name"),
    })?;
    let origin = format!("{}: {key}", path.display());
    for (name, entry) in servers {
        found.add(name, &origin, server(entry));
    }
    Ok(())
}

const KNOWN: &[&str] = &["type", "command", "args", "env", "url", "headers"];

/// One entry as a Bosun server and its notes.
fn server(entry: &Value) -> Result<(McpServerConfig, Vec<String>), String> {
    let entry = entry
        .as_object()
        .ok_or("an entry must be an object with `command` or `url`")?;
    let text = |key: &str| -> Result<Option<String>, String> {
        match entry.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(format!("`{key}` must be a string")),
        }
    };
    let map = |key: &str| -> Result<Vec<(String, String)>, String> {
        match entry.get(key) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Object(o)) => o
                .iter()
                .map(|(k, v)| match v {
                    Value::String(s) => Ok((k.clone(), s.clone())),
                    Value::Number(n) => Ok((k.clone(), n.to_string())),
                    Value::Bool(b) => Ok((k.clone(), b.to_string())),
                    _ => Err(format!("`{key}.{k}` must be a string")),
                })
                .collect(),
            Some(_) => Err(format!("`{key}` must be an object of strings")),
        }
    };
    let kind = text("type")?;
    let command = text("command")?;
    let url = text("url")?;
    let args: Vec<String> = match entry.get("args") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| match v {
                Value::String(s) => Ok(s.clone()),
                Value::Number(n) => Ok(n.to_string()),
                _ => Err("`args` must be a list of strings".to_string()),
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err("`args` must be a list of strings".into()),
    };
    let env = map("env")?;
    let headers = map("headers")?;

    let mut notes = Vec::new();
    let mut config = McpServerConfig::default();
    let stdio = match kind.as_deref() {
        Some("stdio") => true,
        Some("http") | Some("streamable-http") => false,
        Some("sse") => {
            notes.push("an SSE server: Bosun speaks streamable HTTP, which a server that only speaks SSE may not answer".into());
            false
        }
        Some(other) => {
            return Err(format!(
                "`type` {other:?} is not one Bosun knows (stdio, http, sse)"
            ));
        }
        None => command.is_some() || url.is_none(),
    };
    if stdio {
        let command = command.ok_or("a stdio entry needs `command`")?;
        note_unexpanded("the command line", &[&command], &mut notes);
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        note_unexpanded("args", &refs, &mut notes);
        config.command = Some(command);
        config.args = args;
        for (k, v) in &env {
            carry_env(k, v, &mut config, &mut notes);
        }
        dropped(&mut notes, "for an HTTP server", &[("url", url.is_some())]);
        dropped(
            &mut notes,
            "for an HTTP server",
            &[("headers", !headers.is_empty())],
        );
    } else {
        let url = url.ok_or("an http or sse entry needs `url`")?;
        note_unexpanded("the URL", &[&url], &mut notes);
        config.url = Some(url);
        for (k, v) in &headers {
            carry_header(k, v, &mut config, &mut notes);
        }
        dropped(
            &mut notes,
            "for a stdio server",
            &[
                ("command", command.is_some()),
                ("args", !args.is_empty()),
                ("env", !env.is_empty()),
            ],
        );
    }
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

fn dropped(notes: &mut Vec<String>, why: &str, keys: &[(&str, bool)]) {
    let keys: Vec<&str> = keys.iter().filter(|k| k.1).map(|k| k.0).collect();
    if !keys.is_empty() {
        notes.push(format!("dropped {} ({why})", keys.join(", ")));
    }
}
