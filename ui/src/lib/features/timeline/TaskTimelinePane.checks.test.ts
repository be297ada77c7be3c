import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { flushSync, mount, unmount } from "svelte";
import { afterEach, describe, expect, it } from "vitest";
import type { Event } from "../../bindings/Event";
import { twoRounds } from "../../../test/checks";
import { ev } from "../../../test/events";
import { taskRow } from "../../../test/rows";
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

const task = taskRow({ prompt: "Fix the parser", checks: "passed", last_seq: 19, finished_at: "2026-11-30T03:15:02.000Z" });

describe("the task view's checks", () => {
  it("shows the Checks panel and the header's indicator, and Re-run reads the re-run's events from the journal", async () => {
    const journal: Event[] = twoRounds();
    const calls: [string, unknown][] = [];
    mockIPC((cmd, args) => {
      const a = args as Record<string, unknown>;
      if (cmd !== "unsubscribe") calls.push([cmd, a]);
      switch (cmd) {
        case "subscribe_task": {
          const channel = a.channel as { id: number };
          const internals = (window as unknown as { __TAURI_INTERNALS__: { runCallback: (id: number, data: unknown) => void } }).__TAURI_INTERNALS__;
          setTimeout(() => internals.runCallback(channel.id, { index: 0, message: { kind: "events", events: journal.slice() } }), 0);
          return 1;
        }
        case "unsubscribe":
          return true;
        case "task_events":
          return journal.filter((e) => e.seq > (a.afterSeq as number));
        case "rerun_checks":
          // The re-run's events land in the journal while the command runs.
          journal.push(
            ev(20, { type: "check_started", check_id: "x1", name: "test", command: "cargo test", round: 0, scope: "full" }),
            ev(21, { type: "check_output_delta", check_id: "x1", stream: "stdout", chunk: "test result: FAILED\n" }),
            ev(22, { type: "check_finished", check_id: "x1", name: "test", status: "failed", duration_ms: 2100, summary: "1 test failed: parser::tests::empty", failures: [{ message: "parser::tests::empty", before_task: false }], required: true, scope: "full", only_before_task: false }),
          );
          return new Promise((resolve) => setTimeout(() => resolve(null), 700));
      }
      throw new Error(`unexpected ${cmd}`);
    });
    const target = document.createElement("div");
    document.body.appendChild(target);
    app = mount(TaskTimelinePane, { target, props: { task, owned: true } });
    const panel = await until(() => target.querySelector<HTMLElement>('[data-testid="checks-panel"][data-state="passed"]'));
    expect(target.querySelector('[data-testid="header-checks"]')?.textContent).toContain("checks passed");
    expect(target.querySelectorAll('[data-testid="timeline-checks"]')).toHaveLength(2);
    panel.querySelector<HTMLButtonElement>('[data-testid="checks-rerun"]')!.click();
    flushSync();
    expect(panel.querySelector<HTMLButtonElement>('[data-testid="checks-rerun"]')!.disabled).toBe(true);
    await until(() => target.querySelector('[data-testid="checks-panel"][data-state="failed"]'));
    expect(calls.find((c) => c[0] === "rerun_checks")?.[1]).toEqual({ taskId: "t1" });
    expect(target.querySelector('[data-testid="checks-round"]')?.textContent).toBe("re-run");
    expect(target.querySelector('[data-testid="header-checks"]')?.textContent).toContain("checks failed");
    await until(() => !target.querySelector<HTMLButtonElement>('[data-testid="checks-rerun"]')!.disabled);
  });
});
