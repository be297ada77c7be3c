import { flushSync, mount, unmount } from "svelte";
import { afterEach, describe, expect, it } from "vitest";
import { failedRound, twoRounds } from "../../test/checks";
import { ev } from "../../test/events";
import { applyCheckEvents, checksOverview, emptyChecks, type ChecksState } from "../state/checks";
import ChecksPanel from "./ChecksPanel.svelte";
import StatusBadge from "./StatusBadge.svelte";

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = "";
});

function show(checks: ChecksState, props: Record<string, unknown> = {}) {
  const target = document.createElement("div");
  document.body.appendChild(target);
  app = mount(ChecksPanel, { target, props: { checks, overview: checksOverview(checks, false, true), ...props } as never });
  flushSync();
  return target;
}

const row = (root: Element, id: string) => root.querySelector<HTMLElement>(`[data-testid="check-row"][data-check-id="${id}"]`)!;

describe("the Checks panel", () => {
  it("shows a failed round: the overall state, each check's status, and the failing check opened with its failures", () => {
    const target = show(applyCheckEvents(emptyChecks(), failedRound()));
    const panel = target.querySelector('[data-testid="checks-panel"]')!;
    expect(panel.getAttribute("aria-label")).toBe("Checks");
    expect(panel.getAttribute("data-state")).toBe("failed");
    expect(target.querySelector('[data-testid="checks-overall"]')?.textContent).toContain("failed — 1 of 2");
    expect(target.querySelector('[data-testid="checks-round"]')).toBeNull();
    const test = row(target, "r1-test");
    expect(test.dataset.status).toBe("failed");
    expect(test.dataset.blocks).toBe("true");
    expect(test.querySelector('[data-testid="check-status"]')?.textContent).toBe("failed");
    expect(test.querySelector("button")?.getAttribute("aria-label")).toBe("test (related): failed, 1.2 s");
    const failures = [...test.querySelectorAll('[data-testid="check-failure"]')];
    expect(failures.map((f) => f.textContent?.replace(/\s+/g, " ").trim())).toEqual([
      "src/parser.rs:42 parser::tests::empty",
      "src/parser.rs:88 parser::tests::unicode failing before this task",
    ]);
    expect(test.querySelector('[role="log"]')?.getAttribute("data-lines")).toBe("3");
    const lint = row(target, "r1-lint");
    expect(lint.querySelector('[data-testid="check-status"]')?.textContent).toBe("passed");
    expect(lint.querySelector('[role="log"]')).toBeNull();
    lint.querySelector("button")!.click();
    flushSync();
    expect(lint.textContent).toContain("no output");
  });

  it("after a second round that passes, says so with the round, and keeps round 1 one click away", () => {
    const target = show(applyCheckEvents(emptyChecks(), twoRounds()));
    expect(target.querySelector('[data-testid="checks-overall"]')?.textContent).toContain("passed (1 failing before this task too)");
    expect(target.querySelector('[data-testid="checks-round"]')?.textContent).toBe("round 2 of 3");
    expect(row(target, "r2-test").querySelector('[data-testid="check-status"]')?.textContent).toBe("failed (failing before this task)");
    const rounds = [...target.querySelectorAll<HTMLButtonElement>('[aria-label="Rounds"] button')];
    expect(rounds.map((b) => b.textContent?.trim())).toEqual(["round 1 of 3: failed", "round 2 of 3: passed"]);
    rounds[0].click();
    flushSync();
    expect(row(target, "r1-test")).not.toBeNull();
    expect(target.querySelector('[data-testid="checks-round"]')).toBeNull();
  });

  it("has a Re-run button, disabled while it cannot run", () => {
    const runs: string[] = [];
    const target = show(applyCheckEvents(emptyChecks(), twoRounds()), { onrerun: () => runs.push("x"), canRerun: true });
    const button = target.querySelector<HTMLButtonElement>('[data-testid="checks-rerun"]')!;
    expect(button.getAttribute("aria-label")).toBe("Re-run the checks");
    button.click();
    expect(runs).toEqual(["x"]);
    unmount(app!);
    const busy = show(applyCheckEvents(emptyChecks(), twoRounds()), { onrerun: () => {}, canRerun: false });
    expect(busy.querySelector<HTMLButtonElement>('[data-testid="checks-rerun"]')!.disabled).toBe(true);
  });

  it("lists the planned checks before any ran, and says when none run", () => {
    const planned = applyCheckEvents(emptyChecks(), twoRounds().slice(0, 2));
    const target = show(planned);
    expect(target.querySelector('[aria-label="Planned checks"]')?.textContent).toContain("cargo test");
    expect(target.querySelector('[data-testid="checks-overall"]')?.textContent).toContain("checks not run");
    unmount(app!);
    const none = show(applyCheckEvents(emptyChecks(), [ev(1, { type: "checks_planned", checks: [], source: "none", max_rounds: 3 })]));
    expect(none.querySelector('[data-testid="checks-overall"]')?.textContent).toContain("none for this task");
  });
});

describe("the status badge", () => {
  it("says checks failed in the failure tone", () => {
    const target = document.createElement("div");
    document.body.appendChild(target);
    app = mount(StatusBadge, { target, props: { status: "checks_failed" } });
    const badge = target.querySelector(".badge")!;
    expect(badge.textContent?.trim().toLowerCase()).toBe("checks failed");
    expect(badge.classList.contains("bad")).toBe(true);
  });
});
