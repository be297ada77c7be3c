import { describe, expect, it } from "vitest";
import type { BatchItemRow } from "../bindings/BatchItemRow";
import type { BatchRow } from "../bindings/BatchRow";
import type { CompareRun } from "../bindings/CompareRun";
import { taskRow } from "../../test/rows";
import { diffLines, endRevision, itemRow, liveRevision, mergeable, parseRepos, progress } from "./batch";

const item = (over: Partial<BatchItemRow> = {}): BatchItemRow => ({
  n: 1,
  label: null,
  spec: JSON.stringify({ repo: "/src/api", prompt: "Fix the tests" }),
  state: "queued",
  task_id: null,
  error: null,
  started_at: null,
  finished_at: null,
  task: null,
  ...over,
});

const batchRow = (over: Partial<BatchRow> = {}): BatchRow => ({
  id: "b1",
  kind: "batch",
  name: "Fix the tests",
  concurrency: 2,
  status: "running",
  created_at: "2026-11-30T03:00:00.000Z",
  finished_at: null,
  owner_pid: 1,
  items: 5,
  queued: 2,
  started: 2,
  done: 1,
  spec: "{}",
  ...over,
});

describe("a batch's rows", () => {
  it("shows a queued item from its spec and a started one from its task", () => {
    expect(itemRow(item())).toMatchObject({ n: 1, repo: "/src/api", prompt: "Fix the tests", status: "queued", cost: null, ms: null, taskId: null });
    const now = new Date("2026-11-30T03:00:30.000Z");
    const running = itemRow(
      item({ state: "started", task_id: "t1", task: taskRow({ status: "running", repo: "/src/api", cost_usd: 0.25, checks: undefined }) }),
      now,
    );
    expect(running).toMatchObject({ status: "running", cost: 0.25, ms: 30_000, taskId: "t1", review: "unreviewed", checks: null });
    const done = itemRow(
      item({ state: "done", task_id: "t1", task: taskRow({ status: "completed", checks: "passed", finished_at: "2026-11-30T03:00:12.000Z" }) }),
      now,
    );
    expect(done).toMatchObject({ status: "completed", checks: "passed", ms: 12_000 });
  });

  it("marks an item that could not start, and one whose task is not in the journal yet", () => {
    expect(itemRow(item({ state: "done", task_id: "t9", error: "no provider named x" }))).toMatchObject({ status: "not_started", error: "no provider named x" });
    expect(itemRow(item({ state: "started", task_id: "t9" })).status).toBe("starting");
    expect(itemRow(item({ spec: "not json" }))).toMatchObject({ repo: "", prompt: "" });
  });

  it("says how far a batch is, and a stopped one's started items are cut off", () => {
    expect(progress(batchRow())).toBe("1 of 5 done · 2 running · 2 queued");
    expect(progress(batchRow({ status: "interrupted" }))).toBe("1 of 5 done · 2 cut off · 2 queued");
    expect(progress(batchRow({ status: "finished", queued: 0, started: 0, done: 5 }))).toBe("5 of 5 done");
  });

  it("reads repositories one per line", () => {
    expect(parseRepos("/a\n\n  /b  \n")).toEqual(["/a", "/b"]);
    expect(parseRepos("")).toEqual([]);
  });

  it("changes its live revision when a task moves or waits, and its end revision only when one ends or merges", () => {
    const a = [taskRow({ id: "t1", status: "running", updated_at: "1" })];
    const b = [taskRow({ id: "t1", status: "running", updated_at: "2" })];
    expect(liveRevision(a, {})).not.toBe(liveRevision(b, {}));
    expect(liveRevision(a, {})).not.toBe(liveRevision(a, { t1: 1 }));
    expect(endRevision(a)).toBe(endRevision(b));
    expect(endRevision(a)).not.toBe(endRevision([taskRow({ id: "t1", status: "completed" })]));
  });
});

describe("a comparison's runs", () => {
  const run = (over: Partial<CompareRun> = {}): CompareRun => ({
    n: 1,
    label: "A#1",
    setup: "A",
    run: 1,
    state: "done",
    task_id: "t1",
    error: null,
    review_state: "unreviewed",
    figures: null,
    diff: "diff --git a/x b/x\n+x\n",
    ...over,
  });
  const figures = (status: CompareRun["figures"] extends infer F ? (F extends { status: infer S } ? S : never) : never) =>
    ({ status, checks: null, checks_passed: 0, checks_run: 0, first_pass: true, steps: 2, tool_calls: 1, tool_call_errors: 0, nudges: 0, approvals: 0, interventions: 0, tokens: 10, seconds: 1, cost_usd: 0, priced: true, files_changed: 1, insertions: 1, deletions: 0 }) as CompareRun["figures"];

  it("offers a merge only for a finished run with changes that was not merged", () => {
    expect(mergeable(run({ figures: figures("completed") }))).toBe(true);
    expect(mergeable(run({ figures: figures("completed"), review_state: "merged" }))).toBe(false);
    expect(mergeable(run({ figures: figures("completed"), diff: "" }))).toBe(false);
    expect(mergeable(run({ figures: figures("failed") }))).toBe(false);
    expect(mergeable(run({ state: "started", figures: figures("completed") }))).toBe(false);
  });

  it("colours a unified diff by line", () => {
    const kinds = diffLines("diff --git a/x b/x\nnew file mode 100644\n--- /dev/null\n+++ b/x\n@@ -0,0 +1 @@\n+x\n-y\n z\n").map((l) => l.kind);
    expect(kinds).toEqual(["file", "meta", "meta", "meta", "hunk", "add", "del", "ctx"]);
    expect(diffLines("")).toEqual([]);
  });
});
