//! Plans as task graphs: `update_plan{items, run: true}` runs each node (an item with an `id`)
//! as a sub-agent once the nodes it `depends_on` are completed, each behind its checks, one
//! after another in dependency order; every node that lands is a checkpoint of the task. A node
//! that fails climbs a ladder: once more with the failure's digest, then on the `escalation`
//! role's model, then the user decides (`approval_requested{kind: plan_node_failed}`: approve
//! once retries it on the escalation model, approve for the task skips it, deny stops the plan
//! and the task ends `checks_failed`). After a crash, `bosun resume` continues from the first
//! node that did not finish.

use super::TaskRun;
use super::delegation::Planned;
use crate::approvals::AskRequest;
use crate::{CoreError, TaskOutcome};
use bosun_model::ChatMessage;
use bosun_protocol::{
    ApprovalDecision, CallId, EventMsg, PlanItem, PlanStatus, PlanUpdated, TaskStatus, ToolAction,
};
use std::collections::{HashMap, HashSet};
use std::time::Instant;

/// Attempts before the user is asked: the node's role, again with the digest, escalation.
const LADDER: u32 = 3;

/// Checks a graph: ids given (or made: `n1`, `n2`, … by position), unique, dependencies that
/// exist, no cycle. The error is what the model is told.
pub(super) fn validate(items: &mut [PlanItem]) -> Result<(), String> {
    if items.is_empty() {
        return Err("a plan to run needs at least one item".into());
    }
    for (i, item) in items.iter_mut().enumerate() {
        if item.id.as_deref().is_none_or(|id| id.trim().is_empty()) {
            item.id = Some(format!("n{}", i + 1));
        }
        if item.step.trim().is_empty() {
            return Err(format!("plan item {} has no step (its brief)", i + 1));
        }
    }
    let ids: Vec<String> = items.iter().filter_map(|i| i.id.clone()).collect();
    let mut seen = HashSet::new();
    for id in &ids {
        if !seen.insert(id.clone()) {
            return Err(format!(
                "two plan items have the id {id:?}: give each its own"
            ));
        }
    }
    for item in items.iter() {
        for dep in &item.depends_on {
            if !seen.contains(dep) {
                return Err(format!(
                    "plan item {:?} depends on {dep:?}, which is not an item of the plan (the ids are: {})",
                    item.id.as_deref().unwrap_or(""),
                    ids.join(", ")
                ));
            }
        }
    }
    // Kahn: a cycle leaves nodes that never become ready.
    let mut done: HashSet<&str> = HashSet::new();
    loop {
        let before = done.len();
        for item in items.iter() {
            let id = item.id.as_deref().unwrap_or("");
            if !done.contains(id) && item.depends_on.iter().all(|d| done.contains(d.as_str())) {
                done.insert(id);
            }
        }
        if done.len() == items.len() {
            return Ok(());
        }
        if done.len() == before {
            let stuck: Vec<&str> = items
                .iter()
                .filter_map(|i| i.id.as_deref())
                .filter(|id| !done.contains(id))
                .collect();
            return Err(format!(
                "the plan's dependencies form a cycle through {}",
                stuck.join(", ")
            ));
        }
    }
}

/// What the planner is asked for (`bosun run --plan`).
const PLANNER_INSTRUCTIONS: &str = "Plan this task before any work is done: call `update_plan` \
once with `run: true` and the task split into nodes, each with an `id`, a `step` that says in \
full what to do (a sub-agent runs it and sees nothing else), `depends_on` (the ids that must be \
done first), `scope` (globs of the files the node may change) and `status: \"pending\"`. Give \
nodes that touch different files different scopes. Do not change any file yourself.";

