import { flushSync, mount, unmount } from "svelte";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ev } from "../../test/events";
import { finished, progress, started } from "../../test/subagents";
import type { CheckFinished } from "../bindings/CheckFinished";
import { applySubagentEvents, emptySubagents, type SubagentNode } from "../state/subagents";
import { applyEvents, emptyTimeline } from "../state/timeline";
import PlanPanel from "./PlanPanel.svelte";
import SubagentTree from "./SubagentTree.svelte";
import TimelineView from "./TimelineView.svelte";

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = "";
});

function target(): HTMLElement {
  const el = document.createElement("div");
  document.body.appendChild(el);
  return el;
}

const nodes = (root: Element) =>
  [...root.querySelectorAll<HTMLElement>("[data-testid=subagent-node]")].map((n) => ({
    id: n.dataset.child,
    status: n.dataset.status,
    brief: n.querySelector("[data-testid=subagent-brief]")?.textContent,
    text: n.textContent?.replace(/\s+/g, " ").trim(),
  }));

const passed: CheckFinished = {
  check_id: "k1",
  name: "test",
  status: "passed",
  duration_ms: 900,
  summary: "passed",
  failures: [],
  required: true,
  scope: "full",
  only_before_task: false,
};

describe("the sub-agent tree", () => {
  it("shows a child running with what it does, then completed with its files, checks and merge", () => {
    const el = target();
    let tree = applySubagentEvents(emptySubagents(), [ev(1, started("c1", { brief: "write notes.txt\nmore detail" })), ev(2, progress("c1", 2, "write_file"))]);
    const props = $state({ tree });
    app = mount(SubagentTree, { target: el, props });
    flushSync();
    let [n] = nodes(el);
    expect(n).toMatchObject({ id: "c1", status: "running", brief: "write notes.txt" });
    expect(el.querySelector("[data-testid=subagent-activity]")?.textContent).toBe("write_file");
    expect(n.text).toContain("worker · small-model");
    expect(n.text).toContain("2 steps");
    expect(n.text).toContain("2.0k tokens");
    expect(n.text).toContain("$0.02");
    expect(el.querySelector("[data-testid=subagent-files]")?.textContent).toBe("1 file");
    expect(el.querySelector("[data-testid=subagent-counts]")?.textContent?.replace(/\s+/g, " ").trim()).toBe("1 running · 0 of 1 done · $0.02");

    tree = applySubagentEvents(tree, [ev(3, finished("c1", { checks: [passed], files: ["notes.txt", "b.txt"], merge: "merged" }))]);
    props.tree = tree;
    flushSync();
    [n] = nodes(el);
    expect(n.status).toBe("completed");
    expect(el.querySelector("[data-testid=subagent-activity]")).toBeNull();
    expect(el.querySelector("[data-testid=subagent-status]")?.textContent).toBe("completed");
    expect(el.querySelector("[data-testid=subagent-files]")?.textContent).toBe("2 files");
    expect(el.querySelector("[data-testid=subagent-files]")?.getAttribute("title")).toBe("notes.txt\nb.txt");
    expect(el.querySelector("[data-testid=subagent-checks]")?.textContent).toBe("checks passed");
    expect(el.querySelector("[data-testid=subagent-merge]")?.textContent).toBe("merged");
  });

  it("names a conflict's paths and marks parallel children", () => {
    const el = target();
    const tree = applySubagentEvents(emptySubagents(), [
      ev(1, started("a", { parallel: true })),
      ev(2, finished("a", { merge: "conflict", conflicts: ["src/lib.rs", "README.md"], files: [] })),
    ]);
    app = mount(SubagentTree, { target: el, props: { tree } });
    flushSync();
    expect(el.querySelector("[data-testid=subagent-parallel]")?.textContent).toBe("parallel");
    expect(el.querySelector("[data-testid=subagent-merge]")?.textContent).toBe("conflict in src/lib.rs, README.md");
    expect(el.querySelector("[data-testid=subagent-merge]")?.classList.contains("bad")).toBe(true);
  });

  it("draws a child's children under it, folds them away, and opens the node clicked", () => {
    const el = target();
    const tree = applySubagentEvents(emptySubagents(), [ev(1, started("c1")), ev(2, started("c2"))]);
    const ofC1 = applySubagentEvents(emptySubagents(), [ev(4, started("g1", { depth: 2, role: "escalation", model: "big-model" }), "c1")]);
    const onopen = vi.fn<(n: SubagentNode) => void>();
    app = mount(SubagentTree, { target: el, props: { tree, nested: { c1: ofC1 }, onopen } });
    flushSync();
    expect(nodes(el).map((n) => n.id)).toEqual(["c1", "g1", "c2"]);
    const g1 = el.querySelector<HTMLElement>('[data-child="g1"]');
    expect(g1?.style.paddingLeft).toBe("26px");
    expect(g1?.textContent).toContain("escalation · big-model");

    g1?.querySelector<HTMLButtonElement>("button.open")?.click();
    expect(onopen).toHaveBeenCalledWith(expect.objectContaining({ id: "g1", parentId: "c1" }));

    el.querySelector<HTMLButtonElement>('[data-child="c1"] button.fold')?.click();
    flushSync();
    expect(nodes(el).map((n) => n.id)).toEqual(["c1", "c2"]);
    // Folded away, still counted.
    expect(el.querySelector("[data-testid=subagent-counts]")?.textContent).toContain("0 of 3 done");
  });

  it("keeps a long tree virtual: only the rows in view are in the page", () => {
    const el = target();
    const events = Array.from({ length: 200 }, (_, i) => ev(i + 1, started(`c${i}`)));
    app = mount(SubagentTree, { target: el, props: { tree: applySubagentEvents(emptySubagents(), events) } });
    flushSync();
    const shown = nodes(el).length;
    expect(shown).toBeGreaterThan(0);
    expect(shown).toBeLessThan(60);
    expect(el.querySelector("[data-testid=subagent-counts]")?.textContent).toContain("200 running");
  });
});

