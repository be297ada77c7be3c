import type { MemoryKind } from "../bindings/MemoryKind";
import type { MemoryRow } from "../bindings/MemoryRow";
import { call } from "./journal";

export type { MemoryKind, MemoryRow };

/** What the Memory view shows (src-tauri/src/memory.rs `MemoryView`). */
export interface MemoryView {
  /** The repository as the journal keys it (its work tree's path); null when none was asked for. */
  repo: string | null;
  /** Pinned first, then the newest. */
  memories: MemoryRow[];
  /** Every repository that has memories. */
  repos: string[];
  /** `[memory] enabled` in config.toml (true when unset); it holds for every repository. */
  enabled: boolean;
  config_path: string;
}

/** The memories of `repo` (a repository's path, or a folder inside it), the repositories that have any, the switch. */
export function memories(repo: string | null): Promise<MemoryView> {
  return call("memories", { repo });
}

/** Pins or unpins a memory; rejects with code `not_found` (naming the nearest ids) for an unknown id. */
export function pinMemory(id: number, pinned: boolean): Promise<MemoryRow> {
  return call("pin_memory", { id, pinned });
}

/** Forgets a memory; resolves with it as it was. */
export function deleteMemory(id: number): Promise<MemoryRow> {
  return call("delete_memory", { id });
}

/** Writes down a convention for `repo` (codes `empty_memory`, `memory_too_long`). */
export function addMemory(repo: string, text: string): Promise<MemoryRow> {
  return call("add_memory", { repo, text });
}

/** Writes `[memory] enabled` in config.toml (the rest of the file kept); resolves with whether memory is on now. */
export function setMemoryEnabled(enabled: boolean): Promise<boolean> {
  return call("set_memory_enabled", { enabled });
}
