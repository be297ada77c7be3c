/** Dollars as a figure: more digits for the tiny amounts one model call costs. */
export function formatUsd(usd: number): string {
  const a = Math.abs(usd);
  const text = a === 0 ? "0.00" : a < 0.01 ? a.toFixed(4) : a.toFixed(2);
  return `${usd < 0 ? "-" : ""}$${text}`;
}

/**
 * A cost for a person: `null` (the model has no price) or nothing priced at all is "unpriced";
 * a sum that leaves unpriced responses out is a lower bound, `$x+`.
 */
export function formatCost(usd: number | null, priced = true): string {
  if (usd === null || (!priced && usd === 0)) return "unpriced";
  const text = formatUsd(usd);
  return priced ? text : `${text}+`;
}

/** A byte count for a person: `0 B`, `12.3 KB`, `4.5 MB`, `1.2 GB`. */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`;
}

export function formatTokens(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(s < 10 ? 1 : 0)} s`;
  const m = Math.floor(s / 60);
  const rest = Math.round(s % 60);
  return m < 60 ? `${m}m ${rest}s` : `${Math.floor(m / 60)}h ${m % 60}m`;
}

/** "just now", "5 min ago", "yesterday 14:02", or a date. */
export function formatWhen(iso: string, now: Date = new Date()): string {
  const t = new Date(iso);
  if (Number.isNaN(t.getTime())) return iso;
  const s = (now.getTime() - t.getTime()) / 1000;
  if (s < 45) return "just now";
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  const hhmm = t.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  if (t.toDateString() === now.toDateString()) return hhmm;
  const yesterday = new Date(now);
  yesterday.setDate(now.getDate() - 1);
  if (t.toDateString() === yesterday.toDateString()) return `yesterday ${hhmm}`;
  return t.toLocaleDateString([], { month: "short", day: "numeric" });
}

/** The clock time of an event, to the second. */
export function formatClock(iso: string): string {
  const t = new Date(iso);
  if (Number.isNaN(t.getTime())) return "";
  return t.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false });
}

/** The last path component (a repository's folder name). */
export function baseName(path: string): string {
  const parts = path.replace(/\/+$/, "").split("/");
  return parts[parts.length - 1] || path;
}

export function elapsedMs(fromIso: string | null, toIso: string | null, now: Date = new Date()): number | null {
  if (!fromIso) return null;
  const from = new Date(fromIso).getTime();
  const to = toIso ? new Date(toIso).getTime() : now.getTime();
  return Number.isNaN(from) || Number.isNaN(to) ? null : Math.max(0, to - from);
}

export const statusLabel: Record<string, string> = {
  running: "Running",
  completed: "Completed",
  answered: "No changes made",
  failed: "Failed",
  checks_failed: "Checks failed",
  interrupted: "Interrupted",
  budget_exceeded: "Budget exceeded",
  max_steps: "Step limit",
  success: "ok",
  error: "error",
  denied: "denied",
  timed_out: "timed out",
};
