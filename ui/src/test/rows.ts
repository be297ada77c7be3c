import type { TaskRow } from "../lib/bindings/TaskRow";

/** A journal task row for tests: a finished, free task unless `over` says otherwise. */
export function taskRow(over: Partial<TaskRow> = {}): TaskRow {
  return {
    id: "t1",
    depth: 0,
    repo: "/r",
    prompt: "a task",
    status: "completed",
    summary: null,
    created_at: "2026-11-30T03:00:00.000Z",
    updated_at: "2026-11-30T03:00:00.000Z",
    finished_at: null,
    provider: "p",
    model: "m",
    base_commit: "c",
    branch: "b",
    worktree: "w",
    input_tokens: 0,
    output_tokens: 0,
    cached_input_tokens: 0,
    cache_write_tokens: 0,
    cache_write_1h_tokens: 0,
    reasoning_tokens: 0,
    cost_usd: 0,
    priced: true,
    tool_calls: 0,
    last_seq: 0,
    owner_pid: 1,
    review_state: "unreviewed",
    files_changed: 0,
    ...over,
  };
}
