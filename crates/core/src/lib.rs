//! The agent loop and its orchestration.
//!
//! Frontends submit [`Op`](bosun_protocol::Op)s and consume [`Event`](bosun_protocol::Event)s
//! through a [`TaskHandle`]; the core never calls a frontend. One task runs as:
//! turn (model stream) → tool calls → policy → tool → checkpoint → result back to the model, until
//! the model answers without tool calls, or a step or cost limit, an interrupt or an error stops it.
//! Every event is appended to the journal before it is delivered.

mod approvals;
mod budget;
mod checkpoint;
pub mod checks;
pub mod config;
mod dispatch;
mod egress;
mod emitter;
mod error;
pub mod export;
pub mod fork;
mod guard;
pub mod mcp;
pub mod mcp_import;
pub mod mcp_settings;
pub mod memory;
pub mod nudge;
pub mod orchestrate;
mod policy_files;
mod preview;
pub mod profiles;
mod redaction;
pub mod repo_settings;
mod resume;
pub mod review;
pub mod routing;
mod sandboxing;
pub mod spend;
mod task;
mod turn;

pub use budget::Budget;
pub use config::{BosunConfig, HistorySettings, ProviderEntry, ProviderLimits, TelemetrySettings};
pub use emitter::Emitter;
pub use error::CoreError;
pub use policy_files::PolicyFiles;
pub use redaction::{Redaction, TextStream};
pub use resume::{ContinueSpec, continue_task, rebuild_conversation};
pub use sandboxing::Sandboxing;
pub use task::{TaskHandle, TaskOutcome, TaskSpec, load_prices, new_task_id, start_task};

/// A one-line summary of tool arguments: the main argument in full, others abbreviated.
pub fn summarize_args(args: &serde_json::Value) -> String {
    let Some(obj) = args.as_object() else {
        return truncate(&args.to_string(), 100);
    };
    for key in ["command", "path", "pattern"] {
        if let Some(v) = obj.get(key).and_then(|v| v.as_str()) {
            return truncate(v.lines().next().unwrap_or(""), 100);
        }
    }
    if obj.contains_key("patch") {
        return "(patch)".into();
    }
    if obj.contains_key("items") {
        return String::new();
    }
    truncate(&args.to_string(), 100)
}

fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let cut: String = s.chars().take(max).collect();
    format!("{cut}…")
}

/// Names of environment variables that look secret (`*KEY*`, `*TOKEN*`, `*SECRET*`,
/// `*PASSWORD*`, …): commands the agent runs do not see them. The same test the sandbox uses
/// to scrub a command's environment.
pub fn secret_env_names(names: impl IntoIterator<Item = String>) -> Vec<String> {
    names
        .into_iter()
        .filter(|n| bosun_exec::sandbox::looks_secret(n))
        .collect()
}

#[cfg(test)]
mod secret_env_tests {
    #[test]
    fn secret_looking_names_are_picked() {
        let names = [
            "OPENAI_API_KEY",
            "PATH",
            "GH_TOKEN",
            "HOME",
            "DB_PASSWORD",
            "MY_SECRET",
        ]
        .map(String::from);
        assert_eq!(
            super::secret_env_names(names),
            vec!["OPENAI_API_KEY", "GH_TOKEN", "DB_PASSWORD", "MY_SECRET"]
        );
    }
}
