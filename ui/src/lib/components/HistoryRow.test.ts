import { flushSync, mount, unmount } from "svelte";
import { afterEach, describe, expect, it } from "vitest";
import { taskRow } from "../../test/rows";
import HistoryRow from "./HistoryRow.svelte";

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = "";
});

function render(task: ReturnType<typeof taskRow>): HTMLElement {
  const target = document.createElement("div");
  document.body.appendChild(target);
  app = mount(HistoryRow, { target, props: { task, onopen: () => {} } });
  flushSync();
  return target;
}

describe("HistoryRow", () => {
  it("badges an imported session with the agent it came from", () => {
    const target = render(taskRow({ id: "cc-1", source: "claude-code", repo: "/home/dev/shop" }));
    const badge = target.querySelector<HTMLElement>('[data-testid="history-source"]');
    expect(badge?.textContent).toBe("Claude Code");
    expect(badge?.dataset.source).toBe("claude-code");
    expect(target.querySelector(".where")?.textContent).toContain("Claude Code · shop");
  });

  it("shows no badge for Bosun's own tasks", () => {
    const target = render(taskRow({ id: "t1" }));
    expect(target.querySelector('[data-testid="history-source"]')).toBeNull();
  });
});
