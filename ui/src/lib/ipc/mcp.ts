import type { McpServerReport } from "../bindings/McpServerReport";
import type { McpServerState } from "../bindings/McpServerState";
import type { McpTool } from "../bindings/McpTool";
import type { McpTransport } from "../bindings/McpTransport";
import { call } from "./journal";

export type { McpServerReport, McpServerState, McpTool, McpTransport };

/**
 * Every MCP server configured for `repo`'s tasks (null: your global ones), each started once in a
 * scratch directory to list its tools, then stopped — so it takes a second or two. Rejects with
 * code `config_error` for a config.toml Bosun cannot read, or a path in no repository.
 */
export function mcpServers(repo: string | null): Promise<McpServerReport[]> {
  return call("mcp_servers", { repo });
}

/**
 * Turns your server `name` on or off (`enabled` in its table of config.toml, the rest of the file
 * kept) and resolves with it as listed now. A repository's own server (declared in its
 * `.bosun/config.toml`) or an unknown name rejects with `config_error`, saying why.
 */
export function mcpSetEnabled(name: string, repo: string | null, enabled: boolean): Promise<McpServerReport> {
  return call("mcp_set_enabled", { name, repo, enabled });
}

/** A repository's own server: approved or refused when a task starts, not switched in Settings. */
export function isProjectServer(s: McpServerReport): boolean {
  return s.origin.endsWith(".bosun/config.toml");
}

export type { McpImportReport } from "../bindings/McpImportReport";
export type { McpImportRow } from "../bindings/McpImportRow";
import type { McpImportReport } from "../bindings/McpImportReport";

/**
 * Another agent's MCP servers (`from`: `claude`, `codex` or a file), Claude Code's project entries
 * being `repo`'s. With `write` false nothing is written (each new, valid server is `new`); with it
 * the new ones `names` lists are written to config.toml (`imported`). Rejects with `config_error`
 * for an unknown source or name, or a config.toml Bosun cannot read.
 */
export function mcpImport(from: string, repo: string | null, names: string[] | null, write: boolean): Promise<McpImportReport> {
  return call("mcp_import", { from, repo, names, write });
}
