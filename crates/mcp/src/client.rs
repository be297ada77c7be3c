//! Connections to MCP servers: starting one (a sandboxed process behind two FIFOs, or a
//! streamable-HTTP endpoint), listing its tools, calling one with a timeout, and starting it
//! again after it crashed, hung or sent garbage.

use crate::config::{McpServerConfig, Transport};
use bosun_exec::{CommandSpec, SandboxPolicy};
use rmcp::RoleClient;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RunningService, ServiceExt};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// The most of a server's stderr kept, to explain a crash.
const STDERR_TAIL: usize = 4 * 1024;

/// How stdio servers are started.
#[derive(Debug, Clone)]
pub enum Confinement {
    /// Sandboxed like a command: this policy and the trampoline binary.
    Sandbox { policy: SandboxPolicy, exe: PathBuf },
    /// The user turned the sandbox off (`--no-sandbox`): unconfined, secret-looking variables
    /// still dropped from the environment.
    Unconfined,
    /// The sandbox cannot work here: stdio servers do not start (never silently unconfined).
    Unavailable(String),
}

/// Where and how a task's servers run.
#[derive(Debug, Clone)]
pub struct Launch {
    /// The task's worktree: a stdio server may write in it (`${BOSUN_WORKTREE}` in its args
    /// and env values, and the variable `BOSUN_WORKTREE`, name it). It is not the server's
    /// working directory: the agent writes there, and a server must never run what the agent
    /// wrote (an `npx` that prefers the project's `node_modules`, a `python -m` that puts the
    /// working directory first).
    pub worktree: PathBuf,
    /// Where each server gets a private directory (its working directory and `TMPDIR`, the
    /// only other place it may write). Agent commands cannot write it.
    pub scratch: PathBuf,
    /// Where the servers' FIFOs go: hidden from agent commands and from the servers
    /// themselves (a server gets its ends as fds 3 and 4, opened outside its sandbox).
    pub io_dir: PathBuf,
    /// Where each server keeps a cache across starts (npm's, pip's, uv's, XDG's): one per
    /// exact configuration, so no other server — a repository's among them — can fill it.
    pub cache_dir: PathBuf,
    pub confinement: Confinement,
    /// The network a sandboxed server gets when the policy grants its command line the
    /// network: Bosun's egress proxy, deciding each connection by the policy's host rules.
    /// None: no server reaches the network.
    pub network: Option<Network>,
}

/// The verdict on a connection from a command line to a host.
pub type HostDecider = Arc<dyn Fn(&str, &str) -> bosun_exec::Verdict + Send + Sync>;
/// Journals a finished connection of the named server.
pub type ConnectionSink = Arc<dyn Fn(&str, bosun_exec::ConnectionReport) + Send + Sync>;

/// Decides a sandboxed server's connections, as the policy decides a command's.
#[derive(Clone)]
pub struct Network {
    /// Where the proxies' sockets go (`$BOSUN_HOME/run`, which commands cannot write).
    pub run_dir: PathBuf,
    /// Whether the policy grants this command line the network.
    pub grants: Arc<dyn Fn(&str) -> bool + Send + Sync>,
    /// The verdict on a connection from the command line to a host. A host no rule allows is
    /// refused: a server runs between tool calls, with no one to ask.
    pub decide: HostDecider,
    /// Journals a finished connection of the named server.
    pub report: ConnectionSink,
}

impl std::fmt::Debug for Network {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Network")
            .field("run_dir", &self.run_dir)
            .finish_non_exhaustive()
    }
}

/// A server's tool as listed.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[ts(
    export,
    export_to = "../../../ui/src/lib/bindings/",
    rename = "McpTool"
)]
pub struct ListedTool {
    /// The server's own name for it.
    pub name: String,
    /// What the model calls it (`mcp__<server>__<tool>`).
    pub model_name: String,
    pub description: String,
    #[ts(type = "unknown")]
    pub input_schema: serde_json::Value,
}

