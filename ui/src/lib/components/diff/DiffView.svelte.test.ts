import { flushSync, mount, unmount } from "svelte";
import { afterEach, describe, expect, it } from "vitest";
import type { DiffLine } from "../../bindings/DiffLine";
import { hunk, libDiff } from "../../features/review/fixtures";
import { ReviewSession } from "../../state/review.svelte";
import DiffView from "./DiffView.svelte";

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = "";
});

/** Waits (in small steps, re-rendering) until `found` gives something, or gives up. */
async function until<T>(found: () => T | null | undefined): Promise<T | null> {
  for (let i = 0; i < 200; i++) {
    flushSync();
    const v = found();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 10));
  }
  return null;
}

function render(props: Record<string, unknown>) {
  const target = document.createElement("div");
  document.body.appendChild(target);
  app = mount(DiffView, { target, props: props as never });
  flushSync();
  return target;
}

function libProps(extra: Record<string, unknown> = {}) {
  const d = libDiff();
  return { path: d.file.path, hunks: d.file.hunks, oldText: d.old_text, newText: d.new_text, ...extra };
}

const lines = (root: Element) => [...root.querySelectorAll<HTMLElement>('[data-testid="diff-line"]')];
const lineText = (el: Element) => el.querySelector(".code")?.textContent ?? "";

describe("the diff view", () => {
  it("scrolls a long line sideways under its own bar, moving only the code, not the line numbers", () => {
    const long = "x".repeat(300);
    const view = render({
      path: "long.txt",
      hunks: [
        hunk(1, {
          header: "@@ -1 +1 @@",
          old_start: 1,
          old_lines: 1,
          new_start: 1,
          new_lines: 1,
          added: 1,
          removed: 1,
          lines: [
            { kind: "removed", old_line: 1, text: "short", no_newline: false },
            { kind: "added", new_line: 1, text: long, no_newline: false },
          ] as DiffLine[],
        }),
      ],
    });
    const bar = view.querySelector<HTMLElement>('[data-testid="diff-hscroll"]')!;
    // As wide as the longest line (300 characters) plus the gutters.
    expect((bar.firstElementChild as HTMLElement).style.width).toContain("300ch");
    bar.scrollLeft = 240;
    bar.dispatchEvent(new Event("scroll"));
    flushSync();
    const diff = view.querySelector<HTMLElement>(".diff")!;
    expect(diff.style.getPropertyValue("--scroll-x")).toBe("240px");
    // The code shifts (LineCode reads --scroll-x); the gutter is outside the shifted part.
    const added = lines(view).find((l) => l.dataset.kind === "added")!;
    expect(added.querySelector(".code .shift")?.textContent).toBe(long);
    expect(added.querySelector(".shift [data-testid='line-number']")).toBeNull();
  });

  it("shows a unified diff: hunks with their verdict buttons, numbered lines, folded context", () => {
    const view = render(libProps());
    const hunks = [...view.querySelectorAll<HTMLElement>('[data-testid="hunk"]')];
    expect(hunks.map((h) => [h.dataset.hunkId, h.dataset.state])).toEqual([
      ["lib-1", "unreviewed"],
      ["lib-2", "unreviewed"],
    ]);
    expect(hunks[0].querySelector('[data-testid="hunk-accept"]')).not.toBeNull();
    expect(hunks[0].textContent).toContain("edit_file src/lib.rs");
    const added = lines(view).filter((l) => l.dataset.kind === "added");
    expect(added.map((l) => [l.dataset.newLine, lineText(l)])).toEqual([
      ["5", "fn sum_all(xs: &[u32]) -> u32 {"],
      ["6", "  xs.iter().sum()"],
      ["41", "// added one"],
      ["42", "// added two"],
    ]);
    expect([...view.querySelectorAll('[data-testid="diff-gap"]')].map((g) => g.getAttribute("data-hidden"))).toEqual(["1", "28"]);
  });

  it("marks the words that changed inside a replaced line", () => {
    const view = render(libProps());
    const renamed = lines(view).find((l) => l.dataset.newLine === "5" && l.dataset.kind === "added")!;
    expect([...renamed.querySelectorAll(".word")].map((w) => w.textContent)).toEqual(["sum_all"]);
    const old = lines(view).find((l) => l.dataset.oldLine === "5" && l.dataset.kind === "removed")!;
    expect([...old.querySelectorAll(".word")].map((w) => w.textContent)).toEqual(["total"]);
  });

  it("shows the base on the left and the latest on the right side by side", () => {
    const view = render(libProps({ split: true }));
    const row = lines(view).find((l) => l.dataset.newLine === "5")!;
    expect(lineText(row.querySelector('[data-side="old"]')!)).toBe("fn total(xs: &[u32]) -> u32 {");
    expect(lineText(row.querySelector('[data-side="new"]')!)).toBe("fn sum_all(xs: &[u32]) -> u32 {");
    const appended = lines(view).find((l) => l.dataset.newLine === "41")!;
    expect(appended.querySelector('[data-side="old"]')?.classList.contains("none")).toBe(true);
  });

  it("shows a re-indented line as unchanged when whitespace is hidden", () => {
    const view = render(libProps({ hideWhitespace: true }));
    const six = lines(view).find((l) => l.dataset.newLine === "6")!;
    expect(six.dataset.kind).toBe("context");
    expect(lines(view).filter((l) => l.dataset.kind === "removed")).toHaveLength(1);
  });

  it("opens the folded lines between hunks on request", () => {
    const view = render(libProps());
    expect(lines(view).some((l) => l.dataset.newLine === "20")).toBe(false);
    const gap = [...view.querySelectorAll<HTMLElement>('[data-testid="diff-gap"]')][1];
    gap.querySelector<HTMLButtonElement>('[data-expand="down"]')!.click();
    flushSync();
    expect(lines(view).some((l) => l.dataset.newLine === "29")).toBe(true);
    expect(lines(view).some((l) => l.dataset.newLine === "30")).toBe(false);
    view.querySelectorAll<HTMLElement>('[data-testid="diff-gap"]')[1].querySelector<HTMLButtonElement>('[data-expand="all"]')!.click();
    flushSync();
    expect(view.querySelectorAll('[data-testid="diff-gap"]')).toHaveLength(1);
    expect(lines(view).some((l) => l.dataset.newLine === "37")).toBe(true);
  });

  it("colours code by its language once parsed", async () => {
    const view = render(libProps());
    const renamed = () => lines(view).find((l) => l.dataset.newLine === "5" && l.dataset.kind === "added")!;
    const keyword = await until(() => renamed().querySelector(".tok-keyword"));
    expect(keyword?.textContent).toBe("fn");
    expect(renamed().querySelector(".word")?.textContent).toBe("sum_all");
  });

  it("keeps only a window of a 50,000-line file in the page", async () => {
    const count = 50_000;
    const body: DiffLine[] = Array.from({ length: count }, (_, i) => ({ kind: "added", new_line: i + 1, text: `const v${i} = ${i};`, no_newline: false }));
    const big = hunk(1, { id: "big", new_start: 1, new_lines: count, header: `@@ -0,0 +1,${count} @@`, added: count, lines: body });
    const newText = body.map((l) => l.text).join("\n") + "\n";
    const view = render({ path: "gen/big.js", hunks: [big], oldText: "", newText });
    const viewport = view.querySelector<HTMLElement>('[data-testid="diff-rows"]')!;
    expect(viewport.dataset.rows).toBe(String(count + 1));
    expect(lines(view).length).toBeGreaterThan(10);
    expect(lines(view).length).toBeLessThan(200);
    viewport.scrollTop = 20 * 25_000;
    viewport.dispatchEvent(new Event("scroll"));
    flushSync();
    const shown = lines(view).map((l) => Number(l.dataset.newLine));
    expect(shown.length).toBeLessThan(200);
    expect(shown).toContain(25_010);
    expect(shown).not.toContain(1);
  });
});

