import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { flushSync, mount, unmount } from "svelte";
import { afterEach, describe, expect, it } from "vitest";
import type { MemoryRow, MemoryView } from "../../ipc/memory";
import { taskRow } from "../../../test/rows";
import { textParts } from "../../components/MemoryItem.svelte";
import MemoryPane from "./MemoryPane.svelte";

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = "";
  clearMocks();
});

const settle = async () => {
  for (let i = 0; i < 4; i++) await new Promise((r) => setTimeout(r, 0));
  flushSync();
};

function memory(over: Partial<MemoryRow>): MemoryRow {
  return {
    id: 1,
    repo: "/src/shop",
    kind: "convention",
    text: "a memory",
    pinned: false,
    seen: 1,
    created_at: "2026-11-30T03:00:00.000Z",
    updated_at: "2026-11-30T03:00:00.000Z",
    source_task: null,
    ...over,
  };
}

/** A journal of memories behind the mocked commands, ordered as the store orders them; `calls` records each command. */
function journal(rows: MemoryRow[], { enabled = true, fail = {} as Record<string, { code: string; message: string }> } = {}) {
  const state = { rows: [...rows], enabled, calls: [] as [string, Record<string, unknown>][] };
  const view = (repo: string | null): MemoryView => ({
    repo,
    memories: state.rows
      .filter((m) => m.repo === repo)
      .sort((a, b) => Number(b.pinned) - Number(a.pinned) || (a.updated_at < b.updated_at ? 1 : a.updated_at > b.updated_at ? -1 : b.id - a.id)),
    repos: [...new Set(state.rows.map((m) => m.repo))].sort(),
    enabled: state.enabled,
    config_path: "/home/u/.bosun/config.toml",
  });
  mockIPC((cmd, raw) => {
    const args = (raw ?? {}) as Record<string, unknown>;
    state.calls.push([cmd, args]);
    if (fail[cmd]) throw fail[cmd];
    const find = (id: unknown) => {
      const m = state.rows.find((r) => r.id === id);
      if (!m) throw { code: "not_found", message: `no memory has the id #${id}` };
      return m;
    };
    switch (cmd) {
      case "memories":
        return view((args.repo as string | null) === "/src/shop/sub" ? "/src/shop" : (args.repo as string | null));
      case "pin_memory": {
        const m = find(args.id);
        m.pinned = args.pinned as boolean;
        m.updated_at = "2026-11-30T04:00:00.000Z";
        return m;
      }
      case "delete_memory": {
        const m = find(args.id);
        state.rows = state.rows.filter((r) => r !== m);
        return m;
      }
      case "add_memory": {
        const m = memory({ id: 100 + state.rows.length, repo: args.repo as string, text: (args.text as string).trim(), updated_at: "2026-11-30T05:00:00.000Z" });
        state.rows.push(m);
        return m;
      }
      case "set_memory_enabled":
        state.enabled = args.enabled as boolean;
        return state.enabled;
    }
    throw new Error(`unexpected command ${cmd}`);
  });
  return state;
}

function open(props: Record<string, unknown>) {
  const target = document.createElement("div");
  document.body.appendChild(target);
  app = mount(MemoryPane, { target, props });
  return target;
}

const rowsOf = (target: HTMLElement) =>
  [...target.querySelectorAll<HTMLElement>("[data-memory-id]")].map((li) => [
    Number(li.dataset.memoryId),
    li.querySelector('[data-testid="memory-kind"]')?.textContent,
    li.querySelector('[data-testid="memory-text"]')?.textContent?.trim(),
    li.querySelector('[data-testid="memory-pin"]')?.getAttribute("aria-pressed"),
  ]);

const click = (el: Element | null) => {
  (el as HTMLElement).click();
  flushSync();
};

