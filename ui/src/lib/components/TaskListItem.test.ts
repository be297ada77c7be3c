import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { flushSync, mount, unmount } from "svelte";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { TaskRow } from "../bindings/TaskRow";
import { taskRow } from "../../test/rows";
import TaskSidebar from "../features/tasks/TaskSidebar.svelte";
import { TaskList } from "../state/taskList.svelte";
import TaskListItem, { formatDuration } from "./TaskListItem.svelte";

const started = "2026-11-30T03:00:00.000Z";
const at = (seconds: number) => new Date(Date.parse(started) + seconds * 1000);

const task = (over: Partial<TaskRow>): TaskRow =>
  taskRow({ repo: "/work/api", prompt: "Fix the parser", status: "running", created_at: started, updated_at: started, cost_usd: 0.12, ...over });

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = "";
  clearMocks();
  vi.useRealTimers();
});

function show(component: typeof TaskListItem | typeof TaskSidebar, props: Record<string, unknown>) {
  const target = document.createElement("div");
  document.body.appendChild(target);
  app = mount(component as typeof TaskListItem, { target, props: props as never });
  flushSync();
  return target;
}

const elapsed = (root: Element, id = "t1") =>
  root.querySelector(`[data-task-id="${id}"] [data-elapsed]`)?.textContent?.trim();

describe("a task's elapsed time in the sidebar", () => {
  it("reads like a stopwatch", () => {
    expect(formatDuration(0)).toBe("0s");
    expect(formatDuration(14_999)).toBe("14s");
    expect(formatDuration(134_000)).toBe("2m 14s");
    expect(formatDuration(3_600_000 + 5 * 60_000)).toBe("1h 05m");
    expect(formatDuration(26 * 3_600_000)).toBe("1d 2h");
  });

  it("is the time from start to finish for a finished task, however late it is read", () => {
    const done = task({ status: "completed", finished_at: at(185).toISOString(), updated_at: at(185).toISOString() });
    const root = show(TaskListItem, { task: done, now: at(7200), onselect: () => {} });
    expect(elapsed(root)).toBe("3m 05s");
    expect(root.querySelector("[data-elapsed]")?.getAttribute("title")).toBe("ran for");
    expect(root.textContent).toContain("$0.12");
  });

  it("ticks every second while the task runs", () => {
    vi.useFakeTimers();
    vi.setSystemTime(at(134));
    mockIPC(() => 1);
    const list = new TaskList();
    list.replace([task({}), task({ id: "t0", status: "failed", finished_at: at(-60).toISOString(), created_at: at(-600).toISOString() })]);
    const root = show(TaskSidebar, { list });
    expect(elapsed(root)).toBe("2m 14s");
    expect(elapsed(root, "t0")).toBe("9m 00s");

    vi.advanceTimersByTime(1000);
    flushSync();
    expect(elapsed(root)).toBe("2m 15s");
    vi.advanceTimersByTime(60_000);
    flushSync();
    expect(elapsed(root)).toBe("3m 15s");
    expect(elapsed(root, "t0")).toBe("9m 00s");
  });
});

describe("every task status in the sidebar", () => {
  it("has a label and a tone of its own, answered set apart from completed", () => {
    const statuses = ["running", "completed", "answered", "failed", "checks_failed", "budget_exceeded", "max_steps", "interrupted"];
    const root = show(TaskListItem, { task: task({ status: "answered", finished_at: at(5).toISOString() }), now: at(10), onselect: () => {} });
    const badge = root.querySelector<HTMLElement>(".badge[data-status]");
    expect(badge?.dataset.status).toBe("answered");
    expect(badge?.getAttribute("title")).toBe("No changes made");
    expect(badge?.classList.contains("quiet")).toBe(true);
    for (const status of statuses) {
      unmount(app!);
      document.body.innerHTML = "";
      const r = show(TaskListItem, { task: task({ status: status as TaskRow["status"] }), now: at(10), onselect: () => {} });
      const b = r.querySelector<HTMLElement>(".badge[data-status]");
      expect(b?.getAttribute("title"), status).not.toBe(status);
    }
  });
});

describe("a task's checks in the sidebar", () => {
  it("shows passed or failed with a label, and nothing when no checks ran", () => {
    const now = at(10);
    const passed = show(TaskListItem, { task: task({ status: "completed", checks: "passed" }), now, onselect: () => {} });
    const mark = passed.querySelector('[data-testid="task-checks"]')!;
    expect(mark.getAttribute("aria-label")).toBe("checks passed");
    expect(mark.textContent).toContain("checks");
    unmount(app!);
    const failed = show(TaskListItem, { task: task({ status: "checks_failed", checks: "failed" }), now, onselect: () => {} });
    expect(failed.querySelector('[data-testid="task-checks"]')?.getAttribute("data-checks")).toBe("failed");
    expect(failed.querySelector(".badge")?.getAttribute("title")).toBe("Checks failed");
    unmount(app!);
    const none = show(TaskListItem, { task: task({ status: "completed" }), now, onselect: () => {} });
    expect(none.querySelector('[data-testid="task-checks"]')).toBeNull();
    app = null;
  });
});
