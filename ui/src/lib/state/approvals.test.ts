import { describe, expect, it } from "vitest";
import type { EventMsg } from "../bindings/EventMsg";
import { ev } from "../../test/events";
import { applyEvents, emptyTimeline, pendingApprovals } from "./timeline";

const asked = (id: string, call: string, command: string): EventMsg => ({
  type: "approval_requested",
  approval_id: id,
  kind: "tool",
  call_id: call,
  tool: "run_command",
  action: { kind: "command", command },
  reason: "no rule allows it",
  rule: "mode ask",
  source: "--mode",
  suggestions: [],
});
const begin = (call: string, command: string): EventMsg => ({
  type: "tool_call_begin",
  call_id: call,
  tool: "run_command",
  args: { command },
  recovered: false,
});

describe("pending approvals", () => {
  it("are the requests with no approval_resolved of the same id, oldest first", () => {
    const events = [
      ev(1, { type: "user_message", text: "go" }),
      ev(2, begin("c1", "touch a.txt")),
      ev(3, asked("ap1", "c1", "touch a.txt")),
      ev(4, begin("c2", "touch b.txt")),
      ev(5, asked("ap2", "c2", "touch b.txt")),
    ];
    expect(pendingApprovals(events).map((p) => p.approval_id)).toEqual(["ap1", "ap2"]);

    const resolved = [
      ...events,
      ev(6, { type: "approval_resolved", approval_id: "ap1", call_id: "c1", decision: "deny", note: "no", by: "app" }),
    ];
    const pending = pendingApprovals(resolved);
    expect(pending.map((p) => p.approval_id)).toEqual(["ap2"]);
    expect(pending[0].action).toEqual({ kind: "command", command: "touch b.txt" });
  });

  it("are kept across batches, and a request seen twice counts once", () => {
    let t = applyEvents(emptyTimeline(), [ev(1, begin("c1", "x")), ev(2, asked("ap1", "c1", "x"))]);
    t = applyEvents(t, [ev(3, asked("ap1", "c1", "x"))]);
    expect(t.pending.map((p) => p.approval_id)).toEqual(["ap1"]);
    t = applyEvents(t, [
      ev(4, { type: "approval_resolved", approval_id: "ap1", call_id: "c1", decision: "approve_task", by: "app" }),
    ]);
    expect(t.pending).toEqual([]);
  });

  it("end when the task finishes (an interrupted task waits for nothing)", () => {
    const events = [
      ev(1, begin("c1", "x")),
      ev(2, asked("ap1", "c1", "x")),
      ev(3, { type: "task_finished", status: "interrupted", summary: "stopped", checks: [] }),
    ];
    expect(pendingApprovals(events)).toEqual([]);
  });
});

describe("a tool call whose task stopped while it waited for approval", () => {
  const waiting = [ev(1, begin("c1", "make deploy")), ev(2, asked("ap1", "c1", "make deploy"))];
  const tool = (t: ReturnType<typeof emptyTimeline>) => {
    const item = t.items.find((i) => i.kind === "tool");
    if (item?.kind !== "tool") throw new Error("no tool card");
    return item;
  };

  it("waits while nothing has happened", () => {
    const t = applyEvents(emptyTimeline(), waiting);
    expect(tool(t).status).toBe("running");
    expect(tool(t).approval).toMatchObject({ decision: null, unanswered: false });
  });

  it("shows the call as not run, unanswered, once its tool_call_end arrives", () => {
    const t = applyEvents(emptyTimeline(), [
      ...waiting,
      ev(3, {
        type: "tool_call_end",
        call_id: "c1",
        status: "denied",
        error: "not run: the task was stopped while waiting for approval",
        output: "",
        duration_ms: 0,
      }),
    ]);
    expect(tool(t).status).toBe("denied");
    expect(tool(t).error).toContain("not run");
    expect(tool(t).approval).toMatchObject({ decision: null, unanswered: true });
    expect(t.pending).toEqual([]);
  });

  it("shows the call as interrupted and unanswered when the task finished without ending it", () => {
    const t = applyEvents(emptyTimeline(), [
      ...waiting,
      ev(3, { type: "task_finished", status: "interrupted", summary: "stopped", checks: [] }),
    ]);
    expect(tool(t).status).toBe("interrupted");
    expect(tool(t).approval).toMatchObject({ decision: null, unanswered: true });
  });

  it("keeps an answered approval as answered when the call ends", () => {
    const t = applyEvents(emptyTimeline(), [
      ...waiting,
      ev(3, { type: "approval_resolved", approval_id: "ap1", call_id: "c1", decision: "deny", note: "no", by: "app" }),
      ev(4, { type: "tool_call_end", call_id: "c1", status: "denied", error: "the user denied this: no", output: "", duration_ms: 0 }),
      ev(5, { type: "task_finished", status: "completed", summary: "done", checks: [] }),
    ]);
    expect(tool(t).approval).toMatchObject({ decision: "deny", unanswered: false });
  });
});
