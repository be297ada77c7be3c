import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { flushSync, mount, unmount } from "svelte";
import { afterEach, describe, expect, it } from "vitest";
import type { BatchItemRow } from "../../bindings/BatchItemRow";
import type { BatchRow } from "../../bindings/BatchRow";
import type { BatchView } from "../../ipc/batch";
import { taskRow } from "../../../test/rows";
import BatchPane from "./BatchPane.svelte";

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = "";
  clearMocks();
});

const settle = async () => {
  for (let i = 0; i < 6; i++) await new Promise((r) => setTimeout(r, 0));
  flushSync();
};

const row = (over: Partial<BatchRow> = {}): BatchRow => ({
  id: "b1",
  kind: "batch",
  name: "Bump the version",
  concurrency: 2,
  status: "running",
  created_at: new Date().toISOString(),
  finished_at: null,
  owner_pid: 1,
  items: 2,
  queued: 1,
  started: 1,
  done: 0,
  spec: "{}",
  ...over,
});

const item = (n: number, over: Partial<BatchItemRow> = {}): BatchItemRow => ({
  n,
  label: null,
  spec: JSON.stringify({ repo: `/src/r${n}`, prompt: "Bump the version" }),
  state: "queued",
  task_id: null,
  error: null,
  started_at: null,
  finished_at: null,
  task: null,
  ...over,
});

/** The batch commands over a view the test changes; `calls` records each command. */
function backend(view: BatchView) {
  const state = { view, calls: [] as [string, Record<string, unknown>][] };
  mockIPC((cmd, raw) => {
    const args = (raw ?? {}) as Record<string, unknown>;
    state.calls.push([cmd, args]);
    switch (cmd) {
      case "batch_list":
        return [state.view.batch];
      case "batch_status":
        return state.view;
      case "batch_start":
        return "b1";
      case "batch_stop":
      case "batch_resume":
      case "answer_approval":
        return null;
    }
    throw new Error(`unexpected ${cmd}`);
  });
  return state;
}

const text = (css: string) => [...document.querySelectorAll(css)].map((e) => e.textContent?.replace(/\s+/g, " ").trim());

