// Benchmark: the real app runs a batch of TASKS mock tasks (default 20) at concurrency 4, started
// from the page (`batch_start` with a JSON-lines batch file) while the Batch view shows its table
// filling in. Prints the total wall time and the longest main-thread stall (how late a 10 ms timer
// in the page fired) while it runs. Figures, not a test.
//
// Run (after building ui/dist, bosun-app with --features bosun-app/custom-protocol and
// bosun-mock-model):  xvfb-run -a -s "-screen 0 1280x800x24" node tests/bench/ui-batch.mjs [TASKS]
// With BENCH_VIEW=none the Batch view stays closed (only the sidebar follows the tasks): the
// stall the view itself adds is the difference.
import { spawn, execFileSync } from "node:child_process";
import { once } from "node:events";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { openSession, startDriver, waitFor } from "../e2e/webdriver.mjs";

const tasks = Number(process.argv[2] ?? 20);
const concurrency = 4;
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const binDir = resolve(process.env.BOSUN_BIN_DIR ?? join(process.env.CARGO_TARGET_DIR ?? join(repoRoot, "target"), "debug"));
const bin = (name) => join(binDir, name);
const work = mkdtempSync(join(tmpdir(), "bosun-bench-batch-"));
const home = join(work, "home");

// Four repositories, the tasks spread over them.
const repos = [0, 1, 2, 3].map((i) => {
  const repo = join(work, `repo${i}`);
  execFileSync("git", ["init", "-q", "-b", "main", repo]);
  writeFileSync(join(repo, "README.md"), `bench ${i}\n`);
  execFileSync("git", ["-C", repo, "add", "README.md"]);
  execFileSync("git", ["-C", repo, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "init"]);
  return repo;
});

// Each task its own script (a route keyed by the marker in its prompt): write a file, then answer.
const args = ["--script", join(work, "main.json")];
writeFileSync(join(work, "main.json"), JSON.stringify([]));
const lines = [];
for (let k = 1; k <= tasks; k++) {
  const marker = `<bench-task-${String(k).padStart(3, "0")}>`; // no marker inside another
  const script = [
    { kind: "reply", text: `Writing notes-${k}.txt.`, chunk_delay_ms: 20, tool_calls: [{ id: `call_${k}`, name: "write_file", arguments: JSON.stringify({ path: `notes-${k}.txt`, content: `note ${k}\n`.repeat(50) }) }] },
    { kind: "reply", text: `Wrote notes-${k}.txt.`, chunk_delay_ms: 20 },
  ];
  const path = join(work, `route-${k}.json`);
  writeFileSync(path, JSON.stringify(script));
  args.push("--route", `${marker}=${path}`);
  lines.push(JSON.stringify({ repo: repos[k % repos.length], prompt: `Write the notes file (${marker})`, mode: "full-auto", checks: [] }));
}
const file = join(work, "tasks.jsonl");
writeFileSync(file, lines.join("\n") + "\n");

const mock = spawn(bin("bosun-mock-model"), args, { stdio: ["ignore", "pipe", "inherit"] });
const [first] = await once(createInterface({ input: mock.stdout }), "line");
const url = /^listening (\S+)/.exec(first)[1];
mkdirSync(home, { recursive: true });
writeFileSync(join(home, "config.toml"), `default_provider = "mock"\n\n[providers.mock]\napi = "openai-chat"\nbase_url = "${url}/v1"\nmodel = "bench"\n`);

const driver = await startDriver({ env: { BOSUN_HOME: home } });
const app = await openSession(driver.url, bin("bosun-app"));
try {
  await waitFor("the app", () => app.find(".sidebar"));
  const withView = process.env.BENCH_VIEW !== "none";
  if (withView) {
    await app.run("document.querySelector('[data-testid=batch-button]').click();");
    await waitFor("the Batch view", () => app.find('[data-testid="batch-view"]'));
  }
  // Without the view, the page asks for the batch's status itself, twice a second.
  const status = async () => {
    if (withView) {
      return app.run(`return { finished: document.querySelector('[data-testid=batch-status]')?.dataset.status === 'finished',
        rows: [...document.querySelectorAll('[data-testid=batch-item]')].map((r) => r.dataset.status) };`);
    }
    return app.run(`const id = window.__batchId; if (!id) return { finished: false, rows: [] };
      if (!window.__polling) { window.__polling = true; window.__TAURI_INTERNALS__.invoke('batch_status', { id })
        .then((v) => (window.__seen = v)).finally(() => setTimeout(() => (window.__polling = false), 500)); }
      const v = window.__seen; return v ? { finished: v.batch.status === 'finished', rows: v.items.map((i) => i.task?.status ?? i.state) } : { finished: false, rows: [] };`);
  };
  // The page's own view of its main thread: how late a 10 ms timer fires (a stall delays it).
  await app.run(`
    window.__bench = { maxGap: 0, frames: 0, last: performance.now() };
    setInterval(() => { const t = performance.now(); const g = t - __bench.last - 10;
      if (g > __bench.maxGap) __bench.maxGap = g; __bench.last = t; __bench.frames++; }, 10);`);
  const started = performance.now();
  await app.run(
    "window.__TAURI_INTERNALS__.invoke('batch_start', { request: { file: arguments[0], concurrency: arguments[1] } }).then((id) => (window.__batchId = id), (e) => (window.__batchError = e));",
    file,
    concurrency,
  );
  const firstRow = await waitFor("the table", async () => ((await status()).rows.length === tasks ? performance.now() : null), 60_000, 20);
  let statuses = [];
  await waitFor("the batch to finish", async () => {
    const err = await app.run("return window.__batchError ? JSON.stringify(window.__batchError) : null;");
    if (err) throw new Error(`batch_start refused: ${err}`);
    const s = await status();
    statuses = s.rows;
    return s.finished;
  }, 600_000, 20);
  const done = performance.now();
  const completed = statuses.filter((s) => s === "completed").length;
  const page = await app.run("return { maxGap: __bench.maxGap, frames: __bench.frames };");
  const seconds = (done - started) / 1000;
  console.log(`tasks / at once:                       ${tasks} / ${concurrency}${withView ? "" : " (Batch view closed)"}`);
  console.log(`completed (as the table shows):        ${completed} of ${statuses.length}${completed < statuses.length ? ` (${[...new Set(statuses)].join(", ")})` : ""}`);
  console.log(`${withView ? "table on screen" : "items read"} after start:           ${(firstRow - started).toFixed(0)} ms`);
  console.log(`start → finished on screen:            ${(seconds * 1000).toFixed(0)} ms`);
  console.log(`tasks per second:                      ${(tasks / Math.max(seconds, 0.001)).toFixed(2)}`);
  console.log(`longest main-thread stall:             ${page.maxGap.toFixed(1)} ms (a 10 ms timer, ${page.frames} ticks)`);
} finally {
  await app.close();
  await driver.stop();
  mock.kill("SIGTERM");
  rmSync(work, { recursive: true, force: true });
}
