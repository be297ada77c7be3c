import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { flushSync, mount, unmount } from "svelte";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Event } from "../../bindings/Event";
import type { TaskRow } from "../../bindings/TaskRow";
import { ev, sampleTask } from "../../../test/events";
import { taskRow } from "../../../test/rows";
import { finished, progress, started } from "../../../test/subagents";
import TaskTimelinePane from "./TaskTimelinePane.svelte";

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = "";
  clearMocks();
});

async function until<T>(found: () => T | null | undefined): Promise<T> {
  for (let i = 0; i < 300; i++) {
    flushSync();
    const v = found();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error("never appeared");
}

const parent = taskRow({ id: "t1", prompt: "Fix the parser", status: "running", last_seq: 5 });
const c1Row = taskRow({ id: "c1", prompt: "write c1.txt", parent_task_id: "t1", role: "worker", depth: 1 });

/** The parent's stream: two children; c1's own stream: a child of its own (depth 2). */
const journals: Record<string, Event[]> = {
  t1: [...sampleTask().slice(0, 2), ev(3, started("c1")), ev(4, started("c2", { parallel: true })), ev(5, progress("c1", 2, "write_file"))],
  c1: [ev(1, started("g1", { depth: 2 }), "c1"), ev(2, finished("g1"), "c1"), ev(3, { type: "task_finished", status: "completed", summary: "Wrote c1.txt", checks: [] }, "c1")],
  c2: [],
};

function serve(asked: [string, Record<string, unknown>][]) {
  mockIPC((cmd, args) => {
    const a = args as Record<string, unknown>;
    if (cmd !== "unsubscribe") asked.push([cmd, a]);
    switch (cmd) {
      case "subscribe_task": {
        const channel = a.channel as { id: number };
        const events = journals[a.taskId as string] ?? [];
        // Delivered later, as a channel does (not after the test ended and the mocks went).
        setTimeout(() => {
          const internals = (window as unknown as { __TAURI_INTERNALS__?: { runCallback?: (id: number, data: unknown) => void } }).__TAURI_INTERNALS__;
          internals?.runCallback?.(channel.id, { index: 0, message: { kind: "events", events } });
        }, 0);
        return 1;
      }
      case "unsubscribe":
        return true;
      case "task_events":
        return [];
      case "task_children":
        return a.taskId === "t1" ? [c1Row] : [];
    }
    throw new Error(`unexpected ${cmd}`);
  });
}

describe("the task view's sub-agents", () => {
  it("shows the tree live from the parent's stream, a child's own children from the child's stream, and opens a child", async () => {
    const asked: [string, Record<string, unknown>][] = [];
    serve(asked);
    const onopenchild = vi.fn<(row: TaskRow) => void>();
    const target = document.createElement("div");
    document.body.appendChild(target);
    app = mount(TaskTimelinePane, { target, props: { task: parent, onopenchild } });
    const ids = () => [...target.querySelectorAll<HTMLElement>('[data-testid="subagent-node"]')].map((n) => `${n.dataset.child}:${n.dataset.status}`);
    await until(() => ids().join() === "c1:running,g1:completed,c2:running");
    // Only the children that may delegate are followed: c1 and c2 (depth 1), not g1 (depth 2).
    expect(asked.filter(([c]) => c === "subscribe_task").map(([, a]) => a.taskId)).toEqual(["t1", "c1", "c2"]);
    expect(target.querySelectorAll('[data-testid="timeline-subagent"]')).toHaveLength(2);
    // The panel's head adds up what they spent: c1 so far, and its finished child g1.
    expect(target.querySelector('[data-testid="subagent-counts"]')?.textContent).toContain("$0.05");

    target.querySelector<HTMLButtonElement>('[data-child="c1"] button.open')!.click();
    await until(() => onopenchild.mock.calls.length > 0);
    expect(onopenchild).toHaveBeenCalledWith(c1Row);
    expect(asked.find(([c]) => c === "task_children")?.[1]).toEqual({ taskId: "t1" });
  });

  it("says so when the child clicked is not in the journal yet", async () => {
    serve([]);
    const target = document.createElement("div");
    document.body.appendChild(target);
    app = mount(TaskTimelinePane, { target, props: { task: parent, onopenchild: () => {} } });
    const c2 = await until(() => target.querySelector<HTMLButtonElement>('[data-child="c2"] button.open'));
    c2.click();
    const alert = await until(() => [...target.querySelectorAll('[role="alert"]')].find((e) => e.textContent?.includes("not in the journal")));
    expect(alert).toBeTruthy();
  });

  it("shows a child's way back to its parent", async () => {
    serve([]);
    const onback = vi.fn();
    const target = document.createElement("div");
    document.body.appendChild(target);
    app = mount(TaskTimelinePane, { target, props: { task: c1Row, parent, onback } });
    const back = await until(() => target.querySelector<HTMLButtonElement>('[data-testid="subagent-back"]'));
    expect(back.textContent).toContain("Back to Fix the parser");
    expect(target.querySelector(".crumbs")?.textContent).toContain("Sub-agent (worker), depth 1");
    back.click();
    expect(onback).toHaveBeenCalled();
    // A finished child is continued through its parent, not on its own.
    await until(() => target.querySelector('[data-testid="subagent-no-followup"]'));
    expect(target.querySelector("textarea")).toBeNull();
  });
});
