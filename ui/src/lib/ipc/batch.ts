import type { ApprovalRequested } from "../bindings/ApprovalRequested";
import type { BatchItemRow } from "../bindings/BatchItemRow";
import type { BatchRow } from "../bindings/BatchRow";
import type { Comparison } from "../bindings/Comparison";
import type { MergeOutcome } from "../bindings/MergeOutcome";
import { call } from "./journal";

/** What the Batch view's form sends (src-tauri/src/batch.rs `BatchRequest`): a file, or a prompt over repositories. */
export interface BatchRequest {
  file?: string;
  prompt?: string;
  repos?: string[];
  provider?: string;
  model?: string;
  mode?: string;
  /** Absent or null: each repository's checks; `[]`: none; a list: these commands. */
  checks?: string[] | null;
  concurrency?: number;
}

/** An approval one of a batch's tasks waits for: the request, with its task and item number. */
export type BatchApproval = ApprovalRequested & { task_id: string; n: number };

/** A batch, its items with their tasks, and the approvals its running tasks wait for (src-tauri/src/batch.rs `BatchView`). */
export interface BatchView {
  batch: BatchRow;
  items: BatchItemRow[];
  approvals: BatchApproval[];
}

/** What the Compare view's form sends (src-tauri/src/batch.rs `CompareStart`). */
export interface CompareStart {
  repo: string;
  prompt: string;
  base?: string;
  /** Names of `[setups.NAME]`, or inline `provider=…,mode=…`; 2 to 4. */
  setups: string[];
  runs?: number;
  concurrency?: number;
}

/** Queues a batch and runs it in the app; rejects with `bad_request` (naming the bad line) and queues nothing when a task is bad. */
export function startBatch(request: BatchRequest): Promise<string> {
  return call("batch_start", { request });
}

export function listBatches(): Promise<BatchRow[]> {
  return call("batch_list");
}

export function batchStatus(id: string): Promise<BatchView> {
  return call("batch_status", { id });
}

export function resumeBatch(id: string, concurrency?: number): Promise<void> {
  return call("batch_resume", { id, concurrency: concurrency ?? null });
}

export function stopBatch(id: string): Promise<void> {
  return call("batch_stop", { id });
}

export function startCompare(request: CompareStart): Promise<string> {
  return call("compare_start", { request });
}

export function listComparisons(): Promise<BatchRow[]> {
  return call("compare_list");
}

/** A comparison (the latest when `id` is null) with its figures and each run's diff. */
export function compareStatus(id: string | null): Promise<Comparison> {
  return call("compare_status", { id });
}

/** Accepts every hunk of one run (`SETUP#K`) and merges it; the other runs are left alone. */
export function mergeRun(id: string, run: string, into?: string): Promise<MergeOutcome> {
  return call("compare_merge", { id, run, into: into ?? null });
}

/** The `[setups.NAME]` names of config.toml. */
export function listSetups(): Promise<string[]> {
  return call("setups_list");
}
