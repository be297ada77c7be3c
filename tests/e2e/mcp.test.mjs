// End to end: MCP servers in the real app (custom-protocol build, Xvfb, WebDriver), with the real
// `@modelcontextprotocol/server-everything` (a pinned npm devDependency) declared in
// $BOSUN_HOME/config.toml and the scripted mock model as the provider.
// (a) Settings lists the server running with its tools; its switch turns it off: it shows
//     disabled, and config.toml says `enabled = false`. Then Codex's server (CODEX_HOME) is
//     imported from Settings: shown first, then written to config.toml and listed running.
// (b) A task in full-auto whose model calls `mcp__everything__echo`: the call still asks (MCP tools
//     are asked in every mode), the approval card names it, and once approved the server's answer
//     shows in the timeline like any tool call's output.
//
// Needs what tests/e2e/app.test.mjs needs: DISPLAY, ui/dist, and bosun-app, bosun-mock-model and
// bosun-sandbox (the trampoline stdio servers are confined with) in BOSUN_BIN_DIR.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { openSession, startDriver, waitFor } from "./webdriver.mjs";
import { bin, clickIn, git, repoRoot, requireBinaries, screenshot, startMockModel } from "./support.mjs";

const everythingJs = join(repoRoot, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");

function makeRepo(dir) {
  mkdirSync(dir, { recursive: true });
  git(dir, "init", "-q", "-b", "main");
  writeFileSync(join(dir, "README.md"), "# echo\n");
  git(dir, "add", "-A");
  git(dir, "commit", "-q", "-m", "initial commit");
  return dir;
}

function writeConfig(home, url) {
  mkdirSync(home, { recursive: true });
  assert.ok(existsSync(everythingJs), `${everythingJs} is missing: run \`npm ci\``);
  writeFileSync(
    join(home, "config.toml"),
    `default_provider = "mock"\n\n[providers.mock]\napi = "openai-chat"\nbase_url = "${url}/v1"\nmodel = "mock-model"\n\n` +
      `# the reference server\n[mcp_servers.everything]\ncommand = "node"\nargs = [${JSON.stringify(realpathSync(everythingJs))}, "stdio"]\n`,
  );
}

async function openApp(t, home, env = {}) {
  const driver = await startDriver({ env: { BOSUN_HOME: home, ...env } });
  t.after(() => driver.stop());
  const app = await openSession(driver.url, bin("bosun-app"));
  t.after(() => app.close());
  await waitFor("the app", () => app.find(".sidebar"));
  return app;
}

const server = '[data-mcp-server="everything"]';

describe("MCP servers in the app", () => {
  let work;
  before(() => {
    work = mkdtempSync(join(tmpdir(), "bosun-e2e-mcp-"));
  });
  after(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("lists the server running with its tools in Settings, and its switch turns it off in config.toml", { timeout: 120_000 }, async (t) => {
    requireBinaries("bosun-app", "bosun-mock-model", "bosun-sandbox");
    const dir = join(work, "a");
    mkdirSync(join(dir, "mock"), { recursive: true });
    const mock = await startMockModel(join(dir, "mock"), []);
    t.after(() => mock.stop());
    const home = join(dir, "home");
    writeConfig(home, mock.url);
    // Codex's config, for the import: one server of its own.
    const codexHome = join(dir, "codex");
    mkdirSync(codexHome, { recursive: true });
    writeFileSync(
      join(codexHome, "config.toml"),
      `[mcp_servers.codex-everything]\ncommand = "node"\nargs = [${JSON.stringify(realpathSync(everythingJs))}, "stdio"]\n`,
    );
    const app = await openApp(t, home, { CODEX_HOME: codexHome });

    await app.click(await waitFor("the Settings button", () => app.find("[data-settings-button]")));
    await waitFor("the MCP servers section", () => app.find('[data-testid="settings-mcp"]'));
    const state = () => app.run(`return document.querySelector('${server}')?.dataset.state ?? null;`);
    await waitFor("the server listed running", async () => (await state()) === "running", 60_000).catch(async (err) => {
      await screenshot(app, "mcp-settings-failed.png");
      throw new Error(`${err.message}; the section shows: ${await app.textOf('[data-testid="settings-mcp"]')}`);
    });
    const row = await app.textOf(server);
    assert.match(row, /stdio/);
    assert.match(row, /server-everything\/dist\/index\.js stdio/);
    assert.match(row, /declared in config\.toml/);
    const tools = await app.run(`return [...document.querySelectorAll('${server} [data-testid=mcp-tools] li code')].map((c) => c.textContent);`);
    assert.ok(tools.includes("mcp__everything__echo"), `its tools: ${tools}`);
    // Open the tool list (folded: the server has many) and look at it.
    await app.run(`document.querySelector('${server} [data-testid=mcp-tools]').open = true; document.querySelector('[data-testid=settings-mcp]').scrollIntoView({block: 'start'});`);
    const shot = await screenshot(app, "mcp-settings.png");
    t.diagnostic(`screenshot: ${shot}`);

    // Off: the row says so, and so does the file (its comment kept).
    await clickIn(app, `${server} [data-testid=mcp-enabled]`);
    await waitFor("the server disabled", async () => (await state()) === "disabled", 30_000);
    assert.equal(await app.run(`return document.querySelector('${server} [data-testid=mcp-enabled]').checked;`), false);
    assert.equal(await app.count(`${server} [data-testid=mcp-tools]`), 0);
    const config = readFileSync(join(home, "config.toml"), "utf8");
    assert.match(config, /# the reference server\n\[mcp_servers\.everything\]\ncommand = "node"\nargs = \[.*\]\nenabled = false\n/);
    await screenshot(app, "mcp-settings-off.png");

    // And a refresh lists it disabled from the file.
    await clickIn(app, '[data-testid="mcp-refresh"]');
    await waitFor("the refreshed list", async () => (await app.count('[data-testid="mcp-loading"]')) === 0 && (await state()) === "disabled", 30_000);

    // Import from Codex: what it holds first, then written and listed running.
    await clickIn(app, '[data-import-from="codex"]');
    const found = '[data-import-server="codex-everything"]';
    await waitFor("Codex's server to import", () => app.find(found), 30_000);
    assert.equal(await app.run(`return document.querySelector('${found}').dataset.outcome;`), "new");
    assert.equal(await app.run(`return document.querySelector('${found} input').checked;`), true);
    assert.doesNotMatch(readFileSync(join(home, "config.toml"), "utf8"), /codex-everything/);
    await app.run("document.querySelector('[data-testid=mcp-import]').scrollIntoView({block: 'center'});");
    await screenshot(app, "mcp-import.png");
    await clickIn(app, '[data-testid="mcp-import-write"]');
    await waitFor("the import done", () => app.find('[data-testid="mcp-import-done"]'), 30_000);
    assert.match(readFileSync(join(home, "config.toml"), "utf8"), /\[mcp_servers\.codex-everything\]\ncommand = "node"/);
    await waitFor("the imported server listed running", async () =>
      (await app.run("return document.querySelector('[data-mcp-server=\"codex-everything\"]')?.dataset.state ?? null;")) === "running", 60_000);
    await app.run("document.querySelector('[data-mcp-server=\"codex-everything\"]').scrollIntoView({block: 'center'});");
    const imported = await screenshot(app, "mcp-imported.png");
    t.diagnostic(`screenshot: ${imported}`);
  });

  it("asks before an MCP tool call in full-auto, and once approved shows the server's answer in the timeline", { timeout: 120_000 }, async (t) => {
    requireBinaries("bosun-app", "bosun-mock-model", "bosun-sandbox");
    const dir = join(work, "b");
    const repo = makeRepo(join(dir, "echo"));
    mkdirSync(join(dir, "mock"), { recursive: true });
    const mock = await startMockModel(join(dir, "mock"), [
      {
        kind: "reply",
        text: "Asking the server to echo.",
        tool_calls: [{ id: "call_echo", name: "mcp__everything__echo", arguments: JSON.stringify({ message: "hello from the window" }) }],
      },
      { kind: "reply", text: "The server echoed it back." },
    ]);
    t.after(() => mock.stop());
    const home = join(dir, "home");
    writeConfig(home, mock.url);
    const app = await openApp(t, home);

    await app.click(await waitFor("the New task button", () => app.find("[data-new-task-button]")));
    await waitFor("the form", () => app.find("form[data-new-task]"));
    const field = (name) => waitFor(`the ${name} field`, () => app.find(`form[data-new-task] [name="${name}"]`));
    const fill = async (name, text) => {
      const el = await field(name);
      await app.clear(el);
      if (text) await app.type(el, text);
    };
    await fill("repo", repo);
    await waitFor("the repository's branches", async () =>
      (await app.run("return [...document.querySelectorAll('form[data-new-task] [name=base] option')].map(o => o.value);"))?.includes("main"),
    );
    // The provider of config.toml (the mock model), in full-auto.
    const choose = (name, value) =>
      app.run(
        "const el = document.querySelector(`form[data-new-task] [name=${arguments[0]}]`); el.value = arguments[1]; el.dispatchEvent(new Event('change', {bubbles: true}));",
        name,
        value,
      );
    await field("provider");
    await choose("provider", "mock");
    await choose("mode", "full-auto");
    assert.equal(await app.run("return document.querySelector('form[data-new-task] [name=mode]').value;"), "full-auto");
    await app.type(await field("prompt"), "Echo a greeting through the everything server");
    await app.submitKeys();

    // Even in full-auto the MCP call waits for a person: the card names the tool or its server.
    const card = "[data-approval-card]";
    await waitFor("the approval card", () => app.find(card), 60_000).catch(async (err) => {
      await screenshot(app, "mcp-task-failed.png");
      throw new Error(`${err.message}; the window shows: ${(await app.textOf("main, body"))?.slice(0, 2000)}`);
    });
    const asked = await app.textOf(card);
    assert.ok(/mcp__everything__echo/.test(asked) || (/everything/.test(asked) && /echo/.test(asked)), `the card: ${asked}`);
    const tool = '[data-call-id="call_echo"]';
    assert.equal(await app.run(`return document.querySelector('${tool}')?.dataset.tool;`), "mcp__everything__echo");
    const waiting = await screenshot(app, "mcp-approval.png");
    t.diagnostic(`screenshot: ${waiting}`);

    await clickIn(app, `${card} [data-answer="approve_once"]`);
    await waitFor("the server's answer in the timeline", async () => /hello from the window/.test((await app.textOf(`${tool} [role="log"]`)) ?? ""), 60_000).catch(
      async (err) => {
        await screenshot(app, "mcp-call-failed.png");
        throw new Error(`${err.message}; the call shows: ${await app.textOf(tool)}`);
      },
    );
    assert.equal(await app.run(`return document.querySelector('${tool}').dataset.status;`), "success");
    assert.match(await app.textOf(`${tool} [data-approval="approve_once"]`), /Approved once/);
    assert.equal(await app.textOf(`${tool} [data-mcp-server]`), "everything");
    await waitFor("the task finished: answered, no changes made", () => app.find('[data-kind="finished"] [data-status="answered"]'), 60_000).catch(async (err) => {
      await screenshot(app, "mcp-task-not-completed.png");
      throw new Error(`${err.message}; the task shows: ${(await app.textOf("section.pane"))?.slice(0, 3000)}`);
    });
    assert.equal(await app.count(card), 0);
    const done = await screenshot(app, "mcp-call-done.png");
    t.diagnostic(`screenshot: ${done}`);

    // The model got the server's answer as the call's result.
    const requests = await (await fetch(`${mock.url}/_mock/requests`)).json();
    const bodies = requests.filter((r) => r.path.includes("chat/completions")).map((r) => JSON.stringify(r.body));
    assert.ok(bodies.length >= 2 && bodies[1].includes("hello from the window") && bodies[1].includes('"role":"tool"'), `the second request: ${bodies[1]?.slice(0, 2000)}`);
  });
});
