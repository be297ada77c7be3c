//! The desktop notification shown when a task starts waiting for an approval (Tauri's
//! notification plugin, used from Rust only: the window gets no notification permission).
//! Where no notification server runs (Xvfb, a bare session) it silently shows nothing.

use crate::engine::ApprovalHook;
use bosun_protocol::{ApprovalRequested, TaskId, ToolAction};
use std::sync::OnceLock;
use tauri::AppHandle;
use tauri_plugin_notification::NotificationExt;

static APP: OnceLock<AppHandle> = OnceLock::new();

/// Remembers the app once it is built, so the engine's hook can reach the plugin.
pub fn set_app(app: AppHandle) {
    let _ = APP.set(app);
}

/// One line saying what waits: the command, or the files an edit would change.
pub fn summary(req: &ApprovalRequested) -> String {
    let what = match &req.action {
        ToolAction::Command { command } => format!("$ {command}"),
        ToolAction::Write { paths } => format!("{} would change {}", req.tool, paths.join(", ")),
        ToolAction::Read { paths } => format!("{} would read {}", req.tool, paths.join(", ")),
        ToolAction::Network { host, port, .. } => {
            format!("a command would connect to {host}:{port}")
        }
        ToolAction::Internal => req.tool.clone(),
        ToolAction::SpendRate { .. } | ToolAction::UnpricedModel { .. } => {
            req.action.budget_question().unwrap_or_default()
        }
        ToolAction::Summary { replaces, .. } => {
            format!("a summary would replace {replaces} older messages: review it")
        }
        ToolAction::PlanNodeFailed { node, step, .. } => {
            format!("plan node {node} ({step}) failed: retry, skip or stop")
        }
        ToolAction::Mcp {
            server,
            tool,
            arguments,
        } => format!("MCP {server}/{tool} {arguments}"),
        ToolAction::McpServer {
            server, command, ..
        } => format!("start the MCP server {server}: {command}"),
    };
    if what.chars().count() <= 160 {
        return what;
    }
    let mut line: String = what.chars().take(160).collect();
    line.push('…');
    line
}

/// The engine hook that shows the notification.
pub fn approval_hook() -> ApprovalHook {
    Box::new(|task: &TaskId, req: &ApprovalRequested| {
        let Some(app) = APP.get() else { return };
        let shown = app
            .notification()
            .builder()
            .title("Bosun: approval needed")
            .body(format!("{}\n(task {task})", summary(req)))
            .show();
        if let Err(err) = shown {
            tracing::debug!("no desktop notification for task {task}: {err}");
        }
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn request(action: ToolAction) -> ApprovalRequested {
        serde_json::from_value(serde_json::json!({
            "approval_id": "ap_1", "call_id": "c1", "tool": "edit_file",
            "action": action, "reason": "r", "rule": "mode ask", "source": "--mode",
            "suggestions": []
        }))
        .unwrap()
    }

    #[test]
    fn the_notification_says_what_would_run_or_change() {
        let cmd = request(ToolAction::Command {
            command: "cargo publish".into(),
        });
        assert_eq!(summary(&cmd), "$ cargo publish");
        let edit = request(ToolAction::Write {
            paths: vec!["src/lib.rs".into(), "README.md".into()],
        });
        assert_eq!(
            summary(&edit),
            "edit_file would change src/lib.rs, README.md"
        );
        let long = request(ToolAction::Command {
            command: "x".repeat(500),
        });
        assert_eq!(summary(&long).chars().count(), 161);
    }
}
