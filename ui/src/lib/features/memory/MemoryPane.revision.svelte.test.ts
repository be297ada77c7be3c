import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { flushSync, mount, unmount } from "svelte";
import { afterEach, describe, expect, it } from "vitest";
import type { MemoryView } from "../../ipc/memory";
import MemoryPane from "./MemoryPane.svelte";

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = "";
  clearMocks();
});

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("the Memory view, as tasks finish", () => {
  it("reads the list again a moment after a task finished, showing what it taught", async () => {
    const learned: MemoryView["memories"] = [];
    let reads = 0;
    mockIPC((cmd, args) => {
      if (cmd !== "memories") throw new Error(cmd);
      reads++;
      return { repo: (args as { repo: string }).repo, memories: learned, repos: ["/src/shop"], enabled: true, config_path: "/c" };
    });
    const props = $state({ repo: "/src/shop", revision: "t1:running" });
    const target = document.createElement("div");
    document.body.appendChild(target);
    app = mount(MemoryPane, { target, props });
    await wait(10);
    flushSync();
    expect(reads).toBe(1);
    expect(target.querySelector('[data-testid="memory-empty"]')).not.toBeNull();

    learned.push({
      id: 5,
      repo: "/src/shop",
      kind: "verification",
      text: "`make test` passes",
      pinned: false,
      seen: 1,
      created_at: "2026-11-30T03:00:00.000Z",
      updated_at: "2026-11-30T03:00:00.000Z",
      source_task: "t1",
    });
    props.revision = "t1:completed";
    flushSync();
    await wait(100);
    expect(reads).toBe(1);
    await wait(600);
    flushSync();
    expect(reads).toBe(2);
    expect(target.querySelector('[data-memory-id="5"] [data-testid="memory-kind"]')?.textContent).toBe("Verified");
  });

  it("follows the repository it is opened on while it is open", async () => {
    mockIPC((cmd, args) => {
      const repo = (args as { repo: string }).repo;
      return { repo, memories: [], repos: ["/src/api", "/src/shop"], enabled: true, config_path: "/c" };
    });
    const props = $state({ repo: "/src/shop" });
    const target = document.createElement("div");
    document.body.appendChild(target);
    app = mount(MemoryPane, { target, props });
    await wait(10);
    flushSync();
    expect(target.querySelector('[data-testid="memory-empty"]')?.textContent).toContain("about shop");
    props.repo = "/src/api";
    flushSync();
    await wait(10);
    flushSync();
    expect(target.querySelector('[data-testid="memory-empty"]')?.textContent).toContain("about api");
    expect(target.querySelector<HTMLSelectElement>('[data-testid="memory-repo"]')?.value).toBe("/src/api");
  });
});
