import { flushSync, mount, unmount } from "svelte";
import { afterEach, describe, expect, it } from "vitest";
import { ev } from "../../test/events";
import type { Event } from "../bindings/Event";
import { applyEvents, emptyTimeline } from "../state/timeline";
import TimelineView from "./TimelineView.svelte";

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = "";
});

function render(events: Event[]) {
  const target = document.createElement("div");
  document.body.appendChild(target);
  app = mount(TimelineView, { target, props: { items: applyEvents(emptyTimeline(), events).items } });
  flushSync();
  return target.querySelector<HTMLElement>('[data-call-id="c1"]')!;
}

const waiting: Event[] = [
  ev(1, { type: "tool_call_begin", call_id: "c1", tool: "run_command", args: { command: "make deploy" }, recovered: false }),
  ev(2, {
    type: "approval_requested",
    approval_id: "ap1",
    kind: "tool",
    call_id: "c1",
    tool: "run_command",
    action: { kind: "command", command: "make deploy" },
    reason: "no rule allows it",
    rule: "mode ask",
    source: "--mode",
    suggestions: [],
  }),
];

describe("a tool card asking for approval", () => {
  it("says it waits for approval while it does", () => {
    const card = render(waiting);
    expect(card.querySelector("[data-approval]")?.getAttribute("data-approval")).toBe("pending");
    expect(card.textContent).toContain("Waiting for approval");
  });

  it("stops saying so once the task was stopped and the call was not run", () => {
    const card = render([
      ...waiting,
      ev(3, {
        type: "tool_call_end",
        call_id: "c1",
        status: "denied",
        error: "not run: the task was stopped while waiting for approval",
        output: "",
        duration_ms: 0,
      }),
      ev(4, { type: "task_finished", status: "interrupted", summary: "stopped", checks: [] }),
    ]);
    expect(card.textContent).not.toContain("Waiting for approval");
    expect(card.querySelector("[data-approval]")?.getAttribute("data-approval")).toBe("unanswered");
    expect(card.textContent).toContain("Not answered");
    expect(card.getAttribute("data-status")).toBe("denied");
  });
});

describe("a command's network connections", () => {
  const begin = ev(1, { type: "tool_call_begin", call_id: "c1", tool: "run_command", args: { command: "pip install torch" }, recovered: false });
  const hostAsk = ev(3, {
    type: "approval_requested",
    approval_id: "ap2",
    kind: "tool",
    call_id: "c1",
    tool: "run_command",
    action: { kind: "network", host: "download.pytorch.org", port: 443, command: "pip install torch" },
    reason: "no [network] domains rule names `download.pytorch.org`",
    rule: 'network.allow "pip"',
    source: "policy.toml:3",
    suggestions: ["download.pytorch.org"],
  });
  const connections: Event[] = [
    begin,
    ev(2, { type: "network_connection", call_id: "c1", host: "pypi.org", port: 443, decision: "allowed", rule: 'network.domains "pypi.org"', bytes_up: 2048, bytes_down: 3 * 1024 * 1024 }),
    hostAsk,
  ];

  it("shows each host:port with its decision and bytes, and a host waiting for approval", () => {
    const card = render(connections);
    const rows = [...card.querySelectorAll<HTMLElement>("[data-network] li")];
    expect(rows.map((r) => [r.dataset.host, r.dataset.decision])).toEqual([
      ["pypi.org:443", "allowed"],
      ["download.pytorch.org:443", "waiting"],
    ]);
    expect(rows[0].querySelector("[data-bytes]")?.textContent).toBe("↑ 2.0 KB ↓ 3.0 MB");
    expect(rows[1].textContent).toContain("waiting for approval");
    // A host's approval is not the command's own.
    expect(card.querySelector("[data-approval]")).toBeNull();
  });

  it("replaces the wait with how the connection went, refusals with their reason", () => {
    const card = render([
      ...connections,
      ev(4, { type: "approval_resolved", approval_id: "ap2", call_id: "c1", decision: "deny", note: "no", by: "app" }),
      ev(5, {
        type: "network_connection",
        call_id: "c1",
        host: "download.pytorch.org",
        port: 443,
        decision: "denied",
        rule: 'network.allow "pip"',
        reason: "the user denied download.pytorch.org:443: no",
        bytes_up: 0,
        bytes_down: 0,
      }),
    ]);
    const rows = [...card.querySelectorAll<HTMLElement>("[data-network] li")];
    expect(rows.map((r) => r.dataset.decision)).toEqual(["allowed", "denied"]);
    expect(rows[1].textContent).toContain("the user denied download.pytorch.org:443: no");
    expect(rows[1].querySelector("[data-bytes]")).toBeNull();
  });
});

describe("an MCP tool call", () => {
  it("shows its server and tool, its arguments and its output like any tool call", () => {
    const card = render([
      ev(1, { type: "tool_call_begin", call_id: "c1", tool: "mcp__everything__echo", args: { message: "hello from the window", times: 2 }, recovered: false }),
      ev(2, {
        type: "approval_requested",
        approval_id: "ap1",
        kind: "tool",
        call_id: "c1",
        tool: "mcp__everything__echo",
        action: { kind: "mcp", server: "everything", tool: "echo", arguments: { message: "hello from the window", times: 2 } },
        reason: "MCP tools are asked by default",
        rule: "mcp",
        source: "built-in",
        suggestions: [],
      }),
      ev(3, { type: "approval_resolved", approval_id: "ap1", call_id: "c1", decision: "approve_once", by: "app" }),
      ev(4, { type: "tool_call_end", call_id: "c1", status: "success", output: "Echo: hello from the window", duration_ms: 12 }),
    ]);
    expect(card.getAttribute("data-tool")).toBe("mcp__everything__echo");
    expect(card.querySelector("[data-mcp-server]")?.textContent).toBe("everything");
    expect(card.querySelector(".name")?.textContent).toBe("echo");
    expect(card.querySelector(".summary")?.textContent).toBe("message: hello from the window, times: 2");
    expect(card.querySelector('[data-testid="mcp-arguments"]')?.textContent).toBe(JSON.stringify({ message: "hello from the window", times: 2 }, null, 2));
    expect(card.textContent).toContain("Approved once");
    expect(card.textContent).toContain("Echo: hello from the window");
    expect(card.getAttribute("data-status")).toBe("success");
  });
});
