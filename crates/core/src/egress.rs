//! A command's network: Bosun's egress proxy for the one call, deciding each connection by the
//! policy's host rules and asking a person, through the approval gate, about a host no rule
//! names. Each connection is journaled as a `network_connection` event before the call ends.

use crate::approvals::{Approval, AskRequest};
use crate::dispatch::{DispatchEnv, save_always_rule};
use bosun_exec::{ConnectionRequest, Decider, Proxy, ProxyConfig, Reporter, Verdict};
use bosun_policy::Decision;
use bosun_protocol::{CallId, EventMsg, NetworkConnection, ToolAction};
use futures::stream::{FuturesUnordered, StreamExt};
use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

/// A connection waiting for the call's decision.
struct Ask {
    request: ConnectionRequest,
    reply: oneshot::Sender<Verdict>,
}

/// The proxy of one command and the connections it asks about.
pub(crate) struct CallProxy {
    proxy: Proxy,
    asks: mpsc::UnboundedReceiver<Ask>,
}

impl CallProxy {
    /// Starts a proxy for the call `call_id` on a fresh socket in `run_dir`; a connection waits
    /// for its decision at most `timeout` (the command's own timeout).
    pub(crate) fn start(
        run_dir: &Path,
        call_id: &str,
        timeout: Duration,
        env: &DispatchEnv<'_>,
    ) -> Result<CallProxy, String> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let socket = run_dir.join(format!("proxy-{}-{n}.sock", std::process::id()));
        let (tx, asks) = mpsc::unbounded_channel();
        let decider: Decider = Arc::new(move |request| {
            let (reply, answer) = oneshot::channel();
            let sent = tx.send(Ask { request, reply }).is_ok();
            Box::pin(async move {
                match answer.await {
                    Ok(verdict) if sent => verdict,
                    _ => Verdict::denied(None, "the command ended before a decision"),
                }
            })
        });
        let emitter = Arc::clone(env.emitter);
        let call = CallId(call_id.to_string());
        let report: Reporter = Arc::new(move |r| {
            emitter.emit_quietly(EventMsg::NetworkConnection(NetworkConnection {
                call_id: call.clone(),
                host: r.host,
                port: r.port,
                decision: r.decision,
                rule: r.rule,
                reason: r.reason,
                bytes_up: r.bytes_up,
                bytes_down: r.bytes_down,
            }));
        });
        let config = ProxyConfig {
            decide_timeout: timeout,
            ..ProxyConfig::default()
        }
        .with_env_overrides()
        .map_err(|e| e.to_string())?;
        let proxy = Proxy::start(&socket, config, decider, report).map_err(|e| e.to_string())?;
        Ok(CallProxy { proxy, asks })
    }

    pub(crate) fn socket(&self) -> PathBuf {
        self.proxy.socket().to_path_buf()
    }

    /// Runs `work` (the command) while deciding its connections; when it ends, a question still
    /// waiting is withdrawn, every connection is reported, and the socket is removed.
    pub(crate) async fn serve_while<F: Future>(
        mut self,
        work: F,
        env: &DispatchEnv<'_>,
        call_id: &str,
        command: &str,
    ) -> F::Output {
        let questions = env.cancel.child_token();
        let mut asking = FuturesUnordered::new();
        // Connections waiting for the same person's answer about a host.
        let mut waiting: HashMap<(String, u16), Vec<oneshot::Sender<Verdict>>> = HashMap::new();
        tokio::pin!(work);
        let output = loop {
            tokio::select! {
                output = &mut work => break output,
                Some(ask) = self.asks.recv() => {
                    let Ask { request, reply } = ask;
                    let target = (request.host.clone(), request.port);
                    if let Some(verdict) = decide_by_policy(env, command, &request.host) {
                        let _ = reply.send(verdict);
                    } else if let Some(replies) = waiting.get_mut(&target) {
                        replies.push(reply);
                    } else {
                        waiting.insert(target.clone(), vec![reply]);
                        let asked = ask_person(env, call_id, command, request, questions.clone());
                        asking.push(async move { (target, asked.await) });
                    }
                }
                Some((target, verdict)) = asking.next(), if !asking.is_empty() => {
                    for reply in waiting.remove(&target).unwrap_or_default() {
                        let _ = reply.send(verdict.clone());
                    }
                }
            }
        };
        questions.cancel();
        while asking.next().await.is_some() {}
        self.proxy.shutdown().await;
        output
    }
}

