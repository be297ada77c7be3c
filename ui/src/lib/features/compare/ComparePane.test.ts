import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { flushSync, mount, unmount } from "svelte";
import { afterEach, describe, expect, it } from "vitest";
import type { BatchRow } from "../../bindings/BatchRow";
import type { CompareRun } from "../../bindings/CompareRun";
import type { Comparison } from "../../bindings/Comparison";
import type { RunFigures } from "../../bindings/RunFigures";
import type { SetupSummary } from "../../bindings/SetupSummary";
import ComparePane from "./ComparePane.svelte";

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

const batch: BatchRow = {
  id: "c1",
  kind: "compare",
  name: "Add a notes file",
  concurrency: 2,
  status: "finished",
  created_at: new Date().toISOString(),
  finished_at: new Date().toISOString(),
  owner_pid: 1,
  items: 2,
  queued: 0,
  started: 0,
  done: 2,
  spec: "{}",
};

const figures = (over: Partial<RunFigures> = {}): RunFigures => ({
  status: "completed",
  checks: null,
  checks_passed: 0,
  checks_run: 0,
  first_pass: true,
  steps: 2,
  tool_calls: 1,
  tool_call_errors: 0,
  nudges: 0,
  approvals: 0,
  interventions: 0,
  tokens: 1200,
  seconds: 3.4,
  cost_usd: 0.01,
  priced: true,
  files_changed: 1,
  insertions: 1,
  deletions: 0,
  ...over,
});

const run = (n: number, setup: string, diff: string, over: Partial<CompareRun> = {}): CompareRun => ({
  n,
  label: `${setup}#1`,
  setup,
  run: 1,
  state: "done",
  task_id: `t${n}`,
  error: null,
  review_state: "unreviewed",
  figures: figures(),
  diff,
  ...over,
});

const summary = (name: string, over: Partial<SetupSummary> = {}): SetupSummary => ({
  name,
  setup: "{}",
  runs: 1,
  finished: 1,
  completed: 1,
  checks_passed: 0,
  first_passes: 1,
  tool_call_errors: 0,
  interventions: 0,
  mean_steps: 2,
  mean_tokens: 1200,
  mean_seconds: 3.4,
  min_seconds: 3.4,
  max_seconds: 3.4,
  total_cost_usd: 0.01,
  cost_per_completed_usd: 0.01,
  ...over,
});

function backend(comparisons: BatchRow[], c: Comparison) {
  const state = { c, calls: [] as [string, Record<string, unknown>][] };
  mockIPC((cmd, raw) => {
    const args = (raw ?? {}) as Record<string, unknown>;
    state.calls.push([cmd, args]);
    switch (cmd) {
      case "setups_list":
        return ["careful", "local"];
      case "compare_list":
        return comparisons;
      case "compare_status":
        return state.c;
      case "compare_start":
        return "c1";
      case "compare_merge":
        state.c = { ...state.c, runs: state.c.runs.map((r) => (r.label === args.run ? { ...r, review_state: "merged" } : r)) };
        return { branch: "main", created: false, commits: ["abc"] };
    }
    throw new Error(`unexpected ${cmd}`);
  });
  return state;
}

const comparison: Comparison = {
  batch,
  repo: "/src/shop",
  prompt: "Add a notes file",
  base_commit: "0123456789abcdef",
  base_ref: "main",
  setups: [summary("mode=full-auto"), summary("fast", { completed: 0, cost_per_completed_usd: null, mean_steps: null })],
  runs: [run(1, "mode=full-auto", "diff --git a/a.txt b/a.txt\n+plain\n"), run(2, "fast", "diff --git a/b.txt b/b.txt\n+fast\n", { figures: figures({ status: "failed" }) })],
};

describe("the Compare view", () => {
  it("sums each setup up in a column and shows the runs' diffs side by side", async () => {
    backend([batch], comparison);
    app = mount(ComparePane, { target: document.body, props: {} });
    await settle();
    const heads = [...document.querySelectorAll("[data-testid=compare-setup-name]")].map((e) => e.textContent?.trim());
    expect(heads).toEqual(["A mode=full-auto", "B fast"]);
    const completed = [...document.querySelectorAll('[data-figure="completed"] td')].map((e) => e.textContent);
    expect(completed).toEqual(["1 of 1", "0 of 1"]);
    const perCompleted = [...document.querySelectorAll('[data-figure="cost_per_completed"] td')].map((e) => e.textContent);
    expect(perCompleted).toEqual(["$0.01", "—"]);
    const columns = [...document.querySelectorAll("[data-testid=compare-run]")];
    expect(columns.map((c) => c.querySelector("[data-testid=compare-diff]")?.textContent)).toEqual([
      "diff --git a/a.txt b/a.txt+plain",
      "diff --git a/b.txt b/b.txt+fast",
    ]);
    expect((document.querySelector("[data-testid=compare-columns]") as HTMLElement).style.gridTemplateColumns).toContain("repeat(2");
    // A failed run is not offered for merging.
    expect(columns.map((c) => !!c.querySelector("[data-testid=compare-merge]"))).toEqual([true, false]);
  });

  it("merges a run only after the confirmation, then shows it merged", async () => {
    const b = backend([batch], comparison);
    app = mount(ComparePane, { target: document.body, props: {} });
    await settle();
    (document.querySelector("[data-testid=compare-merge]") as HTMLButtonElement).click();
    await settle();
    expect(b.calls.some(([c]) => c === "compare_merge")).toBe(false);
    (document.querySelector("[data-testid=compare-merge-yes]") as HTMLButtonElement).click();
    await settle();
    expect(b.calls.find(([c]) => c === "compare_merge")?.[1]).toEqual({ id: "c1", run: "mode=full-auto#1", into: null });
    expect(document.querySelector("[data-testid=compare-merged]")?.textContent).toContain("Merged into main");
  });

  it("starts a comparison of the setups typed or chosen", async () => {
    const b = backend([], comparison);
    app = mount(ComparePane, { target: document.body, props: { recentRepos: ["/src/shop"] } });
    await settle();
    const form = document.querySelector("[data-testid=compare-form]") as HTMLFormElement;
    expect((form.querySelector("[data-testid=compare-repo]") as HTMLInputElement).value).toBe("/src/shop");
    const set = (css: string, v: string) => {
      const el = form.querySelector(css) as HTMLInputElement;
      el.value = v;
      el.dispatchEvent(new Event("input"));
    };
    set("[data-testid=compare-prompt]", "Add a notes file");
    set('[name="setup-0"]', "careful");
    set('[name="setup-1"]', "provider=local,mode=auto-edit");
    await settle();
    expect([...document.querySelectorAll("#compare-setups option")].map((o) => (o as HTMLOptionElement).value)).toEqual(["careful", "local"]);
    form.requestSubmit();
    await settle();
    expect(b.calls.find(([c]) => c === "compare_start")?.[1]).toEqual({
      request: { repo: "/src/shop", prompt: "Add a notes file", base: undefined, setups: ["careful", "provider=local,mode=auto-edit"], runs: 1, concurrency: undefined },
    });
  });
});
