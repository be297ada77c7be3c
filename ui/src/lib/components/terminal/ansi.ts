/** A run of text with one SGR style. Colours are CSS values. */
export interface Span {
  text: string;
  fg: string | null;
  bg: string | null;
  bold: boolean;
  dim: boolean;
  italic: boolean;
  underline: boolean;
}

export interface SgrState {
  fg: string | null;
  bg: string | null;
  bold: boolean;
  dim: boolean;
  italic: boolean;
  underline: boolean;
  inverse: boolean;
}

export function plainState(): SgrState {
  return { fg: null, bg: null, bold: false, dim: false, italic: false, underline: false, inverse: false };
}

/** The 16 base colours follow the theme (CSS variables `--ansi-0` … `--ansi-15`). */
const base = (n: number) => `var(--ansi-${n})`;

function color256(n: number): string {
  if (n < 16) return base(n);
  if (n >= 232) {
    const v = 8 + (n - 232) * 10;
    return `rgb(${v},${v},${v})`;
  }
  const i = n - 16;
  const step = (c: number) => (c === 0 ? 0 : 55 + c * 40);
  return `rgb(${step(Math.floor(i / 36))},${step(Math.floor(i / 6) % 6)},${step(i % 6)})`;
}

/** Reads an extended colour (`38;5;n` / `38;2;r;g;b`) starting at `codes[i]` (the 5 or 2). */
function extended(codes: number[], i: number): [string | null, number] {
  if (codes[i] === 5 && codes.length > i + 1) return [color256(codes[i + 1] & 255), i + 2];
  if (codes[i] === 2 && codes.length > i + 3) {
    const [r, g, b] = codes.slice(i + 1, i + 4).map((c) => c & 255);
    return [`rgb(${r},${g},${b})`, i + 4];
  }
  return [null, codes.length];
}

function applySgr(state: SgrState, params: string): SgrState {
  const s = { ...state };
  const codes = params === "" ? [0] : params.split(/[;:]/).map((p) => (p === "" ? 0 : Number(p)));
  let i = 0;
  while (i < codes.length) {
    const c = codes[i++];
    if (c === 0) Object.assign(s, plainState());
    else if (c === 1) s.bold = true;
    else if (c === 2) s.dim = true;
    else if (c === 3) s.italic = true;
    else if (c === 4) s.underline = true;
    else if (c === 7) s.inverse = true;
    else if (c === 22) s.bold = s.dim = false;
    else if (c === 23) s.italic = false;
    else if (c === 24) s.underline = false;
    else if (c === 27) s.inverse = false;
    else if (c >= 30 && c <= 37) s.fg = base(c - 30);
    else if (c === 38) [s.fg, i] = extended(codes, i);
    else if (c === 39) s.fg = null;
    else if (c >= 40 && c <= 47) s.bg = base(c - 40);
    else if (c === 48) [s.bg, i] = extended(codes, i);
    else if (c === 49) s.bg = null;
    else if (c >= 90 && c <= 97) s.fg = base(c - 90 + 8);
    else if (c >= 100 && c <= 107) s.bg = base(c - 100 + 8);
  }
  return s;
}

function span(text: string, s: SgrState): Span {
  const fg = s.inverse ? (s.bg ?? "var(--term-bg)") : s.fg;
  const bg = s.inverse ? (s.fg ?? "var(--term-fg)") : s.bg;
  return { text, fg, bg, bold: s.bold, dim: s.dim, italic: s.italic, underline: s.underline };
}

// CSI sequences (ESC [ … final byte), OSC sequences (ESC ] … BEL or ESC \), and lone two-byte escapes.
const ESCAPE = /\x1b\[([0-9;:?]*)([@-~])|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]?/g;

/**
 * Splits one line of terminal output into styled spans. SGR (`ESC[…m`) sets the style; every other
 * escape sequence is dropped. Returns the style in force at the end of the line too, so a caller can
 * carry it to the next line.
 */
export function parseAnsi(line: string, start: SgrState = plainState()): { spans: Span[]; end: SgrState } {
  const spans: Span[] = [];
  let state = start;
  let last = 0;
  ESCAPE.lastIndex = 0;
  for (let m = ESCAPE.exec(line); m !== null; m = ESCAPE.exec(line)) {
    if (m.index > last) spans.push(span(line.slice(last, m.index), state));
    if (m[2] === "m") state = applySgr(state, m[1] ?? "");
    last = ESCAPE.lastIndex;
  }
  if (last < line.length) spans.push(span(line.slice(last), state));
  return { spans, end: state };
}

/** The text without any escape sequence (for copying and searching). */
export function stripAnsi(line: string): string {
  return line.replace(ESCAPE, "");
}
