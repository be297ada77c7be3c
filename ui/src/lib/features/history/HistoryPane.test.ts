import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { flushSync, mount, unmount } from "svelte";
import { afterEach, describe, expect, it } from "vitest";
import { taskRow } from "../../../test/rows";
import type { HistoryHit, HistoryPage, HistoryTask } from "../../ipc/history";
import HistoryPane from "./HistoryPane.svelte";

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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Search = { query: string; sort: string; offset: number; limit: number };

const facets = {
  repos: [
    { value: "/work/api", count: 6000 },
    { value: "/work/web", count: 4000 },
  ],
  statuses: [{ value: "completed", count: 9000 }],
  models: [{ value: "gpt-4.1", count: 10000 }],
  sources: [{ value: "bosun", count: 10000 }],
};

function hitAt(i: number, over: Partial<HistoryHit> = {}): HistoryHit {
  return {
    task: taskRow({ id: `t${i}`, repo: i % 2 ? "/work/web" : "/work/api", prompt: `task number ${i}\nsecond line` }),
    seq: null,
    kind: null,
    snippet: [],
    ...over,
  };
}

/** The History view over a scripted `history_search` with `total` tasks; records each search. */
function render(opts: { total?: number; answer?: (s: Search) => HistoryPage | Promise<HistoryPage> } = {}) {
  const total = opts.total ?? 10_000;
  const searches: Search[] = [];
  const opened: [HistoryTask, number | null][] = [];
  mockIPC((cmd, args) => {
    if (cmd !== "history_search") throw new Error(`unexpected ${cmd}`);
    const s = args as Search;
    searches.push(s);
    if (opts.answer) return opts.answer(s);
    const hits = [];
    for (let i = s.offset; i < Math.min(total, s.offset + s.limit); i++) hits.push(hitAt(i));
    return { total, hits, facets };
  });
  const target = document.createElement("div");
  document.body.appendChild(target);
  app = mount(HistoryPane, { target, props: { onopen: (task, seq) => opened.push([task, seq]) } });
  return { target, searches, opened };
}

function type(input: HTMLInputElement, text: string) {
  input.value = text;
  input.dispatchEvent(new Event("input", { bubbles: true }));
  flushSync();
}

const rows = (target: HTMLElement) => [...target.querySelectorAll<HTMLElement>('[data-testid="history-row"]')];

