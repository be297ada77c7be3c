import { flushSync, mount, unmount } from "svelte";
import { afterEach, describe, expect, it } from "vitest";
import type { ApprovalAnswer } from "../bindings/ApprovalAnswer";
import type { ApprovalRequested } from "../bindings/ApprovalRequested";
import ApprovalCard from "./ApprovalCard.svelte";

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = "";
});

const request: ApprovalRequested = {
  approval_id: "ap_1",
  kind: "tool",
  call_id: "call_1",
  tool: "run_command",
  action: { kind: "command", command: "touch a.txt" },
  reason: "no rule allows `touch`",
  rule: "mode ask",
  source: "--mode",
  suggestions: ["touch *", "touch a.txt"],
};

function render(req: ApprovalRequested = request) {
  const answers: ApprovalAnswer[] = [];
  const target = document.createElement("div");
  document.body.appendChild(target);
  app = mount(ApprovalCard, { target, props: { request: req, onanswer: (a: ApprovalAnswer) => answers.push(a) } });
  flushSync();
  return { card: target.querySelector<HTMLElement>("[data-approval-card]")!, answers };
}

function press(key: string, on: EventTarget = window) {
  on.dispatchEvent(new KeyboardEvent("keydown", { key, bubbles: true, cancelable: true }));
  flushSync();
}

function type(input: HTMLInputElement, value: string) {
  input.value = value;
  input.dispatchEvent(new Event("input", { bubbles: true }));
  flushSync();
}

describe("the approval card", () => {
  it("shows what would run, the rule that asked, where it came from and why", () => {
    const { card } = render();
    expect(card.querySelector(".command")?.textContent).toBe("$ touch a.txt");
    expect(card.querySelector("[data-rule]")?.textContent).toBe("mode ask");
    expect(card.querySelector("[data-source]")?.textContent).toBe("--mode");
    expect(card.querySelector("[data-reason]")?.textContent).toBe("no rule allows `touch`");
    expect(card.querySelector<HTMLInputElement>('input[name="rule"]')?.value).toBe("touch *");
  });

  it("lists the paths an edit would change", () => {
    const { card } = render({ ...request, tool: "write_file", action: { kind: "write", paths: ["src/a.rs", "b.md"] } });
    expect([...card.querySelectorAll(".path")].map((p) => p.textContent)).toEqual(["src/a.rs", "b.md"]);
    expect(card.textContent).toContain("Would change");
  });

  it("shows the diff an edit would make, added and removed lines marked", () => {
    const preview = "--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-# demo\n+# renamed\n";
    const { card } = render({ ...request, tool: "edit_file", action: { kind: "write", paths: ["README.md"] }, preview });
    const lines = [...card.querySelectorAll("[data-preview] span")].map((l) => [(l as HTMLElement).dataset.line, l.textContent?.trim()]);
    expect(lines).toContainEqual(["del", "-# demo"]);
    expect(lines).toContainEqual(["add", "+# renamed"]);
    expect(lines).toContainEqual(["hunk", "@@ -1 +1 @@"]);
    expect(lines).toContainEqual(["ctx", "--- a/README.md"]);
  });

  it("shows no diff for a command", () => {
    const { card } = render();
    expect(card.querySelector("[data-preview]")).toBeNull();
  });

  it("answers with y, t and n when no text field has focus", () => {
    const { answers } = render();
    press("y");
    press("t");
    press("n");
    expect(answers).toEqual([
      { approval_id: "ap_1", decision: "approve_once", by: "app" },
      { approval_id: "ap_1", decision: "approve_task", by: "app" },
      { approval_id: "ap_1", decision: "deny", by: "app" },
    ]);
  });

  it("answers a with the edited rule and the chosen scope", () => {
    const { card, answers } = render();
    type(card.querySelector<HTMLInputElement>('input[name="rule"]')!, "touch *.txt");
    card.querySelector<HTMLInputElement>('input[value="user"]')!.click();
    flushSync();
    card.focus();
    press("a", card);
    expect(answers).toEqual([
      { approval_id: "ap_1", decision: "approve_always", rule: "touch *.txt", scope: "user", by: "app" },
    ]);
  });

  it("does not take keys typed into its text fields, and deny sends the note", () => {
    const { card, answers } = render();
    const note = card.querySelector<HTMLInputElement>('input[name="note"]')!;
    note.focus();
    press("n", note);
    press("y", note);
    expect(answers).toEqual([]);
    type(note, "use the Makefile target instead");
    card.querySelector<HTMLButtonElement>('[data-answer="deny"]')!.click();
    expect(answers).toEqual([
      { approval_id: "ap_1", decision: "deny", note: "use the Makefile target instead", by: "app" },
    ]);
  });

  it("ignores keys with a modifier (Ctrl+T is not an answer)", () => {
    const { answers } = render();
    window.dispatchEvent(new KeyboardEvent("keydown", { key: "t", ctrlKey: true, bubbles: true }));
    expect(answers).toEqual([]);
  });
});

