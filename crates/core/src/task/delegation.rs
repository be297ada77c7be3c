//! The loop's side of sub-agents: a reply's `delegate` calls become child tasks (see
//! [`crate::orchestrate`]). Calls whose scopes are disjoint from every other call of the reply
//! run side by side, each in its own worktree from the parent's current checkpoint, and are
//! merged back one at a time (three-way, the checks after each merge); the others run one after
//! another, each from the parent's state after the one before. A conflict is reported to the
//! parent and nothing of that child is merged.

use super::TaskRun;
use crate::checks::ChecksChoice;
use crate::orchestrate::{self, Caps, ChildLink, ChildResult, ChildStart, Scope};
use crate::sandboxing::Sandboxing;
use crate::{CoreError, TaskSpec};
use bosun_model::{ChatMessage, ToolCall};
use bosun_protocol::{
    CallId, CheckFinished, CheckScope, CheckSpec, EventMsg, SubagentFinished, TaskStatus,
    ToolCallBegin, ToolCallEnd, ToolCallStatus, Warning,
};
use bosun_tools::DelegateArgs;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

/// One `delegate` call of a reply (or a plan node's attempt), checked and ready to run.
pub(super) struct Planned {
    pub call_id: String,
    pub args: DelegateArgs,
    pub scope: Scope,
    pub role: crate::routing::RoleModel,
    pub checks: Vec<CheckSpec>,
    pub started: Instant,
    /// The plan node it runs.
    pub plan_node: Option<String>,
}

/// What became of a child, for a plan node.
pub(super) struct Report {
    /// It finished cleanly: completed (or answered), merged, its checks passing.
    pub ok: bool,
    /// The result as the model is told it.
    pub text: String,
    pub task_id: bosun_protocol::TaskId,
}

/// How a child's work reached the parent.
struct Landed {
    merge: &'static str,
    files: Vec<String>,
    conflicts: Vec<String>,
    checks: Vec<CheckFinished>,
}

impl TaskRun {
    /// Whether this task may delegate (a child's child may not).
    pub(super) fn can_delegate(&self) -> bool {
        self.registry.get("delegate").is_some()
    }