/// The policy's verdict about `host`, or `None` when it asks (and nothing answered it for
/// this task yet).
fn decide_by_policy(env: &DispatchEnv<'_>, command: &str, host: &str) -> Option<Verdict> {
    let decided = match env.policy.read() {
        Ok(policy) => policy.check_host(command, host),
        Err(_) => return Some(Verdict::denied(None, "Bosun's policy is unavailable")),
    };
    let d = decided.decision;
    match d.decision {
        Decision::Allow => Some(Verdict::allowed(d.rule, decided.named)),
        Decision::Deny => Some(Verdict::denied(Some(d.rule), d.reason)),
        Decision::Ask
            if env
                .gate
                .approved_for_task("run_command", &network(host, 0, command)) =>
        {
            Some(Verdict::approved(None, false))
        }
        Decision::Ask => None,
    }
}

fn network(host: &str, port: u16, command: &str) -> ToolAction {
    ToolAction::Network {
        host: host.to_string(),
        port,
        command: command.to_string(),
    }
}

/// Asks through the approval gate about a host no rule names; "always" writes the host to
/// `[network] domains` as commands' "always" writes their rule.
async fn ask_person(
    env: &DispatchEnv<'_>,
    call_id: &str,
    command: &str,
    request: ConnectionRequest,
    cancel: CancellationToken,
) -> Verdict {
    let action = network(&request.host, request.port, command);
    let (decided, suggestions) = match env.policy.read() {
        Ok(p) => (p.check_host(command, &request.host), p.suggestions(&action)),
        Err(_) => return Verdict::denied(None, "Bosun's policy is unavailable"),
    };
    let d = decided.decision;
    let ask = AskRequest {
        call_id,
        tool: "run_command",
        action: &action,
        reason: d.reason.clone(),
        rule: d.rule.clone(),
        source: d.source.clone(),
        suggestions,
        preview: None,
    };
    match env.gate.ask(ask, env.emitter, &cancel).await {
        Ok(Approval::Approved) => Verdict::approved(None, false),
        Ok(Approval::Always {
            answer,
            mut resolved,
        }) => {
            let saved = save_always_rule(env, &action, &answer, &mut resolved);
            env.emitter
                .emit_quietly(EventMsg::ApprovalResolved(*resolved));
            // Named by the rule just written: judged again, so a glob does not open a private
            // address, while the exact host does.
            let named = saved
                && env
                    .policy
                    .read()
                    .is_ok_and(|p| p.check_host(command, &request.host).named);
            let rule = answer.rule.map(|r| format!("network.domains \"{r}\""));
            Verdict::approved(rule, named)
        }
        Ok(Approval::Denied { note }) => {
            let why = match note.filter(|n| !n.trim().is_empty()) {
                Some(n) => format!("the user denied {}:{}: {n}", request.host, request.port),
                None => format!("the user denied {}:{}", request.host, request.port),
            };
            Verdict::denied(Some(d.rule), why)
        }
        Ok(Approval::Cancelled) => Verdict::denied(None, "the command ended before an answer"),
        Err(e) => Verdict::denied(None, format!("the approval failed: {e}")),
    }
}

/// Removes proxy sockets in `run_dir` whose Bosun process is gone (a `kill -9` leaves them;
/// the live process's own are `proxy-<its pid>-<n>.sock` and stay).
pub(crate) fn remove_stale_sockets(run_dir: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir(run_dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix("proxy-")
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}
