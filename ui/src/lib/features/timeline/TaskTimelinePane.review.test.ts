import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { flushSync, mount, unmount } from "svelte";
import { afterEach, describe, expect, it } from "vitest";
import { sampleTask } from "../../../test/events";
import type { TaskRow } from "../../bindings/TaskRow";
import { taskRow } from "../../../test/rows";
import { libDiff, sampleReview } from "../review/fixtures";
import TaskTimelinePane from "./TaskTimelinePane.svelte";

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = "";
  clearMocks();
});

async function until<T>(found: () => T | null | undefined): Promise<T> {
  for (let i = 0; i < 200; i++) {
    flushSync();
    const v = found();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error("never appeared");
}

const task: TaskRow = taskRow({
  repo: "/home/dev/acme",
  prompt: "Say hello",
  summary: "Done.",
  created_at: "2026-11-30T03:15:00.000Z",
  updated_at: "2026-11-30T03:15:02.000Z",
  finished_at: "2026-11-30T03:15:02.000Z",
  provider: "openai-chat",
  model: "mock-model",
  base_commit: "abc123",
  branch: "bosun/t1",
  worktree: "/wt/t1",
  tool_calls: 1,
  last_seq: 13,
});

describe("the task view's review tab", () => {
  it("opens the review of a task that changed files, and a hunk's step shows in the timeline", async () => {
    mockIPC((cmd, args) => {
      const a = args as Record<string, unknown>;
      switch (cmd) {
        case "subscribe_task": {
          const channel = a.channel as { id: number };
          // The timeline's subscription gets the task's history; the review's (after seq 13) nothing.
          if (a.afterSeq === 0) {
            const internals = (window as unknown as { __TAURI_INTERNALS__: { runCallback: (id: number, data: unknown) => void } }).__TAURI_INTERNALS__;
            setTimeout(() => internals.runCallback(channel.id, { index: 0, message: { kind: "events", events: sampleTask() } }), 0);
          }
          return 1;
        }
        case "unsubscribe":
          return true;
        case "review_get":
          return sampleReview();
        case "review_file":
          return libDiff();
      }
      throw new Error(`unexpected ${cmd}`);
    });
    const target = document.createElement("div");
    document.body.appendChild(target);
    app = mount(TaskTimelinePane, { target, props: { task } });
    const tab = await until(() => target.querySelector<HTMLButtonElement>('[data-testid="review-tab"]'));
    tab.click();
    await until(() => target.querySelector('[data-testid="review-pane"]'));
    (await until(() => target.querySelector<HTMLElement>('[data-testid="review-file"][data-path="src/lib.rs"]'))).click();
    const link = await until(() => target.querySelector<HTMLButtonElement>('[data-hunk-id="lib-1"] [data-testid="show-in-timeline"]'));
    link.click();
    const step = await until(() => target.querySelector<HTMLElement>('[data-seq="6"].flash'));
    expect(step.getAttribute("data-kind")).toBe("tool");
    expect(target.querySelector('[data-testid="review-pane"]')).toBeNull();
  });
});
