import { emit } from "@tauri-apps/api/event";
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { flushSync, mount, unmount } from "svelte";
import { afterEach, describe, expect, it } from "vitest";
import type { BaseMoved } from "../../bindings/BaseMoved";
import type { Review } from "../../bindings/Review";
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

async function until<T>(found: () => T | null | undefined): Promise<T> {
  for (let i = 0; i < 200; i++) {
    flushSync();
    const v = found();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error("never appeared");
}

const settle = async () => {
  for (let i = 0; i < 5; i++) {
    await new Promise((r) => setTimeout(r, 10));
    flushSync();
  }
};

const task = taskRow({ repo: "/work/acme", prompt: "Rename total", last_seq: 20 });
const moved = (over: Partial<BaseMoved> = {}): BaseMoved => ({
  branch: "main",
  base_commit: "abc1234567890",
  tip: "def4567890123",
  ahead: 3,
  rewritten: false,
  ...over,
});

/** The review pane against a backend whose base branch is `now()` (null: where the task's base is). */
function render(start: Review, now: () => BaseMoved | null) {
  const calls: [string, Record<string, unknown>][] = [];
  let review = start;
  mockIPC(
    (cmd, args) => {
      const a = (args ?? {}) as Record<string, unknown>;
      calls.push([cmd, a]);
      switch (cmd) {
        case "subscribe_task":
          return 1;
        case "unsubscribe":
          return true;
        case "review_get":
          return review;
        case "review_file":
          return a.path === "src/lib.rs" ? libDiff() : { file: readmeFile(), new_text: "# Acme\nSums numbers.\n" };
        case "review_checks":
          return null;
        case "review_watch_base":
          return null;
        case "review_base_moved":
          return now();
        case "review_rebase":
          review = { ...review, base_commit: "def4567890123", base_moved: undefined };
          return review;
      }
      throw new Error(`unexpected ${cmd}`);
    },
    { shouldMockEvents: true },
  );
  const target = document.createElement("div");
  document.body.appendChild(target);
  app = mount(ReviewPane, { target, props: { task } });
  flushSync();
  return { target, calls };
}

const banner = (target: HTMLElement) => target.querySelector<HTMLElement>('[data-testid="base-moved"]');
const count = (calls: [string, unknown][], cmd: string) => calls.filter((c) => c[0] === cmd).length;

describe("the review's base branch banner", () => {
  it("says how far main moved and rebases onto it, after which it is gone", async () => {
    const { target, calls } = render(sampleReview({ base_moved: moved() }), () => null);
    const b = await until(() => banner(target));
    expect(b.querySelector('[data-testid="base-moved-text"]')?.textContent).toBe("main moved 3 commits since this task started");
    expect(calls.find((c) => c[0] === "review_watch_base")?.[1]).toEqual({ taskId: "t1" });
    b.querySelector<HTMLButtonElement>('[data-testid="base-moved-rebase"]')!.click();
    await until(() => target.querySelector('[data-testid="base-rebased"]'));
    expect(calls.filter((c) => c[0] === "review_rebase").map((c) => c[1])).toEqual([{ taskId: "t1", onto: "main" }]);
    expect(banner(target)).toBeNull();
    expect(target.querySelector('[data-testid="base-rebased"]')?.textContent).toContain("Rebased onto main");
  });

  it("appears when the app says the repository's branches changed, and only for this repository", async () => {
    let now: BaseMoved | null = null;
    const { target, calls } = render(sampleReview(), () => now);
    await until(() => target.querySelector('[data-testid="review-file"]'));
    await settle();
    expect(banner(target)).toBeNull();

    now = moved({ ahead: 1 });
    await emit("bosun://refs-changed", { repo: "/elsewhere" });
    await settle();
    expect(count(calls, "review_base_moved")).toBe(0);
    expect(banner(target)).toBeNull();

    await emit("bosun://refs-changed", { repo: "/work/acme" });
    const b = await until(() => banner(target));
    expect(b.textContent).toContain("main moved 1 commit since this task started");
    expect(count(calls, "review_base_moved")).toBe(1);

    // The user resets main back: the banner goes on the next change.
    now = null;
    await emit("bosun://refs-changed", { repo: "/work/acme" });
    await until(() => !banner(target));
  });

  it("looks again when the window comes back into focus", async () => {
    let now: BaseMoved | null = null;
    const { target } = render(sampleReview(), () => now);
    await until(() => target.querySelector('[data-testid="review-file"]'));
    now = moved({ ahead: 2 });
    window.dispatchEvent(new Event("focus"));
    const b = await until(() => banner(target));
    expect(b.dataset.ahead).toBe("2");
  });

  it("says when main was rewritten, and waits for a running task to stop", async () => {
    const { target } = render(sampleReview({ running: true, base_moved: moved({ ahead: 0, rewritten: true }) }), () => null);
    const b = await until(() => banner(target));
    expect(b.dataset.rewritten).toBe("true");
    expect(b.querySelector('[data-testid="base-moved-text"]')?.textContent).toBe(
      "main was rewritten since this task started: the task's base is no longer on it",
    );
    const button = b.querySelector<HTMLButtonElement>('[data-testid="base-moved-rebase"]')!;
    expect(button.disabled).toBe(true);
    expect(button.title).toContain("running");
  });
});