describe("the plan as a task graph", () => {
  it("shows a node's id, what it waits for, its role and the sub-agent running it", () => {
    const el = target();
    const subagents = applySubagentEvents(emptySubagents(), [ev(1, started("c1", { plan_node: "tests" })), ev(2, progress("c1", 1, "run_command"))]);
    const onopenchild = vi.fn<(id: string) => void>();
    app = mount(PlanPanel, {
      target: el,
      props: {
        items: [
          { step: "Write the parser", status: "completed", id: "parser" },
          { step: "Write its tests", status: "in_progress", id: "tests", depends_on: ["parser"], role: "worker", child_task_id: "c1" },
          { step: "Fix the docs", status: "failed", id: "docs", depends_on: ["parser", "tests"] },
        ],
        subagents,
        onopenchild,
      },
    });
    flushSync();
    expect([...el.querySelectorAll("[data-plan-id]")].map((e) => e.textContent)).toEqual(["parser", "tests", "docs"]);
    expect([...el.querySelectorAll("[data-plan-depends]")].map((e) => e.textContent)).toEqual(["after parser", "after parser, tests"]);
    const child = el.querySelector<HTMLButtonElement>('[data-plan-child="c1"]');
    expect(child?.textContent).toBe("sub-agent: run_command");
    child?.click();
    expect(onopenchild).toHaveBeenCalledWith("c1");
  });
});

describe("the timeline's sub-agent lines", () => {
  it("says when a child started and how it finished, with a link to its timeline", () => {
    const el = target();
    const t = applyEvents(emptyTimeline(), [ev(1, started("c1", { brief: "write notes.txt", scope: ["notes.txt"] })), ev(2, finished("c1", { files: ["notes.txt"] }))]);
    const onopenchild = vi.fn<(id: string) => void>();
    app = mount(TimelineView, { target: el, props: { items: t.items, onopenchild } });
    flushSync();
    const lines = [...el.querySelectorAll<HTMLElement>("[data-testid=timeline-subagent]")];
    expect(lines.map((l) => [l.dataset.phase, l.querySelector(".text")?.textContent])).toEqual([
      ["started", "Sub-agent (worker, small-model) started: write notes.txt — scope notes.txt"],
      ["finished", "Sub-agent completed: 1 file, applied to this worktree, $0.03 — Wrote c1.txt"],
    ]);
    lines[1].querySelector<HTMLButtonElement>("[data-testid=timeline-subagent-open]")?.click();
    expect(onopenchild).toHaveBeenCalledWith("c1");
  });
});
