// End to end: other agents' sessions in the real app (custom-protocol build, Xvfb, WebDriver).
// With CLAUDE_CONFIG_DIR pointing at a copy of the Claude Code fixtures, the History view offers
// "Import sessions from Claude Code"; the import brings the fixture session in, and its row shows
// the Claude Code badge. `bosun costs --by source` then has it. The real home is never read:
// CLAUDE_CONFIG_DIR and CODEX_HOME point into a temporary directory.
//
// Needs what tests/e2e/app.test.mjs needs: DISPLAY, ui/dist, and bosun-app and bosun in
// BOSUN_BIN_DIR (default $CARGO_TARGET_DIR/debug).
import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { openSession, startDriver, waitFor } from "./webdriver.mjs";
import { bin, requireBinaries, screenshot } from "./support.mjs";

const fixtures = join(dirname(fileURLToPath(import.meta.url)), "..", "fixtures");
const SESSION = "cc-0b5e1a3c-6f1d-4a57-9d2e-2c8f3b7a9e10";

describe("imported sessions in the app", () => {
  let work;
  before(() => {
    work = mkdtempSync(join(tmpdir(), "bosun-e2e-import-"));
  });
  after(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("offers the import, shows an imported Claude Code session in History with its badge and source, and its spend by source in Costs", { timeout: 180_000 }, async (t) => {
    requireBinaries("bosun-app", "bosun");
    const home = join(work, "home");
    const claude = join(work, "claude");
    cpSync(join(fixtures, "claude-code"), claude, { recursive: true });
    const env = { BOSUN_HOME: home, CLAUDE_CONFIG_DIR: claude, CODEX_HOME: join(work, "no-codex") };

    const driver = await startDriver({ env });
    t.after(() => driver.stop());
    const app = await openSession(driver.url, bin("bosun-app"));
    t.after(() => app.close());
    await waitFor("the app", () => app.find(".sidebar"));
    const skip = await app.find("[data-skip-setup]");
    if (skip) await app.click(skip);

    await app.click(await waitFor("the History button", () => app.find('[data-testid="history-button"]')));
    const offer = await waitFor("the import offer", () => app.find('[data-testid="history-import"]'), 20_000);
    assert.equal(await app.run("return document.querySelector('[data-testid=history-import]').textContent;"), "Import sessions from Claude Code");
    await app.click(offer);
    const notice = await waitFor("what the import read", () => app.run(
      "const n = document.querySelector('[data-testid=history-import-notice]'); return n ? n.textContent : null;",
    ), 30_000);
    assert.match(notice, /^2 new sessions, 15 new events, 2 lines skipped$/);

    const badge = await waitFor("the imported session's row and badge", () => app.run(
      "const r = document.querySelector(arguments[0]); const b = r && r.querySelector('[data-testid=history-source]'); return b ? b.textContent : null;",
      `[data-testid="history-row"][data-task-id="${SESSION}"]`,
    ), 20_000);
    assert.equal(badge, "Claude Code");
    await screenshot(app, "history-imported.png");

    // Where tasks came from: a Sources facet, which filters by source.
    const facet = await waitFor("the Sources facet", () => app.find('[data-facet="source"][data-value="claude-code"]'), 10_000);
    assert.match(await app.run("return document.querySelector('[data-facet=source][data-value=claude-code]').textContent;"), /Claude Code\s*1/);
    await app.click(facet);
    await waitFor("the search by source", () => app.run(
      "return document.querySelector('[data-testid=history-search]').value === 'source:claude-code' && document.querySelectorAll('[data-testid=history-row]').length === 1 ? true : null;",
    ), 10_000);

    // Costs: the imported spend by source, said to count toward no budget.
    await app.click(await app.find('[data-testid="costs-button"]'));
    const row = await waitFor("the spend by source", () => app.run(
      "const r = document.querySelector('[data-testid=cost-table-source] [data-key=claude-code]'); return r ? r.textContent : null;",
    ), 20_000);
    assert.match(row, /Claude Code \(imported\)/);
    assert.match(await app.run("return document.querySelector('[data-testid=costs-imported-note]').textContent;"), /count toward no budget/);
    await app.run("document.querySelector('[data-testid=cost-table-source]').scrollIntoView();");
    await screenshot(app, "costs-by-source.png");

    const costs = JSON.parse(execFileSync(bin("bosun"), ["costs", "--by", "source", "--json"], { env: { ...process.env, ...env }, encoding: "utf8" }));
    assert.deepEqual(costs.map((r) => [r.key, r.figure.responses]), [["claude-code", 4]]);
  });
});
