//! `bosun`: run agent tasks headless and inspect what they did.

mod commands;
mod render;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "bosun",
    version,
    about = "Run AI coding agents in isolated git worktrees, with checkpoints and a journal"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a task: the agent works in its own worktree until it answers without tool calls
    Run(commands::run::RunArgs),
    /// Send a follow-up to a finished or stopped task: it continues in the same worktree with the
    /// conversation so far
    Continue {
        #[command(flatten)]
        args: commands::run::ContinueArgs,
        /// The follow-up message
        #[arg(long)]
        prompt: String,
    },
    /// Resume a task interrupted by a crash or a quit, from its last checkpoint
    Resume(commands::run::ContinueArgs),
    /// List the tasks in the journal
    Tasks {
        #[arg(long)]
        json: bool,
    },
    /// Show a task's transcript and events
    Show {
        /// Task id or a unique prefix of it
        task: String,
        #[arg(long)]
        json: bool,
    },
    /// List a task's checkpoints
    Checkpoints {
        task: String,
        #[arg(long)]
        json: bool,
    },
    /// Show what a task changed (default: base to latest checkpoint)
    Diff {
        task: String,
        /// Checkpoint number to diff from (0 = the base)
        #[arg(long)]
        from: Option<u32>,
        /// Checkpoint number to diff to (0 = the base)
        #[arg(long)]
        to: Option<u32>,
        #[arg(long)]
        stat: bool,
    },
    /// Put a task's worktree back to checkpoint N (prints the files it changes)
    Restore { task: String, checkpoint: u32 },
    /// Disk used by Bosun's worktrees
    Worktrees {
        #[arg(long)]
        json: bool,
    },
    /// Policy tools
    #[command(subcommand)]
    Policy(commands::policy::PolicyCommand),
    /// Benchmarks that print figures next to a git baseline
    #[command(subcommand)]
    Bench(commands::bench::BenchCommand),
}

/// `$BOSUN_HOME`, or the XDG data dir.
pub fn home() -> PathBuf {
    bosun_store::bosun_home()
}

fn main() -> ExitCode {
    // Commands run inside the sandbox are started as `bosun __sandbox …`: this turns the process
    // into that trampoline before anything else (no threads may exist yet).
    bosun_exec::dispatch_sandbox();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => commands::run::run(args),
        Command::Continue { args, prompt } => commands::run::continue_or_resume(args, Some(prompt)),
        Command::Resume(args) => commands::run::continue_or_resume(args, None),
        Command::Tasks { json } => commands::inspect::tasks(json),
        Command::Show { task, json } => commands::inspect::show(&task, json),
        Command::Checkpoints { task, json } => commands::inspect::checkpoints(&task, json),
        Command::Diff {
            task,
            from,
            to,
            stat,
        } => commands::diff::diff(&task, from, to, stat),
        Command::Restore { task, checkpoint } => commands::diff::restore(&task, checkpoint),
        Command::Worktrees { json } => commands::diff::worktrees(json),
        Command::Bench(b) => commands::bench::bench(b),
        Command::Policy(p) => commands::policy::policy(p),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("bosun: {e:#}");
            ExitCode::from(2)
        }
    }
}