/// A server's state, for `bosun mcp list` and the Settings view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[ts(
    export,
    export_to = "../../../ui/src/lib/bindings/",
    rename = "McpServerState"
)]
#[serde(rename_all = "snake_case")]
pub enum ServerState {
    Running,
    Failed,
    Disabled,
    /// Declared by a repository and not approved yet.
    AwaitingApproval,
    /// Not started yet.
    Idle,
}

/// Why a call or a start failed: said to the model as the tool result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct McpError(pub String);

/// One configured server and, while it runs, its connection.
pub struct Server {
    pub name: String,
    pub config: McpServerConfig,
    launch: Launch,
    conn: tokio::sync::Mutex<Option<Arc<Conn>>>,
    last_error: Mutex<Option<String>>,
}

struct Conn {
    service: RunningService<RoleClient, ()>,
    /// Set once the process exited (stdio), with what it said last.
    exited: watch::Receiver<Option<String>>,
    /// An HTTP server's: kept so `exited` never fires.
    _never_exits: Option<watch::Sender<Option<String>>>,
    /// Ends the process when the connection is dropped.
    _process: Option<Process>,
}

/// A running stdio server: cancelling ends its whole process tree.
struct Process {
    stop: CancellationToken,
    /// Its FIFOs' directory and its private one, removed when it ends.
    dirs: Vec<PathBuf>,
    /// Its egress proxy, when the policy grants it the network (stopped with it).
    _proxy: Option<bosun_exec::Proxy>,
}

