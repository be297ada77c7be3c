import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { flushSync, mount, unmount } from "svelte";
import { afterEach, describe, expect, it } from "vitest";
import { sampleTask } from "../../../test/events";
import { taskRow } from "../../../test/rows";
import type { TimelineCheckpoint } from "../../bindings/TimelineCheckpoint";
import TaskTimelinePane from "../timeline/TaskTimelinePane.svelte";

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = "";
  clearMocks();
});

async function until<T>(found: () => T | null | undefined, what = "it"): Promise<T> {
  for (let i = 0; i < 200; i++) {
    flushSync();
    const v = found();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`${what} never appeared`);
}

const task = taskRow({
  id: "t1",
  repo: "/home/dev/acme",
  prompt: "Say hello\nand more",
  finished_at: "2026-11-30T03:15:02.000Z",
  last_seq: 13,
});

const checkpoints: TimelineCheckpoint[] = [
  { n: 1, commit: "c1", created_at: "2026-11-30T03:15:01.000Z", files: ["hello.txt"], provenance: { tool: "write_file", summary: "write_file hello.txt" } },
  { n: 2, commit: "c2", created_at: "2026-11-30T03:15:02.000Z", files: ["hello.txt"], provenance: { tool: "edit_file", summary: "edit_file hello.txt" } },
] as unknown as TimelineCheckpoint[];

/** The task view over a scripted backend: `answers` overrides commands; every call is recorded. */
function render(answers: Record<string, (a: Record<string, unknown>) => unknown> = {}, over = {}) {
  const calls: [string, Record<string, unknown>][] = [];
  const opened: string[] = [];
  let deleted = 0;
  mockIPC((cmd, args) => {
    const a = (args ?? {}) as Record<string, unknown>;
    if (cmd === "subscribe_task") {
      const channel = a.channel as { id: number };
      if (a.afterSeq === 0) {
        const internals = (window as unknown as { __TAURI_INTERNALS__: { runCallback: (id: number, data: unknown) => void } }).__TAURI_INTERNALS__;
        setTimeout(() => internals.runCallback(channel.id, { index: 0, message: { kind: "events", events: sampleTask() } }), 0);
      }
      return 1;
    }
    if (cmd === "unsubscribe") return true;
    calls.push([cmd, a]);
    if (answers[cmd]) return answers[cmd](a);
    if (cmd === "review_timeline") return checkpoints;
    throw new Error(`unexpected ${cmd}`);
  });
  const target = document.createElement("div");
  document.body.appendChild(target);
  app = mount(TaskTimelinePane, {
    target,
    props: { task: { ...task, ...over }, onopentask: (id: string) => opened.push(id), ondeleted: () => (deleted += 1) },
  });
  return { target, calls, opened, deleted: () => deleted };
}

const q = <T extends HTMLElement>(root: ParentNode, testid: string) => root.querySelector<T>(`[data-testid="${testid}"]`);

function openMenu(target: HTMLElement) {
  q<HTMLButtonElement>(target, "task-menu")!.click();
  flushSync();
}

describe("forking a task", () => {
  it("forks from the checkpoint picked with the prompt typed, then opens the new task", async () => {
    const { target, calls, opened } = render({ fork_task: () => "t9" });
    (await until(() => q<HTMLButtonElement>(target, "fork-button"), "the fork button")).click();
    const dialog = await until(() => q(document, "fork-dialog"), "the dialog");
    const select = await until(() => (q<HTMLSelectElement>(dialog, "fork-checkpoint")?.options.length === 3 ? q<HTMLSelectElement>(dialog, "fork-checkpoint") : null), "the checkpoints");
    // From the header it starts at the latest checkpoint.
    expect(select.value).toBe("2");
    const confirm = q<HTMLButtonElement>(dialog, "fork-confirm")!;
    expect(confirm.disabled).toBe(true);
    select.value = "1";
    select.dispatchEvent(new Event("change", { bubbles: true }));
    const prompt = q<HTMLTextAreaElement>(dialog, "fork-prompt")!;
    prompt.value = "Say goodbye instead";
    prompt.dispatchEvent(new Event("input", { bubbles: true }));
    flushSync();
    confirm.click();
    await until(() => opened.length > 0, "the new task");
    expect(calls.filter(([c]) => c === "fork_task")).toEqual([["fork_task", { taskId: "t1", checkpoint: 1, prompt: "Say goodbye instead" }]]);
    expect(opened).toEqual(["t9"]);
    expect(q(document, "fork-dialog")).toBeNull();
  });

  it("forks from the base (checkpoint 0) and shows why a fork was refused", async () => {
    const { target, calls, opened } = render({
      fork_task: () => {
        throw { code: "not_found", message: "checkpoint 0 of t1: the base commit is gone" };
      },
    });
    (await until(() => q<HTMLButtonElement>(target, "fork-button"))).click();
    const dialog = await until(() => q(document, "fork-dialog"));
    const select = await until(() => (q<HTMLSelectElement>(dialog, "fork-checkpoint")?.options.length === 3 ? q<HTMLSelectElement>(dialog, "fork-checkpoint") : null));
    select.value = "0";
    select.dispatchEvent(new Event("change", { bubbles: true }));
    const prompt = q<HTMLTextAreaElement>(dialog, "fork-prompt")!;
    prompt.value = "Start over";
    prompt.dispatchEvent(new Event("input", { bubbles: true }));
    flushSync();
    q<HTMLButtonElement>(dialog, "fork-confirm")!.click();
    const error = await until(() => q(dialog, "fork-error"));
    expect(error.textContent).toBe("checkpoint 0 of t1: the base commit is gone");
    expect(calls.find(([c]) => c === "fork_task")?.[1]).toEqual({ taskId: "t1", checkpoint: 0, prompt: "Start over" });
    expect(opened).toEqual([]);
  });
});

