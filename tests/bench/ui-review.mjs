// Benchmark: the review screen of a task that changed CHANGED files of a FILES-file repository.
// Prints how long the real app takes to list the files, show the first file's diff and open the
// 1,000th file, the longest main-thread stall meanwhile (how late a 10 ms timer in the page
// fired), and next to them `bosun review --json`, `git diff --stat` and `git diff` between the
// same two trees (the task's base commit and its latest checkpoint). Figures, not a test.
//
// Run (after building ui/dist, bosun-app with --features bosun-app/custom-protocol, bosun and
// bosun-mock-model):
//   xvfb-run -a -s "-screen 0 1280x800x24" node tests/bench/ui-review.mjs [FILES] [CHANGED]
// FILES defaults to 20,000 and CHANGED to 2,000 (the figure: 100000 2000). A 100,000-file
// repository made by `bosun bench checkpoint` (/var/tmp/bosun-bench/repo-100000) is cloned
// rather than generated when it exists.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bin, requireBinaries, startMockModel } from "../e2e/support.mjs";
import { openSession, startDriver, waitFor } from "../e2e/webdriver.mjs";

const files = Number(process.argv[2] ?? 20_000);
const changed = Math.min(files, Number(process.argv[3] ?? 2_000));
requireBinaries("bosun-app", "bosun", "bosun-mock-model");
const work = mkdtempSync(join(process.env.BENCH_TMP ?? tmpdir(), "bosun-bench-review-"));
const home = join(work, "home");
const repo = join(work, "repo");
const shared = `/var/tmp/bosun-bench/repo-${files}`;

const env = { ...process.env, GIT_AUTHOR_NAME: "b", GIT_AUTHOR_EMAIL: "b@b", GIT_COMMITTER_NAME: "b", GIT_COMMITTER_EMAIL: "b@b" };
const git = (...args) => execFileSync("git", ["-C", repo, ...args], { env, encoding: "utf8", maxBuffer: 1 << 30 });
/** Milliseconds `run` takes. */
const timed = (run) => {
  const t = performance.now();
  run();
  return performance.now() - t;
};
const ms = (v) => `${v.toFixed(0)} ms`;

let prepared = performance.now();
if (existsSync(`${shared}.ready`)) {
  // Its own clone (others use the shared one): one branch, the generated commit.
  execFileSync("git", ["clone", "-q", "--local", "--single-branch", "--branch", "master", shared, repo], { env });
} else {
  // 100 files per directory, 20 lines each.
  execFileSync("git", ["init", "-q", "-b", "main", repo]);
  for (let i = 0; i < files; i++) {
    const dir = join(repo, `d${String(Math.floor(i / 10_000)).padStart(2, "0")}`, `d${String(Math.floor(i / 100) % 100).padStart(2, "0")}`);
    if (i % 100 === 0) mkdirSync(dir, { recursive: true });
    const lines = Array.from({ length: 20 }, (_, l) => `file ${i} line ${l}: lorem ipsum dolor sit amet`);
    writeFileSync(join(dir, `f${String(i).padStart(6, "0")}.txt`), lines.join("\n") + "\n");
  }
  git("add", "-A");
  git("commit", "-qm", "generated");
}
const base = git("rev-parse", "HEAD").trim();
prepared = performance.now() - prepared;

// One run_command edits every (FILES/CHANGED)th file: line 4 changes, a line is added after line 12.
const every = Math.max(1, Math.floor(files / changed));
const command = `git ls-files | awk 'NR % ${every} == 1' | head -n ${changed} | xargs sed -i -e '4s/lorem/LOREM/' -e '12a\\
an added line'`;
const script = [
  { kind: "reply", text: `Editing ${changed} files.`, tool_calls: [{ id: "call_1", name: "run_command", arguments: JSON.stringify({ command }) }] },
  { kind: "reply", text: "Done." },
];
const mock = await startMockModel(work, script);

let taskId;
const runMs = timed(() => {
  const out = execFileSync(
    bin("bosun"),
    ["run", "--json", "--mode", "full-auto", "--repo", repo, "--prompt", `edit ${changed} files`,
     "--api", "openai-chat", "--base-url", `${mock.url}/v1`, "--model", "bench"],
    { env: { ...process.env, BOSUN_HOME: home }, encoding: "utf8", maxBuffer: 1 << 30 },
  );
  taskId = JSON.parse(out.split("\n")[0]).task_id;
});
mock.stop();
const refs = git("for-each-ref", "--format=%(refname)", `refs/bosun/${taskId}/`).split("\n").filter(Boolean);
const latest = refs.sort((a, b) => Number(a.split("/").pop()) - Number(b.split("/").pop())).at(-1);
if (!latest) throw new Error(`no checkpoint under refs/bosun/${taskId}/`);
const stat = git("diff", "--shortstat", base, latest).trim();

