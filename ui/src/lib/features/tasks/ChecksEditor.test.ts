import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { flushSync, mount, unmount } from "svelte";
import { afterEach, describe, expect, it } from "vitest";
import type { RepoChecks } from "../../bindings/RepoChecks";
import NewTaskForm from "./NewTaskForm.svelte";

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = "";
  localStorage.clear();
  clearMocks();
});

async function until<T>(found: () => T | null | undefined): Promise<T> {
  for (let i = 0; i < 200; i++) {
    flushSync();
    const v = found();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error("never appeared");
}

const discovered: RepoChecks = {
  checks: [
    { name: "test", command: "cargo test", timeout_secs: 600, required: true, when: "end" },
    { name: "lint", command: "cargo clippy", timeout_secs: 600, required: false, when: "end" },
  ],
  source: "discovered",
  config_path: "/work/acme/.bosun/config.toml",
};

/** The form on /work/acme with a model filled in, against a backend that records what it is asked. */
async function render(checksForRepo: () => RepoChecks = () => discovered) {
  const calls: { cmd: string; args: Record<string, unknown> }[] = [];
  mockIPC((cmd, args) => {
    calls.push({ cmd, args: (args ?? {}) as Record<string, unknown> });
    if (cmd === "checks_for_repo") return checksForRepo();
    if (cmd === "save_checks") return "/work/acme/.bosun/config.toml";
    return "01task";
  });
  const target = document.createElement("div");
  document.body.appendChild(target);
  app = mount(NewTaskForm, { target, props: { recentRepos: ["/work/acme"], onstarted: () => {}, oncancel: () => {} } });
  flushSync();
  const set = (el: HTMLInputElement | HTMLTextAreaElement, value: string) => {
    el.value = value;
    el.dispatchEvent(new Event("input", { bubbles: true }));
    flushSync();
  };
  set(target.querySelector<HTMLTextAreaElement>('[name="prompt"]')!, "Fix it");
  set(target.querySelector<HTMLInputElement>('[name="model"]')!, "m");
  const start = async () => {
    target.querySelector<HTMLButtonElement>("[data-start]")!.click();
    const request = await until(() => calls.find((c) => c.cmd === "start_task")?.args.request as Record<string, unknown> | undefined);
    return request;
  };
  return { target, calls, set, start };
}

const rows = (root: Element) => [...root.querySelectorAll('[data-testid="check-edit-row"]')];

describe("the checks in the New task form", () => {
  it("shows what the repository would run and, untouched, leaves the task to run the repository's plan", async () => {
    const { target, calls, start } = await render();
    await until(() => rows(target).length === 2);
    expect(calls.filter((c) => c.cmd === "checks_for_repo").map((c) => c.args)).toEqual([{ repo: "/work/acme" }]);
    expect(target.querySelector('[data-testid="checks-source"]')?.textContent).toBe("discovered from the repository's files");
    const request = await start();
    expect("checks" in request).toBe(false);
    expect(calls.some((c) => c.cmd === "save_checks")).toBe(false);
  });

  it("sends the edited list: a changed command, an added check, a removed one", async () => {
    const { target, set, start } = await render();
    await until(() => rows(target).length === 2);
    set(rows(target)[0].querySelector<HTMLInputElement>('[aria-label^="Command"]')!, "cargo test --workspace");
    rows(target)[1].querySelector<HTMLButtonElement>('[aria-label^="Remove check"]')!.click();
    flushSync();
    target.querySelector<HTMLButtonElement>('[data-testid="checks-add"]')!.click();
    flushSync();
    set(rows(target)[1].querySelector<HTMLInputElement>('[aria-label^="Command"]')!, "npm run check");
    const when = rows(target)[1].querySelector<HTMLSelectElement>("select")!;
    when.value = "edit";
    when.dispatchEvent(new Event("change", { bubbles: true }));
    flushSync();
    expect(target.querySelector('[data-testid="checks-edited"]')?.textContent).toBe("edited for this task");
    const request = await start();
    expect(request.checks).toEqual([
      { name: "test", command: "cargo test --workspace", timeout_secs: 600, required: true, when: "end" },
      { name: "npm", command: "npm run check", timeout_secs: 600, required: true, when: "edit" },
    ]);
  });

  it("sends no checks when asked to run none", async () => {
    const { target, start } = await render();
    await until(() => rows(target).length === 2);
    target.querySelector<HTMLInputElement>('[data-testid="checks-none"]')!.click();
    flushSync();
    expect(rows(target)).toHaveLength(0);
    expect((await start()).checks).toEqual([]);
  });

  it("writes .bosun/config.toml only when Save is clicked, and says where", async () => {
    const { target, calls } = await render();
    await until(() => rows(target).length === 2);
    expect(calls.some((c) => c.cmd === "save_checks")).toBe(false);
    target.querySelector<HTMLButtonElement>('[data-testid="checks-save"]')!.click();
    const saved = await until(() => target.querySelector('[data-testid="checks-saved"]'));
    expect(saved.textContent).toBe("Saved to /work/acme/.bosun/config.toml");
    expect(calls.find((c) => c.cmd === "save_checks")?.args).toEqual({ repo: "/work/acme", checks: discovered.checks });
  });

  it("says when the repository's checks cannot be read, and starts anyway", async () => {
    const { target, start } = await render(() => {
      throw { code: "config", message: ".bosun/config.toml: unknown key `chekcs`" };
    });
    const problem = await until(() => target.querySelector('[data-testid="checks-load-error"]'));
    expect(problem.textContent).toContain("unknown key `chekcs`");
    expect("checks" in (await start())).toBe(false);
  });
});
