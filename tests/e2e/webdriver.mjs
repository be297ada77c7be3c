// A minimal W3C WebDriver client over fetch, and tauri-driver's lifecycle. No npm dependency.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

const ELEMENT = "element-6066-11e4-a52e-4f735466cecf";

/** Polls `probe` until it returns a truthy value; throws with `what` after `timeoutMs`. */
export async function waitFor(what, probe, timeoutMs = 30_000, everyMs = 100) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      last = await probe();
      if (last) return last;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (last: ${last})`);
    await sleep(everyMs);
  }
}

function tauriDriverPath() {
  const fromEnv = process.env.TAURI_DRIVER;
  if (fromEnv) return fromEnv;
  const cargo = join(process.env.CARGO_HOME ?? join(homedir(), ".cargo"), "bin", "tauri-driver");
  return existsSync(cargo) ? cargo : "tauri-driver";
}

/**
 * Starts tauri-driver on 127.0.0.1:`port` with `env` (the app inherits it through WebKitWebDriver)
 * and waits until it answers. Returns `{ url, stop, log }`.
 */
// TAURI_DRIVER_PORT lets two runs share a machine (the next port is WebKitWebDriver's).
export async function startDriver({ port = Number(process.env.TAURI_DRIVER_PORT ?? 4444), env = {} } = {}) {
  const child = spawn(tauriDriverPath(), ["--port", String(port), "--native-port", String(port + 1)], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  child.stdout.on("data", (d) => (log += d));
  child.stderr.on("data", (d) => (log += d));
  let exited = null;
  child.on("exit", (code) => (exited = code));
  const url = `http://127.0.0.1:${port}`;
  await waitFor(
    "tauri-driver to answer",
    async () => {
      if (exited !== null) throw new Error(`tauri-driver exited with ${exited}: ${log}`);
      const res = await fetch(`${url}/status`, { signal: AbortSignal.timeout(2000) });
      return res.ok;
    },
    20_000,
  );
  return {
    url,
    log: () => log,
    stop: async () => {
      if (exited !== null) return;
      child.kill("SIGTERM");
      await waitFor("tauri-driver to stop", () => exited !== null, 5000).catch(() => child.kill("SIGKILL"));
    },
  };
}

async function wd(method, url, body) {
  const res = await fetch(url, {
    method,
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
    // A hung app must fail the test, not hang it.
    signal: AbortSignal.timeout(30_000),
  });
  const json = await res.json().catch(() => ({}));
  if (!res.ok) {
    const v = json.value ?? {};
    throw new Error(`WebDriver ${method} ${url}: ${v.error ?? res.status} ${v.message ?? ""}`);
  }
  return json.value;
}

/** A WebDriver session on the app at `application` (absolute path of the binary). */
export async function openSession(driverUrl, application) {
  const value = await wd("POST", `${driverUrl}/session`, {
    capabilities: { alwaysMatch: { "tauri:options": { application } } },
  });
  const base = `${driverUrl}/session/${value.sessionId}`;
  const session = {
    /** Runs `script` in the page (a function body; `arguments` holds `args`) and returns its value. */
    run: (script, ...args) => wd("POST", `${base}/execute/sync`, { script, args }),
    /** The element for a CSS selector, or null. */
    find: async (css) => {
      try {
        const el = await wd("POST", `${base}/element`, { using: "css selector", value: css });
        return el[ELEMENT];
      } catch {
        return null;
      }
    },
    click: (elementId) => wd("POST", `${base}/element/${elementId}/click`, {}),
    /** Types `text` into an element as keystrokes (WebDriver key codes such as "\uE009" for Control). */
    type: (elementId, text) => wd("POST", `${base}/element/${elementId}/value`, { text }),
    clear: (elementId) => wd("POST", `${base}/element/${elementId}/clear`, {}),
    /** Presses and releases each key in turn, wherever the focus is (WebDriver key actions). */
    press: (...keys) =>
      wd("POST", `${base}/actions`, {
        actions: [
          {
            type: "key",
            id: "keyboard",
            actions: keys.flatMap((value) => [
              { type: "keyDown", value },
              { type: "keyUp", value },
            ]),
          },
        ],
      }),
    /**
     * Presses Control+Enter in the focused element (a form's submit). Key actions, not the element's
     * `value` endpoint: the submit replaces the form, and WebKitWebDriver then fails a `value` call
     * whose element went away mid-sequence ("unknown error") although the keys were delivered.
     */
    submitKeys: () =>
      wd("POST", `${base}/actions`, {
        actions: [
          {
            type: "key",
            id: "keyboard",
            actions: [
              { type: "keyDown", value: "\uE009" },
              { type: "keyDown", value: "\uE007" },
              { type: "keyUp", value: "\uE007" },
              { type: "keyUp", value: "\uE009" },
            ],
          },
        ],
      }),
    text: (elementId) => wd("GET", `${base}/element/${elementId}/text`),
    /** The text of the first element matching `css`, or null (read in the page). */
    textOf: (css) =>
      session.run("const el = document.querySelector(arguments[0]); return el ? el.textContent : null;", css),
    count: (css) => session.run("return document.querySelectorAll(arguments[0]).length;", css),
    screenshot: async () => Buffer.from(await wd("GET", `${base}/screenshot`), "base64"),
    /** Closes the window as its close button does (the app then quits). */
    closeWindow: () => wd("DELETE", `${base}/window`),
    close: () => wd("DELETE", base).catch(() => {}),
  };
  return session;
}