describe("the approval card's focus", () => {
  it("takes the focus when it appears, but not from a text field the user is typing in", () => {
    const { card } = render();
    expect(document.activeElement).toBe(card);
    unmount(app!);
    app = null;
    document.body.innerHTML = "";

    const field = document.createElement("input");
    document.body.appendChild(field);
    field.focus();
    render();
    expect(document.activeElement).toBe(field);
  });
});

describe("the approval card for a host", () => {
  const hostRequest: ApprovalRequested = {
    ...request,
    action: { kind: "network", host: "files.pythonhosted.org", port: 443, command: "pip install torch" },
    reason: "no [network] domains rule names `files.pythonhosted.org`; the command may use the network, so it asks",
    rule: 'network.rules "pip install*"',
    source: "/home/u/.local/share/bosun/policy.toml:7",
    suggestions: ["files.pythonhosted.org", "*.pythonhosted.org"],
  };

  it("says which host, for which command, and which rule asked", () => {
    const { card } = render(hostRequest);
    expect(card.textContent).toContain("Network access needed");
    expect(card.querySelector("[data-host]")?.textContent).toBe("files.pythonhosted.org:443");
    expect(card.querySelector(".command")?.textContent).toBe("$ pip install torch");
    expect(card.querySelector("[data-rule]")?.textContent).toBe('network.rules "pip install*"');
    expect(card.querySelector("[data-source]")?.textContent).toBe("/home/u/.local/share/bosun/policy.toml:7");
    expect(card.querySelector<HTMLInputElement>('input[name="rule"]')?.value).toBe("files.pythonhosted.org");
    expect(card.querySelector('[data-answer="approve_task"]')?.textContent).toContain("Allow this host for the task");
  });

  it("always allows the host as written, into the chosen file", () => {
    const { card, answers } = render(hostRequest);
    type(card.querySelector<HTMLInputElement>('input[name="rule"]')!, "*.pythonhosted.org");
    card.querySelector<HTMLButtonElement>('[data-answer="approve_always"]')!.click();
    expect(answers).toEqual([
      { approval_id: "ap_1", decision: "approve_always", by: "app", rule: "*.pythonhosted.org", scope: "project" },
    ]);
  });
});

