import type { ImportFolder } from "../bindings/ImportFolder";
import type { SourceReport } from "../bindings/SourceReport";
import { call } from "./journal";

export type { ImportFolder, SourceReport };

/** Where Claude Code and Codex keep their sessions, and whether there are any to import. */
export function importFolders(): Promise<ImportFolder[]> {
  return call("import_folders", {});
}

/** Reads what is new in those folders into the journal (read-only tasks); each source's counts. */
export function importSessions(): Promise<SourceReport[]> {
  return call("import_sessions", {});
}
