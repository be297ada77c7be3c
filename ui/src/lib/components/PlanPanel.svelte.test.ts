import { flushSync, mount, unmount } from "svelte";
import { afterEach, describe, expect, it } from "vitest";
import { ev, sampleTask } from "../../test/events";
import type { PlanItem } from "../bindings/PlanItem";
import { applyEvents, emptyTimeline } from "../state/timeline";
import PlanPanel from "./PlanPanel.svelte";

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = "";
});

const first: PlanItem[] = [
  { step: "Read the failing test", status: "completed" },
  { step: "Fix the parser", status: "in_progress" },
  { step: "Run the suite", status: "pending" },
];
const second: PlanItem[] = [
  { step: "Read the failing test", status: "completed" },
  { step: "Fix the parser", status: "completed" },
  { step: "Run the suite", status: "in_progress" },
  { step: "Update the changelog", status: "pending" },
];

const steps = (root: Element) =>
  [...root.querySelectorAll<HTMLElement>("[data-plan] [data-step-status]")].map((s) => [
    s.querySelector(".text")?.textContent,
    s.dataset.stepStatus,
  ]);

describe("the plan panel", () => {
  it("shows each step as pending, in progress or done, and an update replaces the plan", () => {
    const events = [...sampleTask().slice(0, 2), ev(3, { type: "plan_updated", items: first })];
    let timeline = applyEvents(emptyTimeline(), events);
    expect(timeline.plan).toEqual(first);

    const target = document.createElement("div");
    document.body.appendChild(target);
    let props = $state({ items: timeline.plan });
    app = mount(PlanPanel, { target, props });
    flushSync();
    expect(steps(target)).toEqual([
      ["Read the failing test", "completed"],
      ["Fix the parser", "in_progress"],
      ["Run the suite", "pending"],
    ]);
    expect(target.querySelector("[data-plan-progress]")?.textContent).toBe("1 of 3 done");
    expect(target.querySelector('[data-step-status="completed"] .box')?.getAttribute("aria-label")).toBe("done");

    timeline = applyEvents(timeline, [ev(4, { type: "plan_updated", items: second })]);
    props.items = timeline.plan;
    flushSync();
    expect(steps(target)).toEqual([
      ["Read the failing test", "completed"],
      ["Fix the parser", "completed"],
      ["Run the suite", "in_progress"],
      ["Update the changelog", "pending"],
    ]);
    expect(target.querySelectorAll("[data-plan]")).toHaveLength(1);
    expect(target.querySelector("[data-plan-progress]")?.textContent).toBe("2 of 4 done");
  });

  it("keeps plans out of the timeline itself, so only the latest one is shown", () => {
    const timeline = applyEvents(emptyTimeline(), [
      ev(1, { type: "plan_updated", items: first }),
      ev(2, { type: "plan_updated", items: second }),
    ]);
    expect(timeline.plan).toEqual(second);
    expect(timeline.items).toEqual([]);
  });
});
