//! `run_command{command, timeout_secs?}`: a shell command in the worktree via bosun-exec, its
//! output streamed live and summarized (head and tail) for the model.

use crate::text::human_size;
use crate::{ToolContext, ToolError, ToolHandler, ToolOutput, Touched, parse_args, spec};
use bosun_exec::{
    CommandOutcome, CommandSpec, ExecError, OutputStream, StreamDecoder, run_command,
};
use bosun_protocol::{ToolAction, ToolCallStatus, ToolSpec};
use serde::Deserialize;
use serde_json::json;
use std::time::Duration;

/// Output the model sees: this much of the start and of the end.
pub const MODEL_HEAD_BYTES: usize = 8 * 1024;
pub const MODEL_TAIL_BYTES: usize = 8 * 1024;
/// Output streamed to the journal and the UI per command.
pub const STREAM_CAP_BYTES: usize = 4 * 1024 * 1024;

pub struct RunCommand;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    command: String,
    timeout_secs: Option<u64>,
}

#[async_trait::async_trait]
impl ToolHandler for RunCommand {
    fn spec(&self) -> ToolSpec {
        spec(
            "run_command",
            "Run a bash command in the worktree.",
            json!({
                "command": {"type": "string"},
                "timeout_secs": {"type": "integer", "description": "default 120, max 600"},
            }),
            &["command"],
        )
    }

    fn action(&self, args: &serde_json::Value) -> Result<ToolAction, ToolError> {
        let args: Args = parse_args("run_command", args)?;
        if args.command.trim().is_empty() {
            return Err(ToolError::Model("command is empty".into()));
        }
        Ok(ToolAction::Command {
            command: args.command,
        })
    }

    async fn handle(
        &self,
        args: serde_json::Value,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let args: Args = parse_args("run_command", &args)?;
        if args.command.trim().is_empty() {
            return Err(ToolError::Model("command is empty".into()));
        }
        let timeout = match args.timeout_secs {
            Some(secs) if secs > 0 => Duration::from_secs(secs).min(ctx.max_timeout),
            _ => ctx.default_timeout,
        };
        let spec = CommandSpec {
            command: args.command.clone(),
            cwd: ctx.worktree.clone(),
            env: ctx.env.clone(),
            env_remove: ctx.env_remove.clone(),
            timeout,
            stream_cap_bytes: STREAM_CAP_BYTES,
            keep_head_bytes: MODEL_HEAD_BYTES,
            keep_tail_bytes: MODEL_TAIL_BYTES,
            sandbox: ctx.sandbox.clone(),
            sandbox_exe: ctx.sandbox_exe.clone(),
            fifos: None,
        };
        let decoder = StreamDecoder::default();
        let on_output = |stream: OutputStream, bytes: &[u8]| {
            let text = decoder.decode(stream, bytes);
            if !text.is_empty() {
                (ctx.output)(stream, text);
            }
        };
        let outcome = run_command(&spec, &ctx.cancel, &on_output)
            .await
            .map_err(|e| match e {
                ExecError::MissingCwd(_)
                | ExecError::BashMissing
                | ExecError::SandboxUnavailable(_)
                | ExecError::SandboxExeMissing(_)
                | ExecError::SandboxPolicy(_) => ToolError::Fatal(e.to_string()),
                other => ToolError::Model(format!("the command could not run: {other}")),
            })?;
        for stream in [OutputStream::Stdout, OutputStream::Stderr] {
            let rest = decoder.flush(stream);
            if !rest.is_empty() {
                (ctx.output)(stream, rest);
            }
        }
        if outcome.total_bytes > STREAM_CAP_BYTES as u64 {
            (ctx.output)(
                OutputStream::Stderr,
                format!(
                    "\n[bosun: output past {} was not streamed; {} in all]\n",
                    human_size(STREAM_CAP_BYTES as u64),
                    human_size(outcome.total_bytes)
                ),
            );
        }
        Ok(summarize(&outcome, timeout, ctx.max_timeout))
    }
}

/// What the model is told about a finished command.
fn summarize(outcome: &CommandOutcome, timeout: Duration, max: Duration) -> ToolOutput {
    let (status, header) = if outcome.timed_out {
        (
            ToolCallStatus::TimedOut,
            format!(
                "Timed out after {} s; the command and everything it started were killed. \
                 For a longer run pass timeout_secs (at most {}).",
                timeout.as_secs(),
                max.as_secs()
            ),
        )
    } else if outcome.cancelled {
        (
            ToolCallStatus::Error,
            "Cancelled by the user; the command was killed.".to_string(),
        )
    } else if let Some(code) = outcome.exit_code {
        let status = if code == 0 {
            ToolCallStatus::Success
        } else {
            ToolCallStatus::Error
        };
        (status, format!("Exit code: {code}"))
    } else {
        let signal = outcome.signal.unwrap_or(0);
        (ToolCallStatus::Error, format!("Killed by signal {signal}"))
    };
    let mut content = header;
    content.push_str("\nOutput:\n");
    if outcome.total_bytes == 0 {
        content.push_str("(no output)\n");
    } else {
        let (mut head, mut tail) = (&outcome.head[..], &outcome.tail[..]);
        if outcome.omitted_bytes > 0 {
            // Cut at line boundaries, so the model never sees half a line on either side.
            if let Some(end) = head.iter().rposition(|b| *b == b'\n') {
                head = &head[..=end];
            }
            if let Some(start) = tail.iter().position(|b| *b == b'\n') {
                tail = &tail[start + 1..];
            }
        }
        content.push_str(&String::from_utf8_lossy(head));
        if outcome.omitted_bytes > 0 {
            let shown = (head.len() + tail.len()) as u64;
            content.push_str(&format!(
                "[… {} omitted of {} total: the first {} lines and the last {} lines are shown. \
                 Redirect the output to a file and use search or read_file to see the rest.]\n",
                human_size(outcome.total_bytes - shown),
                human_size(outcome.total_bytes),
                bytecount_lines(head),
                bytecount_lines(tail),
            ));
        }
        content.push_str(&String::from_utf8_lossy(tail));
    }
    ToolOutput {
        content,
        status,
        exit_code: outcome.exit_code,
        touched: Touched::Unknown,
        plan: None,
    }
}

fn bytecount_lines(bytes: &[u8]) -> usize {
    bytes.iter().filter(|b| **b == b'\n').count()
}
