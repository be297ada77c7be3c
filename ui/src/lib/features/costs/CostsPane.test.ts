import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { flushSync, mount, unmount } from "svelte";
import { afterEach, describe, expect, it, vi } from "vitest";

// jsdom has no canvas: a stand-in records what the chart was given.
const charts: { series: { label?: string }[]; data: number[][] }[] = [];
vi.mock("uplot", () => ({
  default: class {
    constructor(opts: { series: { label?: string }[] }, data: number[][]) {
      charts.push({ series: opts.series, data });
    }
    destroy() {}
    static paths = { bars: () => () => null };
  },
}));
import CostsPane from "./CostsPane.svelte";
import { forgetCosts, prefetchCosts } from "../../state/costsView.svelte";
import { dashboard, figure, stats } from "./fixtures";

globalThis.ResizeObserver ??= class {
  observe() {}
  unobserve() {}
  disconnect() {}
} as unknown as typeof ResizeObserver;

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  clearMocks();
  forgetCosts();
  document.body.innerHTML = "";
});

const tick = () => new Promise((r) => setTimeout(r, 0));
async function until<T>(probe: () => T | null | undefined | false, ms = 2000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    flushSync();
    const v = probe();
    if (v) return v;
    if (Date.now() > end) throw new Error("timed out");
    await tick();
  }
}

function render(handler: (cmd: string, args: Record<string, unknown>) => unknown) {
  mockIPC((cmd, args) => handler(cmd, (args ?? {}) as Record<string, unknown>));
  const opened: string[] = [];
  const target = document.createElement("div");
  document.body.appendChild(target);
  app = mount(CostsPane, { target, props: { onopentask: (id: string) => opened.push(id) } });
  return { target, opened };
}

