//! A task's MCP servers (see `bosun_mcp`): which are declared for its repository, the one-time
//! approval of those a repository's own `.bosun/config.toml` declares, and how they are
//! confined.
//!
//! ```toml
//! # $BOSUN_HOME/config.toml
//! [mcp_servers.everything]            # every repository's tasks
//! command = "node"
//! args = ["/opt/mcp/everything/dist/index.js"]
//! [repos."/home/me/src/api".mcp_servers.docs]   # this repository's tasks
//! url = "https://docs.example.com/mcp"
//! ```
//! Your own tables win over a project's table of the same name. A project's server starts only
//! after you approved its exact command and arguments (or URL) once — the answer is kept in
//! `$BOSUN_HOME/mcp-approved.json` for that repository, and a changed command asks again.

use crate::CoreError;
use crate::config::BosunConfig;
use bosun_mcp::{Confinement, Declared, McpServerConfig};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub const USER_ORIGIN: &str = "config.toml";
pub const PROJECT_ORIGIN: &str = ".bosun/config.toml";

/// A server and whether a repository declared it (and so waits for approval).
#[derive(Debug, Clone)]
pub struct Configured {
    pub declared: Declared,
    pub from_project: bool,
}

/// The servers of `repo_root`'s tasks: your global tables, your `[repos."<path>"]` tables over
/// them, then the project's tables whose names you did not use. Every table is validated.
pub fn configured(home: &Path, repo_root: Option<&Path>) -> Result<Vec<Configured>, CoreError> {
    let config = BosunConfig::load(home)?;
    let mut out: Vec<Configured> = Vec::new();
    let mut put = |name: &str, c: &McpServerConfig, origin: String, from_project: bool| {
        c.validate(name, &origin).map_err(CoreError::Config)?;
        let item = Configured {
            declared: Declared {
                name: name.to_string(),
                config: c.clone(),
                origin,
            },
            from_project,
        };
        match out.iter_mut().find(|x| x.declared.name == name) {
            // Yours replace yours; a project never replaces one of yours.
            Some(slot) if !from_project => *slot = item,
            Some(_) => {}
            None => out.push(item),
        }
        Ok::<(), CoreError>(())
    };
    for (name, c) in &config.mcp_servers {
        put(name, c, USER_ORIGIN.to_string(), false)?;
    }
    if let Some(root) = repo_root {
        if let Some(section) = crate::repo_settings::repo_section(&config, root) {
            for (name, c) in &section.mcp_servers {
                put(
                    name,
                    c,
                    format!("{USER_ORIGIN} [repos.\"{}\"]", root.display()),
                    false,
                )?;
            }
        }
        let project = crate::repo_settings::project_settings(root)?;
        for (name, c) in &project.mcp_servers {
            put(
                name,
                c,
                format!("{}/{PROJECT_ORIGIN}", root.display()),
                true,
            )?;
        }
    }
    Ok(out)
}

/// The variables passed to the repository's servers by name (`env_vars`,
/// `bearer_token_env_var`): their values are redacted like secrets whatever their names.
pub fn passed_names(home: &Path, repo_root: &Path) -> Vec<String> {
    configured(home, Some(repo_root))
        .unwrap_or_default()
        .into_iter()
        .flat_map(|c| {
            let mut names = c.declared.config.env_vars.clone();
            names.extend(c.declared.config.bearer_token_env_var.clone());
            names
        })
        .collect()
}

/// What the user approved of the servers repositories declare.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Approved {
    #[serde(default)]
    servers: Vec<ApprovedServer>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct ApprovedServer {
    repo: String,
    server: String,
    /// [`McpServerConfig::fingerprint`]: the exact command, arguments, environment (or URL).
    fingerprint: String,
    approved_at: String,
}

fn approved_path(home: &Path) -> PathBuf {
    home.join("mcp-approved.json")
}

fn load_approved(home: &Path) -> Approved {
    std::fs::read_to_string(approved_path(home))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

/// Whether the user approved this project-declared server, exactly as it is now.
pub fn is_approved(home: &Path, repo_root: &Path, d: &Declared) -> bool {
    let repo = repo_root.display().to_string();
    let fingerprint = d.config.fingerprint();
    load_approved(home)
        .servers
        .iter()
        .any(|a| a.repo == repo && a.server == d.name && a.fingerprint == fingerprint)
}

/// Keeps the user's approval of a project-declared server (replacing an earlier one of the
/// same name and repository).
pub fn approve(home: &Path, repo_root: &Path, d: &Declared) -> Result<(), CoreError> {
    let repo = repo_root.display().to_string();
    let mut all = load_approved(home);
    all.servers
        .retain(|a| !(a.repo == repo && a.server == d.name));
    all.servers.push(ApprovedServer {
        repo,
        server: d.name.clone(),
        fingerprint: d.config.fingerprint(),
        approved_at: bosun_store::now_rfc3339(),
    });
    let text = serde_json::to_string_pretty(&all)
        .map_err(|e| CoreError::Internal(format!("cannot write MCP approvals: {e}")))?;
    let path = approved_path(home);
    let tmp = path.with_extension(format!("json.{}.tmp", std::process::id()));
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, &path))
        .map_err(|e| CoreError::Config(format!("cannot write {}: {e}", path.display())))
}

