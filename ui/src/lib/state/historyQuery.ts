/** The filter tokens the history's search box understands, for its help. */
export const TOKENS: { token: string; means: string }[] = [
  { token: "repo:NAME", means: "tasks of a repository" },
  { token: "status:STATUS", means: "completed, failed, checks_failed, running…" },
  { token: "model:NAME", means: "tasks of a model" },
  { token: "since:DATE", means: "started on or after (2026-11-30, an RFC 3339 time, 7d, 2w, 3m)" },
  { token: "until:DATE", means: "started before" },
  { token: "cost>0.5 / cost<0.1", means: "cost in dollars" },
  { token: "file:PATH", means: "tasks that touched a path" },
  { token: "has:unreviewed", means: "changes not reviewed yet (unreviewed or in review)" },
  { token: "source:NAME", means: "where a task came from: bosun, claude-code, codex" },
];

/** The query's words and tokens, split on spaces outside quotes. */
export function splitQuery(query: string): string[] {
  return query.match(/(?:[^\s"]+|"[^"]*")+/g) ?? [];
}

/** `key:value`, quoted when the value has spaces. */
export function token(key: string, value: string): string {
  return /\s|"/.test(value) ? `${key}:"${value.replace(/"/g, "")}"` : `${key}:${value}`;
}

export function hasToken(query: string, tok: string): boolean {
  return splitQuery(query).includes(tok);
}

/** Adds the token at the end, or takes it out when it is there. */
export function toggleToken(query: string, tok: string): string {
  const parts = splitQuery(query);
  const next = parts.includes(tok) ? parts.filter((p) => p !== tok) : [...parts, tok];
  return next.join(" ");
}