describe("commenting on lines", () => {
  it("selects a line with a click and a range with Shift+click, then opens the comment box under it", () => {
    const session = new ReviewSession("t1");
    const props = $state({
      ...libProps(),
      selection: null as { start: number; end: number } | null,
      composing: false,
      onselect: (line: number, extend: boolean) => {
        session.selectLine(line, extend);
        props.selection = session.selection;
      },
    });
    const view = render(props);
    const number = (n: number) => lines(view).find((l) => l.dataset.newLine === String(n))!.querySelectorAll<HTMLElement>(".num")[1];
    number(7).click();
    flushSync();
    number(4).dispatchEvent(new MouseEvent("click", { bubbles: true, shiftKey: true }));
    flushSync();
    expect(session.selection).toEqual({ anchor: 7, start: 4, end: 7 });
    const selected = lines(view).filter((l) => l.classList.contains("selected")).map((l) => l.dataset.newLine);
    expect(selected).toEqual(["4", "5", "6", "7"]);

    props.composing = true;
    flushSync();
    const box = view.querySelector<HTMLTextAreaElement>('[data-testid="comment-box"]');
    expect(box).not.toBeNull();
    expect(box?.closest(".slot")?.previousElementSibling?.querySelector("[data-new-line]")?.getAttribute("data-new-line")).toBe("7");
    expect(view.textContent).toContain("Comment on lines 4–7");
  });
});
