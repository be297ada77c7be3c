// End to end: the sub-agent tree in the real app (custom-protocol build, Xvfb, WebDriver). A task
// runs from the CLI against the scripted mock model while the app watches its journal: the
// parent's first reply delegates "write notes.txt" (scope notes.txt), the child — slow, so the
// window shows it at work — writes the file and answers, then the parent answers. The tree shows
// the child running, then completed with its file; clicking it opens the child's own timeline,
// and "Back" returns to the parent. The Costs view shows the requests by role, and opens the
// child from its table by task.
//
// Needs what tests/e2e/app.test.mjs needs: DISPLAY, ui/dist, and bosun-app, bosun,
// bosun-mock-model, bosun-sandbox in BOSUN_BIN_DIR (default $CARGO_TARGET_DIR/debug).
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { openSession, startDriver, waitFor } from "./webdriver.mjs";
import { bin, clickIn, git, recorded, requireBinaries, screenshot, startMockModel } from "./support.mjs";

const PROMPT = "Start a notes file";
const BRIEF = "write notes.txt";
const NOTES = "Notes\n=====\n\nThe first note.\n";

/** The tree's nodes as the window shows them: child id, status, brief, and the figures line. */
const nodes = (app) =>
  app.run(`return [...document.querySelectorAll('[data-testid=subagent-node]')].map((n) => ({
    id: n.dataset.child,
    status: n.dataset.status,
    brief: n.querySelector('[data-testid=subagent-brief]')?.textContent ?? null,
    activity: n.querySelector('[data-testid=subagent-activity]')?.textContent ?? null,
    files: n.querySelector('[data-testid=subagent-files]')?.textContent ?? null,
    paths: n.querySelector('[data-testid=subagent-files]')?.getAttribute('title') ?? null,
    merge: n.querySelector('[data-testid=subagent-merge]')?.dataset.merge ?? null,
    text: n.textContent.replace(/\\s+/g, ' ').trim(),
  }));`);

