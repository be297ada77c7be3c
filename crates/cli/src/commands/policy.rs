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
    /// Print the decision (allow / ask / deny) for a command or a write, and the rule that made it
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
    /// Print one JSON object {decision, rule, source, mode}
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
    let action = match (&args.write, args.command.is_empty()) {
        (Some(path), _) => ToolAction::Write {
            paths: vec![path.clone()],
        },
        (None, false) => ToolAction::Command {
            command: join_argv(&args.command),
        },
        (None, true) => bail!("give a command after `--`, or --write PATH"),
    };
    let d = policy.decide(&action);
    let decision = match d.decision {
        bosun_policy::Decision::Allow => "allow",
        bosun_policy::Decision::Ask => "ask",
        bosun_policy::Decision::Deny => "deny",
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        let v = serde_json::json!({
            "decision": decision,
            "rule": d.rule,
            "source": d.source,
            "mode": d.mode.as_str(),
            "reason": d.reason,
        });
        serde_json::to_writer(&mut out, &v)?;
        writeln!(out)?;
    } else {
        writeln!(out, "{decision}: {}", d.reason)?;
        writeln!(out, "  rule:   {}", d.rule)?;
        writeln!(out, "  source: {}", d.source)?;
        writeln!(out, "  mode:   {}", d.mode.as_str())?;
    }
    Ok(ExitCode::SUCCESS)
}