    /// Runs the reply's `delegate` calls and returns each one's result for the conversation,
    /// by call id (tool begin and end events included).
    pub(super) async fn run_delegates(
        &mut self,
        calls: &[ToolCall],
        messages: &[ChatMessage],
        recovered: &[String],
    ) -> Result<HashMap<String, ChatMessage>, CoreError> {
        let mut results: HashMap<String, ChatMessage> = HashMap::new();
        let mut planned: Vec<Planned> = Vec::new();
        for call in calls.iter().filter(|c| c.name == "delegate") {
            if results.contains_key(&call.id) || planned.iter().any(|p| p.call_id == call.id) {
                continue; // a duplicate id: the loop refuses it
            }
            let started = Instant::now();
            let args: serde_json::Value = serde_json::from_str(call.arguments.trim())
                .unwrap_or_else(|_| serde_json::Value::String(call.arguments.clone()));
            self.emitter.emit(EventMsg::ToolCallBegin(ToolCallBegin {
                call_id: CallId(call.id.clone()),
                tool: "delegate".into(),
                args: args.clone(),
                recovered: recovered.contains(&call.id),
            }))?;
            match self.plan_delegate(&call.id, &args, started) {
                Ok(p) => planned.push(p),
                Err(why) => {
                    let message = self.refuse_delegate(&call.id, started, why)?;
                    results.insert(call.id.clone(), message);
                }
            }
        }
        if planned.is_empty() {
            return Ok(results);
        }
        // Side by side: a call whose scope overlaps no other call's of this reply.
        let parallel: Vec<bool> = (0..planned.len())
            .map(|i| {
                planned.len() > 1
                    && planned
                        .iter()
                        .enumerate()
                        .all(|(j, other)| i == j || planned[i].scope.disjoint(&other.scope))
            })
            .collect();
        let settings = self.subagent_settings();
        let caps = settings.caps();
        let transcript = shared_transcript(messages);

        // The parallel group: every child from the parent's current checkpoint.
        let fork_point = self.current_commit();
        let mut running = Vec::new();
        let limit = Arc::new(tokio::sync::Semaphore::new(settings.concurrency()));
        for (p, _) in planned.iter().zip(&parallel).filter(|(_, par)| **par) {
            let (spec, start) = self.child(p, &fork_point, true, caps, &transcript);
            let (store, parent) = (Arc::clone(self.emitter.store()), Arc::clone(&self.emitter));
            let limit = Arc::clone(&limit);
            let cancel = self.cancel.clone();
            running.push((
                p.call_id.clone(),
                tokio::spawn(async move {
                    let _slot = tokio::select! {
                        slot = limit.acquire_owned() => slot.ok(),
                        () = cancel.cancelled() => None,
                    };
                    if cancel.is_cancelled() {
                        return Err(CoreError::Internal("stopped before it started".into()));
                    }
                    orchestrate::run_child(spec, store, parent, start).await
                }),
            ));
        }
        let mut finished: HashMap<String, Result<ChildResult, CoreError>> = HashMap::new();
        for (id, join) in running {
            let r = join
                .await
                .map_err(|e| CoreError::Internal(format!("sub-agent thread failed: {e}")))
                .and_then(|r| r);
            finished.insert(id, r);
        }
        // Merged back one at a time, in the order of the calls.
        for p in planned
            .iter()
            .zip(&parallel)
            .filter(|(_, par)| **par)
            .map(|(p, _)| p)
        {
            let result = finished
                .remove(&p.call_id)
                .unwrap_or_else(|| Err(CoreError::Internal("a sub-agent went missing".into())));
            let message = self.land(p, result, true).await?;
            results.insert(p.call_id.clone(), message);
        }
        // The others, one after another on the parent's state.
        for p in planned
            .iter()
            .zip(&parallel)
            .filter(|(_, par)| !**par)
            .map(|(p, _)| p)
        {
            if self.cancel.is_cancelled() {
                let message = self.refuse_delegate(
                    &p.call_id,
                    p.started,
                    "not run: the task was stopped".into(),
                )?;
                results.insert(p.call_id.clone(), message);
                continue;
            }
            let base = self.current_commit();
            let (spec, start) = self.child(p, &base, false, caps, &transcript);
            let result = orchestrate::run_child(
                spec,
                Arc::clone(self.emitter.store()),
                Arc::clone(&self.emitter),
                start,
            )
            .await;
            let message = self.land(p, result, false).await?;
            results.insert(p.call_id.clone(), message);
        }
        Ok(results)
    }

    pub(super) fn subagent_settings(&self) -> orchestrate::SubagentSettings {
        crate::BosunConfig::load(&self.home)
            .ok()
            .and_then(|c| c.subagents)
            .unwrap_or_default()
    }

    pub(super) fn current_commit(&self) -> String {
        self.checkpointer
            .latest_commit()
            .unwrap_or_else(|| self.base_commit.clone())
    }

    /// Checks a call's arguments: its brief, scope (inside the parent's own scope), role and
    /// checks. The error is what the model is told.
    pub(super) fn plan_delegate(
        &self,
        call_id: &str,
        args: &serde_json::Value,
        started: Instant,
    ) -> Result<Planned, String> {
        let args = DelegateArgs::parse(args).map_err(|e| match e {
            bosun_tools::ToolError::Model(m) | bosun_tools::ToolError::Fatal(m) => m,
        })?;
        let scope = Scope::new(&args.scope)?;
        // A child of a child stays inside its parent's scope.
        if let Some(outer) = self.link.as_ref().map(|l| &l.scope) {
            let outside: Vec<&str> = args
                .scope
                .iter()
                .filter(|g| !outer.allows(orchestrate::scope::literal_prefix(g)))
                .map(String::as_str)
                .collect();
            if !outside.is_empty() {
                return Err(format!(
                    "scope {} is outside this sub-agent's own scope ({})",
                    outside.join(", "),
                    outer.globs().join(", ")
                ));
            }
        }
        let role = args.role.clone().unwrap_or_else(|| "worker".into());
        let role = crate::routing::role_model(
            &self.home,
            &role,
            &self.provider,
            self.api_key_env.as_deref(),
        )
        .map_err(|e| e.to_string())?;
        let known: Vec<&CheckSpec> = self.verification.plan.checks.iter().collect();
        let mut checks = Vec::new();
        for name in &args.checks {
            match known.iter().find(|c| c.name == *name) {
                Some(c) => checks.push((*c).clone()),
                None => {
                    let names: Vec<&str> = known.iter().map(|c| c.name.as_str()).collect();
                    return Err(format!(
                        "no check named {name:?}; {}",
                        if names.is_empty() {
                            "this task has no checks".to_string()
                        } else {
                            format!("the task's checks are: {}", names.join(", "))
                        }
                    ));
                }
            }
        }
        Ok(Planned {
            call_id: call_id.to_string(),
            args,
            scope,
            role,
            checks,
            started,
            plan_node: None,
        })
    }

