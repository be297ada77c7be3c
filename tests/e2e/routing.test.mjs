// End to end: Model roles in Settings, in the real app (custom-protocol build, Xvfb, WebDriver).
// Three providers saved in $BOSUN_HOME/config.toml: a role is routed to one of them, a fallback is
// added to another's list, both land in config.toml; a provider falling back to itself is never
// offered.
//
// Needs what tests/e2e/app.test.mjs needs: DISPLAY, ui/dist, and bosun-app in BOSUN_BIN_DIR
// (default $CARGO_TARGET_DIR/debug).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { openSession, startDriver, waitFor } from "./webdriver.mjs";
import { bin, requireBinaries, screenshot } from "./support.mjs";

const roles = "[data-settings] [data-model-roles]";

/** Sets a select in the page as a person choosing a value would. */
const choose = (app, css, value) =>
  app.run(
    "const el = document.querySelector(arguments[0]); el.value = arguments[1]; el.dispatchEvent(new Event('change', {bubbles: true})); return el.value;",
    css,
    value,
  );

const provider = (name, model) =>
  `[providers.${name}]\napi = "openai-chat"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "${model}"\n\n`;

describe("model roles in Settings", () => {
  let work;
  before(() => {
    work = mkdtempSync(join(tmpdir(), "bosun-e2e-routing-"));
  });
  after(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("routes a role to a provider and adds a fallback, saved in config.toml", { timeout: 120_000 }, async (t) => {
    requireBinaries("bosun-app");
    const home = join(work, "home");
    mkdirSync(home, { recursive: true });
    writeFileSync(
      join(home, "config.toml"),
      'default_provider = "claude"\n\n' +
        provider("claude", "claude-sonnet-4-5") +
        provider("local", "qwen2.5-coder:7b") +
        provider("mini", "gpt-5-mini") +
        '[routing]\nsummarizer = "mini"\n',
    );
    const driver = await startDriver({ env: { BOSUN_HOME: home } });
    t.after(() => driver.stop());
    const app = await openSession(driver.url, bin("bosun-app"));
    t.after(() => app.close());
    await waitFor("the app to load", () => app.find(".sidebar"));
    await app.click(await waitFor("the Settings button", () => app.find("[data-settings-button]")));
    await waitFor("the Model roles section", () => app.find(`${roles} [data-role="worker"]`));
    const value = (css) => app.run("return document.querySelector(arguments[0]).value;", css);
    assert.equal(await value(`${roles} select[name="role_summarizer"]`), "mini");
    assert.equal(await value(`${roles} select[name="role_worker"]`), "");

    await choose(app, `${roles} select[name="role_worker"]`, "local");
    await waitFor("worker saved", () => /worker = "local"/.test(readFileSync(join(home, "config.toml"), "utf8")));

    const offered = await app.run(
      "return [...document.querySelectorAll(arguments[0])].map((o) => o.value);",
      `${roles} select[name="add_fallback_claude"] option`,
    );
    assert.deepEqual(offered, ["", "local", "mini"], "claude is never offered as its own fallback");
    await choose(app, `${roles} select[name="add_fallback_claude"]`, "local");
    await app.click(await waitFor("the Add button", () => app.find(`${roles} [data-add-fallback="claude"]:not([disabled])`)));
    await waitFor("the fallback listed", () => app.find(`${roles} [data-fallback-of="claude"] [data-fallback="local"]`));
    const config = readFileSync(join(home, "config.toml"), "utf8");
    t.diagnostic(config);
    assert.match(config, /\[providers\.claude\][^[]*fallback = \["local"\]/);
    assert.match(config, /\[routing\]\nworker = "local"\nsummarizer = "mini"/);

    await app.run("document.querySelector(arguments[0]).scrollIntoView({block: 'center'});", roles);
    t.diagnostic(`screenshot: ${await screenshot(app, "model-roles.png")}`);
  });
});
