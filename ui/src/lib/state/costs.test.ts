import { describe, expect, it } from "vitest";
import type { CostFigure } from "../bindings/CostFigure";
import { formatCost } from "../components/format";
import { barPercent, causes, classShares, daySeconds, figureCost, percent, stackSeries, totalTokens } from "./costs";

const figure = (over: Partial<CostFigure> = {}): CostFigure => ({
  cost_usd: 1.25,
  cost_by_class: { input: 0.5, cache_read: 0.05, cache_write_5m: 0.2, cache_write_1h: 0, output: 0.4, reasoning: 0.1, reported: 0, unsplit: 0 },
  cache_savings_usd: 0.4,
  responses: 4,
  unpriced_responses: 0,
  tokens: { input: 1000, cache_read: 5000, cache_write_5m: 200, cache_write_1h: 0, output: 300, reasoning: 50 },
  ...over,
});

describe("costs arithmetic", () => {
  it("shows a null cost as unpriced and a sum missing unpriced responses as a lower bound", () => {
    expect(formatCost(null)).toBe("unpriced");
    expect(formatCost(0, false)).toBe("unpriced");
    expect(formatCost(1.5, false)).toBe("$1.50+");
    expect(formatCost(0.0042)).toBe("$0.0042");
    expect(figureCost(figure())).toBe("$1.25");
    expect(figureCost(figure({ unpriced_responses: 1 }))).toBe("$1.25+");
    expect(figureCost(figure({ cost_usd: 0, unpriced_responses: 4 }))).toBe("unpriced");
    expect(figureCost(figure({ cost_usd: 0, responses: 0 }))).toBe("$0.00");
  });

  it("splits a figure into its token classes, leaving out empty ones, and they add up", () => {
    const f = figure();
    expect(classShares(f).map((c) => c.key)).toEqual(["input", "cache_read", "cache_write_5m", "output", "reasoning"]);
    expect(totalTokens(f)).toBe(6550);
  });

  it("stacks the daily series costliest first, the rest as other, each row the sum of those below", () => {
    const days = ["2026-11-29", "2026-11-30", "2026-12-01"];
    const series = [
      { key: "small", cost_usd: [0, 1, 0] },
      { key: "big", cost_usd: [5, 0, 5] },
      { key: "tiny", cost_usd: [0, 0, 0.5] },
      { key: "unpriced-model", cost_usd: [0, 0, 0] },
    ];
    const s = stackSeries(days, series, 2);
    expect(s.names).toEqual(["big", "other (2)"]);
    expect(s.own).toEqual([[5, 0, 5], [0, 1, 0.5]]);
    expect(s.data.slice(1)).toEqual([[5, 0, 5], [5, 1, 5.5]]);
    expect(s.data[0][1] - s.data[0][0]).toBe(86400);
    expect(daySeconds("2026-12-01")).toBe(new Date(2026, 11, 1).getTime() / 1000);
  });

  it("sizes bars against the longest, and reads rates and causes", () => {
    expect(barPercent(5, 10)).toBe(50);
    expect(barPercent(0.0001, 10)).toBe(0.5);
    expect(barPercent(0, 10)).toBe(0);
    expect(percent(null)).toBe("—");
    expect(percent(0.667)).toBe("67%");
    expect(causes({ budget: 1n, permission_blocked: 3n, interrupted: 0n })).toEqual([
      { cause: "permission blocked", count: 3 },
      { cause: "budget", count: 1 },
    ]);
  });
});
