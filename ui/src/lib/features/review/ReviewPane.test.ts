import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { flushSync, mount, unmount } from "svelte";
import { afterEach, describe, expect, it } from "vitest";
import type { Review } from "../../bindings/Review";
import type { TaskRow } from "../../bindings/TaskRow";
import { taskRow } from "../../../test/rows";
import ReviewPane from "./ReviewPane.svelte";
import { libDiff, readmeFile, sampleReview } from "./fixtures";

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = "";
  clearMocks();
});

const task: TaskRow = taskRow({
  repo: "/work/acme",
  prompt: "Rename total",
  summary: "Done.",
  finished_at: "2026-11-30T03:01:00.000Z",
  base_commit: "abc123",
  branch: "bosun/t1",
  worktree: "/wt/t1",
  tool_calls: 2,
  last_seq: 20,
});

async function until<T>(found: () => T | null | undefined): Promise<T> {
  for (let i = 0; i < 200; i++) {
    flushSync();
    const v = found();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error("never appeared");
}

/** The review pane against a scripted backend that records what it was asked. */
function render(start: Review = sampleReview()) {
  const calls: [string, Record<string, unknown>][] = [];
  let review = start;
  mockIPC((cmd, args) => {
    const a = (args ?? {}) as Record<string, unknown>;
    if (cmd !== "subscribe_task" && cmd !== "unsubscribe") calls.push([cmd, a]);
    switch (cmd) {
      case "subscribe_task":
        return 1;
      case "unsubscribe":
        return true;
      case "review_get":
        return review;
      case "review_file":
        return a.path === "src/lib.rs" ? libDiff() : { file: readmeFile(), new_text: "# Acme\nSums numbers.\n" };
      case "review_verdict": {
        const next = structuredClone(review);
        for (const f of next.files) {
          if (a.path !== null && f.path !== a.path) continue;
          for (const h of f.hunks) if (a.hunks === null || (a.hunks as string[]).includes(h.id)) h.state = a.verdict === "accept" ? "accepted" : "rejected";
        }
        review = { ...next, undo: "accept 1 hunk of src/lib.rs" };
        return review;
      }
      case "review_comment":
        review = {
          ...review,
          comments: [
            ...review.comments,
            { id: 30, path: a.path as string, start_line: a.startLine as number, end_line: a.endLine as number, quote: "", body: a.body as string, created_at: "", resolved: false },
          ],
        };
        return review;
      case "review_request_changes":
        return "t1";
      case "review_timeline":
        return [
          { n: 1, commit: "c1", files: ["README.md"], provenance: { checkpoint: 1, call_id: "call_1", summary: "write_file README.md" }, created_at: "2026-11-30T03:00:30.000Z" },
        ];
      case "review_diff": {
        // Comparing checkpoints lists files as the review does: a large one without its lines.
        const big = { ...readmeFile(false), large: true };
        return [big];
      }
      case "review_diff_file":
        // Opened on demand: the same file with its lines.
        return { file: { ...readmeFile(), large: true } };
    }
    throw new Error(`unexpected ${cmd}`);
  });
  const target = document.createElement("div");
  document.body.appendChild(target);
  const requested: string[] = [];
  const shown: number[] = [];
  app = mount(ReviewPane, {
    target,
    props: { task, onrequested: () => requested.push("yes"), onshowstep: (seq: number) => shown.push(seq) },
  });
  flushSync();
  return { target, calls, requested, shown };
}

const press = (key: string, shiftKey = false) => {
  window.dispatchEvent(new KeyboardEvent("keydown", { key, shiftKey, bubbles: true }));
  flushSync();
};

describe("the review pane", () => {
  it("lists the changed files with status, counts and state, and opens the first", async () => {
    const { target } = render();
    const rows = await until(() => {
      const r = [...target.querySelectorAll<HTMLElement>('[data-testid="review-file"]')];
      return r.length === 2 ? r : null;
    });
    expect(rows.map((r) => [r.dataset.path, r.querySelector(".status")?.textContent, r.dataset.state])).toEqual([
      ["README.md", "A", "unreviewed"],
      ["src/lib.rs", "M", "unreviewed"],
    ]);
    await until(() => target.querySelector('[data-testid="diff-line"][data-new-line="2"]'));
    expect(target.querySelector('[data-testid="file-summary"]')?.getAttribute("data-path")).toBe("README.md");
  });

  it("moves with j and n, accepts with a and rejects with r, going on to the next unreviewed hunk", async () => {
    const { target, calls } = render();
    await until(() => target.querySelector('[data-testid="diff-line"][data-new-line="2"]'));
    press("j");
    await until(() => target.querySelector('[data-hunk-id="lib-1"][data-testid="hunk"]'));
    expect(target.querySelector('[data-testid="hunk"].current')?.getAttribute("data-hunk-id")).toBe("lib-1");
    press("a");
    await until(() => target.querySelector('[data-testid="hunk"][data-hunk-id="lib-1"][data-state="accepted"]'));
    expect(calls.find((c) => c[0] === "review_verdict")?.[1]).toEqual({ taskId: "t1", verdict: "accept", path: "src/lib.rs", hunks: ["lib-1"] });
    expect(target.querySelector('[data-testid="hunk"].current')?.getAttribute("data-hunk-id")).toBe("lib-2");
    press("r");
    await until(() => target.querySelector('[data-testid="hunk"][data-hunk-id="lib-2"][data-state="rejected"]'));
    expect(target.querySelector('[data-testid="undo"]')).not.toBeNull();
  });

  it("comments with c on the current hunk and sends the open comments with Request changes", async () => {
    const { target, calls, requested } = render();
    await until(() => target.querySelector('[data-testid="diff-line"][data-new-line="2"]'));
    press("j");
    await until(() => target.querySelector('[data-testid="hunk"][data-hunk-id="lib-1"]'));
    const button = target.querySelector<HTMLButtonElement>('[data-testid="request-changes"]')!;
    expect(button.disabled).toBe(true);
    press("c");
    const box = await until(() => target.querySelector<HTMLTextAreaElement>('[data-testid="comment-box"]'));
    // Typing in the box is not a command.
    box.dispatchEvent(new KeyboardEvent("keydown", { key: "a", bubbles: true }));
    box.value = "Keep the old name as an alias";
    box.dispatchEvent(new Event("input", { bubbles: true }));
    flushSync();
    target.querySelector<HTMLButtonElement>('[data-testid="comment-save"]')!.click();
    await until(() => target.querySelector('[data-testid="comment"]'));
    expect(calls.filter((c) => c[0] === "review_verdict")).toEqual([]);
    expect(calls.find((c) => c[0] === "review_comment")?.[1]).toEqual({
      taskId: "t1",
      path: "src/lib.rs",
      startLine: 5,
      endLine: 5,
      body: "Keep the old name as an alias",
    });
    expect(button.textContent).toBe("Request changes (1)");
    button.click();
    await until(() => requested.length > 0);
    expect(calls.some((c) => c[0] === "review_request_changes")).toBe(true);
  });

  it("accepts everything with Accept all, and jumps to a hunk's step in the timeline", async () => {
    const { target, calls, shown } = render();
    await until(() => target.querySelector('[data-testid="diff-line"][data-new-line="2"]'));
    target.querySelector<HTMLButtonElement>('[data-testid="accept-all"]')!.click();
    await until(() => calls.some((c) => c[0] === "review_verdict"));
    expect(calls.find((c) => c[0] === "review_verdict")?.[1]).toEqual({ taskId: "t1", verdict: "accept", path: null, hunks: null });
    target.querySelector<HTMLElement>('[data-testid="review-file"][data-path="src/lib.rs"]')!.click();
    const link = await until(() => target.querySelector<HTMLButtonElement>('[data-testid="hunk"][data-hunk-id="lib-1"] [data-testid="show-in-timeline"]'));
    link.click();
    expect(shown).toEqual([6]);
  });

  it("shows a large file as a summary until it is opened anyway", async () => {
    const review = sampleReview();
    review.files[0].large = true;
    const { target, calls } = render(review);
    const open = await until(() => target.querySelector<HTMLButtonElement>('[data-testid="open-anyway"]'));
    expect(calls.some((c) => c[0] === "review_file")).toBe(false);
    open.click();
    await until(() => target.querySelector('[data-testid="diff-line"][data-new-line="2"]'));
  });

  it("holds a large file when comparing checkpoints and opens its lines on demand", async () => {
    const { target, calls } = render();
    await until(() => target.querySelector('[data-testid="diff-line"][data-new-line="2"]'));
    target.querySelector<HTMLButtonElement>('[data-testid="checkpoints-open"]')!.click();
    const row = await until(() => target.querySelector<HTMLButtonElement>('[data-testid="checkpoint"][data-n="1"] .row'));
    row.click();
    flushSync();
    target.querySelector<HTMLButtonElement>('[data-testid="checkpoint-compare"]')!.click();
    const note = await until(() => target.querySelector('[data-testid="compare-large"]'));
    expect(calls.find((c) => c[0] === "review_diff")?.[1]).toEqual({ taskId: "t1", from: 0, to: null });
    expect(note.textContent).toContain("README.md is large");
    expect(target.querySelector('[data-testid="diff-line"]')).toBeNull();
    target.querySelector<HTMLButtonElement>('[data-testid="compare-open"]')!.click();
    await until(() => target.querySelector('[data-testid="diff-line"][data-new-line="2"]'));
    expect(calls.find((c) => c[0] === "review_diff_file")?.[1]).toEqual({ taskId: "t1", from: 0, to: null, path: "README.md" });
  });
});
