// End to end: the repository map's files in a task's context line, in the real app (custom-protocol
// build, Xvfb, WebDriver). The CLI runs a task against the scripted mock model on a small Python
// repository; the app follows it, and its timeline shows one line ("Context: map of 3 files, …
// tokens") that expands to each file and why it is there, the file defining the name the prompt
// gives first.
//
// Needs what tests/e2e/app.test.mjs needs: DISPLAY, ui/dist, and bosun-app, bosun and
// bosun-mock-model in BOSUN_BIN_DIR (default $CARGO_TARGET_DIR/debug).
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { openSession, startDriver, waitFor } from "./webdriver.mjs";
import { bin, git, recorded, requireBinaries, screenshot, startMockModel } from "./support.mjs";

function shopRepo(dir) {
  const files = {
    "shop/pricing.py": "TAX = 0.2\n\n\ndef calc_total(lines):\n    return round(sum(lines), 2)\n",
    "shop/invoice.py":
      "from shop.pricing import calc_total\n\n\nclass Invoice:\n    def total(self):\n        return calc_total(self.lines)\n",
    "shop/report.py": "from shop.pricing import calc_total\n\n\ndef report(days):\n    return [calc_total(d) for d in days]\n",
  };
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
  git(dir, "init", "-q", "-b", "main");
  git(dir, "add", "-A");
  git(dir, "commit", "-q", "-m", "shop");
  return dir;
}

