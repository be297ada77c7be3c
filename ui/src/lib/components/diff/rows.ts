import type { DiffLine } from "../../bindings/DiffLine";
import type { ReviewComment } from "../../bindings/ReviewComment";
import type { ReviewHunk } from "../../bindings/ReviewHunk";
import { wordChanges, type Range } from "./wordDiff";

/** Unchanged lines between hunks, partly shown: `top` from its start, `bottom` from its end. */
export interface Gap {
  key: string;
  /** First line of the gap in the base and in the latest version (1-based). */
  oldStart: number;
  newStart: number;
  count: number;
  /** The lines are known (the file's texts came with the diff), so the gap can open. */
  expandable: boolean;
}

export interface Expansion {
  top: number;
  bottom: number;
}

export type DiffRow =
  | { kind: "hunk"; key: string; hunk: ReviewHunk; whitespaceOnly: boolean }
  | { kind: "line"; key: string; hunkId: string | null; line: DiffLine; changes: Range[] }
  | {
      kind: "pair";
      key: string;
      hunkId: string | null;
      left: DiffLine | null;
      right: DiffLine | null;
      leftChanges: Range[];
      rightChanges: Range[];
    }
  | { kind: "gap"; key: string; gap: Gap; hidden: number }
  | { kind: "comment"; key: string; comment: ReviewComment; hidden: boolean }
  | { kind: "composer"; key: string; start: number; end: number };

export interface RowOptions {
  split: boolean;
  hideWhitespace: boolean;
  /** Gap key → how much of it is shown. */
  expanded: Record<string, Expansion>;
}

/** Row heights in pixels: fixed per kind, so the list can place any row without measuring. */
export const LINE_HEIGHT = 20;
export const HUNK_HEIGHT = 30;
export const GAP_HEIGHT = 26;
export const COMPOSER_HEIGHT = 118;

export function rowHeight(row: DiffRow): number {
  switch (row.kind) {
    case "line":
    case "pair":
      return LINE_HEIGHT;
    case "hunk":
      return HUNK_HEIGHT;
    case "gap":
      return GAP_HEIGHT;
    case "composer":
      return COMPOSER_HEIGHT;
    case "comment":
      return 40 + 17 * commentLines(row.comment.body);
  }
}

/** Lines a comment's body takes at about 110 characters a line. */
function commentLines(body: string): number {
  return body.split("\n").reduce((n, l) => n + Math.max(1, Math.ceil(l.length / 110)), 0);
}

/** A text's lines as the diff numbers them (a final newline does not start another line). */
export function splitLines(text: string): string[] {
  const lines = text.split("\n");
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/** The first line a hunk covers on one side, and the first line after it. */
function extent(start: number, count: number): [number, number] {
  return count > 0 ? [start, start + count] : [start + 1, start + 1];
}

/** Lines equal but for whitespace become context: what is left is the change that matters. */
export function hideWhitespace(lines: DiffLine[]): DiffLine[] {
  const out: DiffLine[] = [];
  let i = 0;
  while (i < lines.length) {
    if (lines[i].kind === "context") {
      out.push(lines[i++]);
      continue;
    }
    const removed: DiffLine[] = [];
    const added: DiffLine[] = [];
    while (i < lines.length && lines[i].kind !== "context") {
      (lines[i].kind === "removed" ? removed : added).push(lines[i]);
      i++;
    }
    out.push(...alignIgnoringWhitespace(removed, added));
  }
  return out;
}

function squash(text: string): string {
  return text.replace(/\s+/g, "");
}

function alignIgnoringWhitespace(removed: DiffLine[], added: DiffLine[]): DiffLine[] {
  const a = removed.map((l) => squash(l.text));
  const b = added.map((l) => squash(l.text));
  if (a.length === 0 || b.length === 0 || a.length * b.length > 1_000_000) return [...removed, ...added];
  const w = b.length + 1;
  const table = new Uint32Array((a.length + 1) * w);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      table[i * w + j] = a[i] === b[j] ? table[(i + 1) * w + j + 1] + 1 : Math.max(table[(i + 1) * w + j], table[i * w + j + 1]);
    }
  }
  const out: DiffLine[] = [];
  const pendingAdded: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      out.push(...pendingAdded.splice(0));
      out.push({ kind: "context", old_line: removed[i].old_line, new_line: added[j].new_line, text: added[j].text, no_newline: added[j].no_newline });
      i++;
      j++;
    } else if (table[(i + 1) * w + j] >= table[i * w + j + 1]) out.push(removed[i++]);
    else pendingAdded.push(added[j++]);
  }
  out.push(...removed.slice(i), ...pendingAdded, ...added.slice(j));
  return out;
}

