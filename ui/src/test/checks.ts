import type { CheckFinished } from "../lib/bindings/CheckFinished";
import type { Event } from "../lib/bindings/Event";
import { ev } from "./events";

/** A check's result as `check_finished` (and `task_finished`, a report) carries it. */
export function finished(over: Partial<CheckFinished> & Pick<CheckFinished, "check_id" | "name" | "status">): CheckFinished {
  return {
    duration_ms: 1200,
    summary: over.status === "passed" ? "passed" : "failed",
    failures: [],
    required: true,
    scope: "related",
    only_before_task: false,
    ...over,
  };
}

const testFailed = (checkId: string): CheckFinished =>
  finished({
    check_id: checkId,
    name: "test",
    status: "failed",
    exit_code: 101,
    duration_ms: 1234,
    summary: "2 tests failed: parser::tests::empty, parser::tests::unicode",
    failures: [
      { path: "src/parser.rs", line: 42, message: "parser::tests::empty", before_task: false },
      { path: "src/parser.rs", line: 88, message: "parser::tests::unicode", before_task: true },
    ],
  });

/**
 * A task whose first round fails (one new failure, one the base had too) and whose second round
 * passes: planned checks, the agent's work, round 1 with a base run, round 2, the finish.
 */
export function twoRounds(): Event[] {
  return [
    ev(1, {
      type: "task_started",
      repo: "/home/dev/acme",
      base_commit: "abc123",
      branch: "bosun/t1",
      worktree: "/wt/t1",
      prompt: "Fix the parser",
      provider: "openai-chat",
      model: "mock-model",
      api: "openai-chat",
      base_url: "http://127.0.0.1:11434/v1",
    }),
    ev(2, {
      type: "checks_planned",
      checks: [
        { name: "test", command: "cargo test", timeout_secs: 600, required: true, when: "end" },
        { name: "lint", command: "cargo clippy", timeout_secs: 600, required: false, when: "end" },
      ],
      source: "discovered",
      max_rounds: 3,
    }),
    ev(3, { type: "user_message", text: "Fix the parser" }),
    ev(4, { type: "checkpoint_created", checkpoint: 1, commit: "c1", files: ["src/parser.rs"] }),
    ev(5, { type: "check_started", check_id: "r1-test", name: "test", command: "cargo test parser", round: 1, scope: "related" }),
    ev(6, { type: "check_output_delta", check_id: "r1-test", stream: "stdout", chunk: "running 2 tests\ntest parser::tests::empty ... " }),
    ev(7, { type: "check_output_delta", check_id: "r1-test", stream: "stdout", chunk: "FAILED\ntest parser::tests::unicode ... FAILED\n" }),
    ev(8, { type: "check_started", check_id: "r1-test-base", name: "test", command: "cargo test parser", round: 1, scope: "base" }),
    ev(9, {
      type: "check_finished",
      ...finished({ check_id: "r1-test-base", name: "test", status: "failed", scope: "base", summary: "1 test failed: parser::tests::unicode" }),
    }),
    ev(10, { type: "check_finished", ...testFailed("r1-test") }),
    ev(11, { type: "check_started", check_id: "r1-lint", name: "lint", command: "cargo clippy", round: 1, scope: "full" }),
    ev(12, { type: "check_finished", ...finished({ check_id: "r1-lint", name: "lint", status: "passed", scope: "full", required: false, duration_ms: 300 }) }),
    ev(13, { type: "user_message", text: "The checks failed: 2 tests failed" }),
    ev(14, { type: "checkpoint_created", checkpoint: 2, commit: "c2", files: ["src/parser.rs"] }),
    ev(15, { type: "check_started", check_id: "r2-test", name: "test", command: "cargo test parser", round: 2, scope: "related" }),
    ev(16, {
      type: "check_finished",
      ...finished({
        check_id: "r2-test",
        name: "test",
        status: "failed",
        summary: "1 test failed: parser::tests::unicode (failing before this task)",
        failures: [{ path: "src/parser.rs", line: 88, message: "parser::tests::unicode", before_task: true }],
        only_before_task: true,
      }),
    }),
    ev(17, { type: "check_started", check_id: "r2-lint", name: "lint", command: "cargo clippy", round: 2, scope: "full" }),
    ev(18, { type: "check_finished", ...finished({ check_id: "r2-lint", name: "lint", status: "passed", scope: "full", required: false, duration_ms: 280 }) }),
    ev(19, {
      type: "task_finished",
      status: "completed",
      summary: "Fixed.",
      checks: [
        finished({ check_id: "r2-test", name: "test", status: "failed", only_before_task: true }),
        finished({ check_id: "r2-lint", name: "lint", status: "passed", scope: "full", required: false }),
      ],
    }),
  ];
}

/** The first round of `twoRounds`, with round 1's required test failing for good (3 rounds all fail would end `checks_failed`). */
export function failedRound(): Event[] {
  return twoRounds().slice(0, 12);
}
