//! The direct turn, for a model profiled as small with a text edit format, when the task's
//! files fit in the request whole: every request shows those files as they are now, the model
//! answers with file listings (or search/replace blocks) and no tools are offered — what a
//! 1.5B model does best (Aider's whole format). What Bosun adds is everything after the reply:
//! each block runs as a `recovered_N` `write_file`/`edit_file` call through the same dispatch
//! (policy, approvals, checkpoints, review credit, edit checks), code left out is refused, a
//! reply that changes nothing is nudged, and the task's checks judge the result; a failure goes
//! back with the files as they now are, up to `max_check_rounds`.
//!
//! Each request is one turn shaped like the worked example: the files as they are now, the task
//! and, after an attempt, what Bosun says about it. The files carry what the earlier attempts
//! did, so the request stays small, a small model is not led off the format by a conversation,
//! and at temperature 0 a new attempt is not the old one replayed.

use super::TaskRun;
use super::dispatch_env;
use super::edit_blocks;
use crate::dispatch::{DispatchEnv, dispatch};
use crate::{CoreError, TaskOutcome};
use bosun_model::{ChatMessage, EditFormat, ModelRequest, RetrySampling, ToolCall};
use bosun_protocol::{
    AssistantMessage, CheckScope, CheckStatus, EventMsg, NudgeReason, TaskStatus, Warning,
};

/// The task's files, at most (about 1,400 tokens): the first request stays under 2,000.
pub(super) const DIRECT_FILES_CAP_BYTES: usize = 5 * 1024;
/// The list of the repository's other files, at most.
const OTHER_FILES_CAP_BYTES: usize = 600;
/// The temperature of a retry after a reply that made no progress, or one that came again.
const RETRY_TEMPERATURE: f64 = 0.7;
/// Replies told about the references they broke, at most; then the checks judge.
const MAX_REFERENCE_ROUNDS: u32 = 2;
/// Replies told about the docstring examples that fail, at most; then the checks judge.
const MAX_EXAMPLE_ROUNDS: u32 = 2;

impl TaskRun {
    /// The files of a direct turn for `asked`, when this run takes one: a small profile, a
    /// text edit format, and files to show, each whole.
    pub(super) fn direct_files(&self, asked: &str) -> Option<Vec<(String, String)>> {
        let profile = self.client.profile();
        if !profile.is_small() || profile.edit_format == EditFormat::Tools {
            return None;
        }
        let policy = self.policy.read().ok()?;
        let files = bosun_context::task_files(
            &self.worktree_path,
            asked,
            &|p: &str| !policy.is_read_denied(p),
            DIRECT_FILES_CAP_BYTES,
        )?;
        if files.is_empty() {
            return None;
        }
        Some(files.into_iter().map(|f| (f.path, f.reason)).collect())
    }

    /// The first message of every direct request: the task's files as they are now, and the
    /// names of the others.
    fn direct_files_message(&mut self, shown: &[(String, String)]) -> Result<String, CoreError> {
        let (files, listed) = {
            let policy = self
                .policy
                .read()
                .map_err(|_| CoreError::Internal("policy lock poisoned".into()))?;
            let readable = |p: &str| !policy.is_read_denied(p);
            (
                bosun_context::files_now(
                    &self.worktree_path,
                    shown,
                    &readable,
                    DIRECT_FILES_CAP_BYTES,
                ),
                bosun_context::listed_files(&self.worktree_path, &readable),
            )
        };
        let mut text = String::from("The files of the task, as they are now:\n\n");
        text.push_str(&bosun_context::render_task_files(&files));
        let others: Vec<&String> = listed
            .iter()
            .filter(|p| !files.iter().any(|f| &f.path == *p))
            .collect();
        if !others.is_empty() {
            let mut line = String::from("The repository's other files:");
            let mut left = others.len();
            for p in others {
                if line.len() + p.len() + 2 > OTHER_FILES_CAP_BYTES {
                    break;
                }
                line.push(' ');
                line.push_str(p);
                left -= 1;
            }
            if left > 0 {
                line.push_str(&format!(" … and {left} more"));
            }
            text.push_str(&line);
            text.push('\n');
        }
        self.note_redacted(self.redaction.text(&mut text))?;
        Ok(text)
    }

