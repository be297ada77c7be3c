import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { flushSync, mount, unmount } from "svelte";
import { afterEach, describe, expect, it } from "vitest";
import type { TaskRow } from "../../bindings/TaskRow";
import { taskRow } from "../../../test/rows";
import { displayOrder, groupByRepo, neighbour } from "../../state/repoGroups";
import { TaskList } from "../../state/taskList.svelte";
import TaskSidebar from "./TaskSidebar.svelte";

const row = (id: string, repo: string, minute: number): TaskRow =>
  taskRow({ id, repo, prompt: `task ${id}`, created_at: `2026-11-30T03:${String(minute).padStart(2, "0")}:00.000Z` });

// As the journal lists them, newest first, two repositories interleaved.
const tasks = [row("d", "/work/api", 4), row("c", "/work/web", 3), row("b", "/work/api", 2), row("a", "/work/web", 1)];

describe("grouping tasks by repository", () => {
  it("puts the repository with the newest task first and the newest task first in each", () => {
    const groups = groupByRepo(tasks);
    expect(groups.map((g) => [g.repo, g.tasks.map((t) => t.id)])).toEqual([
      ["/work/api", ["d", "b"]],
      ["/work/web", ["c", "a"]],
    ]);
    expect(displayOrder(groups).map((t) => t.id)).toEqual(["d", "b", "c", "a"]);
  });

  it("moves up and down through the tasks in display order, stopping at the ends", () => {
    const order = displayOrder(groupByRepo(tasks));
    expect(neighbour(order, "b", "ArrowDown")?.id).toBe("c");
    expect(neighbour(order, "c", "ArrowUp")?.id).toBe("b");
    expect(neighbour(order, "a", "ArrowDown")).toBeNull();
    expect(neighbour(order, "d", "ArrowUp")).toBeNull();
    expect(neighbour(order, null, "ArrowDown")?.id).toBe("d");
  });
});

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = "";
  clearMocks();
});

describe("the sidebar", () => {
  it("shows a header per repository with its task count and walks the tasks with the arrow keys", () => {
    mockIPC(() => 1);
    const list = new TaskList();
    list.replace(tasks);
    const target = document.createElement("div");
    document.body.appendChild(target);
    app = mount(TaskSidebar, { target, props: { list } });
    flushSync();

    const headers = [...target.querySelectorAll(".sidebar [data-repo]")].map((h) => `${h.querySelector(".repo-name")?.textContent} ${h.querySelector(".repo-count")?.textContent}`);
    expect(headers).toEqual(["api 2", "web 2"]);
    const ids = () => [...target.querySelectorAll<HTMLElement>(".sidebar [data-task-id]")].map((b) => b.dataset.taskId);
    expect(ids()).toEqual(["d", "b", "c", "a"]);
    expect(target.querySelector('[data-task-id="d"]')?.getAttribute("data-status")).toBe("completed");

    list.choose("b");
    flushSync();
    const listEl = target.querySelector(".list")!;
    listEl.dispatchEvent(new KeyboardEvent("keydown", { key: "ArrowDown", bubbles: true }));
    flushSync();
    expect(list.selectedId).toBe("c");
    expect(target.querySelector('[aria-current="true"]')?.getAttribute("data-task-id")).toBe("c");
    listEl.dispatchEvent(new KeyboardEvent("keydown", { key: "ArrowUp", bubbles: true }));
    listEl.dispatchEvent(new KeyboardEvent("keydown", { key: "ArrowUp", bubbles: true }));
    flushSync();
    expect(list.selectedId).toBe("d");
  });

  it("opens the Memory view from the footer and on a repository from its header", () => {
    mockIPC(() => 1);
    const list = new TaskList();
    list.replace(tasks);
    const opened: (string | null)[] = [];
    const target = document.createElement("div");
    document.body.appendChild(target);
    app = mount(TaskSidebar, { target, props: { list, onmemory: (repo: string | null) => opened.push(repo), onhistory: () => {} } });
    flushSync();
    target.querySelector<HTMLButtonElement>('[data-repo="/work/web"] [data-testid="repo-memory"]')!.click();
    expect(target.querySelector('[data-repo="/work/api"] [data-testid="repo-memory"]')?.getAttribute("aria-label")).toBe("Memory of api");
    target.querySelector<HTMLButtonElement>('[data-testid="memory-button"]')!.click();
    expect(opened).toEqual(["/work/web", null]);
  });
});
