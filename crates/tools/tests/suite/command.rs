//! run_command and update_plan.
use super::common::Worktree;
use bosun_protocol::{OutputStream, PlanItem, PlanStatus, ToolAction, ToolCallStatus};
use bosun_tools::Touched;
use pretty_assertions::assert_eq;
use serde_json::json;

#[tokio::test]
async fn run_command_streams_and_reports_success() {
    let wt = Worktree::new(&[("hello.txt", "hi\n")]);
    let out = wt
        .ok(
            "run_command",
            json!({"command": "cat hello.txt; echo oops >&2"}),
        )
        .await;
    assert_eq!(out.status, ToolCallStatus::Success);
    assert_eq!(out.exit_code, Some(0));
    assert_eq!(out.touched, Touched::Unknown);
    assert_eq!(out.content, "Exit code: 0\nOutput:\nhi\noops\n");
    let streamed = wt.streamed.lock().unwrap().clone();
    assert!(
        streamed.contains(&(OutputStream::Stdout, "hi\n".into())),
        "{streamed:?}"
    );
    assert!(
        streamed.contains(&(OutputStream::Stderr, "oops\n".into())),
        "{streamed:?}"
    );
    assert_eq!(
        wt.action("run_command", json!({"command": "ls"})).unwrap(),
        ToolAction::Command {
            command: "ls".into()
        }
    );
}

#[tokio::test]
async fn run_command_reports_a_non_zero_exit() {
    let wt = Worktree::new(&[]);
    let out = wt
        .ok("run_command", json!({"command": "echo failing; exit 7"}))
        .await;
    assert_eq!(out.status, ToolCallStatus::Error);
    assert_eq!(out.exit_code, Some(7));
    assert_eq!(out.content, "Exit code: 7\nOutput:\nfailing\n");
}

#[tokio::test]
async fn run_command_times_out_and_kills_background_jobs() {
    let wt = Worktree::new(&[]);
    let out = wt
        .ok(
            "run_command",
            json!({"command": "sleep 300 & echo $! > bg.pid; sleep 300", "timeout_secs": 1}),
        )
        .await;
    assert_eq!(out.status, ToolCallStatus::TimedOut);
    assert!(
        out.content.starts_with("Timed out after 1 s"),
        "{}",
        out.content
    );
    let pid = wt.read("bg.pid").trim().to_string();
    let dead = (0..100).any(|_| {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .to_string();
        let dead = stat.is_empty() || state.starts_with('Z');
        if !dead {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        dead
    });
    assert!(dead, "background sleep {pid} survived the timeout");
}

#[tokio::test]
async fn run_command_is_cancelled() {
    let wt = Worktree::new(&[]);
    let ctx = wt.ctx();
    let cancel = ctx.cancel.clone();
    let handler = wt.registry.get("run_command").unwrap();
    let call = handler.handle(json!({"command": "echo started; sleep 300"}), &ctx);
    let (out, ()) = tokio::join!(call, async {
        // Cancel once the command is known to be running.
        while wt.streamed.lock().unwrap().is_empty() {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        cancel.cancel();
    });
    let out = out.unwrap();
    assert_eq!(out.status, ToolCallStatus::Error);
    assert!(
        out.content.starts_with("Cancelled by the user"),
        "{}",
        out.content
    );
}

#[tokio::test]
async fn long_output_is_cut_to_head_and_tail_for_the_model() {
    let wt = Worktree::new(&[]);
    let out = wt
        .ok("run_command", json!({"command": "seq 1 100000"}))
        .await;
    assert!(out.content.starts_with("Exit code: 0\nOutput:\n1\n2\n3\n"));
    assert!(out.content.ends_with("99999\n100000\n"));
    assert!(
        out.content.contains("\n1859\n[… "),
        "the head ends on a whole line: {}",
        &out.content[8150..8250]
    );
    assert!(out.content.contains(
        "are shown. Redirect the output to a file and use search or read_file to see the rest.]\n98"
    ));
    assert!(
        out.content.contains("omitted of 575.1 KB total"),
        "{}",
        &out.content[8000..8600]
    );
    assert!(out.content.len() < 17 * 1024, "{} bytes", out.content.len());
}

#[tokio::test]
async fn update_plan_returns_the_plan() {
    let wt = Worktree::new(&[]);
    let args = json!({"items": [
        {"step": "read the code", "status": "completed"},
        {"step": "fix the bug", "status": "in_progress"},
        {"step": "run the tests", "status": "pending"},
    ]});
    assert_eq!(
        wt.action("update_plan", args.clone()).unwrap(),
        ToolAction::Internal
    );
    let out = wt.ok("update_plan", args).await;
    assert_eq!(
        out.content,
        "Plan updated: 3 steps (1 completed, 1 in progress, 1 pending)."
    );
    assert_eq!(out.touched, Touched::Nothing);
    assert_eq!(
        out.plan.unwrap()[1],
        PlanItem::step("fix the bug", PlanStatus::InProgress)
    );
    let err = wt
        .model_error(
            "update_plan",
            json!({"items": [{"step": "x", "status": "done"}]}),
        )
        .await;
    assert!(err.contains("unknown variant `done`"), "{err}");
}
