// End to end: the verification loop in the real app (custom-protocol build, Xvfb, WebDriver).
// A task runs from the CLI against the scripted mock model while the app watches its journal:
// its first "done" fails a unittest check, the model fixes it, the checks pass — the Checks
// panel goes from failed to passed. Then the review: rejecting the new function's hunk makes
// the accepted tree fail its test, the merge gate blocks the Merge button, and the merge goes
// through with an override whose reason the journal keeps.
//
// Needs what tests/e2e/app.test.mjs needs: DISPLAY, ui/dist, and bosun-app, bosun,
// bosun-mock-model, bosun-sandbox in BOSUN_BIN_DIR (default $CARGO_TARGET_DIR/debug).
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { openSession, startDriver, waitFor } from "./webdriver.mjs";
import { bin, clickIn, git, recorded, requireBinaries, screenshot, startMockModel } from "./support.mjs";

const CALC = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n";
const TEST_CALC =
  "import unittest\n\nfrom calc import add, sub\n\n\nclass CalcTest(unittest.TestCase):\n" +
  "    def test_add(self):\n        self.assertEqual(add(1, 2), 3)\n\n" +
  "    def test_sub(self):\n        self.assertEqual(sub(3, 1), 2)\n";
// The task adds mul (and its test), but breaks add on the way.
const CALC_MUL_BROKEN = CALC.replace("return a + b", "return a - b") + "\n\ndef mul(a, b):\n    return a * b\n";
const TEST_MUL =
  "import unittest\n\nfrom calc import mul\n\n\nclass MulTest(unittest.TestCase):\n" +
  "    def test_mul(self):\n        self.assertEqual(mul(2, 3), 6)\n";



const attr = (app, css, name) =>
  app.run("const el = document.querySelector(arguments[0]); return el ? el.getAttribute(arguments[1]) : null;", css, name);