describe("the History view", () => {
  it("renders only a window of rows for 10,000 tasks and reads pages as the list scrolls", async () => {
    const { target, searches } = render();
    await until(() => rows(target).length > 0, "rows");
    expect(target.querySelector('[data-testid="history-total"]')?.textContent).toContain("10,000 tasks");
    expect(rows(target).length).toBeLessThan(60);
    expect(rows(target)[0].dataset.taskId).toBe("t0");
    // The scroll area is as tall as every row.
    const space = target.querySelector<HTMLElement>('[data-testid="history-list"] > div')!;
    expect(parseInt(space.style.height)).toBe(10_000 * 46);
    expect(searches).toEqual([{ query: "", sort: "date", offset: 0, limit: 100 }]);

    // Down to row 5,000: not loaded yet (placeholders), then its pages arrive.
    const list = target.querySelector<HTMLElement>('[data-testid="history-list"]')!;
    list.scrollTop = 5_000 * 46;
    list.dispatchEvent(new Event("scroll"));
    flushSync();
    expect(target.querySelectorAll('[data-testid="history-placeholder"]').length).toBeGreaterThan(0);
    await until(() => rows(target).find((r) => r.dataset.taskId === "t5000"), "row 5000");
    expect(target.querySelectorAll('[data-testid="history-placeholder"]').length).toBe(0);
    expect(rows(target).length).toBeLessThan(60);
    expect(searches.map((s) => s.offset)).toEqual([0, 4900, 5000]);

    // Back up: the first page is kept, nothing is read again.
    list.scrollTop = 0;
    list.dispatchEvent(new Event("scroll"));
    flushSync();
    expect(rows(target)[0].dataset.taskId).toBe("t0");
    await sleep(20);
    expect(searches.length).toBe(3);
  });

  it("searches what is typed, with its tokens, after a pause; Enter searches at once", async () => {
    const { target, searches } = render();
    const input = await until(() => target.querySelector<HTMLInputElement>('[data-testid="history-search"]'));
    await until(() => rows(target).length > 0);
    type(input, "repo:api");
    type(input, "repo:api timeout");
    expect(searches.length).toBe(1);
    await sleep(260);
    expect(searches.slice(1)).toEqual([{ query: "repo:api timeout", sort: "date", offset: 0, limit: 100 }]);

    type(input, "status:failed cost>0.5");
    input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
    flushSync();
    expect(searches[searches.length - 1]).toEqual({ query: "status:failed cost>0.5", sort: "date", offset: 0, limit: 100 });

    const sort = target.querySelector<HTMLSelectElement>('[data-testid="history-sort"]')!;
    sort.value = "cost";
    sort.dispatchEvent(new Event("change", { bubbles: true }));
    flushSync();
    await sleep(260);
    expect(searches[searches.length - 1]).toEqual({ query: "status:failed cost>0.5", sort: "cost", offset: 0, limit: 100 });
  });

  it("shows a bad token's message under the search box and keeps the results", async () => {
    const { target } = render({
      answer: (s) => {
        if (s.query.includes("since:")) throw { code: "bad_query", message: "since:yesterday: not a date (2026-11-30, 7d, 2w, 3m)" };
        return { total: 1, hits: [hitAt(0)], facets };
      },
    });
    const input = await until(() => target.querySelector<HTMLInputElement>('[data-testid="history-search"]'));
    await until(() => rows(target).length > 0);
    type(input, "since:yesterday");
    input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
    const error = await until(() => target.querySelector('[data-testid="history-error"]'), "the error");
    expect(error.textContent).toBe("since:yesterday: not a date (2026-11-30, 7d, 2w, 3m)");
    expect(rows(target).length).toBe(1);

    // A search that parses clears it.
    type(input, "parser");
    input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
    await until(() => !target.querySelector('[data-testid="history-error"]'), "the error gone");
  });

  it("adds a facet's token to the query and takes it out on a second click", async () => {
    const { target, searches } = render();
    const input = await until(() => target.querySelector<HTMLInputElement>('[data-testid="history-search"]'));
    const facet = await until(() => target.querySelector<HTMLButtonElement>('[data-facet="repo"][data-value="/work/web"]'), "the facet");
    expect(facet.textContent).toContain("web");
    expect(facet.textContent).toContain("4,000");
    type(input, "timeout");
    facet.click();
    flushSync();
    expect(input.value).toBe("timeout repo:/work/web");
    expect(searches[searches.length - 1].query).toBe("timeout repo:/work/web");
    expect(facet.getAttribute("aria-pressed")).toBe("true");

    target.querySelector<HTMLButtonElement>('[data-facet="status"][data-value="completed"]')!.click();
    flushSync();
    expect(input.value).toBe("timeout repo:/work/web status:completed");

    facet.click();
    flushSync();
    expect(input.value).toBe("timeout status:completed");
    expect(searches[searches.length - 1].query).toBe("timeout status:completed");
    expect(facet.getAttribute("aria-pressed")).toBe("false");
  });

  it("has no Sources facet while every task is Bosun's own", async () => {
    const { target } = render();
    await until(() => target.querySelector('[data-facet="repo"]'), "the facets");
    expect(target.querySelector('[data-facet="source"]')).toBeNull();
    expect(target.querySelector(".facets")!.textContent).not.toContain("Sources");
  });

  it("filters by source from the Sources facet once another agent's sessions are imported", async () => {
    const mixed = { ...facets, sources: [{ value: "bosun", count: 9000 }, { value: "claude-code", count: 900 }, { value: "codex", count: 100 }] };
    const { target, searches } = render({ answer: () => ({ total: 1, hits: [hitAt(0)], facets: mixed }) });
    const input = await until(() => target.querySelector<HTMLInputElement>('[data-testid="history-search"]'));
    const claude = await until(() => target.querySelector<HTMLButtonElement>('[data-facet="source"][data-value="claude-code"]'), "the Claude Code facet");
    expect(target.querySelector(".facets")!.textContent).toContain("Sources");
    expect(claude.textContent).toContain("Claude Code");
    expect(claude.textContent).toContain("900");
    expect(target.querySelector('[data-facet="source"][data-value="bosun"]')!.textContent).toContain("Bosun");
    expect(target.querySelector('[data-facet="source"][data-value="codex"]')!.textContent).toContain("Codex");
    claude.click();
    flushSync();
    expect(input.value).toBe("source:claude-code");
    expect(searches[searches.length - 1].query).toBe("source:claude-code");
    expect(claude.getAttribute("aria-pressed")).toBe("true");
  });

  it("highlights a snippet's hits as text, never as HTML", async () => {
    const snippet = [
      { text: "error: ", hit: false },
      { text: "timeout", hit: true },
      { text: " <script>alert(1)</script><b>bold</b>", hit: false },
    ];
    const { target } = render({
      answer: (s) => ({ total: s.query ? 1 : 0, hits: s.query ? [hitAt(7, { seq: 42, kind: "tool_output", snippet })] : [], facets }),
    });
    const input = await until(() => target.querySelector<HTMLInputElement>('[data-testid="history-search"]'));
    await until(() => target.querySelector('[data-testid="history-empty"]'), "the empty state");
    expect(target.querySelector('[data-testid="history-empty"]')?.textContent).toContain("No tasks yet");
    type(input, "timeout");
    input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
    const shown = await until(() => target.querySelector<HTMLElement>('[data-testid="history-snippet"]'), "the snippet");
    expect([...shown.querySelectorAll("mark")].map((m) => m.textContent)).toEqual(["timeout"]);
    expect(shown.querySelector("script")).toBeNull();
    expect(shown.querySelector("b")).toBeNull();
    expect(shown.textContent).toContain("<script>alert(1)</script><b>bold</b>");
    expect(target.querySelector('[data-testid="history-total"]')?.textContent).toContain("1 task");
  });

  it("opens a hit's task at the event found", async () => {
    const { target, opened } = render({
      answer: () => ({ total: 2, hits: [hitAt(0, { seq: 42, kind: "tool_output", snippet: [{ text: "x", hit: true }] }), hitAt(1)], facets }),
    });
    const row = await until(() => target.querySelector<HTMLElement>('[data-testid="history-row"][data-task-id="t0"]'));
    row.click();
    target.querySelector<HTMLElement>('[data-testid="history-row"][data-task-id="t1"]')!.click();
    expect(opened.map(([t, seq]) => [t.id, seq])).toEqual([
      ["t0", 42],
      ["t1", null],
    ]);
  });

  it("says so when nothing matches", async () => {
    const { target } = render({ answer: (s) => ({ total: s.query ? 0 : 3, hits: s.query ? [] : [hitAt(0), hitAt(1), hitAt(2)], facets }) });
    const input = await until(() => target.querySelector<HTMLInputElement>('[data-testid="history-search"]'));
    await until(() => rows(target).length === 3);
    type(input, "nothing-like-this");
    input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
    const empty = await until(() => target.querySelector('[data-testid="history-empty"]'));
    expect(empty.textContent).toContain("No task matches this search.");
    expect(target.querySelector('[data-testid="history-total"]')?.textContent).toContain("0 tasks");
  });
});