    /// The loop of a direct turn (see the module's comment); `shown` from [`Self::direct_files`].
    pub(super) async fn run_direct(
        &mut self,
        messages: Vec<ChatMessage>,
        mut asked: String,
        mut shown: Vec<(String, String)>,
    ) -> Result<TaskOutcome, CoreError> {
        let format = self.client.profile().edit_format;
        let mut system = bosun_context::direct_system_prompt(&self.worktree_path);
        system.push_str("\n\n");
        system.push_str(bosun_model::direct_instructions(format));
        self.note_redacted(self.redaction.text(&mut system))?;
        let all_tools = self.registry.specs();
        let mut recovered_seq = super::last_recovered_id(&messages);
        // What Bosun said about the last attempt.
        let mut last: Option<String> = None;
        let mut reference_rounds = 0;
        let mut example_rounds = 0;
        // The next request samples (see RETRY_TEMPERATURE); the replies so far.
        let mut resample = false;
        let mut attempt: u64 = 0;
        let mut replies: std::collections::HashSet<String> = Default::default();
        loop {
            for text in self.take_queued()? {
                // The user speaking again: their words are the task now.
                asked = text;
                last = None;
            }
            if self.cancel.is_cancelled() {
                return Ok(interrupted());
            }
            let mut conversation = Vec::new();
            if let Some((user, reply)) = bosun_model::direct_example(format) {
                conversation.push(ChatMessage::User {
                    content: user.to_string(),
                });
                conversation.push(ChatMessage::Assistant {
                    content: reply.to_string(),
                    tool_calls: Vec::new(),
                    reasoning: Vec::new(),
                });
            }
            // One turn, shaped like the example, every time: what Bosun has to say about the
            // last attempt follows the task (the files show what that attempt did).
            let mut content = format!("{}\nTask: {asked}", self.direct_files_message(&shown)?);
            if let Some(said) = &last {
                content.push_str("\n\n");
                content.push_str(said);
            }
            conversation.push(ChatMessage::User { content });
            attempt += 1;
            let request = ModelRequest {
                system: system.clone(),
                messages: conversation,
                tools: Vec::new(),
                // At temperature 0 a reply that made no progress comes again word for word.
                retry_sampling: resample.then_some(RetrySampling {
                    temperature: RETRY_TEMPERATURE,
                    seed: attempt,
                }),
            };
            let response = match self.request_turn(&request).await? {
                Ok(response) => response,
                Err(outcome) => return Ok(outcome),
            };
            // The same reply again: the next attempt samples.
            let repeated = !replies.insert(response.text.clone());
            let cut = matches!(
                response.stop_reason.as_deref(),
                Some("length" | "max_tokens")
            );
            // Calls the model made anyway (native or written as text) are served too.
            let (mut calls, text) = if !response.tool_calls.is_empty() {
                (response.tool_calls.clone(), response.text.clone())
            } else {
                let found = bosun_model::recover_tool_calls(&response.text, &all_tools);
                if found.calls.is_empty() {
                    (Vec::new(), response.text.clone())
                } else {
                    (found.calls, found.remaining_text)
                }
            };
            for call in &mut calls {
                recovered_seq += 1;
                call.id = format!("recovered_{recovered_seq}");
            }
            let question = crate::nudge::prompt_is_question(&asked);
            let blocks = edit_blocks::block_calls(
                &text,
                format,
                &self.worktree_path,
                &mut recovered_seq,
                !question,
            );
            // A small model may copy the worked example's file as it was shown: never written.
            let example = example_file(format);
            let mut problems = Vec::new();
            calls.extend(blocks.calls.into_iter().filter(|call| {
                let copied = call.name == "write_file"
                    && example.as_ref().is_some_and(|(path, content)| {
                        serde_json::from_str::<serde_json::Value>(&call.arguments).is_ok_and(|a| {
                            a["path"] == path.as_str() && a["content"] == content.as_str()
                        }) && !self.worktree_path.join(path).exists()
                    });
                if copied {
                    problems.push(
                        "you wrote the file of the format's example, which is not part of this \
                         task: it was not written. Change the task's files."
                            .to_string(),
                    );
                }
                !copied
            }));
            let prose = blocks.text.trim().to_string();
            if !prose.is_empty() {
                self.emitter
                    .emit(EventMsg::AssistantMessage(AssistantMessage {
                        text: prose.clone(),
                    }))?;
            }
            problems.extend(blocks.problems);
            if cut {
                problems.push(format!(
                    "your reply was cut off at the response limit ({} tokens): write only the \
                     files that change, each once",
                    response.usage.output_tokens
                ));
            }
            let before = self.checkpointer.latest_commit();
            let ran_ok = self.run_direct_calls(&calls, &mut problems).await?;
            let changed_now = self.checkpointer.latest_commit() != before;
            // Files the task created are shown from now on.
            for path in self.checkpointer.changed_paths() {
                if !shown.iter().any(|(p, _)| *p == path) {
                    shown.push((path, "changed by the task".into()));
                }
            }
            if !problems.is_empty() {
                let said = problems_feedback(&problems, format, ran_ok && changed_now);
                // A block that cannot be applied (code left out, a cut reply, a SEARCH that
                // matches nothing) is an edit that fails its format.
                if let Some(outcome) = self.nudge(NudgeReason::SchemaError, &said)? {
                    return Ok(outcome);
                }
                last = Some(said);
                resample = true;
                continue;
            }
            // References the change broke (a renamed function's callers), before the checks.
            if changed_now && reference_rounds < MAX_REFERENCE_ROUNDS {
                let broken = bosun_verify::broken_references(
                    &self.worktree_path,
                    &self.checkpointer.changed_paths(),
                );
                if !broken.is_empty() {
                    reference_rounds += 1;
                    let list: Vec<String> = broken.iter().map(|b| format!("- {b}")).collect();
                    let said = format!(
                        "Your change leaves these references broken:\n{}\n\nFix them: write \
                         each file that needs it again, whole, in the same format.",
                        list.join("\n")
                    );
                    self.emitter.emit(EventMsg::Warning(Warning {
                        code: "broken_references".into(),
                        message: said.clone(),
                    }))?;
                    last = Some(said);
                    resample = repeated;
                    continue;
                }
            }
            // The examples the changed functions' docstrings give, run (and each changed
            // module imported), before the checks.
            if changed_now && example_rounds < MAX_EXAMPLE_ROUNDS {
                let files: Vec<String> = self
                    .checkpointer
                    .changed_paths()
                    .into_iter()
                    .filter(|p| p.ends_with(".py") && !bosun_context::is_test_name(p))
                    .filter(|p| self.worktree_path.join(p).is_file())
                    .collect();
                if let Some(tree) = self.checkpointer.latest_commit()
                    && !files.is_empty()
                {
                    let check = bosun_verify::examples_check();
                    let check_timeout = check.timeout_secs;
                    let found = self
                        .run_checks(&[check], &tree, 0, CheckScope::Edit, &files)
                        .await?;
                    // Failing, or running past its time (an example that never ends).
                    if let Some(c) = found.results.first()
                        && matches!(c.status, CheckStatus::Failed | CheckStatus::TimedOut)
                    {
                        example_rounds += 1;
                        let lines: Vec<String> = if c.status == CheckStatus::TimedOut {
                            vec![format!(
                                "- it ran past its {} s and was stopped: an import or an example \
                                 that never ends ({})",
                                check_timeout, c.summary
                            )]
                        } else if c.failures.is_empty() {
                            found
                                .tails
                                .get(&c.check_id)
                                .map(|t| vec![crate::checks::feedback_tail(t).to_string()])
                                .unwrap_or_default()
                        } else {
                            c.failures
                                .iter()
                                .take(10)
                                .map(|f| format!("- {}", crate::checks::run::failure_lines(f)))
                                .collect()
                        };
                        let mut said = format!(
                            "Bosun imported the files you changed and ran the examples their \
                             docstrings give; this fails:\n{}\n\nFix the code: write each file \
                             you change again, whole, in the same format.",
                            lines.join("\n")
                        );
                        self.note_redacted(self.redaction.text(&mut said))?;
                        last = Some(said);
                        resample = repeated;
                        continue;
                    }
                }
            }
            if calls.is_empty() || !changed_now {
                let changed = self.checkpointer.changed_anything();
                // The code written out as it already is, or a whole file unchanged: nothing
                // was done.
                let wrote = calls
                    .iter()
                    .any(|c| matches!(c.name.as_str(), "write_file" | "edit_file" | "apply_patch"));
                let echoed = !question && (!blocks.echoed.is_empty() || wrote);
                let reason = if echoed && (!changed || last.is_some()) {
                    Some(NudgeReason::NoOpEdit)
                } else {
                    crate::nudge::classify(&asked, &prose, changed).or_else(|| {
                        crate::nudge::claims_unmade_change(&asked, &prose, changed)
                            .then_some(NudgeReason::Promise)
                    })
                };
                if let Some(reason) = reason {
                    let said = nudge_message(reason, &blocks.echoed, format);
                    if let Some(outcome) = self.nudge(reason, &said)? {
                        return Ok(outcome);
                    }
                    last = Some(said);
                    resample = true;
                    continue;
                }
            }
            // The reply is the answer: the checks judge it.
            let mut said = Vec::new();
            match self.verify_done(&mut said, &prose).await? {
                Some(outcome) => return Ok(outcome),
                None => {
                    let feedback = said
                        .into_iter()
                        .filter_map(|m| match m {
                            ChatMessage::User { content } => Some(content),
                            _ => None,
                        })
                        .collect::<Vec<_>>()
                        .join("\n\n");
                    let feedback = format!(
                        "{feedback}\n\nThe files above are as they are now. Fix the code: write \
                         each file you change again, in the same format."
                    );
                    last = Some(feedback);
                    resample = repeated;
                }
            }
        }
    }

