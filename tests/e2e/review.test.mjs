// End to end: reviewing a finished task in the real app (custom-protocol build, Xvfb, WebDriver):
// reject a hunk, comment on a line, request changes (the mock model receives the structured
// comment and the task continues in the app), accept the rest, merge as one squashed commit.
// And: commits to the user's main while the review is open show "main moved 3 commits: Rebase",
// and Rebase moves the task onto main's tip.
//
// Needs what tests/e2e/app.test.mjs needs: DISPLAY, ui/dist, and bosun-app, bosun,
// bosun-mock-model, bosun-sandbox in BOSUN_BIN_DIR (default $CARGO_TARGET_DIR/debug).
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { openSession, startDriver, waitFor } from "./webdriver.mjs";
import { bin, clickIn, git, recorded, requireBinaries, screenshot, startMockModel } from "./support.mjs";

const ORIGINAL = Array.from({ length: 14 }, (_, i) => `line ${i + 1}`).join("\n") + "\n";
// Two changes far apart: two hunks.
const EDITED = ORIGINAL.replace("line 2\n", "line two\n").replace("line 13\n", "line thirteen\n");

describe("reviewing a task in the app", () => {
  let work;
  before(() => {
    work = mkdtempSync(join(tmpdir(), "bosun-e2e-review-"));
  });
  after(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("rejects a hunk, sends a line comment to the agent, accepts the rest and merges one squashed commit", { timeout: 180_000 }, async (t) => {
    requireBinaries("bosun-app", "bosun", "bosun-mock-model", "bosun-sandbox");
    const home = join(work, "home");
    const repo = join(work, "lines");
    mkdirSync(repo, { recursive: true });
    git(repo, "init", "-q", "-b", "main");
    writeFileSync(join(repo, "lines.txt"), ORIGINAL);
    git(repo, "add", "lines.txt");
    git(repo, "commit", "-q", "-m", "initial commit");

    const mockDir = join(work, "mock");
    mkdirSync(mockDir, { recursive: true });
    const mock = await startMockModel(mockDir, [
      {
        kind: "reply",
        text: "I will spell out two numbers and add notes.",
        tool_calls: [
          { id: "call_w", name: "write_file", arguments: JSON.stringify({ path: "lines.txt", content: EDITED }) },
          { id: "call_n", name: "write_file", arguments: JSON.stringify({ path: "NOTES.md", content: "notes\n" }) },
        ],
      },
      { kind: "reply", text: "Spelled out two numbers." },
      // After "Request changes":
      {
        kind: "reply",
        text: "Using digits there again.",
        tool_calls: [
          {
            id: "call_e",
            name: "edit_file",
            arguments: JSON.stringify({ path: "lines.txt", old_string: "line two\n", new_string: "line 2 (two)\n" }),
          },
        ],
      },
      { kind: "reply", text: "Line 2 now reads 'line 2 (two)'." },
    ]);
    t.after(() => mock.stop());

    // The task runs to completion from the CLI, then is reviewed in the app.
    const run = execFileSync(
      bin("bosun"),
      ["run", "--json", "--mode", "full-auto", "--repo", repo, "--prompt", "Spell out some numbers",
       "--api", "openai-chat", "--base-url", `${mock.url}/v1`, "--model", "mock-model"],
      { env: { ...process.env, BOSUN_HOME: home }, encoding: "utf8" },
    );
    const taskId = JSON.parse(run.split("\n")[0]).task_id;
    const worktree = JSON.parse(run.split("\n")[0]).worktree;

    const driver = await startDriver({ env: { BOSUN_HOME: home } });
    t.after(() => driver.stop());
    const app = await openSession(driver.url, bin("bosun-app"));
    t.after(() => app.close());
    await waitFor("the app", () => app.find(".sidebar"));
    const skip = await app.find("[data-skip-setup]");
    if (skip) await app.click(skip);
    await app.click(await waitFor("the task", () => app.find(`.sidebar [data-task-id="${taskId}"]`)));
    await app.click(await waitFor("the review tab", () => app.find('[data-testid="review-tab"]')));
    await waitFor("two changed files", async () => (await app.count('[data-testid="review-file"]')) === 2);
    await clickIn(app, '[data-testid="review-file"][data-path="lines.txt"]');
    await waitFor("its two hunks", async () => (await app.count('[data-testid="hunk"]')) === 2);
    await screenshot(app, "review-open.png");

    // Reject the second hunk: the worktree no longer has it.
    const second = await app.run("return document.querySelectorAll('[data-testid=hunk]')[1].dataset.hunkId;");
    await app.run("document.querySelectorAll('[data-testid=hunk]')[1].querySelector('[data-testid=hunk-reject]').click();");
    await waitFor("the rejected hunk", () => app.find(`[data-testid="hunk"][data-hunk-id="${second}"][data-state="rejected"]`));
    assert.equal(readFileSync(join(worktree, "lines.txt"), "utf8"), ORIGINAL.replace("line 2\n", "line two\n"));

    // Comment on line 2 and request changes.
    await clickIn(app, '[data-testid="diff-line"][data-new-line="2"] [data-testid="line-number"]');
    await app.press("c");
    const box = await waitFor("the comment box", () => app.find('[data-testid="comment-box"]'));
    await app.type(box, "Keep the digit, add the word in brackets");
    await clickIn(app, '[data-testid="comment-save"]');
    await waitFor("the comment", () => app.find('[data-testid="comment"]'));
    await screenshot(app, "review-comment.png");
    await clickIn(app, '[data-testid="request-changes"]');

    const request = await waitFor("the follow-up request at the mock model", () => recorded(mockDir)[2] ?? null, 60_000);
    const messages = request.body.messages;
    const last = messages.at(-1).content;
    assert.match(last, /lines\.txt line 2/);
    assert.match(last, /line two/, "the quoted code");
    assert.match(last, /Comment: Keep the digit, add the word in brackets/);
    await waitFor("the task completed again", () =>
      app.find(`.sidebar [data-task-id="${taskId}"][data-status="completed"]`), 60_000);
    assert.equal(readFileSync(join(worktree, "lines.txt"), "utf8"), ORIGINAL.replace("line 2\n", "line 2 (two)\n"));

    // Back in the review: the comment is resolved, the new change is up for review.
    await app.click(await waitFor("the review tab", () => app.find('[data-testid="review-tab"]')));
    await waitFor("the resolved comment", async () => {
      await clickIn(app, '[data-testid="review-file"][data-path="lines.txt"]');
      return app.find('[data-testid="comment"][data-resolved="true"]');
    }, 30_000, 500);

    // Accept the rest and merge into main as one squashed commit.
    await clickIn(app, '[data-testid="accept-all"]');
    await waitFor("nothing unreviewed", async () =>
      (await app.count('[data-testid="review-file"][data-state="unreviewed"]')) === 0 &&
      (await app.count('[data-testid="review-file"][data-path="NOTES.md"][data-state="accepted"]')) === 1);
    await clickIn(app, '[data-testid="merge-open"]');
    const message = await waitFor("the merge message", () => app.find('[data-testid="merge-message"]'));
    await app.clear(message);
    await app.type(message, "Spell out line 2");
    await clickIn(app, '[data-testid="merge-confirm"]');
    await waitFor("the merge result", () => app.find('[data-testid="merge-result"][data-branch="main"]'), 30_000);
    await screenshot(app, "review-merged.png");

    assert.equal(git(repo, "log", "--format=%s", "-2"), "Spell out line 2\ninitial commit\n");
    assert.equal(git(repo, "show", "main:lines.txt"), ORIGINAL.replace("line 2\n", "line 2 (two)\n"));
    assert.equal(git(repo, "show", "main:NOTES.md"), "notes\n");
    // main was checked out and clean: its working tree and index follow the merge.
    assert.equal(git(repo, "status", "--porcelain"), "");
    assert.equal(readFileSync(join(repo, "lines.txt"), "utf8"), ORIGINAL.replace("line 2\n", "line 2 (two)\n"));
  });

  it("shows that main moved while the review is open, and Rebase moves the task onto it", { timeout: 180_000 }, async (t) => {
    requireBinaries("bosun-app", "bosun", "bosun-mock-model", "bosun-sandbox");
    const home = join(work, "home-moved");
    const repo = join(work, "moved");
    mkdirSync(repo, { recursive: true });
    git(repo, "init", "-q", "-b", "main");
    writeFileSync(join(repo, "lines.txt"), ORIGINAL);
    git(repo, "add", "lines.txt");
    git(repo, "commit", "-q", "-m", "initial commit");

    const mockDir = join(work, "mock-moved");
    mkdirSync(mockDir, { recursive: true });
    const mock = await startMockModel(mockDir, [
      {
        kind: "reply",
        text: "Spelling out line 2.",
        tool_calls: [{ id: "call_w", name: "write_file", arguments: JSON.stringify({ path: "lines.txt", content: EDITED }) }],
      },
      { kind: "reply", text: "Done." },
    ]);
    t.after(() => mock.stop());
    const env = { ...process.env, BOSUN_HOME: home };
    const run = execFileSync(
      bin("bosun"),
      ["run", "--json", "--mode", "full-auto", "--repo", repo, "--prompt", "Spell out line 2",
       "--api", "openai-chat", "--base-url", `${mock.url}/v1`, "--model", "mock-model"],
      { env, encoding: "utf8" },
    );
    const started = JSON.parse(run.split("\n")[0]);
    const taskId = started.task_id;
    const base = git(repo, "rev-parse", "main").trim();

    const driver = await startDriver({ env: { BOSUN_HOME: home } });
    t.after(() => driver.stop());
    const app = await openSession(driver.url, bin("bosun-app"));
    t.after(() => app.close());
    await waitFor("the app", () => app.find(".sidebar"));
    const skip = await app.find("[data-skip-setup]");
    if (skip) await app.click(skip);
    await app.click(await waitFor("the task", () => app.find(`.sidebar [data-task-id="${taskId}"]`)));
    await app.click(await waitFor("the review tab", () => app.find('[data-testid="review-tab"]')));
    await waitFor("the changed file", async () => (await app.count('[data-testid="review-file"]')) === 1);
    assert.equal(await app.count('[data-testid="base-moved"]'), 0, "main has not moved yet");

    // The user commits to main three times while the review is open (no click, no focus change).
    for (const name of ["one", "two", "three"]) {
      writeFileSync(join(repo, `${name}.txt`), `${name}\n`);
      git(repo, "add", `${name}.txt`);
      git(repo, "commit", "-q", "-m", `user: ${name}`);
    }
    const tip = git(repo, "rev-parse", "main").trim();
    await waitFor("the banner", () => app.find('[data-testid="base-moved"][data-ahead="3"]'), 30_000);
    assert.equal(await app.textOf('[data-testid="base-moved-text"]'), "main moved 3 commits since this task started");
    await screenshot(app, "review-base-moved.png");

    // Rebase: the task's changes move onto main's tip, the banner goes.
    await clickIn(app, '[data-testid="base-moved-rebase"]');
    await waitFor("the rebase", () => app.find('[data-testid="base-rebased"]'), 30_000);
    assert.equal(await app.count('[data-testid="base-moved"]'), 0);
    await screenshot(app, "review-base-rebased.png");
    const review = JSON.parse(execFileSync(bin("bosun"), ["review", taskId, "--json"], { env, encoding: "utf8" }));
    assert.notEqual(review.base_commit, base);
    assert.equal(review.base_commit, tip);
    assert.equal(review.base_moved, undefined);
    assert.deepEqual(review.files.map((f) => f.path), ["lines.txt"], "only the task's own change is up for review");
    for (const name of ["one", "two", "three"]) assert.equal(readFileSync(join(started.worktree, `${name}.txt`), "utf8"), `${name}\n`);
    assert.equal(readFileSync(join(started.worktree, "lines.txt"), "utf8"), EDITED);
  });
});
