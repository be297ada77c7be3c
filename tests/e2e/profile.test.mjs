// End to end: a provider's model profile in Settings, in the real app (custom-protocol build, Xvfb,
// WebDriver). A provider saved in $BOSUN_HOME/config.toml is edited: its profile shows each key's
// source, "Probe now" answers with findings or an error (never nothing), and the keys chosen are
// saved as the provider's `profile` (the ones left on auto are not written), in light and dark.
//
// Needs what tests/e2e/app.test.mjs needs: DISPLAY, ui/dist, and bosun-app in BOSUN_BIN_DIR
// (default $CARGO_TARGET_DIR/debug).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { openSession, startDriver, waitFor } from "./webdriver.mjs";
import { bin, requireBinaries, screenshot, startMockModel } from "./support.mjs";

const editor = "[data-settings] [data-provider-editor]";
const section = `${editor} [data-model-profile]`;

/** Sets a select (or an input) in the page as a person choosing a value would. */
const choose = (app, css, value) =>
  app.run(
    "const el = document.querySelector(arguments[0]); el.value = arguments[1]; el.dispatchEvent(new Event(el.tagName === 'SELECT' ? 'change' : 'input', {bubbles: true})); return el.value;",
    css,
    value,
  );

async function theme(app, value) {
  await choose(app, '[data-settings] select[name="theme"]', value);
  await waitFor(`the ${value} theme`, () => app.run("return document.documentElement.dataset.theme === arguments[0];", value));
}

/** Opens the editor of the provider `name` and waits for its profile to be read. */
async function edit(app, name) {
  await app.click(await waitFor(`${name}'s Edit button`, () => app.find(`[data-settings] [data-provider="${name}"] [data-edit-provider]`)));
  await waitFor("the profile's sources", () => app.find(`${section} [data-profile-now="edit_format"], ${section} [data-profile-error]`));
  assert.equal(await app.textOf(`${section} [data-profile-error]`), null, "the profile could not be read");
  await app.run("document.querySelector(arguments[0]).scrollIntoView({block: 'center'});", section);
}

const nowText = (app, key) => app.run("return document.querySelector(arguments[0]).textContent.replace(/\\s+/g, ' ').trim();", `${section} [data-profile-now="${key}"]`);

