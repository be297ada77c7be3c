import type { BatchItemRow } from "../bindings/BatchItemRow";
import type { BatchRow } from "../bindings/BatchRow";
import type { CompareRun } from "../bindings/CompareRun";
import type { TaskRow } from "../bindings/TaskRow";
import { elapsedMs } from "../components/format";

/** One row of a batch's table, as the Batch view shows it. */
export interface ItemRow {
  n: number;
  repo: string;
  prompt: string;
  /** The task's status; `queued` before it starts, `not_started` when it could not start. */
  status: string;
  checks: string | null;
  cost: number | null;
  priced: boolean;
  /** Milliseconds from its start to its end (or to `now` while it runs). */
  ms: number | null;
  review: string | null;
  taskId: string | null;
  error: string | null;
}

/** What a queued item's spec (a `BatchTask` as JSON) says, when its task does not yet. */
function spec(item: BatchItemRow): { repo?: string; prompt?: string } {
  try {
    const v = JSON.parse(item.spec) as unknown;
    return v && typeof v === "object" ? (v as { repo?: string; prompt?: string }) : {};
  } catch {
    return {};
  }
}

export function itemRow(item: BatchItemRow, now: Date = new Date()): ItemRow {
  const task: TaskRow | null = item.task;
  const s = spec(item);
  const status = item.error && !task ? "not_started" : task ? task.status : item.state === "queued" ? "queued" : "starting";
  return {
    n: item.n,
    repo: task?.repo ?? s.repo ?? "",
    prompt: task?.prompt ?? s.prompt ?? "",
    status,
    checks: task?.checks ?? null,
    cost: task ? task.cost_usd : null,
    priced: task?.priced ?? true,
    ms: task ? elapsedMs(task.created_at, task.finished_at ?? (task.status === "running" ? null : task.updated_at), now) : null,
    review: task?.review_state ?? null,
    taskId: item.task_id,
    error: item.error,
  };
}

/** "2 of 5 done · 2 running", for a batch's header and its line in the list. */
export function progress(b: BatchRow): string {
  const parts = [`${b.done} of ${b.items} done`];
  if (b.started > 0) parts.push(`${b.started} ${b.status === "running" ? "running" : "cut off"}`);
  if (b.queued > 0) parts.push(`${b.queued} queued`);
  return parts.join(" · ");
}

/** The repositories typed one per line (blank lines dropped). */
export function parseRepos(text: string): string[] {
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l.length > 0);
}

/**
 * What changes when a batch's table may have: its tasks' rows and the approvals they wait for
 * (the sidebar's live list carries both). The views read their batch again when it changes.
 */
export function liveRevision(tasks: TaskRow[], owned: Record<string, number>): string {
  let out = "";
  for (const t of tasks) out += `${t.id}:${t.status}:${t.updated_at}:${t.review_state};`;
  return out + JSON.stringify(owned);
}

/** Only what a comparison's diffs and figures depend on: its tasks ending or being merged. */
export function endRevision(tasks: TaskRow[]): string {
  return tasks.map((t) => `${t.id}:${t.status}:${t.review_state}`).join(";");
}

/** A run can be merged once it finished with changes and was not merged or discarded. */
export function mergeable(run: CompareRun): boolean {
  const status = run.figures?.status;
  return (
    run.state === "done" &&
    run.task_id !== null &&
    (status === "completed" || status === "checks_failed" || status === "max_steps" || status === "budget_exceeded") &&
    (run.diff ?? "").trim().length > 0 &&
    run.review_state !== "merged" &&
    run.review_state !== "discarded"
  );
}

/** A unified diff's lines, each with how it is shown. */
export type DiffLineKind = "file" | "hunk" | "add" | "del" | "ctx" | "meta";

export function diffLines(text: string): { kind: DiffLineKind; text: string }[] {
  const out: { kind: DiffLineKind; text: string }[] = [];
  for (const line of text.replace(/\n$/, "").split("\n")) {
    if (text.length === 0) break;
    let kind: DiffLineKind = "ctx";
    if (line.startsWith("diff --git")) kind = "file";
    else if (line.startsWith("+++") || line.startsWith("---") || line.startsWith("index ") || line.startsWith("new file") || line.startsWith("deleted file") || line.startsWith("similarity") || line.startsWith("rename ")) kind = "meta";
    else if (line.startsWith("@@")) kind = "hunk";
    else if (line.startsWith("+")) kind = "add";
    else if (line.startsWith("-")) kind = "del";
    out.push({ kind, text: line });
  }
  return out;
}

/** "1.2 s", "3m 4s" from seconds; a dash when there is none. */
export function formatSeconds(s: number | null | undefined): string {
  if (s === null || s === undefined) return "—";
  if (s < 60) return `${s.toFixed(s < 10 ? 1 : 0)} s`;
  return `${Math.floor(s / 60)}m ${Math.round(s % 60)}s`;
}