const quiet = { env, stdio: ["ignore", "ignore", "inherit"], maxBuffer: 1 << 30 };
const gitStatMs = timed(() => execFileSync("git", ["-C", repo, "diff", "--stat", base, latest], quiet));
const gitDiffMs = timed(() => execFileSync("git", ["-C", repo, "diff", base, latest], quiet));
const review = (...more) => () =>
  execFileSync(bin("bosun"), ["review", taskId, "--json", ...more], { env: { ...process.env, BOSUN_HOME: home }, stdio: ["ignore", "ignore", "inherit"] });
const cliReviewMs = timed(review());
const cliLinesMs = timed(review("--lines"));

console.error(`task ${taskId} ran; opening the app`);
const driver = await startDriver({ env: { BOSUN_HOME: home } });
const app = await openSession(driver.url, bin("bosun-app"));
try {
  await waitFor("the app", () => app.find(".sidebar"));
  const skip = await app.find("[data-skip-setup]");
  if (skip) await app.click(skip);
  await app.click(await waitFor("the task", () => app.find(`.sidebar [data-task-id="${taskId}"]`), 60_000));
  await waitFor("the review tab", () => app.find('[data-testid="review-tab"]'));
  // In the page: the stall meter, and when each awaited element is first put in the document.
  await app.run(`
    window.__bench = { maxGap: 0, ticks: 0, last: performance.now(), seen: {} };
    setInterval(() => { const t = performance.now(); const g = t - __bench.last - 10;
      if (g > __bench.maxGap) __bench.maxGap = g; __bench.last = t; __bench.ticks++; }, 10);
    window.__watch = (name, css) => { const seen = new MutationObserver(() => {
      if (document.querySelector(css)) { __bench.seen[name] = performance.now(); seen.disconnect(); } });
      seen.observe(document.body, { childList: true, subtree: true }); };
    __watch("list", '[data-testid="review-file"]');
    __watch("diff", '[data-testid="diff-line"]');
    __bench.start = performance.now();
    document.querySelector('[data-testid="review-tab"]').click();`);
  const seen = (name) => app.run("return window.__bench.seen[arguments[0]] ?? null;", name);
  await waitFor("the file list", () => seen("list"), 300_000, 50);
  await waitFor("the first file's lines", () => seen("diff"), 300_000, 50);
  const listed = await app.count('[data-testid="review-file"]');
  const counted = await app.textOf('[data-testid="review-counts"]');

  // The 1,000th file: scroll the (virtualized) file list to its row, then click it.
  const nth = Math.min(1000, changed);
  const target = await waitFor(`row ${nth} of the file list`, () =>
    app.run(`
      const list = document.querySelector('[data-testid="review-file"]').closest('.viewport');
      const top = ${(nth - 1) * 24};
      list.scrollTop = top;
      list.dispatchEvent(new Event('scroll'));
      const slot = [...list.querySelectorAll('.slot')].find((s) => parseFloat(s.style.top) === top);
      return slot?.querySelector('[data-testid="review-file"]')?.dataset.path ?? null;`), 30_000, 50);
  await app.run(`
    const css = '.diff[data-path="' + CSS.escape(arguments[0]) + '"] [data-testid="diff-line"]';
    __watch("nth", css);
    __bench.nthStart = performance.now();
    document.querySelector('[data-testid="review-file"][data-path="' + CSS.escape(arguments[0]) + '"]').click();`, target);
  await waitFor(`file ${nth}'s lines`, () => seen("nth"), 120_000, 50);
  const page = await app.run("return window.__bench;");

  console.log(`repository:                              ${files.toLocaleString("en-US")} files (${ms(prepared)} to prepare)`);
  console.log(`task:                                    ${stat} (run with the CLI in ${ms(runMs)})`);
  console.log(`files listed on screen / counted:        ${listed} rows rendered (virtualized) / ${counted?.trim().replace(/\s+/g, " ")}`);
  console.log(`review tab → file list on screen:        ${ms(page.seen.list - page.start)}`);
  console.log(`review tab → first file's diff lines:    ${ms(page.seen.diff - page.start)}`);
  console.log(`click → file ${nth}'s diff lines:         ${ms(page.seen.nth - page.nthStart)} (${target})`);
  console.log(`longest main-thread stall:               ${page.maxGap.toFixed(1)} ms (a 10 ms timer, ${page.ticks} ticks)`);
  console.log(`bosun review --json (files, hunk headers): ${ms(cliReviewMs)}`);
  console.log(`bosun review --json --lines (every diff):  ${ms(cliLinesMs)}`);
  console.log(`git diff --stat base checkpoint:         ${ms(gitStatMs)}`);
  console.log(`git diff base checkpoint:                ${ms(gitDiffMs)}`);
} finally {
  await app.close();
  await driver.stop();
  rmSync(work, { recursive: true, force: true });
}
// Nothing is left to wait for (a kept-alive WebDriver connection would hold the process open).
process.exit(0);
