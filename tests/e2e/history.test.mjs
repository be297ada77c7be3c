// End to end: the History view in the real app (custom-protocol build, Xvfb, WebDriver). A task
// runs from the CLI against the scripted mock model; in the app, a search for a word its command
// printed finds it and opens it at that event; then a fork from its checkpoint 1 runs as a new
// task.
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




describe("history in the app", () => {
  let work;
  before(() => {
    work = mkdtempSync(join(tmpdir(), "bosun-e2e-history-"));
  });
  after(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("finds a task by a word of its command output, opens it at that event, and forks it from checkpoint 1", { timeout: 180_000 }, async (t) => {
    requireBinaries("bosun-app", "bosun", "bosun-mock-model", "bosun-sandbox");
    const home = join(work, "home");
    const repo = join(work, "notes");
    mkdirSync(repo, { recursive: true });
    git(repo, "init", "-q", "-b", "main");
    writeFileSync(join(repo, "README.md"), "notes\n");
    git(repo, "add", "-A");
    git(repo, "commit", "-q", "-m", "initial commit");

    const mockDir = join(work, "mock");
    mkdirSync(mockDir, { recursive: true });
    const mock = await startMockModel(mockDir, [
      {
        kind: "reply",
        tool_calls: [{ id: "call_a", name: "write_file", arguments: JSON.stringify({ path: "a.txt", content: "a\n" }) }],
      },
      {
        kind: "reply",
        tool_calls: [{ id: "call_echo", name: "run_command", arguments: JSON.stringify({ command: "echo the zebracorn grazes && echo b > b.txt" }) }],
      },
      { kind: "reply", text: "Wrote a.txt and b.txt." },
      // The fork, from checkpoint 1 (a.txt only).
      {
        kind: "reply",
        tool_calls: [{ id: "call_c", name: "write_file", arguments: JSON.stringify({ path: "c.txt", content: "c\n" }) }],
      },
      { kind: "reply", text: "Forked: wrote c.txt." },
    ]);
    t.after(() => mock.stop());

    const run = execFileSync(
      bin("bosun"),
      ["run", "--json", "--mode", "full-auto", "--no-checks", "--repo", repo, "--prompt", "Write some notes",
       "--api", "openai-chat", "--base-url", `${mock.url}/v1`, "--model", "mock-model"],
      { env: { ...process.env, BOSUN_HOME: home }, encoding: "utf8" },
    );
    const events = run.split("\n").filter(Boolean).map((l) => JSON.parse(l));
    const taskId = events[0].task_id;
    const echoEnd = events.find((e) => e.type === "tool_call_end" && e.call_id === "call_echo");
    assert.ok(echoEnd, "the command ran");

    const driver = await startDriver({ env: { BOSUN_HOME: home } });
    t.after(() => driver.stop());
    const app = await openSession(driver.url, bin("bosun-app"));
    t.after(() => app.close());
    await waitFor("the app", () => app.find(".sidebar"));
    const skip = await app.find("[data-skip-setup]");
    if (skip) await app.click(skip);

    // Search the history for a word the command printed.
    await app.click(await waitFor("the History button", () => app.find('[data-testid="history-button"]')));
    const box = await waitFor("the search box", () => app.find('[data-testid="history-search"]'));
    await app.type(box, "zebracorn");
    // (The list shows every task before the search answers: wait for the matched snippet.)
    const marked = await waitFor("the task found, its snippet marked", () => app.run(
      "const r = document.querySelector(arguments[0]); const m = r && r.querySelector('[data-testid=history-snippet] mark'); return m ? m.textContent : null;",
      `[data-testid="history-row"][data-task-id="${taskId}"]`,
    ), 20_000);
    const row = await app.find(`[data-testid="history-row"][data-task-id="${taskId}"]`);
    assert.equal(marked?.toLowerCase(), "zebracorn");
    const seq = Number(await app.run("return document.querySelector(arguments[0]).dataset.seq;", `[data-testid="history-row"][data-task-id="${taskId}"]`));
    assert.ok(seq > 0, "the hit names its event");
    await screenshot(app, "history-search.png");

    // Opening it shows the task at that event.
    await app.click(row);
    const focused = await waitFor("the focused event", () => app.run("const li = document.querySelector('li[data-focused]'); return li ? Number(li.dataset.seq) : null;"), 20_000);
    assert.ok(focused <= seq, `the focused item (${focused}) opens at the hit (${seq})`);
    const focusedText = await app.run("return document.querySelector('li[data-focused]').textContent;");
    assert.match(focusedText, /zebracorn|echo/);
    await screenshot(app, "history-opened.png");

    // Fork it from checkpoint 1: a new task with a.txt only, then its own c.txt.
    await clickIn(app, '[data-testid="fork-button"]');
    const select = await waitFor("the fork dialog", () => app.find('[data-testid="fork-checkpoint"]'));
    await app.run("const s = document.querySelector('[data-testid=fork-checkpoint]'); s.value = '1'; s.dispatchEvent(new Event('change', {bubbles: true}));");
    void select;
    const prompt = await waitFor("the fork prompt", () => app.find('[data-testid="fork-prompt"]'));
    await app.type(prompt, "Now write c.txt");
    await clickIn(app, '[data-testid="fork-confirm"]');
    const forkRequest = await waitFor("the fork's first model request", () => recorded(mockDir)[3] ?? null, 60_000);
    const sent = JSON.stringify(forkRequest.body.messages);
    assert.match(sent, /Write some notes/, "the conversation before the fork");
    assert.doesNotMatch(sent, /call_echo/, "cut at checkpoint 1");
    assert.equal(forkRequest.body.messages.at(-1).content, "Now write c.txt");
    const forkId = await waitFor("the fork in the sidebar", () =>
      app.run("const el = [...document.querySelectorAll('.sidebar [data-task-id]')].find(e => e.dataset.taskId !== arguments[0] && e.dataset.status === 'completed'); return el ? el.dataset.taskId : null;", taskId), 60_000);
    await screenshot(app, "history-fork.png");
    const tasks = JSON.parse(execFileSync(bin("bosun"), ["tasks", "--json"], { env: { ...process.env, BOSUN_HOME: home }, encoding: "utf8" }));
    const fork = tasks.find((r) => r.id === forkId);
    assert.ok(fork, "the fork is in the journal");
    assert.ok(existsSync(join(fork.worktree, "a.txt")) && existsSync(join(fork.worktree, "c.txt")));
    assert.ok(!existsSync(join(fork.worktree, "b.txt")), "checkpoint 2's b.txt is not in the fork");
  });
});
