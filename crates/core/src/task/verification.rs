//! The verification loop: when the model says it is done, Bosun runs the required checks on the
//! latest checkpoint; a failure goes back to the model as one message and the task goes on,
//! until every required check passes (`completed`) or `max_rounds` rounds failed
//! (`checks_failed`). And after an edit, the `when = "edit"` checks on the edited files.

use super::TaskRun;
use super::dispatch_env;
use crate::checks::{
    self, CheckContext, CheckPlan, RoundSpec, any_required_ran, blocking, round_failed,
    summary_line, task_slot,
};
use crate::dispatch::DispatchEnv;
use crate::{CoreError, TaskOutcome};
use bosun_model::ChatMessage;
use bosun_protocol::{
    CheckFinished, CheckScope, CheckSpec, CheckWhen, EventMsg, TaskStatus, UserMessage,
};
use std::collections::HashMap;

/// A task's checks and what their rounds found.
pub(super) struct Verification {
    pub plan: CheckPlan,
    /// Rounds run at the end of a turn (1, 2, …).
    pub round: u32,
    pub failed_rounds: u32,
    /// The last round's results (in `task_finished`).
    pub last: Vec<CheckFinished>,
    last_tails: HashMap<String, String>,
    /// The commit the last round checked: the same tree is not checked twice.
    last_tree: Option<String>,
    /// The trees whose failures were all failing before the task and were sent to the model
    /// anyway (a task that fixes them needs to see them; one that does not may leave them).
    before_task_told: Vec<String>,
}

impl Verification {
    pub fn new(plan: CheckPlan) -> Verification {
        Verification {
            plan,
            round: 0,
            failed_rounds: 0,
            last: Vec::new(),
            last_tails: HashMap::new(),
            last_tree: None,
            before_task_told: Vec::new(),
        }
    }

    fn checks(&self, when: CheckWhen) -> Vec<CheckSpec> {
        self.plan
            .checks
            .iter()
            .filter(|c| c.when == when)
            .cloned()
            .collect()
    }
}

impl TaskRun {
    /// Runs one set of checks on the task's latest checkpoint. (`&mut self`: the future must
    /// not hold a shared borrow of the run, whose worktree is not `Sync`.)
    pub(super) async fn run_checks(
        &mut self,
        checks: &[CheckSpec],
        tree: &str,
        round: u32,
        scope: CheckScope,
        changed: &[String],
    ) -> Result<checks::run::Round, CoreError> {
        let policy = self
            .policy
            .read()
            .map_err(|_| CoreError::Internal("policy lock poisoned".into()))?
            .clone();
        let env = dispatch_env!(self);
        let ctx = CheckContext {
            home: &self.home,
            repo_root: &self.repo_root,
            base_commit: &self.base_commit,
            policy: &policy,
            sandboxing: &self.sandboxing,
            emitter: &self.emitter,
            cancel: &self.cancel,
            env_remove: &self.env_remove,
            dispatch: Some(&env),
        };
        ctx.run_round(&RoundSpec {
            checks,
            tree,
            round,
            scope,
            changed,
            slot: task_slot(self.emitter.task_id().as_str()),
        })
        .await
    }

