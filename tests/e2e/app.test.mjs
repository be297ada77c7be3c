// End to end: the real Bosun app (a custom-protocol build) under Xvfb, driven over WebDriver
// (tauri-driver + WebKitWebDriver), following a task that the `bosun` CLI runs in another process
// against a scripted mock model, on the same BOSUN_HOME.
//
// Needs: DISPLAY (run as `xvfb-run -a npm run e2e`), ui/dist built, and in BOSUN_BIN_DIR (default
// $CARGO_TARGET_DIR/debug): bosun-app (built with --features bosun-app/custom-protocol), bosun,
// bosun-mock-model. Screenshots go to $E2E_ARTIFACTS (default /tmp/bosun-e2e).
import { spawn, execFileSync } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { openSession, startDriver, waitFor } from "./webdriver.mjs";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const targetDir = process.env.CARGO_TARGET_DIR ?? join(repoRoot, "target");
const binDir = resolve(process.env.BOSUN_BIN_DIR ?? join(targetDir, "debug"));
const artifacts = process.env.E2E_ARTIFACTS ?? "/tmp/bosun-e2e";
const bin = (name) => join(binDir, name);

function requireBinaries(...names) {
  assert.ok(process.env.DISPLAY, "no DISPLAY: run the end-to-end tests under `xvfb-run -a npm run e2e`");
  for (const name of names) {
    assert.ok(existsSync(bin(name)), `${bin(name)} is missing: build it first (see the top of tests/e2e/app.test.mjs)`);
  }
}

/** A git repository with one commit, made with the git CLI. */
function fixtureRepo(dir) {
  mkdirSync(dir, { recursive: true });
  const git = (...args) =>
    execFileSync("git", args, {
      cwd: dir,
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: "Fixture",
        GIT_AUTHOR_EMAIL: "fixture@example.com",
        GIT_COMMITTER_NAME: "Fixture",
        GIT_COMMITTER_EMAIL: "fixture@example.com",
      },
    });
  git("init", "-q", "-b", "main");
  writeFileSync(join(dir, "README.md"), "# greeter\n\nSays hello.\n");
  git("add", "README.md");
  git("commit", "-q", "-m", "initial commit");
  return dir;
}