describe("the task menu", () => {
  it("exports where the save dialog says, as the format picked", async () => {
    const { target, calls } = render({ "plugin:dialog|save": () => "/tmp/t1.md", export_task: () => 2048 });
    await until(() => q(target, "task-menu"));
    openMenu(target);
    q<HTMLButtonElement>(target, "export-markdown")!.click();
    const notice = await until(() => q(target, "task-notice"), "the notice");
    expect(notice.textContent).toBe("Wrote 2.0 KB to /tmp/t1.md");
    expect(calls.map(([c]) => c)).toEqual(["plugin:dialog|save", "export_task"]);
    expect((calls[0][1].options as Record<string, unknown>).defaultPath).toBe("/home/dev/acme/t1.md");
    expect(calls[1][1]).toEqual({ taskId: "t1", format: "markdown", path: "/tmp/t1.md" });
  });

  it("writes nothing when the save dialog is cancelled", async () => {
    const { target, calls } = render({ "plugin:dialog|save": () => null });
    await until(() => q(target, "task-menu"));
    openMenu(target);
    q<HTMLButtonElement>(target, "export-patch")!.click();
    await new Promise((r) => setTimeout(r, 20));
    expect(calls.map(([c]) => c)).toEqual(["plugin:dialog|save"]);
    openMenu(target);
    expect(q(target, "export-json")).not.toBeNull();
  });

  it("archives and unarchives", async () => {
    const { target, calls } = render({ archive_task: () => null });
    await until(() => q(target, "task-menu"));
    openMenu(target);
    const toggle = q<HTMLButtonElement>(target, "archive-toggle")!;
    expect(toggle.textContent).toBe("Archive");
    toggle.click();
    await until(() => q(target, "task-notice"));
    openMenu(target);
    expect(q(target, "archive-toggle")!.textContent).toBe("Unarchive");
    q<HTMLButtonElement>(target, "archive-toggle")!.click();
    await until(() => calls.length === 2);
    expect(calls).toEqual([
      ["archive_task", { taskId: "t1", archived: true }],
      ["archive_task", { taskId: "t1", archived: false }],
    ]);
  });

  it("asks before deleting, naming the task and keeping its cost rows", async () => {
    const { target, calls, deleted } = render({ delete_task: () => null });
    await until(() => q(target, "task-menu"));
    openMenu(target);
    q<HTMLButtonElement>(target, "delete-task")!.click();
    const dialog = await until(() => q(document, "delete-dialog"), "the question");
    expect(q(dialog, "delete-task-name")!.textContent).toBe("“Say hello”");
    expect(dialog.textContent).toContain("cost rows are kept");
    expect(calls).toEqual([]);
    q<HTMLButtonElement>(dialog, "delete-confirm")!.click();
    await until(() => deleted() === 1, "the deletion");
    expect(calls).toEqual([["delete_task", { taskId: "t1" }]]);
    expect(q(document, "delete-dialog")).toBeNull();
  });

  it("says why a delete was refused and deletes nothing on cancel", async () => {
    const { target, deleted } = render({
      delete_task: () => {
        throw { code: "running", message: "The task is running." };
      },
    });
    await until(() => q(target, "task-menu"));
    openMenu(target);
    q<HTMLButtonElement>(target, "delete-task")!.click();
    const dialog = await until(() => q(document, "delete-dialog"));
    q<HTMLButtonElement>(dialog, "delete-confirm")!.click();
    const error = await until(() => q(dialog, "delete-error"));
    expect(error.textContent).toBe("The task is running. Stop the task first.");
    expect(deleted()).toBe(0);
  });
});

describe("TaskActions of an imported session", () => {
  it("offers no fork: an imported session is read-only", async () => {
    const { default: TaskActions } = await import("./TaskActions.svelte");
    const target = document.createElement("div");
    document.body.appendChild(target);
    app = mount(TaskActions, { target, props: { task: taskRow({ id: "cc-1", source: "claude-code" }), onfork: () => {}, ondeleted: () => {} } });
    flushSync();
    expect(target.querySelector('[data-testid="fork-button"]')).toBeNull();
    // Its transcript exports; a patch of changes it has none of is not offered.
    openMenu(target);
    expect(q(target, "export-markdown")).not.toBeNull();
    expect(q(target, "export-patch")).toBeNull();
    unmount(app);
    app = mount(TaskActions, { target, props: { task: taskRow({ id: "t1" }), onfork: () => {}, ondeleted: () => {} } });
    flushSync();
    expect(target.querySelector('[data-testid="fork-button"]')).not.toBeNull();
    openMenu(target);
    expect(q(target, "export-patch")).not.toBeNull();
  });
});