/// What the approval card shows for starting a server: its command line, or its URL.
pub fn shown_command(c: &McpServerConfig) -> String {
    match (&c.url, c.command_line()) {
        // What the server will be sent is part of what is approved: the headers and the
        // variable whose value goes out as the bearer token.
        (Some(url), _) => {
            let sent: Vec<String> = c
                .headers
                .iter()
                .map(|(k, v)| format!("{k}: {v}"))
                .chain(
                    c.bearer_token_env_var
                        .iter()
                        .map(|var| format!("Authorization: Bearer ${var}")),
                )
                .collect();
            if sent.is_empty() {
                url.clone()
            } else {
                format!("{url} (sent with: {})", sent.join("; "))
            }
        }
        (None, line) => {
            let env: Vec<String> = c
                .env
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .chain(c.env_vars.iter().map(|k| format!("{k}=${k}")))
                .collect();
            if env.is_empty() {
                line
            } else {
                format!("{} {line}", env.join(" "))
            }
        }
    }
}

/// Every server configured for `repo` (or, without one, your global ones): started in a
/// scratch directory (sandboxed like a task's, with the sandbox rules of your policy), its
/// tools listed, stopped again. A repository's server you have not approved is not started
/// (`awaiting_approval`); a disabled one neither (`disabled`).
pub async fn list(
    home: &Path,
    repo_root: Option<&Path>,
) -> Result<Vec<bosun_mcp::ServerReport>, CoreError> {
    list_only(home, repo_root, None).await
}

/// One server as [`list`] reports it (only that one is started): what Settings shows after
/// turning it on or off. An unknown name is a `Config` error naming the configured ones.
pub async fn report(
    home: &Path,
    repo_root: Option<&Path>,
    name: &str,
) -> Result<bosun_mcp::ServerReport, CoreError> {
    let mut reports = list_only(home, repo_root, Some(name)).await?;
    match reports.pop() {
        Some(r) => Ok(r),
        None => {
            let known: Vec<String> = configured(home, repo_root)?
                .into_iter()
                .map(|c| c.declared.name)
                .collect();
            Err(CoreError::Config(format!(
                "no MCP server is named `{name}`; configured: {}",
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            )))
        }
    }
}

async fn list_only(
    home: &Path,
    repo_root: Option<&Path>,
    only: Option<&str>,
) -> Result<Vec<bosun_mcp::ServerReport>, CoreError> {
    let mut all = configured(home, repo_root)?;
    if let Some(name) = only {
        all.retain(|c| c.declared.name == name);
    }
    let names: Vec<String> = all.iter().map(|c| c.declared.name.clone()).collect();
    // One directory per listing: the app may list while it reports one server.
    let id = format!(
        "mcp-list-{}-{}",
        std::process::id(),
        ulid::Ulid::new().to_string().to_lowercase()
    );
    let scratch = home.join("tmp").join(&id);
    let worktree = scratch.join("work");
    std::fs::create_dir_all(&worktree)
        .map_err(|e| CoreError::Config(format!("cannot create {}: {e}", worktree.display())))?;
    let rules =
        crate::policy_files::PolicyFiles::new(home, repo_root.unwrap_or(&worktree), None, None)
            .load()
            .map(|p| p.sandbox())
            .unwrap_or_default();
    let sandboxing = crate::sandboxing::Sandboxing::for_task(home, &id, &worktree, true, None);
    let (io_dir, private) = crate::sandboxing::mcp_dirs(home);
    let launch = bosun_mcp::Launch {
        worktree: worktree.clone(),
        scratch: private.join(&id),
        io_dir,
        cache_dir: crate::sandboxing::mcp_cache(home),
        confinement: confinement(&sandboxing, &rules),
        network: None,
    };
    let mut reports = Vec::new();
    let mut start = Vec::new();
    for c in all {
        let waiting = c.from_project
            && c.declared.config.is_enabled()
            && repo_root.is_some_and(|r| !is_approved(home, r, &c.declared));
        if waiting {
            reports.push(bosun_mcp::ServerReport {
                name: c.declared.name.clone(),
                transport: c.declared.config.transport(),
                target: shown_command(&c.declared.config),
                origin: c.declared.origin.clone(),
                state: bosun_mcp::ServerState::AwaitingApproval,
                error: None,
                tools: Vec::new(),
            });
        } else {
            start.push(c.declared);
        }
    }
    let mut probed = bosun_mcp::probe(start, &launch).await;
    let _ = std::fs::remove_dir_all(&scratch);
    reports.append(&mut probed);
    // In the order they are configured.
    let order = |n: &str| names.iter().position(|x| x == n).unwrap_or(usize::MAX);
    reports.sort_by_key(|r| order(&r.name));
    Ok(reports)
}

