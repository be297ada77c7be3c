import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { flushSync, mount, unmount } from "svelte";
import { afterEach, describe, expect, it } from "vitest";
import type { ProviderView, Settings } from "../../ipc/settings";
import ModelRolesSection from "./ModelRolesSection.svelte";

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = "";
  clearMocks();
});

const settle = (ms = 0) => new Promise((r) => setTimeout(r, ms));
const noLimits = { connect_timeout_secs: null, first_byte_timeout_secs: null, idle_timeout_secs: null, max_output_tokens: null, max_response_bytes: null };

function provider(name: string, model: string, fallback: string[] = []): ProviderView {
  return { name, api: "openai-chat", base_url: "http://127.0.0.1:8080/v1", model, api_key_env: null, key_in_keychain: false, limits: noLimits, fallback };
}

function settings(over: Partial<Settings> = {}): Settings {
  return {
    home: "/h",
    config_path: "/h/config.toml",
    providers: [provider("claude", "claude-sonnet-4-5", ["local"]), provider("local", "qwen2.5-coder:7b"), provider("mini", "gpt-5-mini")],
    default_provider: "claude",
    default_mode: null,
    keychain: { available: false, message: "" },
    presets: [],
    provider_defaults: noLimits,
    routing: { summarizer: "mini" },
    roles: ["main", "planner", "worker", "summarizer", "escalation"],
    ...over,
  };
}

function render(s: Settings, handler: (cmd: string, args: Record<string, unknown>) => unknown) {
  const calls: { cmd: string; args: Record<string, unknown> }[] = [];
  mockIPC((cmd, raw) => {
    const args = raw as Record<string, unknown>;
    calls.push({ cmd, args });
    return handler(cmd, args);
  });
  const changed: Settings[] = [];
  const target = document.createElement("div");
  document.body.appendChild(target);
  app = mount(ModelRolesSection, { target, props: { settings: s, onchange: (n: Settings) => changed.push(n) } });
  flushSync();
  const choose = async (name: string, value: string) => {
    const el = target.querySelector<HTMLSelectElement>(`select[name="${name}"]`)!;
    el.value = value;
    el.dispatchEvent(new Event("change", { bubbles: true }));
    await settle();
    flushSync();
  };
  const click = async (sel: string) => {
    target.querySelector<HTMLElement>(sel)!.click();
    await settle();
    flushSync();
  };
  return { target, calls, changed, choose, click };
}

describe("Settings: model roles", () => {
  it("shows each role with its provider or 'same as main', and saves a change as the whole [routing]", async () => {
    const s = settings();
    const { target, calls, changed, choose } = render(s, (cmd, args) => {
      if (cmd === "set_routing") return { ...s, routing: args.routing as Settings["routing"] };
      throw new Error(cmd);
    });
    const roles = [...target.querySelectorAll("[data-role]")].map((r) => r.getAttribute("data-role"));
    expect(roles).toEqual(["main", "planner", "worker", "summarizer", "escalation"]);
    const select = (role: string) => target.querySelector<HTMLSelectElement>(`select[name="role_${role}"]`)!;
    expect(select("summarizer").value).toBe("mini");
    expect(select("worker").value).toBe("");
    expect(select("worker").selectedOptions[0].textContent).toBe("same as main");
    expect(select("main").selectedOptions[0].textContent).toBe("default (claude)");
    expect([...select("worker").options].map((o) => o.value)).toEqual(["", "claude", "local", "mini"]);

    await choose("role_worker", "local");
    expect(calls).toEqual([{ cmd: "set_routing", args: { routing: { summarizer: "mini", worker: "local" } } }]);
    expect(changed[0].routing).toEqual({ summarizer: "mini", worker: "local" });

    await choose("role_summarizer", "");
    expect(calls[1].args).toEqual({ routing: { summarizer: null } });
  });

  it("lists each provider's fallbacks in order, adds one of the others and removes one", async () => {
    const s = settings();
    const { target, calls, choose, click } = render(s, (cmd) => {
      if (cmd === "set_fallback") return s;
      throw new Error(cmd);
    });
    const chain = (p: string) => [...target.querySelectorAll(`[data-fallback-of="${p}"] [data-fallback]`)].map((f) => f.getAttribute("data-fallback"));
    expect(chain("claude")).toEqual(["local"]);
    expect(target.querySelector('[data-fallback-of="local"]')?.textContent).toContain("no fallback");
    // Neither the provider itself nor one already listed is offered.
    const offered = [...target.querySelectorAll<HTMLOptionElement>('select[name="add_fallback_claude"] option')].map((o) => o.value);
    expect(offered).toEqual(["", "mini"]);
    expect(target.querySelector<HTMLButtonElement>('[data-add-fallback="claude"]')!.disabled).toBe(true);

    await choose("add_fallback_claude", "mini");
    await click('[data-add-fallback="claude"]');
    expect(calls).toEqual([{ cmd: "set_fallback", args: { provider: "claude", fallback: ["local", "mini"] } }]);

    await click('[data-fallback-of="claude"] [data-remove-fallback="local"]');
    expect(calls[1]).toEqual({ cmd: "set_fallback", args: { provider: "claude", fallback: [] } });
  });

  it("says why a change was refused", async () => {
    const { target, changed, choose } = render(settings(), (cmd) => {
      if (cmd === "set_routing") throw { code: "config", message: '[routing] worker: no provider named "gone" in config.toml (known: claude, local, mini)' };
      throw new Error(cmd);
    });
    await choose("role_worker", "local");
    expect(target.querySelector('[role="alert"]')?.textContent).toContain("known: claude, local, mini");
    expect(changed).toEqual([]);
  });
});
