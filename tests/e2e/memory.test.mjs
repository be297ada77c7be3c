// End to end: the Memory view of the real app (custom-protocol build, Xvfb, WebDriver). Memories
// are written with the real `bosun memory add`; the window lists them, pins one, deletes another
// (asked first, confirmed with the keyboard) and turns memory off, and `bosun memory --json` and
// config.toml show each change — config.toml with its other keys and comments as they were.
//
// Needs DISPLAY, ui/dist, and bosun-app and bosun in BOSUN_BIN_DIR (default
// $CARGO_TARGET_DIR/debug); see the top of tests/e2e/app.test.mjs.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { openSession, startDriver, waitFor } from "./webdriver.mjs";
import { bin, git, requireBinaries, screenshot } from "./support.mjs";

const CONFIG = "# my settings, by hand\nmax_steps = 40\n";

describe("the Memory view", () => {
  let work;
  before(() => {
    work = mkdtempSync(join(tmpdir(), "bosun-e2e-memory-"));
  });
  after(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("lists a repository's memories, pins one, deletes another and turns memory off", { timeout: 120_000 }, async (t) => {
    requireBinaries("bosun-app", "bosun");
    const home = join(work, "home");
    mkdirSync(home, { recursive: true });
    writeFileSync(join(home, "config.toml"), CONFIG);
    const repo = join(work, "shop");
    mkdirSync(repo, { recursive: true });
    writeFileSync(join(repo, "README.md"), "# shop\n");
    git(repo, "init", "-q", "-b", "main");
    git(repo, "add", "-A");
    git(repo, "commit", "-q", "-m", "shop");

    const bosun = (...args) => {
      const r = spawnSync(bin("bosun"), args, { env: { ...process.env, BOSUN_HOME: home }, encoding: "utf8" });
      assert.equal(r.status, 0, `bosun ${args.join(" ")}: ${r.stderr}`);
      return r.stdout;
    };
    const add = (text) => JSON.parse(bosun("memory", "add", "--repo", repo, "--json", text));
    const lint = add("Run `make lint` before committing");
    const tabs = add("Tabs, not spaces, in Makefiles");
    const changelog = add("Every change gets a line in CHANGELOG.md");
    const journal = () => JSON.parse(bosun("memory", "--repo", repo, "--json"));
    assert.deepEqual(
      journal().map((m) => [m.id, m.pinned]),
      [changelog.id, tabs.id, lint.id].map((id) => [id, false]),
    );

    const driver = await startDriver({ env: { BOSUN_HOME: home } });
    t.after(() => driver.stop());
    const app = await openSession(driver.url, bin("bosun-app"));
    t.after(() => app.close());

    // No task ran here yet: the sidebar's Memory button opens the repository that has memories.
    await app.click(await waitFor("the Memory button", () => app.find('[data-testid="memory-button"]')));
    await waitFor("three memories", async () => (await app.count("[data-memory-id]")) === 3);
    const rows = () =>
      app.run(
        `return [...document.querySelectorAll("[data-memory-id]")].map((li) => [
          Number(li.dataset.memoryId),
          li.querySelector('[data-testid="memory-kind"]').textContent.trim(),
          li.querySelector('[data-testid="memory-text"]').textContent.trim(),
          li.querySelector('[data-testid="memory-pin"]').getAttribute("aria-pressed"),
        ]);`,
      );
    assert.deepEqual(await rows(), [
      [changelog.id, "Convention", "Every change gets a line in CHANGELOG.md", "false"],
      [tabs.id, "Convention", "Tabs, not spaces, in Makefiles", "false"],
      [lint.id, "Convention", "Run make lint before committing", "false"],
    ]);
    assert.match(await app.textOf('[data-testid="memory-view"] .where'), /shop/);
    assert.match((await app.textOf(`[data-memory-id="${lint.id}"] [data-testid="memory-meta"]`)).replace(/\s+/g, " "), /Written by you (just now|\d+ min ago)/);
    t.diagnostic(`list: ${await screenshot(app, "memory-list.png")}`);

    // Pin the oldest: it goes first, in the window and in the journal.
    await app.click(await app.find(`[data-memory-id="${lint.id}"] [data-testid="memory-pin"]`));
    await waitFor("the pinned memory first", async () => {
      const r = await rows();
      return r[0][0] === lint.id && r[0][3] === "true";
    });
    assert.deepEqual(
      journal().map((m) => [m.id, m.pinned]),
      [
        [lint.id, true],
        [changelog.id, false],
        [tabs.id, false],
      ],
    );

    // Delete another: the window asks first; Enter confirms (the Delete button has the focus).
    await app.click(await app.find(`[data-memory-id="${tabs.id}"] [data-testid="memory-delete"]`));
    await waitFor("the delete dialog", () => app.find('[data-testid="memory-delete-dialog"]'));
    assert.match(await app.textOf('[data-testid="memory-delete-dialog"]'), /Tabs, not spaces, in Makefiles/);
    assert.equal(await app.run("return document.activeElement.dataset.testid;"), "memory-delete-confirm");
    t.diagnostic(`dialog: ${await screenshot(app, "memory-delete-dialog.png")}`);
    await app.press("\uE007");
    await waitFor("the memory to go", async () => (await app.count(`[data-memory-id="${tabs.id}"]`)) === 0);
    assert.equal(await app.count('[data-testid="memory-delete-dialog"]'), 0);
    assert.deepEqual(
      journal().map((m) => m.id),
      [lint.id, changelog.id],
    );

    // Turn memory off: config.toml says so, and keeps what was written by hand.
    assert.equal(await app.run('return document.querySelector("[data-testid=memory-enabled]").checked;'), true);
    await app.click(await app.find('[data-testid="memory-view"] label.switch'));
    await waitFor("the off notice", () => app.find('[data-testid="memory-off"]'));
    assert.equal(await app.run('return document.querySelector("[data-testid=memory-enabled]").checked;'), false);
    assert.equal(readFileSync(join(home, "config.toml"), "utf8"), `${CONFIG}\n[memory]\nenabled = false\n`);
    assert.match(bosun("memory", "--repo", repo), /^memory is off \(\[memory\] enabled = false in /);
    // What is kept is still listed.
    assert.equal(await app.count("[data-memory-id]"), 2);
    t.diagnostic(`off: ${await screenshot(app, "memory-off.png")}`);

    // And on again, from the keyboard: Space on the focused switch.
    await app.run('document.querySelector("[data-testid=memory-enabled]").focus();');
    await app.press(" ");
    await waitFor("the off notice to go", async () => (await app.count('[data-testid="memory-off"]')) === 0);
    assert.equal(readFileSync(join(home, "config.toml"), "utf8"), `${CONFIG}\n[memory]\nenabled = true\n`);
  });
});
