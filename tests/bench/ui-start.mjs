// Benchmark: the first task on a repository, started from the real app window. Picks the
// repository in the New task form, waits (3 s by default: the user typing the prompt, while the
// app prepares the worktree), presses Start, and prints the time from Start to the first model
// request — once with the wait and once starting at once — next to `git worktree add` of the same
// repository. Figures, not a test.
//
// Run (after building ui/dist, bosun-app with --features bosun-app/custom-protocol, bosun and
// bosun-mock-model):  xvfb-run -a -s "-screen 0 1280x800x24" node tests/bench/ui-start.mjs [FILES] [WAIT_MS]
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { bin, startMockModel } from "../e2e/support.mjs";
import { openSession, startDriver, waitFor } from "../e2e/webdriver.mjs";

const files = Number(process.argv[2] ?? 20_000);
const waitMs = Number(process.argv[3] ?? 3_000);
const work = mkdtempSync(join(tmpdir(), "bosun-bench-start-"));

/** A repository of `files` small files in 100 directories, one commit. */
function generate(dir) {
  execFileSync("git", ["init", "-q", "-b", "main", dir]);
  for (let d = 0; d < 100; d++) mkdirSync(join(dir, `d${d}`), { recursive: true });
  for (let i = 0; i < files; i++) writeFileSync(join(dir, `d${i % 100}`, `f${i}.txt`), `file ${i}\n`.repeat(20));
  execFileSync("git", ["-C", dir, "add", "-A"]);
  execFileSync("git", ["-C", dir, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "generated"]);
}

const ms = (t) => `${t.toFixed(0).padStart(7)} ms`;

async function firstRequestAfterStart(label, wait) {
  const home = join(work, `home-${label}`);
  const repo = join(work, `repo-${label}`);
  generate(repo);
  const plain = join(work, `plain-${label}`);
  let t = performance.now();
  execFileSync("git", ["-C", repo, "worktree", "add", "-q", "--detach", plain, "HEAD"]);
  const gitAdd = performance.now() - t;
  execFileSync("git", ["-C", repo, "worktree", "remove", "--force", plain]);

  const mockDir = join(work, `mock-${label}`);
  mkdirSync(mockDir, { recursive: true });
  const mock = await startMockModel(mockDir, [{ kind: "reply", text: "ok" }]);
  const driver = await startDriver({ env: { BOSUN_HOME: home } });
  const app = await openSession(driver.url, bin("bosun-app"));
  try {
    await waitFor("the app", () => app.find(".sidebar"));
    await app.click(await waitFor("New task", () => app.find("[data-new-task-button]")));
    const field = (name) => waitFor(name, () => app.find(`form[data-new-task] [name="${name}"]`));
    const fill = async (name, text) => {
      const el = await field(name);
      await app.clear(el);
      if (text) await app.type(el, text);
    };
    await fill("repo", repo);
    await fill("base_url", `${mock.url}/v1`);
    await fill("model", "bench");
    await fill("api_key_env", "");
    await app.type(await field("prompt"), "say ok");
    await sleep(wait);
    const rec = join(mockDir, "rec.jsonl");
    t = performance.now();
    await app.type(await field("prompt"), "\uE009\uE007\uE000");
    await waitFor("the first model request", () => existsSync(rec) && readFileSync(rec, "utf8").length > 0, 600_000, 5);
    const started = performance.now() - t;
    console.log(`${label.padEnd(34)} Start → first model request ${ms(started)}  (${(started / gitAdd).toFixed(2)}× git worktree add, ${ms(gitAdd)})`);
  } finally {
    await app.close();
    await driver.stop();
    mock.stop();
  }
}

try {
  console.log(`repositories of ${files} files; the form open ${waitMs} ms before Start`);
  await firstRequestAfterStart(`after ${waitMs / 1000} s in the form`, waitMs);
  await firstRequestAfterStart("Start at once", 0);
} finally {
  if (!process.env.BENCH_KEEP) rmSync(work, { recursive: true, force: true });
  else console.log(`kept ${work}`);
}
