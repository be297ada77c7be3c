import { call } from "./journal";

/** Where a provider's key can be kept (src-tauri/src/secrets.rs `KeychainStatus`). */
export interface KeychainStatus {
  available: boolean;
  message: string;
}

/** A known OpenAI-compatible server (src-tauri/src/probe.rs `Preset`). */
export interface Preset {
  id: string;
  label: string;
  base_url: string;
  local: boolean;
  /** The variable its key is usually in: the key variable when none is given. */
  api_key_env?: string;
}

export type Api = "openai-chat" | "openai-responses" | "anthropic";

/** A provider's timeouts and size limits (crates/core/src/config.rs `ProviderLimits`); null: the default. */
export interface ProviderLimits {
  connect_timeout_secs: number | null;
  first_byte_timeout_secs: number | null;
  idle_timeout_secs: number | null;
  max_output_tokens: number | null;
  max_response_bytes: number | null;
}

/** A saved provider: never its key, only where the key lives. */
export interface ProviderView {
  name: string;
  api: Api;
  base_url: string | null;
  model: string;
  api_key_env: string | null;
  key_in_keychain: boolean;
  limits: ProviderLimits;
  /** The providers used in order when this one fails past its retries (`[providers.NAME] fallback`). */
  fallback: string[];
}

/** The roles of `[routing]` (crates/core/src/config.rs `ROLES`). */
export type Role = "main" | "planner" | "worker" | "summarizer" | "escalation";

/** `[routing]`: a provider per role; null uses main's (crates/core/src/config.rs `RoutingSettings`). */
export type RoutingSettings = Partial<Record<Role, string | null>>;

export interface Settings {
  home: string;
  config_path: string;
  providers: ProviderView[];
  default_provider: string | null;
  default_mode: string | null;
  keychain: KeychainStatus;
  presets: Preset[];
  /** The value of each limit a provider leaves unset. */
  provider_defaults: ProviderLimits;
  /** Which provider serves each role. */
  routing: RoutingSettings;
  /** The roles, in the order Settings shows them. */
  roles: Role[];
}

/** A provider as the editor sends it. */
export interface ProviderInput {
  api: Api;
  base_url?: string;
  model: string;
  api_key_env?: string;
  /** Only the limits set; left out, every limit takes its default. */
  limits?: Partial<ProviderLimits>;
  /** The model profile keys set (the others: probed or default); left out, the saved ones stay. */
  profile?: ProfileEntry;
}

/** How tools are offered as text when native tool calls are not reliable (crates/model/src/profile.rs `ToolFormat`). */
export type ToolFormat = "native" | "hermes" | "llama3" | "mistral" | "json";
/** How the model writes edits (crates/model/src/profile.rs `EditFormat`). */
export type EditFormat = "tools" | "whole" | "search-replace";

/** What Bosun knows about one model (crates/model/src/profile.rs `ModelProfile`). */
export interface ModelProfile {
  native_tools: boolean;
  tool_format: ToolFormat;
  edit_format: EditFormat;
  /** Tokens; absent when unknown. */
  context_window?: number;
  source: "default" | "config" | "probe";
}

/** `[providers.NAME] profile = {…}`: only the keys set (crates/core/src/config.rs `ProfileEntry`). */
export interface ProfileEntry {
  native_tools?: boolean;
  tool_format?: ToolFormat;
  edit_format?: EditFormat;
  context_window?: number;
}

/** What one probe of a server and model found (crates/core/src/profiles.rs `ProbeReport`). */
export interface ProbeReport {
  base_url: string;
  model: string;
  profile: ModelProfile;
  template_from?: string;
  findings: string[];
  /** RFC 3339, UTC. */
  probed_at: string;
}

/** Where one key of the profile in effect came from (src-tauri/src/settings/profile.rs `KeySource`). */
export type KeySource = "config" | "probe" | "default";
export type ProfileKey = "native_tools" | "tool_format" | "edit_format" | "context_window";