describe("the Costs view", () => {
  it("paints the dashboard read ahead of time at once, then the journal's answer", async () => {
    const first = dashboard();
    mockIPC((cmd) => (cmd === "cost_dashboard" ? first : stats()));
    await prefetchCosts();
    clearMocks();
    // The view's own question is answered later, with newer figures.
    let answer: (d: unknown) => void = () => {};
    const newer = dashboard();
    newer.totals.today.cost_usd = 2.5;
    const { target } = render((cmd) => {
      if (cmd === "cost_dashboard") return new Promise((r) => (answer = r));
      if (cmd === "cost_stats") return stats();
      throw new Error(cmd);
    });
    flushSync();
    const today = () =>
      target.querySelector('[data-period="today"] [data-testid="cost-total-value"]')?.textContent;
    expect(today()).toBe("$1.50");
    expect(target.querySelector('[data-testid="costs-refresh"]')?.textContent?.trim()).toBe("Refreshing…");
    answer(newer);
    await until(() => today() === "$2.50");
  });

  it("shows the totals, the tables' top rows with the outlier marked, the unpriced model and the insights", async () => {
    const asked: unknown[] = [];
    const { target, opened } = render((cmd, args) => {
      if (cmd === "cost_dashboard") return asked.push(args.query), dashboard();
      if (cmd === "cost_stats") return stats();
      throw new Error(cmd);
    });
    await until(() => target.querySelector('[data-testid="cost-total"]'));
    const total = (p: string) => target.querySelector(`[data-period="${p}"] [data-testid="cost-total-value"]`)?.textContent;
    expect([total("today"), total("week"), total("month"), total("all")]).toEqual(["$1.50", "$4.25+", "$12.00+", "$30.75+"]);
    expect(asked).toEqual([{ days: 30, stack: "model", limit: 25 }]);
    const chart = await until(() => charts.at(-1));
    // Top of the stack first (drawn first, the lower ones over it).
    expect(chart.series.map((s) => s.label)).toEqual(["day", "gpt-5", "claude-sonnet-4-5"]);
    expect(chart.data[0].length).toBe(30);

    const tasks = target.querySelectorAll('[data-testid="cost-table-task"] [data-testid="cost-row"]');
    expect(tasks.length).toBe(10); // the top rows only; "Show more" adds more
    expect(tasks[0].getAttribute("data-outlier")).toBe("true");
    const model = target.querySelector('[data-testid="cost-table-model"] [data-key="local-llm"] [data-testid="cost-row-cost"]');
    expect(model?.textContent).toBe("unpriced");
    (tasks[0] as HTMLElement).click();
    expect(opened).toEqual(["task-0"]);
    expect(target.querySelector('[data-testid="unpriced-models"] [data-model="local-llm"]')).not.toBeNull();

    await until(() => target.querySelector('[data-testid="insights-row"]'));
    const metric = (m: string) => target.querySelector(`[data-testid="insights-row"] [data-metric="${m}"]`)?.textContent?.trim();
    expect([metric("success_rate"), metric("first_pass_rate"), metric("cost_per_success_usd"), metric("failure_causes")]).toEqual(["75%", "50%", "$0.67", "budget × 1"]);
  });

  it("attributes spend to roles: the user's tasks and each sub-agent role", async () => {
    const asked: unknown[] = [];
    const { target } = render((cmd, args) => {
      if (cmd === "cost_dashboard") return dashboard();
      if (cmd === "cost_stats") return stats();
      if (cmd === "cost_groups") {
        asked.push(args);
        if ((args as { by: string }).by === "source") return [{ key: "bosun", figure: figure(30.75, 44) }];
        return [
          { key: "main", figure: figure(20, 12) },
          { key: "worker", figure: figure(8, 30) },
          { key: "escalation", figure: figure(2.75, 2) },
        ];
      }
      throw new Error(cmd);
    });
    const table = await until(() => target.querySelector('[data-testid="cost-table-role"]'));
    expect(asked).toEqual([
      { by: "role", filter: {} },
      { by: "source", filter: {} },
    ]);
    // Bosun's own tasks only: no table by source.
    expect(target.querySelector('[data-testid="cost-table-source"]')).toBeNull();
    expect(table.querySelector("h3")?.textContent).toBe("By role");
    const rows = [...table.querySelectorAll<HTMLElement>('[data-testid="cost-row"]')];
    expect(rows.map((r) => [r.dataset.key, r.querySelector('[data-testid="cost-row-cost"]')?.textContent])).toEqual([
      ["main", "$20.00"],
      ["worker", "$8.00"],
      ["escalation", "$2.75"],
    ]);
    expect(rows[1].textContent).toContain("worker (sub-agents)");
    expect(rows[0].textContent).toContain("main (your tasks)");
  });

  it("splits the spend by source once another agent's sessions are imported", async () => {
    const { target } = render((cmd, args) => {
      if (cmd === "cost_dashboard") return dashboard();
      if (cmd === "cost_stats") return stats();
      if (cmd === "cost_groups" && (args as { by: string }).by === "source")
        return [
          { key: "claude-code", figure: figure(12.5, 30) },
          { key: "bosun", figure: figure(4, 9) },
          { key: "codex", figure: figure(0.25, 2) },
        ];
      if (cmd === "cost_groups") return [{ key: "main", figure: figure(16.75, 41) }];
      throw new Error(cmd);
    });
    const table = await until(() => target.querySelector('[data-testid="cost-table-source"]'));
    expect(table.querySelector("h3")?.textContent).toBe("By source");
    const rows = [...table.querySelectorAll<HTMLElement>('[data-testid="cost-row"]')];
    expect(rows.map((r) => [r.dataset.key, r.querySelector('[data-testid="cost-row-cost"]')?.textContent])).toEqual([
      ["claude-code", "$12.50"],
      ["bosun", "$4.00"],
      ["codex", "$0.25"],
    ]);
    expect(rows[0].textContent).toContain("Claude Code (imported)");
    expect(rows[1].textContent).toContain("Bosun");
    expect(target.querySelector('[data-testid="costs-imported-note"]')?.textContent).toContain("count toward no budget");
  });

  it("says so when the spend by role cannot be read, and shows the rest", async () => {
    const { target } = render((cmd) => {
      if (cmd === "cost_dashboard") return dashboard();
      if (cmd === "cost_groups") throw { code: "journal", message: "no such column: t.role" };
      return stats();
    });
    const err = await until(() => target.querySelector('[data-testid="costs-roles-error"]'));
    expect(err.textContent).toContain("no such column: t.role");
    expect(target.querySelector('[data-testid="cost-table-task"]')).not.toBeNull();
  });

  it("asks again stacked by repository and for 90 days", async () => {
    const asked: { days: number; stack: string }[] = [];
    const { target } = render((cmd, args) => {
      if (cmd === "cost_dashboard") return asked.push(args.query as { days: number; stack: string }), dashboard();
      return [];
    });
    await until(() => target.querySelector('[data-testid="cost-total"]'));
    target.querySelector<HTMLButtonElement>('[data-testid="chart-stack-repo"]')!.click();
    await until(() => asked.length === 2).catch(() => { throw new Error(JSON.stringify(asked)); });
    target.querySelector<HTMLButtonElement>('[data-testid="chart-days-90"]')!.click();
    await until(() => asked.length === 3);
    expect(asked.map((q) => [q.days, q.stack])).toEqual([[30, "model"], [30, "repo"], [90, "repo"]]);

    // "Show more" shows the rows there are, then asks the store for more.
    const more = () => target.querySelector<HTMLButtonElement>('[data-testid="cost-table-task"] .more')!;
    more().click();
    flushSync();
    expect(target.querySelectorAll('[data-testid="cost-table-task"] [data-testid="cost-row"]').length).toBe(25);
    expect(asked.length).toBe(3);
    more().click();
    await until(() => asked.length === 4);
    expect((asked[3] as unknown as { limit: number }).limit).toBe(100);
  });

  it("says so for an empty journal and for an error", async () => {
    const empty = dashboard();
    empty.totals.all = { ...empty.totals.all, responses: 0 };
    let { target } = render((cmd) => (cmd === "cost_dashboard" ? empty : []));
    await until(() => target.querySelector('[data-testid="costs-empty"]'));
    unmount(app!);
    app = null;
    clearMocks();
    ({ target } = render(() => {
      throw { code: "journal", message: "the journal is locked" };
    }));
    const err = await until(() => target.querySelector('[data-testid="costs-error"]'));
    expect(err.textContent).toContain("the journal is locked");
  });
});
