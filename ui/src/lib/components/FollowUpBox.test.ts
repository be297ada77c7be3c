import { flushSync, mount, unmount } from "svelte";
import { afterEach, describe, expect, it } from "vitest";
import type { TaskStatus } from "../bindings/TaskStatus";
import FollowUpBox from "./FollowUpBox.svelte";

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = "";
});

function render(status: TaskStatus, busy = false) {
  const sent: string[] = [];
  let resumed = 0;
  const target = document.createElement("div");
  document.body.appendChild(target);
  app = mount(FollowUpBox, {
    target,
    props: { status, busy, onsend: (m: string) => sent.push(m), onresume: () => (resumed += 1) },
  });
  flushSync();
  const box = target.querySelector<HTMLTextAreaElement>('[data-follow-up] [name="message"]')!;
  const type = (text: string) => {
    box.value = text;
    box.dispatchEvent(new Event("input", { bubbles: true }));
    flushSync();
  };
  return { target, box, type, sent, resumes: () => resumed };
}

describe("the follow-up box", () => {
  it("sends the message on Ctrl+Enter and on Cmd+Enter, trimmed, and not a plain Enter", () => {
    const { box, type, sent } = render("completed");
    type("  Now add a test  ");
    box.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true, cancelable: true }));
    expect(sent).toEqual([]);
    box.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", ctrlKey: true, bubbles: true, cancelable: true }));
    box.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", metaKey: true, bubbles: true, cancelable: true }));
    expect(sent).toEqual(["Now add a test", "Now add a test"]);
  });

  it("does not send an empty message, and the Send button waits for text", () => {
    const { target, box, type, sent } = render("failed");
    const send = target.querySelector<HTMLButtonElement>("[data-send]")!;
    expect(send.disabled).toBe(true);
    type("   ");
    box.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", ctrlKey: true, bubbles: true }));
    expect(sent).toEqual([]);
    type("Try again");
    expect(send.disabled).toBe(false);
    send.click();
    flushSync();
    expect(sent).toEqual(["Try again"]);
  });

  it("offers Resume only for an interrupted task", () => {
    const done = render("completed");
    expect(done.target.querySelector("[data-resume]")).toBeNull();
    unmount(app!);
    app = null;
    const stopped = render("interrupted");
    const resume = stopped.target.querySelector<HTMLButtonElement>("[data-resume]")!;
    expect(resume.textContent).toMatch(/Resume/);
    resume.click();
    expect(stopped.resumes()).toBe(1);
    expect(stopped.sent).toEqual([]);
  });

  it("while a message is on its way, neither sends again nor resumes", () => {
    const { target, type, sent } = render("interrupted", true);
    type("again");
    target.querySelector<HTMLButtonElement>("[data-send]")!.click();
    expect(sent).toEqual([]);
    expect(target.querySelector<HTMLButtonElement>("[data-resume]")!.disabled).toBe(true);
  });
});
