//! One tool call: arguments → tool lookup → policy → tool → begin/end events → the result the
//! model is told. Begin and end come from one [`CallEvents`], so what the UI shows and what the
//! model is told cannot drift.

use crate::approvals::{Approval, ApprovalGate, AskRequest};
use crate::egress::CallProxy;
use crate::emitter::StreamedOutput;
use crate::policy_files::PolicyFiles;
use crate::sandboxing::Sandboxing;
use crate::{CoreError, Emitter};
use bosun_model::{ChatMessage, ToolCall};
use bosun_policy::{Decision, Policy};
use bosun_protocol::{
    ApprovalAnswer, ApprovalResolved, CallId, EventMsg, OutputStream, PlanItem, RuleScope,
    ToolAction, ToolCallBegin, ToolCallEnd, ToolCallStatus, ToolOutputDelta,
};
use bosun_tools::{ToolContext, ToolError, ToolOutput, ToolRegistry, Touched};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::RwLock;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// What the loop needs from a finished tool call.
pub struct Dispatched {
    /// The tool result for the conversation.
    pub message: ChatMessage,
    pub touched: Touched,
    pub plan: Option<Vec<PlanItem>>,
    pub tool: String,
}

/// Everything a tool call runs with.
pub struct DispatchEnv<'a> {
    /// Read-denied files committed in the task's base (see `TaskRun::committed_secrets`).
    pub committed_secrets: &'a [String],
    pub registry: &'a ToolRegistry,
    pub policy: &'a RwLock<Policy>,
    pub policy_files: &'a PolicyFiles,
    pub gate: &'a ApprovalGate,
    pub sandboxing: &'a Sandboxing,
    pub emitter: &'a Arc<Emitter>,
    pub worktree: PathBuf,
    pub cancel: &'a CancellationToken,
    pub env_remove: Vec<String>,
    /// The edit guard's trees of the files the task read or edited.
    pub guard: &'a std::sync::Mutex<bosun_syntax::GuardCache>,
    /// The task's repository map, for `symbols`.
    pub map: Option<Arc<bosun_context::LiveMap>>,
    /// A sub-agent's scope: its edit tools refuse every other path.
    pub scope: Option<&'a crate::orchestrate::Scope>,
}

struct CallEvents<'a> {
    emitter: &'a Emitter,
    call_id: CallId,
    started: Instant,
}

impl<'a> CallEvents<'a> {
    fn begin(
        emitter: &'a Emitter,
        call: &ToolCall,
        args: &serde_json::Value,
        recovered: bool,
    ) -> Result<Self, CoreError> {
        let call_id = CallId(call.id.clone());
        emitter.emit(EventMsg::ToolCallBegin(ToolCallBegin {
            call_id: call_id.clone(),
            tool: call.name.clone(),
            args: args.clone(),
            recovered,
        }))?;
        Ok(CallEvents {
            emitter,
            call_id,
            started: Instant::now(),
        })
    }

    /// Emits the end event and returns the conversation message with the same content.
    fn end(
        self,
        status: ToolCallStatus,
        exit_code: Option<i32>,
        error: Option<String>,
        output: String,
    ) -> Result<ChatMessage, CoreError> {
        let duration_ms = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.emitter.emit(EventMsg::ToolCallEnd(ToolCallEnd {
            call_id: self.call_id.clone(),
            status,
            exit_code,
            error: error.clone(),
            output: output.clone(),
            duration_ms,
        }))?;
        let is_error = status != ToolCallStatus::Success;
        let content = tool_result_content(error.as_deref(), output);
        Ok(ChatMessage::Tool {
            call_id: self.call_id.0,
            content,
            is_error,
        })
    }

    fn fail(self, message: String) -> Result<ChatMessage, CoreError> {
        self.end(ToolCallStatus::Error, None, Some(message), String::new())
    }
}

/// What the model is told for a finished tool call: the error (if any) above the output.
pub(crate) fn tool_result_content(error: Option<&str>, output: String) -> String {
    match (error, output.is_empty()) {
        (Some(e), true) => format!("error: {e}"),
        (Some(e), false) => format!("error: {e}\n{output}"),
        (None, _) => output,
    }
}

