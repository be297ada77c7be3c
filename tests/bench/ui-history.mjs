// Benchmark: the History view on a large journal, in the real app window. Copies the journal
// `bosun bench history` builds (10,000 tasks, 1,000,000 events by default) into a fresh
// $BOSUN_HOME, starts the app, and prints: time to the first page of the History view after the
// click, time to a search's first page, and the app's CPU while idle and while one task streams
// output into the same journal. Figures, not a test.
//
// Run (after `bosun bench history`, building ui/dist, bosun-app with --features
// bosun-app/custom-protocol, bosun and bosun-mock-model):
//   xvfb-run -a -s "-screen 0 1280x800x24" node tests/bench/ui-history.mjs [JOURNAL]
import { execFileSync, spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { bin, startMockModel } from "../e2e/support.mjs";
import { openSession, startDriver, waitFor } from "../e2e/webdriver.mjs";

const journal = process.argv[2] ?? "/var/tmp/bosun-bench/journal-v5b-10000-1000000.db";
if (!existsSync(journal)) {
  console.error(`${journal} is missing: run \`bosun bench history\` first`);
  process.exit(2);
}
const work = mkdtempSync(join(tmpdir(), "bosun-bench-history-"));
const home = join(work, "home");
mkdirSync(home, { recursive: true });
copyFileSync(journal, join(home, "bosun.db"));

const ticks = () => {
  // The newest bosun-app process: its user + system CPU time in clock ticks.
  const pids = readdirSync("/proc").filter((p) => /^\d+$/.test(p));
  let best = null;
  for (const pid of pids) {
    let cmd = "";
    try {
      cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8");
    } catch {
      continue;
    }
    if (!cmd.includes("bosun-app")) continue;
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    const start = Number(stat[19]);
    if (!best || start > best.start) best = { pid, start, cpu: Number(stat[11]) + Number(stat[12]) };
  }
  return best;
};
const HZ = 100;
async function cpuOver(ms) {
  const a = ticks();
  const t = performance.now();
  await sleep(ms);
  const b = ticks();
  const wall = (performance.now() - t) / 1000;
  return a && b ? (((b.cpu - a.cpu) / HZ) / wall) * 100 : NaN;
}

/** Clicks `css` in the page and resolves with the ms until `until` matches (measured in the page). */
async function timeInPage(app, clickCss, untilCss, typed = null) {
  await app.run(
    `window.__t = null;
     const until = arguments[1];
     const start = performance.now();
     // With a typed word: a mark of that very word (not one left by an earlier search).
     const done = () => arguments[2] === null
       ? document.querySelector(until)
       : [...document.querySelectorAll(until)].some((m) => m.textContent.toLowerCase() === arguments[2]);
     const obs = new MutationObserver(() => {
       if (done()) { window.__t = performance.now() - start; obs.disconnect(); }
     });
     obs.observe(document.body, { childList: true, subtree: true, characterData: true });
     const el = document.querySelector(arguments[0]);
     if (arguments[2] !== null) {
       el.value = arguments[2];
       el.dispatchEvent(new Event('input', { bubbles: true }));
       el.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true }));
     } else el.click();`,
    clickCss,
    untilCss,
    typed,
  );
  return waitFor("the measurement", () => app.run("return window.__t;"), 30_000, 20);
}

const driver = await startDriver({ env: { BOSUN_HOME: home } });
const app = await openSession(driver.url, bin("bosun-app"));
try {
  const t0 = performance.now();
  await waitFor("the task list", () => app.find(".sidebar [data-task-id]"), 60_000);
  const listMs = performance.now() - t0;
  const skip = await app.find("[data-skip-setup]");
  if (skip) await app.click(skip);
  const firstPage = await timeInPage(app, '[data-testid="history-button"]', '[data-testid="history-row"]');
  const search = await timeInPage(app, '[data-testid="history-search"]', '[data-testid="history-snippet"] mark', "xylophonequartz");
  const common = await timeInPage(app, '[data-testid="history-search"]', '[data-testid="history-snippet"] mark', "error");
  const rows = await app.count('[data-testid="history-row"]');
  await sleep(3000);
  const idle = await cpuOver(10_000);

  // One task streams 20,000 lines into the same journal.
  const mockDir = join(work, "mock");
  mkdirSync(mockDir, { recursive: true });
  const mock = await startMockModel(mockDir, [
    { kind: "reply", tool_calls: [{ id: "c1", name: "run_command", arguments: JSON.stringify({ command: "for i in $(seq 1 20000); do echo line $i; sleep 0.0005; done" }) }] },
    { kind: "reply", text: "done" },
  ]);
  const repo = join(work, "repo");
  execFileSync("git", ["init", "-q", "-b", "main", repo]);
  execFileSync("git", ["-C", repo, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "--allow-empty", "-m", "x"]);
  const run = spawn(bin("bosun"), ["run", "--json", "--mode", "full-auto", "--no-checks", "--repo", repo, "--prompt", "stream",
    "--api", "openai-chat", "--base-url", `${mock.url}/v1`, "--model", "m"], { env: { ...process.env, BOSUN_HOME: home }, stdio: "ignore" });
  await sleep(1500);
  const streaming = await cpuOver(8_000);
  await new Promise((r) => run.on("exit", r));
  mock.stop();

  const ms = (t) => `${t.toFixed(0).padStart(6)} ms`;
  console.log(`journal: ${journal}`);
  console.log(`app start to the task list (the newest 500):  ${ms(listMs)}`);
  console.log(`History click to its first page:               ${ms(firstPage)}   (target 300 ms)`);
  console.log(`search, a rare word, to its first hit:         ${ms(search)}`);
  console.log(`search, a word in every task, to first hits:   ${ms(common)}   (${rows} rows in the DOM)`);
  console.log(`app CPU while idle (10 s):                     ${idle.toFixed(1).padStart(6)} %`);
  console.log(`app CPU while one task streams (8 s):          ${streaming.toFixed(1).padStart(6)} %`);
} finally {
  await app.close();
  driver.stop();
  rmSync(work, { recursive: true, force: true });
}
