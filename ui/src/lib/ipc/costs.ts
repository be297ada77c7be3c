import type { BudgetStatus } from "../bindings/BudgetStatus";
import type { CostDashboard } from "../bindings/CostDashboard";
import type { CostFilter } from "../bindings/CostFilter";
import type { CostGroup } from "../bindings/CostGroup";
import type { CostRow } from "../bindings/CostRow";
import type { CostQuery } from "../bindings/CostQuery";
import type { StatsGroup } from "../bindings/StatsGroup";
import type { StatsRow } from "../bindings/StatsRow";
import type { UsageRow } from "../bindings/UsageRow";
import { call } from "./journal";

/** One model response of a task: the six token classes, its rates, cost (null: unpriced) and latency. */
export type TaskRequest = UsageRow;

/** A price typed in the "Add price" dialog, in US dollars per million tokens. */
export interface PriceInput {
  input: number;
  output: number;
  cache_read?: number;
  cache_write?: number;
}

/** Totals, the daily chart and the tables of the Costs view. */
export function costDashboard(query: CostQuery): Promise<CostDashboard> {
  return call("cost_dashboard", { query });
}

/** Spend added up `by` one grouping (`role`: `main` for the user's tasks, each sub-agent role for its responses), costliest first. */
export function costGroups(by: CostGroup, filter: CostFilter = {}): Promise<CostRow[]> {
  return call("cost_groups", { by, filter });
}

/** Each model request of a task, oldest first. */
export function taskUsage(taskId: string): Promise<TaskRequest[]> {
  return call("task_usage", { taskId });
}

/** The execution metrics grouped `by` model, repository or week. */
export function costStats(by: StatsGroup, since?: string, until?: string, repo?: string): Promise<StatsRow[]> {
  return call("cost_stats", { by, since: since ?? null, until: until ?? null, repo: repo ?? null });
}

/** Every budget config.toml sets, with what was spent and is reserved in its window. */
export function budgetStatuses(): Promise<BudgetStatus[]> {
  return call("budget_statuses");
}

/** Adds a price for `model` to $BOSUN_HOME/prices.toml (code `invalid_price` for a bad figure). */
export function addPrice(model: string, price: PriceInput): Promise<void> {
  return call("add_price", { model, price });
}