describe("the task's context line", () => {
  let work;
  before(() => {
    work = mkdtempSync(join(tmpdir(), "bosun-e2e-context-"));
  });
  after(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("shows the map's files and why each went into the request, in light and dark", { timeout: 120_000 }, async (t) => {
    requireBinaries("bosun-app", "bosun", "bosun-mock-model");
    const home = join(work, "home");
    const repo = shopRepo(join(work, "shop"));
    const mock = await startMockModel(work, [
      { kind: "reply", text: "calc_total rounds the sum to cents.", usage: { input_tokens: 900, output_tokens: 12 } },
    ]);
    t.after(() => mock.stop());
    const run = spawnSync(
      bin("bosun"),
      ["run", "--json", "--repo", repo, "--prompt", "Why does calc_total round?", "--api", "openai-chat",
        "--base-url", `${mock.url}/v1`, "--model", "mock-model"],
      { env: { ...process.env, BOSUN_HOME: home }, encoding: "utf8" },
    );
    assert.ok(run.status !== null, run.stderr);
    const events = run.stdout.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));
    const assembled = events.find((e) => e.type === "context_assembled");
    assert.ok(assembled, `no context_assembled event:\n${run.stderr}`);
    const system = recorded(work)[0].body.messages.find((m) => m.role === "system").content;
    // The layered context: the file the prompt names whole, its neighbours' definitions, its
    // recent changes, then the map.
    assert.match(system, /# Task files\n## shop\/pricing\.py \(defines `calc_total`, named in the prompt\)\n```\nTAX = 0\.2\n/);
    assert.match(system, /# Recent changes to the task files\n[^]*\+def calc_total\(lines\):/);
    assert.match(system, /# Repository map\n[^]*shop\/invoice\.py:\n {4}4│ class Invoice:/);

    const driver = await startDriver({ env: { BOSUN_HOME: home } });
    t.after(() => driver.stop());
    const app = await openSession(driver.url, bin("bosun-app"));
    t.after(() => app.close());
    await app.click(await waitFor("the task in the sidebar", () => app.find(".sidebar [data-task-id]")));
    const line = '[data-testid="timeline-context"]';
    await waitFor("the context line", () => app.find(line));
    const summary = (await app.textOf(`${line} summary`)).replace(/\s+/g, " ").trim();
    assert.match(summary, /^◇ Context: map of 2 files, 1 file, 1 file list, 2 nearby files, 1 recent change, \d+ tokens of \d\.\dk$/);
    assert.ok(summary.includes(`${assembled.total_tokens} tokens`), `${summary} vs ${assembled.total_tokens}`);
    // Folded, it is one line; opened, it lists each file and why.
    assert.equal(await app.count(`${line}[open]`), 0);
    await app.click(await app.find(`${line} summary`));
    await waitFor("the context line to open", () => app.find(`${line}[open]`));
    const rows = await app.run(
      "return [...document.querySelectorAll(arguments[0])].map(li => li.textContent.replace(/\\s+/g, ' ').trim());",
      `${line} li`,
    );
    assert.equal(rows.length, 7, rows.join(" | "));
    assert.match(rows[0], /^file list the repository's files, a few levels deep \d+$/);
    assert.match(rows[1], /^shop\/pricing\.py defines `calc_total`, named in the prompt \d+$/);
    assert.ok(rows.some((r) => r.startsWith("shop/invoice.py next to a task file")), rows.join(" | "));
    assert.ok(rows.some((r) => r.startsWith("shop/invoice.py its path or names share the prompt's words")), rows.join(" | "));
    t.diagnostic(`light: ${await screenshot(app, "context-line-light.png")}`);
    await app.click(await waitFor("the Settings button", () => app.find("[data-settings-button]")));
    await app.run(
      "const el = document.querySelector('[data-settings] select[name=\"theme\"]'); el.value = 'dark'; el.dispatchEvent(new Event('change', {bubbles: true}));",
    );
    await waitFor("the dark theme", () => app.run("return document.documentElement.dataset.theme === 'dark';"));
    await app.click(await app.find(".sidebar [data-task-id]"));
    await waitFor("the context line again", () => app.find(line));
    t.diagnostic(`dark: ${await screenshot(app, "context-line-dark.png")}`);
  });
});

describe("a compaction in the timeline", () => {
  let work;
  before(() => {
    work = mkdtempSync(join(tmpdir(), "bosun-e2e-compaction-"));
  });
  after(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("shows what was masked to keep the task within the model's window", { timeout: 120_000 }, async (t) => {
    requireBinaries("bosun-app", "bosun", "bosun-mock-model");
    const home = join(work, "home");
    const repo = join(work, "logs");
    mkdirSync(repo, { recursive: true });
    const filler = `${"z".repeat(59)}\n`.repeat(200);
    for (let i = 0; i < 8; i++) writeFileSync(join(repo, `log${i}.txt`), `log ${i}\n${filler}`);
    git(repo, "init", "-q", "-b", "main");
    git(repo, "add", "-A");
    git(repo, "commit", "-q", "-m", "logs");
    const script = [];
    for (let i = 0; i < 8; i++) {
      script.push({
        kind: "reply",
        text: "",
        tool_calls: [{ id: `call_${i}`, name: "read_file", arguments: JSON.stringify({ path: `log${i}.txt` }) }],
      });
    }
    script.push({ kind: "reply", text: "Read all eight logs." });
    const mock = await startMockModel(work, script, { window: 12000 });
    t.after(() => mock.stop());
    mkdirSync(home, { recursive: true });
    writeFileSync(
      join(home, "config.toml"),
      `[providers.mock]\napi = "openai-chat"\nbase_url = "${mock.url}/v1"\nmodel = "m"\nprofile = { native_tools = true, tool_format = "native", edit_format = "tools", context_window = 12000 }\n`,
    );
    const run = spawnSync(
      bin("bosun"),
      ["run", "--json", "--repo", repo, "--prompt", "Read the eight logs", "--provider", "mock", "--no-checks"],
      { env: { ...process.env, BOSUN_HOME: home }, encoding: "utf8" },
    );
    const events = run.stdout.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));
    const compacted = events.find((e) => e.type === "context_compacted");
    assert.ok(compacted, `no compaction:\n${run.stderr}\n${run.stdout.slice(-2000)}`);

    const driver = await startDriver({ env: { BOSUN_HOME: home } });
    t.after(() => driver.stop());
    const app = await openSession(driver.url, bin("bosun-app"));
    t.after(() => app.close());
    await app.click(await waitFor("the task in the sidebar", () => app.find(".sidebar [data-task-id]")));
    const line = '[data-testid="timeline-compacted"]';
    await waitFor("the compaction line", () => app.find(line));
    const summary = (await app.textOf(`${line} summary`)).replace(/\s+/g, " ").trim();
    assert.match(summary, /^⇣ Context compacted: [\d.]+k? → [\d.]+k? tokens of a 12k window — \d+ tool outputs? masked$/);
    await app.run("document.querySelector(arguments[0]).scrollIntoView({block: 'center'});", line);
    await app.click(await app.find(`${line} summary`));
    await waitFor("the compaction to open", () => app.find(`${line}[open]`));
    // The first compaction (each later one masks what came since).
    const masked = await app.run(
      "return [...document.querySelector(arguments[0]).querySelectorAll('[data-list=masked] li')].map(li => li.textContent.trim());",
      line,
    );
    assert.deepEqual(masked, compacted.masked);
    assert.ok(masked[0].startsWith("read_file log0.txt"), masked.join(" | "));
    t.diagnostic(`compaction: ${await screenshot(app, "compaction-line.png")}`);
  });

  it("pins the prompt of a running task from its timeline, and the task journals it", { timeout: 120_000 }, async (t) => {
    requireBinaries("bosun-app", "bosun", "bosun-mock-model");
    const home = join(work, "home-pin");
    const repo = shopRepo(join(work, "shop-pin"));
    mkdirSync(home, { recursive: true });
    mkdirSync(join(work, "mock-pin"), { recursive: true });
    const mock = await startMockModel(join(work, "mock-pin"), [
      {
        kind: "reply",
        text: "I will create a.txt.",
        tool_calls: [{ id: "call_p", name: "run_command", arguments: JSON.stringify({ command: "touch a.txt" }) }],
      },
      { kind: "reply", text: "Created a.txt." },
    ]);
    t.after(() => mock.stop());
    const driver = await startDriver({ env: { BOSUN_HOME: home } });
    t.after(() => driver.stop());
    const app = await openSession(driver.url, bin("bosun-app"));
    t.after(() => app.close());
    await app.click(await waitFor("the New task button", () => app.find("[data-new-task-button]")));
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
    await fill("base_url", `${mock.url}/v1`);
    await fill("model", "mock-model");
    await fill("api_key_env", "");
    await app.type(await field("prompt"), "Create a.txt and never touch shop/");
    await app.submitKeys();
    // While it waits for the approval, the prompt's pin button pins it.
    await waitFor("the approval card", () => app.find("[data-approval-card]"));
    const taskId = await app.run("return document.querySelector('.sidebar [data-task-id]').dataset.taskId;");
    const pin = '[data-pin^="message:Create a.txt"]';
    await waitFor("the prompt's pin button", () => app.find(pin));
    await app.run("document.querySelector(arguments[0]).click();", pin);
    await app.click(await app.find('[data-approval-card] [data-answer="approve_once"]'));
    const line = await waitFor("the pinned line", () => app.find('[data-testid="timeline-pinned"]')).catch(async (err) => {
      t.diagnostic(`no pin: ${await screenshot(app, "pinned-message-missing.png")}`);
      t.diagnostic(await app.run("return document.querySelector('.timeline')?.innerText ?? '';"));
      throw err;
    });
    assert.equal(
      (await app.text(line)).replace(/\s+/g, " ").trim(),
      "Pinned your message “Create a.txt and never touch shop/”: compaction never drops it",
    );
    await waitFor("the pressed pin", async () => (await app.run("return document.querySelector(arguments[0])?.getAttribute('aria-pressed');", pin)) === "true");
    t.diagnostic(`pinned: ${await screenshot(app, "pinned-message.png")}`);
    await waitFor("the task to finish", () => app.find('[data-kind="finished"]'));
    // The journal has it, as the CLI shows.
    const file = join(work, "pin-export.json");
    const show = spawnSync(bin("bosun"), ["export", taskId, "--json", file], { env: { ...process.env, BOSUN_HOME: home }, encoding: "utf8" });
    assert.equal(show.status, 0, show.stderr);
    const events = JSON.parse(readFileSync(file, "utf8"));
    const pinned = (Array.isArray(events) ? events : events.events).filter((e) => e.type === "context_pinned");
    assert.deepEqual(
      pinned.map((e) => [e.target, e.pinned, e.by]),
      [[{ kind: "message", text: "Create a.txt and never touch shop/" }, true, "app"]],
    );
  });
});
