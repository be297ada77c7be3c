// End to end: the Batch and Compare views in the real app (custom-protocol build, Xvfb, WebDriver),
// against the scripted mock model as the provider of $BOSUN_HOME/config.toml.
// (a) One prompt over two repositories (the first twice: three tasks) started from the Batch view:
//     its table fills in, row by row, until every row shows completed with its cost and time.
// (b) A comparison of two inline setups × 1 run: the two runs' diffs side by side, then "Merge
//     this run" (confirmed) merges one; the other is left unmerged.
// One prompt is one conversation to the mock, so the tasks run one at a time (concurrency 1): each
// takes the next two replies of the script in order — a write_file call, then its answer.
//
// Needs what tests/e2e/app.test.mjs needs: DISPLAY, ui/dist, and bosun-app and bosun-mock-model in
// BOSUN_BIN_DIR (default $CARGO_TARGET_DIR/debug).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { openSession, startDriver, waitFor } from "./webdriver.mjs";
import { bin, clickIn, git, requireBinaries, screenshot, startMockModel, waitInApp } from "./support.mjs";

/** Sets a form field as typing would (an input event Svelte's binding hears). */
const fill = (app, css, value) =>
  app.run(
    "const el = document.querySelector(arguments[0]); el.value = arguments[1]; el.dispatchEvent(new Event('input', {bubbles: true})); return true;",
    css,
    value,
  );

/** The batch table's rows as a user reads them. */
const rows = (app) =>
  app.run(`return [...document.querySelectorAll('[data-testid=batch-item]')].map((r) => ({
    n: r.dataset.n,
    status: r.dataset.status,
    repo: r.querySelector('.repo').textContent.trim(),
    shown: r.querySelector('[data-testid=batch-item-status]').textContent.replace(/\\s+/g, ' ').trim(),
    cost: r.querySelector('[data-testid=batch-item-cost]').textContent.trim(),
    time: r.querySelector('[data-testid=batch-item-time]').textContent.trim(),
    open: !!r.querySelector('[data-testid=batch-item-open]'),
  }));`);

function makeRepo(dir, name) {
  const repo = join(dir, name);
  mkdirSync(repo, { recursive: true });
  git(repo, "init", "-q", "-b", "main");
  writeFileSync(join(repo, "README.md"), `# ${name}\n`);
  git(repo, "add", "-A");
  git(repo, "commit", "-q", "-m", "initial commit");
  return repo;
}

/** A write_file call of `path`, then the answer, slowly enough for the window to show it running. */
const writes = (path, content) => [
  { kind: "reply", text: `Writing ${path}.`, chunk_delay_ms: 150, tool_calls: [{ id: `call_${path}`, name: "write_file", arguments: JSON.stringify({ path, content }) }] },
  { kind: "reply", text: `Wrote ${path}.`, chunk_delay_ms: 100 },
];

async function openApp(t, home) {
  const driver = await startDriver({ env: { BOSUN_HOME: home, BOSUN_LOG: "info" } });
  t.after(() => driver.stop());
  const app = await openSession(driver.url, bin("bosun-app"));
  t.after(() => app.close());
  await waitFor("the app", () => app.find(".sidebar"));
  app.driver = driver;
  return app;
}

function writeConfig(home, url) {
  mkdirSync(home, { recursive: true });
  writeFileSync(
    join(home, "config.toml"),
    `default_provider = "mock"\n\n[providers.mock]\napi = "openai-chat"\nbase_url = "${url}/v1"\nmodel = "mock-model"\n`,
  );
}

