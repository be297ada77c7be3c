// Benchmark: a command printing 100,000 lines streams through the journal to the real app window.
// Prints the events delivered per second and the longest main-thread stall (how late a 10 ms
// timer in the page fired) while the output streams in. Figures, not a test.
//
// Run (after building ui/dist, bosun-app with --features bosun-app/custom-protocol, bosun and
// bosun-mock-model):  xvfb-run -a -s "-screen 0 1280x800x24" node tests/bench/ui-stream.mjs [LINES]
import { spawn, execFileSync } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { openSession, startDriver, waitFor } from "../e2e/webdriver.mjs";

const lines = Number(process.argv[2] ?? 100_000);
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const binDir = resolve(process.env.BOSUN_BIN_DIR ?? join(process.env.CARGO_TARGET_DIR ?? join(repoRoot, "target"), "debug"));
const bin = (name) => join(binDir, name);
const work = mkdtempSync(join(tmpdir(), "bosun-bench-ui-"));
const home = join(work, "home");
const repo = join(work, "repo");

const git = (...args) => execFileSync("git", ["-C", repo, ...args], { stdio: "ignore" });
execFileSync("git", ["init", "-q", "-b", "main", repo]);
writeFileSync(join(repo, "README.md"), "bench\n");
git("add", "README.md");
git("-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "init");

const script = [
  {
    kind: "reply",
    text: `Printing ${lines} lines.`,
    tool_calls: [{ id: "call_1", name: "run_command", arguments: JSON.stringify({
      // In 200 bursts, so the output streams in as many events over a couple of seconds.
      command: `for i in $(seq 0 199); do seq $((i*${lines}/200+1)) $(((i+1)*${lines}/200)); sleep 0.01; done`,
    }) }],
  },
  { kind: "reply", text: "Done." },
];
writeFileSync(join(work, "script.json"), JSON.stringify(script));
const mock = spawn(bin("bosun-mock-model"), ["--script", join(work, "script.json")], { stdio: ["ignore", "pipe", "inherit"] });
const [first] = await once(createInterface({ input: mock.stdout }), "line");
const url = /^listening (\S+)/.exec(first)[1];

const driver = await startDriver({ env: { BOSUN_HOME: home } });
const app = await openSession(driver.url, bin("bosun-app"));
try {
  await waitFor("the app", () => app.find(".sidebar"));
  // The page's own view of its main thread: how late a 10 ms timer fires (a stall delays it).
  await app.run(`
    window.__bench = { maxGap: 0, frames: 0, last: performance.now() };
    setInterval(() => { const t = performance.now(); const g = t - __bench.last - 10;
      if (g > __bench.maxGap) __bench.maxGap = g; __bench.last = t; __bench.frames++; }, 10);`);
  const started = performance.now();
  const cli = spawn(
    bin("bosun"),
    ["run", "--json", "--mode", "full-auto", "--repo", repo, "--prompt", "print lines",
     "--api", "openai-chat", "--base-url", `${url}/v1`, "--model", "bench"],
    { env: { ...process.env, BOSUN_HOME: home }, stdio: ["ignore", "pipe", "inherit"] },
  );
  let events = 0;
  let deltas = 0;
  createInterface({ input: cli.stdout }).on("line", (l) => {
    events++;
    if (l.includes('"tool_output_delta"')) deltas++;
  });
  let cliDone = null;
  const exited = once(cli, "exit").then((r) => ((cliDone = performance.now()), r));
  await waitFor("the task in the sidebar", () => app.find(".sidebar [data-task-id]"), 60_000);
  await app.click(await app.find(".sidebar [data-task-id]"));
  const shown = await waitFor("the first output", async () =>
    (await app.textOf('[data-tool="run_command"] [role="log"]')) ? performance.now() : null, 120_000, 20);
  // The command prints and changes nothing, so the task ends "answered".
  await waitFor("the finished status", () => app.find('[data-kind="finished"] [data-status="answered"]'), 300_000, 20);
  const done = performance.now();
  await exited;
  const lag = cliDone === null ? 0 : Math.max(0, done - cliDone);
  const page = await app.run("return { maxGap: __bench.maxGap, frames: __bench.frames };");
  const seconds = (done - shown) / 1000;
  console.log(`lines printed by the command:          ${lines}`);
  console.log(`events journaled (all / output):       ${events} / ${deltas}`);
  console.log(`first output on screen after start:    ${(shown - started).toFixed(0)} ms`);
  console.log(`first output → completed on screen:    ${(seconds * 1000).toFixed(0)} ms`);
  console.log(`events per second through to the UI:   ${(events / Math.max(seconds, 0.001)).toFixed(0)} (paced by the command)`);
  console.log(`UI behind the CLI at the end:          ${lag.toFixed(0)} ms`);
  console.log(`lines per second through to the UI:    ${(lines / Math.max(seconds, 0.001)).toFixed(0)}`);
  console.log(`longest main-thread stall:             ${page.maxGap.toFixed(1)} ms (a 10 ms timer, ${page.frames} ticks)`);
} finally {
  await app.close();
  await driver.stop();
  mock.kill("SIGTERM");
  rmSync(work, { recursive: true, force: true });
}
