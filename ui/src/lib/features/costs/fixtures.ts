// A Costs dashboard as the store answers it, for the view's tests.
import type { CostDashboard } from "../../bindings/CostDashboard";
import type { CostFigure } from "../../bindings/CostFigure";
import type { StatsRow } from "../../bindings/StatsRow";

export function figure(cost: number, responses = 1, unpriced = 0): CostFigure {
  return {
    cost_usd: cost,
    cost_by_class: { input: cost * 0.5, cache_read: cost * 0.1, cache_write_5m: cost * 0.1, cache_write_1h: 0, output: cost * 0.3, reasoning: 0, reported: 0, unsplit: 0 },
    cache_savings_usd: cost * 0.2,
    responses,
    unpriced_responses: unpriced,
    tokens: { input: 1000 * responses, cache_read: 4000 * responses, cache_write_5m: 500, cache_write_1h: 0, output: 200 * responses, reasoning: 0 },
  };
}

export function dashboard(): CostDashboard {
  const days = Array.from({ length: 30 }, (_, i) => {
    const d = new Date(2026, 10, 2 + i);
    return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`;
  });
  const tasks = Array.from({ length: 25 }, (_, i) => ({
    key: `task-${i}`,
    task: { number: i + 1, prompt: `Task number ${i + 1}`, repo: "/src/api", model: "claude-sonnet-4-5", status: "completed", created_at: "2026-11-30T10:00:00Z" },
    figure: figure(i === 0 ? 9.5 : 0.1 + i / 100),
    outlier: i === 0,
  }));
  return {
    totals: { today: figure(1.5, 3), week: figure(4.25, 6, 1), month: figure(12, 10, 1), all: figure(30.75, 20, 2) },
    days,
    series: [
      { key: "claude-sonnet-4-5", cost_usd: days.map((_, i) => (i % 3 === 0 ? 1 : 0)) },
      { key: "gpt-5", cost_usd: days.map((_, i) => (i % 2 === 0 ? 0.5 : 0)) },
    ],
    by_repo: [
      { key: "/src/api", figure: figure(20, 12), outlier: false },
      { key: "/src/web", figure: figure(10.75, 8, 2), outlier: false },
    ],
    by_model: [
      { key: "claude-sonnet-4-5", figure: figure(25, 15), outlier: false },
      { key: "local-llm", figure: { ...figure(0, 2, 2), cost_usd: 0 }, outlier: false },
    ],
    by_task: tasks,
    unpriced_models: ["local-llm"],
  };
}

export function stats(): StatsRow[] {
  return [
    {
      key: "claude-sonnet-4-5",
      tasks: 4,
      successes: 3,
      first_passes: 2,
      pending_review: 1,
      answered: 0,
      success_rate: 0.75,
      first_pass_rate: 0.5,
      interventions_per_task: 1.25,
      cost_per_task_usd: 0.5,
      cost_per_success_usd: 0.6667,
      tokens_per_task: 1000,
      tokens_per_success: 1333,
      seconds_per_task: 60,
      seconds_per_success: 70,
      failure_causes: { budget: 1n },
    },
  ];
}
