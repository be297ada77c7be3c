import type { CheckFailure } from "../bindings/CheckFailure";
import type { CheckFinished } from "../bindings/CheckFinished";
import type { CheckScope } from "../bindings/CheckScope";
import type { CheckSource } from "../bindings/CheckSource";
import type { CheckSpec } from "../bindings/CheckSpec";
import type { CheckStatus } from "../bindings/CheckStatus";
import type { Event } from "../bindings/Event";
import { appendCapped, emptyTerminal, type TerminalText } from "./terminalText";

/** Lines of a check's output kept in memory (the tail: failures are printed last). */
export const CHECK_OUTPUT_LINES = 5000;

/** One run of one check: from `check_started` to its `check_finished`. */
export interface CheckRun {
  checkId: string;
  name: string;
  /** The command as run (a related run names the tests it narrowed to). */
  command: string;
  round: number;
  scope: CheckScope;
  /** `interrupted` when the task finished before the check did. */
  status: "running" | "interrupted" | CheckStatus;
  exitCode: number | null;
  durationMs: number | null;
  summary: string;
  failures: CheckFailure[];
  required: boolean;
  onlyBeforeTask: boolean;
  output: TerminalText;
  /** The seq of its `check_started`. */
  seq: number;
  ts: string;
}

/** Where a batch of runs belongs: the loop (round ≥ 1), a re-run (round 0), after an edit, or a merge's tree. */
export type BatchKind = "loop" | "rerun" | "edit" | "accepted";

/** Checks that ran together: one round of the loop, one re-run, one edit, one merge-gate run. */
export interface CheckBatch {
  /** The seq of its first `check_started`: a stable key. */
  key: number;
  kind: BatchKind;
  round: number;
  runs: CheckRun[];
}

export interface ChecksState {
  /** What `checks_planned` said at the task's start; null before it (or for a task from before checks). */
  planned: CheckSpec[] | null;
  source: CheckSource | null;
  maxRounds: number;
  batches: CheckBatch[];
  /** The last round's results as `task_finished` reported them (null until a task_finished). */
  final: CheckFinished[] | null;
  /** A task_finished or task_resumed came since the last check started: the next check opens a batch. */
  boundary: boolean;
}

export function emptyChecks(): ChecksState {
  return { planned: null, source: null, maxRounds: 0, batches: [], final: null, boundary: false };
}

export function batchKind(scope: CheckScope, round: number): BatchKind {
  if (scope === "accepted") return "accepted";
  if (scope === "edit") return "edit";
  return round > 0 ? "loop" : "rerun";
}

/** A required check that failed with a failure the base did not have: it blocks completion and a merge. */
export function blocks(run: Pick<CheckRun, "required" | "status" | "onlyBeforeTask">): boolean {
  return run.required && (run.status === "failed" || run.status === "timed_out") && !run.onlyBeforeTask;
}

export function isCheckEvent(ev: Event): boolean {
  return ev.type === "checks_planned" || ev.type === "check_started" || ev.type === "check_output_delta" || ev.type === "check_finished";
}

/**
 * Folds one event into the checks state. Returns the same object when the event is not about
 * checks; otherwise a new state whose unchanged batches and runs keep their identity.
 */
export function applyCheckEvent(state: ChecksState, ev: Event): ChecksState {
  switch (ev.type) {
    case "checks_planned":
      return { ...state, planned: ev.checks, source: ev.source, maxRounds: ev.max_rounds };
    case "check_started": {
      const kind = batchKind(ev.scope, ev.round);
      const run: CheckRun = {
        checkId: ev.check_id,
        name: ev.name,
        command: ev.command,
        round: ev.round,
        scope: ev.scope,
        status: "running",
        exitCode: null,
        durationMs: null,
        summary: "",
        failures: [],
        required: true,
        onlyBeforeTask: false,
        output: emptyTerminal(),
        seq: ev.seq,
        ts: ev.ts,
      };
      const batches = state.batches.slice();
      const i = lastBatchOf(batches, kind);
      const last = i >= 0 ? batches[i] : null;
      const sameBatch =
        last !== null &&
        !state.boundary &&
        last.round === ev.round &&
        // A check already in the batch starting again (same name and scope) is a new run of them all.
        !last.runs.some((r) => r.name === ev.name && r.scope === ev.scope) &&
        // An edit batch, or a re-run, is over once every run in it finished and another kind ran since.
        (i === batches.length - 1 || last.runs.some((r) => r.status === "running"));
      if (sameBatch && last) batches[i] = { ...last, runs: [...last.runs, run] };
      else batches.push({ key: ev.seq, kind, round: ev.round, runs: [run] });
      return { ...state, batches, boundary: false };
    }
    case "check_output_delta":
      return updateRun(state, ev.check_id, (r) => ({ ...r, output: appendCapped(r.output, ev.stream, ev.chunk, CHECK_OUTPUT_LINES) }));
    case "check_finished":
      return updateRun(state, ev.check_id, (r) => ({
        ...r,
        name: ev.name,
        status: ev.status,
        exitCode: ev.exit_code ?? null,
        durationMs: ev.duration_ms,
        summary: ev.summary,
        failures: ev.failures,
        required: ev.required,
        scope: ev.scope,
        onlyBeforeTask: ev.only_before_task,
      }));
    case "task_resumed":
      return { ...state, boundary: true };
    case "task_finished": {
      // Checks still running when the task ended will not finish now (the merge gate's are not the task's).
      const batches = state.batches.map((b) =>
        b.kind === "accepted" || !b.runs.some((r) => r.status === "running")
          ? b
          : { ...b, runs: b.runs.map((r) => (r.status === "running" ? { ...r, status: "interrupted" as const } : r)) },
      );
      return { ...state, batches, final: ev.checks, boundary: true };
    }
    default:
      return state;
  }
}

