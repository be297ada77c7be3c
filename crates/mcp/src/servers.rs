//! A task's MCP servers: started together when the task starts, each tool a
//! [`ToolHandler`], stopped (their processes ended) when the set is dropped.

use crate::client::{Launch, ListedTool, McpError, Server, ServerState};
use crate::config::{McpServerConfig, Transport};
use bosun_protocol::{ToolAction, ToolCallStatus, ToolSpec};
use bosun_tools::{ToolContext, ToolError, ToolHandler, ToolOutput, Touched};
use serde::Serialize;
use std::sync::Arc;

/// One server as `bosun mcp list` and the Settings view show it.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(
    export,
    export_to = "../../../ui/src/lib/bindings/",
    rename = "McpServerReport"
)]
pub struct ServerReport {
    pub name: String,
    pub transport: Transport,
    /// The command line, or the URL.
    pub target: String,
    /// Where it is declared (`config.toml`, `config.toml [repos."…"]`, `.bosun/config.toml`).
    pub origin: String,
    pub state: ServerState,
    pub error: Option<String>,
    pub tools: Vec<ListedTool>,
}

/// A configured server, where it was declared.
#[derive(Debug, Clone)]
pub struct Declared {
    pub name: String,
    pub config: McpServerConfig,
    pub origin: String,
}

/// The servers of one task.
pub struct McpSet {
    servers: Vec<Arc<Server>>,
}

impl McpSet {
    pub fn new(declared: Vec<Declared>, launch: &Launch) -> McpSet {
        McpSet {
            servers: declared
                .into_iter()
                .filter(|d| d.config.is_enabled())
                .map(|d| Arc::new(Server::new(d.name, d.config, launch.clone())))
                .collect(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// Starts every server at once and lists their tools: the handlers, and the servers that
    /// failed with why (the task goes on without their tools: a server that could not list
    /// them offers none in this task).
    pub async fn start(&self) -> (Vec<Arc<dyn ToolHandler>>, Vec<(String, String)>) {
        let listed = futures::future::join_all(
            self.servers
                .iter()
                .map(|s| async move { (Arc::clone(s), s.list_tools().await) }),
        )
        .await;
        let mut handlers: Vec<Arc<dyn ToolHandler>> = Vec::new();
        let mut failed = Vec::new();
        let mut seen: Vec<String> = Vec::new();
        for (server, tools) in listed {
            match tools {
                Ok(tools) => {
                    for tool in tools {
                        // Two tools with one name: the second would silently replace the first.
                        if seen.contains(&tool.model_name) {
                            failed.push((
                                server.name.clone(),
                                format!(
                                    "the MCP server `{}` lists two tools named {:?} for the model; the second is not offered",
                                    server.name, tool.model_name
                                ),
                            ));
                            continue;
                        }
                        seen.push(tool.model_name.clone());
                        handlers.push(Arc::new(McpTool {
                            server: Arc::clone(&server),
                            tool,
                        }));
                    }
                }
                Err(McpError(e)) => failed.push((server.name.clone(), e)),
            }
        }
        (handlers, failed)
    }

    /// Ends every server now.
    pub async fn stop(&self) {
        for s in &self.servers {
            s.stop().await;
        }
    }
}

/// Starts each server, lists its tools and stops it again: `bosun mcp list`.
pub async fn probe(declared: Vec<Declared>, launch: &Launch) -> Vec<ServerReport> {
    let reports = declared.into_iter().map(|d| async move {
        let transport = d.config.transport();
        let target = match transport {
            Transport::Http => d.config.url.clone().unwrap_or_default(),
            Transport::Stdio => d.config.command_line(),
        };
        if !d.config.is_enabled() {
            return ServerReport {
                name: d.name,
                transport,
                target,
                origin: d.origin,
                state: ServerState::Disabled,
                error: None,
                tools: Vec::new(),
            };
        }
        let server = Server::new(d.name.clone(), d.config, launch.clone());
        let listed = server.list_tools().await;
        server.stop().await;
        let (state, error, tools) = match listed {
            Ok(tools) => (ServerState::Running, None, tools),
            Err(McpError(e)) => (ServerState::Failed, Some(e), Vec::new()),
        };
        ServerReport {
            name: d.name,
            transport,
            target,
            origin: d.origin,
            state,
            error,
            tools,
        }
    });
    futures::future::join_all(reports).await
}

/// The most of a result kept for the journal and the model: its head and tail.
const RESULT_HEAD: usize = 96 * 1024;
const RESULT_TAIL: usize = 32 * 1024;

/// A result within [`RESULT_HEAD`] + [`RESULT_TAIL`] bytes, the middle left out and counted
/// (as a command's output is).
fn capped(text: String) -> String {
    if text.len() <= RESULT_HEAD + RESULT_TAIL {
        return text;
    }
    let mut head = RESULT_HEAD;
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len() - RESULT_TAIL;
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    format!(
        "{}\n[bosun: {} bytes of this MCP result left out]\n{}",
        &text[..head],
        tail - head,
        &text[tail..]
    )
}

/// One tool of a server, as the model sees it.
pub struct McpTool {
    server: Arc<Server>,
    tool: ListedTool,
}

#[async_trait::async_trait]
impl ToolHandler for McpTool {
    fn spec(&self) -> ToolSpec {
        let mut description = self.tool.description.trim().to_string();
        if !description.is_empty() {
            description.push(' ');
        }
        description.push_str(&format!(
            "(tool `{}` of the MCP server `{}`)",
            self.tool.name, self.server.name
        ));
        ToolSpec {
            name: self.tool.model_name.clone(),
            description,
            parameters: self.tool.input_schema.clone(),
        }
    }

    fn action(&self, args: &serde_json::Value) -> Result<ToolAction, ToolError> {
        let arguments = match args {
            serde_json::Value::Null => serde_json::json!({}),
            serde_json::Value::Object(_) => args.clone(),
            _ => {
                return Err(ToolError::Model(format!(
                    "the arguments of {} must be a JSON object (see its schema)",
                    self.tool.model_name
                )));
            }
        };
        Ok(ToolAction::Mcp {
            server: self.server.name.clone(),
            tool: self.tool.name.clone(),
            arguments,
        })
    }

    async fn handle(
        &self,
        args: serde_json::Value,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let args = if args.is_null() {
            serde_json::json!({})
        } else {
            args
        };
        // A stdio server may write in the worktree: the checkpoint looks at everything.
        let touched = match self.server.config.transport() {
            Transport::Stdio => Touched::Unknown,
            Transport::Http => Touched::Nothing,
        };
        match self.server.call(&self.tool.name, args, &ctx.cancel).await {
            Ok((content, failed)) => Ok(ToolOutput {
                content: capped(content),
                status: if failed {
                    ToolCallStatus::Error
                } else {
                    ToolCallStatus::Success
                },
                exit_code: None,
                touched,
                plan: None,
            }),
            Err(McpError(e)) => Err(ToolError::Model(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_huge_result_keeps_its_head_and_tail_and_says_how_much_was_left_out() {
        let text = format!(
            "{}{}{}",
            "a".repeat(200_000),
            "é".repeat(10),
            "z".repeat(50_000)
        );
        let out = super::capped(text.clone());
        assert!(out.len() < 140_000, "{}", out.len());
        assert!(out.starts_with("aaa") && out.ends_with("zzz"));
        assert!(out.contains("bytes of this MCP result left out"));
        assert_eq!(super::capped("small".into()), "small");
    }
}
