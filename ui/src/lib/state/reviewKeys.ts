import type { ReviewFile } from "../bindings/ReviewFile";

/** What a key does on the review screen. */
export type ReviewCommand =
  | "next-file"
  | "prev-file"
  | "next-hunk"
  | "prev-hunk"
  | "accept"
  | "reject"
  | "comment"
  | "undo";

const KEYS: Record<string, ReviewCommand> = {
  j: "next-file",
  k: "prev-file",
  n: "next-hunk",
  p: "prev-hunk",
  a: "accept",
  r: "reject",
  c: "comment",
  u: "undo",
};

/** True where a key is text being typed, not a command. */
function typing(target: EventTarget | null): boolean {
  if (!target || typeof (target as Element).closest !== "function") return false;
  const el = target as HTMLElement;
  return el.isContentEditable || el.closest("input, textarea, select, [contenteditable='true']") !== null;
}

/** The command a key press means, or null (modifiers held, or typing in a field). */
export function keyCommand(e: Pick<KeyboardEvent, "key" | "ctrlKey" | "metaKey" | "altKey" | "target">): ReviewCommand | null {
  if (e.ctrlKey || e.metaKey || e.altKey || typing(e.target)) return null;
  return KEYS[e.key] ?? null;
}

/** Files whose path contains every word of the filter (case-insensitive). */
export function filterFiles(files: readonly ReviewFile[], filter: string): readonly ReviewFile[] {
  const words = filter.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return files;
  return files.filter((f) => {
    const path = `${f.path} ${f.old_path ?? ""}`.toLowerCase();
    return words.every((w) => path.includes(w));
  });
}

/** The path `delta` rows away from `current` in `files`, clamped at the ends. */
export function stepFile(files: readonly ReviewFile[], current: string | null, delta: number): string | null {
  if (files.length === 0) return null;
  const i = files.findIndex((f) => f.path === current);
  if (i < 0) return files[delta >= 0 ? 0 : files.length - 1].path;
  return files[Math.max(0, Math.min(files.length - 1, i + delta))].path;
}

/** The hunk id `delta` away from `current` in a file's hunks (in the order shown), clamped. */
export function stepHunk(ids: readonly string[], current: string | null, delta: number): string | null {
  if (ids.length === 0) return null;
  const i = current === null ? -1 : ids.indexOf(current);
  if (i < 0) return ids[delta >= 0 ? 0 : ids.length - 1];
  return ids[Math.max(0, Math.min(ids.length - 1, i + delta))];
}

/** The first unreviewed hunk after `current` (wrapping), else null: where `a`/`r` move on to. */
export function nextUnreviewed(
  hunks: readonly { id: string; state: string }[],
  current: string | null,
): string | null {
  const i = hunks.findIndex((h) => h.id === current);
  for (let k = 1; k <= hunks.length; k++) {
    const h = hunks[(i + k + hunks.length) % hunks.length];
    if (h.state === "unreviewed" && h.id !== current) return h.id;
  }
  return null;
}

/** A line selection: a click sets it, Shift+click extends it from the first click. */
export interface LineSelection {
  anchor: number;
  start: number;
  end: number;
}

export function selectLine(current: LineSelection | null, line: number, extend: boolean): LineSelection {
  if (extend && current) {
    return { anchor: current.anchor, start: Math.min(current.anchor, line), end: Math.max(current.anchor, line) };
  }
  return { anchor: line, start: line, end: line };
}
