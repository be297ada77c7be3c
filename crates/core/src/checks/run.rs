//! Running checks: each through the policy, sandboxed, in a check directory holding the tree
//! being checked (never the task's worktree, so nothing a check makes is checkpointed or
//! credited to the agent), its output streamed as events; a failure is compared with the same
//! command's result on the base commit, cached per base commit and command.

use crate::dispatch::DispatchEnv;
use crate::egress::CallProxy;
use crate::emitter::StreamedOutput;
use crate::sandboxing::Sandboxing;
use crate::{CoreError, Emitter};
use bosun_policy::{BUILTIN_SOURCE, Decision, Policy};
use bosun_protocol::{
    CheckFailure, CheckFinished, CheckOutputDelta, CheckScope, CheckSpec, CheckStarted,
    CheckStatus, EventMsg, OutputStream, ToolAction,
};
use bosun_verify::{BaseCache, BaseResult, CheckRun, Class};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Everything checks run with.
pub(crate) struct CheckContext<'a> {
    pub home: &'a Path,
    pub repo_root: &'a Path,
    pub base_commit: &'a str,
    pub policy: &'a Policy,
    pub sandboxing: &'a Sandboxing,
    pub emitter: &'a Arc<Emitter>,
    pub cancel: &'a CancellationToken,
    pub env_remove: &'a [String],
    /// Inside a running task: a check the policy grants the network gets its egress proxy,
    /// deciding hosts as for the agent's commands. Outside one there is no one to ask, so
    /// checks run without the network.
    pub dispatch: Option<&'a DispatchEnv<'a>>,
}

/// One run of a set of checks on one tree.
pub(crate) struct RoundSpec<'a> {
    pub checks: &'a [CheckSpec],
    /// The commit or tree checked.
    pub tree: &'a str,
    pub round: u32,
    /// `Full` (the loop and re-runs: related tests first when files changed), `Accepted` (the
    /// merge gate) or `Edit`.
    pub scope: CheckScope,
    /// Worktree-relative paths the task changed (for related tests, and `{files}`).
    pub changed: &'a [String],
    /// The check directory to use (see `bosun_workspace::sync_check_dir`).
    pub slot: String,
}

/// The check directory of a task's own checks.
pub(crate) fn task_slot(task_id: &str) -> String {
    format!("task-{task_id}")
}

/// The check directory of a task's merge gate.
pub(crate) fn merge_slot(task_id: &str) -> String {
    format!("merge-{task_id}")
}

fn base_slot(base_commit: &str) -> String {
    format!("base-{}", &base_commit[..base_commit.len().min(16)])
}

/// Variables a check does not inherit: they point builds outside the check directory.
const CHECK_ENV_REMOVED: &[&str] = &["CARGO_TARGET_DIR", "CARGO_BUILD_TARGET_DIR"];

fn new_check_id() -> String {
    format!("chk_{}", ulid::Ulid::new().to_string().to_lowercase())
}

/// What a round found: each check's result, in order, and the end of each one's output.
#[derive(Debug, Default)]
pub(crate) struct Round {
    pub results: Vec<CheckFinished>,
    /// Output tails by check id.
    pub tails: std::collections::HashMap<String, String>,
}

