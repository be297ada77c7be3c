import { describe, expect, it } from "vitest";
import { ev } from "../../test/events";
import { failedRound, twoRounds } from "../../test/checks";
import { applyCheckEvents, checksOverview, emptyChecks, roundText, taskBatches, CHECK_OUTPUT_LINES } from "./checks";
import { lineAt, lineCount } from "./terminalText";
import { applyEvents, emptyTimeline } from "./timeline";

describe("the checks of a task", () => {
  it("knows the planned checks, and a failing first round with a new failure and one from before the task", () => {
    const s = applyCheckEvents(emptyChecks(), failedRound());
    expect(s.planned?.map((c) => c.name)).toEqual(["test", "lint"]);
    expect(s.source).toBe("discovered");
    expect(s.maxRounds).toBe(3);
    const [round] = taskBatches(s);
    expect(round.kind).toBe("loop");
    expect(roundText(round, s.maxRounds)).toBe("round 1 of 3");
    expect(round.runs.map((r) => [r.name, r.scope, r.status])).toEqual([
      ["test", "related", "failed"],
      ["test", "base", "failed"],
      ["lint", "full", "passed"],
    ]);
    const test = round.runs[0];
    expect(test.command).toBe("cargo test parser");
    expect(test.durationMs).toBe(1234);
    expect(test.exitCode).toBe(101);
    expect(test.failures.map((f) => [f.message, f.before_task])).toEqual([
      ["parser::tests::empty", false],
      ["parser::tests::unicode", true],
    ]);
    expect(lineCount(test.output)).toBe(3);
    expect(lineAt(test.output, 1).text).toBe("test parser::tests::empty ... FAILED");
    expect(checksOverview(s, true, true)).toEqual({ state: "failed", text: "failed — 1 of 2" });
  });

  it("a second round that passes (only failures from before the task) makes the task's checks pass", () => {
    const s = applyCheckEvents(emptyChecks(), twoRounds());
    const batches = taskBatches(s);
    expect(batches.map((b) => [b.round, b.runs.length])).toEqual([
      [1, 3],
      [2, 2],
    ]);
    expect(roundText(batches[1], s.maxRounds)).toBe("round 2 of 3");
    expect(batches[1].runs[0].onlyBeforeTask).toBe(true);
    expect(checksOverview(s, false, true)).toEqual({ state: "passed", text: "passed (1 failing before this task too)" });
    expect(s.final?.map((f) => f.status)).toEqual(["failed", "passed"]);
  });

  it("says running while a check runs, and interrupted when the task stopped meanwhile", () => {
    const events = twoRounds();
    const running = applyCheckEvents(emptyChecks(), events.slice(0, 6));
    expect(checksOverview(running, true, true)).toEqual({ state: "running", text: "running 1 of 1" });
    const stopped = applyCheckEvents(running, [ev(7, { type: "task_finished", status: "interrupted", summary: "stopped", checks: [] })]);
    expect(taskBatches(stopped)[0].runs[0].status).toBe("interrupted");
  });

  it("says why no checks ran", () => {
    const planned = applyCheckEvents(emptyChecks(), twoRounds().slice(0, 2));
    expect(checksOverview(planned, true, false).state).toBe("waiting");
    expect(checksOverview(planned, false, false)).toEqual({ state: "not_run", text: "checks not run: the task changed nothing" });
    const none = applyCheckEvents(emptyChecks(), [ev(1, { type: "checks_planned", checks: [], source: "none", max_rounds: 3 })]);
    expect(checksOverview(none, false, true)).toEqual({ state: "none", text: "none for this task" });
    expect(checksOverview(emptyChecks(), false, true).text).toBe("none planned");
  });

  it("keeps a re-run after the task finished apart from the loop, and a second re-run apart from the first", () => {
    const rerun = (seq: number, id: string, status: "passed" | "failed") => [
      ev(seq, { type: "check_started", check_id: id, name: "test", command: "cargo test", round: 0, scope: "full" }),
      ev(seq + 1, { type: "check_finished", check_id: id, name: "test", status, duration_ms: 900, summary: status, failures: [], required: true, scope: "full", only_before_task: false }),
    ];
    const s = applyCheckEvents(emptyChecks(), [...twoRounds(), ...rerun(20, "x1", "failed"), ...rerun(22, "x2", "passed")]);
    const batches = taskBatches(s);
    expect(batches.map((b) => [b.kind, b.runs.map((r) => r.checkId)])).toEqual([
      ["loop", ["r1-test", "r1-test-base", "r1-lint"]],
      ["loop", ["r2-test", "r2-lint"]],
      ["rerun", ["x1"]],
      ["rerun", ["x2"]],
    ]);
    expect(roundText(batches[2], 3)).toBe("re-run");
    expect(checksOverview(s, false, true).state).toBe("passed");
  });

  it("keeps the merge gate's runs out of the task's checks", () => {
    const s = applyCheckEvents(emptyChecks(), [
      ...twoRounds(),
      ev(20, { type: "check_started", check_id: "g1", name: "test", command: "cargo test", round: 0, scope: "accepted" }),
      ev(21, { type: "check_output_delta", check_id: "g1", stream: "stderr", chunk: "error[E0425]\n" }),
    ]);
    expect(taskBatches(s)).toHaveLength(2);
    const gate = s.batches[s.batches.length - 1];
    expect(gate.kind).toBe("accepted");
    expect(lineAt(gate.runs[0].output, 0)).toEqual({ text: "error[E0425]", stderr: true });
  });

  it("keeps only the tail of a chatty check's output", () => {
    const chunk = Array.from({ length: CHECK_OUTPUT_LINES * 2 }, (_, i) => `line ${i}`).join("\n") + "\n";
    const s = applyCheckEvents(emptyChecks(), [
      ev(1, { type: "check_started", check_id: "c", name: "test", command: "t", round: 1, scope: "full" }),
      ev(2, { type: "check_output_delta", check_id: "c", stream: "stdout", chunk }),
    ]);
    const out = s.batches[0].runs[0].output;
    expect(lineCount(out)).toBe(CHECK_OUTPUT_LINES);
    expect(out.dropped).toBe(CHECK_OUTPUT_LINES);
    expect(lineAt(out, CHECK_OUTPUT_LINES - 1).text).toBe(`line ${CHECK_OUTPUT_LINES * 2 - 1}`);
  });

  it("puts one compact line per round in the timeline, where the round started", () => {
    const t = applyEvents(emptyTimeline(), twoRounds());
    expect(t.items.map((i) => i.kind)).toEqual(["user", "checkpoint", "checks", "user", "checkpoint", "checks", "finished"]);
    const first = t.items[2];
    if (first.kind !== "checks") throw new Error("expected checks");
    expect(first.key).toBe(5);
    expect(first.runs.map((r) => `${r.name}:${r.scope}:${r.status}`)).toEqual(["test:related:failed", "test:base:failed", "lint:full:passed"]);
    expect(t.checks.planned).toHaveLength(2);
  });
});