    /// A child's task and what the parent says of it as it starts: its caps within what the
    /// parent has left, its prompt (the brief, its scope, its checks), its link.
    pub(super) fn child(
        &self,
        p: &Planned,
        base: &str,
        parallel: bool,
        mut caps: Caps,
        transcript: &[ChatMessage],
    ) -> (TaskSpec, ChildStart) {
        let depth = self.link.as_ref().map_or(0, |l| l.depth) + 1;
        if let Some(left) = self.budget.remaining_usd() {
            caps.max_cost_usd = caps.max_cost_usd.min(left);
        }
        let mut env_remove = self.env_remove.clone();
        env_remove.extend(p.role.key_env.clone());
        let mut prompt = p.args.brief.clone();
        prompt.push_str(&format!(
            "\n\nYou are a sub-agent: change only files matching {}; anything else is refused.",
            p.scope.globs().join(", ")
        ));
        if !p.checks.is_empty() {
            let names: Vec<&str> = p.checks.iter().map(|c| c.name.as_str()).collect();
            prompt.push_str(&format!(
                " Your work is done when these checks pass: {}.",
                names.join(", ")
            ));
        }
        prompt.push_str(" When you are done, answer with a short summary of what you changed.");
        let spec = TaskSpec {
            id: None,
            context: None,
            home: self.home.clone(),
            repo: self.repo_root.clone(),
            prompt,
            base: Some(base.to_string()),
            provider: p.role.provider.clone(),
            max_steps: caps.max_steps,
            max_cost_usd: Some(caps.max_cost_usd),
            policy_file: self.policy_files.extra.clone(),
            mode: self.policy_files.mode,
            api_key_env: p.role.key_env.clone(),
            sandbox: !matches!(self.sandboxing, Sandboxing::Disabled),
            env_remove,
            checks: if p.checks.is_empty() {
                ChecksChoice::None
            } else {
                ChecksChoice::These(p.checks.clone())
            },
            max_check_rounds: None,
            max_nudges: None,
            fork: None,
            pins: Vec::new(),
            link: Some(ChildLink::new(
                self.emitter.task_id().clone(),
                depth,
                p.role.role.clone(),
                p.scope.clone(),
                Arc::clone(&self.gate),
                self.cancel.clone(),
                caps.max_tokens,
            )),
            transcript: if p.args.share_transcript {
                transcript.to_vec()
            } else {
                Vec::new()
            },
            plan: false,
        };
        let start = ChildStart {
            brief: p.args.brief.clone(),
            call_id: Some(CallId(p.call_id.clone())),
            plan_node: p.plan_node.clone(),
            parallel,
            caps,
        };
        (spec, start)
    }

    /// Brings a finished child's work into the parent (merged, or applied on the state it
    /// started from), runs the checks after a merge, and says what happened: the
    /// `subagent_finished` event and the call's result.
    async fn land(
        &mut self,
        p: &Planned,
        result: Result<ChildResult, CoreError>,
        parallel: bool,
    ) -> Result<ChatMessage, CoreError> {
        match self.land_report(p, result, parallel, false).await? {
            Ok(report) => {
                let error =
                    (!report.ok).then(|| "the sub-agent did not finish cleanly".to_string());
                self.end_call(&p.call_id, p.started, report.ok, error, report.text)
            }
            Err(why) => self.refuse_delegate(&p.call_id, p.started, why),
        }
    }