impl TaskRun {
    /// `bosun run --plan`: the `planner` role's model writes the task graph first (one request
    /// offering only `update_plan`), and the graph runs. Returns the conversation's new
    /// messages' outcome: None to go on with the task's own model. A planner that writes no
    /// graph is a warning and the task goes on without one.
    pub(super) async fn plan_first(
        &mut self,
        system: &str,
        all_tools: &[bosun_protocol::ToolSpec],
        messages: &mut Vec<ChatMessage>,
    ) -> Result<Option<TaskOutcome>, CoreError> {
        let planner = match crate::routing::role_model(
            &self.home,
            "planner",
            &self.provider,
            self.api_key_env.as_deref(),
        ) {
            Ok(p) => p,
            Err(e) => {
                self.emitter
                    .emit(EventMsg::Warning(bosun_protocol::Warning {
                        code: "planner_unavailable".into(),
                        message: format!(
                            "the planner cannot be used ({e}); the task runs without a plan"
                        ),
                    }))?;
                return Ok(None);
            }
        };
        self.env_remove.extend(planner.key_env.clone());
        let tools: Vec<bosun_protocol::ToolSpec> = all_tools
            .iter()
            .filter(|t| t.name == "update_plan")
            .cloned()
            .collect();
        let request = bosun_model::ModelRequest {
            system: format!("{system}\n\n{PLANNER_INSTRUCTIONS}"),
            messages: messages.clone(),
            tools: tools.clone(),
            retry_sampling: None,
        };
        let main = std::mem::replace(&mut self.client, planner.client);
        let turn = self.request_turn(&request).await;
        self.client = main;
        let response = match turn? {
            Ok(r) => r,
            Err(outcome) => return Ok(Some(outcome)),
        };
        let mut calls = response.tool_calls.clone();
        let mut recovered = false;
        if calls.is_empty() {
            calls = bosun_model::recover_tool_calls(&response.text, &tools).calls;
            recovered = true;
            for (i, c) in calls.iter_mut().enumerate() {
                c.id = format!("plan_{}", i + 1);
            }
        }
        let Some(call) = calls.into_iter().find(|c| c.name == "update_plan") else {
            self.emitter.emit(EventMsg::Warning(bosun_protocol::Warning {
                code: "planner_no_plan".into(),
                message: "the planner answered without a plan (no update_plan call); the task runs without one".into(),
            }))?;
            return Ok(None);
        };
        let mut args: serde_json::Value =
            serde_json::from_str(&call.arguments).unwrap_or(serde_json::Value::Null);
        if let Some(obj) = args.as_object_mut() {
            obj.insert("run".into(), serde_json::Value::Bool(true));
        }
        let call = bosun_model::ToolCall {
            arguments: args.to_string(),
            ..call
        };
        if !response.text.trim().is_empty() {
            self.emitter.emit(EventMsg::AssistantMessage(
                bosun_protocol::AssistantMessage {
                    text: response.text.clone(),
                },
            ))?;
        }
        messages.push(ChatMessage::Assistant {
            content: response.text.clone(),
            tool_calls: vec![call.clone()],
            reasoning: response.reasoning.clone(),
        });
        let (result, ended) = self.start_plan(&call, &args, recovered).await?;
        messages.push(result);
        Ok(ended)
    }

    /// An `update_plan{run: true}` call: its begin event, its items read, the graph run.
    pub(super) async fn start_plan(
        &mut self,
        call: &bosun_model::ToolCall,
        args: &serde_json::Value,
        recovered: bool,
    ) -> Result<(ChatMessage, Option<TaskOutcome>), CoreError> {
        let started = Instant::now();
        self.emitter
            .emit(EventMsg::ToolCallBegin(bosun_protocol::ToolCallBegin {
                call_id: CallId(call.id.clone()),
                tool: call.name.clone(),
                args: args.clone(),
                recovered,
            }))?;
        if !self.can_delegate() {
            let text = "error: a plan runs as sub-agents, and this agent is at the deepest level: \
                        call update_plan without `run`, and do the steps yourself"
                .to_string();
            return Ok((self.end_plan_call(&call.id, started, false, text)?, None));
        }
        let items: Vec<PlanItem> = match args
            .get("items")
            .cloned()
            .map(serde_json::from_value::<Vec<PlanItem>>)
        {
            Some(Ok(items)) => items,
            Some(Err(e)) => {
                let text =
                    format!("error: invalid arguments for update_plan: {e}; see the tool's schema");
                return Ok((self.end_plan_call(&call.id, started, false, text)?, None));
            }
            None => {
                let text = "error: update_plan needs `items`".to_string();
                return Ok((self.end_plan_call(&call.id, started, false, text)?, None));
            }
        };
        self.run_plan(&call.id, items, started).await
    }