describe("the approval card for budgets", () => {
  it("says what the spend-rate breaker measured and answers Continue or Stop", () => {
    const { card, answers } = render({
      ...request,
      kind: "spend_rate",
      tool: "model",
      action: { kind: "spend_rate", spent_usd_micros: 1_250_000, limit_usd_micros: 1_000_000, window_secs: 60 },
      suggestions: [],
    });
    expect(card.querySelector("[data-spent]")?.textContent).toBe("$1.25");
    expect(card.querySelector("[data-limit]")?.textContent).toBe("$1.00");
    expect(card.textContent).toContain("last 60 s");
    expect(card.querySelector('input[name="rule"]')).toBeNull();
    const buttons = [...card.querySelectorAll("button")].map((b) => b.textContent?.trim().split(" ")[0]);
    expect(buttons).toEqual(["Continue", "Stop"]);
    press("t");
    expect(answers).toEqual([]);
    card.querySelector<HTMLButtonElement>('[data-answer="approve_once"]')!.click();
    expect(answers.map((a) => a.decision)).toEqual(["approve_once"]);
  });

  it("names the unpriced model and the budgets, and offers Run anyway, Add price and Stop", () => {
    const target = document.createElement("div");
    document.body.appendChild(target);
    const answers: ApprovalAnswer[] = [];
    const priced: string[] = [];
    app = mount(ApprovalCard, {
      target,
      props: {
        request: { ...request, kind: "unpriced_model", action: { kind: "unpriced_model", model: "local-llm", budgets: ["daily_usd", "monthly_usd"] } },
        onanswer: (a: ApprovalAnswer) => answers.push(a),
        onaddprice: (m: string) => priced.push(m),
      },
    });
    flushSync();
    const card = target.querySelector<HTMLElement>("[data-approval-card]")!;
    expect(card.querySelector("[data-model]")?.textContent).toBe("local-llm");
    expect([...card.querySelectorAll("[data-budget]")].map((b) => b.textContent)).toEqual(["daily_usd", "monthly_usd"]);
    card.querySelector<HTMLButtonElement>("[data-add-price]")!.click();
    expect(priced).toEqual(["local-llm"]);
    press("n");
    expect(answers.map((a) => a.decision)).toEqual(["deny"]);
  });
});

describe("the approval card for a compaction's summary", () => {
  const summaryRequest: ApprovalRequested = {
    ...request,
    kind: "summary",
    call_id: "compaction",
    tool: "compaction",
    action: { kind: "summary", text: "- read f0..f9\n- nothing changed", replaces: 14 },
    rule: "context.review_summaries",
    source: "config.toml",
    suggestions: [],
  };

  it("shows the summary to edit and sends the edited text with Use my edit", () => {
    const { card, answers } = render(summaryRequest);
    expect(card.textContent).toContain("Review the summary");
    expect(card.textContent).toContain("replace 14 older messages");
    const area = card.querySelector<HTMLTextAreaElement>('textarea[name="summary"]')!;
    expect(area.value).toBe("- read f0..f9\n- nothing changed");
    // Accepting untouched sends no text.
    card.querySelector<HTMLButtonElement>('[data-answer="approve_once"]')!.click();
    expect(answers[0]).toEqual({ approval_id: "ap_1", decision: "approve_once", by: "app" });
    area.value = "- read f0..f9\n- never touch f3 (the user's rule)";
    area.dispatchEvent(new Event("input", { bubbles: true }));
    flushSync();
    const accept = card.querySelector<HTMLButtonElement>('[data-answer="approve_once"]')!;
    expect(accept.textContent).toContain("Use my edit");
    accept.click();
    expect(answers[1].text).toBe("- read f0..f9\n- never touch f3 (the user's rule)");
    // No rule to allow for ever: t and a do nothing.
    press("t");
    press("a");
    expect(answers.length).toBe(2);
  });

  it("refuses with N (the older turns are kept) and cannot accept an empty summary", () => {
    const { card, answers } = render(summaryRequest);
    const area = card.querySelector<HTMLTextAreaElement>('textarea[name="summary"]')!;
    area.value = "  ";
    area.dispatchEvent(new Event("input", { bubbles: true }));
    flushSync();
    expect(card.querySelector<HTMLButtonElement>('[data-answer="approve_once"]')!.disabled).toBe(true);
    card.querySelector<HTMLButtonElement>('[data-answer="deny"]')!.click();
    expect(answers.map((a) => a.decision)).toEqual(["deny"]);
    expect(answers[0].text).toBeUndefined();
  });
});