function lastBatchOf(batches: CheckBatch[], kind: BatchKind): number {
  for (let i = batches.length - 1; i >= 0; i--) if (batches[i].kind === kind) return i;
  return -1;
}

/** Changes the newest run with this check id. */
function updateRun(state: ChecksState, checkId: string, change: (run: CheckRun) => CheckRun): ChecksState {
  for (let b = state.batches.length - 1; b >= 0; b--) {
    const batch = state.batches[b];
    let r = batch.runs.length - 1;
    while (r >= 0 && batch.runs[r].checkId !== checkId) r--;
    if (r < 0) continue;
    const runs = batch.runs.slice();
    runs[r] = change(runs[r]);
    const batches = state.batches.slice();
    batches[b] = { ...batch, runs };
    return { ...state, batches };
  }
  return state;
}

export function applyCheckEvents(state: ChecksState, events: readonly Event[]): ChecksState {
  let next = state;
  for (const ev of events) next = applyCheckEvent(next, ev);
  return next;
}

/** The task's own checks (the loop and re-runs), newest last: what the Checks panel shows. */
export function taskBatches(state: ChecksState): CheckBatch[] {
  return state.batches.filter((b) => b.kind === "loop" || b.kind === "rerun");
}

/** The newest batch of a kind, or null. */
export function latestBatch(state: ChecksState, kinds: readonly BatchKind[]): CheckBatch | null {
  for (let i = state.batches.length - 1; i >= 0; i--) if (kinds.includes(state.batches[i].kind)) return state.batches[i];
  return null;
}

/** Where a task's checks stand, in words for its header and Checks panel. */
export interface ChecksOverview {
  state: "none" | "waiting" | "running" | "passed" | "failed" | "not_run";
  text: string;
}

/**
 * The task's checks at a glance: from its newest batch (the base runs only say which failures
 * were there before, they are not counted).
 */
export function checksOverview(state: ChecksState, taskRunning: boolean, changed: boolean): ChecksOverview {
  const batch = latestBatch(state, ["loop", "rerun"]);
  const planned = state.planned?.length ?? 0;
  if (!batch) {
    if (state.planned !== null && planned === 0) return { state: "none", text: state.source === "none" ? "none for this task" : "none planned" };
    if (state.planned === null) return { state: "none", text: "none planned" };
    if (taskRunning) return { state: "waiting", text: `${planned} planned: they run when the agent says it is done` };
    return { state: "not_run", text: changed ? "checks not run: the task stopped before they could" : "checks not run: the task changed nothing" };
  }
  const runs = batch.runs.filter((r) => r.scope !== "base");
  const running = batch.runs.filter((r) => r.status === "running").length;
  if (running > 0) return { state: "running", text: `running ${running} of ${runs.length}` };
  const failing = runs.filter(blocks).length;
  const broken = runs.filter((r) => r.status === "error" || r.status === "denied").length;
  const before = runs.filter((r) => !blocks(r) && r.onlyBeforeTask && (r.status === "failed" || r.status === "timed_out")).length;
  const notes = [
    broken > 0 ? `${broken} could not run` : "",
    before > 0 ? `${before} failing before this task too` : "",
  ].filter(Boolean);
  const tail = notes.length ? ` (${notes.join(", ")})` : "";
  if (failing > 0) return { state: "failed", text: `failed — ${failing} of ${runs.length}${tail}` };
  if (runs.some((r) => r.status === "interrupted")) return { state: "not_run", text: "interrupted: the task stopped while they ran" };
  return { state: "passed", text: `passed${tail}` };
}

/** "round 2 of 3" for the loop; "re-run" outside it. */
export function roundText(batch: CheckBatch, maxRounds: number): string {
  if (batch.kind === "rerun") return "re-run";
  if (batch.kind === "accepted") return "on the merged tree";
  if (batch.kind === "edit") return "after an edit";
  return maxRounds > 0 ? `round ${batch.round} of ${maxRounds}` : `round ${batch.round}`;
}

export const checkStatusText: Record<CheckRun["status"], string> = {
  running: "running",
  interrupted: "interrupted",
  passed: "passed",
  failed: "failed",
  timed_out: "timed out",
  denied: "denied by the policy",
  error: "could not run",
};

export const scopeText: Record<CheckScope, string> = {
  related: "related",
  full: "full",
  base: "base",
  accepted: "merged tree",
  edit: "edit",
};

/** A check that finished, as the run the panel shows (for results known only from a report). */
export function runFromFinished(f: CheckFinished, seq = 0, ts = ""): CheckRun {
  return {
    checkId: f.check_id,
    name: f.name,
    command: "",
    round: 0,
    scope: f.scope,
    status: f.status,
    exitCode: f.exit_code ?? null,
    durationMs: f.duration_ms,
    summary: f.summary,
    failures: f.failures,
    required: f.required,
    onlyBeforeTask: f.only_before_task,
    output: emptyTerminal(),
    seq,
    ts,
  };
}
