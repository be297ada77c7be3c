import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { flushSync, mount, unmount } from "svelte";
import { afterEach, describe, expect, it } from "vitest";
import type { BudgetsView } from "../../ipc/settings";
import BudgetsSection from "./BudgetsSection.svelte";

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = "";
  clearMocks();
});

const settle = () => new Promise((r) => setTimeout(r, 0));

function view(repo: string | null, daily: number | null): BudgetsView {
  return {
    repo,
    budgets: { daily_usd: daily, weekly_usd: null, monthly_usd: null, max_usd_per_minute: null, max_cost_usd: repo ? null : 2 },
    config_path: "/home/u/.bosun/config.toml",
    repos: ["/src/api"],
  };
}

describe("the Budgets section", () => {
  it("shows each scope's limits and what its budgets spent, refuses a negative amount, and saves", async () => {
    const saved: unknown[] = [];
    mockIPC((cmd, raw) => {
      const args = raw as Record<string, unknown>;
      if (cmd === "get_budgets") return view(args.repo as string | null, args.repo ? 1 : 5);
      if (cmd === "save_budgets") return saved.push(args), view(args.repo as string | null, (args.budgets as { daily_usd: number }).daily_usd);
      if (cmd === "budget_statuses")
        return [{ limit: { name: "daily_usd", window: "day", limit_usd: 5 }, spent_usd: 4.5, reserved_usd: 0.1 }];
      throw new Error(cmd);
    });
    const target = document.createElement("div");
    document.body.appendChild(target);
    app = mount(BudgetsSection, { target, props: { repos: ["/src/web"] } });
    await settle();
    flushSync();
    const input = (n: string) => target.querySelector<HTMLInputElement>(`[name="${n}"]`)!;
    expect(input("daily_usd").value).toBe("5");
    expect(input("max_cost_usd").value).toBe("2");
    expect([...target.querySelectorAll<HTMLOptionElement>("[name=budget_scope] option")].map((o) => o.value)).toEqual(["", "/src/api", "/src/web"]);
    const status = target.querySelector('[data-budget="daily_usd"]')!;
    expect(status.textContent).toContain("$4.50 (+$0.10 reserved) of $5.00 today");
    expect(status.classList.contains("near")).toBe(true);

    const type = (n: string, v: string) => {
      input(n).value = v;
      input(n).dispatchEvent(new Event("input", { bubbles: true }));
      flushSync();
    };
    type("weekly_usd", "-3");
    target.querySelector("form")!.dispatchEvent(new Event("submit", { cancelable: true }));
    flushSync();
    expect(target.querySelector('[data-testid="budgets-error"]')?.textContent).toContain("Weekly");
    expect(saved).toEqual([]);

    type("weekly_usd", "");
    type("daily_usd", "0.01");
    target.querySelector("form")!.dispatchEvent(new Event("submit", { cancelable: true }));
    await settle();
    flushSync();
    expect(saved).toEqual([
      { repo: null, budgets: { max_cost_usd: 2, daily_usd: 0.01, weekly_usd: null, monthly_usd: null, max_usd_per_minute: null } },
    ]);
    expect(target.querySelector('[data-testid="budgets-saved"]')).not.toBeNull();

    // Another scope: that repository's section.
    const scope = target.querySelector<HTMLSelectElement>("[name=budget_scope]")!;
    scope.value = "/src/api";
    scope.dispatchEvent(new Event("change", { bubbles: true }));
    await settle();
    flushSync();
    expect(input("daily_usd").value).toBe("1");
    expect(input("max_cost_usd").value).toBe("");
  });
});
