import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { flushSync, mount, unmount } from "svelte";
import { afterEach, describe, expect, it } from "vitest";
import type { Settings } from "../../ipc/settings";
import PolicyEditor from "./PolicyEditor.svelte";
import SetupScreen from "./SetupScreen.svelte";
import { formatBytes } from "../../components/format";

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = "";
  clearMocks();
});

const settle = (ms = 0) => new Promise((r) => setTimeout(r, ms));

function settingsWith(keychain: boolean): Settings {
  return {
    home: "/home/u/.local/share/bosun",
    config_path: "/home/u/.local/share/bosun/config.toml",
    providers: [],
    default_provider: null,
    default_mode: null,
    keychain: { available: keychain, message: keychain ? "ok" : "No system keychain is available (no D-Bus). Put the key in an environment variable instead." },
    presets: [
      { id: "ollama", label: "Ollama", base_url: "http://127.0.0.1:11434/v1", local: true },
      { id: "openrouter", label: "OpenRouter", base_url: "https://openrouter.ai/api/v1", local: false },
      { id: "gemini", label: "Gemini (OpenAI-compatible)", base_url: "https://generativelanguage.googleapis.com/v1beta/openai", local: false, api_key_env: "GEMINI_API_KEY" },
    ],
    provider_defaults: {
      connect_timeout_secs: 10,
      first_byte_timeout_secs: 300,
      idle_timeout_secs: 60,
      max_output_tokens: 8192,
      max_response_bytes: 8388608,
    },
    routing: {},
    roles: ["main", "planner", "worker", "summarizer", "escalation"],
  };
}

type Handler = (cmd: string, args: Record<string, unknown>) => unknown;

function renderSetup(settings: Settings, handler: Handler) {
  const calls: { cmd: string; args: Record<string, unknown> }[] = [];
  mockIPC((cmd, args) => {
    calls.push({ cmd, args: args as Record<string, unknown> });
    return handler(cmd, args as Record<string, unknown>);
  });
  const saved: Settings[] = [];
  let skipped = 0;
  const target = document.createElement("div");
  document.body.appendChild(target);
  app = mount(SetupScreen, { target, props: { settings, onsaved: (s: Settings) => saved.push(s), onskip: () => skipped++ } });
  flushSync();
  const set = (name: string, value: string) => {
    const el = target.querySelector<HTMLInputElement | HTMLSelectElement>(`[name="${name}"]`)!;
    el.value = value;
    el.dispatchEvent(new Event(el instanceof HTMLSelectElement ? "change" : "input", { bubbles: true }));
    flushSync();
  };
  const click = async (sel: string) => {
    target.querySelector<HTMLElement>(sel)!.click();
    await settle();
    flushSync();
  };
  return { target, calls, saved, set, click, skipped: () => skipped };
}