describe("sub-agents in the app", () => {
  let work;
  before(() => {
    work = mkdtempSync(join(tmpdir(), "bosun-e2e-subagents-"));
  });
  after(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("shows the sub-agent tree live, then the child's own timeline one click away", { timeout: 240_000 }, async (t) => {
    requireBinaries("bosun-app", "bosun", "bosun-mock-model", "bosun-sandbox");
    const home = join(work, "home");
    const repo = join(work, "notes");
    mkdirSync(repo, { recursive: true });
    git(repo, "init", "-q", "-b", "main");
    writeFileSync(join(repo, "README.md"), "# notes\n");
    git(repo, "add", "-A");
    git(repo, "commit", "-q", "-m", "initial commit");

    // The parent's conversation, and the child's (its first user message holds the brief).
    const mockDir = join(work, "mock");
    mkdirSync(mockDir, { recursive: true });
    const mock = await startMockModel(
      mockDir,
      [
        { kind: "reply", text: "A sub-agent will write it.", tool_calls: [{ id: "call_d", name: "delegate", arguments: JSON.stringify({ brief: BRIEF, scope: ["notes.txt"] }) }] },
        { kind: "reply", text: "The sub-agent wrote notes.txt." },
      ],
      {
        routes: {
          // Slowly: the window has time to show the child at work.
          [BRIEF]: [
            { kind: "reply", text: "Writing notes.txt now.", chunk_delay_ms: 400, tool_calls: [{ id: "call_w", name: "write_file", arguments: JSON.stringify({ path: "notes.txt", content: NOTES }) }] },
            { kind: "reply", text: "Wrote notes.txt with the first note.", chunk_delay_ms: 300 },
          ],
        },
      },
    );
    t.after(() => mock.stop());

    const driver = await startDriver({ env: { BOSUN_HOME: home } });
    t.after(() => driver.stop());
    const app = await openSession(driver.url, bin("bosun-app"));
    t.after(() => app.close());
    await waitFor("the app", () => app.find(".sidebar"));
    const skip = await app.find("[data-skip-setup]");
    if (skip) await app.click(skip);

    const run = spawn(
      bin("bosun"),
      ["run", "--json", "--mode", "full-auto", "--repo", repo, "--prompt", PROMPT,
       "--api", "openai-chat", "--base-url", `${mock.url}/v1`, "--model", "mock-model"],
      { env: { ...process.env, BOSUN_HOME: home }, stdio: ["ignore", "pipe", "inherit"] },
    );
    let out = "";
    run.stdout.on("data", (d) => (out += d));
    const exited = new Promise((resolve) => run.on("exit", resolve));
    t.after(() => run.kill("SIGTERM"));
    const taskId = await waitFor("the task id", () => (out.includes("\n") ? JSON.parse(out.split("\n")[0]).task_id : null), 30_000);
    await app.click(await waitFor("the task", () => app.find(`.sidebar [data-task-id="${taskId}"]`), 30_000));

    // The child at work: running, with what it does now, its role and model.
    const running = await waitFor("the child running", async () => (await nodes(app)).find((n) => n.status === "running"), 60_000, 100);
    assert.equal(running.brief, BRIEF);
    assert.ok(running.activity, "a running child says what it does");
    assert.match(running.text, /worker · mock-model/);
    await screenshot(app, "subagents-running.png");
    // Only the user's task is in the sidebar: the child is in the tree, not the list.
    assert.equal(await app.count(`.sidebar [data-task-id="${running.id}"]`), 0);

    // Then done: completed, with its file applied to the parent's worktree.
    const done = await waitFor("the child completed", async () => (await nodes(app)).find((n) => n.id === running.id && n.status === "completed"), 60_000, 100);
    assert.equal(done.files, "1 file");
    assert.equal(done.paths, "notes.txt");
    assert.equal(done.merge, "applied");
    assert.match(done.text, /\d+ steps? /);
    assert.equal(await exited, 0, "bosun run exits 0: completed");
    // The timeline has a line for its start and one for its end.
    await waitFor("the timeline's sub-agent lines", async () =>
      (await app.run("return [...document.querySelectorAll('[data-testid=timeline-subagent]')].map(e => e.dataset.phase).join();")) === "started,finished", 30_000);
    assert.equal(await app.count('[data-testid="subagent-counts"]'), 1);
    assert.match(await app.textOf('[data-testid="subagent-counts"]'), /1 of 1 done/);
    await screenshot(app, "subagents-completed.png");

    // The child's first request held its brief, not the parent's prompt.
    const requests = recorded(mockDir);
    assert.equal(requests.length, 4, "two requests each: the parent's and the child's");
    const childFirst = JSON.stringify(requests[1].body.messages);
    assert.ok(childFirst.includes(BRIEF), "the child's first request holds its brief");
    assert.ok(!childFirst.includes(PROMPT), "and not the parent's prompt");

    // One click: the child's own timeline, with its write_file call; then back to the parent.
    await clickIn(app, `[data-testid="subagent-node"][data-child="${running.id}"] button.open`);
    await waitFor("the child's timeline", () => app.find(`section.pane[data-task-id="${running.id}"]`), 30_000);
    await waitFor("its write_file call", () => app.find('.pane [data-tool="write_file"]'), 30_000);
    assert.match(await app.textOf(".pane"), /notes\.txt/);
    assert.match(await app.textOf('[data-testid="subagent-back"]'), new RegExp(PROMPT));
    // It answers to its parent: no follow-up box of its own.
    await waitFor("the note instead of a follow-up box", () => app.find('[data-testid="subagent-no-followup"]'), 30_000);
    await screenshot(app, "subagents-child-timeline.png");
    await clickIn(app, '[data-testid="subagent-back"]');
    await waitFor("the parent again", () => app.find(`section.pane[data-task-id="${taskId}"] [data-testid="subagent-tree"]`), 30_000);

    // The Costs view attributes the requests to roles: the user's task and its worker.
    await clickIn(app, '[data-testid="costs-button"]');
    const roles = await waitFor("the table by role", async () => {
      const rows = await app.run(`return [...document.querySelectorAll('[data-testid="cost-table-role"] [data-testid="cost-row"]')]
        .map((r) => [r.dataset.key, r.querySelector('[data-testid="cost-row-name"]').textContent.trim(), r.lastElementChild.textContent.trim()]);`);
      return rows.length > 0 ? rows : null;
    }, 30_000);
    assert.deepEqual(roles, [
      ["main", "main (your tasks)", "2"],
      ["worker", "worker (sub-agents)", "2"],
    ]);
    await screenshot(app, "subagents-costs.png");
    // The child is a task of the table by task too; it opens although the sidebar does not list it.
    await clickIn(app, `[data-testid="cost-table-task"] [data-testid="cost-row"][data-key="${running.id}"]`);
    await waitFor("the child's timeline from the Costs view", () => app.find(`section.pane[data-task-id="${running.id}"]`), 30_000);
    await clickIn(app, '[data-testid="subagent-back"]');
    await waitFor("its parent", () => app.find(`section.pane[data-task-id="${taskId}"]`), 30_000);
  });
});
