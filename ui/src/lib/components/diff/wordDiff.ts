/** A changed stretch of a line: `[from, to)` in UTF-16 offsets. */
export interface Range {
  from: number;
  to: number;
}

/** Words, runs of whitespace and single punctuation marks. */
function tokens(text: string): string[] {
  return text.match(/[\p{L}\p{N}_]+|\s+|[^\p{L}\p{N}_\s]/gu) ?? [];
}

/** Beyond this many token pairs a pair of lines is marked as changed as a whole. */
const MAX_CELLS = 250_000;

/**
 * Which parts of a removed line and its added counterpart differ, word by word (a longest common
 * subsequence of tokens). Equal lines give no ranges; lines too long to compare give whole-line ranges.
 */
export function wordChanges(removed: string, added: string): { removed: Range[]; added: Range[] } {
  if (removed === added) return { removed: [], added: [] };
  const a = tokens(removed);
  const b = tokens(added);
  // Most edits touch a small middle part: compare only what lies between the common ends.
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const keepA = new Array<boolean>(a.length).fill(true);
  const keepB = new Array<boolean>(b.length).fill(true);
  const midA = a.length - head - tail;
  const midB = b.length - head - tail;
  for (let k = head; k < head + midA; k++) keepA[k] = false;
  for (let k = head; k < head + midB; k++) keepB[k] = false;
  if (midA > 0 && midB > 0 && midA * midB <= MAX_CELLS) {
    // LCS table of the middle parts from the end, then walk it forwards.
    const w = midB + 1;
    const table = new Uint32Array((midA + 1) * w);
    for (let i = midA - 1; i >= 0; i--) {
      for (let j = midB - 1; j >= 0; j--) {
        table[i * w + j] =
          a[head + i] === b[head + j]
            ? table[(i + 1) * w + j + 1] + 1
            : Math.max(table[(i + 1) * w + j], table[i * w + j + 1]);
      }
    }
    let i = 0;
    let j = 0;
    while (i < midA && j < midB) {
      if (a[head + i] === b[head + j]) {
        keepA[head + i++] = true;
        keepB[head + j++] = true;
      } else if (table[(i + 1) * w + j] >= table[i * w + j + 1]) i++;
      else j++;
    }
  }
  return { removed: ranges(a, keepA), added: ranges(b, keepB) };
}

/** The offsets of the tokens not kept, merged into ranges. */
function ranges(toks: string[], keep: boolean[]): Range[] {
  const out: Range[] = [];
  let at = 0;
  toks.forEach((t, k) => {
    if (!keep[k]) {
      const last = out[out.length - 1];
      if (last && last.to === at) last.to = at + t.length;
      else out.push({ from: at, to: at + t.length });
    }
    at += t.length;
  });
  return out;
}
