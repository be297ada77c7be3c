/** Where a task came from, as the journal names it (`source:` in the history's search). */
export const SOURCE_LABELS: Record<string, string> = { bosun: "Bosun", "claude-code": "Claude Code", codex: "Codex" };

/** A source's name for people ("Claude Code"), or the id itself for one this build does not know. */
export function sourceLabel(source: string): string {
  return SOURCE_LABELS[source] ?? source;
}
