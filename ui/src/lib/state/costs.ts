// The Costs view's arithmetic, kept pure so it is tested without a window: how a figure reads,
// its token classes, the stacked daily chart's data, the bars' lengths and the metrics' rates.
import type { CostFigure } from "../bindings/CostFigure";
import type { DailySeries } from "../bindings/DailySeries";
import { formatCost } from "../components/format";

/** The six disjoint token classes, in the order every table shows them. */
export const TOKEN_CLASSES = [
  { key: "input", label: "input" },
  { key: "cache_read", label: "cache read" },
  { key: "cache_write_5m", label: "cache write 5m" },
  { key: "cache_write_1h", label: "cache write 1h" },
  { key: "output", label: "output" },
  { key: "reasoning", label: "reasoning" },
] as const;

export type TokenClassKey = (typeof TOKEN_CLASSES)[number]["key"];

export interface ClassShare {
  key: TokenClassKey;
  label: string;
  tokens: number;
  usd: number;
}

/** A figure's cost as shown: "unpriced" when none of its responses had a price, `$x+` when some had none. */
export function figureCost(f: CostFigure): string {
  if (f.responses > 0 && f.unpriced_responses === f.responses) return "unpriced";
  return formatCost(f.cost_usd, f.unpriced_responses === 0);
}

/** A figure split by token class: tokens and dollars of each (classes with neither are left out). */
export function classShares(f: CostFigure): ClassShare[] {
  return TOKEN_CLASSES.map(({ key, label }) => ({
    key,
    label,
    tokens: f.tokens[key],
    usd: f.cost_by_class[key],
  })).filter((c) => c.tokens > 0 || c.usd > 0);
}

/** Every token of a figure (the six classes add up to the billed tokens). */
export function totalTokens(f: CostFigure): number {
  return TOKEN_CLASSES.reduce((n, c) => n + f.tokens[c.key], 0);
}

/** A bar's length in percent of the longest (0 for nothing, at least 0.5 for anything). */
export function barPercent(value: number, max: number): number {
  if (!(max > 0) || !(value > 0)) return 0;
  return Math.max(0.5, Math.min(100, (value / max) * 100));
}

/** Local midnight of a `YYYY-MM-DD` day, in seconds (uPlot's x axis). */
export function daySeconds(day: string): number {
  const [y, m, d] = day.split("-").map(Number);
  return Math.floor(new Date(y, (m ?? 1) - 1, d ?? 1).getTime() / 1000);
}

export interface StackedChart {
  /** x: the days (seconds); then one cumulative row per series, bottom first. */
  data: number[][];
  /** The series' names, bottom first (the costliest at the bottom). */
  names: string[];
  /** Each series' own spend per day (not cumulative), for the legend's values. */
  own: number[][];
}

/**
 * The stacked chart's data: the `keep - 1` costliest series as they are and the rest summed as
 * "other", each row the running sum of those below it (uPlot draws bands between them).
 */
export function stackSeries(days: string[], series: DailySeries[], keep = 8): StackedChart {
  // A series that spent nothing in these days (an unpriced model) draws nothing.
  const sorted = series.filter((s) => sum(s.cost_usd) > 0).sort((a, b) => sum(b.cost_usd) - sum(a.cost_usd));
  let shown = sorted;
  if (sorted.length > keep) {
    const rest = sorted.slice(keep - 1);
    const other: DailySeries = {
      key: `other (${rest.length})`,
      cost_usd: days.map((_, i) => rest.reduce((n, s) => n + (s.cost_usd[i] ?? 0), 0)),
    };
    shown = [...sorted.slice(0, keep - 1), other];
  }
  const own = shown.map((s) => days.map((_, i) => s.cost_usd[i] ?? 0));
  const data: number[][] = [days.map(daySeconds)];
  let below = days.map(() => 0);
  for (const row of own) {
    below = below.map((v, i) => v + row[i]);
    data.push(below);
  }
  return { data, names: shown.map((s) => s.key), own };
}

function sum(xs: number[]): number {
  return xs.reduce((a, b) => a + b, 0);
}

/** A rate (0..1) as a percentage, or "—" when no task was decided. */
export function percent(rate: number | null): string {
  return rate === null ? "—" : `${Math.round(rate * 100)}%`;
}

/** A per-task figure, or "—". */
export function perTask(v: number | null, digits = 1): string {
  return v === null ? "—" : v.toFixed(digits);
}

/** Failure causes, most frequent first, as "cause × n". */
export function causes(c: { [k: string]: bigint | number }): { cause: string; count: number }[] {
  return Object.entries(c)
    .map(([cause, n]) => ({ cause: cause.replace(/_/g, " "), count: Number(n) }))
    .filter((x) => x.count > 0)
    .sort((a, b) => b.count - a.count || a.cause.localeCompare(b.cause));
}

/** The colours of the chart's series, legible on the light and the dark palette. */
export const SERIES_COLOURS = ["#4c8bf5", "#e0823d", "#3fb27f", "#c25fd6", "#d9b440", "#e05a6a", "#4fb6c8", "#8a8f98"];