describe("checks in the app", () => {
  let work;
  before(() => {
    work = mkdtempSync(join(tmpdir(), "bosun-e2e-checks-"));
  });
  after(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("shows the Checks panel going from failed to passed, then gates the merge on the accepted hunks", { timeout: 240_000 }, async (t) => {
    requireBinaries("bosun-app", "bosun", "bosun-mock-model", "bosun-sandbox");
    const home = join(work, "home");
    const repo = join(work, "calc");
    mkdirSync(join(repo, "tests"), { recursive: true });
    git(repo, "init", "-q", "-b", "main");
    writeFileSync(join(repo, "calc.py"), CALC);
    writeFileSync(join(repo, "tests/__init__.py"), "");
    writeFileSync(join(repo, "tests/test_calc.py"), TEST_CALC);
    writeFileSync(join(repo, ".gitignore"), "__pycache__/\n");
    git(repo, "add", "-A");
    git(repo, "commit", "-q", "-m", "initial commit");

    const mockDir = join(work, "mock");
    mkdirSync(mockDir, { recursive: true });
    const mock = await startMockModel(mockDir, [
      {
        kind: "reply",
        text: "Adding mul with a test.",
        tool_calls: [
          { id: "call_w", name: "write_file", arguments: JSON.stringify({ path: "calc.py", content: CALC_MUL_BROKEN }) },
          { id: "call_t", name: "write_file", arguments: JSON.stringify({ path: "tests/test_mul.py", content: TEST_MUL }) },
        ],
      },
      { kind: "reply", text: "Done: mul is in." },
      // After the failed checks: slow, so the app shows the failed round for a while.
      {
        kind: "reply",
        text: "add was broken; fixing it.",
        chunk_delay_ms: 400,
        tool_calls: [
          { id: "call_f", name: "edit_file", arguments: JSON.stringify({ path: "calc.py", old_string: "return a - b\n\n\ndef sub", new_string: "return a + b\n\n\ndef sub" }) },
        ],
      },
      { kind: "reply", text: "Fixed add; mul is in." },
    ]);
    t.after(() => mock.stop());

    const driver = await startDriver({ env: { BOSUN_HOME: home } });
    t.after(() => driver.stop());
    const app = await openSession(driver.url, bin("bosun-app"));
    t.after(() => app.close());
    await waitFor("the app", () => app.find(".sidebar"));
    const skip = await app.find("[data-skip-setup]");
    if (skip) await app.click(skip);

    // The task runs from the CLI; the app follows the journal.
    const run = spawn(
      bin("bosun"),
      ["run", "--json", "--mode", "full-auto", "--repo", repo, "--prompt", "Add mul",
       "--api", "openai-chat", "--base-url", `${mock.url}/v1`, "--model", "mock-model"],
      { env: { ...process.env, BOSUN_HOME: home }, stdio: ["ignore", "pipe", "inherit"] },
    );
    let out = "";
    run.stdout.on("data", (d) => (out += d));
    const exited = new Promise((resolve) => run.on("exit", resolve));
    t.after(() => run.kill("SIGTERM"));
    const taskId = await waitFor("the task id", () => (out.includes("\n") ? JSON.parse(out.split("\n")[0]).task_id : null), 30_000);
    await app.click(await waitFor("the task", () => app.find(`.sidebar [data-task-id="${taskId}"]`), 30_000));

    // Round 1 fails: test_add, a new failure.
    await waitFor("the failed round", async () => (await attr(app, '[data-testid="checks-panel"]', "data-state")) === "failed", 60_000, 200);
    // A failing row opens by itself; open it when it did not.
    if ((await app.count('[data-testid="check-failure"]')) === 0) {
      await clickIn(app, '[data-testid="check-row"][data-status="failed"] button');
    }
    await waitFor("the failure test_add", async () =>
      app.run("return [...document.querySelectorAll('[data-testid=check-failure]')].some(e => e.textContent.includes('test_add'));"), 10_000);
    await screenshot(app, "checks-failed.png");

    // The model fixes add: the checks pass.
    await waitFor("the passed round", async () => (await attr(app, '[data-testid="checks-panel"]', "data-state")) === "passed", 60_000, 200);
    assert.equal(await exited, 0, "bosun run exits 0: completed");
    await waitFor("the sidebar's checks passed", () => app.find(`.sidebar [data-task-id="${taskId}"] [data-testid="task-checks"][data-checks="passed"]`), 30_000);
    await screenshot(app, "checks-passed.png");

    // Review: keep the test of mul, reject mul itself.
    await app.click(await waitFor("the review tab", () => app.find('[data-testid="review-tab"]')));
    await waitFor("two changed files", async () => (await app.count('[data-testid="review-file"]')) === 2, 30_000);
    await clickIn(app, '[data-testid="review-file"][data-path="tests/test_mul.py"]');
    await waitFor("its diff", () => app.find('[data-testid="file-accept"]'));
    await clickIn(app, '[data-testid="file-accept"]');
    await waitFor("test_mul.py accepted", () => app.find('[data-testid="review-file"][data-path="tests/test_mul.py"][data-state="accepted"]'));
    await clickIn(app, '[data-testid="review-file"][data-path="calc.py"]');
    await waitFor("calc.py's diff", () => app.find('[data-testid="hunk"]'));
    await clickIn(app, '[data-testid="file-reject"]');
    await waitFor("calc.py rejected", () => app.find('[data-testid="review-file"][data-path="calc.py"][data-state="rejected"]'));

    // The merge gate runs on the accepted tree: test_mul fails there, the merge is blocked.
    await screenshot(app, "merge-gate-verdicts.png");
    await waitFor("the blocked merge gate", async () => (await attr(app, '[data-testid="merge-checks"]', "data-state")) === "blocked", 90_000, 300);
    await waitFor("the blocked Merge button", () => app.find('[data-testid="merge-open"][data-blocked="true"]'));
    await screenshot(app, "merge-gate-blocked.png");
    await clickIn(app, '[data-testid="merge-open"]');
    const reason = await waitFor("the override reason", () => app.find('[data-testid="merge-override-reason"]'));
    const confirmDisabled = await app.run("const b = document.querySelector('[data-testid=merge-confirm]'); return b ? b.disabled : null;");
    assert.equal(confirmDisabled, true, "no merge without a reason");
    await app.type(reason, "the test lands first; mul follows");
    await clickIn(app, '[data-testid="merge-confirm"]');
    await waitFor("the merge result", () => app.find('[data-testid="merge-result"][data-branch="main"]'), 60_000);
    await screenshot(app, "merge-overridden.png");

    assert.equal(git(repo, "show", "main:calc.py"), CALC);
    assert.equal(git(repo, "show", "main:tests/test_mul.py"), TEST_MUL);
    const journal = execFileSync(bin("bosun"), ["show", taskId, "--json"], { env: { ...process.env, BOSUN_HOME: home }, encoding: "utf8" });
    assert.match(journal, /"override_checks":"the test lands first; mul follows"/);
  });
});