    /// [`Self::land`] without the call's end: what happened, or why the child could not run.
    /// `only_if_ok`: a child that did not finish cleanly is not merged (a plan node's failed
    /// attempt, retried from the state before it).
    pub(super) async fn land_report(
        &mut self,
        p: &Planned,
        result: Result<ChildResult, CoreError>,
        parallel: bool,
        only_if_ok: bool,
    ) -> Result<Result<Report, String>, CoreError> {
        let mut child = match result {
            Ok(c) => c,
            Err(e) => return Ok(Err(format!("the sub-agent could not run: {e}"))),
        };
        self.budget.add_child_cost(child.cost_usd);
        let mergeable = if only_if_ok {
            matches!(child.status, TaskStatus::Completed | TaskStatus::Answered)
        } else {
            matches!(
                child.status,
                TaskStatus::Completed
                    | TaskStatus::ChecksFailed
                    | TaskStatus::MaxSteps
                    | TaskStatus::BudgetExceeded
            )
        };
        let landed = match (&child.final_commit, mergeable) {
            (None, _) => Landed {
                merge: "none",
                files: Vec::new(),
                conflicts: Vec::new(),
                checks: child.checks.clone(),
            },
            (Some(_), false) => Landed {
                merge: "reverted",
                files: Vec::new(),
                conflicts: Vec::new(),
                checks: child.checks.clone(),
            },
            (Some(end), true) => {
                let message = format!(
                    "bosun: {} sub-agent {}",
                    if parallel { "merge" } else { "apply" },
                    child.task_id
                );
                // What the child's final state holds outside its scope (a process that wrote
                // after its command returned) is never merged.
                let outside: Vec<String> = child
                    .files
                    .iter()
                    .filter(|f| !p.scope.allows(f))
                    .cloned()
                    .collect();
                let before_merge = self.current_commit();
                match self
                    .checkpointer
                    .merge_in(
                        &child.base_commit,
                        end,
                        message,
                        Some(&p.call_id),
                        &self.emitter,
                    )
                    .await?
                {
                    bosun_workspace::MergedIn::Conflicts(paths) => Landed {
                        merge: "conflict",
                        files: Vec::new(),
                        conflicts: paths,
                        checks: child.checks.clone(),
                    },
                    bosun_workspace::MergedIn::Merged { mut files, .. } => {
                        if !outside.is_empty() {
                            self.checkpointer
                                .put_back(
                                    &before_merge,
                                    outside.clone(),
                                    Some(&p.call_id),
                                    &self.emitter,
                                )
                                .await?;
                            files.retain(|f| !outside.contains(f));
                            child.reverted.extend(outside.iter().cloned());
                            child.reverted.sort();
                            child.reverted.dedup();
                        }
                        self.map_after_call(&bosun_tools::Touched::Paths(files.clone()));
                        let checks = if parallel {
                            self.checks_after_merge(p, &files).await?
                        } else {
                            child.checks.clone()
                        };
                        Landed {
                            merge: if parallel { "merged" } else { "applied" },
                            files,
                            conflicts: Vec::new(),
                            checks,
                        }
                    }
                }
            }
        };
        self.emitter
            .emit(EventMsg::SubagentFinished(SubagentFinished {
                child_task_id: child.task_id.clone(),
                status: child.status,
                summary: child.summary.clone(),
                files: if landed.merge == "none" || landed.merge == "reverted" {
                    child.files.clone()
                } else {
                    landed.files.clone()
                },
                checks: landed.checks.clone(),
                cost_usd: child.cost_usd,
                tokens: child.tokens,
                steps: child.steps,
                merge: landed.merge.into(),
                conflicts: landed.conflicts.clone(),
                reverted: child.reverted.clone(),
            }))?;
        if landed.merge == "conflict" {
            self.emitter.emit(EventMsg::Warning(Warning {
                code: "subagent_conflict".into(),
                message: format!(
                    "sub-agent {} changed {} as the parent's state did too: nothing of it was merged",
                    child.task_id,
                    landed.conflicts.join(", ")
                ),
            }))?;
        }
        let ok = matches!(child.status, TaskStatus::Completed | TaskStatus::Answered)
            && landed.merge != "conflict"
            && !crate::checks::blocking(&landed.checks);
        let result = serde_json::json!({
            "task_id": child.task_id,
            "status": child.status.as_str(),
            "summary": child.summary,
            "files": if landed.files.is_empty() { child.files.clone() } else { landed.files.clone() },
            "merge": landed.merge,
            "conflicts": landed.conflicts,
            "reverted_outside_scope": child.reverted,
            "checks": landed.checks.iter().map(|c| serde_json::json!({
                "name": c.name,
                "status": c.status,
                "summary": c.summary,
            })).collect::<Vec<_>>(),
            "steps": child.steps,
            "tokens": child.tokens,
            "cost_usd": (child.cost_usd * 1e6).round() / 1e6,
        });
        let mut text = serde_json::to_string_pretty(&result).unwrap_or_default();
        match landed.merge {
            "conflict" => text.push_str(
                "\n\nIts changes conflict with the current state of those files and were not merged: do that part yourself, or delegate it again.",
            ),
            "reverted" => text.push_str(
                "\n\nThe sub-agent did not finish, so its changes were not merged.",
            ),
            _ => {}
        }
        Ok(Ok(Report {
            ok,
            text,
            task_id: child.task_id,
        }))
    }

