//! `bosun`: run agent tasks headless and inspect what they did.

mod commands;
mod exit;
mod render;
mod telemetry;

use bosun_core::review::Verdict;
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
        /// Only tasks with this status (repeat or comma-separate for several): running,
        /// completed, answered, failed, checks_failed, budget_exceeded, max_steps, interrupted
        #[arg(long, value_delimiter = ',')]
        status: Vec<String>,
        /// List the archived tasks instead
        #[arg(long)]
        archived: bool,
    },
    /// Show a task's transcript and events
    Show {
        /// Task id or a unique prefix of it
        task: String,
        #[arg(long)]
        json: bool,
    },
    /// The checks of a repository (what a new task would run) or of a task (its last round;
    /// --run runs them again, --accepted on the tree a merge would write)
    Checks(commands::checks::ChecksArgs),
    /// A new task from a checkpoint of an earlier one (its worktree, the conversation so far)
    Fork(commands::run::ForkArgs),
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
    /// Put a task's worktree back to checkpoint N, 0 = its base (prints the files it changes)
    Restore { task: String, checkpoint: u32 },
    /// A task's changes for review: files, hunks (numbered for accept/reject), verdicts, comments
    Review {
        task: String,
        #[arg(long)]
        json: bool,
        /// Print the hunks' lines too
        #[arg(long)]
        lines: bool,
    },
    /// Accept hunks: none named = every undecided hunk; PATH (the new or the old path of a
    /// rename) = the file's hunks but its rejected ones; PATH:N[,N…] = those hunks (numbers from
    /// `bosun review`; a rejected one is put back); --all = every file, as PATH
    Accept {
        task: String,
        /// PATH or PATH:N[,N…] (no directories, no globs)
        target: Option<String>,
        /// Every file, each as if named by its path
        #[arg(long)]
        all: bool,
    },
    /// Reject hunks: they are taken out of the task's worktree (a checkpoint records it); none
    /// named = every undecided hunk
    Reject {
        task: String,
        /// PATH or PATH:N[,N…] (no directories, no globs)
        target: Option<String>,
        /// Every hunk of every file, accepted ones too
        #[arg(long)]
        all: bool,
    },
    /// Take a verdict back: accepted hunks become unreviewed, rejected ones are put back
    Unmark {
        task: String,
        /// PATH or PATH:N[,N…] (no directories, no globs)
        target: Option<String>,
        /// Every decided hunk of every file
        #[arg(long)]
        all: bool,
    },
    /// Take back the last verdict or unsent comment
    Undo { task: String },
    /// Comment on a line or range of the task's latest version: PATH:LINE or PATH:LINE-LINE
    Comment {
        task: String,
        at: String,
        text: String,
    },
    /// Send the open comments to the agent as one message; the task continues in its worktree
    RequestChanges(commands::run::ContinueArgs),
    /// Merge the accepted hunks into a branch (default: the one the task started from)
    Merge {
        task: String,
        /// Target branch; created from the task's base when it does not exist
        #[arg(long)]
        into: Option<String>,
        /// One squashed commit (the default)
        #[arg(long, conflicts_with = "per_step")]
        squash: bool,
        /// One commit per step that made accepted hunks
        #[arg(long)]
        per_step: bool,
        /// The squashed commit's message (default: from the prompt and the task's summary)
        #[arg(long)]
        message: Option<String>,
        /// Merge although a required check fails on the accepted changes; the reason is kept
        /// in the journal
        #[arg(long, value_name = "REASON")]
        override_checks: Option<String>,
    },
    /// Move the task's changes onto the tip of a branch (default: the one it started from)
    Rebase {
        task: String,
        #[arg(long)]
        onto: Option<String>,
    },
    /// Export a task in exactly one format (--patch: the accepted changes for `git apply`;
    /// --markdown: a readable transcript with diffs; --json: its events), or the whole journal
    /// with --all --jsonl
    Export(commands::export::ExportArgs),
    /// Read other agents' sessions into the journal, read-only: Claude Code's
    /// (`$CLAUDE_CONFIG_DIR` or ~/.claude) and Codex's (`$CODEX_HOME` or ~/.codex); a re-scan
    /// reads only what is new. They show in `bosun history` and `bosun costs` with their source
    Import(commands::import::ImportArgs),
    /// Read a `bosun export --all --jsonl` file into this journal (tasks already here are kept)
    ImportJournal { file: PathBuf },
    /// Hide a task from `bosun tasks` (everything is kept); --undo shows it again
    Archive {
        task: String,
        #[arg(long)]
        undo: bool,
    },
    /// Delete a task's transcript, checkpoints and worktree; its cost rows stay
    Delete { task: String },
    /// Remove a task's worktree and branch (its history stays unless --delete-history)
    Discard {
        task: String,
        /// Also delete its checkpoints and its journal
        #[arg(long)]
        delete_history: bool,
    },
    /// Disk used by Bosun's worktrees
    Worktrees {
        #[arg(long)]
        json: bool,
    },
    /// Search every task's events and filter the tasks: `bosun history cargo test status:failed since:7d`
    History(commands::history::HistoryArgs),
    /// What the model responses cost: `bosun costs --by day|week|month|repo|model|task`
    Costs(commands::costs::CostsArgs),
    /// Success, first-pass and intervention rates, cost per task and failure causes of finished tasks
    Stats(commands::costs::StatsArgs),
    /// Policy tools
    #[command(subcommand)]
    Policy(commands::policy::PolicyCommand),
    /// Execution quality on a suite of small tasks: each through Bosun (and `--peer aider`)
    /// against the same model, judged by a hidden check; prints passes, time, requests, tokens,
    /// tool calls native/recovered and nudges per task and in total
    Eval(commands::eval::EvalArgs),
    /// Benchmarks that print figures next to a git baseline
    #[command(subcommand)]
    Bench(commands::bench::BenchCommand),
    /// The price table (or one model's entry); `update FILE` imports LiteLLM's price JSON;
    /// `set MODEL` adds a price to $BOSUN_HOME/prices.toml
    Prices(commands::prices::PricesArgs),
    /// How Bosun talks to each configured model (native or text tool calls, edit format,
    /// context window); `probe` asks the server and the model
    Models(commands::models::ModelsArgs),
    /// What Bosun remembers about a repository across tasks (the checks that passed, what
    /// failed, files changed together, your conventions): list, `pin ID`, `unpin ID`,
    /// `delete ID`, `add TEXT`
    Memory(commands::memory::MemoryArgs),
    /// Run many tasks through a persistent queue: `bosun batch FILE` (TOML [[task]] tables or
    /// JSON lines), `bosun batch --prompt TEXT --repo A --repo B`; `resume [ID]`, `status [ID]`
    Batch(commands::batch::BatchArgs),
    /// One task under 2 to 4 setups side by side: `bosun compare --repo R --prompt TEXT
    /// --setup A --setup B [--runs N]`; `status [ID]`, `merge [ID] RUN`
    Compare(commands::compare::CompareArgs),
    /// The repository map: each source file's definitions, ranked by a PageRank of what uses
    /// what (towards `--focus` files and symbols), within a token budget
    Map(commands::map::MapArgs),
    /// MCP servers: `list` shows each configured one with its tools; `import --from
    /// claude|codex|FILE` brings in those another agent is configured with, as
    /// `[mcp_servers.NAME]` tables of $BOSUN_HOME/config.toml
    #[command(subcommand)]
    Mcp(commands::mcp::McpCommand),
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
        Command::Tasks {
            json,
            status,
            archived,
        } => commands::inspect::tasks(json, &status, archived),
        Command::Show { task, json } => commands::inspect::show(&task, json),
        Command::Checkpoints { task, json } => commands::inspect::checkpoints(&task, json),
        Command::Checks(args) => commands::checks::checks(args),
        Command::Fork(args) => commands::run::fork(args),
        Command::Diff {
            task,
            from,
            to,
            stat,
        } => commands::diff::diff(&task, from, to, stat),
        Command::Restore { task, checkpoint } => commands::diff::restore(&task, checkpoint),
        Command::Review { task, json, lines } => commands::review::review(&task, json, lines),
        Command::Accept { task, target, all } => {
            commands::review::verdict(Verdict::Accept, &task, target.as_deref(), all)
        }
        Command::Reject { task, target, all } => {
            commands::review::verdict(Verdict::Reject, &task, target.as_deref(), all)
        }
        Command::Unmark { task, target, all } => {
            commands::review::verdict(Verdict::Unmark, &task, target.as_deref(), all)
        }
        Command::Undo { task } => commands::review::undo(&task),
        Command::Comment { task, at, text } => commands::review::comment(&task, &at, &text),
        Command::RequestChanges(args) => commands::run::request_changes(args),
        Command::Merge {
            task,
            into,
            squash: _,
            per_step,
            message,
            override_checks,
        } => commands::review::merge(&task, into, per_step, message, override_checks),
        Command::Rebase { task, onto } => commands::review::rebase(&task, onto.as_deref()),
        Command::Export(args) => commands::export::export(&args),
        Command::Import(args) => commands::import::import(args),
        Command::ImportJournal { file } => commands::export::import_journal(&file),
        Command::Archive { task, undo } => commands::export::archive(&task, undo),
        Command::Delete { task } => commands::export::delete(&task),
        Command::Discard {
            task,
            delete_history,
        } => commands::review::discard(&task, delete_history),
        Command::Worktrees { json } => commands::diff::worktrees(json),
        Command::History(args) => commands::history::history(args),
        Command::Bench(b) => commands::bench::bench(b),
        Command::Eval(args) => commands::eval::eval(args),
        Command::Costs(args) => commands::costs::costs(args),
        Command::Stats(args) => commands::costs::stats(args),
        Command::Policy(p) => commands::policy::policy(p),
        Command::Prices(p) => commands::prices::prices(p),
        Command::Models(m) => commands::models::models(m),
        Command::Map(args) => commands::map::map(args),
        Command::Mcp(cmd) => commands::mcp::mcp(cmd),
        Command::Memory(args) => commands::memory::memory(args),
        Command::Batch(args) => commands::batch::batch(args),
        Command::Compare(args) => commands::compare::compare(args),
    };
    match result {
        Ok(code) => code,
        // `bosun costs --json | head -1`: the reader had what it wanted and closed the pipe.
        // Like `git log | head`, that is the end of the output, not an error to print (into
        // what may be the same closed pipe).
        Err(e) if exit::is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bosun: {e:#}");
            ExitCode::from(exit::for_error(&e))
        }
    }
}
