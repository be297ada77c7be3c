import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { ChecksReport } from "../bindings/ChecksReport";
import { ev } from "../../test/events";
import { finished } from "../../test/checks";
import { MergeGate } from "./mergeGate.svelte";
import { lineAt } from "./terminalText";

const passing: ChecksReport = { tree: "t1", checks: [finished({ check_id: "g1", name: "test", status: "passed", scope: "accepted" })], blocked: false, stale: false };
const failing: ChecksReport = {
  tree: "t2",
  checks: [finished({ check_id: "g2", name: "test", status: "failed", scope: "accepted", failures: [{ path: "src/a.rs", line: 3, message: "a::sums", before_task: false }] })],
  blocked: true,
  stale: false,
};

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

/** A gate against a scripted backend: `runs` answers each run in turn, resolved by hand. */
function gate(last: ChecksReport | null) {
  const calls: string[] = [];
  const pending: ((r: ChecksReport) => void)[] = [];
  let report = last;
  const g = new MergeGate(
    {
      load: async () => (calls.push("load"), report),
      run: () => (calls.push("run"), new Promise<ChecksReport>((resolve) => pending.push((r) => ((report = r), resolve(r))))),
    },
    10,
    800,
  );
  return { g, calls, pending, stale: () => (report = report && { ...report, stale: true }) };
}

const flush = () => vi.advanceTimersByTimeAsync(0);

describe("the merge gate", () => {
  it("runs the checks 800 ms after opening when they never ran", async () => {
    const { g, calls, pending } = gate(null);
    await g.refresh();
    expect(g.due).toBe(true);
    await vi.advanceTimersByTimeAsync(799);
    expect(calls).toEqual(["load"]);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toEqual(["load", "run"]);
    expect(g.running).toBe(true);
    pending[0](failing);
    await flush();
    expect(g.running).toBe(false);
    expect(g.blocked).toBe(true);
    expect(g.failing.map((r) => r.name)).toEqual(["test"]);
  });

  it("keeps a fresh report without running, and runs again once the accepted tree changed", async () => {
    const { g, calls, stale, pending } = gate(passing);
    await g.refresh();
    await vi.advanceTimersByTimeAsync(2000);
    expect(calls).toEqual(["load"]);
    expect(g.blocked).toBe(false);
    stale();
    await g.refresh();
    await g.refresh(); // a second verdict within the debounce: one run
    await vi.advanceTimersByTimeAsync(800);
    expect(calls.filter((c) => c === "run")).toHaveLength(1);
    pending[0](passing);
    await flush();
  });

  it("never runs twice at once: a change during a run queues one more", async () => {
    const { g, calls, pending } = gate(null);
    await g.refresh();
    await vi.advanceTimersByTimeAsync(800);
    await g.refresh();
    await g.refresh();
    expect(g.queued).toBe(true);
    expect(calls.filter((c) => c === "run")).toHaveLength(1);
    pending[0](failing);
    await flush();
    expect(calls.filter((c) => c === "run")).toHaveLength(2);
    pending[1](passing);
    await flush();
    expect(g.queued).toBe(false);
    expect(g.blocked).toBe(false);
    expect(calls.filter((c) => c === "run")).toHaveLength(2);
  });

  it("follows a run's output from the task's events, in order, each once, and shows it with the report", async () => {
    const { g, pending } = gate(null);
    const started = ev(11, { type: "check_started", check_id: "g2", name: "test", command: "cargo test", round: 0, scope: "accepted" });
    const out = ev(12, { type: "check_output_delta", check_id: "g2", stream: "stdout", chunk: "test a::sums ... FAILED\n" });
    g.receive([out]);
    g.receive([started, out]);
    expect(g.live?.runs[0].status).toBe("running");
    const run = g.run();
    pending[0](failing);
    await run;
    expect(g.runs[0].command).toBe("cargo test");
    expect(lineAt(g.runs[0].output, 0).text).toBe("test a::sums ... FAILED");
  });
});