impl CheckContext<'_> {
    /// Runs every check of `spec` and returns their results, in order.
    pub async fn run_round(&self, spec: &RoundSpec<'_>) -> Result<Round, CoreError> {
        let mut dir: Option<PathBuf> = None;
        let mut round = Round::default();
        for check in spec.checks {
            if self.cancel.is_cancelled() {
                break;
            }
            let command = match spec.scope {
                CheckScope::Edit => bosun_verify::expand_files(&check.command, spec.changed),
                _ => check.command.clone(),
            };
            if let Some(why) = self.refusal(&command) {
                round
                    .results
                    .push(self.refused(check, &command, spec, why)?);
                continue;
            }
            let dir = match &dir {
                Some(d) => d.clone(),
                None => {
                    let d = self.sync(&spec.slot, spec.tree).await?;
                    dir = Some(d.clone());
                    d
                }
            };
            let mut finished: Option<(CheckFinished, String)> = None;
            if spec.scope == CheckScope::Full
                && !spec.changed.is_empty()
                && let Some(runner) = bosun_verify::runner(&command)
                && let Some(related) =
                    bosun_verify::related_command(check, runner, spec.changed, &dir)
                && related != command
            {
                let r = self
                    .execute(check, &related, CheckScope::Related, spec.round, &dir)
                    .await?;
                // The related tests failing is the answer; passing, the full command runs.
                if r.0.status == CheckStatus::Passed {
                    self.emitter.emit(EventMsg::CheckFinished(r.0))?;
                } else {
                    finished = Some(r);
                }
            }
            let (mut finished, tail) = match finished {
                Some(f) => f,
                None => {
                    self.execute(check, &command, spec.scope, spec.round, &dir)
                        .await?
                }
            };
            round.tails.insert(finished.check_id.clone(), tail);
            // A timeout names no failure to look for on the base: it is not run there.
            if finished.status == CheckStatus::Failed && spec.scope != CheckScope::Edit {
                self.compare_with_base(check, &mut finished, spec.round)
                    .await?;
            }
            self.emitter
                .emit(EventMsg::CheckFinished(finished.clone()))?;
            round.results.push(finished);
        }
        Ok(round)
    }

    /// Why the policy refuses `command` as a check: a deny rule, or an ask rule a policy file
    /// wrote (checks are the project's own commands and count as approved, but not over the
    /// user's explicit word). None when it may run.
    fn refusal(&self, command: &str) -> Option<String> {
        let d = self.policy.decide(&ToolAction::Command {
            command: command.to_string(),
        });
        let by_mode = d.rule.starts_with("mode ");
        match d.decision {
            Decision::Deny => Some(format!(
                "denied by the policy: {} ({}, {})",
                d.reason, d.rule, d.source
            )),
            Decision::Ask if !by_mode && d.source != BUILTIN_SOURCE => Some(format!(
                "not run: a rule of yours asks before this command ({}, {}), and checks never wait for an approval; allow it, or drop the check",
                d.rule, d.source
            )),
            _ => None,
        }
    }

    fn refused(
        &self,
        check: &CheckSpec,
        command: &str,
        spec: &RoundSpec<'_>,
        why: String,
    ) -> Result<CheckFinished, CoreError> {
        let check_id = new_check_id();
        self.emitter.emit(EventMsg::CheckStarted(CheckStarted {
            check_id: check_id.clone(),
            name: check.name.clone(),
            command: command.to_string(),
            round: spec.round,
            scope: spec.scope,
        }))?;
        let finished = CheckFinished {
            check_id,
            name: check.name.clone(),
            status: CheckStatus::Denied,
            exit_code: None,
            duration_ms: 0,
            summary: why,
            failures: Vec::new(),
            required: check.required,
            scope: spec.scope,
            only_before_task: false,
        };
        self.emitter
            .emit(EventMsg::CheckFinished(finished.clone()))?;
        Ok(finished)
    }

    async fn sync(&self, slot: &str, tree: &str) -> Result<PathBuf, CoreError> {
        let (home, repo, slot, tree) = (
            self.home.to_path_buf(),
            self.repo_root.to_path_buf(),
            slot.to_string(),
            tree.to_string(),
        );
        Ok(tokio::task::spawn_blocking(move || {
            bosun_workspace::sync_check_dir(&home, &repo, &slot, &tree)
        })
        .await
        .map_err(|e| CoreError::Internal(format!("check directory thread failed: {e}")))??)
    }

    /// Runs one command of a check in `dir` and emits its start and output; the caller emits
    /// the end (after comparing with the base) — except for base runs, which end here.
    async fn execute(
        &self,
        check: &CheckSpec,
        command: &str,
        scope: CheckScope,
        round: u32,
        dir: &Path,
    ) -> Result<(CheckFinished, String), CoreError> {
        let check_id = new_check_id();
        self.emitter.emit(EventMsg::CheckStarted(CheckStarted {
            check_id: check_id.clone(),
            name: check.name.clone(),
            command: command.to_string(),
            round,
            scope,
        }))?;
        let broken = |summary: String| {
            (
                CheckFinished {
                    check_id: check_id.clone(),
                    name: check.name.clone(),
                    status: CheckStatus::Error,
                    exit_code: None,
                    duration_ms: 0,
                    summary,
                    failures: Vec::new(),
                    required: check.required,
                    scope,
                    only_before_task: false,
                },
                String::new(),
            )
        };
        if let Some(reason) = self.sandboxing.unavailable() {
            return Ok(broken(format!(
                "not run: commands cannot be sandboxed on this machine ({reason}), and a check never waits for an approval"
            )));
        }
        let sandboxing = self.sandboxing.for_dir(dir, self.policy);
        let timeout = Duration::from_secs(check.timeout_secs);
        let grant = self.policy.network_grant(command).is_some();
        let proxy = match (self.dispatch, sandboxing.run_dir(), grant) {
            (Some(env), Some(run_dir), true) => {
                match CallProxy::start(run_dir, &check_id, timeout, env) {
                    Ok(p) => Some(p),
                    Err(e) => {
                        return Ok(broken(format!("the network proxy could not start: {e}")));
                    }
                }
            }
            _ => None,
        };
        let (sandbox, sandbox_exe) = match sandboxing.policy(
            proxy.as_ref().map(CallProxy::socket),
            &self.policy.sandbox(),
        ) {
            Ok(Some((p, exe))) => (Some(p), exe),
            Ok(None) => (None, PathBuf::new()),
            Err(e) => return Ok(broken(format!("the sandbox could not be prepared: {e}"))),
        };
        // A build directory shared outside the check directory is not writable in the sandbox:
        // a check builds in its own directory (kept between runs, so builds are incremental).
        let mut env_remove = self.env_remove.to_vec();
        env_remove.extend(CHECK_ENV_REMOVED.iter().map(|v| v.to_string()));
        let run = CheckRun {
            command: command.to_string(),
            cwd: dir.to_path_buf(),
            timeout,
            env_remove,
            sandbox,
            sandbox_exe,
            root_for_paths: dir.to_path_buf(),
        };
        let id = check_id.clone();
        let output = StreamedOutput::new(self.emitter, move |stream, chunk| {
            EventMsg::CheckOutputDelta(CheckOutputDelta {
                check_id: id.clone(),
                stream,
                chunk,
            })
        });
        let on_output = |stream: OutputStream, chunk: String| output.piece(stream, Some(&chunk));
        let work = bosun_verify::run_check(&run, self.cancel, &on_output);
        let result = match (proxy, self.dispatch) {
            (Some(proxy), Some(env)) => proxy.serve_while(work, env, &check_id, command).await,
            _ => work.await,
        };
        output.finish();
        self.emitter.check()?;
        let mut summary = result.digest.summary.clone();
        match &result.class {
            Class::MissingTool(tool) => {
                summary = format!(
                    "`{tool}` is not installed (or not on the PATH): a broken check, not the task's failure"
                );
            }
            Class::NetworkBlocked if grant && self.dispatch.is_none() => {
                summary = format!(
                    "{summary} — it seems to need the network, which checks outside a running task do not get"
                );
            }
            Class::NetworkBlocked if !grant => {
                summary = format!(
                    "{summary} — it seems to need the network, which checks do not get by default; allow it with a [network] rule for this command"
                );
            }
            _ => {}
        }
        if result.status == CheckStatus::TimedOut {
            summary = format!(
                "timed out after {} s; the check and everything it started were killed",
                check.timeout_secs
            );
        }
        Ok((
            CheckFinished {
                check_id,
                name: check.name.clone(),
                status: result.status,
                exit_code: result.exit_code,
                duration_ms: result.duration_ms,
                summary,
                failures: result.digest.failures,
                required: check.required,
                scope,
                only_before_task: false,
            },
            result.digest.tail,
        ))
    }

    /// Marks the failures the base commit has too (running the check there once per base
    /// commit and command, across tasks).
    async fn compare_with_base(
        &self,
        check: &CheckSpec,
        finished: &mut CheckFinished,
        round: u32,
    ) -> Result<(), CoreError> {
        let cache = BaseCache::new(self.home.join("cache").join("check-base"));
        let base = match cache.get(self.base_commit, &check.command) {
            Some(b) => b,
            None => {
                let dir = self
                    .sync(&base_slot(self.base_commit), self.base_commit)
                    .await?;
                let (ran, _) = self
                    .execute(check, &check.command, CheckScope::Base, round, &dir)
                    .await?;
                self.emitter.emit(EventMsg::CheckFinished(ran.clone()))?;
                if self.cancel.is_cancelled() || ran.status == CheckStatus::Error {
                    return Ok(());
                }
                let result = BaseResult {
                    status: ran.status,
                    failure_keys: ran.failures.iter().map(bosun_verify::failure_key).collect(),
                    exit_code: ran.exit_code,
                };
                if let Err(e) = cache.put(self.base_commit, &check.command, &result) {
                    tracing::warn!("the base commit's check result could not be cached: {e}");
                }
                result
            }
        };
        if base.status.is_failure() {
            let all = bosun_verify::mark_before_task(&mut finished.failures, &base);
            finished.only_before_task = all && !finished.failures.is_empty();
        }
        Ok(())
    }
}

/// Whether a round's results hold a failure that blocks: a required check failed with a
/// failure the base did not have.
pub(crate) fn blocking(results: &[CheckFinished]) -> bool {
    results.iter().any(CheckFinished::blocks)
}

/// Every required check ran (passed or failed) — when none did (all broken or denied), the
/// task is judged as having no checks.
pub(crate) fn any_required_ran(results: &[CheckFinished]) -> bool {
    results
        .iter()
        .any(|c| c.required && !matches!(c.status, CheckStatus::Error | CheckStatus::Denied))
}

/// The failures of `results` as one line each, for summaries.
pub(crate) fn failure_lines(f: &CheckFailure) -> String {
    let at = match (&f.path, f.line) {
        (Some(p), Some(l)) => format!("{p}:{l}: "),
        (Some(p), None) => format!("{p}: "),
        _ => String::new(),
    };
    let before = if f.before_task {
        " [failing before this task: the base commit fails the same way]"
    } else {
        ""
    };
    format!("{at}{}{before}", f.message)
}
