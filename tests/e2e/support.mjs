// What the end-to-end tests share: where the binaries are, the scripted mock model, screenshots.
import { spawn, execFileSync } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { waitFor } from "./webdriver.mjs";

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const targetDir = process.env.CARGO_TARGET_DIR ?? join(repoRoot, "target");
const binDir = resolve(process.env.BOSUN_BIN_DIR ?? join(targetDir, "debug"));
export const artifacts = process.env.E2E_ARTIFACTS ?? "/tmp/bosun-e2e";
export const bin = (name) => join(binDir, name);

export function requireBinaries(...names) {
  assert.ok(process.env.DISPLAY, "no DISPLAY: run the end-to-end tests under `xvfb-run -a npm run e2e`");
  for (const name of names) {
    assert.ok(existsSync(bin(name)), `${bin(name)} is missing: build it first (see the top of tests/e2e/app.test.mjs)`);
  }
}

export function hasCommand(name) {
  try {
    execFileSync("sh", ["-c", `command -v ${name}`], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/**
 * Starts the scripted mock model (recording requests to dir/rec.jsonl); resolves with its base URL
 * once it listens. `routes` maps a marker to a script of its own: a request whose first user
 * message contains the marker (a sub-agent's brief) takes its replies from there.
 */
export async function startMockModel(dir, script, { props, window, routes } = {}) {
  const scriptPath = join(dir, "script.json");
  writeFileSync(scriptPath, JSON.stringify(script));
  const args = ["--script", scriptPath, "--record", join(dir, "rec.jsonl")];
  Object.entries(routes ?? {}).forEach(([marker, replies], i) => {
    const path = join(dir, `route-${i}.json`);
    writeFileSync(path, JSON.stringify(replies));
    args.push("--route", `${marker}=${path}`);
  });
  if (props) {
    // What llama.cpp's server answers on GET /props (its chat template, its context size).
    const propsPath = join(dir, "props.json");
    writeFileSync(propsPath, JSON.stringify(props));
    args.push("--props", propsPath);
  }
  // A context window in tokens: the mock answers 400 "context length exceeded" above it.
  if (window) args.push("--window", String(window));
  const child = spawn(bin("bosun-mock-model"), args, {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const lines = createInterface({ input: child.stdout });
  const [first] = await once(lines, "line");
  const match = /^listening (http:\/\/127\.0\.0\.1:\d+)/.exec(first);
  assert.ok(match, `bosun-mock-model said "${first}" instead of "listening http://127.0.0.1:PORT"`);
  return { url: match[1], stop: () => child.kill("SIGTERM") };
}

export async function screenshot(session, name) {
  mkdirSync(artifacts, { recursive: true });
  await sleep(500); // WebKit may still show the previous frame right after a DOM change
  const file = join(artifacts, name);
  writeFileSync(file, await session.screenshot());
  return file;
}

/** `git -C dir ARGS…` with a fixed author, its stdout. */
export function git(dir, ...args) {
  return execFileSync("git", ["-C", dir, ...args], {
    encoding: "utf8",
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "Fixture",
      GIT_AUTHOR_EMAIL: "fixture@example.com",
      GIT_COMMITTER_NAME: "Fixture",
      GIT_COMMITTER_EMAIL: "fixture@example.com",
    },
  });
}

/** The requests the mock model recorded in `dir` (rec.jsonl), oldest first. */
export function recorded(dir) {
  const file = join(dir, "rec.jsonl");
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
}

/** Clicks the first element matching `css` (in the page, so rows scrolled into view count too). */
export const clickIn = (app, css) =>
  app.run("const el = document.querySelector(arguments[0]); if (!el) return false; el.scrollIntoView({block:'center'}); el.click(); return true;", css);

/**
 * `waitFor` in the app, and when it times out, an error that says what the window showed (its
 * text, and a screenshot named `shot`) and how many requests the mock model in `mockDir` had
 * answered, and with `driver` the end of the app's log, so a failure in CI can be read without
 * rerunning it.
 */
export async function waitInApp(app, what, probe, { timeoutMs = 30_000, shot, mockDir, driver } = {}) {
  try {
    return await waitFor(what, probe, timeoutMs);
  } catch (err) {
    const text = await app
      .run("return document.body.innerText;")
      .then((t) => String(t ?? "").replace(/\n{2,}/g, "\n").slice(0, 3000))
      .catch((e) => `(the page could not be read: ${e.message})`);
    const file = shot ? await screenshot(app, shot).catch(() => null) : null;
    const requests = mockDir === undefined ? "" : `\nthe mock model answered ${recorded(mockDir).length} request(s)`;
    // The app's own log: it logs to stderr, which reaches tauri-driver's output (its stdout does not).
    // Its own lines: tauri-driver's connection errors and their backtraces are left out.
    const own = driver
      ?.log()
      .split("\n")
      .filter((l) => /\b(TRACE|DEBUG|INFO|WARN|ERROR)\b/.test(l) && !/tauri_driver|hyper/.test(l));
    const log = own ? `\nthe app's log (last lines):\n${own.slice(-40).join("\n")}` : "";
    throw new Error(`${err.message}${requests}${file ? `\nscreenshot: ${file}` : ""}${log}\nthe window showed:\n${text}`);
  }
}
