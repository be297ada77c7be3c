import type { Event } from "../lib/bindings/Event";
import type { EventMsg } from "../lib/bindings/EventMsg";

/** Builds a task's events the way the journal numbers them. */
export function ev(seq: number, msg: EventMsg, taskId = "t1"): Event {
  const ts = new Date(Date.UTC(2026, 10, 30, 3, 15, 0, seq * 100)).toISOString();
  return { seq, task_id: taskId, ts, ...msg } as Event;
}

/** A small complete task: prompt, streamed answer, a command with coloured output, a checkpoint. */
export function sampleTask(): Event[] {
  return [
    ev(1, {
      type: "task_started",
      repo: "/home/dev/acme",
      base_commit: "abc123",
      branch: "bosun/t1",
      worktree: "/home/dev/.local/share/bosun/worktrees/t1",
      prompt: "Say hello",
      provider: "openai-chat",
      model: "mock-model",
      api: "openai-chat",
      base_url: "http://127.0.0.1:11434/v1",
    }),
    ev(2, { type: "user_message", text: "Say hello" }),
    ev(3, { type: "assistant_delta", text: "I will " }),
    ev(4, { type: "assistant_delta", text: "run printf." }),
    ev(5, { type: "assistant_message", text: "I will run printf." }),
    ev(6, {
      type: "tool_call_begin",
      call_id: "call_1",
      tool: "run_command",
      args: { command: "printf 'hello\\n'" },
      recovered: false,
    }),
    ev(7, { type: "tool_output_delta", call_id: "call_1", stream: "stdout", chunk: "\u001b[32mhel" }),
    ev(8, { type: "tool_output_delta", call_id: "call_1", stream: "stdout", chunk: "lo\u001b[0m\nplain\n" }),
    ev(9, {
      type: "tool_call_end",
      call_id: "call_1",
      status: "success",
      exit_code: 0,
      output: "hello\nplain\n",
      duration_ms: 1234,
    }),
    ev(10, { type: "checkpoint_created", checkpoint: 1, commit: "0123456789abcdef", files: ["hello.txt"], call_id: "call_1" }),
    ev(11, {
      type: "usage",
      model: "mock-model",
      input_tokens: 1200,
      output_tokens: 80,
      cached_input_tokens: 0,
      cache_write_tokens: 0,
      cache_write_1h_tokens: 0,
      reasoning_tokens: 0,
      cost_usd: 0.0123,
      total_cost_usd: 0.0123,
      priced: true,
    }),
    ev(12, { type: "assistant_message", text: "Done." }),
    ev(13, { type: "task_finished", status: "completed", summary: "Done.", checks: [] }),
  ];
}
