//! `bosun policy check`: a test bench for policy rules.

use super::run::parse_mode;
use anyhow::bail;
use bosun_core::PolicyFiles;
use bosun_protocol::ToolAction;
use clap::{Args, Subcommand};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Subcommand)]
pub enum PolicyCommand {
    /// Print the decision (allow / ask / deny) for a command, a write or an MCP tool, and the rule
    /// that made it
    Check(CheckArgs),
}

#[derive(Args)]
pub struct CheckArgs {
    /// The repository whose `.bosun/policy.toml` applies
    #[arg(long, default_value = ".")]
    repo: PathBuf,
    /// A policy file added as the highest layer
    #[arg(long)]
    policy: Option<PathBuf>,
    /// Policy mode to decide under (default: what the policy files say)
    #[arg(long)]
    mode: Option<String>,
    /// Check writing this path (relative to the repository) instead of a command
    #[arg(long, conflicts_with = "command")]
    write: Option<String>,
    /// Also decide the command connecting to this host through Bosun's proxy
    #[arg(long, conflicts_with_all = ["write", "mcp"])]
    host: Option<String>,
    /// Check a call of this MCP tool, written `server/tool` (as `[mcp]` rules name it), instead
    /// of a command
    #[arg(long, value_name = "SERVER/TOOL", conflicts_with_all = ["write", "command"])]
    mcp: Option<String>,
    /// Print one JSON object {decision, rule, source, mode, reason, network, project_scripts}
    #[arg(long)]
    json: bool,
    /// The command, after `--`
    #[arg(last = true)]
    command: Vec<String>,
}

/// Joins argv into one shell command line, quoting words that need it. A single argument is
/// taken as a whole command line (`bosun policy check -- "make && curl x"`).
pub fn join_argv(argv: &[String]) -> String {
    if argv.len() == 1 {
        return argv[0].clone();
    }
    argv.iter()
        .map(|w| {
            let plain = !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%*".contains(c));
            if plain {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

pub fn policy(cmd: PolicyCommand) -> anyhow::Result<ExitCode> {
    let PolicyCommand::Check(args) = cmd;
    let repo_root = bosun_workspace::resolve_repo(&args.repo)?;
    let mode = args.mode.as_deref().map(parse_mode).transpose()?;
    let files = PolicyFiles::new(&crate::home(), &repo_root, args.policy.clone(), mode);
    let policy = files.load()?;
    let action = match (&args.write, &args.mcp, args.command.is_empty()) {
        (Some(path), _, _) => ToolAction::Write {
            paths: vec![path.clone()],
        },
        (None, Some(name), _) => {
            let (server, tool) = mcp_tool(name)?;
            ToolAction::Mcp {
                server,
                tool,
                arguments: serde_json::Value::Object(Default::default()),
            }
        }
        (None, None, false) => ToolAction::Command {
            command: join_argv(&args.command),
        },
        (None, None, true) => {
            bail!("give a command after `--`, or --write PATH, or --mcp SERVER/TOOL")
        }
    };
    let d = policy.decide(&action);
    let decision = d.decision.as_str();
    let command = match &action {
        ToolAction::Command { command } => Some(command.as_str()),
        _ => None,
    };
    let grant = command.and_then(|c| policy.network_grant(c));
    let scripts = command
        .map(bosun_policy::project_scripts)
        .unwrap_or_default();
    let host = match (command, &args.host) {
        (Some(c), Some(h)) => Some(policy.check_host(c, h)),
        _ => None,
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        let mut v = serde_json::json!({
            "decision": decision,
            "rule": d.rule,
            "source": d.source,
            "mode": d.mode.as_str(),
            "reason": d.reason,
        });
        if command.is_some() {
            v["network"] = serde_json::to_value(&grant)?;
            v["project_scripts"] = serde_json::to_value(&scripts)?;
        }
        if let Some(h) = &host {
            v["host"] = serde_json::to_value(h)?;
        }
        serde_json::to_writer(&mut out, &v)?;
        writeln!(out)?;
    } else {
        writeln!(out, "{decision}: {}", d.reason)?;
        writeln!(out, "  rule:   {}", d.rule)?;
        writeln!(out, "  source: {}", d.source)?;
        writeln!(out, "  mode:   {}", d.mode.as_str())?;
        if command.is_some() {
            write_grant(&mut out, grant.as_ref())?;
        }
        for s in &scripts {
            writeln!(
                out,
                "project scripts are not inspected: `{}` runs {}; the policy decides `{}` itself, never what those run, and only a [network] rule that names `{}` grants it the network",
                s.runner, s.runs, s.runner, s.runner
            )?;
        }
        if let Some(h) = host {
            let h = h.decision;
            writeln!(out, "host {}: {}", h.decision.as_str(), h.reason)?;
            writeln!(out, "  rule:   {}", h.rule)?;
            writeln!(out, "  source: {}", h.source)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `server/tool` as `--mcp` takes it: one MCP tool, named as the `[mcp]` rules name it.
fn mcp_tool(name: &str) -> anyhow::Result<(String, String)> {
    let form = "--mcp takes one MCP tool as server/tool, like --mcp github/create_issue";
    if let Some(rest) = name.strip_prefix("mcp__")
        && let Some((server, tool)) = rest.split_once("__")
    {
        bail!("`{name}` is the name the model sees; did you mean --mcp {server}/{tool}? ({form})");
    }
    match name.split_once('/') {
        Some((server, tool))
            if !server.is_empty() && !tool.is_empty() && !tool.contains('/') && tool != "*" =>
        {
            Ok((server.to_string(), tool.to_string()))
        }
        Some((server, "*")) => bail!(
            "`{name}` names every tool of `{server}`; check one tool, like --mcp {server}/TOOL ({form})"
        ),
        None if !name.is_empty() => {
            bail!("`{name}` has no `/`; did you mean --mcp {name}/TOOL? ({form})")
        }
        _ => bail!("`{name}` is not an MCP tool ({form})"),
    }
}

/// The network a command gets, as `bosun policy check` prints it.
fn write_grant(
    out: &mut dyn Write,
    grant: Option<&bosun_policy::NetworkGrant>,
) -> std::io::Result<()> {
    let Some(grant) = grant else {
        return writeln!(
            out,
            "network: none (no [network] allow, [[network.rules]] or [network] domains rule applies)"
        );
    };
    match grant.granted_by.as_slice() {
        [] => writeln!(
            out,
            "network: through Bosun's proxy, to the hosts below only"
        )?,
        rules => {
            let by: Vec<String> = rules
                .iter()
                .map(|g| format!("{} ({})", g.rule, g.source))
                .collect();
            writeln!(
                out,
                "network: through Bosun's proxy, granted by {}",
                by.join(", ")
            )?;
        }
    }
    for d in &grant.domains {
        writeln!(
            out,
            "  {:<5} {:<28} {} ({})",
            d.decision.as_str(),
            d.pattern,
            d.rule,
            d.source
        )?;
    }
    writeln!(out, "  other hosts: {}", grant.other_hosts.as_str())
}
