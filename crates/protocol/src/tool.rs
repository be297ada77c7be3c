use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// A tool as offered to the model: its name, what it does, and a JSON schema of its arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON Schema (`{"type":"object","properties":{…},"required":[…]}`).
    #[ts(type = "unknown")]
    pub parameters: serde_json::Value,
}

/// What a tool call would do, described for the policy engine and for approval cards. A tool
/// describes its action; it never decides whether it may run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub enum ToolAction {
    /// Reads these worktree-relative paths (a directory for `list_dir` / `search`).
    Read { paths: Vec<String> },
    /// Writes (creates, modifies or deletes) these worktree-relative paths.
    Write { paths: Vec<String> },
    /// Runs this shell command (`bash -c`) in the worktree.
    Command { command: String },
    /// A running command's connection to `host:port` through Bosun's egress proxy, which no
    /// policy rule allows (`command` is the command that connects).
    Network {
        host: String,
        port: u16,
        command: String,
    },
    /// Changes nothing outside Bosun (e.g. `update_plan`).
    Internal,
}
