// End to end: the Costs view and budgets in the real app (custom-protocol build, Xvfb, WebDriver).
// 1. A journal seeded with known usage (`seed_journal --costs`: today, earlier this week, this
//    month, months ago; three repositories; three models, one without a price; every token class)
//    shows the right totals, tables and per-request list, and its chart, in light and dark.
// 2. A daily budget set in Settings (saved to $BOSUN_HOME/config.toml) stops a task started in the
//    app against the scripted mock model: it ends `budget_exceeded` and the app says which budget.
//
// Needs what tests/e2e/app.test.mjs needs: DISPLAY, ui/dist, and bosun-app, bosun-mock-model and
// examples/seed_journal in BOSUN_BIN_DIR (default $CARGO_TARGET_DIR/debug; `cargo build
// --all-targets` builds the example).
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { openSession, startDriver, waitFor } from "./webdriver.mjs";
import { bin, clickIn, git, recorded, requireBinaries, screenshot, startMockModel } from "./support.mjs";

/** Dollars as the app shows them (ui/src/lib/components/format.ts). */
function usd(v, lowerBound = false) {
  const a = Math.abs(v);
  const text = a === 0 ? "0.00" : a < 0.01 ? a.toFixed(4) : a.toFixed(2);
  return `${v < 0 ? "-" : ""}$${text}${lowerBound ? "+" : ""}`;
}

/** What a set of responses shows: "unpriced" if none had a price, `$x+` if some had none. */
function shown(rows) {
  const unpriced = rows.filter((r) => r.cost_usd === null).length;
  if (rows.length > 0 && unpriced === rows.length) return "unpriced";
  return usd(rows.reduce((n, r) => n + (r.cost_usd ?? 0), 0), unpriced > 0);
}

/** The local periods the totals cover: today, this week (from Monday), this month, all time. */
function periods(now = new Date()) {
  const today = new Date(now.getFullYear(), now.getMonth(), now.getDate());
  const monday = new Date(today);
  monday.setDate(today.getDate() - ((today.getDay() + 6) % 7));
  const month = new Date(now.getFullYear(), now.getMonth(), 1);
  return { today, week: monday, month, all: new Date(0) };
}

const groupBy = (rows, key) => {
  const out = new Map();
  for (const r of rows) out.set(r[key], [...(out.get(r[key]) ?? []), r]);
  return out;
};

async function openApp(t, home) {
  const driver = await startDriver({ env: { BOSUN_HOME: home } });
  t.after(() => driver.stop());
  const app = await openSession(driver.url, bin("bosun-app"));
  t.after(() => app.close());
  await waitFor("the app", () => app.find(".sidebar"));
  const skip = await app.find("[data-skip-setup]");
  if (skip) await app.click(skip);
  return app;
}

/** Switches the theme in Settings (light or dark) and comes back to the Costs view. */
async function theme(app, value) {
  await app.click(await app.find("[data-settings-button]"));
  await waitFor("the theme select", () => app.find('[data-settings] select[name="theme"]'));
  await app.run(
    "const s = document.querySelector('[data-settings] select[name=theme]'); s.value = arguments[0]; s.dispatchEvent(new Event('change', {bubbles: true}));",
    value,
  );
  await waitFor(`the ${value} theme`, () => app.run("return document.documentElement.dataset.theme === arguments[0];", value));
  await app.click(await app.find('[data-testid="costs-button"]'));
  await waitFor("the Costs view again", () => app.find('[data-testid="cost-chart"] canvas'));
}