/// The network of a task's sandboxed servers: what the policy grants their command lines,
/// through an egress proxy each, every connection journaled (`network_connection` with the
/// call id `mcp:<server>`).
pub(crate) fn network(
    sandboxing: &crate::sandboxing::Sandboxing,
    policy: &bosun_policy::Policy,
    emitter: &std::sync::Arc<crate::Emitter>,
) -> Option<bosun_mcp::Network> {
    use bosun_exec::Verdict;
    use bosun_policy::Decision;
    let run_dir = sandboxing.run_dir()?.to_path_buf();
    let grants = {
        let policy = policy.clone();
        std::sync::Arc::new(move |line: &str| policy.network_grant(line).is_some())
    };
    let decide = {
        let policy = policy.clone();
        std::sync::Arc::new(move |line: &str, host: &str| {
            let decided = policy.check_host(line, host);
            let d = decided.decision;
            match d.decision {
                Decision::Allow => Verdict::allowed(d.rule, decided.named),
                Decision::Deny => Verdict::denied(Some(d.rule), d.reason),
                Decision::Ask => Verdict::denied(
                    Some(d.rule),
                    format!(
                        "no rule allows `{host}` for this MCP server, and a server runs between tool calls with no one to ask; add it to [network] domains"
                    ),
                ),
            }
        })
    };
    let report = {
        let emitter = std::sync::Arc::clone(emitter);
        std::sync::Arc::new(move |server: &str, r: bosun_exec::ConnectionReport| {
            emitter.emit_quietly(bosun_protocol::EventMsg::NetworkConnection(
                bosun_protocol::NetworkConnection {
                    call_id: bosun_protocol::CallId(format!("mcp:{server}")),
                    host: r.host,
                    port: r.port,
                    decision: r.decision,
                    rule: r.rule,
                    reason: r.reason,
                    bytes_up: r.bytes_up,
                    bytes_down: r.bytes_down,
                },
            ));
        })
    };
    Some(bosun_mcp::Network {
        run_dir,
        grants,
        decide,
        report,
    })
}

/// How stdio servers are confined, from the task's sandbox.
pub(crate) fn confinement(
    sandboxing: &crate::sandboxing::Sandboxing,
    rules: &bosun_policy::SandboxRules,
) -> Confinement {
    use crate::sandboxing::Sandboxing;
    match sandboxing {
        Sandboxing::On { .. } => match sandboxing.policy(None, rules) {
            Ok(Some((policy, exe))) => Confinement::Sandbox { policy, exe },
            Ok(None) => Confinement::Unavailable("no sandbox policy".into()),
            Err(e) => Confinement::Unavailable(e),
        },
        Sandboxing::Off { reason } => Confinement::Unavailable(reason.clone()),
        Sandboxing::Disabled => Confinement::Unconfined,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn yours_win_over_a_projects_and_a_projects_new_server_waits_for_approval() {
        let home = tempfile::tempdir().unwrap();
        let repo = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(repo.path()).unwrap();
        std::fs::write(
            home.path().join("config.toml"),
            format!(
                "[mcp_servers.fs]\ncommand = \"node\"\nargs = [\"mine.js\"]\n\n[repos.\"{}\".mcp_servers.docs]\nurl = \"http://127.0.0.1:1/mcp\"\n",
                root.display()
            ),
        )
        .unwrap();
        std::fs::create_dir_all(root.join(".bosun")).unwrap();
        std::fs::write(
            root.join(".bosun/config.toml"),
            "[mcp_servers.fs]\ncommand = \"evil\"\n\n[mcp_servers.lint]\ncommand = \"node\"\nargs = [\"lint.js\"]\n",
        )
        .unwrap();
        let all = configured(home.path(), Some(&root)).unwrap();
        let names: Vec<(&str, bool)> = all
            .iter()
            .map(|c| (c.declared.name.as_str(), c.from_project))
            .collect();
        assert_eq!(names, vec![("fs", false), ("docs", false), ("lint", true)]);
        assert_eq!(all[0].declared.config.args, vec!["mine.js".to_string()]);
        let lint = &all[2].declared;
        assert!(!is_approved(home.path(), &root, lint));
        approve(home.path(), &root, lint).unwrap();
        assert!(is_approved(home.path(), &root, lint));
        // A changed command asks again.
        let mut changed = lint.clone();
        changed.config.args.push("--more".into());
        assert!(!is_approved(home.path(), &root, &changed));
        // A bad table names itself.
        std::fs::write(
            root.join(".bosun/config.toml"),
            "[mcp_servers.bad]\nurl = \"ftp://x\"\n",
        )
        .unwrap();
        let e = configured(home.path(), Some(&root))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("[mcp_servers.bad]") && e.contains(".bosun/config.toml"),
            "{e}"
        );
    }
}