/** Starts the scripted mock model; resolves with its base URL once it listens. */
async function startMockModel(dir, script) {
  const scriptPath = join(dir, "script.json");
  writeFileSync(scriptPath, JSON.stringify(script));
  const child = spawn(bin("bosun-mock-model"), ["--script", scriptPath, "--record", join(dir, "rec.jsonl")], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const lines = createInterface({ input: child.stdout });
  const [first] = await once(lines, "line");
  const match = /^listening (http:\/\/127\.0\.0\.1:\d+)/.exec(first);
  assert.ok(match, `bosun-mock-model said "${first}" instead of "listening http://127.0.0.1:PORT"`);
  return { url: match[1], stop: () => child.kill("SIGTERM") };
}

async function screenshot(session, name) {
  mkdirSync(artifacts, { recursive: true });
  await sleep(500); // WebKit may still show the previous frame right after a DOM change
  const file = join(artifacts, name);
  writeFileSync(file, await session.screenshot());
  return file;
}

describe("the Bosun app", () => {
  let work;
  before(() => {
    work = mkdtempSync(join(tmpdir(), "bosun-e2e-"));
  });
  after(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("shows an empty journal with a hint on how to start a task", { timeout: 60_000 }, async (t) => {
    requireBinaries("bosun-app");
    const home = join(work, "empty-home");
    const driver = await startDriver({ env: { BOSUN_HOME: home } });
    t.after(() => driver.stop());
    const app = await openSession(driver.url, bin("bosun-app"));
    t.after(() => app.close());

    const empty = await waitFor("the empty sidebar", () => app.textOf(".sidebar .empty"));
    assert.match(empty, /No tasks yet/);
    assert.match(await app.textOf("main"), /bosun run/);
    assert.equal(await app.count(".sidebar [data-task-id]"), 0);
    assert.equal(await app.run("return document.title;"), "Bosun");
    await screenshot(app, "empty.png");
  });

  it("follows a task the CLI runs in another process, live, to its completion", { timeout: 120_000 }, async (t) => {
    requireBinaries("bosun-app", "bosun", "bosun-mock-model");
    const home = join(work, "home");
    const repo = fixtureRepo(join(work, "greeter"));
    const mock = await startMockModel(work, [
      {
        kind: "reply",
        text: "I will write the greeting to hello.txt.",
        tool_calls: [
          {
            id: "call_1",
            name: "run_command",
            arguments: JSON.stringify({ command: "printf 'hello\\n' | tee hello.txt" }),
          },
        ],
        usage: { input_tokens: 1200, output_tokens: 40 },
        chunk_delay_ms: 50,
      },
      {
        kind: "reply",
        text: "Wrote hello.txt with the greeting.",
        usage: { input_tokens: 1400, output_tokens: 20 },
        // Streams for a few seconds, so the app is seen following a task that is still running.
        chunk_delay_ms: 300,
      },
    ]);
    t.after(() => mock.stop());

    const driver = await startDriver({ env: { BOSUN_HOME: home } });
    t.after(() => driver.stop());
    const app = await openSession(driver.url, bin("bosun-app"));
    t.after(() => app.close());
    await waitFor("the app to load", () => app.find(".sidebar"));

    // The CLI runs the task while the app is open.
    const cli = spawn(
      bin("bosun"),
      [
        "run", "--json", "--repo", repo, "--prompt", "Write hello to hello.txt",
        "--api", "openai-chat", "--base-url", `${mock.url}/v1`, "--model", "mock-model",
        // Nobody is at the CLI's stdin to answer an approval: approve what the policy asks about.
        "--yes",
      ],
      { env: { ...process.env, BOSUN_HOME: home }, stdio: ["ignore", "pipe", "pipe"] },
    );
    let stdout = "";
    let stderr = "";
    cli.stdout.on("data", (d) => (stdout += d));
    cli.stderr.on("data", (d) => (stderr += d));
    const exited = once(cli, "exit");
    t.after(() => cli.exitCode === null && cli.kill("SIGTERM"));

    // It shows up in the sidebar while it runs.
    const row = await waitFor("the task in the sidebar", () => app.find(".sidebar [data-task-id]"));
    await app.click(row);
    await waitFor("the prompt in the timeline", async () =>
      (await app.textOf('[data-role="user"]'))?.includes("Write hello to hello.txt"),
    );

    // The command's output shows up while the CLI is still streaming the model's last answer.
    await waitFor("the command output in the timeline", async () =>
      /hello/.test((await app.textOf('[data-tool="run_command"] [role="log"]')) ?? ""),
    );
    assert.equal(cli.exitCode, null, "the task finished before the app showed its command output: not followed live");
    assert.equal(await app.run("return document.querySelector('.sidebar [data-task-id]').dataset.status;"), "running");
    await screenshot(app, "task-running.png");

    const [code] = await exited;
    assert.equal(code, 0, `bosun run failed:\n${stderr}`);
    const events = stdout.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));
    const taskId = events[0].task_id;
    assert.equal(await app.run("return document.querySelector('.sidebar [data-task-id]').dataset.taskId;"), taskId);

    // The timeline ends with the completed status; everything the CLI printed is there.
    await waitFor("the completed status", () => app.find('[data-kind="finished"] [data-status="completed"]'));
    assert.match(await app.textOf('[data-role="assistant"]'), /I will write the greeting to hello\.txt\./);
    const assistantTexts = await app.run(
      "return [...document.querySelectorAll('[data-role=assistant]')].map(e => e.textContent);",
    );
    assert.ok(assistantTexts.some((s) => s.includes("Wrote hello.txt with the greeting.")), assistantTexts.join(" | "));

    const tool = '[data-tool="run_command"]';
    assert.equal(await app.run(`return document.querySelector('${tool}').dataset.status;`), "success");
    assert.match(await app.textOf(`${tool} .summary`), /printf 'hello\\n' \| tee hello\.txt/);
    assert.match(await app.textOf(`${tool} [role="log"]`), /hello/);
    const approval = events.find((e) => e.type === "approval_resolved" && e.call_id === "call_1");
    if (approval) {
      assert.match(await app.textOf(`${tool} [data-approval="${approval.decision}"]`), /Approved/);
    }
    const checkpoints = events.filter((e) => e.type === "checkpoint_created");
    assert.ok(checkpoints.length >= 1, "the CLI made no checkpoint for the command that wrote hello.txt");
    assert.match(await app.textOf("[data-checkpoint]"), /Checkpoint 1/);

    const cost = await app.textOf('[data-counter="cost"]');
    const lastUsage = events.filter((e) => e.type === "usage").at(-1);
    assert.ok(lastUsage, "the CLI reported no usage");
    assert.match(cost, lastUsage.priced ? /\$\d/ : /cost unknown|\$\d+\.\d+\+/);
    const tokens = await app.textOf('[data-counter="tokens"]');
    assert.match(tokens.replace(/\s+/g, " "), /in 2\.6k out 60/);
    assert.match(await app.textOf(`.sidebar [data-task-id="${taskId}"]`), /greeter/);
    assert.equal(await app.count('[data-kind="tool"]'), events.filter((e) => e.type === "tool_call_begin").length);

    const shot = await screenshot(app, "task-completed.png");
    t.diagnostic(`screenshot: ${shot}`);
  });
});
