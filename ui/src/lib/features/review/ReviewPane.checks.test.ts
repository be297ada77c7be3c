import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { flushSync, mount, unmount } from "svelte";
import { afterEach, describe, expect, it } from "vitest";
import type { ChecksReport } from "../../bindings/ChecksReport";
import type { Review } from "../../bindings/Review";
import { finished } from "../../../test/checks";
import { ev } from "../../../test/events";
import { taskRow } from "../../../test/rows";
import ReviewPane from "./ReviewPane.svelte";
import MergeDialog from "./MergeDialog.svelte";
import { libDiff, readmeFile, sampleReview } from "./fixtures";
import { runFromFinished } from "../../state/checks";

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = "";
  clearMocks();
});

async function until<T>(found: () => T | null | undefined, tries = 300): Promise<T> {
  for (let i = 0; i < tries; i++) {
    flushSync();
    const v = found();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error("never appeared");
}

const task = taskRow({ repo: "/work/acme", prompt: "Rename total", last_seq: 20 });
const testFails = finished({
  check_id: "g1",
  name: "test",
  status: "failed",
  scope: "accepted",
  summary: "1 test failed: lib::sums",
  failures: [
    { path: "src/lib.rs", line: 6, message: "lib::sums", before_task: false },
    { path: "src/lib.rs", line: 30, message: "lib::old_bug", before_task: true },
  ],
});
const blocked: ChecksReport = { tree: "tree1", checks: [testFails], blocked: true, stale: false };
const passing: ChecksReport = { tree: "tree2", checks: [finished({ check_id: "g2", name: "test", status: "passed", scope: "accepted" })], blocked: false, stale: false };

/** A review with README.md accepted, against a backend whose merge gate answers `runs` in turn. */
function render(last: ChecksReport | null, runs: ChecksReport[]) {
  const calls: [string, Record<string, unknown>][] = [];
  let review: Review = sampleReview({ counts: { files: 2, hunks: 3, accepted: 1, rejected: 0, unreviewed: 2, added: 6, removed: 2 } });
  review.files[0].hunks[0].state = "accepted";
  let report = last;
  let channel = 0;
  mockIPC((cmd, args) => {
    const a = (args ?? {}) as Record<string, unknown>;
    if (cmd !== "subscribe_task" && cmd !== "unsubscribe" && cmd !== "task_events") calls.push([cmd, a]);
    switch (cmd) {
      case "subscribe_task":
        channel = (a.channel as { id: number }).id;
        return 1;
      case "unsubscribe":
        return true;
      case "task_events":
        return [];
      case "review_get":
        return review;
      case "review_file":
        return a.path === "src/lib.rs" ? libDiff() : { file: readmeFile(), new_text: "# Acme\nSums numbers.\n" };
      case "review_verdict": {
        review = structuredClone(review);
        for (const f of review.files) for (const h of f.hunks) if (f.path === a.path && (a.hunks === null || (a.hunks as string[]).includes(h.id))) h.state = "accepted";
        if (report) report = { ...report, stale: true };
        return review;
      }
      case "review_checks":
        return report;
      case "review_run_checks": {
        // The run's events stream on the task's stream while it runs.
        const internals = (window as unknown as { __TAURI_INTERNALS__: { runCallback: (id: number, data: unknown) => void } }).__TAURI_INTERNALS__;
        const seq = 21;
        internals.runCallback(channel, {
          index: 0,
          message: {
            kind: "events",
            events: [
              ev(seq, { type: "check_started", check_id: "g1", name: "test", command: "cargo test", round: 0, scope: "accepted" }),
              ev(seq + 1, { type: "check_output_delta", check_id: "g1", stream: "stdout", chunk: "test lib::sums ... FAILED\n" }),
            ],
          },
        });
        const next = runs.shift()!;
        return new Promise((resolve) => setTimeout(() => ((report = next), resolve(next)), 150));
      }
    }
    throw new Error(`unexpected ${cmd}`);
  });
  const target = document.createElement("div");
  document.body.appendChild(target);
  app = mount(ReviewPane, { target, props: { task } });
  flushSync();
  return { target, calls };
}

const gateState = (root: Element) => root.querySelector<HTMLElement>('[data-testid="merge-checks"]')?.dataset.state;

describe("the merge gate in the review", () => {
  it("runs the checks of the accepted tree on opening when they never ran, streams them, and blocks the merge", async () => {
    const { target, calls } = render(null, [blocked]);
    await until(() => gateState(target) === "running");
    const live = await until(() => target.querySelector('[data-testid="merge-checks"] [data-testid="check-row"][data-status="running"]'));
    expect(live.querySelector('[role="log"]')).not.toBeNull();
    await until(() => gateState(target) === "blocked");
    expect(calls.filter((c) => c[0] === "review_run_checks")).toEqual([["review_run_checks", { taskId: "t1" }]]);
    expect(target.querySelector('[data-testid="merge-checks-line"]')?.textContent?.trim()).toBe("✗ Merge blocked: test fails on the merged tree");
    const row = target.querySelector('[data-testid="merge-checks"] [data-testid="check-row"]')!;
    expect([...row.querySelectorAll('[data-testid="check-failure"]')].map((f) => f.getAttribute("data-before-task"))).toEqual([null, "true"]);
    const merge = target.querySelector<HTMLButtonElement>('[data-testid="merge-open"]')!;
    expect(merge.textContent?.trim()).toBe("Merge blocked: test fails");
    expect(merge.dataset.blocked).toBe("true");
  });

  it("keeps a fresh report, and checks again (once) after a verdict changes the accepted tree", async () => {
    const { target, calls } = render(blocked, [passing]);
    await until(() => gateState(target) === "blocked");
    await new Promise((r) => setTimeout(r, 900));
    expect(calls.some((c) => c[0] === "review_run_checks")).toBe(false);
    (await until(() => target.querySelector<HTMLElement>('[data-testid="review-file"][data-path="src/lib.rs"]'))).click();
    const accept = await until(() => target.querySelector<HTMLButtonElement>('[data-hunk-id="lib-1"] [data-testid="hunk-accept"]'));
    accept.click();
    await until(() => gateState(target) === "passed");
    expect(calls.filter((c) => c[0] === "review_run_checks")).toHaveLength(1);
    expect(target.querySelector('[data-testid="merge-checks-line"]')?.textContent?.trim()).toBe("✓ checks pass on the merged tree");
    expect(target.querySelector('[data-testid="merge-open"]')?.textContent?.trim()).toBe("Merge…");
  });
});

describe("the merge dialog when checks fail", () => {
  function dialog(checksBlocked: boolean, mergeAnswers: (request: Record<string, unknown>) => unknown) {
    const calls: [string, Record<string, unknown>][] = [];
    mockIPC((cmd, args) => {
      const a = (args ?? {}) as Record<string, unknown>;
      calls.push([cmd, a]);
      if (cmd === "list_branches") return { current: "main", names: ["main"] };
      if (cmd === "review_merge_message") return "Rename total";
      if (cmd === "review_merge") return mergeAnswers(a.request as Record<string, unknown>);
      throw new Error(`unexpected ${cmd}`);
    });
    const target = document.createElement("div");
    document.body.appendChild(target);
    app = mount(MergeDialog, {
      target,
      props: { taskId: "t1", repo: "/work/acme", review: sampleReview(), checksBlocked, failing: checksBlocked ? [runFromFinished(testFails)] : [], onreview: () => {}, onclose: () => {} },
    });
    flushSync();
    return { target, calls };
  }
  const outcome = { branch: "main", created: false, commits: ["c1"], files: 1, hunks: 1, left_out: 0, checked_out: false, worktree: "/wt", worktree_bytes: 0 };
  const type = (el: HTMLTextAreaElement, value: string) => {
    el.value = value;
    el.dispatchEvent(new Event("input", { bubbles: true }));
    flushSync();
  };

  it("shows the failing check and merges only with a reason, sent as the override", async () => {
    const { target, calls } = dialog(true, () => outcome);
    await until(() => target.querySelector<HTMLTextAreaElement>('[data-testid="merge-message"]')?.value);
    const blockedBox = target.querySelector('[data-testid="merge-checks-blocked"]')!;
    expect(blockedBox.textContent).toContain("test fails with failures the base did not have");
    expect(blockedBox.querySelector('[data-testid="check-failure"]')?.textContent).toContain("lib::sums");
    const confirm = target.querySelector<HTMLButtonElement>('[data-testid="merge-confirm"]')!;
    expect(confirm.textContent?.trim()).toBe("Merge anyway into main");
    expect(confirm.disabled).toBe(true);
    const reason = target.querySelector<HTMLTextAreaElement>('[data-testid="merge-override-reason"]')!;
    type(reason, "   ");
    expect(confirm.disabled).toBe(true);
    type(reason, " flaky on CI, fixed next ");
    expect(confirm.disabled).toBe(false);
    confirm.click();
    await until(() => target.querySelector('[data-testid="merge-result"]'));
    expect(calls.find((c) => c[0] === "review_merge")?.[1]).toEqual({
      taskId: "t1",
      request: { mode: "squash", message: "Rename total", override_checks: "flaky on CI, fixed next" },
    });
  });

  it("a merge refused for failing checks offers the same override", async () => {
    const { target, calls } = dialog(false, (request) => {
      if (!request.override_checks) throw { code: "checks_failed", message: "test fails on the merged tree: lib::sums" };
      return outcome;
    });
    await until(() => target.querySelector<HTMLTextAreaElement>('[data-testid="merge-message"]')?.value);
    expect(target.querySelector('[data-testid="merge-override-reason"]')).toBeNull();
    target.querySelector<HTMLButtonElement>('[data-testid="merge-confirm"]')!.click();
    const problem = await until(() => target.querySelector('[data-testid="merge-error"][data-code="checks_failed"]'));
    expect(problem.textContent).toContain("test fails on the merged tree");
    type(target.querySelector<HTMLTextAreaElement>('[data-testid="merge-override-reason"]')!, "known failure");
    target.querySelector<HTMLButtonElement>('[data-testid="merge-confirm"]')!.click();
    await until(() => target.querySelector('[data-testid="merge-result"]'));
    expect(calls.filter((c) => c[0] === "review_merge").map((c) => (c[1].request as Record<string, unknown>).override_checks)).toEqual([undefined, "known failure"]);
  });
});
