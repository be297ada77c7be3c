import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { flushSync, mount, unmount } from "svelte";
import { afterEach, describe, expect, it } from "vitest";
import BaseBranchSelect from "./BaseBranchSelect.svelte";

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = "";
  clearMocks();
});

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

function render(repo: string) {
  const asked: unknown[] = [];
  mockIPC((cmd, args) => {
    if (cmd !== "list_branches") throw new Error(`unexpected ${cmd}`);
    asked.push(args);
    const path = (args as { repo: string }).repo;
    if (path === "/work/acme") return { current: "main", names: ["dev", "feature/login", "main"] };
    throw { code: "not_a_repo", message: `${path} is not a git repository: choose a folder under git` };
  });
  const target = document.createElement("div");
  document.body.appendChild(target);
  app = mount(BaseBranchSelect, { target, props: { repo } });
  flushSync();
  return { target, asked };
}

describe("the base branch select", () => {
  it("lists the repository's local branches, HEAD first with the checked-out branch", async () => {
    const { target, asked } = render("/work/acme");
    await wait(400);
    flushSync();
    expect(asked).toEqual([{ repo: "/work/acme" }]);
    const options = [...target.querySelectorAll("select[name=base] option")].map((o) => o.textContent);
    expect(options).toEqual(["HEAD (main)", "dev", "feature/login", "main"]);
    const select = target.querySelector<HTMLSelectElement>("select[name=base]")!;
    expect(select.disabled).toBe(false);
    expect(select.value).toBe("");
  });

  it("says so when the folder is not a git repository", async () => {
    const { target } = render("/tmp/photos");
    await wait(400);
    flushSync();
    expect(target.querySelector("[data-base-problem]")?.textContent).toMatch(/not a git repository/);
    expect(target.querySelectorAll("select[name=base] option")).toHaveLength(1);
  });
});