    /// The checks after a parallel child's merge: its own, else the task's end checks.
    async fn checks_after_merge(
        &mut self,
        p: &Planned,
        files: &[String],
    ) -> Result<Vec<CheckFinished>, CoreError> {
        let checks = if p.checks.is_empty() {
            crate::checks::end_checks(&self.verification.plan)
        } else {
            p.checks.clone()
        };
        if checks.is_empty() {
            return Ok(Vec::new());
        }
        let tree = self.current_commit();
        let round = self
            .run_checks(&checks, &tree, 0, CheckScope::Full, files)
            .await?;
        Ok(round.results)
    }

    /// Ends a call the loop runs itself (`delegate`, a plan run): its end event, and its
    /// result for the conversation (`error` above `output`).
    pub(super) fn end_call(
        &self,
        call_id: &str,
        started: Instant,
        ok: bool,
        error: Option<String>,
        output: String,
    ) -> Result<ChatMessage, CoreError> {
        let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.emitter.emit(EventMsg::ToolCallEnd(ToolCallEnd {
            call_id: CallId(call_id.to_string()),
            status: if ok {
                ToolCallStatus::Success
            } else {
                ToolCallStatus::Error
            },
            exit_code: None,
            error: error.clone(),
            output: output.clone(),
            duration_ms,
        }))?;
        Ok(ChatMessage::Tool {
            call_id: call_id.to_string(),
            content: crate::dispatch::tool_result_content(error.as_deref(), output),
            is_error: !ok,
        })
    }

    /// A `delegate` call that could not run, and why.
    fn refuse_delegate(
        &self,
        call_id: &str,
        started: Instant,
        why: String,
    ) -> Result<ChatMessage, CoreError> {
        self.end_call(call_id, started, false, Some(why), String::new())
    }

    /// After a sub-agent's command: what it changed outside its scope is put back, and the
    /// command's result says so.
    pub(super) async fn revert_outside_scope(
        &mut self,
        before: &str,
        call_id: &str,
        messages: &mut [ChatMessage],
    ) -> Result<(), CoreError> {
        let Some(link) = self.link.clone() else {
            return Ok(());
        };
        let outside: Vec<String> = self
            .checkpointer
            .last_checkpoint_files()
            .into_iter()
            .filter(|p| !link.scope.allows(p))
            .collect();
        if outside.is_empty() {
            return Ok(());
        }
        let put_back = self
            .checkpointer
            .put_back(before, outside.clone(), Some(call_id), &self.emitter)
            .await?;
        self.map_after_call(&bosun_tools::Touched::Paths(put_back));
        if let Ok(mut r) = link.reverted.lock() {
            r.extend(outside.iter().cloned());
        }
        let note = format!(
            "The command changed files outside this sub-agent's scope ({}); they were put back: {}",
            link.scope.globs().join(", "),
            outside.join(", ")
        );
        self.emitter.emit(EventMsg::Warning(Warning {
            code: "scope_reverted".into(),
            message: note.clone(),
        }))?;
        if let Some(ChatMessage::Tool { content, .. }) = messages.last_mut() {
            content.push_str("\n\n");
            content.push_str(&note);
        }
        Ok(())
    }
}

/// The parent's conversation for a child it shares its transcript with: up to (not including)
/// the reply with the `delegate` calls, whose results do not exist yet.
fn shared_transcript(messages: &[ChatMessage]) -> Vec<ChatMessage> {
    let end = messages
        .iter()
        .rposition(|m| matches!(m, ChatMessage::Assistant { .. }))
        .unwrap_or(messages.len());
    messages[..end].to_vec()
}
