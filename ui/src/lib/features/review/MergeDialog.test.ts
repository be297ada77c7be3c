import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { flushSync, mount, unmount } from "svelte";
import { afterEach, describe, expect, it } from "vitest";
import MergeDialog from "./MergeDialog.svelte";
import { sampleReview } from "./fixtures";

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

const outcome = {
  branch: "main",
  created: false,
  commits: ["0123456789abcdef0123"],
  files: 2,
  hunks: 3,
  left_out: 0,
  checked_out: false,
  worktree: "/wt/t1",
  worktree_bytes: 5 * 1024 * 1024,
};

function render() {
  const calls: [string, unknown][] = [];
  let conflicted = false;
  mockIPC((cmd, args) => {
    calls.push([cmd, args]);
    switch (cmd) {
      case "list_branches":
        return { current: "main", names: ["dev", "main"] };
      case "review_merge_message":
        return "Rename total to sum_all\n\nAsked: Rename total";
      case "review_merge":
        if (!conflicted) {
          conflicted = true;
          throw { code: "merge_conflict", message: "main moved since the task started and src/lib.rs conflicts: rebase the task onto main first" };
        }
        return outcome;
      case "review_rebase":
        return sampleReview();
      case "review_remove_worktree":
        return 5 * 1024 * 1024;
    }
    throw new Error(`unexpected ${cmd}`);
  });
  const target = document.createElement("div");
  document.body.appendChild(target);
  const closed: string[] = [];
  app = mount(MergeDialog, {
    target,
    props: { taskId: "t1", repo: "/work/acme", review: sampleReview(), onreview: () => {}, onclose: () => closed.push("x") },
  });
  flushSync();
  return { target, calls, closed };
}

describe("the merge dialog", () => {
  it("prefills the squash message and merges into the task's base branch", async () => {
    const { target, calls } = render();
    const message = await until(() => {
      const m = target.querySelector<HTMLTextAreaElement>('[data-testid="merge-message"]');
      return m && m.value !== "" ? m : null;
    });
    expect(message.value).toBe("Rename total to sum_all\n\nAsked: Rename total");
    const options = await until(() => {
      const o = [...target.querySelectorAll('[data-testid="merge-target"] option')].map((x) => x.textContent);
      return o.length === 3 ? o : null;
    });
    expect(options).toEqual(["main (the task's base)", "dev", "New branch…"]);
    message.value = "Rename total";
    message.dispatchEvent(new Event("input", { bubbles: true }));
    flushSync();
    target.querySelector<HTMLButtonElement>('[data-testid="merge-confirm"]')!.click();
    await until(() => target.querySelector('[data-code="merge_conflict"]'));
    expect(calls.find((c) => c[0] === "review_merge")?.[1]).toEqual({
      taskId: "t1",
      request: { mode: "squash", message: "Rename total" },
    });
  });

  it("on a conflict says why and offers to rebase onto the branch, then merges", async () => {
    const { target, calls } = render();
    await until(() => target.querySelector<HTMLTextAreaElement>('[data-testid="merge-message"]')?.value);
    target.querySelector<HTMLButtonElement>('[data-testid="merge-confirm"]')!.click();
    const problem = await until(() => target.querySelector('[data-code="merge_conflict"]'));
    expect(problem.textContent).toContain("src/lib.rs conflicts");
    const rebase = problem.querySelector<HTMLButtonElement>('[data-testid="merge-rebase"]')!;
    expect(rebase.textContent).toBe("Rebase onto main");
    rebase.click();
    await until(() => target.querySelector('[data-testid="rebased"]'));
    expect(calls.find((c) => c[0] === "review_rebase")?.[1]).toEqual({ taskId: "t1", onto: null });
    expect(target.querySelector('[data-code="merge_conflict"]')).toBeNull();

    target.querySelector<HTMLButtonElement>('[data-testid="merge-confirm"]')!.click();
    const result = await until(() => target.querySelector('[data-testid="merge-result"]'));
    expect(result.textContent).toContain("One commit on main");
    expect(result.textContent).toContain("0123456789");
    const remove = target.querySelector<HTMLButtonElement>('[data-testid="remove-worktree"]')!;
    expect(remove.textContent?.trim()).toBe("Remove worktree (5.0 MB)");
    remove.click();
    await until(() => target.querySelector('[data-testid="worktree-removed"]'));
  });

  it("merges into a new branch created from the task's base", async () => {
    const { target, calls } = render();
    await until(() => target.querySelectorAll('[data-testid="merge-target"] option').length === 3);
    const select = target.querySelector<HTMLSelectElement>('[data-testid="merge-target"]')!;
    select.value = select.options[2].value;
    select.dispatchEvent(new Event("change", { bubbles: true }));
    flushSync();
    const name = target.querySelector<HTMLInputElement>('[data-testid="merge-new-branch"]')!;
    name.value = "feature/sum";
    name.dispatchEvent(new Event("input", { bubbles: true }));
    target.querySelector<HTMLInputElement>('input[value="per_step"]')!.click();
    flushSync();
    expect(target.querySelector('[data-testid="merge-confirm"]')?.textContent?.trim()).toBe("Merge into feature/sum");
    target.querySelector<HTMLButtonElement>('[data-testid="merge-confirm"]')!.click();
    await until(() => calls.some((c) => c[0] === "review_merge"));
    expect(calls.find((c) => c[0] === "review_merge")?.[1]).toEqual({ taskId: "t1", request: { into: "feature/sum", mode: "per_step" } });
  });
});