    /// Runs a direct reply's calls; what failed goes into `problems`. True when every call
    /// succeeded.
    async fn run_direct_calls(
        &mut self,
        calls: &[ToolCall],
        problems: &mut Vec<String>,
    ) -> Result<bool, CoreError> {
        let mut ok = true;
        for call in calls {
            if self.cancel.is_cancelled() {
                problems.push("the task was stopped".into());
                return Ok(false);
            }
            let command = call.name == "run_command";
            if command {
                self.checkpointer.verify(&self.emitter).await?;
            }
            let env = dispatch_env!(self);
            let done = dispatch(call, true, &env).await?;
            if let ChatMessage::Tool {
                content, is_error, ..
            } = &done.message
                && *is_error
            {
                let mut content = content.clone();
                self.note_redacted(self.redaction.text(&mut content))?;
                problems.push(content);
                ok = false;
            }
            // An edit check's failure comes back with the edit's result.
            let mut result = vec![done.message];
            self.after_call(&call.id, command, done.touched, &done.tool, &mut result)
                .await?;
            if let Some(ChatMessage::Tool { content, .. }) = result.first()
                && let Some(note) = content.split_once("\n[bosun: the edit check")
            {
                problems.push(format!("[bosun: the edit check{}", note.1));
            }
        }
        Ok(ok)
    }
}