describe("model profiles in Settings", () => {
  let work;
  before(() => {
    work = mkdtempSync(join(tmpdir(), "bosun-e2e-profile-"));
  });
  after(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("shows a provider's profile with its sources, probes it, and saves the keys chosen", { timeout: 120_000 }, async (t) => {
    requireBinaries("bosun-app");
    const home = join(work, "home");
    mkdirSync(home, { recursive: true });
    // Port 9 (discard): nothing answers, so the probe fails and must say so.
    writeFileSync(
      join(home, "config.toml"),
      'default_provider = "local"\n\n[providers.local]\napi = "openai-chat"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "qwen2.5-coder:7b"\ntemperature = 0.2\n',
    );
    const driver = await startDriver({ env: { BOSUN_HOME: home } });
    t.after(() => driver.stop());
    const app = await openSession(driver.url, bin("bosun-app"));
    t.after(() => app.close());
    await waitFor("the app to load", () => app.find(".sidebar"));
    await app.click(await waitFor("the Settings button", () => app.find("[data-settings-button]")));

    await edit(app, "local");
    // Nothing set, nothing probed: every key is the default.
    assert.equal(await nowText(app, "edit_format"), "tools default");
    assert.equal(await nowText(app, "native_tools"), "yes default");
    assert.equal(await nowText(app, "context_window"), "unknown default");
    assert.equal(await app.find(`${section} [data-probe-cost]`), null, "a local server needs no word about paid requests");

    // Probe now answers, here with an error in place (nothing listens).
    await app.click(await app.find(`${section} [data-probe-provider]`));
    await waitFor("the probe's answer", () => app.find(`${section} [data-probe-error], ${section} [data-probe-findings]`));
    const probeError = await app.textOf(`${section} [data-probe-error]`);
    assert.ok(probeError, "probing a server where nothing listens must fail, and say so");
    assert.match(probeError, /Probe failed: \S/);
    t.diagnostic(`probe: ${probeError}`);

    assert.equal(await choose(app, `${section} select[name="profile_edit_format"]`, "search-replace"), "search-replace");
    assert.equal(await choose(app, `${section} select[name="profile_native_tools"]`, "no"), "no");
    await app.run("document.querySelector(arguments[0]).scrollIntoView({block: 'center'});", section);
    t.diagnostic(`screenshot: ${await screenshot(app, "profile-light.png")}`);

    await app.click(await app.find(`${editor} [data-save-provider]`));
    await waitFor("the editor to close", async () => (await app.find(editor)) === null);
    const config = readFileSync(join(home, "config.toml"), "utf8");
    t.diagnostic(config);
    const section_ = /\[providers\.local\]([\s\S]*?)(?=\n\[(?!providers\.local\.)|$)/.exec(config)?.[1] ?? "";
    assert.match(section_, /profile = \{[^}]*\}|\[providers\.local\.profile\]/, config);
    assert.match(section_, /native_tools = false/, config);
    assert.match(section_, /edit_format = "search-replace"/, config);
    assert.doesNotMatch(config, /tool_format|context_window/, "keys left on auto are not written");
    assert.match(section_, /temperature = 0\.2/, "what the editor does not show is kept");

    // Edited again, in dark: the keys now come from the config.
    await theme(app, "dark");
    await edit(app, "local");
    assert.equal(await nowText(app, "edit_format"), "search-replace from config");
    assert.equal(await nowText(app, "native_tools"), "no from config");
    assert.equal(await app.run("return document.querySelector(arguments[0]).value;", `${section} select[name="profile_edit_format"]`), "search-replace");
    assert.equal(await app.run("return document.querySelector(arguments[0]).value;", `${section} select[name="profile_tool_format"]`), "auto");
    // An invalid context window is refused with a message, and nothing is written.
    await choose(app, `${section} [name="profile_context_window"]`, "100");
    await app.click(await app.find(`${editor} [data-save-provider]`));
    await waitFor("the refusal", async () => /Context window/.test((await app.textOf(`${editor} > [role="alert"]`)) ?? ""));
    assert.equal(readFileSync(join(home, "config.toml"), "utf8"), config);
    await app.run("document.querySelector(arguments[0]).scrollIntoView({block: 'center'});", section);
    t.diagnostic(`screenshot: ${await screenshot(app, "profile-dark.png")}`);
    await theme(app, "light");
  });
  it("probes a llama.cpp server's model and shows what it found", { timeout: 120_000 }, async (t) => {
    requireBinaries("bosun-app", "bosun-mock-model");
    const home = join(work, "probe-home");
    mkdirSync(home, { recursive: true });
    const mockDir = join(work, "mock-probe");
    mkdirSync(mockDir, { recursive: true });
    // The model writes both probe calls as text, as Qwen2.5-Coder-1.5B does behind llama.cpp.
    const asText = (name, path) => ({
      kind: "reply",
      text: `<tool_call>\n{"name": "${name}", "arguments": {"path": "${path}"}}\n</tool_call>`,
      usage: { input_tokens: 60, output_tokens: 20 },
    });
    const mock = await startMockModel(mockDir, [asText("read_file", "README.md"), asText("list_dir", "src")], {
      props: {
        chat_template: "{%- if tools %}# Tools\n<tools></tools>\n<tool_call>\n{\"name\": <function-name>}\n</tool_call>{%- endif %}",
        default_generation_settings: { n_ctx: 4096 },
      },
    });
    t.after(() => mock.stop());
    writeFileSync(
      join(home, "config.toml"),
      `default_provider = "local"\n\n[providers.local]\napi = "openai-chat"\nbase_url = "${mock.url}/v1"\nmodel = "qwen2.5-coder-1.5b"\n`,
    );
    const driver = await startDriver({ env: { BOSUN_HOME: home } });
    t.after(() => driver.stop());
    const app = await openSession(driver.url, bin("bosun-app"));
    t.after(() => app.close());
    await waitFor("the app to load", () => app.find(".sidebar"));
    await app.click(await waitFor("the Settings button", () => app.find("[data-settings-button]")));
    await edit(app, "local");
    await app.click(await app.find(`${section} [data-probe-provider]`));
    await waitFor("the probe's findings", () => app.find(`${section} [data-probe-findings], ${section} [data-probe-error]`), 30_000);
    assert.equal(await app.textOf(`${section} [data-probe-error]`), null);
    const findings = await app.textOf(`${section} [data-probe-findings]`);
    assert.match(findings, /hermes format/, findings);
    assert.match(findings, /0 of 2 native tool calls came back valid; 2 written as text instead/, findings);
    // What is in effect now comes from the probe.
    await waitFor("the probed profile", async () => /probed/.test(await nowText(app, "tool_format")));
    assert.match(await nowText(app, "native_tools"), /^no probed/);
    assert.match(await nowText(app, "tool_format"), /^hermes probed/);
    assert.match(await nowText(app, "edit_format"), /^whole probed/);
    assert.match(await nowText(app, "context_window"), /^4,096 tokens probed/);
    const cache = JSON.parse(readFileSync(join(home, "model-profiles.json"), "utf8"));
    assert.equal(cache.profiles[`${mock.url}/v1 qwen2.5-coder-1.5b`].profile.tool_format, "hermes");
    await app.run("document.querySelector(arguments[0]).scrollIntoView({block: 'center'});", section);
    t.diagnostic(`screenshot: ${await screenshot(app, "profile-probed.png")}`);
  });
});
