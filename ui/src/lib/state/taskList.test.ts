import { describe, expect, it } from "vitest";
import type { TaskRow } from "../bindings/TaskRow";
import { taskRow } from "../../test/rows";
import { TaskList } from "./taskList.svelte";

const row = (id: string): TaskRow => taskRow({ id, prompt: id, status: "running" });

describe("TaskList", () => {
  it("shows the newest task as it appears until the user picks one", () => {
    const list = new TaskList();
    list.replace([row("a")]);
    expect(list.selected?.id).toBe("a");
    list.replace([row("b"), row("a")]);
    expect(list.selected?.id).toBe("b");

    list.choose("a");
    list.replace([row("c"), row("b"), row("a")]);
    expect(list.selected?.id).toBe("a");
  });
});

describe("TaskList, following changed rows", () => {
  it("merges changed and new rows by id, newest first, without dropping the others", () => {
    const at = (id: string, created: string, status: TaskRow["status"] = "running") =>
      taskRow({ id, prompt: id, status, created_at: created });
    const list = new TaskList();
    list.replace([at("b", "2026-11-30T02:00:00.000Z"), at("a", "2026-11-30T01:00:00.000Z")]);
    list.merge([at("a", "2026-11-30T01:00:00.000Z", "completed"), at("c", "2026-11-30T03:00:00.000Z")]);
    expect(list.tasks.map((t) => t.id)).toEqual(["c", "b", "a"]);
    expect(list.tasks.find((t) => t.id === "a")?.status).toBe("completed");
    list.merge([], { c: 1 });
    expect(list.owned).toEqual({ c: 1 });
    expect(list.tasks).toHaveLength(3);
  });
});

describe("TaskList, for the tasks the app runs", () => {
  it("counts the tasks waiting for approval and lists recent repositories once, newest first", () => {
    const list = new TaskList();
    list.replace(
      [
        { ...row("c"), repo: "/work/b" },
        { ...row("b"), repo: "/work/a" },
        { ...row("a"), repo: "/work/b" },
      ],
      { c: 2, b: 0 },
    );
    expect(list.waitingTasks).toBe(1);
    expect(list.recentRepos).toEqual(["/work/b", "/work/a"]);
    list.replace(list.tasks, { c: 0 });
    expect(list.waitingTasks).toBe(0);
  });

  it("closes the New task form when a task is chosen", () => {
    const list = new TaskList();
    list.composing = true;
    list.choose("t1");
    expect(list.composing).toBe(false);
    expect(list.selectedId).toBe("t1");
  });
});

describe("TaskList, opened from the history", () => {
  it("closes the history and opens the task at the event found, even one the live list does not carry", () => {
    const list = new TaskList();
    list.replace([row("a")]);
    list.openHistory();
    expect(list.historyOpen).toBe(true);
    const old = { ...row("z"), status: "completed" as const };
    list.choose("z", 42, old);
    expect(list.historyOpen).toBe(false);
    expect(list.selected?.id).toBe("z");
    expect(list.focusSeq).toBe(42);
    // Picking a task in the sidebar opens it at its end.
    list.choose("a");
    expect(list.focusSeq).toBeNull();
    expect(list.selected?.id).toBe("a");
  });
});

describe("TaskList, opening the Memory view", () => {
  it("opens on the repository asked for, else the one shown last, else the selected task's, and closes the other views", () => {
    const list = new TaskList();
    list.replace([
      { ...row("b"), repo: "/work/b" },
      { ...row("a"), repo: "/work/a" },
    ]);
    list.choose("a");
    list.openCosts();
    list.openMemory();
    expect([list.memoryOpen, list.costsOpen, list.memoryRepo]).toEqual([true, false, "/work/a"]);
    list.openMemory("/work/b");
    expect(list.memoryRepo).toBe("/work/b");
    list.openSettings();
    expect([list.memoryOpen, list.settingsOpen]).toEqual([false, true]);
    list.openMemory();
    expect(list.memoryRepo).toBe("/work/b");
    list.choose("b");
    expect(list.memoryOpen).toBe(false);

    const empty = new TaskList();
    empty.openMemory();
    expect([empty.memoryOpen, empty.memoryRepo]).toEqual([true, null]);
  });
});

describe("TaskList, opening sub-agents", () => {
  it("opens a child from its parent and goes back the way it came, through a grandchild", () => {
    const list = new TaskList();
    list.replace([taskRow({ id: "p" })]);
    list.choose("p");
    const child = taskRow({ id: "c", parent_task_id: "p", depth: 1, role: "worker" });
    const grandchild = taskRow({ id: "g", parent_task_id: "c", depth: 2, role: "worker" });
    list.openChild(child);
    expect(list.selected?.id).toBe("c");
    list.openChild(grandchild);
    expect(list.selected?.id).toBe("g");
    expect(list.trail.map((t) => t.id)).toEqual(["p", "c"]);
    list.back();
    expect(list.selected?.id).toBe("c");
    list.back();
    expect(list.selected?.id).toBe("p");
    expect(list.trail).toEqual([]);
  });

  it("forgets the way back when another task is chosen", () => {
    const list = new TaskList();
    list.replace([taskRow({ id: "p" }), taskRow({ id: "q" })]);
    list.choose("p");
    list.openChild(taskRow({ id: "c", parent_task_id: "p", depth: 1 }));
    list.choose("q");
    expect(list.trail).toEqual([]);
    list.back();
    expect(list.selected?.id).toBe("q");
  });
});

describe("TaskList, a sub-agent opened without a trail", () => {
  it("goes back to its parent when the list has it", () => {
    const list = new TaskList();
    list.replace([taskRow({ id: "p" })]);
    list.choose("c", null, taskRow({ id: "c", parent_task_id: "p", depth: 1 }));
    expect(list.parent?.id).toBe("p");
    list.back();
    expect(list.selected?.id).toBe("p");
  });
});
