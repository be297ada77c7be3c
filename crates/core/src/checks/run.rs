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

/// Check directories of base commits kept per repository (each may hold a build).
const BASE_DIRS_KEPT: usize = 3;

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
        // One run at a time in a check directory (two re-runs of a task, two tasks failing on
        // the same base): the lock is held for the round.
        let mut dir: Option<(PathBuf, bosun_workspace::CheckDirLock)> = None;
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
                Some((d, _)) => d.clone(),
                None => {
                    let (d, lock) = self.sync(&spec.slot, spec.tree, spec.scope).await?;
                    dir = Some((d.clone(), lock));
                    d
                }
            };
            let mut ran: Option<Ran> = None;
            if spec.scope == CheckScope::Full
                && !spec.changed.is_empty()
                && let Some(runner) = bosun_verify::runner(&command)
                && let Some(related) =
                    bosun_verify::related_command(check, runner, spec.changed, &dir)
                && related != command
                && self.refusal(&related).is_none()
            {
                let r = self
                    .execute(check, &related, CheckScope::Related, spec.round, &dir)
                    .await?;
                // The related tests failing is the answer; passing (or not running), the full
                // command runs.
                if r.finished.status.is_failure() {
                    ran = Some(r);
                } else {
                    self.emitter.emit(EventMsg::CheckFinished(r.finished))?;
                }
            }
            let mut ran = match ran {
                Some(r) => r,
                None => {
                    self.execute(check, &command, spec.scope, spec.round, &dir)
                        .await?
                }
            };
            if spec.scope != CheckScope::Edit
                && (ran.finished.status == CheckStatus::Failed || ran.missing_tool)
            {
                self.compare_with_base(check, &mut ran, spec.round).await;
            }
            round.tails.insert(ran.finished.check_id.clone(), ran.tail);
            self.emitter
                .emit(EventMsg::CheckFinished(ran.finished.clone()))?;
            round.results.push(ran.finished);
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

    /// Locks the check directory `slot` and makes it hold `tree`. The merge gate's is made
    /// afresh (nothing an earlier tree's run left, ignored files included, may decide what the
    /// merge is judged by); the others keep ignored build outputs for incremental builds.
    async fn sync(
        &self,
        slot: &str,
        tree: &str,
        scope: CheckScope,
    ) -> Result<(PathBuf, bosun_workspace::CheckDirLock), CoreError> {
        let (home, repo, slot, tree) = (
            self.home.to_path_buf(),
            self.repo_root.to_path_buf(),
            slot.to_string(),
            tree.to_string(),
        );
        let fresh = scope == CheckScope::Accepted;
        Ok(tokio::task::spawn_blocking(move || {
            let lock = bosun_workspace::lock_check_dir(&home, &repo, &slot)?;
            let dir = bosun_workspace::sync_check_dir(&home, &repo, &slot, &tree, fresh)?;
            Ok::<_, bosun_workspace::WorkspaceError>((dir, lock))
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
    ) -> Result<Ran, CoreError> {
        let check_id = new_check_id();
        self.emitter.emit(EventMsg::CheckStarted(CheckStarted {
            check_id: check_id.clone(),
            name: check.name.clone(),
            command: command.to_string(),
            round,
            scope,
        }))?;
        let broken = |summary: String| Ran {
            finished: CheckFinished {
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
            tail: String::new(),
            missing_tool: false,
            complete: false,
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
        let complete = result.digest.failures.len() < bosun_verify::MAX_FAILURES
            && result.total_bytes
                <= (bosun_verify::LOG_HEAD_BYTES + bosun_verify::LOG_TAIL_BYTES) as u64;
        Ok(Ran {
            missing_tool: matches!(result.class, Class::MissingTool(_)),
            complete,
            finished: CheckFinished {
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
            tail: result.digest.tail,
        })
    }

    /// Compares a failed check with the same command on the base commit (run there once per
    /// base commit, command, timeout and network grant, across tasks): marks the failures the
    /// base has too, and tells a broken check (its tool missing on the base as well) from a
    /// tree the task broke so that the tool no longer runs. When the base cannot be checked,
    /// nothing is marked.
    async fn compare_with_base(&self, check: &CheckSpec, ran: &mut Ran, round: u32) {
        // When the base cannot be checked, a missing tool stays a broken check.
        let Some(base) = self.base_result(check, round).await else {
            return;
        };
        let finished = &mut ran.finished;
        if ran.missing_tool {
            if base.status != CheckStatus::Error {
                // The tool runs on the base: it is this task's tree that does not run.
                finished.status = CheckStatus::Failed;
                finished.summary = format!(
                    "{} — but the same check runs on the task's base commit, so the task's changes broke it",
                    finished.summary
                );
            }
            return;
        }
        // "Failing before this task" only when like is compared with like: both failed with
        // the same exit code, and every failure of the task was read (none cut off).
        if base.status == CheckStatus::Failed
            && finished.status == CheckStatus::Failed
            && base.exit_code == finished.exit_code
        {
            let all = bosun_verify::mark_before_task(&mut finished.failures, &base);
            finished.only_before_task = all && ran.complete && !finished.failures.is_empty();
        }
    }

    /// The base commit's result of `check`, from the cache or run now.
    async fn base_result(&self, check: &CheckSpec, round: u32) -> Option<BaseResult> {
        let cache = BaseCache::new(self.home.join("cache").join("check-base"));
        let key = format!(
            "{}\n# timeout {} s, network {}",
            check.command,
            check.timeout_secs,
            self.policy.network_grant(&check.command).is_some() && self.dispatch.is_some()
        );
        if let Some(b) = cache.get(self.base_commit, &key) {
            return Some(b);
        }
        let (dir, _lock) = match self
            .sync(
                &base_slot(self.base_commit),
                self.base_commit,
                CheckScope::Base,
            )
            .await
        {
            Ok(d) => d,
            Err(e) => {
                tracing::warn!("the base commit could not be checked out for its checks: {e}");
                return None;
            }
        };
        let ran = match self
            .execute(check, &check.command, CheckScope::Base, round, &dir)
            .await
        {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!("the check could not run on the base commit: {e}");
                return None;
            }
        };
        let _ = self
            .emitter
            .emit(EventMsg::CheckFinished(ran.finished.clone()));
        drop(_lock);
        // A base commit's directory holds its build outputs: keep those of the few most recent.
        let (home, repo) = (self.home.to_path_buf(), self.repo_root.to_path_buf());
        tokio::task::spawn_blocking(move || {
            if let Err(e) = bosun_workspace::evict_check_dirs(&home, &repo, "base-", BASE_DIRS_KEPT)
            {
                tracing::warn!("old base check directories could not be removed: {e}");
            }
        });
        if self.cancel.is_cancelled() {
            return None;
        }
        let status = match (ran.finished.status, ran.missing_tool) {
            (CheckStatus::Error, true) => CheckStatus::Error,
            // Broken for another reason (the sandbox), or killed at its timeout: not a result
            // worth keeping.
            (CheckStatus::Error | CheckStatus::TimedOut | CheckStatus::Denied, _) => return None,
            (s, _) => s,
        };
        let result = BaseResult {
            status,
            failure_keys: ran
                .finished
                .failures
                .iter()
                .map(bosun_verify::failure_key)
                .collect(),
            exit_code: ran.finished.exit_code,
        };
        if let Err(e) = cache.put(self.base_commit, &key, &result) {
            tracing::warn!("the base commit's check result could not be cached: {e}");
        }
        Some(result)
    }
}

/// One run of a check's command, before the caller journals its end.
pub(crate) struct Ran {
    pub finished: CheckFinished,
    /// The end of its output.
    pub tail: String,
    /// It could not run because its tool is missing (`Class::MissingTool`).
    pub missing_tool: bool,
    /// Every failure it printed was read: the digest was not capped and the output was kept
    /// whole.
    pub complete: bool,
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
