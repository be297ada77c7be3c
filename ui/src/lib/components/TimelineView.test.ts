import { flushSync, mount, unmount } from "svelte";
import { afterEach, describe, expect, it } from "vitest";
import { ev, sampleTask } from "../../test/events";
import { applyEvents, emptyTimeline } from "../state/timeline";
import TimelineView from "./TimelineView.svelte";

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = "";
});

function render(events = sampleTask()) {
  const target = document.createElement("div");
  document.body.appendChild(target);
  const timeline = applyEvents(emptyTimeline(), events);
  app = mount(TimelineView, { target, props: { items: timeline.items } });
  flushSync();
  return target;
}

describe("the timeline", () => {
  it("shows a tool call with its command, status, duration and ANSI-coloured output", () => {
    const view = render();
    const card = view.querySelector('[data-tool="run_command"]');
    expect(card).not.toBeNull();
    expect(card?.getAttribute("data-status")).toBe("success");
    expect(card?.querySelector(".summary")?.textContent).toBe("printf 'hello\\n'");
    expect(card?.textContent).toContain("1.2 s");

    const lines = [...(card?.querySelectorAll('[role="log"] .line') ?? [])];
    expect(lines.map((l) => l.textContent)).toEqual(["hello", "plain"]);
    const green = lines[0].querySelector("span");
    expect(green?.getAttribute("style")).toContain("var(--ansi-2)");
    expect(lines[0].textContent).not.toContain("\u001b");
  });

  it("shows a provider fallback as one line naming who failed, why, and who takes over", () => {
    const reason = "claude returned 503 after 3 attempts: overloaded, try later";
    const view = render([ev(1, { type: "provider_fallback", from: "claude", to: "local", reason, model: "qwen2.5-coder:7b" })]);
    const line = view.querySelector('[data-testid="timeline-fallback"]');
    expect(line?.getAttribute("data-from")).toBe("claude");
    expect(line?.getAttribute("data-to")).toBe("local");
    expect(line?.getAttribute("title")).toBe(reason);
    expect(line?.textContent?.trim()).toBe("↷ claude failed (503: overloaded, try later); local (qwen2.5-coder:7b) takes over");

    const other = render([
      ev(1, { type: "provider_fallback", from: "a", to: "b", reason: "could not reach a after 2 attempts: connection refused\nmore", model: "" }),
    ]).querySelector('[data-testid="timeline-fallback"]');
    expect(other?.textContent?.trim()).toBe("↷ a failed (could not reach a after 2 attempts: connection refused); b takes over");
  });

  it("shows a nudge as one quiet line with the whole message on hover", () => {
    const message = "Do not ask the user: find out with the tools (read_file, search, list_dir) instead of asking.\n\nThe tools you have: read_file.";
    const view = render([ev(1, { type: "nudge", reason: "question", message })]);
    const line = view.querySelector('[data-testid="timeline-nudge"]');
    expect(line?.getAttribute("data-reason")).toBe("question");
    expect(line?.getAttribute("title")).toBe(message);
    expect(line?.textContent?.trim()).toBe(
      "↻ Nudged the model: it asked something it can find out itself — Do not ask the user: find out with the tools (read_file, search, list_dir) instead of asking.",
    );
  });

  it("shows the request's context in one line that expands to each file and why", () => {
    const view = render([
      ev(1, {
        type: "context_assembled",
        items: [
          { kind: "map", path: "pricing.py", reason: "defines `calc_total`, named in the prompt", tokens: 120 },
          { kind: "map", path: "invoice.py", reason: "ranked 2 by the map", tokens: 1430 },
        ],
        total_tokens: 1550,
        budget_tokens: 2000,
      }),
    ]);
    const line = view.querySelector<HTMLDetailsElement>('[data-testid="timeline-context"]');
    expect(line?.querySelector("summary")?.textContent?.replace(/\s+/g, " ").trim()).toBe(
      "◇ Context: map of 2 files, 1.6k tokens of 2.0k",
    );
    expect(line?.open).toBe(false);
    const rows = [...(line?.querySelectorAll("li") ?? [])].map((li) => li.textContent?.replace(/\s+/g, " ").trim());
    expect(rows).toEqual([
      "pricing.py defines `calc_total`, named in the prompt 120",
      "invoice.py ranked 2 by the map 1.4k",
    ]);
  });

  it("counts what Bosun remembers about the repository as memories", () => {
    const view = render([
      ev(1, {
        type: "context_assembled",
        items: [
          { kind: "memory", reason: "Convention (pinned): tabs, not spaces", tokens: 12 },
          { kind: "memory", reason: "Failed before: Tried “fix add”: checks failed", tokens: 20 },
        ],
        total_tokens: 32,
        budget_tokens: 0,
      }),
    ]);
    const line = view.querySelector<HTMLDetailsElement>('[data-testid="timeline-context"]');
    expect(line?.querySelector("summary")?.textContent?.replace(/\s+/g, " ").trim()).toMatch(/^◇ Context: 2 memories, 32 tokens/);
    const rows = [...(line?.querySelectorAll("li") ?? [])].map((li) => li.textContent?.replace(/\s+/g, " ").trim());
    expect(rows[0]).toBe("memory Convention (pinned): tabs, not spaces 12");
  });

  it("shows a compaction in one line that opens to what was masked and summarised", () => {
    const view = render([
      ev(1, {
        type: "context_compacted",
        tokens_before: 52000,
        tokens_after: 18000,
        window_tokens: 32768,
        reason: "near_window",
        masked: ["read_file src/a.py", "run_command cargo test"],
        summarised: ["user: Fix it", "assistant: read_file src/a.py"],
        summary: "- read src/a.py\n- tests fail in parse()",
      }),
    ]);
    const line = view.querySelector<HTMLDetailsElement>('[data-testid="timeline-compacted"]');
    expect(line?.querySelector("summary")?.textContent?.replace(/\s+/g, " ").trim()).toBe(
      "⇣ Context compacted: 52k → 18k tokens of a 33k window — 2 tool outputs masked, 2 messages summarised",
    );
    const masked = [...(line?.querySelectorAll('[data-list="masked"] li') ?? [])].map((li) => li.textContent);
    expect(masked).toEqual(["read_file src/a.py", "run_command cargo test"]);
    expect(line?.querySelector(".summary-text")?.textContent).toBe("- read src/a.py\n- tests fail in parse()");
  });

  it("pins a message and a tool output with their buttons, and shows what is pinned", () => {
    const events = sampleTask();
    const calls: Array<[unknown, boolean]> = [];
    const target = document.createElement("div");
    document.body.appendChild(target);
    const toolCall = events.find((e) => e.type === "tool_call_begin") as { call_id: string } | undefined;
    const pinEvent = ev(events.length + 1, {
      type: "context_pinned",
      target: { kind: "call", call_id: toolCall!.call_id },
      pinned: true,
      by: "app",
    });
    const timeline = applyEvents(emptyTimeline(), [...events, pinEvent]);
    expect(timeline.pins).toEqual([`call:${toolCall!.call_id}`]);
    app = mount(TimelineView, {
      target,
      props: { items: timeline.items, pins: timeline.pins, onpin: (t: unknown, p: boolean) => calls.push([t, p]) },
    });
    flushSync();
    const line = target.querySelector('[data-testid="timeline-pinned"]');
    expect(line?.textContent?.replace(/\s+/g, " ").trim()).toBe(`Pinned the output of call ${toolCall!.call_id}: compaction never drops it`);
    // The pinned output's button is pressed and unpins; the prompt's pins it.
    const outputPin = target.querySelector<HTMLButtonElement>(`[data-pin="call:${toolCall!.call_id}"]`)!;
    expect(outputPin.getAttribute("aria-pressed")).toBe("true");
    outputPin.click();
    const messagePin = target.querySelector<HTMLButtonElement>('[data-pin^="message:Say hello"]')!;
    expect(messagePin.getAttribute("aria-pressed")).toBe("false");
    messagePin.click();
    expect(calls[0]).toEqual([{ kind: "call", call_id: toolCall!.call_id }, false]);
    expect(calls[1][1]).toBe(true);
    expect((calls[1][0] as { kind: string }).kind).toBe("message");
  });

  it("offers no pin buttons for a task this app does not run, but still marks what is pinned", () => {
    const events = sampleTask();
    const toolCall = events.find((e) => e.type === "tool_call_begin") as { call_id: string } | undefined;
    const timeline = applyEvents(emptyTimeline(), [
      ...events,
      ev(events.length + 1, { type: "context_pinned", target: { kind: "call", call_id: toolCall!.call_id }, pinned: true, by: "cli" }),
      ev(events.length + 2, { type: "context_pinned", target: { kind: "call", call_id: toolCall!.call_id }, pinned: false, by: "cli" }),
    ]);
    expect(timeline.pins).toEqual([]);
    const target = document.createElement("div");
    document.body.appendChild(target);
    app = mount(TimelineView, { target, props: { items: timeline.items, pins: timeline.pins } });
    flushSync();
    expect(target.querySelectorAll("[data-pin]").length).toBe(0);
    expect([...target.querySelectorAll('[data-testid="timeline-pinned"]')].map((l) => l.getAttribute("data-pinned"))).toEqual(["true", "false"]);
  });

  it("collapses and expands the output panel", () => {
    const view = render();
    const head = view.querySelector<HTMLButtonElement>('[data-tool="run_command"] button');
    expect(head?.getAttribute("aria-expanded")).toBe("true");
    head?.click();
    flushSync();
    expect(view.querySelector('[data-tool="run_command"] [role="log"]')).toBeNull();
    head?.click();
    flushSync();
    expect(view.querySelector('[data-tool="run_command"] [role="log"]')).not.toBeNull();
  });

  it("shows the prompt, the answer, the checkpoint and the final status", () => {
    const view = render();
    expect(view.querySelector('[data-role="user"]')?.textContent).toContain("Say hello");
    expect(view.querySelector('[data-role="assistant"]')?.textContent).toContain("I will run printf.");
    expect(view.querySelector("[data-checkpoint]")?.textContent).toContain("Checkpoint 1");
    expect(view.querySelector('[data-kind="finished"] [data-status="completed"]')).not.toBeNull();
  });

  it("shows the failures Bosun sent the agent as folded checks feedback, not as the user", () => {
    const view = render([
      ev(1, { type: "user_message", text: "Fix add" }),
      ev(2, { type: "user_message", text: "Bosun ran the project's checks … test_add failed", origin: "checks" }),
    ]);
    const roles = [...view.querySelectorAll("[data-role]")].map((m) => m.getAttribute("data-role"));
    expect(roles).toEqual(["user", "checks"]);
    const feedback = view.querySelector<HTMLDetailsElement>('[data-testid="checks-feedback"]');
    expect(feedback?.open).toBe(false);
    expect(feedback?.querySelector("summary")?.textContent).toContain("failing checks");
    expect(feedback?.textContent).toContain("test_add failed");
    expect(view.querySelector('[data-role="checks"] .who')?.textContent).toBe("Checks");
  });

  it("folds older successful tool calls and keeps the latest and failed ones open", () => {
    const events = [];
    let seq = 1;
    for (let n = 0; n < 8; n++) {
      const call_id = `c${n}`;
      events.push({ ...ev(seq++, { type: "tool_call_begin", call_id, tool: "run_command", args: { command: `step ${n}` }, recovered: false }) });
      events.push(ev(seq++, { type: "tool_output_delta", call_id, stream: "stdout", chunk: `out ${n}\n` }));
      const status = n === 0 ? "error" : "success";
      events.push(ev(seq++, { type: "tool_call_end", call_id, status, output: "", duration_ms: 5 }));
    }
    const view = render(events);
    const open = [...view.querySelectorAll("[data-call-id]")].map(
      (c) => `${c.getAttribute("data-call-id")}:${c.querySelector('[role="log"]') ? "open" : "folded"}`,
    );
    expect(open).toEqual([
      "c0:open",
      "c1:folded",
      "c2:folded",
      "c3:open",
      "c4:open",
      "c5:open",
      "c6:open",
      "c7:open",
    ]);
  });

  it("shows who approved a call the policy asked about, and why it asked", () => {
    const events = sampleTask().slice(0, 6);
    events.push(
      ev(7, {
        type: "approval_requested",
        approval_id: "a1",
        kind: "tool",
        call_id: "call_1",
        tool: "run_command",
        action: { kind: "command", command: "printf 'hello\\n'" },
        reason: "commands ask before running",
        rule: "mode ask",
        source: "built-in",
        suggestions: [],
      }),
    );
    let view = render(events);
    expect(view.querySelector('[data-approval="pending"]')?.textContent).toContain("Waiting for approval");
    unmount(app!);
    app = null;
    document.body.innerHTML = "";

    events.push(ev(8, { type: "approval_resolved", approval_id: "a1", call_id: "call_1", decision: "approve_once", by: "--yes" }));
    view = render(events);
    const line = view.querySelector('[data-approval="approve_once"]')?.textContent ?? "";
    expect(line).toContain("Approved once");
    expect(line).toContain("--yes");
    expect(line).toContain("mode ask");
  });

  it("keeps only a window of a 100k-line output in the DOM", () => {
    const events = sampleTask().slice(0, 6);
    const chunk = Array.from({ length: 100_000 }, (_, i) => `line ${i}`).join("\n") + "\n";
    events.push({ ...events[5], seq: 7, type: "tool_output_delta", call_id: "call_1", stream: "stdout", chunk } as never);
    const view = render(events);
    const log = view.querySelector('[role="log"]');
    expect(log?.getAttribute("data-lines")).toBe("100000");
    expect(log?.querySelectorAll(".line").length).toBeLessThan(200);
  });
});
