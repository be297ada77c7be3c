import type { BaseMoved } from "../bindings/BaseMoved";
import type { FileDiff } from "../bindings/FileDiff";
import type { IpcError } from "../bindings/IpcError";
import type { Review } from "../bindings/Review";
import type { ReviewComment } from "../bindings/ReviewComment";
import type { ReviewFile } from "../bindings/ReviewFile";
import { filterFiles, selectLine, stepFile, stepHunk, type LineSelection } from "./reviewKeys";

/** Two checkpoints being compared instead of the review (`to` null: the latest). */
export interface Comparison {
  from: number;
  to: number | null;
  files: ReviewFile[];
}

/**
 * A task's review screen as a rune store: the review, the file list and its filter, the open
 * file, the current hunk, the selected lines and the view options. It holds no IPC: the review
 * pane loads things and hands them in.
 */
export class ReviewSession {
  readonly taskId: string;
  review: Review | null = $state.raw(null);
  error: IpcError | null = $state(null);
  filter = $state("");
  selectedPath: string | null = $state(null);
  /** The open file's diff with its lines (for the selected path), once loaded. */
  diff: FileDiff | null = $state.raw(null);
  /** Large files the user chose to open anyway. */
  forced: string[] = $state([]);
  currentHunk: string | null = $state(null);
  selection: LineSelection | null = $state(null);
  composing = $state(false);
  split = $state(false);
  hideWhitespace = $state(false);
  /** Set while a verdict, comment or other action is on its way. */
  busy = $state(false);
  comparison: Comparison | null = $state.raw(null);

  constructor(taskId: string) {
    this.taskId = taskId;
  }

  /** The files listed: the review's, or the comparison's. */
  readonly allFiles: readonly ReviewFile[] = $derived(this.comparison?.files ?? this.review?.files ?? []);
  readonly files: readonly ReviewFile[] = $derived(filterFiles(this.allFiles, this.filter));
  readonly selectedFile: ReviewFile | null = $derived(this.allFiles.find((f) => f.path === this.selectedPath) ?? null);
  /** The open file's hunks: from the comparison (it has lines), else the loaded diff with the review's states. */
  readonly hunks = $derived.by(() => {
    const file = this.selectedFile;
    if (!file) return [];
    if (this.comparison) return file.hunks;
    const loaded = this.diff && this.diff.file.path === file.path ? this.diff.file.hunks : null;
    if (!loaded) return [];
    const state = new Map(file.hunks.map((h) => [h.id, h]));
    return loaded.map((h) => {
      const now = state.get(h.id);
      return now && (now.state !== h.state || now.provenance !== h.provenance) ? { ...h, state: now.state, provenance: now.provenance } : h;
    });
  });
  /** The open file is over the size limit and was not opened anyway. */
  readonly held = $derived(!!this.selectedFile?.large && !this.comparison && !this.forced.includes(this.selectedFile.path));
  readonly comments: readonly ReviewComment[] = $derived(this.review?.comments ?? []);
  readonly fileComments = $derived(this.comments.filter((c) => c.path === this.selectedPath));
  /** Comments not yet sent to the agent: what "Request changes" sends. */
  readonly openComments = $derived(this.comments.filter((c) => !c.sent_at && !c.resolved).length);
  /** Hunk ids in the order the diff shows them (non-text changes first, then by line). */
  readonly hunkOrder = $derived(
    [...this.hunks]
      .sort((a, b) => (a.kind === "text" ? 1 : 0) - (b.kind === "text" ? 1 : 0) || a.new_start - b.new_start)
      .map((h) => h.id),
  );

  /** A fresh review from the task: keeps the selection where it still exists. */
  setReview(review: Review) {
    this.review = review;
    this.error = null;
    if (this.comparison) return;
    if (!this.selectedPath || !review.files.some((f) => f.path === this.selectedPath)) {
      this.selectedPath = review.files[0]?.path ?? null;
    }
  }

  /** The base branch looked at again (null: it is where the task's base is). */
  setBaseMoved(moved: BaseMoved | null) {
    const r = this.review;
    if (!r) return;
    const same = JSON.stringify(r.base_moved ?? null) === JSON.stringify(moved);
    if (!same) this.review = { ...r, base_moved: moved ?? undefined };
  }

  setDiff(diff: FileDiff) {
    if (diff.file.path !== this.selectedPath) return;
    this.diff = diff;
    if (this.currentHunk === null || !diff.file.hunks.some((h) => h.id === this.currentHunk)) {
      this.currentHunk = this.hunkOrder[0] ?? null;
    }
  }

  selectFile(path: string | null) {
    if (path === this.selectedPath) return;
    this.selectedPath = path;
    this.currentHunk = null;
    this.selection = null;
    this.composing = false;
    if (this.comparison) this.currentHunk = this.hunkOrder[0] ?? null;
  }

  /** `j`/`k`: the next or previous file of the (filtered) list. */
  stepFile(delta: number) {
    this.selectFile(stepFile(this.files, this.selectedPath, delta));
  }

  /** `n`/`p`: the next or previous hunk; past the last one, on to the next file. */
  stepHunk(delta: number): "moved" | "file" | "none" {
    const order = this.hunkOrder;
    const i = this.currentHunk === null ? -1 : order.indexOf(this.currentHunk);
    const atEdge = delta > 0 ? i === order.length - 1 : i === 0;
    if ((order.length === 0 || atEdge) && this.files.length > 1) {
      const before = this.selectedPath;
      this.stepFile(delta);
      return this.selectedPath === before ? "none" : "file";
    }
    const next = stepHunk(order, this.currentHunk, delta);
    if (next === this.currentHunk) return "none";
    this.currentHunk = next;
    return "moved";
  }

  pickHunk(id: string) {
    this.currentHunk = id;
  }

  /** A click on a line number (Shift: extend to a range). */
  selectLine(line: number, extend: boolean) {
    this.selection = selectLine(this.selection, line, extend);
  }

  /** `c`: comment on the selected lines, or else on the current hunk's first changed line. */
  startComment(): boolean {
    if (this.comparison || !this.selectedPath) return false;
    if (!this.selection) {
      const hunk = this.hunks.find((h) => h.id === this.currentHunk);
      const line = hunk?.lines.find((l) => l.kind === "added")?.new_line ?? hunk?.lines.find((l) => l.new_line !== undefined)?.new_line;
      if (line === undefined) return false;
      this.selection = { anchor: line, start: line, end: line };
    }
    this.composing = true;
    return true;
  }

  cancelComment() {
    this.composing = false;
  }

  commentSaved() {
    this.composing = false;
    this.selection = null;
  }

  openAnyway(path: string) {
    if (!this.forced.includes(path)) this.forced = [...this.forced, path];
  }

  compare(comparison: Comparison | null) {
    this.comparison = comparison;
    this.selection = null;
    this.composing = false;
    this.currentHunk = null;
    const files = comparison?.files ?? this.review?.files ?? [];
    this.selectedPath = files[0]?.path ?? null;
    if (comparison) this.currentHunk = this.hunkOrder[0] ?? null;
  }
}