describe("costs in the app", () => {
  let work;
  before(() => {
    work = mkdtempSync(join(tmpdir(), "bosun-e2e-costs-"));
  });
  after(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("shows the seeded journal's totals, tables, chart and a task's requests, in light and dark", { timeout: 180_000 }, async (t) => {
    requireBinaries("bosun-app", "examples/seed_journal");
    const home = join(work, "seeded");
    mkdirSync(home, { recursive: true });
    const out = execFileSync(bin("examples/seed_journal"), ["--costs"], { env: { ...process.env, BOSUN_HOME: home }, encoding: "utf8" });
    const line = out.split("\n").find((l) => l.startsWith("costs "));
    assert.ok(line, `the seed names what it wrote:\n${out}`);
    const usage = JSON.parse(line.slice("costs ".length)).map((r) => ({ ...r, at: new Date(r.ts) }));
    assert.ok(usage.some((r) => r.cost_usd === null), "an unpriced model is among them");

    const app = await openApp(t, home);
    await app.click(await waitFor("the Costs button", () => app.find('[data-testid="costs-button"]')));
    await waitFor("the totals", () => app.find('[data-testid="cost-total"]'), 20_000);

    // Totals: each period's responses, computed here from what was seeded.
    const p = periods();
    for (const [period, from] of Object.entries(p)) {
      const want = shown(usage.filter((r) => r.at >= from));
      const got = await app.run("return document.querySelector(`[data-testid=cost-total][data-period=${arguments[0]}] [data-testid=cost-total-value]`).textContent;", period);
      assert.equal(got, want, `the ${period} total`);
    }

    // Tables by repository, model and task (all time).
    const cell = (table, key) =>
      app.run(
        "const r = [...document.querySelectorAll(`[data-testid=${arguments[0]}] [data-testid=cost-row]`)].find((r) => r.dataset.key === arguments[1]); return r ? r.querySelector('[data-testid=cost-row-cost]').textContent : null;",
        table,
        key,
      );
    for (const [repo, rows] of groupBy(usage, "repo")) assert.equal(await cell("cost-table-repo", repo), shown(rows), `repository ${repo}`);
    for (const [model, rows] of groupBy(usage, "model")) assert.equal(await cell("cost-table-model", model), shown(rows), `model ${model}`);
    for (const [task, rows] of groupBy(usage, "task")) assert.equal(await cell("cost-table-task", task), shown(rows), `task ${task}`);
    assert.equal(await cell("cost-table-model", "local-llm"), "unpriced");

    // The unpriced model is offered a price.
    assert.ok(await app.find('[data-testid="unpriced-models"] [data-model="local-llm"] [data-testid="add-price"]'));

    // The chart: uPlot's canvas, and a legend naming the models that spent in the last 30 days.
    await waitFor("the chart's canvas", () => app.find('[data-testid="cost-chart"] canvas'));
    const month = new Date(Date.now() - 29 * 86_400_000);
    const recent = [...new Set(usage.filter((r) => r.cost_usd !== null && r.at >= month).map((r) => r.model))];
    const legend = () => app.run("return [...document.querySelectorAll('[data-testid=cost-chart] .u-legend .u-series .u-label')].map((l) => l.textContent);");
    const names = await legend();
    for (const m of recent) assert.ok(names.includes(m), `the legend names ${m}: ${names}`);
    await screenshot(app, "costs-light.png");

    // Stacked by repository instead.
    await app.click(await app.find('[data-testid="chart-stack-repo"]'));
    const repos = [...new Set(usage.filter((r) => r.cost_usd !== null && r.at >= month).map((r) => r.repo))];
    await waitFor("the legend by repository", async () => {
      const n = await legend();
      return repos.every((r) => n.includes(r));
    });

    // Dark: the same view, legible (text and background differ).
    await theme(app, "dark");
    const colours = await app.run(
      "const c = getComputedStyle(document.querySelector('[data-testid=cost-total]')); return [c.color, c.backgroundColor];",
    );
    assert.notEqual(colours[0], colours[1]);
    await screenshot(app, "costs-dark.png");
    await theme(app, "light");

    // A task's requests: click its row, open the Requests tab.
    const task = usage.find((r) => r.model === "claude-sonnet-4-5" && r.repo.endsWith("billing")).task;
    const mine = usage.filter((r) => r.task === task);
    assert.ok(await clickIn(app, `[data-testid="cost-table-task"] [data-testid="cost-row"][data-key="${task}"]`));
    await waitFor("the task", () => app.find(`section[data-task-id="${task}"]`));
    await app.click(await waitFor("the Requests tab", () => app.find('[data-testid="requests-tab"]')));
    await waitFor("the requests", () => app.run("return document.querySelectorAll('[data-testid=task-request]').length === arguments[0];", mine.length));
    const costs = await app.run("return [...document.querySelectorAll('[data-testid=task-request-cost]')].map((c) => c.textContent);");
    assert.deepEqual(costs, mine.map((r) => (r.cost_usd === null ? "unpriced" : usd(r.cost_usd))));
    const first = await app.run(
      "const r = document.querySelector('[data-testid=task-request]'); return ['input','cache_read','cache_write_5m','cache_write_1h','output','reasoning'].map((k) => r.querySelector(`[data-class=${k}]`).textContent);",
    );
    const tokens = (n) => (n < 1000 ? String(n) : n < 1_000_000 ? `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k` : `${(n / 1_000_000).toFixed(1)}M`);
    assert.deepEqual(first, mine[0].tokens.map(tokens));
    assert.match(await app.run("return document.querySelector('[data-testid=task-request-rates]').textContent;"), /3\.00 · 15\.00 · 0\.300 · 3\.75 · 6\.00/);
    assert.equal(await app.run("return document.querySelector('[data-testid=task-requests-total]').textContent;"), shown(mine));
    await screenshot(app, "costs-task-requests.png");
  });

  it("stops a task at the daily budget set in Settings, and says which budget", { timeout: 180_000 }, async (t) => {
    requireBinaries("bosun-app", "bosun-mock-model");
    const home = join(work, "budget");
    const repo = join(work, "repo");
    mkdirSync(home, { recursive: true });
    mkdirSync(repo, { recursive: true });
    git(repo, "init", "-q", "-b", "main");
    writeFileSync(join(repo, "README.md"), "budget\n");
    git(repo, "add", "-A");
    git(repo, "commit", "-q", "-m", "initial commit");
    const mockDir = join(work, "mock");
    mkdirSync(mockDir, { recursive: true });
    const mock = await startMockModel(mockDir, [
      { kind: "reply", text: "Hello.", usage: { input_tokens: 1000, output_tokens: 50 } },
      { kind: "reply", text: "Hello again.", usage: { input_tokens: 1000, output_tokens: 50 } },
    ]);
    t.after(() => mock.stop());

    const app = await openApp(t, home);
    // Settings → Budgets: a daily budget of one cent for every repository.
    await app.click(await app.find("[data-settings-button]"));
    const daily = await waitFor("the daily budget field", () => app.find('[data-testid="budgets-form"] [name="daily_usd"]'));
    await app.clear(daily);
    await app.type(daily, "-1");
    await app.click(await app.find('[data-testid="budgets-save"]'));
    await waitFor("the form to refuse a negative amount", () => app.find('[data-testid="budgets-error"]'));
    await app.clear(daily);
    await app.type(daily, "0.01");
    await app.click(await app.find('[data-testid="budgets-save"]'));
    await waitFor("the budgets saved", () => app.find('[data-testid="budgets-saved"]'));
    const config = readFileSync(join(home, "config.toml"), "utf8");
    assert.match(config, /\[budgets\]\s*\ndaily_usd = 0\.01/);
    await screenshot(app, "costs-budget-settings.png");

    // A task from the app against the mock model, priced (as claude-sonnet-4-5), in full-auto.
    await app.click(await app.find("[data-new-task-button]"));
    const field = async (name) => waitFor(`the ${name} field`, () => app.find(`form[data-new-task] [name="${name}"]`));
    const fill = async (name, text) => {
      const el = await field(name);
      await app.clear(el);
      if (text) await app.type(el, text);
    };
    if (await app.find('form[data-new-task] [name="provider"]')) {
      await app.run("const s = document.querySelector('form[data-new-task] [name=provider]'); s.value = ''; s.dispatchEvent(new Event('change', {bubbles: true}));");
    }
    await fill("repo", repo);
    // The form starts a task once it knows the repository's branches (as a user sees them).
    await waitFor("the repository's branches in the base select", async () =>
      (await app.run("return [...document.querySelectorAll('form[data-new-task] [name=base] option')].map(o => o.value);"))?.includes("main"),
    );
    await fill("base_url", `${mock.url}/v1`);
    await fill("model", "claude-sonnet-4-5");
    await fill("api_key_env", "");
    await app.run("const s = document.querySelector('form[data-new-task] [name=mode]'); s.value = 'full-auto'; s.dispatchEvent(new Event('change', {bubbles: true}));");
    const prompt = await field("prompt");
    await app.type(prompt, "Say hello");
    await app.submitKeys();

    await waitFor("the task in the sidebar", () => app.find(".sidebar [data-task-id]"), 30_000).catch(async (e) => {
      const said = await app.run("return document.querySelector('form[data-new-task]')?.innerText ?? document.body.innerText;");
      await screenshot(app, "costs-budget-not-started.png");
      throw new Error(`${e.message}; the window says: ${said}`);
    });
    const status = await waitFor(
      "the task to stop",
      () => app.run("const el = document.querySelector('.sidebar [data-task-id]'); return el && el.dataset.status !== 'running' ? el.dataset.status : null;"),
      60_000,
    );
    await screenshot(app, "costs-budget-stopped.png");
    assert.equal(status, "budget_exceeded");
    const notice = await waitFor("the budget notice", () => app.run("const el = document.querySelector('[data-testid=budget-stop]'); return el ? el.textContent : null;"));
    assert.match(notice, /daily/);
    assert.equal(recorded(mockDir).length, 0, "the request that would pass the budget was not sent");
  });
});