describe("the first-run setup screen", () => {
  it("adds a local server from a preset: tests the connection, lists its models, saves it", async () => {
    const s = settingsWith(true);
    const { target, calls, saved, click } = renderSetup(s, (cmd) => {
      if (cmd === "test_provider") return ["qwen2.5-coder:7b", "llama3.2"];
      if (cmd === "save_provider") return { ...s, providers: [{ name: "ollama" }] };
      return null;
    });
    expect(target.textContent).toContain("Welcome to Bosun");
    await click('[data-preset="ollama"]');
    expect(target.querySelector<HTMLInputElement>('[name="base_url"]')!.value).toBe("http://127.0.0.1:11434/v1");
    expect(target.querySelector<HTMLInputElement>('[name="name"]')!.value).toBe("ollama");
    await click("[data-test-connection]");
    expect(target.querySelector('[data-test-result="ok"]')?.textContent).toContain("Connected: 2 models");
    expect(target.querySelector<HTMLSelectElement>('select[name="model"]')!.value).toBe("qwen2.5-coder:7b");
    await click("[data-save-provider]");
    expect(calls.map((c) => c.cmd)).toEqual(["test_provider", "save_provider"]);
    expect(calls[1].args).toEqual({
      name: "ollama",
      provider: { api: "openai-chat", model: "qwen2.5-coder:7b", base_url: "http://127.0.0.1:11434/v1", profile: {} },
      apiKey: null,
      previous: null,
    });
    expect(saved).toHaveLength(1);
  });

  it("offers OpenAI's Responses API by default, and Chat Completions on request", async () => {
    const s = settingsWith(true);
    const { calls, set, click } = renderSetup(s, (cmd) => (cmd === "save_provider" ? s : null));
    await click('[data-kind="openai"]');
    set("model", "gpt-5");
    await click("[data-save-provider]");
    expect(calls[0].args.name).toBe("openai");
    expect((calls[0].args.provider as { api: string }).api).toBe("openai-responses");
    set("openai_api", "openai-chat");
    await click("[data-save-provider]");
    expect((calls[1].args.provider as { api: string }).api).toBe("openai-chat");
  });

  it("has a Gemini preset: its OpenAI-compatible endpoint, with the key from GEMINI_API_KEY unless one is typed", async () => {
    const s = settingsWith(true);
    const { target, calls, set, click } = renderSetup(s, (cmd) => (cmd === "save_provider" ? s : null));
    await click('[data-preset="gemini"]');
    expect(target.querySelector<HTMLInputElement>('[name="base_url"]')!.value).toBe("https://generativelanguage.googleapis.com/v1beta/openai");
    expect(target.querySelector<HTMLInputElement>('[name="api_key_env"]')!.placeholder).toBe("GEMINI_API_KEY");
    set("model", "gemini-2.5-flash");
    await click("[data-save-provider]");
    expect(calls[0].args).toEqual({
      name: "gemini",
      provider: {
        api: "openai-chat",
        model: "gemini-2.5-flash",
        base_url: "https://generativelanguage.googleapis.com/v1beta/openai",
        api_key_env: "GEMINI_API_KEY",
        profile: {},
      },
      apiKey: null,
      previous: null,
    });
    set("api_key", "AIza-typed-key");
    await click("[data-save-provider]");
    expect((calls[1].args.provider as { api_key_env?: string }).api_key_env).toBeUndefined();
    expect(calls[1].args.apiKey).toBe("AIza-typed-key");
  });

  it("shows why a connection failed, and offers the environment variable when there is no keychain", async () => {
    const { target, set, click, skipped } = renderSetup(settingsWith(false), (cmd) => {
      if (cmd === "test_provider") throw { code: "connection", message: "nothing answers at http://127.0.0.1:8080/v1/models: is the server running?" };
      return null;
    });
    expect(target.querySelector("[data-keychain-unavailable]")?.textContent).toContain("environment variable");
    expect(target.querySelector('[name="api_key"]')).toBeNull();
    expect(target.querySelector('[name="api_key_env"]')).not.toBeNull();
    set("base_url", "http://127.0.0.1:8080/v1");
    await click("[data-test-connection]");
    expect(target.querySelector('[data-test-result="error"]')?.textContent).toContain("nothing answers at http://127.0.0.1:8080");
    await click("[data-skip-setup]");
    expect(skipped()).toBe(1);
  });

  it("shows the timeouts and limits with their defaults, sends only those set and refuses a bad one", async () => {
    const s = settingsWith(true);
    const { target, calls, set, click } = renderSetup(s, (cmd) => (cmd === "save_provider" ? s : null));
    const field = (name: string) => target.querySelector<HTMLInputElement>(`[data-provider-limits] [name="${name}"]`)!;
    expect(field("first_byte_timeout_secs").placeholder).toBe("300 (default)");
    expect(field("max_response_bytes").placeholder).toBe("8388608 (default)");
    await click('[data-preset="ollama"]');
    set("model", "qwen3");
    set("idle_timeout_secs", "0");
    await click("[data-save-provider]");
    expect(target.querySelector('[role="alert"]')?.textContent).toContain("Idle timeout: give a whole number of at least 1");
    expect(calls).toEqual([]);
    set("idle_timeout_secs", "");
    set("first_byte_timeout_secs", "900");
    await click("[data-save-provider]");
    expect(calls.map((c) => c.cmd)).toEqual(["save_provider"]);
    expect((calls[0].args.provider as { limits?: unknown }).limits).toEqual({ first_byte_timeout_secs: 900 });
  });

  it("fills in a detected local server", async () => {
    const { target, click } = renderSetup(settingsWith(true), (cmd) =>
      cmd === "detect_servers" ? [{ preset: "ollama", label: "Ollama", base_url: "http://127.0.0.1:11434/v1", models: ["qwen3"] }] : null,
    );
    await click("[data-detect]");
    const found = target.querySelector<HTMLButtonElement>("[data-detected] button")!;
    expect(found.textContent).toContain("Ollama");
    found.click();
    flushSync();
    expect(target.querySelector<HTMLSelectElement>('select[name="model"]')!.value).toBe("qwen3");
    expect(target.querySelector<HTMLInputElement>('[name="name"]')!.value).toBe("ollama");
  });
});

describe("the policy editor", () => {
  it("checks a typed command against the draft and refuses to save an invalid file with its line", async () => {
    const calls: { cmd: string; args: Record<string, unknown> }[] = [];
    mockIPC((cmd, args) => {
      calls.push({ cmd, args: args as Record<string, unknown> });
      if (cmd === "read_policy") return { path: "/h/policy.toml", text: "", exists: false };
      if (cmd === "check_policy")
        return { decision: "deny", rule: 'commands.deny "git push *"', source: "/h/policy.toml:2", mode: "ask", reason: "pushing is denied" };
      if (cmd === "save_policy") throw { code: "invalid_policy", message: "/h/policy.toml:2: expected a list of strings" };
      return null;
    });
    const target = document.createElement("div");
    document.body.appendChild(target);
    app = mount(PolicyEditor, { target });
    await settle();
    flushSync();
    const text = target.querySelector<HTMLTextAreaElement>('[name="policy"]')!;
    text.value = '[commands]\ndeny = ["git push *"]\n';
    text.dispatchEvent(new Event("input", { bubbles: true }));
    const cmd = target.querySelector<HTMLInputElement>('[name="policy_command"]')!;
    cmd.value = "git push origin main";
    cmd.dispatchEvent(new Event("input", { bubbles: true }));
    flushSync();
    await settle(200);
    flushSync();
    const check = calls.find((c) => c.cmd === "check_policy");
    expect(check?.args).toEqual({ text: '[commands]\ndeny = ["git push *"]\n', command: "git push origin main", mode: null });
    const shown = target.querySelector('[data-policy-check="deny"]')!;
    expect(shown.textContent).toContain("pushing is denied");
    expect(shown.textContent).toContain("/h/policy.toml:2");

    target.querySelector<HTMLButtonElement>("[data-save-policy]")!.click();
    await settle();
    flushSync();
    expect(target.querySelector("[data-policy-error]")?.textContent).toBe("/h/policy.toml:2: expected a list of strings");
  });
});

describe("byte counts", () => {
  it("read like a file manager's", () => {
    expect([formatBytes(512), formatBytes(2048), formatBytes(5 * 1024 * 1024), formatBytes(300 * 1024 * 1024)]).toEqual([
      "512 B",
      "2.0 KB",
      "5.0 MB",
      "300 MB",
    ]);
  });
});
