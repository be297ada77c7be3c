import { describe, expect, it } from "vitest";
import { ev, sampleTask } from "../../test/events";
import { applyEvents, emptyTimeline } from "./timeline";

describe("a task continued after it finished", () => {
  it("runs again on task_resumed, shows the follow-up, and keeps counting the cost from before", () => {
    const done = applyEvents(emptyTimeline(), sampleTask());
    expect(done.status).toBe("completed");
    const before = done.usage.costUsd;

    const again = applyEvents(done, [
      ev(14, { type: "task_resumed", kind: "follow_up", restored_files: [] }),
      ev(15, { type: "user_message", text: "Now in French" }),
    ]);
    expect(again.status).toBe("running");
    expect(again.finishedAt).toBeNull();
    expect(again.items.at(-1)).toMatchObject({ kind: "user", text: "Now in French" });

    const finished = applyEvents(again, [
      ev(16, { type: "assistant_message", text: "Bonjour !" }),
      // The continuation's budget counts from zero: its total is this response alone.
      ev(17, {
        type: "usage",
        model: "mock-model",
        input_tokens: 100,
        output_tokens: 10,
        cached_input_tokens: 0,
        cache_write_tokens: 0,
        cache_write_1h_tokens: 0,
        reasoning_tokens: 0,
        cost_usd: 0.001,
        total_cost_usd: 0.001,
        priced: true,
      }),
      ev(18, { type: "task_finished", status: "completed", summary: "Bonjour !", checks: [] }),
    ]);
    expect(finished.status).toBe("completed");
    expect(finished.usage.costUsd).toBeCloseTo(before + 0.001);
    expect(finished.items.filter((i) => i.kind === "finished")).toHaveLength(2);
  });
});
