import { describe, expect, it } from "vitest";
import { ev, sampleTask } from "../../test/events";
import { lineAt, lineCount } from "./terminalText";
import { applyEvents, argsSummary, emptyTimeline, nudgeLine } from "./timeline";

describe("applyEvents", () => {
  it("turns a task's events into prompt, answer, tool call, checkpoint and final status", () => {
    const t = applyEvents(emptyTimeline(), sampleTask());
    expect(t.items.map((i) => i.kind)).toEqual([
      "user",
      "assistant",
      "tool",
      "checkpoint",
      "assistant",
      "finished",
    ]);
    expect(t.status).toBe("completed");
    expect(t.usage.costUsd).toBeCloseTo(0.0123);
    expect(t.usage.inputTokens).toBe(1200);
    expect(t.started?.model).toBe("mock-model");
    const tool = t.items[2];
    if (tool.kind !== "tool") throw new Error("expected a tool call");
    expect(tool.status).toBe("success");
    expect(tool.durationMs).toBe(1234);
    expect(lineCount(tool.output)).toBe(2);
    expect(lineAt(tool.output, 0).text).toBe("\u001b[32mhello\u001b[0m");
  });

  it("shows review verdicts, comments and merges in words", () => {
    const t = applyEvents(emptyTimeline(), [
      ev(1, { type: "review", action: "reject", path: "a.txt", hunks: [], checkpoint: 3 }),
      ev(2, {
        type: "review",
        action: "comment",
        comment: { id: 2, path: "a.txt", start_line: 4, end_line: 6, quote: "x", body: "Keep the digit", created_at: "", resolved: false },
      }),
      ev(3, { type: "review", action: "unreject", path: "a.txt", hunks: ["h"], undoes: 1 }),
      ev(4, {
        type: "review",
        action: "merge",
        outcome: { branch: "main", created: false, commits: ["c1"], files: 1, hunks: 2, left_out: 0, checked_out: true, worktree: "/w", worktree_bytes: 0 },
        checks: [],
      }),
    ]);
    expect(t.items.map((i) => (i.kind === "review" ? i.text : i.kind))).toEqual([
      "You rejected 0 hunks of a.txt: taken out of the worktree (checkpoint 3)",
      "You commented on a.txt:4-6: Keep the digit",
      "Undone: 1 hunk of a.txt put back into the worktree",
      "Merged 2 hunks into main as 1 commit",
    ]);
  });

  it("shows a nudge as one line: why, and what the model was told", () => {
    const message = "You said what you will do, but you did not do it: there was no tool call in your reply. Do it now by calling a tool.\n\nThe tools you have: read_file.";
    const t = applyEvents(emptyTimeline(), [ev(1, { type: "nudge", reason: "promise", message })]);
    expect(t.items).toHaveLength(1);
    const item = t.items[0];
    if (item.kind !== "nudge") throw new Error("expected a nudge");
    expect(item.reason).toBe("promise");
    expect(item.message).toBe(message);
    expect(nudgeLine(item.reason, item.message)).toBe(
      "Nudged the model: it said what it would do and stopped — You said what you will do, but you did not do it: there was no tool call in your reply. Do it now by calling a tool.",
    );
  });

  it("streams assistant text as it arrives, in one growing entry", () => {
    const events = sampleTask();
    const t = applyEvents(emptyTimeline(), events.slice(0, 4));
    const last = t.items[t.items.length - 1];
    expect(last).toMatchObject({ kind: "assistant", text: "I will run printf.", streaming: true });
  });

  it("shows a non-streaming tool's result as its output", () => {
    const t = applyEvents(emptyTimeline(), [
      ev(1, { type: "tool_call_begin", call_id: "c", tool: "read_file", args: { path: "a.txt" }, recovered: false }),
      ev(2, { type: "tool_call_end", call_id: "c", status: "error", error: "no such file", output: "no such file: a.txt", duration_ms: 3 }),
    ]);
    const tool = t.items[0];
    if (tool.kind !== "tool") throw new Error("expected a tool call");
    expect(tool.status).toBe("error");
    expect(lineAt(tool.output, 0).text).toBe("no such file: a.txt");
  });

  it("keeps unchanged entries identical so they do not re-render", () => {
    const events = sampleTask();
    const a = applyEvents(emptyTimeline(), events.slice(0, 9));
    const b = applyEvents(a, events.slice(9, 10));
    expect(b.items[0]).toBe(a.items[0]);
    expect(b.items[2]).toBe(a.items[2]);
  });

  it("handles 100k output lines without copying them per chunk", () => {
    let t = applyEvents(emptyTimeline(), [
      ev(1, { type: "tool_call_begin", call_id: "c", tool: "run_command", args: { command: "seq 100000" }, recovered: false }),
    ]);
    let seq = 2;
    for (let start = 1; start <= 100_000; start += 1000) {
      const chunk = Array.from({ length: 1000 }, (_, i) => `${start + i}\n`).join("");
      t = applyEvents(t, [ev(seq++, { type: "tool_output_delta", call_id: "c", stream: "stdout", chunk })]);
    }
    const tool = t.items[0];
    if (tool.kind !== "tool") throw new Error("expected a tool call");
    expect(lineCount(tool.output)).toBe(100_000);
    expect(lineAt(tool.output, 99_999).text).toBe("100000");
  });
});

describe("argsSummary", () => {
  it("says what a call does the way a developer would write it", () => {
    expect(argsSummary("run_command", { command: "cargo test" })).toBe("cargo test");
    expect(argsSummary("read_file", { path: "src/main.rs" })).toBe("src/main.rs");
    expect(argsSummary("search", { pattern: "fn main", path: "src" })).toBe("fn main  in src");
    expect(argsSummary("mystery", "{not json")).toBe("{not json");
  });
});
