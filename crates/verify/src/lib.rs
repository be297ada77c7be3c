//! Checks: the project's own commands (build, tests, linters) that Bosun runs to judge a task.
//!
//! - [`discover`]: the checks a repository implies (Cargo.toml, package.json, Python tests,
//!   go.mod, a Makefile, the commands AGENTS.md names under a testing heading). Reads files,
//!   never runs anything.
//! - [`runner`] / [`related_command`]: for a test runner, the command narrowed to the tests
//!   related to the files a task changed (run first, then the full command).
//! - [`expand_files`]: `{files}` in a `when = "edit"` check, shell-quoted.
//! - [`run_check`]: one check through `bosun-exec` (timeout, process-tree kill, capped log and
//!   stream), with its [`Digest`] and its [`Class`] (ran, missing tool, network blocked).
//! - [`digest`]: failing tests and compiler/linter errors at file:line out of a check's output.
//! - [`BaseCache`] / [`mark_before_task`]: the same check's failures on the base commit, cached
//!   per base commit and command, marking the failures that were "failing before this task".
//!
//! - [`broken_references`]: Python imports of names a worktree module no longer defines (read,
//!   never run); [`examples_check`]: the check that imports changed Python files and runs the
//!   examples their docstrings give.
//!
//! The loop that reacts to checks (rounds, events, the merge gate) lives in `bosun-core`.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

mod agents;
mod cache;
mod classify;
mod digest;
mod discover;
mod examples;
mod files;
mod references;
mod related;
mod run;
mod runner;

pub use cache::{BaseCache, BaseResult, mark_before_task};
pub use classify::{Class, classify};
pub use digest::{Digest, MAX_FAILURES, MAX_MESSAGE_CHARS, digest, failure_key};
pub use discover::discover;
pub use examples::{EXAMPLES_SCRIPT, examples_check};
pub use files::{expand_files, shell_quote};
pub use references::broken_references;
pub use related::related_command;
pub use run::{CheckResult, CheckRun, LOG_HEAD_BYTES, LOG_TAIL_BYTES, STREAM_CAP_BYTES, run_check};
pub use runner::{Runner, runner, runner_for};

use std::path::PathBuf;

/// What can go wrong in this crate outside a check's own run (which reports through
/// [`CheckResult`], never an error).
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    #[error(
        "could not write the base-commit check cache in {path}: {source}; check that the directory is writable (it is only a cache: deleting it is safe)"
    )]
    CacheWrite {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("could not encode a base-commit check result: {0}")]
    CacheEncode(#[from] serde_json::Error),
}

/// A regex from a literal pattern of this crate (each one is exercised by the unit tests).
#[allow(clippy::expect_used)]
pub(crate) fn re(pattern: &str) -> regex::Regex {
    regex::Regex::new(pattern).expect("a literal pattern of bosun-verify compiles")
}
