import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { flushSync, mount, unmount } from "svelte";
import { afterEach, describe, expect, it } from "vitest";
import ImportOffer from "./ImportOffer.svelte";

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = "";
  clearMocks();
});

async function until<T>(found: () => T | null | undefined, what = "it"): Promise<T> {
  for (let i = 0; i < 200; i++) {
    flushSync();
    const v = found();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`${what} never appeared`);
}

const report = (source: string, new_sessions: number, events: number, malformed: number) => ({
  source,
  dir: `/home/me/.${source}`,
  files: 2,
  files_read: 2,
  new_sessions,
  lines: 14,
  malformed,
  unknown: 0,
  events,
  responses: 4,
  cost_usd: 0.026,
  shrunk: [],
  copies: [] as { path: string; copy_of: string }[],
  redacted: 0,
});

function render(found: { claude: boolean; codex: boolean }) {
  const calls: string[] = [];
  let imported = 0;
  mockIPC((cmd) => {
    calls.push(cmd);
    if (cmd === "import_folders")
      return [
        { source: "claude-code", dir: "/home/me/.claude", found: found.claude },
        { source: "codex", dir: "/home/me/.codex", found: found.codex },
      ];
    if (cmd === "import_sessions")
      return [
        {
          ...report("claude-code", 2, 15, 1),
          redacted: 3,
          copies: [{ path: "/backup/s.jsonl", copy_of: "/home/me/.claude/projects/p/s.jsonl" }],
        },
      ];
    throw new Error(`unexpected ${cmd}`);
  });
  const target = document.createElement("div");
  document.body.appendChild(target);
  app = mount(ImportOffer, { target, props: { onimported: () => imported++ } });
  return { target, calls, imported: () => imported };
}

describe("ImportOffer", () => {
  it("offers the import from the folders that exist and says what it read", async () => {
    const { target, calls, imported } = render({ claude: true, codex: false });
    const button = await until(() => target.querySelector<HTMLButtonElement>('[data-testid="history-import"]'));
    expect(button.textContent).toBe("Import sessions from Claude Code");
    button.click();
    const notice = await until(() => target.querySelector('[data-testid="history-import-notice"]'));
    expect(notice.textContent).toBe(
      "2 new sessions, 15 new events, 1 line skipped, 3 secrets redacted, 1 copy of imported sessions left alone",
    );
    expect(calls).toEqual(["import_folders", "import_sessions"]);
    expect(imported()).toBe(1);
  });

  it("offers nothing when neither agent's folder exists", async () => {
    const { target, calls } = render({ claude: false, codex: false });
    await until(() => calls.length > 0);
    flushSync();
    expect(target.querySelector('[data-testid="history-import"]')).toBeNull();
  });
});