/// Writes an "approve always" rule to the chosen policy file and takes the rebuilt policy;
/// `resolved` says which file, or that the rule could not be saved (the call is then approved
/// once). True when it was saved.
pub(crate) fn save_always_rule(
    env: &DispatchEnv<'_>,
    action: &ToolAction,
    answer: &ApprovalAnswer,
    resolved: &mut ApprovalResolved,
) -> bool {
    // An MCP tool's rule only counts in the user's own file (a repository's cannot allow one).
    let scope = answer.scope.unwrap_or(match action {
        ToolAction::Mcp { .. } => RuleScope::User,
        _ => RuleScope::default(),
    });
    let rule = answer.rule.clone().unwrap_or_default();
    match env.policy_files.add_rule(scope, action, &rule) {
        Ok((file, policy)) => {
            resolved.rule_file = Some(file.display().to_string());
            if let Ok(mut p) = env.policy.write() {
                *p = policy;
            }
            true
        }
        Err(e) => {
            resolved.note = Some(format!("approved once: the rule could not be saved: {e}"));
            false
        }
    }
}

fn policy_grants_network(env: &DispatchEnv<'_>, command: &str) -> Result<bool, CoreError> {
    let policy = env
        .policy
        .read()
        .map_err(|_| CoreError::Internal("policy lock poisoned".into()))?;
    Ok(policy.network_grant(command).is_some())
}

/// The timeout `run_command` will give the command (its `timeout_secs`, capped).
fn command_timeout(args: &serde_json::Value, ctx: &ToolContext) -> Duration {
    match args.get("timeout_secs").and_then(|v| v.as_u64()) {
        Some(secs) if secs > 0 => Duration::from_secs(secs).min(ctx.max_timeout),
        _ => ctx.default_timeout,
    }
}

/// Lines an edit tool would add or remove, for the policy's `max_lines` condition.
fn changed_lines(tool: &str, args: &serde_json::Value) -> usize {
    let lines = |key: &str| {
        args.get(key)
            .and_then(|v| v.as_str())
            .map_or(0, |s| s.lines().count())
    };
    match tool {
        "write_file" => lines("content"),
        "edit_file" => lines("old_string") + lines("new_string"),
        "apply_patch" => args.get("patch").and_then(|v| v.as_str()).map_or(0, |p| {
            p.lines()
                .filter(|l| {
                    (l.starts_with('+') && !l.starts_with("+++"))
                        || (l.starts_with('-') && !l.starts_with("---"))
                })
                .count()
        }),
        _ => 0,
    }
}

/// Parses the arguments as the model sent them. Empty arguments mean `{}`; text that is not JSON
/// is kept as a string so the journal shows what the model actually wrote.
/// The values behind the redaction placeholders of a `write_file` or `edit_file`, put back
/// from the file as it is (see [`Redaction::restore`]); an error when one cannot be.
fn restore_secrets(
    tool: &str,
    mut args: serde_json::Value,
    worktree: &std::path::Path,
    redaction: Option<&crate::redaction::Redaction>,
) -> Result<serde_json::Value, String> {
    let (Some(redaction), "write_file" | "edit_file") = (redaction, tool) else {
        return Ok(args);
    };
    let fields: &[&str] = if tool == "write_file" {
        &["content"]
    } else {
        &["old_string", "new_string"]
    };
    let holds = |k: &str| args[k].as_str().is_some_and(|t| t.contains("[REDACTED:"));
    if !fields.iter().any(|k| holds(k)) {
        return Ok(args);
    }
    let path = args["path"].as_str().unwrap_or_default().to_string();
    // Read only a regular file inside the worktree (the tool itself confines the write).
    let inside = !path.is_empty()
        && std::path::Path::new(&path).components().all(|c| {
            matches!(
                c,
                std::path::Component::Normal(_) | std::path::Component::CurDir
            )
        });
    let current = inside
        .then(|| worktree.join(&path))
        .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file() && m.len() <= 4 << 20))
        .and_then(|p| std::fs::read_to_string(p).ok())
        .unwrap_or_default();
    let old = args["old_string"].as_str().map(str::to_string);
    let mut texts: Vec<String> = fields
        .iter()
        .map(|k| args[*k].as_str().unwrap_or_default().to_string())
        .collect();
    let mut refs: Vec<&mut String> = texts.iter_mut().collect();
    redaction
        .restore(&current, old.as_deref(), &mut refs)
        .map_err(|kind| {
            format!(
                "`{path}`: the text holds `[REDACTED:{kind}]`, a placeholder Bosun shows instead \
                 of a secret, and the file has no value of that kind there to put back; nothing \
                 was written. Keep the line as the file has it, or leave the secret out"
            )
        })?;
    for (k, t) in fields.iter().zip(texts) {
        if args.get(*k).is_some() {
            args[*k] = serde_json::Value::String(t);
        }
    }
    Ok(args)
}

