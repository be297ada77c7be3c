import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { flushSync, mount, unmount } from "svelte";
import { afterEach, describe, expect, it } from "vitest";
import type { ProbeReport, ProviderProfile, ProviderView, Settings } from "../../ipc/settings";
import ProviderEditor from "./ProviderEditor.svelte";
import { entryOf, sourceLabel } from "./profile";

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = "";
  clearMocks();
});

const settle = () => new Promise((r) => setTimeout(r, 0));
const noLimits = { connect_timeout_secs: null, first_byte_timeout_secs: null, idle_timeout_secs: null, max_output_tokens: null, max_response_bytes: null };

const settings: Settings = {
  home: "/h",
  config_path: "/h/config.toml",
  providers: [],
  default_provider: null,
  default_mode: null,
  keychain: { available: false, message: "no keychain" },
  presets: [],
  provider_defaults: { connect_timeout_secs: 10, first_byte_timeout_secs: 300, idle_timeout_secs: 60, max_output_tokens: 8192, max_response_bytes: 8388608 },
  routing: {},
  roles: ["main", "planner", "worker", "summarizer", "escalation"],
};

const local: ProviderView = {
  name: "local",
  api: "openai-chat",
  base_url: "http://127.0.0.1:8080/v1",
  model: "qwen",
  api_key_env: null,
  key_in_keychain: false,
  limits: noLimits,
  fallback: [],
};

const report: ProbeReport = {
  base_url: "http://127.0.0.1:8080/v1",
  model: "qwen",
  profile: { native_tools: false, tool_format: "hermes", edit_format: "whole", context_window: 32768, source: "probe" },
  template_from: "llama.cpp /props",
  findings: ["the chat template uses <tool_call> tags", "0 of 2 native tool calls were valid"],
  probed_at: "2026-12-01T19:00:00Z",
};

/** Edit format set in config.toml, the rest from a probe. */
const probed: ProviderProfile = {
  name: "local",
  profile: { native_tools: false, tool_format: "hermes", edit_format: "search-replace", context_window: 32768, source: "config" },
  configured: { edit_format: "search-replace" },
  sources: { native_tools: "probe", tool_format: "probe", edit_format: "config", context_window: "probe" },
  probe: report,
  would_probe: false,
  local: true,
};

type Handler = (cmd: string, args: Record<string, unknown>) => unknown;

async function renderEditor(editing: ProviderView, handler: Handler) {
  const calls: { cmd: string; args: Record<string, unknown> }[] = [];
  mockIPC((cmd, args) => {
    calls.push({ cmd, args: args as Record<string, unknown> });
    return handler(cmd, args as Record<string, unknown>);
  });
  const target = document.createElement("div");
  document.body.appendChild(target);
  app = mount(ProviderEditor, { target, props: { settings, editing, onsaved: () => {} } });
  await settle();
  flushSync();
  const field = <T extends HTMLElement = HTMLInputElement>(name: string) => target.querySelector<T>(`[name="${name}"]`)!;
  const set = (name: string, value: string) => {
    const el = field<HTMLInputElement | HTMLSelectElement>(name);
    el.value = value;
    el.dispatchEvent(new Event(el instanceof HTMLSelectElement ? "change" : "input", { bubbles: true }));
    flushSync();
  };
  const submit = async () => {
    target.querySelector("form")!.dispatchEvent(new Event("submit", { cancelable: true }));
    await settle();
    flushSync();
  };
  const now = (key: string) => target.querySelector(`[data-profile-now="${key}"]`)?.textContent?.replace(/\s+/g, " ").trim();
  return { target, calls, field, set, submit, now };
}

