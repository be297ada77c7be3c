import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { flushSync, mount, unmount } from "svelte";
import { afterEach, describe, expect, it, vi } from "vitest";
import NewTaskForm from "./NewTaskForm.svelte";

const noLimits = { connect_timeout_secs: null, first_byte_timeout_secs: null, idle_timeout_secs: null, max_output_tokens: null, max_response_bytes: null };

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = "";
  localStorage.clear();
  clearMocks();
});

function render() {
  const calls: { cmd: string; args: unknown }[] = [];
  mockIPC((cmd, args) => {
    calls.push({ cmd, args });
    return "01task";
  });
  const started: string[] = [];
  const target = document.createElement("div");
  document.body.appendChild(target);
  app = mount(NewTaskForm, {
    target,
    props: { recentRepos: ["/work/acme", "/work/old"], onstarted: (id: string) => started.push(id), oncancel: () => {} },
  });
  flushSync();
  const set = (name: string, value: string) => {
    const el = target.querySelector<HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement>(`[name="${name}"]`)!;
    el.value = value;
    el.dispatchEvent(new Event(el instanceof HTMLSelectElement ? "change" : "input", { bubbles: true }));
    flushSync();
  };
  return { target, calls, started, set };
}

const settle = () => new Promise((r) => setTimeout(r, 0));

describe("the New task form", () => {
  it("starts the task on Ctrl+Enter with what was filled in, the most recent repository first", async () => {
    const { target, calls, started, set } = render();
    expect(target.querySelector<HTMLInputElement>('[name="repo"]')?.value).toBe("/work/acme");
    expect(target.querySelector<HTMLSelectElement>('[name="mode"]')?.value).toBe("ask");
    set("prompt", "Fix the failing test");
    set("model", "qwen2.5-coder:7b");
    set("max_steps", "20");
    set("max_cost_usd", "0.5");
    const prompt = target.querySelector("textarea")!;
    prompt.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", ctrlKey: true, bubbles: true }));
    await settle();
    expect(calls).toEqual([
      {
        cmd: "start_task",
        args: {
          request: {
            repo: "/work/acme",
            prompt: "Fix the failing test",
            provider: { api: "openai-chat", model: "qwen2.5-coder:7b", base_url: "http://127.0.0.1:11434/v1" },
            mode: "ask",
            max_steps: 20,
            max_cost_usd: 0.5,
          },
        },
      },
    ]);
    expect(started).toEqual(["01task"]);
  });

  it("starts a task over the OpenAI Responses API at OpenAI's own address, not Ollama's", async () => {
    const { target, calls, set } = render();
    expect(target.querySelector<HTMLInputElement>('[name="base_url"]')?.value).toBe("http://127.0.0.1:11434/v1");
    set("prompt", "Explain the parser");
    set("api", "openai-responses");
    expect(target.querySelector<HTMLInputElement>('[name="base_url"]')?.value).toBe("");
    set("model", "gpt-5.1-codex");
    set("api_key_env", "OPENAI_API_KEY");
    target.querySelector("textarea")!.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", ctrlKey: true, bubbles: true }));
    await settle();
    expect(calls.length).toBe(1);
    const request = (calls[0].args as { request: { provider: unknown } }).request;
    expect(request.provider).toEqual({ api: "openai-responses", model: "gpt-5.1-codex", api_key_env: "OPENAI_API_KEY" });
    // A URL typed for it stays when the API changes.
    set("base_url", "https://proxy.example/v1");
    set("api", "anthropic");
    expect(target.querySelector<HTMLInputElement>('[name="base_url"]')?.value).toBe("https://proxy.example/v1");
  });

  it("starts a task with a provider saved in Settings by its name", async () => {
    const calls: { cmd: string; args: unknown }[] = [];
    mockIPC((cmd, args) => {
      calls.push({ cmd, args });
      return "01task";
    });
    const target = document.createElement("div");
    document.body.appendChild(target);
    const providers = [
      { name: "local", api: "openai-chat" as const, base_url: "http://127.0.0.1:8080/v1", model: "qwen", api_key_env: null, key_in_keychain: false, limits: noLimits, fallback: [] },
      { name: "claude", api: "anthropic" as const, base_url: null, model: "claude-sonnet-4-5", api_key_env: null, key_in_keychain: true, limits: noLimits, fallback: [] },
    ];
    app = mount(NewTaskForm, {
      target,
      props: { recentRepos: ["/work/acme"], onstarted: () => {}, oncancel: () => {}, providers, defaultProvider: "claude", defaultMode: "auto-edit" },
    });
    flushSync();
    const select = target.querySelector<HTMLSelectElement>('[name="provider"]')!;
    expect(select.value).toBe("claude");
    expect(target.querySelector('[name="base_url"]')).toBeNull();
    expect(target.querySelector<HTMLSelectElement>('[name="mode"]')!.value).toBe("auto-edit");
    const prompt = target.querySelector("textarea")!;
    prompt.value = "Fix it";
    prompt.dispatchEvent(new Event("input", { bubbles: true }));
    flushSync();
    prompt.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", ctrlKey: true, bubbles: true }));
    await settle();
    const start = calls.find((c) => c.cmd === "start_task");
    expect((start?.args as { request: { provider: unknown; mode: string } }).request.provider).toEqual({ name: "claude" });
    expect((start?.args as { request: { mode: string } }).request.mode).toBe("auto-edit");
  });

  it("asks for a plan first when the box is ticked, and only then", async () => {
    const { target, calls, set } = render();
    set("prompt", "Refactor the parser and add tests");
    set("model", "qwen2.5-coder:7b");
    const box = target.querySelector<HTMLInputElement>('[name="plan"]')!;
    expect(box.checked).toBe(false);
    box.click();
    flushSync();
    target.querySelector("textarea")!.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", ctrlKey: true, bubbles: true }));
    await settle();
    const start = calls.find((c) => c.cmd === "start_task");
    expect((start?.args as { request: { plan?: boolean } }).request.plan).toBe(true);
  });

  it("says what is missing instead of starting", async () => {
    const { target, calls, set } = render();
    set("prompt", "Do it");
    target.querySelector<HTMLButtonElement>("[data-start]")!.click();
    await settle();
    flushSync();
    expect(calls).toEqual([]);
    expect(target.querySelector('[role="alert"]')?.textContent).toContain("model");
  });

  it("prepares the worktree as soon as a repository is picked, follows the base, and releases it when closed unused", async () => {
    vi.useFakeTimers();
    try {
      const { calls, set } = render();
      const prepared = () => calls.filter((c) => c.cmd === "prepare_worktree").map((c) => c.args);
      vi.advanceTimersByTime(500);
      expect(prepared()).toEqual([{ repo: "/work/acme", base: null }]);
      set("repo", "/work/old");
      vi.advanceTimersByTime(100);
      set("repo", "/work/other");
      vi.advanceTimersByTime(500);
      expect(prepared()).toEqual([{ repo: "/work/acme", base: null }, { repo: "/work/other", base: null }]);
      unmount(app!);
      app = null;
      expect(calls.filter((c) => c.cmd === "release_prepared_worktree")).toHaveLength(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it("keeps the prepared worktree for the task it starts", async () => {
    const { target, calls, set } = render();
    set("prompt", "Fix it");
    set("model", "m");
    target.querySelector("textarea")!.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", ctrlKey: true, bubbles: true }));
    await settle();
    unmount(app!);
    app = null;
    expect(calls.map((c) => c.cmd)).toContain("start_task");
    expect(calls.map((c) => c.cmd)).not.toContain("release_prepared_worktree");
  });
});
