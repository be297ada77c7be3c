import { describe, expect, it } from "vitest";
import { ev } from "../../test/events";
import { finished, progress, started } from "../../test/subagents";
import { applySubagentEvents, checksResult, emptySubagents, treeCounts, treeLines } from "./subagents";
import { applyEvents, emptyTimeline } from "./timeline";

describe("the sub-agent tree", () => {
  it("opens a node when a child starts, follows its progress and settles it when it finishes", () => {
    let tree = applySubagentEvents(emptySubagents(), [ev(1, started("c1")), ev(2, progress("c1", 2, "write_file"))]);
    expect(tree.order).toEqual(["c1"]);
    expect(tree.nodes.c1).toMatchObject({
      parentId: "t1",
      brief: "write c1.txt",
      role: "worker",
      model: "small-model",
      status: "running",
      activity: "write_file",
      steps: 2,
      tokens: 2000,
      toolCalls: 1,
      files: ["c1.txt"],
      finishedAt: null,
      merge: null,
    });
    tree = applySubagentEvents(tree, [ev(3, finished("c1"))]);
    expect(tree.nodes.c1).toMatchObject({ status: "completed", activity: null, steps: 3, tokens: 3000, costUsd: 0.03, merge: "applied", summary: "Wrote c1.txt" });
    expect(tree.nodes.c1.finishedAt).not.toBeNull();
  });

  it("keeps children in the order they started, with the parallel marker and conflicts named", () => {
    const tree = applySubagentEvents(emptySubagents(), [
      ev(1, started("a", { parallel: true })),
      ev(2, started("b", { parallel: true })),
      ev(3, finished("b", { status: "completed", merge: "conflict", conflicts: ["src/lib.rs"], files: [] })),
      ev(4, finished("a", { merge: "merged" })),
    ]);
    expect(tree.order).toEqual(["a", "b"]);
    expect(tree.nodes.a.parallel).toBe(true);
    expect(tree.nodes.b).toMatchObject({ merge: "conflict", conflicts: ["src/lib.rs"] });
    expect(tree.nodes.a.merge).toBe("merged");
  });

  it("ignores progress and ends of children that never started, and other tasks' events", () => {
    const start = applySubagentEvents(emptySubagents(), [ev(1, started("c1"))]);
    const after = applySubagentEvents(start, [ev(2, progress("ghost", 2)), ev(3, finished("ghost")), ev(4, started("x"), "another-task")]);
    expect(after).toBe(start);
    expect(Object.keys(after.nodes)).toEqual(["c1"]);
  });

  it("ignores a repeated start and progress that arrives after the end", () => {
    let tree = applySubagentEvents(emptySubagents(), [ev(1, started("c1")), ev(2, finished("c1"))]);
    const done = tree;
    tree = applySubagentEvents(tree, [ev(3, started("c1", { brief: "again" })), ev(4, progress("c1", 9)), ev(5, finished("c1", { status: "failed" }))]);
    expect(tree).toBe(done);
    expect(tree.nodes.c1).toMatchObject({ brief: "write c1.txt", status: "completed", steps: 3 });
  });

  it("marks children still running as interrupted when the parent finishes without reporting them", () => {
    const tree = applySubagentEvents(emptySubagents(), [
      ev(1, started("a")),
      ev(2, started("b")),
      ev(3, finished("a")),
      ev(4, { type: "task_finished", status: "interrupted", summary: "stopped", checks: [] }),
    ]);
    expect(tree.nodes.a.status).toBe("completed");
    expect(tree.nodes.b).toMatchObject({ status: "interrupted", activity: null });
  });

  it("draws a child's own children under it, from the child's stream, and folds them away", () => {
    const top = applySubagentEvents(emptySubagents(), [ev(1, started("c1")), ev(2, started("c2"))]);
    const ofC1 = applySubagentEvents(emptySubagents(), [ev(5, started("g1", { depth: 2 }), "c1"), ev(6, progress("g1", 2), "c1")]);
    const lines = treeLines(top, { c1: ofC1 });
    expect(lines.map((l) => [l.node.id, l.level, l.hasChildren])).toEqual([
      ["c1", 0, true],
      ["g1", 1, false],
      ["c2", 0, false],
    ]);
    expect(lines[1].node.parentId).toBe("c1");
    expect(treeLines(top, { c1: ofC1 }, new Set(["c1"])).map((l) => l.node.id)).toEqual(["c1", "c2"]);
    expect(treeCounts(lines)).toMatchObject({ running: 3, completed: 0, failed: 0 });
  });

  it("draws a node once even when a stream names an ancestor as its child", () => {
    const top = applySubagentEvents(emptySubagents(), [ev(1, started("c1"))]);
    const loop = applySubagentEvents(emptySubagents(), [ev(1, started("c1"), "c1")]);
    expect(treeLines(top, { c1: loop }).map((l) => l.node.id)).toEqual(["c1"]);
  });

  it("says whether the checks passed: a required failure fails, failures the base had too do not", () => {
    const check = (status: "passed" | "failed", required: boolean, only_before_task = false) => ({
      check_id: "k",
      name: "test",
      status,
      duration_ms: 1,
      summary: "",
      failures: [],
      required,
      scope: "full" as const,
      only_before_task,
    });
    expect(checksResult([])).toBeNull();
    expect(checksResult([check("passed", true), check("failed", false)])).toBe("passed");
    expect(checksResult([check("failed", true)])).toBe("failed");
    expect(checksResult([check("failed", true, true)])).toBe("passed");
  });
});

describe("the timeline's sub-agent lines", () => {
  it("gets a line when a child starts and one when it finishes, and the tree beside them", () => {
    const t = applyEvents(emptyTimeline(), [
      ev(1, started("c1", { parallel: true, scope: ["notes.txt"], brief: "write notes.txt" })),
      ev(2, progress("c1", 2)),
      ev(3, finished("c1", { merge: "conflict", conflicts: ["notes.txt"], files: ["notes.txt"], cost_usd: 0.5 })),
    ]);
    const lines = t.items.filter((i) => i.kind === "subagent");
    expect(lines).toEqual([
      expect.objectContaining({ key: 1, phase: "started", childTaskId: "c1", text: "Sub-agent (worker, small-model, parallel) started: write notes.txt — scope notes.txt", status: null }),
      expect.objectContaining({ key: 3, phase: "finished", childTaskId: "c1", text: "Sub-agent completed: 1 file, not merged: conflict in notes.txt, $0.50 — Wrote c1.txt", status: "completed" }),
    ]);
    expect(t.subagents.nodes.c1.status).toBe("completed");
  });

  it("draws no line for a child that never started, nor twice for a repeated start", () => {
    const t = applyEvents(emptyTimeline(), [ev(1, started("c1")), ev(2, started("c1")), ev(3, finished("ghost"))]);
    expect(t.items.filter((i) => i.kind === "subagent")).toHaveLength(1);
  });
});