    /// Runs the graph of an `update_plan{run: true}` call (`call_id`); nodes already
    /// `completed` (a resumed run) are kept. Returns the call's result, and the outcome that
    /// ends the task when the plan was stopped.
    pub(super) async fn run_plan(
        &mut self,
        call_id: &str,
        mut items: Vec<PlanItem>,
        started: Instant,
    ) -> Result<(ChatMessage, Option<TaskOutcome>), CoreError> {
        if let Err(why) = validate(&mut items) {
            return Ok((
                self.end_plan_call(call_id, started, false, format!("error: {why}"))?,
                None,
            ));
        }
        // A node found running (the process died) runs again from the state before it.
        for item in &mut items {
            if item.status == PlanStatus::InProgress {
                item.status = PlanStatus::Pending;
            }
        }
        self.emit_plan(&items)?;
        let mut attempts: HashMap<String, u32> = HashMap::new();
        let mut skipped: HashSet<String> = HashSet::new();
        let mut ended: Option<TaskOutcome> = None;
        loop {
            if self.cancel.is_cancelled() {
                ended = Some(TaskOutcome {
                    status: TaskStatus::Interrupted,
                    summary: "stopped by the user".into(),
                });
                break;
            }
            let settled = |items: &[PlanItem], id: &str| {
                items.iter().any(|i| {
                    i.id.as_deref() == Some(id)
                        && (i.status == PlanStatus::Completed || skipped.contains(id))
                })
            };
            let Some(next) = items.iter().position(|i| {
                i.status == PlanStatus::Pending && i.depends_on.iter().all(|d| settled(&items, d))
            }) else {
                break;
            };
            let id = items[next].id.clone().unwrap_or_default();
            let n = attempts.entry(id.clone()).or_insert(0);
            *n += 1;
            let attempt = *n;
            let role = match (attempt, items[next].role.clone()) {
                (a, _) if a >= LADDER => "escalation".to_string(),
                (_, Some(role)) => role,
                (_, None) => "worker".to_string(),
            };
            let brief = match &items[next].child_task_id {
                // The digest of the last failure goes with a retry.
                Some(_) if attempt > 1 => format!(
                    "{}\n\nAn earlier attempt at this failed:\n{}",
                    items[next].step,
                    self.failure_digest(&items[next])
                ),
                _ => items[next].step.clone(),
            };
            let planned = self.plan_node(call_id, &items[next], &role, brief);
            let planned = match planned {
                Ok(p) => p,
                Err(why) => {
                    items[next].status = PlanStatus::Failed;
                    self.emit_plan(&items)?;
                    let text = format!("error: plan node {id:?}: {why}");
                    return Ok((self.end_plan_call(call_id, started, false, text)?, None));
                }
            };
            items[next].status = PlanStatus::InProgress;
            let settings = self.subagent_settings();
            let caps = settings.caps();
            let base = self.current_commit();
            let (spec, start) = self.child(&planned, &base, false, caps, &[]);
            self.emit_plan(&items)?;
            let result = crate::orchestrate::run_child(
                spec,
                std::sync::Arc::clone(self.emitter.store()),
                std::sync::Arc::clone(&self.emitter),
                start,
            )
            .await;
            let report = self.land_report(&planned, result, false, true).await?;
            match report {
                Ok(r) => {
                    items[next].child_task_id = Some(r.task_id.clone());
                    if r.ok {
                        items[next].status = PlanStatus::Completed;
                        self.emit_plan(&items)?;
                        continue;
                    }
                    self.failures.insert(id.clone(), r.text.clone());
                }
                Err(why) => {
                    self.failures.insert(id.clone(), why);
                }
            }
            if self.cancel.is_cancelled() {
                items[next].status = PlanStatus::Pending;
                continue;
            }
            if attempt < LADDER {
                items[next].status = PlanStatus::Pending;
                self.emit_plan(&items)?;
                continue;
            }
            // The ladder is climbed: the user decides.
            items[next].status = PlanStatus::Failed;
            self.emit_plan(&items)?;
            let failure = self.failures.get(&id).cloned().unwrap_or_default();
            let action = ToolAction::PlanNodeFailed {
                node: id.clone(),
                step: items[next].step.clone(),
                attempts: attempt,
                failure: failure.clone(),
            };
            let ask = AskRequest {
                call_id,
                tool: "update_plan",
                action: &action,
                reason: format!(
                    "plan node {id} failed {attempt} times (its role, a retry with the failure, the escalation model)"
                ),
                rule: "plan escalation".into(),
                source: "built-in".into(),
                suggestions: Vec::new(),
                preview: Some(failure.clone()),
            };
            match self
                .gate
                .ask_decision(ask, &self.emitter, &self.cancel)
                .await?
            {
                None => continue, // stopped: the loop's first check ends it
                Some(a) if a.decision == ApprovalDecision::Deny => {
                    ended = Some(TaskOutcome {
                        status: TaskStatus::ChecksFailed,
                        summary: format!(
                            "the plan stopped at node {id} ({}): it failed {attempt} times{}",
                            items[next].step,
                            a.note
                                .filter(|n| !n.trim().is_empty())
                                .map(|n| format!(" ({n})"))
                                .unwrap_or_default()
                        ),
                    });
                    break;
                }
                Some(a) if a.decision == ApprovalDecision::ApproveOnce => {
                    // Once more, on the escalation model.
                    items[next].status = PlanStatus::Pending;
                    self.emit_plan(&items)?;
                }
                Some(_) => {
                    skipped.insert(id.clone());
                }
            }
        }
        let summary: Vec<serde_json::Value> = items
            .iter()
            .map(|i| {
                serde_json::json!({
                    "id": i.id,
                    "step": i.step,
                    "status": if i.id.as_ref().is_some_and(|id| skipped.contains(id)) { "skipped" } else {
                        match i.status {
                            PlanStatus::Pending => "not run",
                            PlanStatus::InProgress => "interrupted",
                            PlanStatus::Completed => "completed",
                            PlanStatus::Failed => "failed",
                        }
                    },
                    "task_id": i.child_task_id,
                    "attempts": i.id.as_ref().and_then(|id| attempts.get(id)).copied().unwrap_or(0),
                })
            })
            .collect();
        let all_done = items.iter().all(|i| i.status == PlanStatus::Completed);
        let mut text = serde_json::to_string_pretty(&serde_json::json!({
            "plan": if all_done { "completed" } else if ended.is_some() { "stopped" } else { "incomplete" },
            "nodes": summary,
        }))
        .unwrap_or_default();
        if !all_done && ended.is_none() {
            text.push_str(
                "\n\nSome nodes did not run because a node they depend on was skipped or failed.",
            );
        }
        let message = self.end_plan_call(call_id, started, all_done, text)?;
        Ok((message, ended))
    }