/** A saved provider's model profile (src-tauri/src/settings/profile.rs `ProviderProfile`). */
export interface ProviderProfile {
  name: string;
  /** The profile its tasks use. */
  profile: ModelProfile;
  /** The keys config.toml sets. */
  configured: ProfileEntry;
  sources: Record<ProfileKey, KeySource>;
  probe: ProbeReport | null;
  /** A task would probe it before its first request. */
  would_probe: boolean;
  /** Its base URL is this machine or the local network. */
  local: boolean;
}

export interface Detected {
  preset: string;
  label: string;
  base_url: string;
  models: string[];
}

export interface PolicyText {
  path: string;
  text: string;
  exists: boolean;
}

export interface PolicyCheck {
  decision: "allow" | "ask" | "deny";
  rule: string;
  source: string;
  mode: string;
  reason: string;
}

export interface DataUsage {
  home: string;
  worktrees_path: string;
  in_use_count: number;
  in_use_bytes: number;
  idle_count: number;
  idle_bytes: number;
}

export const getSettings = (): Promise<Settings> => call("get_settings");

/** Saves a provider; a key goes to the keychain, never to a file. `previous` renames. */
export const saveProvider = (name: string, provider: ProviderInput, apiKey?: string, previous?: string): Promise<Settings> =>
  call("save_provider", { name, provider, apiKey: apiKey || null, previous: previous ?? null });

export const removeProvider = (name: string): Promise<Settings> => call("remove_provider", { name });

export const setDefaults = (defaultProvider: string | null, defaultMode: string | null): Promise<Settings> =>
  call("set_defaults", { defaultProvider, defaultMode });

/** Saves `[routing]`; rejects with code `config` for a name that is not a saved provider. */
export const setRouting = (routing: RoutingSettings): Promise<Settings> => call("set_routing", { routing });

/** Saves the providers `provider` falls back to, in order; rejects for itself or an unknown name. */
export const setFallback = (provider: string, fallback: string[]): Promise<Settings> =>
  call("set_fallback", { provider, fallback });

/** Lists the provider's models, which tests its address and key. */
export const testProvider = (provider: ProviderInput, apiKey?: string, savedAs?: string): Promise<string[]> =>
  call("test_provider", { provider, apiKey: apiKey || null, savedAs: savedAs ?? null });

/** A saved provider's model profile, each key with where it came from. */
export const providerProfile = (name: string): Promise<ProviderProfile> => call("provider_profile", { name });

/** Probes a saved provider's model and keeps the report; rejects with code `probe` when the probe fails. */
export const probeProvider = (name: string): Promise<ProbeReport> => call("probe_provider", { name });

/** Local servers answering on their default ports (127.0.0.1 only). */
export const detectServers = (): Promise<Detected[]> => call("detect_servers");

export const readPolicy = (): Promise<PolicyText> => call("read_policy");
export const savePolicy = (text: string): Promise<PolicyText> => call("save_policy", { text });
export const checkPolicy = (text: string, command: string, mode?: string): Promise<PolicyCheck> =>
  call("check_policy", { text, command, mode: mode || null });

export const dataUsage = (): Promise<DataUsage> => call("data_usage");

/** The limits of one scope (null: none), as the Budgets section of Settings edits them. */
export interface Budgets {
  daily_usd: number | null;
  weekly_usd: number | null;
  monthly_usd: number | null;
  max_usd_per_minute: number | null;
  /** The most one task may cost. */
  max_cost_usd: number | null;
}

export interface BudgetsView {
  /** null: every repository (`[budgets]`); else `[repos."<path>".budgets]`. */
  repo: string | null;
  budgets: Budgets;
  config_path: string;
  /** Repositories with a section of their own in config.toml. */
  repos: string[];
}

export function getBudgets(repo: string | null): Promise<BudgetsView> {
  return call("get_budgets", { repo });
}

/** Saves the scope's limits; rejects with code `invalid_budget` for a negative or non-finite one. */
export function saveBudgets(repo: string | null, budgets: Budgets): Promise<BudgetsView> {
  return call("save_budgets", { repo, budgets });
}
