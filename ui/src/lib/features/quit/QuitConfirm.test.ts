import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { emit } from "@tauri-apps/api/event";
import { flushSync, mount, unmount } from "svelte";
import { afterEach, describe, expect, it } from "vitest";
import QuitConfirm from "./QuitConfirm.svelte";

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = "";
  clearMocks();
});

const settle = () => new Promise((r) => setTimeout(r, 0));

async function render() {
  const calls: string[] = [];
  mockIPC(
    (cmd) => {
      calls.push(cmd);
      return null;
    },
    { shouldMockEvents: true },
  );
  const target = document.createElement("div");
  document.body.appendChild(target);
  app = mount(QuitConfirm, { target });
  flushSync();
  await settle();
  return { target, calls };
}

describe("quitting with tasks running", () => {
  it("asks nothing until the app holds a close back", async () => {
    const { target } = await render();
    expect(target.querySelector("[data-quit-confirm]")).toBeNull();
  });

  it("asks to stop the running tasks and quits only when told to", async () => {
    const { target, calls } = await render();
    await emit("bosun://quit-requested", { running: 2 });
    await settle();
    flushSync();
    const dialog = target.querySelector("[data-quit-confirm]")!;
    expect(dialog.textContent).toMatch(/2 tasks are running: stop them and quit\?/);
    target.querySelector<HTMLButtonElement>("[data-quit]")!.click();
    await settle();
    expect(calls.filter((c) => c === "quit_app")).toHaveLength(1);
  });

  it("keeps the app open on Keep running or Escape, and the next close asks again", async () => {
    const { target, calls } = await render();
    await emit("bosun://quit-requested", { running: 1 });
    await settle();
    flushSync();
    expect(target.querySelector("[data-quit-confirm]")?.textContent).toMatch(/1 task is running: stop it and quit\?/);
    target.querySelector<HTMLButtonElement>("[data-stay]")!.click();
    flushSync();
    expect(target.querySelector("[data-quit-confirm]")).toBeNull();
    expect(calls).toContain("cancel_quit");
    expect(calls).not.toContain("quit_app");

    await emit("bosun://quit-requested", { running: 1 });
    await settle();
    flushSync();
    const dialog = target.querySelector<HTMLElement>("[data-quit-confirm]")!;
    dialog.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true }));
    flushSync();
    expect(target.querySelector("[data-quit-confirm]")).toBeNull();
    expect(calls).not.toContain("quit_app");
  });
});
