//! `bosun mcp list [--repo PATH] [--json]`: every MCP server configured for a repository (the
//! current one by default) — started in a scratch directory, its tools listed, stopped again.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

pub fn list(repo: Option<PathBuf>, json: bool) -> anyhow::Result<ExitCode> {
    let home = bosun_store::bosun_home();
    let root = match repo {
        Some(path) => Some(bosun_workspace::resolve_repo(&path)?),
        // Outside a repository: your global servers only.
        None => std::env::current_dir()
            .ok()
            .and_then(|d| bosun_workspace::resolve_repo(&d).ok()),
    };
    let runtime = tokio::runtime::Runtime::new()?;
    let reports = runtime.block_on(bosun_core::mcp::list(&home, root.as_deref()))?;
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer_pretty(&mut out, &reports)?;
        writeln!(out)?;
    } else if reports.is_empty() {
        writeln!(
            out,
            "No MCP servers are configured{}. Add [mcp_servers.NAME] to {} (command and args, or url), or bring yours in with `bosun mcp import --from claude` or `--from codex`.",
            root.as_ref()
                .map(|r| format!(" for {}", r.display()))
                .unwrap_or_default(),
            home.join("config.toml").display()
        )?;
    } else {
        for r in &reports {
            let state = serde_json::to_value(r.state)?
                .as_str()
                .unwrap_or_default()
                .replace('_', " ");
            let transport = match r.transport {
                bosun_mcp::Transport::Stdio => "stdio",
                bosun_mcp::Transport::Http => "http",
            };
            writeln!(
                out,
                "{}  {transport}  {state}  {}  ({})",
                r.name, r.target, r.origin
            )?;
            if let Some(e) = &r.error {
                writeln!(out, "  error: {e}")?;
            }
            if r.state == bosun_mcp::ServerState::AwaitingApproval {
                writeln!(
                    out,
                    "  a repository declares it: it starts once you approve its exact command (the first task asks)"
                )?;
            }
            for t in &r.tools {
                let first = t.description.lines().next().unwrap_or_default();
                let short: String = first.chars().take(90).collect();
                writeln!(out, "  {}  {short}", t.model_name)?;
            }
        }
    }
    // A server that could not start is what this command is for finding: exit 1.
    let failed = reports
        .iter()
        .any(|r| r.state == bosun_mcp::ServerState::Failed);
    Ok(if failed {
        ExitCode::from(crate::exit::FAILED)
    } else {
        ExitCode::SUCCESS
    })
}