impl Drop for Process {
    fn drop(&mut self) {
        self.stop.cancel();
        for d in &self.dirs {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

impl Server {
    pub fn new(name: String, config: McpServerConfig, launch: Launch) -> Server {
        Server {
            name,
            config,
            launch,
            conn: tokio::sync::Mutex::new(None),
            last_error: Mutex::new(None),
        }
    }

    /// The last failure to start or call, if the server is not running now.
    pub fn last_error(&self) -> Option<String> {
        self.last_error.lock().ok().and_then(|e| e.clone())
    }

    fn note_error(&self, e: &str) {
        if let Ok(mut last) = self.last_error.lock() {
            *last = Some(e.to_string());
        }
    }

    /// Starts the server (if it is not running) and lists its tools.
    pub async fn list_tools(&self) -> Result<Vec<ListedTool>, McpError> {
        let conn = self.connected().await?;
        let listing =
            tokio::time::timeout(self.config.startup_timeout(), conn.service.list_all_tools())
                .await;
        let tools = match listing {
            Err(_) => {
                let e = format!(
                    "the MCP server `{}` did not list its tools within {} s",
                    self.name,
                    self.config.startup_timeout().as_secs()
                );
                self.reset(&conn, &e).await;
                return Err(McpError(e));
            }
            Ok(Err(e)) => {
                let e = format!(
                    "the MCP server `{}` could not list its tools: {e}",
                    self.name
                );
                self.reset(&conn, &e).await;
                return Err(McpError(e));
            }
            Ok(Ok(tools)) => tools,
        };
        let mut out = Vec::new();
        for tool in tools {
            let v = serde_json::to_value(&tool).unwrap_or_default();
            let name = v["name"].as_str().unwrap_or_default().to_string();
            if name.is_empty() {
                continue;
            }
            let mut schema = v["inputSchema"].clone();
            if !schema.is_object() {
                schema = serde_json::json!({"type": "object", "properties": {}});
            }
            out.push(ListedTool {
                model_name: crate::names::tool_name(&self.name, &name),
                description: v["description"].as_str().unwrap_or_default().to_string(),
                input_schema: schema,
                name,
            });
        }
        Ok(out)
    }

    /// Whether a connection is up now.
    pub async fn is_running(&self) -> bool {
        self.conn.lock().await.is_some()
    }

    /// Calls `tool` with `arguments`; the result's text, and whether the server said it failed.
    pub async fn call(
        &self,
        tool: &str,
        arguments: serde_json::Value,
        cancel: &CancellationToken,
    ) -> Result<(String, bool), McpError> {
        let serde_json::Value::Object(arguments) = arguments else {
            return Err(McpError(format!(
                "the arguments of `{tool}` must be a JSON object (see its schema)"
            )));
        };
        let conn = self.connected().await?;
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
        let limit = self.config.tool_timeout();
        let outcome = tokio::select! {
            r = tokio::time::timeout(limit, conn.service.call_tool(params)) => r,
            () = gone(conn.exited.clone()) => {
                let said = conn.exited.borrow().clone().unwrap_or_default();
                let e = format!(
                    "the MCP server `{}` exited while `{tool}` ran{said}; it starts again on the next call",
                    self.name
                );
                self.reset(&conn, &e).await;
                return Err(McpError(e));
            }
            _ = cancel.cancelled() => {
                return Err(McpError(format!("`{tool}` was cancelled (the task was stopped)")));
            }
        };
        match outcome {
            Err(_) => {
                let e = format!(
                    "the MCP server `{}` did not answer `{tool}` within {} s (tool_timeout_sec); it was stopped and starts again on the next call",
                    self.name,
                    limit.as_secs()
                );
                self.reset(&conn, &e).await;
                Err(McpError(e))
            }
            Ok(Err(e)) => {
                let said = conn.exited.borrow().clone().unwrap_or_default();
                let e = format!(
                    "the MCP server `{}` failed on `{tool}`: {e}{said}; it starts again on the next call",
                    self.name
                );
                self.reset(&conn, &e).await;
                Err(McpError(e))
            }
            Ok(Ok(result)) => {
                let v = serde_json::to_value(&result).unwrap_or_default();
                Ok((result_text(&v), v["isError"].as_bool().unwrap_or(false)))
            }
        }
    }

    /// Ends the connection (and the process), if it is still the one that failed.
    async fn reset(&self, failed: &Arc<Conn>, why: &str) {
        self.note_error(why);
        let mut slot = self.conn.lock().await;
        if slot.as_ref().is_some_and(|c| Arc::ptr_eq(c, failed)) {
            *slot = None;
        }
    }

    /// Stops the server.
    pub async fn stop(&self) {
        let conn = self.conn.lock().await.take();
        if let Some(conn) = conn {
            conn.service.cancellation_token().cancel();
        }
    }

    async fn connected(&self) -> Result<Arc<Conn>, McpError> {
        let mut slot = self.conn.lock().await;
        if let Some(conn) = slot.as_ref() {
            if conn.exited.borrow().is_none() && !conn.service.is_closed() {
                return Ok(Arc::clone(conn));
            }
            *slot = None;
        }
        let started = tokio::time::timeout(self.config.startup_timeout(), self.start()).await;
        let conn = match started {
            Ok(Ok(conn)) => Arc::new(conn),
            Ok(Err(e)) => {
                self.note_error(&e.0);
                return Err(e);
            }
            Err(_) => {
                let e = format!(
                    "the MCP server `{}` did not start within {} s (startup_timeout_sec)",
                    self.name,
                    self.config.startup_timeout().as_secs()
                );
                self.note_error(&e);
                return Err(McpError(e));
            }
        };
        *slot = Some(Arc::clone(&conn));
        if let Ok(mut last) = self.last_error.lock() {
            *last = None;
        }
        Ok(conn)
    }

    async fn start(&self) -> Result<Conn, McpError> {
        match self.config.transport() {
            Transport::Http => self.start_http().await,
            Transport::Stdio => self.start_stdio().await,
        }
    }

    async fn start_http(&self) -> Result<Conn, McpError> {
        use rmcp::transport::StreamableHttpClientTransport;
        use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
        let url = self.config.url.clone().unwrap_or_default();
        let mut config = StreamableHttpClientTransportConfig::with_uri(url.clone());
        if let Some(var) = &self.config.bearer_token_env_var {
            let token = std::env::var(var).map_err(|_| {
                McpError(format!(
                    "the MCP server `{}` needs a bearer token from ${var} (bearer_token_env_var), which is not set",
                    self.name
                ))
            })?;
            config = config.auth_header(token);
        }
        let mut headers = std::collections::HashMap::new();
        for (k, v) in &self.config.headers {
            let (Ok(name), Ok(value)) = (
                reqwest::header::HeaderName::from_bytes(k.as_bytes()),
                reqwest::header::HeaderValue::from_str(v),
            ) else {
                return Err(McpError(format!(
                    "the MCP server `{}`: the header {k:?} is not a valid HTTP header",
                    self.name
                )));
            };
            headers.insert(name, value);
        }
        if !headers.is_empty() {
            config = config.custom_headers(headers);
        }
        let transport = StreamableHttpClientTransport::from_config(config);
        let service = ().serve(transport).await.map_err(|e| {
            McpError(format!(
                "the MCP server `{}` at {url} did not start a session: {e}",
                self.name
            ))
        })?;
        // No process to exit: the sender is kept with the connection, so `exited` stays None.
        let (tx, exited) = watch::channel(None);
        Ok(Conn {
            service,
            exited,
            _never_exits: Some(tx),
            _process: None,
        })
    }

    async fn start_stdio(&self) -> Result<Conn, McpError> {
        let (policy, exe) = match &self.launch.confinement {
            Confinement::Unavailable(reason) => {
                return Err(McpError(format!(
                    "the MCP server `{}` is not started: stdio servers run sandboxed like commands, and the sandbox is unavailable here ({reason})",
                    self.name
                )));
            }
            Confinement::Sandbox { policy, exe } => (Some(policy.clone()), exe.clone()),
            Confinement::Unconfined => (None, PathBuf::new()),
        };
        // Unique in this process (the app runs many tasks, each with its own `everything`):
        // the FIFOs' directory is shared by all of them.
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let id = format!(
            "{}-{}-{}",
            self.name,
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let dir = self.launch.io_dir.join(&id);
        let private = self.launch.scratch.join(&id);
        for d in [&dir, &private] {
            let _ = std::fs::remove_dir_all(d);
            std::fs::create_dir_all(d)
                .map_err(|e| McpError(format!("could not create {}: {e}", d.display())))?;
        }
        let (fifo_in, fifo_out) = (dir.join("in"), dir.join("out"));
        for fifo in [&fifo_in, &fifo_out] {
            mkfifo(fifo)?;
        }
        // Both ends opened read-write, so neither open waits for the other side.
        let sender = tokio::net::unix::pipe::OpenOptions::new()
            .read_write(true)
            .open_sender(&fifo_in)
            .map_err(|e| McpError(format!("could not open {}: {e}", fifo_in.display())))?;
        let receiver = tokio::net::unix::pipe::OpenOptions::new()
            .read_write(true)
            .open_receiver(&fifo_out)
            .map_err(|e| McpError(format!("could not open {}: {e}", fifo_out.display())))?;

        let worktree = self.launch.worktree.display().to_string();
        let placed = |s: &str| s.replace("${BOSUN_WORKTREE}", &worktree);
        let line = McpServerConfig {
            command: self.config.command.as_deref().map(placed),
            args: self.config.args.iter().map(|a| placed(a)).collect(),
            ..McpServerConfig::default()
        }
        .command_line();
        // Its stdin and stdout are fds 3 and 4, opened before the sandbox (see
        // `CommandSpec::fifos`): no path to them exists inside it.
        let mut spec = CommandSpec::new(format!("exec {line} <&3 >&4 3<&- 4>&-"), &private);
        spec.fifos = Some((fifo_in.clone(), fifo_out.clone()));
        spec.timeout = Duration::from_secs(60 * 60 * 24 * 365);
        spec.stream_cap_bytes = 1 << 20;
        spec.keep_head_bytes = 0;
        spec.keep_tail_bytes = STDERR_TAIL;
        let mut env: Vec<(String, String)> = self
            .config
            .env
            .iter()
            .map(|(k, v)| (k.clone(), placed(v)))
            .collect();
        env.push(("BOSUN_WORKTREE".into(), worktree.clone()));
        let tmp = private.join("tmp");
        let _ = std::fs::create_dir_all(&tmp);
        for k in ["TMPDIR", "TMP", "TEMP"] {
            env.push((k.into(), tmp.display().to_string()));
        }
        let fingerprint = crate::names::short_hash(&self.config.fingerprint());
        let cache = self
            .launch
            .cache_dir
            .join(format!("{}-{fingerprint}", self.name));
        let _ = std::fs::create_dir_all(&cache);
        for (k, sub) in [
            ("npm_config_cache", "npm"),
            ("XDG_CACHE_HOME", "xdg"),
            ("PIP_CACHE_DIR", "pip"),
            ("UV_CACHE_DIR", "uv"),
        ] {
            env.push((k.into(), cache.join(sub).display().to_string()));
        }
        for name in &self.config.env_vars {
            if let Ok(v) = std::env::var(name) {
                env.push((name.clone(), v));
            }
        }
        let passed: Vec<String> = env.iter().map(|(k, _)| k.clone()).collect();
        spec.env = env;
        let mut proxy = None;
        match policy {
            Some(mut policy) => {
                let line = self.config.command_line();
                if let Some(net) = self
                    .launch
                    .network
                    .as_ref()
                    .filter(|net| (net.grants)(&line))
                {
                    proxy = Some(self.start_proxy(net, &line, &id)?);
                    policy.proxy = proxy.as_ref().map(|p| p.socket().to_path_buf());
                }
                // What the user passed by name (or wrote literally) is passed; every other
                // secret-looking variable is dropped by the sandbox's scrub.
                policy.env_allow.extend(passed.iter().cloned());
                // It writes in the worktree and its private directory, nowhere else (not the
                // task's temp dir, which the agent's commands share, nor its git dir).
                policy.write_paths =
                    vec![self.launch.worktree.clone(), private.clone(), cache.clone()];
                policy.temp_dir = Some(tmp);
                // The private directories are hidden from commands; this one is its home.
                policy
                    .read_deny
                    .retain(|p| !private.starts_with(p) && !p.starts_with(&private));
                if !policy.read_deny.contains(&self.launch.io_dir) {
                    policy.read_deny.push(self.launch.io_dir.clone());
                }
                spec.sandbox = Some(policy);
                spec.sandbox_exe = exe;
            }
            None => {
                spec.env_remove = std::env::vars_os()
                    .filter_map(|(k, _)| k.into_string().ok())
                    .filter(|k| bosun_exec::sandbox::looks_secret(k) && !passed.contains(k))
                    .collect();
            }
        }
        let stop = CancellationToken::new();
        let (tx, exited) = watch::channel(None);
        let tail = Arc::new(Mutex::new(Vec::<u8>::new()));
        {
            let stop = stop.clone();
            let tail = Arc::clone(&tail);
            let name = self.name.clone();
            tokio::spawn(async move {
                let sink_tail = Arc::clone(&tail);
                let sink = move |_stream: bosun_exec::OutputStream, chunk: &[u8]| {
                    if let Ok(mut t) = sink_tail.lock() {
                        t.extend_from_slice(chunk);
                        if t.len() > STDERR_TAIL {
                            let cut = t.len() - STDERR_TAIL;
                            t.drain(..cut);
                        }
                    }
                };
                let outcome = bosun_exec::run_command(&spec, &stop, &sink).await;
                let said = tail
                    .lock()
                    .map(|t| String::from_utf8_lossy(&t).trim().to_string())
                    .unwrap_or_default();
                let how = match outcome {
                    Ok(o) if o.cancelled => "stopped".to_string(),
                    Ok(o) => match (o.exit_code, o.signal) {
                        (Some(c), _) => format!("exit code {c}"),
                        (None, Some(s)) => format!("signal {s}"),
                        _ => "ended".to_string(),
                    },
                    Err(e) => format!("could not start: {e}"),
                };
                tracing::debug!("MCP server {name}: {how}");
                let said = if said.is_empty() {
                    format!(" ({how})")
                } else {
                    let last: String = said
                        .lines()
                        .rev()
                        .take(5)
                        .collect::<Vec<_>>()
                        .into_iter()
                        .rev()
                        .collect::<Vec<_>>()
                        .join(" | ");
                    format!(" ({how}; it said: {last})")
                };
                let _ = tx.send(Some(said));
            });
        }
        let process = Process {
            stop,
            dirs: vec![dir.clone(), private.clone()],
            _proxy: proxy,
        };
        let service = tokio::select! {
            s = ().serve((receiver, sender)) => s.map_err(|e| {
                let said = exited.borrow().clone().unwrap_or_default();
                McpError(format!(
                    "the MCP server `{}` (`{}`) did not start a session: {e}{said}",
                    self.name,
                    self.config.command_line()
                ))
            })?,
            () = gone(exited.clone()) => {
                let said = exited.borrow().clone().unwrap_or_default();
                return Err(McpError(format!(
                    "the MCP server `{}` (`{}`) exited before it answered{said}",
                    self.name,
                    self.config.command_line()
                )));
            }
        };
        Ok(Conn {
            service,
            exited,
            _never_exits: None,
            _process: Some(process),
        })
    }
}

/// Resolves once the process has exited.
async fn gone(mut exited: watch::Receiver<Option<String>>) {
    let _ = exited.wait_for(|e| e.is_some()).await;
}

impl Server {
    /// An egress proxy for the server's lifetime, deciding by the policy's host rules.
    fn start_proxy(
        &self,
        net: &Network,
        line: &str,
        id: &str,
    ) -> Result<bosun_exec::Proxy, McpError> {
        std::fs::create_dir_all(&net.run_dir)
            .map_err(|e| McpError(format!("could not create {}: {e}", net.run_dir.display())))?;
        let socket = net.run_dir.join(format!("mcp-{id}.sock"));
        let decide = Arc::clone(&net.decide);
        let line = line.to_string();
        let decider: bosun_exec::Decider = Arc::new(move |request| {
            let verdict = decide(&line, &request.host);
            Box::pin(async move { verdict })
        });
        let report = Arc::clone(&net.report);
        let name = self.name.clone();
        let reporter: bosun_exec::Reporter = Arc::new(move |r| report(&name, r));
        let config = bosun_exec::ProxyConfig::default()
            .with_env_overrides()
            .map_err(|e| McpError(format!("the egress proxy's settings: {e}")))?;
        bosun_exec::Proxy::start(&socket, config, decider, reporter).map_err(|e| {
            McpError(format!(
                "the egress proxy of the MCP server `{}` could not start: {e}",
                self.name
            ))
        })
    }
}

fn mkfifo(path: &Path) -> Result<(), McpError> {
    let status = std::process::Command::new("mkfifo")
        .arg("-m")
        .arg("600")
        .arg(path)
        .status()
        .map_err(|e| McpError(format!("could not run mkfifo: {e}")))?;
    if status.success() {
        Ok(())
    } else {
        Err(McpError(format!("mkfifo {} failed", path.display())))
    }
}

/// A tool result as text for the model: text blocks as they are, other blocks named, and the
/// structured content when there is no text.
pub fn result_text(result: &serde_json::Value) -> String {
    let mut parts = Vec::new();
    for block in result["content"].as_array().into_iter().flatten() {
        match block["type"].as_str().unwrap_or_default() {
            "text" => parts.push(block["text"].as_str().unwrap_or_default().to_string()),
            "image" | "audio" => parts.push(format!(
                "[{} {}, {} bytes base64]",
                block["type"].as_str().unwrap_or_default(),
                block["mimeType"].as_str().unwrap_or("?"),
                block["data"].as_str().map_or(0, str::len)
            )),
            "resource" => {
                let r = &block["resource"];
                match r["text"].as_str() {
                    Some(t) => parts.push(format!(
                        "[resource {}]\n{t}",
                        r["uri"].as_str().unwrap_or_default()
                    )),
                    None => parts.push(format!(
                        "[resource {} ({}), binary]",
                        r["uri"].as_str().unwrap_or_default(),
                        r["mimeType"].as_str().unwrap_or("?")
                    )),
                }
            }
            "resource_link" => parts.push(format!(
                "[resource link {} {}]",
                block["uri"].as_str().unwrap_or_default(),
                block["name"].as_str().unwrap_or_default()
            )),
            other => parts.push(format!("[{other} content]")),
        }
    }
    if parts.is_empty()
        && let Some(s) = result.get("structuredContent").filter(|s| !s.is_null())
    {
        parts.push(s.to_string());
    }
    parts.join("\n")
}