    /// The model answered without tool calls. Returns the outcome when the task is over, or
    /// None when checks failed and their failures were sent to the model (the loop goes on).
    pub(super) async fn verify_done(
        &mut self,
        messages: &mut Vec<ChatMessage>,
        answer: &str,
    ) -> Result<Option<TaskOutcome>, CoreError> {
        let completed = |summary: String| {
            Some(TaskOutcome {
                status: TaskStatus::Completed,
                summary,
            })
        };
        let checks = self.verification.checks(CheckWhen::End);
        // A task that changed nothing only answered: there is nothing to check.
        if checks.is_empty() || !self.checkpointer.changed_anything() {
            return Ok(completed(answer.to_string()));
        }
        let Some(tree) = self.checkpointer.latest_commit() else {
            return Ok(completed(answer.to_string()));
        };
        self.verification.round += 1;
        let round = self.verification.round;
        if self.verification.last_tree.as_deref() != Some(tree.as_str()) {
            let changed = self.checkpointer.changed_paths();
            let found = self
                .run_checks(&checks, &tree, round, CheckScope::Full, &changed)
                .await?;
            self.verification.last = found.results;
            self.verification.last_tails = found.tails;
            self.verification.last_tree = Some(tree);
        }
        if self.cancel.is_cancelled() {
            return Ok(Some(TaskOutcome {
                status: TaskStatus::Interrupted,
                summary: "stopped by the user while the checks ran".into(),
            }));
        }
        let results = &self.verification.last;
        // Every required check broken or denied: judged as having no checks.
        if !any_required_ran(results) {
            let why: Vec<String> = results
                .iter()
                .filter(|c| c.required)
                .map(|c| format!("{} ({}: {})", c.name, c.status.as_str(), c.summary))
                .collect();
            let line = format!("no required check could run: {}", why.join("; "));
            return Ok(completed(if answer.is_empty() {
                line
            } else {
                format!("{answer}\n\n{line}")
            }));
        }
        // Failures the base has too do not block; they still go back to the model once per
        // tree, within the rounds (the task may be to fix them), and the task completes when
        // it answers without changing the tree again.
        let before_task_only = results.iter().any(|c| c.required && c.status.is_failure());
        let tree = self.verification.last_tree.clone().unwrap_or_default();
        if !blocking(results)
            && before_task_only
            && !self.verification.before_task_told.contains(&tree)
            && (self.verification.failed_rounds + self.verification.before_task_told.len() as u32)
                + 1
                < self.verification.plan.max_rounds
        {
            self.verification.before_task_told.push(tree);
            let tails = &self.verification.last_tails;
            let found = round_failed(
                results,
                &|id| tails.get(id).cloned(),
                self.verification.failed_rounds,
                self.verification.plan.max_rounds,
            );
            let body = found.split_once('\n').map(|(_, b)| b).unwrap_or_default();
            let text = format!(
                "Bosun ran the project's checks on your changes: they still fail, the same way \
                 as before this task (so they do not block). If the task is to make them pass, \
                 fix what fails below; if not, answer again to finish.\n{body}"
            );
            self.send_check_feedback(messages, text)?;
            return Ok(None);
        }
        if !blocking(results) {
            let line = summary_line(results);
            let summary = if answer.is_empty() {
                line
            } else {
                format!("{answer}\n\n{line}")
            };
            return Ok(completed(summary));
        }
        self.verification.failed_rounds += 1;
        let max = self.verification.plan.max_rounds;
        if self.verification.failed_rounds >= max {
            return Ok(Some(TaskOutcome {
                status: TaskStatus::ChecksFailed,
                summary: format!(
                    "{} — after {} failed round{} of checks (max_check_rounds = {max})",
                    summary_line(results),
                    self.verification.failed_rounds,
                    if self.verification.failed_rounds == 1 {
                        ""
                    } else {
                        "s"
                    }
                ),
            }));
        }
        let tails = &self.verification.last_tails;
        let text = round_failed(
            results,
            &|id| tails.get(id).cloned(),
            self.verification.failed_rounds,
            max,
        );
        self.send_check_feedback(messages, text)?;
        Ok(None)
    }

    /// What the checks found, to the model: redacted, journaled as a `user_message` of origin
    /// `checks`, and the next message of the conversation.
    fn send_check_feedback(
        &mut self,
        messages: &mut Vec<ChatMessage>,
        mut text: String,
    ) -> Result<(), CoreError> {
        self.note_redacted(self.redaction.text(&mut text))?;
        self.emitter.emit(EventMsg::UserMessage(UserMessage {
            text: text.clone(),
            origin: Some("checks".into()),
        }))?;
        messages.push(ChatMessage::User { content: text });
        Ok(())
    }

    /// After an edit tool changed `files`: the `when = "edit"` checks, on the new checkpoint;
    /// what failed is added to the tool's result (the last message) so the model sees it at
    /// once.
    pub(super) async fn edit_checks(
        &mut self,
        messages: &mut [ChatMessage],
        files: &[String],
    ) -> Result<(), CoreError> {
        let checks = self.verification.checks(CheckWhen::Edit);
        if checks.is_empty() || files.is_empty() {
            return Ok(());
        }
        let Some(tree) = self.checkpointer.latest_commit() else {
            return Ok(());
        };
        let found = self
            .run_checks(&checks, &tree, 0, CheckScope::Edit, files)
            .await?;
        let failed: Vec<&CheckFinished> = found
            .results
            .iter()
            .filter(|c| c.status.is_failure())
            .collect();
        if failed.is_empty() {
            return Ok(());
        }
        let mut note = String::new();
        for c in failed {
            note.push_str(&format!(
                "\n[bosun: the edit check `{}` fails: {}]",
                c.name, c.summary
            ));
            for f in c.failures.iter().take(10) {
                note.push_str(&format!("\n  {}", checks::run::failure_lines(f)));
            }
            if c.failures.is_empty()
                && let Some(tail) = found.tails.get(&c.check_id)
            {
                note.push('\n');
                note.push_str(checks::feedback_tail(tail));
            }
        }
        self.note_redacted(self.redaction.text(&mut note))?;
        if let Some(ChatMessage::Tool { content, .. }) = messages.last_mut() {
            content.push_str(&note);
        }
        Ok(())
    }
}