describe("the approval card for a failed plan node", () => {
  const failed: ApprovalRequested = {
    ...request,
    kind: "plan_node_failed",
    tool: "plan",
    action: { kind: "plan_node_failed", node: "parser", step: "Fix the dotted-key split", attempts: 3, failure: "1 test failed: parser::tests::quoted_keys" },
    suggestions: [],
  };

  it("names the node, its step, its attempts and the failure, and offers Retry, Skip and Stop", () => {
    const { card, answers } = render(failed);
    expect(card.querySelector("header strong")?.textContent).toBe("A plan node failed");
    expect(card.querySelector('[data-plan-node="parser"]')?.textContent).toContain("(Fix the dotted-key split) failed after 3 attempts");
    expect(card.querySelector("[data-failure]")?.textContent).toBe("1 test failed: parser::tests::quoted_keys");
    expect(card.querySelector('input[name="rule"]')).toBeNull();
    const buttons = [...card.querySelectorAll("button")].map((b) => b.textContent?.trim().replace(/\s+[A-Z]$/, ""));
    expect(buttons).toEqual(["Retry it", "Skip it", "Stop the plan"]);
    press("a");
    expect(answers).toEqual([]);
    press("t");
    expect(answers.map((a) => a.decision)).toEqual(["approve_task"]);
  });

  it("stops the plan with n", () => {
    const { answers } = render(failed);
    press("n");
    expect(answers.map((a) => a.decision)).toEqual(["deny"]);
  });
});

describe("the approval card for an MCP tool", () => {
  const mcpRequest: ApprovalRequested = {
    ...request,
    tool: "mcp__github__create_issue",
    action: {
      kind: "mcp",
      server: "github",
      tool: "create_issue",
      arguments: { title: "Crash on empty config", labels: ["bug"], body: "x".repeat(2000) },
    },
    reason: "no [mcp] rule names `github/create_issue`: MCP tools ask by default in every mode",
    rule: "mcp",
    source: "built-in",
    suggestions: ["github/create_issue", "github/*"],
  };

  it("shows the server, the tool and the arguments as indented JSON, in a box that scrolls", () => {
    const { card } = render(mcpRequest);
    expect(card.querySelector("header strong")?.textContent).toBe("MCP tool");
    expect(card.querySelector("[data-mcp-server]")?.textContent).toBe("github");
    expect(card.querySelector("[data-mcp-tool]")?.textContent).toBe("create_issue");
    const args = card.querySelector<HTMLElement>("[data-arguments]")!;
    expect(args.textContent).toContain('"title": "Crash on empty config"');
    expect(args.textContent).toContain('  "labels": [\n    "bug"\n  ]');
    expect(args.classList.contains("json")).toBe(true);
    expect(card.querySelector("[data-rule]")?.textContent).toBe("mcp");
    expect(card.querySelector("[data-source]")?.textContent).toBe("built-in");
  });

  it("saves an always rule as server/tool to the user's policy, never the repository's", () => {
    const { card, answers } = render(mcpRequest);
    expect(card.querySelector<HTMLInputElement>('input[name="rule"]')?.value).toBe("github/create_issue");
    expect(card.querySelector('input[name="scope"]')).toBeNull();
    expect(card.querySelector("[data-scope-note]")?.textContent).toContain("user policy");
    type(card.querySelector<HTMLInputElement>('input[name="rule"]')!, "github/*");
    press("a");
    expect(answers).toEqual([{ approval_id: "ap_1", decision: "approve_always", by: "app", rule: "github/*", scope: "user" }]);
  });

  it("shows the exact command and the declaring file for a project's server, and offers no rule", () => {
    const { card, answers } = render({
      ...request,
      tool: "mcp_server",
      action: { kind: "mcp_server", server: "fs", command: "npx -y @modelcontextprotocol/server-filesystem .", origin: "/repo/.bosun/config.toml" },
      rule: "mcp server",
      source: "built-in",
      suggestions: [],
    });
    expect(card.querySelector("header strong")?.textContent).toBe("Start an MCP server");
    expect(card.querySelector("[data-mcp-server]")?.textContent).toBe("fs");
    expect(card.querySelector("[data-origin]")?.textContent).toBe("/repo/.bosun/config.toml");
    expect(card.querySelector("[data-mcp-command]")?.textContent).toBe("$ npx -y @modelcontextprotocol/server-filesystem .");
    expect(card.querySelector('input[name="rule"]')).toBeNull();
    press("a");
    press("t");
    expect(answers).toEqual([]);
    expect(card.querySelector('[data-answer="approve_task"]')).toBeNull();
    expect(card.querySelector("[data-kept]")?.textContent).toContain("a changed one asks again");
    press("y");
    expect(answers.map((a) => a.decision)).toEqual(["approve_once"]);
  });
});
