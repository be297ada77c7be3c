import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { flushSync, mount, unmount } from "svelte";
import { afterEach, describe, expect, it } from "vitest";
import type { McpServerReport } from "../../ipc/mcp";
import McpServersSection from "./McpServersSection.svelte";

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = "";
  clearMocks();
});

const settle = async () => {
  for (let i = 0; i < 3; i++) await new Promise((r) => setTimeout(r, 0));
  flushSync();
};

const tools = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    name: i === 0 ? "echo" : `tool${i}`,
    model_name: i === 0 ? "mcp__everything__echo" : `mcp__everything__tool${i}`,
    description: i === 0 ? "Echoes back the input\n\nMore words." : `Tool ${i}`,
    input_schema: {},
  }));

const everything: McpServerReport = {
  name: "everything",
  transport: "stdio",
  target: "node /opt/everything/dist/index.js stdio",
  origin: "config.toml",
  state: "running",
  error: null,
  tools: tools(12),
};
const broken: McpServerReport = {
  name: "broken",
  transport: "stdio",
  target: "/nonexistent/server",
  origin: "config.toml",
  state: "failed",
  error: "the MCP server `broken` exited before it answered: No such file or directory",
  tools: [],
};
const lint: McpServerReport = {
  name: "lint",
  transport: "stdio",
  target: "node lint.js",
  origin: "/src/api/.bosun/config.toml",
  state: "awaiting_approval",
  error: null,
  tools: [],
};

function render(handler: (cmd: string, args: Record<string, unknown>) => unknown, repos: string[] = []) {
  const calls: { cmd: string; args: Record<string, unknown> }[] = [];
  mockIPC((cmd, raw) => {
    const args = raw as Record<string, unknown>;
    calls.push({ cmd, args });
    return handler(cmd, args);
  });
  const target = document.createElement("div");
  document.body.appendChild(target);
  app = mount(McpServersSection, { target, props: { repos, configPath: "/home/u/.bosun/config.toml" } });
  flushSync();
  const row = (name: string) => target.querySelector<HTMLElement>(`[data-mcp-server="${name}"]`)!;
  return { target, calls, row };
}