describe("the Batch view", () => {
  it("shows each item's status and fills in when its revision changes", async () => {
    const b = backend({
      batch: row(),
      items: [item(1, { state: "started", task_id: "t1", task: taskRow({ id: "t1", repo: "/src/r1", status: "running" }) }), item(2)],
      approvals: [],
    });
    const props = $state({ revision: "1", onopentask: () => {} });
    app = mount(BatchPane, { target: document.body, props });
    await settle();
    expect([...document.querySelectorAll("[data-testid=batch-item]")].map((e) => (e as HTMLElement).dataset.status)).toEqual(["running", "queued"]);
    expect(text("[data-testid=batch-item] .repo")).toEqual(["r1", "r2"]);
    expect(document.querySelector("[data-testid=batch-progress]")?.textContent).toContain("0 of 2 done");

    b.view = {
      batch: row({ status: "finished", queued: 0, started: 0, done: 2 }),
      items: [
        item(1, { state: "done", task_id: "t1", task: taskRow({ id: "t1", repo: "/src/r1", status: "completed", checks: "passed", cost_usd: 0.5 }) }),
        item(2, { state: "done", task_id: "t2", task: taskRow({ id: "t2", repo: "/src/r2", status: "failed" }) }),
      ],
      approvals: [],
    };
    // The sidebar's live list moved: the view reads the batch again, without a reload.
    props.revision = "2";
    await settle();
    expect([...document.querySelectorAll("[data-testid=batch-item]")].map((e) => (e as HTMLElement).dataset.status)).toEqual(["completed", "failed"]);
    expect(text("[data-testid=batch-item-checks]")).toEqual(["passed", "—"]);
    expect(text("[data-testid=batch-item-cost]")[0]).toBe("$0.50");
    expect(document.querySelector("[data-testid=batch-stop]")).toBeNull();
  });

  it("gathers the approvals of its tasks in one list and answers each for its own task", async () => {
    const request = (id: string, command: string) => ({
      approval_id: id,
      kind: "tool" as const,
      call_id: `c-${id}`,
      tool: "run_command",
      action: { kind: "command" as const, command },
      reason: "mode ask",
      rule: "mode ask",
      source: "built-in",
      suggestions: [],
    });
    const b = backend({
      batch: row({ queued: 0, started: 2 }),
      items: [item(1, { state: "started", task_id: "t1" }), item(2, { state: "started", task_id: "t2" })],
      approvals: [
        { ...request("a1", "npm test"), task_id: "t1", n: 1 },
        { ...request("a2", "make"), task_id: "t2", n: 2 },
      ],
    });
    app = mount(BatchPane, { target: document.body, props: { onopentask: () => {} } });
    await settle();
    expect(text("[data-testid=batch-approval] code")).toEqual(["$ npm test", "$ make"]);
    // One full card only (its keys answer it alone), for the first request.
    expect(document.querySelectorAll("[data-approval-card]").length).toBe(1);
    (document.querySelectorAll("[data-testid=batch-approve]")[1] as HTMLButtonElement).click();
    await settle();
    expect(b.calls.find(([c]) => c === "answer_approval")?.[1]).toEqual({ taskId: "t2", answer: { approval_id: "a2", decision: "approve_once" } });
  });

  it("stops a running batch and resumes a stopped one", async () => {
    const b = backend({ batch: row(), items: [item(1)], approvals: [] });
    app = mount(BatchPane, { target: document.body, props: { onopentask: () => {} } });
    await settle();
    (document.querySelector("[data-testid=batch-stop]") as HTMLButtonElement).click();
    await settle();
    expect(b.calls.some(([c, a]) => c === "batch_stop" && a.id === "b1")).toBe(true);
    b.view = { ...b.view, batch: row({ status: "interrupted" }) };
    unmount(app);
    app = mount(BatchPane, { target: document.body, props: { onopentask: () => {} } });
    await settle();
    (document.querySelector("[data-testid=batch-resume]") as HTMLButtonElement).click();
    await settle();
    expect(b.calls.some(([c, a]) => c === "batch_resume" && a.id === "b1")).toBe(true);
  });

  it("sends a prompt over the repositories typed, and shows the refusal naming the bad line", async () => {
    const b = { view: { batch: row(), items: [], approvals: [] } as BatchView, calls: [] as [string, Record<string, unknown>][] };
    mockIPC((cmd, raw) => {
      b.calls.push([cmd, (raw ?? {}) as Record<string, unknown>]);
      if (cmd === "batch_list") return [];
      if (cmd === "batch_start") {
        const req = (raw as { request: { file?: string } }).request;
        if (req.file) throw { code: "bad_request", message: "/t/tasks.toml line 5: unknown mode \"yolo\"" };
        return "b1";
      }
      if (cmd === "batch_status") return b.view;
      throw new Error(cmd);
    });
    app = mount(BatchPane, { target: document.body, props: { onopentask: () => {} } });
    await settle();
    const form = document.querySelector("[data-testid=batch-form]") as HTMLFormElement;
    const prompt = form.querySelector("[data-testid=batch-prompt]") as HTMLTextAreaElement;
    prompt.value = "Bump the version";
    prompt.dispatchEvent(new Event("input"));
    const repos = form.querySelector("[data-testid=batch-repos]") as HTMLTextAreaElement;
    repos.value = "/src/a\n/src/b\n";
    repos.dispatchEvent(new Event("input"));
    await settle();
    expect(form.querySelector("[data-testid=batch-start]")?.textContent).toBe("Start 2 tasks");
    form.requestSubmit();
    await settle();
    expect(b.calls.find(([c]) => c === "batch_start")?.[1]).toEqual({
      request: { prompt: "Bump the version", repos: ["/src/a", "/src/b"], mode: undefined, checks: null, concurrency: 2 },
    });

    (document.querySelector("[data-testid=batch-new]") as HTMLButtonElement).click();
    await settle();
    (document.querySelector("[data-testid=batch-source-file]") as HTMLButtonElement).click();
    await settle();
    const file = document.querySelector("[data-testid=batch-file]") as HTMLInputElement;
    file.value = "/t/tasks.toml";
    file.dispatchEvent(new Event("input"));
    await settle();
    (document.querySelector("[data-testid=batch-form]") as HTMLFormElement).requestSubmit();
    await settle();
    expect(document.querySelector("[data-testid=batch-form-error]")?.textContent).toContain("line 5");
  });
});
