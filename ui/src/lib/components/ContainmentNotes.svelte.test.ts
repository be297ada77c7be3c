import { flushSync, mount, unmount } from "svelte";
import { afterEach, describe, expect, it } from "vitest";
import { ev, sampleTask } from "../../test/events";
import { applyEvents, emptyTimeline } from "../state/timeline";
import ContainmentNotes from "./ContainmentNotes.svelte";

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = "";
});

describe("containment notes", () => {
  it("pins a committed-secrets warning above the timeline once, and leaves other warnings in it", () => {
    const secret = "the base commit contains 1 read-denied file (.env): …";
    const timeline = applyEvents(emptyTimeline(), [
      ...sampleTask().slice(0, 2),
      ev(3, { type: "warning", code: "committed_secrets", message: secret }),
      ev(4, { type: "warning", code: "worktree_git_repaired", message: "put back" }),
      ev(5, { type: "warning", code: "committed_secrets", message: secret }),
    ]);
    expect(timeline.notes).toEqual([{ code: "committed_secrets", message: secret }]);
    expect(timeline.items.filter((i) => i.kind === "warning")).toHaveLength(3);

    const target = document.createElement("div");
    document.body.appendChild(target);
    app = mount(ContainmentNotes, { target, props: { notes: timeline.notes } });
    flushSync();
    const notes = [...target.querySelectorAll<HTMLElement>("[data-note]")];
    expect(notes.map((n) => n.dataset.note)).toEqual(["committed_secrets"]);
    expect(notes[0].textContent).toContain("Secrets in the repository's history");
    expect(notes[0].textContent).toContain(".env");
  });
});