describe("the Memory view", () => {
  it("lists a repository's memories with kind, text, when and where each was learned, and whether it is pinned", async () => {
    journal([
      memory({ id: 1, kind: "verification", text: "`cargo test` passes", source_task: "t-green", seen: 3, updated_at: "2026-11-30T03:30:00.000Z" }),
      memory({ id: 2, kind: "convention", text: "tabs, not spaces", pinned: true }),
      memory({ id: 3, kind: "failed_approach", text: 'Tried "bump the lockfile": failed', source_task: "t-gone" }),
      memory({ id: 4, repo: "/src/other", text: "elsewhere" }),
    ]);
    const target = open({ repo: "/src/shop", repos: ["/src/shop"], tasks: [taskRow({ id: "t-green", prompt: "Make the tests green\nand more" })], onopentask: () => {} });
    await settle();
    expect(rowsOf(target)).toEqual([
      [2, "Convention", "tabs, not spaces", "true"],
      [1, "Verified", "cargo test passes", "false"],
      [3, "Failed before", 'Tried "bump the lockfile": failed', "false"],
    ]);
    const first = target.querySelector('[data-memory-id="2"]')!;
    expect(first.querySelector('[data-testid="memory-pinned"]')?.textContent).toBe("Pinned");
    expect(first.querySelector('[data-testid="memory-meta"]')?.textContent).toContain("Written by you");
    const verified = target.querySelector('[data-memory-id="1"]')!;
    expect(verified.querySelector("code")?.textContent).toBe("cargo test");
    const meta = verified.querySelector('[data-testid="memory-meta"]')!.textContent!.replace(/\s+/g, " ");
    expect(meta).toContain("Learned");
    expect(meta).toContain("seen in 3 tasks");
    expect(meta).toContain("from “Make the tests green”");
    expect(verified.querySelector("time")?.getAttribute("datetime")).toBe("2026-11-30T03:00:00.000Z");
    // A task no longer in the list is named by its id.
    expect(target.querySelector('[data-memory-id="3"] [data-testid="memory-source"]')?.textContent).toBe("task t-gone");
    // Both repositories with memories can be chosen.
    expect([...target.querySelectorAll<HTMLOptionElement>('[data-testid="memory-repo"] option')].map((o) => o.value)).toEqual(["/src/shop", "/src/other"]);
    expect(target.querySelector('[data-testid="memory-enabled"]')).toHaveProperty("checked", true);
    expect(target.querySelector('[data-testid="memory-off"]')).toBeNull();
  });

  it("pins and unpins, keeping the focus on the memory's button as it moves to the top", async () => {
    const j = journal([memory({ id: 1, text: "newer", updated_at: "2026-11-30T03:10:00.000Z" }), memory({ id: 2, text: "older" })]);
    const target = open({ repo: "/src/shop" });
    await settle();
    expect(rowsOf(target).map((r) => r[0])).toEqual([1, 2]);
    click(target.querySelector('[data-memory-id="2"] [data-testid="memory-pin"]'));
    await settle();
    expect(j.calls.filter(([c]) => c === "pin_memory")).toEqual([["pin_memory", { id: 2, pinned: true }]]);
    expect(rowsOf(target)).toEqual([
      [2, "Convention", "older", "true"],
      [1, "Convention", "newer", "false"],
    ]);
    expect(document.activeElement).toBe(target.querySelector('[data-memory-id="2"] [data-testid="memory-pin"]'));
    expect(target.querySelector('[data-testid="memory-notice"]')?.textContent).toBe("Pinned #2.");
    click(target.querySelector('[data-memory-id="2"] [data-testid="memory-pin"]'));
    await settle();
    expect(j.calls.filter(([c]) => c === "pin_memory").at(-1)).toEqual(["pin_memory", { id: 2, pinned: false }]);
    expect(target.querySelector('[data-memory-id="2"] [data-testid="memory-pin"]')?.textContent).toBe("Pin");
  });

  it("asks before deleting: Escape keeps the memory, the focused Delete button forgets it", async () => {
    const j = journal([memory({ id: 1, text: "keep me", updated_at: "2026-11-30T03:10:00.000Z" }), memory({ id: 2, text: "forget me" })]);
    const target = open({ repo: "/src/shop" });
    await settle();
    click(target.querySelector('[data-memory-id="2"] [data-testid="memory-delete"]'));
    await settle();
    const dialog = () => document.querySelector('[data-testid="memory-delete-dialog"]');
    expect(dialog()?.textContent).toContain("forget me");
    expect(document.activeElement).toBe(document.querySelector('[data-testid="memory-delete-confirm"]'));
    window.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape" }));
    await settle();
    expect(dialog()).toBeNull();
    expect(j.calls.some(([c]) => c === "delete_memory")).toBe(false);
    expect(document.activeElement).toBe(target.querySelector('[data-memory-id="2"] [data-testid="memory-delete"]'));

    click(target.querySelector('[data-memory-id="2"] [data-testid="memory-delete"]'));
    await settle();
    click(document.querySelector('[data-testid="memory-delete-confirm"]'));
    await settle();
    expect(j.calls.filter(([c]) => c === "delete_memory")).toEqual([["delete_memory", { id: 2 }]]);
    expect(dialog()).toBeNull();
    expect(rowsOf(target).map((r) => r[0])).toEqual([1]);
    // The focus goes to the memory before it, not to the top of the page.
    expect(document.activeElement).toBe(target.querySelector('[data-memory-id="1"] [data-testid="memory-delete"]'));
  });

  it("says an unknown id is gone, naming the nearest ones, and shows the list as it is now", async () => {
    const j = journal([memory({ id: 7, text: "deleted from a terminal" })]);
    const target = open({ repo: "/src/shop" });
    await settle();
    // Meanwhile `bosun memory delete 7` ran, and `bosun memory add` wrote #8.
    j.rows = [memory({ id: 8, text: "another" })];
    click(target.querySelector('[data-memory-id="7"] [data-testid="memory-pin"]'));
    await settle();
    expect(target.querySelector('[data-testid="memory-problem"]')?.textContent).toBe("no memory has the id #7");
    expect(rowsOf(target).map((r) => r[0])).toEqual([8]);
  });

  it("explains what memory is when a repository has none, and writes a convention down", async () => {
    const j = journal([]);
    const target = open({ repo: "/src/shop", repos: ["/src/shop"] });
    await settle();
    const empty = target.querySelector('[data-testid="memory-empty"]')!.textContent!.replace(/\s+/g, " ");
    expect(empty).toContain("Nothing remembered about shop yet.");
    expect(empty).toContain("learned as tasks finish");
    expect(empty).toContain("check commands that passed");
    expect(empty).toContain("failed, was rejected in review or was discarded");
    expect(empty).toContain("pinned memories first");
    const add = target.querySelector<HTMLButtonElement>('[data-testid="memory-add"]')!;
    expect(add.disabled).toBe(true);
    const input = target.querySelector<HTMLInputElement>('[data-testid="memory-draft"]')!;
    input.value = "  run make lint before committing ";
    input.dispatchEvent(new Event("input", { bubbles: true }));
    flushSync();
    target.querySelector("form")!.dispatchEvent(new Event("submit", { cancelable: true }));
    await settle();
    expect(j.calls.filter(([c]) => c === "add_memory")).toEqual([["add_memory", { repo: "/src/shop", text: "  run make lint before committing " }]]);
    expect(rowsOf(target)).toEqual([[100, "Convention", "run make lint before committing", "false"]]);
    expect(input.value).toBe("");
    expect(target.querySelector('[data-testid="memory-empty"]')).toBeNull();
  });

  it("turns memory off for every repository with the switch, and back on; a failed write leaves it as it was", async () => {
    const j = journal([memory({ id: 1 })]);
    const target = open({ repo: "/src/shop" });
    await settle();
    const sw = target.querySelector<HTMLInputElement>('[data-testid="memory-enabled"]')!;
    expect(sw.getAttribute("role")).toBe("switch");
    click(sw);
    await settle();
    expect(j.calls.filter(([c]) => c === "set_memory_enabled")).toEqual([["set_memory_enabled", { enabled: false }]]);
    expect(sw.checked).toBe(false);
    const off = target.querySelector('[data-testid="memory-off"]')!.textContent!.replace(/\s+/g, " ");
    expect(off).toContain("Memory is off for every repository");
    expect(off).toContain("[memory] enabled in /home/u/.bosun/config.toml");
    // What is kept is still listed, and can still be pinned or deleted.
    expect(rowsOf(target).map((r) => r[0])).toEqual([1]);
    click(sw);
    await settle();
    expect(sw.checked).toBe(true);
    expect(target.querySelector('[data-testid="memory-off"]')).toBeNull();

    clearMocks();
    journal([memory({ id: 1 })], { fail: { set_memory_enabled: { code: "config_error", message: "config.toml is not valid: bad" } } });
    click(sw);
    await settle();
    expect(sw.checked).toBe(true);
    expect(target.querySelector('[data-testid="memory-problem"]')?.textContent).toContain("config.toml is not valid");
  });

  it("opens on the first repository with memories when none is given, and keys a folder by its repository", async () => {
    journal([memory({ id: 1, repo: "/src/shop", text: "shop" })]);
    const chosen: string[] = [];
    const target = open({ repo: null, onrepo: (r: string) => chosen.push(r) });
    await settle();
    expect(rowsOf(target).map((r) => r[2])).toEqual(["shop"]);
    expect(chosen).toEqual(["/src/shop"]);
    unmount(app!);
    document.body.innerHTML = "";

    const again = open({ repo: "/src/shop/sub", onrepo: (r: string) => chosen.push(r) });
    await settle();
    expect(rowsOf(again).map((r) => r[2])).toEqual(["shop"]);
    expect(again.querySelector<HTMLSelectElement>('[data-testid="memory-repo"]')?.value).toBe("/src/shop");
  });

  it("says there is no repository yet when no task ran and nothing is remembered", async () => {
    journal([]);
    const target = open({ repo: null });
    await settle();
    expect(target.querySelector('[data-testid="memory-empty"]')?.textContent).toContain("No repository yet.");
    expect(target.querySelector('[data-testid="memory-draft"]')).toBeNull();
  });
});

describe("a memory's text", () => {
  it("shows what is between backticks as code, unless the backticks are unbalanced", () => {
    expect(textParts("`make test` passes (check `test`)")).toEqual([
      { code: true, text: "make test" },
      { code: false, text: " passes (check " },
      { code: true, text: "test" },
      { code: false, text: ")" },
    ]);
    expect(textParts("a ` b")).toEqual([{ code: false, text: "a ` b" }]);
  });
});