/** Word highlights are noise when two lines share almost nothing: then none are shown. */
function pairChanges(removed: DiffLine, added: DiffLine): { removed: Range[]; added: Range[] } {
  const c = wordChanges(removed.text, added.text);
  const changed = (rs: Range[]) => rs.reduce((n, r) => n + r.to - r.from, 0);
  const total = removed.text.length + added.text.length;
  if (total > 0 && (changed(c.removed) + changed(c.added)) / total > 0.7) return { removed: [], added: [] };
  return c;
}

/** One hunk's lines as rows: removed lines paired with the added lines that replace them. */
function lineRows(hunkId: string, lines: DiffLine[], split: boolean, out: DiffRow[]) {
  let i = 0;
  let n = 0;
  const key = () => `${hunkId}:${n++}`;
  while (i < lines.length) {
    if (lines[i].kind === "context") {
      const line = lines[i++];
      out.push(
        split
          ? { kind: "pair", key: key(), hunkId, left: line, right: line, leftChanges: [], rightChanges: [] }
          : { kind: "line", key: key(), hunkId, line, changes: [] },
      );
      continue;
    }
    const removed: DiffLine[] = [];
    const added: DiffLine[] = [];
    while (i < lines.length && lines[i].kind !== "context") {
      (lines[i].kind === "removed" ? removed : added).push(lines[i]);
      i++;
    }
    const paired = Math.min(removed.length, added.length);
    const changes = Array.from({ length: paired }, (_, k) => pairChanges(removed[k], added[k]));
    if (split) {
      for (let k = 0; k < Math.max(removed.length, added.length); k++) {
        out.push({
          kind: "pair",
          key: key(),
          hunkId,
          left: removed[k] ?? null,
          right: added[k] ?? null,
          leftChanges: changes[k]?.removed ?? [],
          rightChanges: changes[k]?.added ?? [],
        });
      }
    } else {
      removed.forEach((line, k) => out.push({ kind: "line", key: key(), hunkId, line, changes: changes[k]?.removed ?? [] }));
      added.forEach((line, k) => out.push({ kind: "line", key: key(), hunkId, line, changes: changes[k]?.added ?? [] }));
    }
  }
}

/** Shown lines of an opened gap: unchanged, so one text (the latest) gives them. */
function contextRows(gap: Gap, from: number, to: number, lines: readonly string[], split: boolean, out: DiffRow[]) {
  for (let k = from; k < to; k++) {
    const line: DiffLine = {
      kind: "context",
      old_line: gap.oldStart + k,
      new_line: gap.newStart + k,
      text: lines[gap.newStart + k - 1] ?? "",
      no_newline: false,
    };
    const key = `${gap.key}:${k}`;
    out.push(
      split
        ? { kind: "pair", key, hunkId: null, left: line, right: line, leftChanges: [], rightChanges: [] }
        : { kind: "line", key, hunkId: null, line, changes: [] },
    );
  }
}