describe("the Model profile of the provider editor", () => {
  it("shows each key's value in effect and where it came from, and the last probe's findings", async () => {
    const { target, field, now } = await renderEditor(local, (cmd) => (cmd === "provider_profile" ? probed : null));
    expect(field<HTMLSelectElement>("profile_edit_format").value).toBe("search-replace");
    expect(field<HTMLSelectElement>("profile_native_tools").value).toBe("auto");
    expect(field<HTMLSelectElement>("profile_tool_format").value).toBe("auto");
    expect(field("profile_context_window").value).toBe("");
    expect(now("edit_format")).toBe("search-replace from config");
    expect(now("native_tools")).toBe("no probed 1 Dec 2026");
    expect(now("tool_format")).toBe("hermes probed 1 Dec 2026");
    expect(now("context_window")).toBe("32,768 tokens probed 1 Dec 2026");
    const findings = target.querySelector("[data-probe-findings]")!.textContent!;
    expect(findings).toContain("chat template from llama.cpp /props");
    expect(findings).toContain("0 of 2 native tool calls were valid");
    // A local server: no word about paid requests.
    expect(target.querySelector("[data-probe-cost]")).toBeNull();
  });

  it("says default for what nothing sets, and that a task would probe it", async () => {
    const fresh: ProviderProfile = {
      ...probed,
      profile: { native_tools: true, tool_format: "native", edit_format: "tools", source: "default" },
      configured: {},
      sources: { native_tools: "default", tool_format: "default", edit_format: "default", context_window: "default" },
      probe: null,
      would_probe: true,
    };
    const { target, now } = await renderEditor(local, (cmd) => (cmd === "provider_profile" ? fresh : null));
    expect(now("native_tools")).toBe("yes default");
    expect(now("context_window")).toBe("unknown default");
    expect(target.textContent).toContain("a task probes it before its first request");
    expect(target.querySelector("[data-probe-findings]")).toBeNull();
  });

  it("saves the keys chosen with the provider and leaves the auto ones out", async () => {
    const { calls, set, submit } = await renderEditor(local, (cmd) => {
      if (cmd === "provider_profile") return probed;
      if (cmd === "save_provider") return settings;
      return null;
    });
    set("profile_native_tools", "no");
    set("profile_context_window", "32768");
    await submit();
    const save = calls.find((c) => c.cmd === "save_provider");
    expect(save?.args).toEqual({
      name: "local",
      provider: {
        api: "openai-chat",
        model: "qwen",
        base_url: "http://127.0.0.1:8080/v1",
        profile: { native_tools: false, edit_format: "search-replace", context_window: 32768 },
      },
      apiKey: null,
      previous: "local",
    });

    // Everything back to auto: an empty profile, which removes the key from config.toml.
    set("profile_native_tools", "auto");
    set("profile_edit_format", "auto");
    set("profile_context_window", "");
    await submit();
    const last = calls.filter((c) => c.cmd === "save_provider").at(-1)!;
    expect((last.args.provider as { profile: unknown }).profile).toEqual({});
  });

  it("refuses a context window that is not a whole number of at least 512 tokens, with a message", async () => {
    const { target, calls, set, submit } = await renderEditor(local, (cmd) => (cmd === "provider_profile" ? probed : settings));
    for (const bad of ["300", "32k", "1.5e4"]) {
      set("profile_context_window", bad);
      await submit();
      expect(target.querySelector('[role="alert"]')?.textContent).toContain("Context window");
      expect(target.querySelector('[role="alert"]')?.textContent).toContain("at least 512");
    }
    expect(calls.filter((c) => c.cmd === "save_provider")).toEqual([]);
  });

  it("shows a failed probe's message in place, and a paid API's warning before", async () => {
    const paid: ProviderView = { ...local, name: "router", base_url: "https://openrouter.ai/api/v1" };
    const view: ProviderProfile = { ...probed, name: "router", probe: null, local: false, sources: { ...probed.sources, native_tools: "default" } };
    const { target, calls } = await renderEditor(paid, (cmd) => {
      if (cmd === "provider_profile") return view;
      if (cmd === "probe_provider") throw { code: "probe", message: "probing openai-chat servers is not built yet" };
      return null;
    });
    expect(target.querySelector("[data-probe-cost]")?.textContent).toContain("paid API");
    target.querySelector<HTMLButtonElement>("[data-probe-provider]")!.click();
    await settle();
    flushSync();
    expect(calls.find((c) => c.cmd === "probe_provider")?.args).toEqual({ name: "router" });
    const err = target.querySelector("[data-probe-error]");
    expect(err?.getAttribute("role")).toBe("alert");
    expect(err?.textContent).toContain("probing openai-chat servers is not built yet");
    expect(target.querySelector<HTMLButtonElement>("[data-probe-provider]")!.disabled).toBe(false);
  });

  it("when the profile cannot be read, says so and saves the provider without touching its profile", async () => {
    const { target, calls, submit } = await renderEditor(local, (cmd) => {
      if (cmd === "provider_profile") throw { code: "config", message: "provider local: profile.tool_format: unknown tool format `xml`" };
      if (cmd === "save_provider") return settings;
      return null;
    });
    expect(target.querySelector("[data-profile-error]")?.textContent).toContain("unknown tool format `xml`");
    expect(target.querySelector('[name="profile_edit_format"]')).toBeNull();
    await submit();
    const save = calls.find((c) => c.cmd === "save_provider")!;
    expect(save.args.provider).not.toHaveProperty("profile");
  });

  it("shows a successful probe's findings and the sources read again", async () => {
    const before: ProviderProfile = { ...probed, probe: null, sources: { ...probed.sources, native_tools: "default" } };
    let probedYet = false;
    const { target, now } = await renderEditor(local, (cmd) => {
      if (cmd === "provider_profile") return probedYet ? probed : before;
      if (cmd === "probe_provider") return (probedYet = true), report;
      return null;
    });
    expect(now("native_tools")).toBe("no default");
    target.querySelector<HTMLButtonElement>("[data-probe-provider]")!.click();
    await settle();
    await settle();
    flushSync();
    expect(target.querySelector("[data-probe-findings]")?.textContent).toContain("the chat template uses <tool_call> tags");
    expect(now("native_tools")).toBe("no probed 1 Dec 2026");
    expect(target.querySelector("[data-probe-error]")).toBeNull();
  });
});

describe("profile keys", () => {
  it("are read for a person and turned into config keys", () => {
    expect(sourceLabel("config", null)).toBe("from config");
    expect(sourceLabel("default", report)).toBe("default");
    expect(sourceLabel("probe", report)).toBe("probed 1 Dec 2026");
    expect(entryOf({ native_tools: "yes", tool_format: "auto", edit_format: "whole", context_window: " 131_072 " })).toEqual({
      native_tools: true,
      edit_format: "whole",
      context_window: 131072,
    });
    expect(entryOf({ native_tools: "auto", tool_format: "auto", edit_format: "auto", context_window: "511" })).toMatch(/at least 512/);
  });
});