    /// The failure of a node's last attempt, for its retry.
    fn failure_digest(&self, item: &PlanItem) -> String {
        let id = item.id.clone().unwrap_or_default();
        let text = self.failures.get(&id).cloned().unwrap_or_default();
        const MAX: usize = 4000;
        if text.len() <= MAX {
            return text;
        }
        let mut cut = MAX;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        format!("{}…", &text[..cut])
    }

    fn plan_node(
        &self,
        call_id: &str,
        item: &PlanItem,
        role: &str,
        brief: String,
    ) -> Result<Planned, String> {
        let scope = if item.scope.is_empty() {
            vec!["**".to_string()]
        } else {
            item.scope.clone()
        };
        // Each node behind its checks: those it names, else the task's end checks.
        let checks: Vec<String> = if item.checks.is_empty() {
            crate::checks::end_checks(&self.verification.plan)
                .into_iter()
                .map(|c| c.name)
                .collect()
        } else {
            item.checks.clone()
        };
        let args = serde_json::json!({
            "brief": brief,
            "scope": scope,
            "checks": checks,
            "role": role,
        });
        let node = item.id.clone().unwrap_or_default();
        let mut planned =
            self.plan_delegate(&format!("{call_id}:{node}"), &args, Instant::now())?;
        planned.plan_node = Some(node);
        Ok(planned)
    }

    fn emit_plan(&self, items: &[PlanItem]) -> Result<(), CoreError> {
        self.emitter.emit(EventMsg::PlanUpdated(PlanUpdated {
            items: items.to_vec(),
        }))?;
        Ok(())
    }

    fn end_plan_call(
        &self,
        call_id: &str,
        started: Instant,
        ok: bool,
        text: String,
    ) -> Result<ChatMessage, CoreError> {
        self.end_call(call_id, started, ok, None, text)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn item(id: &str, deps: &[&str]) -> PlanItem {
        PlanItem {
            id: (!id.is_empty()).then(|| id.to_string()),
            depends_on: deps.iter().map(|d| d.to_string()).collect(),
            ..PlanItem::step(format!("do {id}"), PlanStatus::Pending)
        }
    }

    #[test]
    fn a_graph_gets_ids_and_its_mistakes_are_named() {
        let mut ok = vec![item("", &[]), item("b", &["n1"])];
        validate(&mut ok).unwrap();
        assert_eq!(ok[0].id.as_deref(), Some("n1"));
        let mut dup = vec![item("a", &[]), item("a", &[])];
        assert!(
            validate(&mut dup)
                .unwrap_err()
                .contains("two plan items have the id \"a\"")
        );
        let mut missing = vec![item("a", &["zz"])];
        assert!(
            validate(&mut missing)
                .unwrap_err()
                .contains("depends on \"zz\"")
        );
        let mut cycle = vec![item("a", &["b"]), item("b", &["a"]), item("c", &[])];
        assert!(
            validate(&mut cycle)
                .unwrap_err()
                .contains("cycle through a, b")
        );
        assert!(validate(&mut []).is_err());
    }
}