describe("batches and comparisons in the app", () => {
  let work;
  before(() => {
    work = mkdtempSync(join(tmpdir(), "bosun-e2e-batch-"));
  });
  after(() => {
    if (work && !process.env.E2E_KEEP) rmSync(work, { recursive: true, force: true });
  });

  it("runs a prompt over two repositories from the Batch view, the table filling in until every row is completed", { timeout: 240_000 }, async (t) => {
    requireBinaries("bosun-app", "bosun-mock-model");
    const dir = join(work, "a");
    const alpha = makeRepo(dir, "alpha");
    const beta = makeRepo(dir, "beta");
    const mockDir = join(dir, "mock");
    mkdirSync(mockDir, { recursive: true });
    const mock = await startMockModel(mockDir, [...writes("one.txt", "one\n"), ...writes("two.txt", "two\n"), ...writes("three.txt", "three\n")]);
    t.after(() => mock.stop());
    const home = join(dir, "home");
    writeConfig(home, mock.url);
    const app = await openApp(t, home);

    await clickIn(app, '[data-testid="batch-button"]');
    await waitFor("the batch form", () => app.find('[data-testid="batch-form"]'));
    await fill(app, '[data-testid="batch-prompt"]', "Add a notes file");
    await fill(app, '[data-testid="batch-repos"]', `${alpha}\n${beta}\n${alpha}\n`);
    await app.run(
      "const el = document.querySelector('[data-testid=batch-mode]'); el.value = 'full-auto'; el.dispatchEvent(new Event('change', {bubbles: true}));",
    );
    await fill(app, '[data-testid="batch-concurrency"]', "1");
    assert.equal((await app.textOf('[data-testid="batch-start"]')).trim(), "Start 3 tasks");
    await screenshot(app, "batch-form.png");
    await clickIn(app, '[data-testid="batch-start"]');

    // Live: first one running and two queued, then on until all three are completed.
    const first = await waitFor("a running row", async () => {
      const r = await rows(app);
      return r.length === 3 && r.some((x) => x.status === "running") ? r : null;
    }, 60_000, 50);
    assert.deepEqual(first.map((r) => r.repo), ["alpha", "beta", "alpha"]);
    assert.ok(first.some((r) => r.shown === "queued"), `a row waits its turn: ${JSON.stringify(first)}`);
    await screenshot(app, "batch-running.png");
    const seen = new Set();
    const done = await waitInApp(app, "every row completed", async () => {
      const r = await rows(app);
      r.forEach((x) => seen.add(`${x.n}:${x.status}`));
      return r.length === 3 && r.every((x) => x.status === "completed") ? r : null;
    }, { timeoutMs: 120_000, shot: "batch-not-completed.png", driver: app.driver });
    for (const r of done) {
      assert.equal(r.shown, "Completed");
      assert.match(r.time, /\d/);
      assert.ok(r.open, "a link opens the task");
    }
    assert.ok(seen.has("2:running") || seen.has("3:running"), `later rows were seen running too: ${[...seen]}`);
    await waitFor("the batch finished", async () => (await app.run("return document.querySelector('[data-testid=batch-status]')?.dataset.status")) === "finished", 30_000);
    assert.match(await app.textOf('[data-testid="batch-progress"]'), /3 of 3 done/);
    assert.equal(await app.count('[data-testid="batch-stop"]'), 0);
    await screenshot(app, "batch-done.png");

    // The link opens the task's own timeline, with its write_file call.
    const second = await app.run("return document.querySelector('[data-testid=batch-item][data-n=\"2\"]').dataset.taskId");
    await clickIn(app, '[data-testid="batch-item"][data-n="2"] [data-testid="batch-item-open"]');
    await waitFor("the task's timeline", () => app.find(`section.pane[data-task-id="${second}"] [data-tool="write_file"]`), 30_000);
    assert.match(await app.textOf(`section.pane[data-task-id="${second}"]`), /two\.txt/);
  });

  it("shows two setups' diffs side by side and merges the run chosen", { timeout: 240_000 }, async (t) => {
    requireBinaries("bosun-app", "bosun-mock-model");
    const dir = join(work, "b");
    const repo = makeRepo(dir, "shop");
    const mockDir = join(dir, "mock");
    mkdirSync(mockDir, { recursive: true });
    const mock = await startMockModel(mockDir, [...writes("plain.txt", "the plain setup\n"), ...writes("capped.txt", "the capped setup\n")]);
    t.after(() => mock.stop());
    const home = join(dir, "home");
    writeConfig(home, mock.url);
    const app = await openApp(t, home);

    await clickIn(app, '[data-testid="compare-button"]');
    await waitFor("the compare form", () => app.find('[data-testid="compare-form"]'));
    await fill(app, '[data-testid="compare-repo"]', repo);
    await fill(app, '[data-testid="compare-prompt"]', "Write a file that says which setup ran");
    await fill(app, '[name="setup-0"]', "mode=full-auto");
    await fill(app, '[name="setup-1"]', "mode=full-auto,max_steps=5");
    await fill(app, '[data-testid="compare-concurrency"]', "1");
    await clickIn(app, '[data-testid="compare-start"]');

    const columns = () =>
      app.run(`return [...document.querySelectorAll('[data-testid=compare-run]')].map((c) => ({
        label: c.dataset.label, status: c.dataset.status, review: c.dataset.review,
        diff: c.querySelector('[data-testid=compare-diff]').textContent,
        left: Math.round(c.getBoundingClientRect().left), top: Math.round(c.getBoundingClientRect().top),
        merge: !!c.querySelector('[data-testid=compare-merge]'),
      }));`);
    let seenColumns = [];
    const both = await waitInApp(app, "both runs completed with their diffs", async () => {
      const c = await columns();
      seenColumns = c.map(({ label, status, review, merge }) => ({ label, status, review, merge }));
      return c.length === 2 && c.every((x) => x.status === "completed" && x.merge) ? c : null;
    }, { timeoutMs: 120_000, shot: "compare-not-completed.png", mockDir, driver: app.driver }).catch((err) => {
      throw new Error(`${err.message}\nthe runs: ${JSON.stringify(seenColumns)}`);
    });
    assert.deepEqual(both.map((c) => c.label), ["mode=full-auto#1", "mode=full-auto,max_steps=5#1"]);
    assert.match(both[0].diff, /\+the plain setup/);
    assert.match(both[1].diff, /\+the capped setup/);
    // Next to each other: the same top, the second to the right of the first.
    assert.equal(both[0].top, both[1].top);
    assert.ok(both[1].left > both[0].left + 200, `side by side: ${both[0].left} / ${both[1].left}`);
    const summary = await app.textOf('[data-testid="compare-summary"]');
    assert.match(summary, /Completed\s*1 of 1\s*1 of 1/);
    await screenshot(app, "compare-diffs.png");

    // Merge the second, after confirming; the first stays unmerged.
    await clickIn(app, '[data-testid="compare-run"][data-label="mode=full-auto,max_steps=5#1"] [data-testid="compare-merge"]');
    await waitFor("the confirmation", () => app.find('[data-testid="compare-merge-confirm"]'));
    assert.equal(git(repo, "branch", "--list", "main").trim().length > 0, true);
    await clickIn(app, '[data-testid="compare-merge-yes"]');
    const merged = await waitFor("the run merged", async () => {
      const refused = await app.textOf('[data-testid="compare-merge-error"]');
      if (refused) throw new Error(`the merge was refused: ${refused}`);
      const c = await columns();
      return c.find((x) => x.review === "merged") ? c : null;
    }, 60_000);
    assert.deepEqual(merged.map((c) => c.review), ["unreviewed", "merged"]);
    assert.match(await app.textOf('[data-testid="compare-run"][data-label="mode=full-auto,max_steps=5#1"] [data-testid="compare-merged"]'), /Merged/);
    assert.equal(merged[0].merge, true, "the other run can still be merged");
    await screenshot(app, "compare-merged.png");
    // The merged file is on the branch the task started from; the other run's is not.
    assert.equal(git(repo, "show", "main:capped.txt"), "the capped setup\n");
    assert.throws(() => git(repo, "show", "main:plain.txt"));
  });
});