fn parse_args(raw: &str) -> Result<serde_json::Value, (serde_json::Value, String)> {
    if raw.trim().is_empty() {
        return Ok(serde_json::json!({}));
    }
    match serde_json::from_str::<serde_json::Value>(raw) {
        Ok(v @ serde_json::Value::Object(_)) => Ok(v),
        Ok(other) => Err((
            other,
            "the arguments must be a JSON object with the tool's parameters".into(),
        )),
        Err(e) => Err((
            serde_json::Value::String(raw.to_string()),
            format!("the arguments were not valid JSON ({e}); send them again as one JSON object"),
        )),
    }
}

/// A tool call that is not run because an earlier call of the same model response has its id:
/// it still gets its begin and end events, and the model is told why (one result per id it
/// sent, never the first call's result twice).
pub fn refuse_duplicate(
    call: &ToolCall,
    recovered: bool,
    emitter: &Emitter,
) -> Result<ChatMessage, CoreError> {
    let args = parse_args(&call.arguments).unwrap_or_else(|(shown, _)| shown);
    CallEvents::begin(emitter, call, &args, recovered)?.fail(format!(
        "duplicate tool call id `{}`: an earlier call in this response has the same id, so this call was not run; give every call its own id, and call it again if it is still needed",
        call.id
    ))
}

