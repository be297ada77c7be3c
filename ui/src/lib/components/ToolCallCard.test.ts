import { flushSync, mount, unmount } from "svelte";
import { afterEach, describe, expect, it } from "vitest";
import { ev } from "../../test/events";
import type { Event } from "../bindings/Event";
import { applyEvents, emptyTimeline } from "../state/timeline";
import TimelineView from "./TimelineView.svelte";

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = "";
});

function render(events: Event[]) {
  const target = document.createElement("div");
  document.body.appendChild(target);
  app = mount(TimelineView, { target, props: { items: applyEvents(emptyTimeline(), events).items } });
  flushSync();
  return target.querySelector<HTMLElement>('[data-call-id="c1"]')!;
}

const waiting: Event[] = [
  ev(1, { type: "tool_call_begin", call_id: "c1", tool: "run_command", args: { command: "make deploy" }, recovered: false }),
  ev(2, {
    type: "approval_requested",
    approval_id: "ap1",
    call_id: "c1",
    tool: "run_command",
    action: { kind: "command", command: "make deploy" },
    reason: "no rule allows it",
    rule: "mode ask",
    source: "--mode",
    suggestions: [],
  }),
];

describe("a tool card asking for approval", () => {
  it("says it waits for approval while it does", () => {
    const card = render(waiting);
    expect(card.querySelector("[data-approval]")?.getAttribute("data-approval")).toBe("pending");
    expect(card.textContent).toContain("Waiting for approval");
  });

  it("stops saying so once the task was stopped and the call was not run", () => {
    const card = render([
      ...waiting,
      ev(3, {
        type: "tool_call_end",
        call_id: "c1",
        status: "denied",
        error: "not run: the task was stopped while waiting for approval",
        output: "",
        duration_ms: 0,
      }),
      ev(4, { type: "task_finished", status: "interrupted", summary: "stopped" }),
    ]);
    expect(card.textContent).not.toContain("Waiting for approval");
    expect(card.querySelector("[data-approval]")?.getAttribute("data-approval")).toBe("unanswered");
    expect(card.textContent).toContain("Not answered");
    expect(card.getAttribute("data-status")).toBe("denied");
  });
});
