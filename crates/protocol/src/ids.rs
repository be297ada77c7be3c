use serde::{Deserialize, Serialize};
use std::fmt;
use ts_rs::TS;

/// A task's id: a lowercase ULID (26 chars, sortable by creation time). Used in branch names
/// (`bosun/<task-id>`) and refs (`refs/bosun/<task-id>/<n>`); the CLI accepts any unique prefix.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, TS)]
#[serde(transparent)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct TaskId(pub String);

impl TaskId {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for TaskId {
    fn from(s: &str) -> Self {
        TaskId(s.to_string())
    }
}

/// A tool call's id as the model gave it (`call_…` / `toolu_…`), or one Bosun made up for a tool
/// call recovered from text (`recovered_<n>`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, TS)]
#[serde(transparent)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct CallId(pub String);

impl CallId {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for CallId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for CallId {
    fn from(s: &str) -> Self {
        CallId(s.to_string())
    }
}