pub async fn dispatch(
    call: &ToolCall,
    recovered: bool,
    env: &DispatchEnv<'_>,
) -> Result<Dispatched, CoreError> {
    let emitter: &Emitter = env.emitter;
    let nothing = |message| Dispatched {
        message,
        touched: Touched::Nothing,
        plan: None,
        tool: call.name.clone(),
    };
    let args = match parse_args(&call.arguments) {
        Ok(a) => a,
        Err((shown, why)) => {
            let events = CallEvents::begin(emitter, call, &shown, recovered)?;
            return Ok(nothing(events.fail(why)?));
        }
    };
    let events = CallEvents::begin(emitter, call, &args, recovered)?;
    // A file the model saw redacted, written back: its secrets put back, never placeholders.
    let args = match restore_secrets(&call.name, args, &env.worktree, emitter.redaction()) {
        Ok(args) => args,
        Err(why) => return Ok(nothing(events.fail(why)?)),
    };
    let Some(handler) = env.registry.get(&call.name) else {
        let known: Vec<String> = env.registry.specs().into_iter().map(|s| s.name).collect();
        return Ok(nothing(events.fail(format!(
            "there is no tool named {:?}; the tools are: {}",
            call.name,
            known.join(", ")
        ))?));
    };
    let action = match handler.action(&args) {
        Ok(a) => a,
        Err(ToolError::Model(m)) => return Ok(nothing(events.fail(m)?)),
        Err(ToolError::Fatal(m)) => {
            events.fail(m.clone())?;
            return Err(CoreError::Tool(m));
        }
    };
    // A sub-agent changes only its scope.
    if let (Some(scope), ToolAction::Write { paths }) = (env.scope, &action) {
        // Through a symlink, the file written is the link's target: it must be in scope too.
        let outside: Vec<&String> = paths
            .iter()
            .filter(|p| {
                !scope.allows(p)
                    || bosun_tools::resolve_symlinks_in(&env.worktree, p)
                        .is_some_and(|real| !scope.allows(&real))
            })
            .collect();
        if !outside.is_empty() {
            let list: Vec<&str> = outside.iter().map(|p| p.as_str()).collect();
            let message = events.end(
                ToolCallStatus::Denied,
                None,
                Some(format!(
                    "outside this sub-agent's scope: {} (it may change only {}); leave that file to the parent task",
                    list.join(", "),
                    scope.globs().join(", ")
                )),
                String::new(),
            )?;
            return Ok(nothing(message));
        }
    }
    let (mut decision, suggestions, sandbox_rules) = {
        let policy = env
            .policy
            .read()
            .map_err(|_| CoreError::Internal("policy lock poisoned".into()))?;
        let mut decision = policy.decide(&action);
        // Through a symlink inside the worktree, the file read or written is the link's
        // target: the path rules judge that one too.
        let real = |paths: &[String]| -> Vec<String> {
            paths
                .iter()
                .filter_map(|p| bosun_tools::resolve_symlinks_in(&env.worktree, p))
                .collect()
        };
        match &action {
            ToolAction::Read { paths } if !real(paths).is_empty() => {
                decision =
                    decision.stricter(policy.decide(&ToolAction::Read { paths: real(paths) }));
            }
            ToolAction::Write { paths } if !real(paths).is_empty() => {
                decision =
                    decision.stricter(policy.decide(&ToolAction::Write { paths: real(paths) }));
            }
            _ => {}
        }
        if let ToolAction::Write { paths } = &action {
            // Approval conditions: a change touching many files or lines asks.
            let lines = changed_lines(&call.name, &args);
            decision = decision.stricter(policy.check_change(paths.len(), lines));
        }
        (decision, policy.suggestions(&action), policy.sandbox())
    };
    // A committed secret is in the object store, which the sandbox cannot hide: git commands
    // that print stored content are denied in such a task.
    // (A decision that already denies keeps its own rule and reason.)
    if let (false, bosun_protocol::ToolAction::Command { command }, false) = (
        env.committed_secrets.is_empty(),
        &action,
        decision.decision == Decision::Deny,
    ) && let Some(git) = bosun_policy::git_prints_objects(command)
    {
        decision.decision = Decision::Deny;
        decision.rule = "committed secrets".into();
        decision.source = "built-in".into();
        decision.reason = format!(
            "`{git}` can print stored file content, and this repository's base commit holds read-denied files ({}); git runs here only for status, add, commit, branch, and logs or diffs of names and counts (--stat, --name-only)",
            env.committed_secrets.join(", ")
        );
    }
    // A command that cannot be confined is never run unasked.
    if let (Some(reason), ToolAction::Command { .. }, Decision::Allow) =
        (env.sandboxing.unavailable(), &action, decision.decision)
    {
        decision.decision = Decision::Ask;
        decision.reason = format!("commands cannot be sandboxed here ({reason}), so each one asks");
        decision.rule = "sandbox unavailable".into();
        decision.source = "built-in".into();
    }
    // Without a network namespace or seccomp, a command could reach the network (UDP):
    // never unasked.
    if let (true, bosun_protocol::ToolAction::Command { .. }, Decision::Allow) = (
        env.sandboxing.network_uncontained(),
        &action,
        decision.decision,
    ) {
        decision.decision = Decision::Ask;
        decision.reason = "network not contained".into();
        decision.rule = "network not contained".into();
        decision.source = "built-in".into();
    }
    match decision.decision {
        Decision::Allow => {}
        Decision::Deny => {
            let why = format!(
                "denied by the policy: {} ({}, {})",
                decision.reason, decision.rule, decision.source
            );
            let message = events.end(ToolCallStatus::Denied, None, Some(why), String::new())?;
            return Ok(nothing(message));
        }
        Decision::Ask if env.gate.approved_for_task(&call.name, &action) => {}
        Decision::Ask => {
            let request = AskRequest {
                call_id: &call.id,
                tool: &call.name,
                action: &action,
                reason: decision.reason.clone(),
                rule: decision.rule.clone(),
                source: decision.source.clone(),
                suggestions,
                preview: crate::preview::edit_preview(&env.worktree, &call.name, &args),
            };
            match env.gate.ask(request, emitter, env.cancel).await? {
                Approval::Approved => {}
                Approval::Always {
                    answer,
                    mut resolved,
                } => {
                    save_always_rule(env, &action, &answer, &mut resolved);
                    emitter.emit(EventMsg::ApprovalResolved(*resolved))?;
                }
                Approval::Denied { note } => {
                    let why = match note.filter(|n| !n.trim().is_empty()) {
                        Some(n) => format!("the user denied this: {n}"),
                        None => "the user denied this".to_string(),
                    };
                    let message =
                        events.end(ToolCallStatus::Denied, None, Some(why), String::new())?;
                    return Ok(nothing(message));
                }
                Approval::Cancelled => {
                    let message = events.end(
                        ToolCallStatus::Denied,
                        None,
                        Some("not run: the task was stopped while waiting for approval".into()),
                        String::new(),
                    )?;
                    return Ok(nothing(message));
                }
            }
        }
    }

    // The edit guard needs what the files held before the edit.
    let before = match &action {
        ToolAction::Write { paths } => crate::guard::Before::read(&env.worktree, paths),
        _ => crate::guard::Before::default(),
    };
    let call_id = CallId(call.id.clone());
    let output = Arc::new(StreamedOutput::new(env.emitter, move |stream, chunk| {
        EventMsg::ToolOutputDelta(ToolOutputDelta {
            call_id: call_id.clone(),
            stream,
            chunk,
        })
    }));
    let sink = Arc::clone(&output);
    let ctx = ToolContext {
        worktree: env.worktree.clone(),
        call_id: CallId(call.id.clone()),
        cancel: env.cancel.child_token(),
        output: Arc::new(move |stream: OutputStream, chunk: String| {
            sink.piece(stream, Some(&chunk));
        }),
        default_timeout: Duration::from_secs(120),
        max_timeout: Duration::from_secs(600),
        env: Vec::new(),
        env_remove: env.env_remove.clone(),
        sandbox: None,
        sandbox_exe: PathBuf::new(),
        map: env.map.clone(),
        readable: env.policy.read().ok().map(|p| {
            let policy = p.clone();
            let readable: bosun_tools::Readable =
                Arc::new(move |path: &str| !policy.is_read_denied(path));
            readable
        }),
    };
    let mut ctx = ctx;
    // A sandboxed command the policy grants network gets a proxy of its own, never the raw
    // network.
    let command = match &action {
        ToolAction::Command { command } => Some(command.as_str()),
        _ => None,
    };
    let proxy = match (env.sandboxing.run_dir(), command) {
        (Some(run_dir), Some(command)) if policy_grants_network(env, command)? => {
            let timeout = command_timeout(&args, &ctx);
            match CallProxy::start(run_dir, &call.id, timeout, env) {
                Ok(p) => Some(p),
                Err(e) => {
                    let message = events.fail(format!("the network proxy could not start: {e}"))?;
                    return Ok(nothing(message));
                }
            }
        }
        _ => None,
    };
    match env
        .sandboxing
        .policy(proxy.as_ref().map(CallProxy::socket), &sandbox_rules)
    {
        Ok(Some((policy, exe))) => {
            ctx.sandbox = Some(policy);
            ctx.sandbox_exe = exe;
        }
        Ok(None) => {}
        Err(e) => {
            let message = events.fail(format!("the sandbox could not be prepared: {e}"))?;
            return Ok(nothing(message));
        }
    }
    let handled = match (proxy, command) {
        (Some(proxy), Some(command)) => {
            let work = handler.handle(args, &ctx);
            proxy.serve_while(work, env, &call.id, command).await
        }
        _ => handler.handle(args, &ctx).await,
    };
    output.finish();
    match handled {
        Ok(ToolOutput {
            content,
            status,
            exit_code,
            touched,
            plan,
        }) => {
            emitter.check()?;
            // The tool's own output already says how it failed (e.g. "Exit code: 2"); only a
            // timeout gets a separate error line.
            let error = match status {
                ToolCallStatus::TimedOut => Some("timed out; the command was killed".into()),
                _ => None,
            };
            // An edit that broke a file that parsed stays applied, and the result says so.
            let mut content = content;
            if let Ok(mut cache) = env.guard.lock() {
                match (&touched, &action) {
                    (Touched::Paths(paths), ToolAction::Write { .. }) => {
                        for broken in before.broken_by_edit(&env.worktree, paths, &mut cache) {
                            content.push_str(&format!("\n[bosun: {broken}; fix it]"));
                        }
                    }
                    (_, ToolAction::Read { paths }) if call.name == "read_file" => {
                        crate::guard::remember_read(&env.worktree, paths, &mut cache);
                    }
                    _ => {}
                }
            }
            let message = events.end(status, exit_code, error, content)?;
            Ok(Dispatched {
                message,
                touched,
                plan,
                tool: call.name.clone(),
            })
        }
        Err(ToolError::Model(m)) => Ok(nothing(events.fail(m)?)),
        Err(ToolError::Fatal(m)) => {
            events.fail(m.clone())?;
            Err(CoreError::Tool(m))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse_args;

    #[test]
    fn arguments_are_parsed_leniently_but_never_guessed() {
        assert_eq!(parse_args("").ok(), Some(serde_json::json!({})));
        assert!(parse_args("{\"path\": \"a\"}").is_ok());
        let (shown, why) = parse_args("{\"path\": ").err().unwrap_or_default();
        assert_eq!(shown, serde_json::json!("{\"path\": "));
        assert!(why.contains("not valid JSON"), "{why}");
        let (_, why) = parse_args("[1]").err().unwrap_or_default();
        assert!(why.contains("JSON object"), "{why}");
    }
}
