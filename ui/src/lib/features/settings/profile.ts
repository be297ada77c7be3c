import type { EditFormat, KeySource, ProbeReport, ProfileEntry, ToolFormat } from "../../ipc/settings";

/** The choices of the Model profile form; "auto" leaves the key to a probe or the default. */
export interface ProfileDraft {
  native_tools: "auto" | "yes" | "no";
  tool_format: "auto" | ToolFormat;
  edit_format: "auto" | EditFormat;
  /** Tokens as typed; empty is auto. */
  context_window: string;
}

export const TOOL_FORMATS: ToolFormat[] = ["native", "hermes", "llama3", "mistral", "json"];
export const EDIT_FORMATS: EditFormat[] = ["tools", "whole", "search-replace"];
export const MIN_CONTEXT_WINDOW = 512;
const MAX_U32 = 4_294_967_295;

export const AUTO_DRAFT: ProfileDraft = { native_tools: "auto", tool_format: "auto", edit_format: "auto", context_window: "" };

/** The form as config.toml's keys set it. */
export function draftOf(entry: ProfileEntry): ProfileDraft {
  return {
    native_tools: entry.native_tools === undefined || entry.native_tools === null ? "auto" : entry.native_tools ? "yes" : "no",
    tool_format: entry.tool_format ?? "auto",
    edit_format: entry.edit_format ?? "auto",
    context_window: entry.context_window?.toString() ?? "",
  };
}

/** The keys to save (the "auto" ones left out), or what is wrong with one. */
export function entryOf(draft: ProfileDraft): ProfileEntry | string {
  const entry: ProfileEntry = {};
  if (draft.native_tools !== "auto") entry.native_tools = draft.native_tools === "yes";
  if (draft.tool_format !== "auto") entry.tool_format = draft.tool_format;
  if (draft.edit_format !== "auto") entry.edit_format = draft.edit_format;
  const text = draft.context_window.trim().replace(/[_,\s]/g, "");
  if (text !== "") {
    const n = Number(text);
    if (!/^\d+$/.test(text) || n < MIN_CONTEXT_WINDOW || n > MAX_U32)
      return `Context window: “${draft.context_window.trim()}” is not a number of tokens; give a whole number of at least ${MIN_CONTEXT_WINDOW}, or leave it empty for auto.`;
    entry.context_window = n;
  }
  return entry;
}

/** "1 Dec 2026" for an RFC 3339 time (its date as UTC has it). */
export function probeDate(at: string): string {
  const d = new Date(at);
  if (Number.isNaN(d.getTime())) return at;
  return d.toLocaleDateString("en-GB", { day: "numeric", month: "short", year: "numeric", timeZone: "UTC" });
}

/** Where a key came from, for a person: "from config", "probed 1 Dec 2026", "default". */
export function sourceLabel(source: KeySource, probe: ProbeReport | null): string {
  if (source === "config") return "from config";
  if (source === "probe") return probe ? `probed ${probeDate(probe.probed_at)}` : "probed";
  return "default";
}
