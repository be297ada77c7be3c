import type { Span } from "./highlight";
import type { Range } from "./wordDiff";

/** A piece of a line to render: its text, its syntax classes, and whether it is a word change. */
export interface Segment {
  text: string;
  cls: string;
  changed: boolean;
}

/** Cuts a line where its syntax spans and its changed ranges begin and end. */
export function segments(text: string, spans: readonly Span[], changes: readonly Range[]): Segment[] {
  if (spans.length === 0 && changes.length === 0) return text ? [{ text, cls: "", changed: false }] : [];
  const cuts = new Set<number>([0, text.length]);
  for (const s of spans) cuts.add(Math.max(0, Math.min(text.length, s.from))).add(Math.max(0, Math.min(text.length, s.to)));
  for (const c of changes) cuts.add(Math.max(0, Math.min(text.length, c.from))).add(Math.max(0, Math.min(text.length, c.to)));
  const points = [...cuts].sort((a, b) => a - b);
  const out: Segment[] = [];
  let si = 0;
  let ci = 0;
  for (let k = 0; k + 1 < points.length; k++) {
    const from = points[k];
    const to = points[k + 1];
    while (si < spans.length && spans[si].to <= from) si++;
    while (ci < changes.length && changes[ci].to <= from) ci++;
    const span = spans[si] && spans[si].from <= from ? spans[si] : null;
    const change = changes[ci] && changes[ci].from <= from ? changes[ci] : null;
    const seg = { text: text.slice(from, to), cls: span?.cls ?? "", changed: change !== null };
    const last = out[out.length - 1];
    if (last && last.cls === seg.cls && last.changed === seg.changed) last.text += seg.text;
    else out.push(seg);
  }
  return out;
}
