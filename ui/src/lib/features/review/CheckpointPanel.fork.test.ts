import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { flushSync, mount, unmount } from "svelte";
import { afterEach, describe, expect, it } from "vitest";
import CheckpointPanel from "./CheckpointPanel.svelte";

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = "";
  clearMocks();
});

describe("the checkpoint panel", () => {
  it("forks from a checkpoint or from the base", async () => {
    mockIPC((cmd) => {
      if (cmd === "review_timeline")
        return [
          { n: 1, commit: "c1", created_at: "2026-11-30T03:15:01.000Z", files: ["a"], provenance: { tool: "write_file", summary: "write_file a" } },
          { n: 2, commit: "c2", created_at: "2026-11-30T03:15:02.000Z", files: ["a"], provenance: { tool: "edit_file", summary: "edit_file a" } },
        ];
      throw new Error(`unexpected ${cmd}`);
    });
    const forks: number[] = [];
    const target = document.createElement("div");
    document.body.appendChild(target);
    app = mount(CheckpointPanel, { target, props: { taskId: "t1", onclose: () => {}, oncompare: () => {}, onrestored: () => {}, onfork: (n: number) => forks.push(n) } });
    for (let i = 0; i < 50 && !target.querySelector('[data-n="2"]'); i++) {
      await new Promise((r) => setTimeout(r, 10));
      flushSync();
    }
    target.querySelector<HTMLButtonElement>('[data-n="2"] [data-testid="checkpoint-fork"]')!.click();
    target.querySelector<HTMLButtonElement>('[data-testid="checkpoint-fork-base"]')!.click();
    expect(forks).toEqual([2, 0]);
  });
});
