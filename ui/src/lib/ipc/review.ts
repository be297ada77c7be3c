import { listen } from "@tauri-apps/api/event";
import type { BaseMoved } from "../bindings/BaseMoved";
import type { ChecksReport } from "../bindings/ChecksReport";
import type { FileDiff } from "../bindings/FileDiff";
import type { MergeOutcome } from "../bindings/MergeOutcome";
import type { MergeRequest } from "../bindings/MergeRequest";
import type { RefsChanged } from "../bindings/RefsChanged";
import type { Review } from "../bindings/Review";
import type { ReviewFile } from "../bindings/ReviewFile";
import type { TimelineCheckpoint } from "../bindings/TimelineCheckpoint";
import { call } from "./journal";

/** What a verdict does: accept marks, reject takes the change out of the worktree, unmark undoes either. */
export type Verdict = "accept" | "reject" | "unmark";

/** The task's review: files with their hunks (without lines), comments, counts. */
export function reviewGet(taskId: string): Promise<Review> {
  return call("review_get", { taskId });
}

/** One file opened: hunks with lines, and both texts unless binary or huge. */
export function reviewFile(taskId: string, path: string): Promise<FileDiff> {
  return call("review_file", { taskId, path });
}

/** `path` null: every file; `hunks` null: the whole file. */
export function reviewVerdict(
  taskId: string,
  verdict: Verdict,
  path: string | null,
  hunks: string[] | null,
): Promise<Review> {
  return call("review_verdict", { taskId, verdict, path, hunks });
}

/** Takes back the last verdict or comment (`Review.undo` describes it). */
export function reviewUndo(taskId: string): Promise<Review> {
  return call("review_undo", { taskId });
}

/** Lines of the latest version, 1-based, inclusive. */
export function reviewComment(
  taskId: string,
  path: string,
  startLine: number,
  endLine: number,
  body: string,
): Promise<Review> {
  return call("review_comment", { taskId, path, startLine, endLine, body });
}

export function reviewUncomment(taskId: string, id: number): Promise<Review> {
  return call("review_uncomment", { taskId, id });
}

/** Sends the open comments to the agent as one message; the task continues (resolves with its id). */
export function reviewRequestChanges(taskId: string): Promise<string> {
  return call("review_request_changes", { taskId });
}

export function reviewTimeline(taskId: string): Promise<TimelineCheckpoint[]> {
  return call("review_timeline", { taskId });
}

/** The files changed between two checkpoints, with lines (`from` 0 = the base, `to` null = the latest). */
export function reviewDiff(taskId: string, from: number, to: number | null): Promise<ReviewFile[]> {
  return call("review_diff", { taskId, from, to });
}

/** One file between two checkpoints, opened with its lines even when it is large. */
export function reviewDiffFile(taskId: string, from: number, to: number | null, path: string): Promise<FileDiff> {
  return call("review_diff_file", { taskId, from, to, path });
}

/** The paths restoring `checkpoint` would change. */
export function reviewRestorePreview(taskId: string, checkpoint: number): Promise<string[]> {
  return call("review_restore_preview", { taskId, checkpoint });
}

/** Restores the worktree to `checkpoint`; resolves with the paths it changed. */
export function reviewRestore(taskId: string, checkpoint: number): Promise<string[]> {
  return call("review_restore", { taskId, checkpoint });
}

/** The prefilled squash commit message (from the task's prompt and summary). */
export function reviewMergeMessage(taskId: string): Promise<string> {
  return call("review_merge_message", { taskId });
}

/**
 * Rejects with code `merge_conflict`, `dirty_checkout`, `nothing_to_merge`, `running`, or
 * `checks_failed` (a required check of the accepted tree fails with a failure the base did not
 * have, and `request.override_checks` gives no reason to merge anyway).
 */
export function reviewMerge(taskId: string, request: MergeRequest): Promise<MergeOutcome> {
  return call("review_merge", { taskId, request });
}

/** Moves the task's changes onto `onto` (null: the base branch's current tip). */
export function reviewRebase(taskId: string, onto: string | null): Promise<Review> {
  return call("review_rebase", { taskId, onto });
}

/** Where the task's base branch is now, when it moved since the task's base (null: it did not). */
export function reviewBaseMoved(taskId: string): Promise<BaseMoved | null> {
  return call("review_base_moved", { taskId });
}

/**
 * Asks the app to watch the branches of the task's repository: `onRefsChanged` then hears when
 * they change. Rejects where the app cannot watch them (look again on focus instead).
 */
export function reviewWatchBase(taskId: string): Promise<void> {
  return call("review_watch_base", { taskId });
}

/** Calls `onChange` whenever branches of a watched repository may have moved; resolves with an unsubscribe. */
export async function onRefsChanged(onChange: (changed: RefsChanged) => void): Promise<() => void> {
  try {
    return await listen<RefsChanged>("bosun://refs-changed", (e) => onChange(e.payload));
  } catch {
    // Outside the app (unit tests, a plain browser) nothing is watched.
    return () => {};
  }
}

/** Writes the accepted changes as a patch file; resolves with the bytes written. */
export function reviewExport(taskId: string, path: string): Promise<number> {
  return call("review_export", { taskId, path });
}

/** Removes the task's worktree; resolves with the bytes freed. */
export function reviewRemoveWorktree(taskId: string): Promise<number> {
  return call("review_remove_worktree", { taskId });
}

/** Removes the worktree and branch; `deleteHistory` also deletes the journal and checkpoints. */
export function reviewDiscard(taskId: string, deleteHistory: boolean): Promise<void> {
  return call("review_discard", { taskId, deleteHistory });
}

/**
 * The last checks of the tree a merge would write (the accepted hunks); `stale` when the accepted
 * hunks changed since; null when they never ran.
 */
export function reviewChecks(taskId: string): Promise<ChecksReport | null> {
  return call("review_checks", { taskId });
}

/** Runs the checks on the accepted tree now (events with scope `accepted` stream on the task's stream). */
export function reviewRunChecks(taskId: string): Promise<ChecksReport> {
  return call("review_run_checks", { taskId });
}