function gapRows(gap: Gap, newLines: readonly string[] | null, options: RowOptions, out: DiffRow[]) {
  if (gap.count <= 0) return;
  const open = gap.expandable && newLines ? (options.expanded[gap.key] ?? { top: 0, bottom: 0 }) : { top: 0, bottom: 0 };
  const top = Math.min(open.top, gap.count);
  const bottom = Math.min(open.bottom, gap.count - top);
  if (newLines) contextRows(gap, 0, top, newLines, options.split, out);
  const hidden = gap.count - top - bottom;
  if (hidden > 0) out.push({ kind: "gap", key: gap.key, gap, hidden });
  if (newLines) contextRows(gap, gap.count - bottom, gap.count, newLines, options.split, out);
}

/**
 * The rows of a file's diff: non-text changes first (mode, rename, binary), then each text hunk
 * with its lines, and between them the unchanged lines as gaps that open when the texts are known.
 */
export function diffRows(hunks: readonly ReviewHunk[], newText: string | null, options: RowOptions): DiffRow[] {
  const out: DiffRow[] = [];
  const newLines = newText === null ? null : splitLines(newText);
  for (const hunk of hunks) {
    if (hunk.kind !== "text") out.push({ kind: "hunk", key: hunk.id, hunk, whitespaceOnly: false });
  }
  const text = hunks.filter((h) => h.kind === "text").sort((a, b) => a.new_start - b.new_start);
  let oldNext = 1;
  let newNext = 1;
  for (const hunk of text) {
    const [, oldAfter] = extent(hunk.old_start, hunk.old_lines);
    const [newBegin, newAfter] = extent(hunk.new_start, hunk.new_lines);
    const gap: Gap = {
      key: `gap:${newNext}`,
      oldStart: oldNext,
      newStart: newNext,
      count: newBegin - newNext,
      expandable: newLines !== null,
    };
    gapRows(gap, newLines, options, out);
    const lines = options.hideWhitespace ? hideWhitespace(hunk.lines) : hunk.lines;
    const whitespaceOnly = options.hideWhitespace && hunk.lines.length > 0 && lines.every((l) => l.kind === "context");
    out.push({ kind: "hunk", key: hunk.id, hunk, whitespaceOnly });
    lineRows(hunk.id, lines, options.split, out);
    oldNext = Math.max(oldNext, oldAfter);
    newNext = Math.max(newNext, newAfter);
  }
  if (newLines && text.length > 0) {
    gapRows(
      { key: `gap:${newNext}`, oldStart: oldNext, newStart: newNext, count: newLines.length - newNext + 1, expandable: true },
      newLines,
      options,
      out,
    );
  }
  return out;
}

/** The latest-version line number a row shows (for comments and selection), if any. */
export function newLineOf(row: DiffRow): number | null {
  if (row.kind === "line") return row.line.new_line ?? null;
  if (row.kind === "pair") return row.right?.new_line ?? null;
  return null;
}

/**
 * Places each comment under the row of its last line, and the comment composer under the
 * selection; comments on lines not shown go first, marked as such.
 */
export function withComments(
  rows: DiffRow[],
  comments: readonly ReviewComment[],
  composer: { start: number; end: number } | null,
): DiffRow[] {
  if (comments.length === 0 && !composer) return rows;
  const byLine = new Map<number, ReviewComment[]>();
  for (const c of comments) {
    const list = byLine.get(c.end_line) ?? [];
    list.push(c);
    byLine.set(c.end_line, list);
  }
  const placed = new Set<number>();
  const out: DiffRow[] = [];
  for (const row of rows) {
    out.push(row);
    const line = newLineOf(row);
    if (line === null) continue;
    for (const c of byLine.get(line) ?? []) {
      if (placed.has(c.id)) continue;
      placed.add(c.id);
      out.push({ kind: "comment", key: `comment:${c.id}`, comment: c, hidden: false });
    }
    if (composer && composer.end === line) out.push({ kind: "composer", key: "composer", ...composer });
  }
  const unplaced = comments
    .filter((c) => !placed.has(c.id))
    .map((c): DiffRow => ({ kind: "comment", key: `comment:${c.id}`, comment: c, hidden: true }));
  return [...unplaced, ...out];
}
