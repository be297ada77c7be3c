import type { CostDashboard } from "../bindings/CostDashboard";
import type { CostQuery } from "../bindings/CostQuery";
import type { IpcError } from "../bindings/IpcError";
import type { Stack } from "../bindings/Stack";
import type { StatsGroup } from "../bindings/StatsGroup";
import type { StatsRow } from "../bindings/StatsRow";
import type { CostTableRow } from "../bindings/CostTableRow";
import { costDashboard, costGroups, costStats } from "../ipc/costs";
import { toIpcError } from "../ipc/journal";

/** Rows each table shows at first (the costliest); "Show more" adds more. */
export const TABLE_ROWS = 10;
/**
 * Rows each table asks the store for at first: the dashboard's time grows with them (on the
 * 10,000-task journal about 70 ms for 20, 200 ms for 200), so more are asked for only when
 * the user wants them.
 */
export const FIRST_LIMIT = 25;

/**
 * The last dashboard read, with the question it answers. The view paints it at once when it
 * opens and asks the journal again (it says "Refreshing…" meanwhile), so its first paint does not
 * wait for a query over the whole journal.
 */
let last: { key: string; dashboard: CostDashboard } | null = null;

function keyOf(q: CostQuery): string {
  return JSON.stringify([q.days, q.stack, q.limit, q.repo ?? null]);
}

/**
 * Reads the dashboard the view opens with ahead of time; the app calls it once it is idle after
 * starting. A failure is left for the view to show when it asks itself.
 */
export async function prefetchCosts(): Promise<void> {
  const q: CostQuery = { days: 30, stack: "model", limit: FIRST_LIMIT };
  try {
    const dashboard = await costDashboard(q);
    last ??= { key: keyOf(q), dashboard };
  } catch {
    // The view asks again when it opens, and says what went wrong.
  }
}

/** Forgets the prefetched dashboard (tests). */
export function forgetCosts(): void {
  last = null;
}

/**
 * The Costs view's state: the chart's period and stacking, the dashboard they answer with, and
 * the Insights' grouping and rows. A newer question's answer always wins over an older one's.
 */
export class CostsView {
  days: 30 | 90 = $state(30);
  stack: Stack = $state("model");
  /** Rows per table asked for. */
  limit = $state(FIRST_LIMIT);
  dashboard: CostDashboard | null = $state.raw(null);
  loading = $state(false);
  error: IpcError | null = $state(null);
  statsBy: StatsGroup = $state("model");
  stats: StatsRow[] | null = $state.raw(null);
  statsError: IpcError | null = $state(null);
  /** Spend by role (`main` for the user's tasks, each sub-agent role), costliest first. */
  roles: CostTableRow[] | null = $state.raw(null);
  rolesError: IpcError | null = $state(null);
  /** Spend by source (`bosun`, and `claude-code` / `codex` for imported sessions), costliest first. */
  sources: CostTableRow[] | null = $state.raw(null);
  sourcesError: IpcError | null = $state(null);
  private asked = 0;
  private rolesAsked = 0;
  private sourcesAsked = 0;
  private statsAsked = 0;

  constructor() {
    const cached = last;
    if (cached && cached.key === keyOf(this.query())) this.dashboard = cached.dashboard;
  }

  private query(): CostQuery {
    return { days: this.days, stack: this.stack, limit: this.limit };
  }

  async load(): Promise<void> {
    const n = ++this.asked;
    this.loading = true;
    const q = this.query();
    try {
      const d = await costDashboard(q);
      if (n !== this.asked) return;
      this.dashboard = d;
      last = { key: keyOf(q), dashboard: d };
      this.error = null;
    } catch (err) {
      if (n === this.asked) this.error = toIpcError(err);
    } finally {
      if (n === this.asked) this.loading = false;
    }
  }

  async loadStats(): Promise<void> {
    const n = ++this.statsAsked;
    try {
      const rows = await costStats(this.statsBy);
      if (n !== this.statsAsked) return;
      this.stats = rows;
      this.statsError = null;
    } catch (err) {
      if (n === this.statsAsked) this.statsError = toIpcError(err);
    }
  }

  /** Reads the spend by role and by source (both are few: one query each over the usage, no limit). */
  async loadGroups(): Promise<void> {
    await Promise.all([this.loadRoles(), this.loadSources()]);
  }

  private async loadRoles(): Promise<void> {
    const n = ++this.rolesAsked;
    try {
      const rows = await costGroups("role");
      if (n !== this.rolesAsked) return;
      this.roles = rows.map((r) => ({ key: r.key, figure: r.figure, outlier: false }));
      this.rolesError = null;
    } catch (err) {
      if (n === this.rolesAsked) this.rolesError = toIpcError(err);
    }
  }

  private async loadSources(): Promise<void> {
    const n = ++this.sourcesAsked;
    try {
      const rows = await costGroups("source");
      if (n !== this.sourcesAsked) return;
      this.sources = rows.map((r) => ({ key: r.key, figure: r.figure, outlier: false }));
      this.sourcesError = null;
    } catch (err) {
      if (n === this.sourcesAsked) this.sourcesError = toIpcError(err);
    }
  }

  /** Whether another agent's imported sessions are in the figures (the By source table shows then). */
  get hasImported(): boolean {
    return (this.sources ?? []).some((r) => r.key !== "bosun");
  }

  setDays(days: 30 | 90) {
    if (days === this.days) return;
    this.days = days;
    void this.load();
  }

  setStack(stack: Stack) {
    if (stack === this.stack) return;
    this.stack = stack;
    void this.load();
  }

  /** Asks for more rows per table (after the user showed every row there is). */
  more() {
    this.limit = Math.min(this.limit * 4, 2000);
    void this.load();
  }

  setStatsBy(by: StatsGroup) {
    if (by === this.statsBy) return;
    this.statsBy = by;
    void this.loadStats();
  }

  /** True when the journal has no model response at all. */
  get empty(): boolean {
    return this.dashboard !== null && this.dashboard.totals.all.responses === 0;
  }
}
