import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { flushSync, mount, unmount } from "svelte";
import { afterEach, describe, expect, it } from "vitest";
import NewTaskForm from "./NewTaskForm.svelte";

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = "";
  localStorage.clear();
  clearMocks();
});

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("choosing the repository of a new task", () => {
  it("takes the folder the picker returns and lists that repository's branches", async () => {
    const calls: { cmd: string; args: unknown }[] = [];
    let picked: string | null = "/work/picked";
    mockIPC((cmd, args) => {
      calls.push({ cmd, args });
      if (cmd === "plugin:dialog|open") return picked;
      if (cmd === "list_branches") return { current: "trunk", names: ["release", "trunk"] };
      return null;
    });
    const target = document.createElement("div");
    document.body.appendChild(target);
    app = mount(NewTaskForm, { target, props: { recentRepos: ["/work/acme"], onstarted: () => {}, oncancel: () => {} } });
    flushSync();
    const repo = target.querySelector<HTMLInputElement>('[name="repo"]')!;

    target.querySelector<HTMLButtonElement>("[data-pick-repo]")!.click();
    await wait(0);
    flushSync();
    const open = calls.find((c) => c.cmd === "plugin:dialog|open");
    expect(open?.args).toMatchObject({ options: { directory: true, multiple: false, defaultPath: "/work/acme" } });
    expect(repo.value).toBe("/work/picked");

    await wait(400);
    flushSync();
    expect(calls.filter((c) => c.cmd === "list_branches").at(-1)?.args).toEqual({ repo: "/work/picked" });
    const options = [...target.querySelectorAll("select[name=base] option")].map((o) => o.textContent);
    expect(options).toEqual(["HEAD (trunk)", "release", "trunk"]);

    // Cancelling the picker keeps the path.
    picked = null;
    target.querySelector<HTMLButtonElement>("[data-pick-repo]")!.click();
    await wait(0);
    flushSync();
    expect(repo.value).toBe("/work/picked");
  });
});
