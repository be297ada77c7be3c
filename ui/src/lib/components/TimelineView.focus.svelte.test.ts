import { flushSync, mount, unmount } from "svelte";
import { afterEach, describe, expect, it } from "vitest";
import { sampleTask } from "../../test/events";
import { applyEvents, emptyTimeline } from "../state/timeline";
import TimelineView from "./TimelineView.svelte";

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = "";
  // jsdom has no scrollIntoView: the test lends one.
  delete (Element.prototype as { scrollIntoView?: unknown }).scrollIntoView;
});

describe("the timeline at an event", () => {
  it("scrolls to and flashes the item the event belongs to: the greatest key at or before its seq", () => {
    const scrolled: string[] = [];
    Element.prototype.scrollIntoView = function (this: Element) {
      scrolled.push(this.getAttribute("data-seq") ?? "");
    };
    const items = applyEvents(emptyTimeline(), sampleTask()).items;
    // The command's output (seq 8) belongs to the tool call opened at seq 6.
    const target = document.createElement("div");
    document.body.appendChild(target);
    const props = $state({ items, focusSeq: 8 as number | null });
    app = mount(TimelineView, { target, props });
    flushSync();
    const focused = [...target.querySelectorAll<HTMLElement>("[data-focused]")];
    expect(focused.map((f) => [f.dataset.seq, f.dataset.kind])).toEqual([["6", "tool"]]);
    expect(scrolled).toEqual(["6"]);

    props.focusSeq = 10;
    flushSync();
    expect(target.querySelector<HTMLElement>("[data-focused]")?.dataset.kind).toBe("checkpoint");
    expect(scrolled).toEqual(["6", "10"]);

    props.focusSeq = null;
    flushSync();
    expect(target.querySelector("[data-focused]")).toBeNull();
  });
});
