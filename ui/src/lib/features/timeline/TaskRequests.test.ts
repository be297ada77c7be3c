import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { flushSync, mount, unmount } from "svelte";
import { afterEach, describe, expect, it } from "vitest";
import type { TaskRequest } from "../../ipc/costs";
import TaskRequests from "./TaskRequests.svelte";

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = "";
  clearMocks();
});

const settle = () => new Promise((r) => setTimeout(r, 0));

const rows: TaskRequest[] = [
  {
    seq: 4,
    ts: "2026-12-01T10:00:00.000Z",
    model: "claude-sonnet-4-5",
    input_tokens: 100_000,
    cached_input_tokens: 1_000_000,
    cache_write_tokens: 40_000,
    cache_write_1h_tokens: 50_000,
    output_tokens: 20_000,
    reasoning_tokens: 0,
    cost_usd: 1.35,
    priced: true,
    rates: { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75, cache_write_1h: 6, reasoning: 15, source: "litellm 1.80.0", entry: "claude-sonnet-4-5", tier: "above_200k_tokens" },
    latency_ms: 2400,
  },
  {
    seq: 9,
    ts: "2026-12-01T10:01:00.000Z",
    model: "local-llm",
    input_tokens: 300,
    cached_input_tokens: 0,
    cache_write_tokens: 0,
    cache_write_1h_tokens: 0,
    output_tokens: 20,
    reasoning_tokens: 0,
    cost_usd: null,
    priced: false,
  },
];

describe("a task's requests", () => {
  it("lists each request with its token classes, rates, cost and latency, and an unpriced one as unpriced", async () => {
    const asked: unknown[] = [];
    mockIPC((cmd, args) => {
      if (cmd === "task_usage") return asked.push(args), rows;
      throw new Error(cmd);
    });
    const target = document.createElement("div");
    document.body.appendChild(target);
    app = mount(TaskRequests, { target, props: { taskId: "t1", responses: 2 } });
    await settle();
    flushSync();
    expect(asked).toEqual([{ taskId: "t1" }]);
    const trs = target.querySelectorAll('[data-testid="task-request"]');
    expect(trs.length).toBe(2);
    const cls = (k: string) => trs[0].querySelector(`[data-class="${k}"]`)?.textContent;
    expect([cls("input"), cls("cache_read"), cls("cache_write_5m"), cls("cache_write_1h"), cls("output"), cls("reasoning")]).toEqual(["100k", "1.0M", "40k", "50k", "20k", "0"]);
    expect(trs[0].querySelector('[data-testid="task-request-rates"]')?.textContent).toContain("3.00 · 15.00 · 0.300 · 3.75 · 6.00");
    expect(trs[0].textContent).toContain("above_200k_tokens");
    expect(trs[0].textContent).toContain("2.4 s");
    expect([...target.querySelectorAll('[data-testid="task-request-cost"]')].map((c) => c.textContent)).toEqual(["$1.35", "unpriced"]);
    expect(target.querySelector('[data-testid="task-requests-total"]')?.textContent).toBe("$1.35+");
  });
});
