import type { TaskRow } from "../bindings/TaskRow";
import { call } from "./journal";


/** Where a task's review stands (the journal's `review_state`). */
export type ReviewState = "unreviewed" | "in_review" | "reviewed" | "merged" | "discarded";

/** A task row as the history shows it (`archived` when the app knows it was archived). */
export type HistoryTask = TaskRow & { archived?: boolean };

export type { SnippetPart } from "../bindings/SnippetPart";
export type { HistoryHit } from "../bindings/HistoryHit";
export type { FacetCount } from "../bindings/FacetCount";
export type { Facets } from "../bindings/Facets";
import type { HistoryPage } from "../bindings/HistoryPage";
export type { HistoryPage };

export type HistorySort = "date" | "cost" | "duration";
export type ExportFormat = "markdown" | "json" | "patch";

/**
 * One page of the tasks matching `query` (words and filter tokens, as typed); rejects with code
 * `bad_query` and a message for a person when a token does not parse.
 */
export function historySearch(query: string, sort: HistorySort, offset: number, limit: number): Promise<HistoryPage> {
  return call("history_search", { query, sort, offset, limit });
}

/** A new task from `checkpoint` of `taskId` (0: its base) with `prompt`; resolves with its id. */
export function forkTask(taskId: string, checkpoint: number, prompt: string): Promise<string> {
  return call("fork_task", { taskId, checkpoint, prompt });
}

/** Writes the task to `path`; resolves with the bytes written. */
export function exportTask(taskId: string, format: ExportFormat, path: string): Promise<number> {
  return call("export_task", { taskId, format, path });
}

export function archiveTask(taskId: string, archived: boolean): Promise<void> {
  return call("archive_task", { taskId, archived });
}

/** Deletes the task's transcript and checkpoints (its cost rows stay); rejects with `running` while it runs. */
export function deleteTask(taskId: string): Promise<void> {
  return call("delete_task", { taskId });
}
