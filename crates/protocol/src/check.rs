//! Checks: the project's own commands (build, tests, linters) that Bosun runs itself to judge a
//! task — at its end, after edits, and on the tree a merge would write.

use crate::OutputStream;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// When a check runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub enum CheckWhen {
    /// When the model says it is done (and on the tree a merge would write).
    #[default]
    End,
    /// After every edit tool call; `{files}` in the command is replaced by the edited paths.
    Edit,
}

impl CheckWhen {
    pub fn as_str(&self) -> &'static str {
        match self {
            CheckWhen::End => "end",
            CheckWhen::Edit => "edit",
        }
    }
}

/// One check, as `[[checks]]` in a config file has it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct CheckSpec {
    pub name: String,
    /// A bash command, run in the task's worktree (a copy of it), sandboxed, under the policy.
    pub command: String,
    #[serde(default = "default_timeout_secs")]
    #[ts(type = "number")]
    pub timeout_secs: u64,
    /// A required check must pass for a task to be `completed` and for a merge to go ahead.
    #[serde(default = "default_required")]
    pub required: bool,
    #[serde(default)]
    pub when: CheckWhen,
}

pub const DEFAULT_CHECK_TIMEOUT_SECS: u64 = 600;

fn default_timeout_secs() -> u64 {
    DEFAULT_CHECK_TIMEOUT_SECS
}

fn default_required() -> bool {
    true
}

impl CheckSpec {
    /// A check with the defaults: required, at the end, 600 s.
    pub fn new(name: impl Into<String>, command: impl Into<String>) -> CheckSpec {
        CheckSpec {
            name: name.into(),
            command: command.into(),
            timeout_secs: DEFAULT_CHECK_TIMEOUT_SECS,
            required: true,
            when: CheckWhen::End,
        }
    }
}

/// Where a run's checks came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub enum CheckSource {
    /// `[[checks]]` in `.bosun/config.toml` or under `[repos."<path>"]` in `$BOSUN_HOME/config.toml`.
    Configured,
    /// Found from what the repository contains (Cargo.toml, package.json, …).
    Discovered,
    /// `--check CMD` (or the app's edited list) for this run.
    Flag,
    /// `--no-checks`: none for this run.
    None,
}

impl CheckSource {
    pub fn as_str(&self) -> &'static str {
        match self {
            CheckSource::Configured => "configured",
            CheckSource::Discovered => "discovered",
            CheckSource::Flag => "flag",
            CheckSource::None => "none",
        }
    }
}

/// The checks a task will run, said at its start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct ChecksPlanned {
    pub checks: Vec<CheckSpec>,
    pub source: CheckSource,
    /// Failed rounds before the task finishes `checks_failed`.
    pub max_rounds: u32,
}

/// What a run of a check covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub enum CheckScope {
    /// Only the tests related to the files the task changed (a test runner's narrowed command).
    Related,
    /// The check's command as configured, on the task's latest checkpoint.
    Full,
    /// The same command on the task's base commit: which failures were there before the task.
    Base,
    /// The tree a merge would write (the accepted hunks only).
    Accepted,
    /// After an edit (`when = "edit"`), on the edited files.
    Edit,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct CheckStarted {
    pub check_id: String,
    pub name: String,
    /// The command as run (a related run names the tests it narrowed to).
    pub command: String,
    /// 1 for the first time the model said it was done, then one more per failed round; 0 for
    /// checks run outside the loop (a re-run, the merge gate).
    pub round: u32,
    pub scope: CheckScope,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct CheckOutputDelta {
    pub check_id: String,
    pub stream: OutputStream,
    pub chunk: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub enum CheckStatus {
    Passed,
    Failed,
    /// Killed at its timeout, with everything it started.
    TimedOut,
    /// A deny rule or a user-written ask rule matched its command: never run.
    Denied,
    /// The check could not run (its tool is missing, the sandbox failed): a broken check, not
    /// the agent's failure. Neither blocks nor counts as a round.
    Error,
}

impl CheckStatus {
    pub fn as_str(&self) -> &'static str {
        match self {
            CheckStatus::Passed => "passed",
            CheckStatus::Failed => "failed",
            CheckStatus::TimedOut => "timed_out",
            CheckStatus::Denied => "denied",
            CheckStatus::Error => "error",
        }
    }

    /// Failed or timed out: the check ran and the code did not pass it.
    pub fn is_failure(&self) -> bool {
        matches!(self, CheckStatus::Failed | CheckStatus::TimedOut)
    }
}

/// One failure a check reported: a failing test, or a compiler/linter error at file:line.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct CheckFailure {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub line: Option<u32>,
    /// The test's name or the error's text.
    pub message: String,
    /// The same failure happens on the task's base commit: "failing before this task".
    #[serde(default)]
    pub before_task: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct CheckFinished {
    pub check_id: String,
    pub name: String,
    pub status: CheckStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub exit_code: Option<i32>,
    #[ts(type = "number")]
    pub duration_ms: u64,
    /// One line: "2 tests failed: test_add, test_sub", "passed", "denied by the policy: …".
    pub summary: String,
    pub failures: Vec<CheckFailure>,
    /// Whether the check is required (a failing optional check never blocks).
    #[serde(default = "default_required")]
    pub required: bool,
    #[serde(default = "default_scope")]
    pub scope: CheckScope,
    /// Every failure the check reported was there before the task (on the base commit too).
    #[serde(default)]
    pub only_before_task: bool,
}

fn default_scope() -> CheckScope {
    CheckScope::Full
}

impl CheckFinished {
    /// The check blocks "completed" and a merge: a required check that failed with at least
    /// one failure the base did not have.
    pub fn blocks(&self) -> bool {
        self.required && self.status.is_failure() && !self.only_before_task
    }
}

/// The checks of a tree: the last round of a task, or the tree a merge would write.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct ChecksReport {
    /// The tree the checks ran on (a commit or tree id).
    pub tree: String,
    pub checks: Vec<CheckFinished>,
    /// A required check fails with a failure the base did not have.
    pub blocked: bool,
    /// The accepted tree differs from the one these checks ran on (they need running again).
    #[serde(default)]
    pub stale: bool,
}

/// The checks a new task in a repository would run (the New task form, `bosun checks --repo`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct RepoChecks {
    pub checks: Vec<CheckSpec>,
    /// `configured` (a config file lists them) or `discovered` (found from the repository's files).
    pub source: CheckSource,
    /// Where the configured checks were read from, or where saving writes them: the
    /// repository's `.bosun/config.toml`.
    pub config_path: String,
}
