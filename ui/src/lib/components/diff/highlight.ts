import type { Parser, Tree } from "@lezer/common";
import { classHighlighter, highlightTree } from "@lezer/highlight";

/** A highlighted stretch of a line: `[from, to)` with its `tok-*` classes. */
export interface Span {
  from: number;
  to: number;
  cls: string;
}

type Loader = () => Promise<Parser>;

const javascript = (dialect: string): Loader => async () =>
  (await import("@lezer/javascript")).parser.configure({ dialect });
const rust: Loader = async () => (await import("@lezer/rust")).parser;
const python: Loader = async () => (await import("@lezer/python")).parser;
const json: Loader = async () => (await import("@lezer/json")).parser;
const css: Loader = async () => (await import("@lezer/css")).parser;
const go: Loader = async () => (await import("@lezer/go")).parser;
const cpp: Loader = async () => (await import("@lezer/cpp")).parser;
const java: Loader = async () => (await import("@lezer/java")).parser;
const yaml: Loader = async () => (await import("@lezer/yaml")).parser;
const html: Loader = async () => (await import("@lezer/html")).parser;
const markdown: Loader = async () => (await import("@lezer/markdown")).parser;

const BY_EXTENSION: Record<string, Loader> = {
  js: javascript("jsx"),
  mjs: javascript("jsx"),
  cjs: javascript("jsx"),
  jsx: javascript("jsx"),
  ts: javascript("ts"),
  mts: javascript("ts"),
  cts: javascript("ts"),
  tsx: javascript("ts jsx"),
  rs: rust,
  py: python,
  pyi: python,
  json: json,
  css: css,
  go: go,
  c: cpp,
  h: cpp,
  cc: cpp,
  cpp: cpp,
  cxx: cpp,
  hpp: cpp,
  java: java,
  yml: yaml,
  yaml: yaml,
  html: html,
  htm: html,
  svelte: html,
  vue: html,
  xml: html,
  md: markdown,
  markdown: markdown,
};

/** The language a path's extension names, if one is known. */
export function languageOf(path: string): Loader | null {
  const name = path.slice(path.lastIndexOf("/") + 1);
  const dot = name.lastIndexOf(".");
  return dot > 0 ? (BY_EXTENSION[name.slice(dot + 1).toLowerCase()] ?? null) : null;
}

/**
 * A parsed text whose lines are highlighted on demand (only the rows on screen ask), so a
 * 50,000-line file costs one parse and a few dozen line lookups per frame.
 */
export class SyntaxDoc {
  readonly #tree: Tree;
  readonly #starts: number[];
  readonly #lengths: number[];
  readonly #cache = new Map<number, Span[]>();

  constructor(tree: Tree, lines: readonly string[]) {
    this.#tree = tree;
    this.#starts = [];
    this.#lengths = [];
    let at = 0;
    for (const line of lines) {
      this.#starts.push(at);
      this.#lengths.push(line.length);
      at += line.length + 1;
    }
  }

  /** The highlighted spans of line `index` (0-based in the parsed lines), offsets within the line. */
  spans(index: number): Span[] {
    const cached = this.#cache.get(index);
    if (cached) return cached;
    const from = this.#starts[index];
    if (from === undefined) return [];
    const to = from + this.#lengths[index];
    const out: Span[] = [];
    highlightTree(
      this.#tree,
      classHighlighter,
      (a, b, cls) => out.push({ from: a - from, to: b - from, cls }),
      from,
      to,
    );
    this.#cache.set(index, out);
    return out;
  }
}

/** How long one slice of parsing may hold the main thread before it yields. */
const SLICE_MS = 12;

/**
 * Parses `lines` as the language of `path`, in slices that yield to the UI between them.
 * Resolves with null for an unknown language or when `cancelled()` turns true meanwhile.
 */
export async function parseLines(
  path: string,
  lines: readonly string[],
  cancelled: () => boolean = () => false,
): Promise<SyntaxDoc | null> {
  const load = languageOf(path);
  if (!load) return null;
  const parser = await load();
  const parse = parser.startParse(lines.join("\n"));
  for (;;) {
    const started = performance.now();
    while (performance.now() - started < SLICE_MS) {
      const tree = parse.advance();
      if (tree) return cancelled() ? null : new SyntaxDoc(tree, lines);
    }
    await new Promise((resolve) => setTimeout(resolve, 0));
    if (cancelled()) return null;
  }
}
