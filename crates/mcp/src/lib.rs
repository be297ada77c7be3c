//! The MCP client: the servers a user configured (`[mcp_servers.NAME]`), each tool of theirs a
//! [`bosun_tools::ToolHandler`] named `mcp__<server>__<tool>` whose action
//! ([`bosun_protocol::ToolAction::Mcp`]) the policy decides like any other call.
//!
//! A stdio server runs like a sandboxed command (see [`bosun_exec`]): writes only in the
//! task's worktree and a private temp dir, the policy's network rules through the egress proxy,
//! no secret in its environment unless passed by name (`env_vars`), and it dies with its task.
//! Its stdin and stdout are two FIFOs in that private temp dir (the sandbox's own stdin is its
//! lifeline). A server that crashes, hangs past its timeout or sends garbage gives the model a
//! tool error, and is started again on the next call.

pub mod client;
pub mod config;
pub mod import;
pub mod names;
pub mod servers;

pub use client::{Confinement, Launch, ListedTool, McpError, Network, Server, ServerState};
pub use config::{McpServerConfig, Transport};
pub use import::{Found, ImportError, ImportSource, ImportedServer, Places};
pub use names::{MAX_TOOL_NAME, tool_name};
pub use servers::{Declared, McpSet, ServerReport, probe};