describe("the MCP servers section", () => {
  it("lists each server with its state, target, origin and tools, and a failed one's error", async () => {
    const { target, row } = render((cmd) => {
      if (cmd === "mcp_servers") return [everything, broken, lint];
      throw new Error(cmd);
    });
    // Listing starts each server: progress shows while it runs.
    expect(target.querySelector('[data-testid="mcp-loading"]')).not.toBeNull();
    await settle();
    expect(target.querySelector('[data-testid="mcp-loading"]')).toBeNull();

    const e = row("everything");
    expect(e.querySelector('[data-testid="mcp-state"]')!.textContent).toBe("running");
    expect(e.textContent).toContain("stdio");
    expect(e.textContent).toContain("node /opt/everything/dist/index.js stdio");
    expect(e.textContent).toContain("declared in config.toml");
    const list = e.querySelector<HTMLDetailsElement>('[data-testid="mcp-tools"]')!;
    expect(list.open).toBe(false); // 12 tools: folded
    expect(list.querySelector("summary")!.textContent).toBe("12 tools");
    const first = list.querySelector("li")!;
    expect(first.textContent).toContain("mcp__everything__echo");
    expect(first.textContent).toContain("Echoes back the input");
    expect(first.textContent).not.toContain("More words");
    expect(e.querySelector<HTMLInputElement>('[data-testid="mcp-enabled"]')!.checked).toBe(true);

    const b = row("broken");
    expect(b.querySelector('[data-testid="mcp-state"]')!.textContent).toBe("failed");
    expect(b.querySelector('[data-testid="mcp-error"]')!.textContent).toContain("exited before it answered");

    // A repository's own server has no switch: it is approved when a task starts.
    const l = row("lint");
    expect(l.querySelector('[data-testid="mcp-state"]')!.textContent).toBe("awaiting approval");
    expect(l.querySelector('[data-testid="mcp-enabled"]')).toBeNull();
    expect(l.textContent).toContain("approved when a task starts");
  });

  it("toggling calls mcp_set_enabled with the server, the scope and the new state, and shows the answer", async () => {
    const { target, calls, row } = render(
      (cmd, args) => {
        if (cmd === "mcp_servers") return [{ ...everything, tools: tools(2) }, broken];
        if (cmd === "mcp_set_enabled" && args.name === "everything") return { ...everything, state: "disabled", tools: [] };
        if (cmd === "mcp_set_enabled") throw { code: "config_error", message: "cannot write /home/u/.bosun/config.toml: read-only file system" };
        throw new Error(cmd);
      },
      ["/src/api"],
    );
    await settle();
    expect(calls).toEqual([{ cmd: "mcp_servers", args: { repo: null } }]);
    expect(row("everything").querySelector<HTMLDetailsElement>('[data-testid="mcp-tools"]')!.open).toBe(true);

    // For one repository: its listing, and the switch says which.
    const scope = target.querySelector<HTMLSelectElement>("[name=mcp_scope]")!;
    scope.value = "/src/api";
    scope.dispatchEvent(new Event("change", { bubbles: true }));
    await settle();
    expect(calls.at(-1)).toEqual({ cmd: "mcp_servers", args: { repo: "/src/api" } });

    const sw = row("everything").querySelector<HTMLInputElement>('[data-testid="mcp-enabled"]')!;
    sw.click();
    await settle();
    expect(calls.at(-1)).toEqual({ cmd: "mcp_set_enabled", args: { name: "everything", repo: "/src/api", enabled: false } });
    expect(row("everything").querySelector('[data-testid="mcp-state"]')!.textContent).toBe("disabled");
    expect(row("everything").querySelector<HTMLInputElement>('[data-testid="mcp-enabled"]')!.checked).toBe(false);

    // A refused switch keeps the server as it was and says why.
    row("broken").querySelector<HTMLInputElement>('[data-testid="mcp-enabled"]')!.click();
    await settle();
    expect(calls.at(-1)).toEqual({ cmd: "mcp_set_enabled", args: { name: "broken", repo: "/src/api", enabled: false } });
    expect(row("broken").querySelector('[data-testid="mcp-switch-error"]')!.textContent).toContain("read-only file system");
    expect(row("broken").querySelector<HTMLInputElement>('[data-testid="mcp-enabled"]')!.checked).toBe(true);
    expect(row("broken").querySelector('[data-testid="mcp-state"]')!.textContent).toBe("failed");
  });

  it("explains how to add a server when none is configured, and shows a listing error", async () => {
    let fail = false;
    const { target } = render((cmd) => {
      if (cmd === "mcp_servers") {
        if (fail) throw { code: "config_error", message: "configuration error: [mcp_servers.x] in config.toml: give `command` or `url`" };
        return [];
      }
      throw new Error(cmd);
    });
    await settle();
    const empty = target.querySelector('[data-testid="mcp-empty"]')!;
    expect(empty.textContent).toContain("No MCP server is configured");
    expect(empty.textContent).toContain("/home/u/.bosun/config.toml");
    expect(empty.textContent).toContain("[mcp_servers.everything]");

    fail = true;
    target.querySelector<HTMLButtonElement>('[data-testid="mcp-refresh"]')!.click();
    await settle();
    expect(target.querySelector('[data-testid="mcp-error-list"]')!.textContent).toContain("give `command` or `url`");
  });

  it("imports from Codex: shows what it holds first, then writes the servers ticked and lists them", async () => {
    let imported = false;
    const found = (write: boolean, names: string[] | null) => ({
      config_path: "/home/u/.bosun/config.toml",
      looked: ["/home/u/.codex/config.toml (mcp_servers)"],
      servers: [
        { name: "everything", original_name: "everything", origin: "/home/u/.codex/config.toml: mcp_servers", transport: "stdio", target: "npx -y @modelcontextprotocol/server-everything", outcome: write ? (names?.includes("everything") ? "imported" : "skipped") : "new", reason: null, notes: [] },
        { name: "docs", original_name: "docs", origin: "/home/u/.codex/config.toml: mcp_servers", transport: "http", target: "https://docs.example.com/mcp", outcome: write ? (names?.includes("docs") ? "imported" : "skipped") : "new", reason: null, notes: ["the header Authorization was dropped: set bearer_token_env_var"] },
        { name: "broken", original_name: "broken", origin: "/home/u/.codex/config.toml: mcp_servers", transport: "stdio", target: "", outcome: "invalid", reason: "give `command` or `url`", notes: [] },
      ],
      unreadable: [],
      imported: write ? (names?.length ?? 0) : 0,
    });
    const { target, calls } = render((cmd, args) => {
      if (cmd === "mcp_servers") return imported ? [everything] : [];
      if (cmd === "mcp_import") {
        if (args.write) imported = true;
        return found(args.write as boolean, args.names as string[] | null);
      }
      throw new Error(cmd);
    });
    await settle();
    target.querySelector<HTMLButtonElement>('[data-import-from="codex"]')!.click();
    await settle();
    expect(calls.at(-1)).toEqual({ cmd: "mcp_import", args: { from: "codex", repo: null, names: null, write: false } });
    const box = target.querySelector('[data-testid="mcp-import-found"]')!;
    expect(box.textContent).toContain("npx -y @modelcontextprotocol/server-everything");
    expect(box.textContent).toContain("note: the header Authorization was dropped");
    const pick = (name: string) => box.querySelector<HTMLInputElement>(`[data-import-server="${name}"] input`)!;
    expect(pick("everything").checked).toBe(true);
    expect(pick("broken").disabled).toBe(true);
    expect(box.querySelector('[data-import-server="broken"]')!.textContent).toContain("give `command` or `url`");
    pick("docs").click();
    flushSync();
    const write = target.querySelector<HTMLButtonElement>('[data-testid="mcp-import-write"]')!;
    expect(write.textContent!.trim()).toBe("Import 1 server");
    write.click();
    await settle();
    expect(calls.filter((c) => c.cmd === "mcp_import").at(-1)).toEqual({ cmd: "mcp_import", args: { from: "codex", repo: null, names: ["everything"], write: true } });
    expect(target.querySelector('[data-testid="mcp-import-done"]')!.textContent).toContain("Imported 1 server from Codex into /home/u/.bosun/config.toml");
    // The list is asked again and shows the new server.
    expect(calls.at(-1)).toEqual({ cmd: "mcp_servers", args: { repo: null } });
    expect(target.querySelector('[data-mcp-server="everything"]')).not.toBeNull();
  });

  it("says so when the source holds no server, and shows a source's error", async () => {
    const { target } = render((cmd, args) => {
      if (cmd === "mcp_servers") return [];
      if (cmd === "mcp_import" && args.from === "claude") return { config_path: "/c", looked: ["/home/u/.claude.json (not found)"], servers: [], unreadable: [], imported: 0 };
      if (cmd === "mcp_import") throw { code: "config_error", message: "/home/u/.codex/config.toml is not valid TOML: expected `=`" };
      throw new Error(cmd);
    });
    await settle();
    target.querySelector<HTMLButtonElement>('[data-import-from="claude"]')!.click();
    await settle();
    expect(target.querySelector('[data-testid="mcp-import-none"]')!.textContent).toContain("Claude Code has no MCP servers configured. Looked in /home/u/.claude.json (not found).");
    target.querySelector<HTMLButtonElement>('[data-import-from="codex"]')!.click();
    await settle();
    expect(target.querySelector('[data-testid="mcp-import-error"]')!.textContent).toContain("is not valid TOML");
  });
});
