import type { ReviewHunk } from "../../bindings/ReviewHunk";
import { splitLines } from "./rows";

/** One side of a diff as text to parse: its lines, and where each line number sits in them. */
export interface Side {
  lines: string[];
  indexOf: (lineNo: number) => number | undefined;
}

/** A whole text: line n is at index n - 1. */
export function wholeSide(text: string): Side {
  const lines = splitLines(text);
  return { lines, indexOf: (n) => (n >= 1 && n <= lines.length ? n - 1 : undefined) };
}

/**
 * Without the whole text, the hunks' own lines (in order) stand in for it: highlighting is then
 * right within a hunk, which is all that is shown.
 */
export function hunkSide(hunks: readonly ReviewHunk[], side: "old" | "new"): Side {
  const lines: string[] = [];
  const index = new Map<number, number>();
  const sorted = [...hunks].sort((a, b) => (side === "old" ? a.old_start - b.old_start : a.new_start - b.new_start));
  for (const hunk of sorted) {
    for (const line of hunk.lines) {
      const n = side === "old" ? line.old_line : line.new_line;
      if (n === undefined || index.has(n)) continue;
      index.set(n, lines.length);
      lines.push(line.text);
    }
  }
  return { lines, indexOf: (n) => index.get(n) };
}