fn interrupted() -> TaskOutcome {
    TaskOutcome {
        status: TaskStatus::Interrupted,
        summary: "stopped by the user".into(),
    }
}

/// The path and content of the file the format's worked example writes.
fn example_file(format: EditFormat) -> Option<(String, String)> {
    let (_, reply) = bosun_model::direct_example(format)?;
    let found = bosun_model::parse_edit_blocks(reply, EditFormat::Whole);
    found.edits.into_iter().find_map(|e| match e.kind {
        bosun_model::EditKind::Whole { content } => Some((e.path, content)),
        bosun_model::EditKind::SearchReplace { .. } => None,
    })
}

/// What Bosun says about a reply whose blocks could not all be applied.
fn problems_feedback(problems: &[String], format: EditFormat, some_applied: bool) -> String {
    let mut out = String::new();
    if some_applied {
        out.push_str("Some of your changes were applied (the files above show them). ");
    }
    out.push_str(&edit_blocks::problems_message(problems, None));
    out.push_str("\n\nWrite the changes again, in this format.\n");
    out.push_str(bosun_model::direct_instructions(format));
    out
}

/// What Bosun says to a reply that changed nothing when a change was asked.
fn nudge_message(reason: NudgeReason, echoed: &[String], format: EditFormat) -> String {
    let first = match reason {
        NudgeReason::NoOpEdit if !echoed.is_empty() => format!(
            "You wrote {} out exactly as it already is: nothing changed. Write the new code.",
            echoed
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        NudgeReason::NoOpEdit => {
            "What you wrote is what the files already hold: nothing changed. Write the new code."
                .to_string()
        }
        NudgeReason::Question => {
            "Do not ask: the files are above, and the task says what to do. Make the change \
             now."
                .to_string()
        }
        NudgeReason::Promise => {
            "Nothing in the repository has changed yet. Make the change now, in this reply."
                .to_string()
        }
        _ => "Do not describe the change: make it now, in this reply.".to_string(),
    };
    format!("{first}\n\n{}", bosun_model::direct_instructions(format))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn the_example_s_file_is_the_one_its_reply_writes() {
        let (path, content) = example_file(EditFormat::Whole).unwrap();
        assert_eq!(path, "greet.py");
        assert!(content.contains("return \"Hey \" + name"), "{content}");
        // Search/replace's example edits a file, it does not write one.
        assert!(example_file(EditFormat::SearchReplace).is_none());
    }
}
