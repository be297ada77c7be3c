// Benchmark: the Costs view on a large journal, in the real app window. Copies the journal
// `bosun bench history` builds (10,000 tasks, 1,000,000 events by default) into a fresh
// $BOSUN_HOME, starts the app, and prints the time from the Costs click to the first paint of
// its totals, to the chart's canvas, and to the Insights' rows, and how many table rows the DOM
// holds (the tables show their top rows, not 10,000). Figures, not a test.
//
// Run (after `bosun bench history`, building ui/dist and bosun-app with --features
// bosun-app/custom-protocol):
//   xvfb-run -a -s "-screen 0 1280x800x24" node tests/bench/ui-costs.mjs [JOURNAL] [WAIT_MS]
// WAIT_MS (default 0): how long after the task list appears the Costs view is first opened. The
// app reads the dashboard while idle 1.5 s after starting, so 0 measures an opening before that
// (the view waits for the journal) and e.g. 3000 one after it (it paints what was read, then
// refreshes).
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bin } from "../e2e/support.mjs";
import { openSession, startDriver, waitFor } from "../e2e/webdriver.mjs";

const journal = process.argv[2] || "/var/tmp/bosun-bench/journal-v5b-10000-1000000.db";
const waitMs = Number(process.argv[3] ?? 0);
if (!existsSync(journal)) {
  console.error(`${journal} is missing: run \`bosun bench history\` first`);
  process.exit(2);
}
const work = mkdtempSync(join(tmpdir(), "bosun-bench-costs-"));
const home = join(work, "home");
mkdirSync(home, { recursive: true });
copyFileSync(journal, join(home, "bosun.db"));

/**
 * Clicks `clickCss` and resolves with the ms (measured in the page) until each of `marks` first
 * matches, then until the next frame is painted after the first of them.
 */
async function timeToPaint(app, clickCss, marks) {
  await app.run(
    `window.__marks = {};
     const marks = arguments[1];
     const start = performance.now();
     const check = () => {
       for (const css of marks) {
         if (window.__marks[css] === undefined && document.querySelector(css)) {
           window.__marks[css] = performance.now() - start;
           if (css === marks[0]) requestAnimationFrame(() => setTimeout(() => (window.__marks.paint = performance.now() - start), 0));
         }
       }
       if (marks.every((c) => window.__marks[c] !== undefined)) obs.disconnect();
     };
     const obs = new MutationObserver(check);
     obs.observe(document.body, { childList: true, subtree: true, characterData: true });
     document.querySelector(arguments[0]).click();`,
    clickCss,
    marks,
  );
  return waitFor(
    "the Costs view",
    () => app.run("const m = window.__marks; return arguments[0].every((c) => m[c] !== undefined) && m.paint !== undefined ? m : null;", marks),
    120_000,
    20,
  );
}

const driver = await startDriver({ env: { BOSUN_HOME: home } });
const app = await openSession(driver.url, bin("bosun-app"));
try {
  const t0 = performance.now();
  await waitFor("the task list", () => app.find(".sidebar [data-task-id]"), 120_000);
  const listMs = performance.now() - t0;
  const skip = await app.find("[data-skip-setup]");
  if (skip) await app.click(skip);
  if (waitMs > 0) await new Promise((r) => setTimeout(r, waitMs));
  const totals = '[data-testid="cost-total"]';
  const canvas = '[data-testid="cost-chart"] canvas';
  const insights = '[data-testid="insights-row"]';
  const m = await timeToPaint(app, '[data-testid="costs-button"]', [totals, canvas, insights]);
  const rows = await app.run("return document.querySelectorAll('[data-testid=\"cost-row\"]').length;");
  const tasks = await app.run("return document.querySelector('[data-testid=\"cost-table-task\"] .more')?.textContent ?? '';");
  // Again, warm (the second opening of the view).
  await app.run("document.querySelector('.sidebar [data-task-id]').click();");
  const warm = await timeToPaint(app, '[data-testid="costs-button"]', [totals, canvas, insights]);

  const ms = (t) => `${t.toFixed(0).padStart(6)} ms`;
  console.log(`journal: ${journal}; first opened ${waitMs} ms after the task list appeared`);
  console.log(`app start to the task list:                     ${ms(listMs)}`);
  console.log(`Costs click to the totals in the DOM:           ${ms(m[totals])}`);
  console.log(`Costs click to the first paint of the view:     ${ms(m.paint)}   (target 300 ms)`);
  console.log(`Costs click to the chart's canvas:              ${ms(m[canvas])}`);
  console.log(`Costs click to the Insights' rows:              ${ms(m[insights])}`);
  console.log(`again (warm): first paint ${ms(warm.paint)}, chart ${ms(warm[canvas])}`);
  console.log(`table rows in the DOM:                          ${String(rows).padStart(6)}   ${tasks}`);
} finally {
  await app.close();
  driver.stop();
  rmSync(work, { recursive: true, force: true });
}
