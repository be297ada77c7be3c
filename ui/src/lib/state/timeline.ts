import type { ApprovalDecision } from "../bindings/ApprovalDecision";
import type { ApprovalRequested } from "../bindings/ApprovalRequested";
import type { CheckFinished } from "../bindings/CheckFinished";
import type { ContextItem } from "../bindings/ContextItem";
import type { ContextKind } from "../bindings/ContextKind";
import type { Event } from "../bindings/Event";
import type { NetworkDecision } from "../bindings/NetworkDecision";
import type { NudgeReason } from "../bindings/NudgeReason";
import type { PinTarget } from "../bindings/PinTarget";
import type { PlanItem } from "../bindings/PlanItem";
import type { ReviewEvent } from "../bindings/ReviewEvent";
import type { TaskStarted } from "../bindings/TaskStarted";
import type { TaskStatus } from "../bindings/TaskStatus";
import type { ToolCallStatus } from "../bindings/ToolCallStatus";
import { appendOutput, emptyTerminal, terminalFrom, type TerminalText } from "./terminalText";
import { applyCheckEvent, emptyChecks, type BatchKind, type CheckBatch, type CheckRun, type ChecksState } from "./checks";
import { formatUsd } from "../components/format";
import { applySubagentEvent, checksResult, emptySubagents, type SubagentTree } from "./subagents";

interface Entry {
  /** Stable key for keyed rendering: the seq of the event that opened the entry. */
  key: number;
  ts: string;
}

export type TimelineItem =
  /** `origin: "checks"`: Bosun sent the failures of a round of checks to the agent. */
  | (Entry & { kind: "user"; text: string; origin?: string })
  | (Entry & { kind: "assistant"; text: string; streaming: boolean })
  | (Entry & {
      kind: "tool";
      callId: string;
      tool: string;
      args: unknown;
      recovered: boolean;
      /** `interrupted` when the task finished before the call ended (a stop or a crash). */
      status: "running" | "interrupted" | ToolCallStatus;
      exitCode: number | null;
      error: string | null;
      durationMs: number | null;
      output: TerminalText;
      /** True once output arrived as it streamed (`tool_output_delta`). */
      streamed: boolean;
      /** Set when the policy asked a human about this call. */
      approval: Approval | null;
      /** Connections the command made through Bosun's egress proxy, in order. */
      network: NetworkEntry[];
    })
  | (Entry & { kind: "checkpoint"; checkpoint: number; commit: string; files: string[] })
  | (Entry & { kind: "retry"; attempt: number; maxAttempts: number; reason: string })
  /** A provider failed past its retries and one of its fallbacks took over (`provider_fallback`). */
  | (Entry & { kind: "fallback"; from: string; to: string; model: string; reason: string })
  | (Entry & { kind: "error"; code: string; message: string })
  | (Entry & { kind: "warning"; code: string; message: string })
  /** Bosun answered a reply that made no progress; `message` is exactly what the model was told. */
  | (Entry & { kind: "nudge"; reason: NudgeReason; message: string })
  /** What a request showed the model about the repository (the map's files, …) and why. */
  | (Entry & { kind: "context"; items: ContextItem[]; totalTokens: number; budgetTokens: number })
  /** The conversation was made smaller: what was masked and summarised. */
  | (Entry & {
      kind: "compacted";
      tokensBefore: number;
      tokensAfter: number;
      windowTokens: number;
      reason: string;
      masked: string[];
      summarised: string[];
      summary: string | null;
    })
  /** The user pinned (or unpinned) a file, a tool output or a message: compaction never drops it. */
  | (Entry & { kind: "pinned"; target: PinTarget; pinned: boolean; by: string })
  | (Entry & { kind: "redacted"; count: number; kinds: string[]; place: string })
  | (Entry & { kind: "finished"; status: TaskStatus; summary: string })
  /** Checks that ran together (a round, a re-run, after an edit), at the point they started. */
  | (Entry & { kind: "checks"; batch: BatchKind; round: number; runs: CheckLine[] })
  | (Entry & { kind: "review"; action: ReviewEvent["action"]; text: string })
  /** A sub-agent started or finished (its own timeline is under `childTaskId`). */
  | (Entry & { kind: "subagent"; phase: "started" | "finished"; childTaskId: string; text: string; status: TaskStatus | null });

export type ToolItem = Extract<TimelineItem, { kind: "tool" }>;
export type ChecksItem = Extract<TimelineItem, { kind: "checks" }>;

/** A check as the timeline's compact line shows it (the output stays in the Checks panel). */
export type CheckLine = Pick<CheckRun, "checkId" | "name" | "scope" | "status" | "durationMs" | "summary" | "onlyBeforeTask">;

/** An approval request on a tool call, and how it was answered. */
export interface Approval {
  reason: string;
  rule: string;
  source: string;
  /** `null` while waiting for an answer, and when nobody answered (see `unanswered`). */
  decision: ApprovalDecision | null;
  /** True when the call ended or the task finished before anyone answered (e.g. the task was stopped). */
  unanswered: boolean;
  by: string | null;
  note: string | null;
}

/** A connection through Bosun's egress proxy, or a host a person is being asked about. */
export interface NetworkEntry {
  host: string;
  port: number;
  /** `waiting` while a person is asked about the host (no rule names it). */
  decision: "waiting" | NetworkDecision;
  /** The rule that decided, e.g. `network.domains "pypi.org"`. */
  rule: string | null;
  /** For a refusal: what the command was told. */
  reason: string | null;
  bytesUp: number;
  bytesDown: number;
  /** The approval request about this host, when one was made. */
  approvalId: string | null;
}

export interface UsageTotals {
  /** Uncached prompt tokens (the six classes are disjoint and add up to the billed tokens). */
  inputTokens: number;
  /** Completion tokens that are not reasoning. */
  outputTokens: number;
  /** Prompt tokens read from the cache. */
  cachedInputTokens: number;
  /** Prompt tokens written to the cache for 5 minutes. */
  cacheWriteTokens: number;
  /** Prompt tokens written to the cache for 1 hour. */
  cacheWrite1hTokens?: number;
  reasoningTokens?: number;
  /** What the priced responses cost (unpriced ones count nothing: see `priced`). */
  costUsd: number;
  /** False once any response came from a model missing from the price table. */
  priced: boolean;
  responses: number;
}

export interface Timeline {
  started: TaskStarted | null;
  items: TimelineItem[];
  usage: UsageTotals;
  status: TaskStatus;
  plan: PlanItem[];
  /**
   * Warnings about what this task's containment cannot promise (committed secrets, no
   * sandbox, network not contained): pinned above the timeline, not only in it.
   */
  notes: ContainmentNote[];
  /** Approval requests not answered yet (no `approval_resolved` with their id), oldest first. */
  pending: ApprovalRequested[];
  /** What is pinned now, as `pinKey` of each target. */
  pins: string[];
  /** The planned checks and every run of them (the Checks panel). */
  checks: ChecksState;
  /** The sub-agents this task delegated to, live from its stream (the tree above the timeline). */
  subagents: SubagentTree;
  startedAt: string | null;
  finishedAt: string | null;
}

/** A pinned warning: its code and message. */
export interface ContainmentNote {
  code: string;
  message: string;
}

/** Warning codes that stay pinned above the timeline for the whole task. */
export const PINNED_WARNINGS: readonly string[] = [
  "committed_secrets",
  "sandbox_unavailable",
  "sandbox_disabled",
  "network_not_contained",
];

export function emptyTimeline(): Timeline {
  return {
    started: null,
    items: [],
    usage: {
      inputTokens: 0,
      outputTokens: 0,
      cachedInputTokens: 0,
      cacheWriteTokens: 0,
      cacheWrite1hTokens: 0,
      reasoningTokens: 0,
      costUsd: 0,
      priced: true,
      responses: 0,
    },
    status: "running",
    plan: [],
    notes: [],
    pending: [],
    pins: [],
    checks: emptyChecks(),
    subagents: emptySubagents(),
    startedAt: null,
    finishedAt: null,
  };
}

/**
 * Folds in-order events (from `EventLog`) into the timeline. Returns a new `Timeline` whose
 * unchanged items keep their identity, so only what changed re-renders.
 */
export function applyEvents(timeline: Timeline, events: readonly Event[]): Timeline {
  if (events.length === 0) return timeline;
  const next: Timeline = { ...timeline, items: timeline.items.slice(), usage: { ...timeline.usage } };
  const toolIndex = new Map<string, number>();
  next.items.forEach((item, i) => {
    if (item.kind === "tool") toolIndex.set(item.callId, i);
  });
  const updateTool = (callId: string, change: (item: ToolItem) => ToolItem) => {
    const i = toolIndex.get(callId);
    if (i === undefined) return;
    const item = next.items[i];
    if (item.kind === "tool") next.items[i] = change(item);
  };

  const checksIndex = new Map<number, number>();
  next.items.forEach((item, i) => {
    if (item.kind === "checks") checksIndex.set(item.key, i);
  });
  /** The timeline's line for the batch a check run is in (the merge gate's runs stay out of it). */
  const showBatch = (batch: CheckBatch | undefined) => {
    if (!batch || batch.kind === "accepted") return;
    const runs: CheckLine[] = batch.runs.map(({ checkId, name, scope, status, durationMs, summary, onlyBeforeTask }) => ({ checkId, name, scope, status, durationMs, summary, onlyBeforeTask }));
    const i = checksIndex.get(batch.key);
    const first = batch.runs[0];
    const item: TimelineItem = { key: batch.key, ts: first.ts, kind: "checks", batch: batch.kind, round: batch.round, runs };
    if (i === undefined) {
      checksIndex.set(batch.key, next.items.length);
      next.items.push(item);
    } else next.items[i] = item;
  };
  const batchOf = (checkId: string) => {
    const batches = next.checks.batches;
    for (let i = batches.length - 1; i >= 0; i--) if (batches[i].runs.some((r) => r.checkId === checkId)) return batches[i];
    return undefined;
  };

  for (const ev of events) {
    const base = { key: ev.seq, ts: ev.ts };
    next.checks = applyCheckEvent(next.checks, ev);
    next.subagents = applySubagentEvent(next.subagents, ev);
    switch (ev.type) {
      case "check_started":
      case "check_finished":
        showBatch(batchOf(ev.check_id));
        break;
      case "task_started": {
        const { seq: _seq, task_id: _task, ts: _ts, type: _type, ...started } = ev;
        next.started = started;
        next.startedAt = ev.ts;
        break;
      }
      case "user_message":
        next.items.push({ ...base, kind: "user", text: ev.text, ...(ev.origin ? { origin: ev.origin } : {}) });
        break;
      case "assistant_delta": {
        const last = next.items[next.items.length - 1];
        if (last?.kind === "assistant" && last.streaming) {
          next.items[next.items.length - 1] = { ...last, text: last.text + ev.text };
        } else {
          next.items.push({ ...base, kind: "assistant", text: ev.text, streaming: true });
        }
        break;
      }
      case "assistant_message": {
        const last = next.items[next.items.length - 1];
        if (last?.kind === "assistant" && last.streaming) {
          next.items[next.items.length - 1] = { ...last, text: ev.text, streaming: false };
        } else if (ev.text.length > 0) {
          next.items.push({ ...base, kind: "assistant", text: ev.text, streaming: false });
        }
        break;
      }
      case "tool_call_begin":
        toolIndex.set(ev.call_id, next.items.length);
        next.items.push({
          ...base,
          kind: "tool",
          callId: ev.call_id,
          tool: ev.tool,
          args: ev.args,
          recovered: ev.recovered,
          status: "running",
          exitCode: null,
          error: null,
          durationMs: null,
          output: emptyTerminal(),
          streamed: false,
          approval: null,
          network: [],
        });
        break;
      case "tool_output_delta":
        updateTool(ev.call_id, (item) => ({
          ...item,
          streamed: true,
          output: appendOutput(item.output, ev.stream, ev.chunk),
        }));
        break;
      case "tool_call_end":
        // A call that ended (denied, or not run because the task stopped) waits for no answer.
        if (next.pending.some((p) => p.call_id === ev.call_id)) {
          next.pending = next.pending.filter((p) => p.call_id !== ev.call_id);
        }
        updateTool(ev.call_id, (item) => ({
          ...item,
          status: ev.status,
          exitCode: ev.exit_code ?? null,
          error: ev.error ?? null,
          durationMs: ev.duration_ms,
          output: item.streamed ? item.output : terminalFrom(ev.output),
          approval: settle(item.approval),
          network: settleNetwork(item.network),
        }));
        break;
      case "network_connection":
        updateTool(ev.call_id, (item) => {
          const entry: NetworkEntry = {
            host: ev.host,
            port: ev.port,
            decision: ev.decision,
            rule: ev.rule ?? null,
            reason: ev.reason ?? null,
            bytesUp: ev.bytes_up,
            bytesDown: ev.bytes_down,
            approvalId: null,
          };
          // The connection a person was asked about ends the wait.
          const i = item.network.findIndex((n) => n.decision === "waiting" && n.host === ev.host && n.port === ev.port);
          const network = item.network.slice();
          if (i >= 0) network[i] = { ...entry, approvalId: network[i].approvalId };
          else network.push(entry);
          return { ...item, network };
        });
        break;
      case "approval_requested":
        if (!next.pending.some((p) => p.approval_id === ev.approval_id)) {
          next.pending = [
            ...next.pending,
            {
              approval_id: ev.approval_id,
              kind: ev.kind ?? "tool",
              call_id: ev.call_id,
              tool: ev.tool,
              action: ev.action,
              reason: ev.reason,
              rule: ev.rule,
              source: ev.source,
              suggestions: ev.suggestions,
            },
          ];
        }
        if (ev.action.kind === "network") {
          // A host the running command connects to: shown with its connections, not as the
          // call's own approval.
          const { host, port } = ev.action;
          updateTool(ev.call_id, (item) => ({
            ...item,
            network: [
              ...item.network,
              { host, port, decision: "waiting", rule: ev.rule, reason: ev.reason, bytesUp: 0, bytesDown: 0, approvalId: ev.approval_id },
            ],
          }));
          break;
        }
        updateTool(ev.call_id, (item) => ({
          ...item,
          approval: {
            reason: ev.reason,
            rule: ev.rule,
            source: ev.source,
            decision: null,
            by: null,
            note: null,
            unanswered: false,
          },
        }));
        break;
      case "approval_resolved":
        next.pending = next.pending.filter((p) => p.approval_id !== ev.approval_id);
        updateTool(ev.call_id, (item) => item.network.some((n) => n.approvalId === ev.approval_id) ? item : ({
          ...item,
          approval: {
            ...(item.approval ?? { reason: "", rule: ev.rule ?? "", source: "" }),
            unanswered: false,
            decision: ev.decision,
            by: ev.by,
            note: ev.note ?? null,
          },
        }));
        break;
      case "warning":
        next.items.push({ ...base, kind: "warning", code: ev.code, message: ev.message });
        if (PINNED_WARNINGS.includes(ev.code) && !next.notes.some((n) => n.code === ev.code)) {
          next.notes = [...next.notes, { code: ev.code, message: ev.message }];
        }
        break;
      case "nudge":
        next.items.push({ ...base, kind: "nudge", reason: ev.reason, message: ev.message });
        break;
      case "context_compacted":
        next.items.push({
          ...base,
          kind: "compacted",
          tokensBefore: ev.tokens_before,
          tokensAfter: ev.tokens_after,
          windowTokens: ev.window_tokens,
          reason: ev.reason,
          masked: ev.masked,
          summarised: ev.summarised,
          summary: ev.summary ?? null,
        });
        break;
      case "context_pinned": {
        next.items.push({ ...base, kind: "pinned", target: ev.target, pinned: ev.pinned, by: ev.by });
        const key = pinKey(ev.target);
        next.pins = ev.pinned ? [...next.pins.filter((k) => k !== key), key] : next.pins.filter((k) => k !== key);
        break;
      }
      case "context_assembled":
        next.items.push({
          ...base,
          kind: "context",
          items: ev.items,
          totalTokens: ev.total_tokens,
          budgetTokens: ev.budget_tokens,
        });
        break;
      case "redacted":
        next.items.push({ ...base, kind: "redacted", count: ev.count, kinds: ev.kinds, place: ev.place });
        break;
      case "plan_updated":
        // Only the latest plan is shown (pinned above the timeline), so it is not a timeline item.
        next.plan = ev.items;
        break;
      case "checkpoint_created":
        next.items.push({
          ...base,
          kind: "checkpoint",
          checkpoint: ev.checkpoint,
          commit: ev.commit,
          files: ev.files,
        });
        break;
      case "usage":
        next.usage.inputTokens += ev.input_tokens;
        next.usage.outputTokens += ev.output_tokens;
        next.usage.cachedInputTokens += ev.cached_input_tokens;
        next.usage.cacheWriteTokens += ev.cache_write_tokens;
        next.usage.cacheWrite1hTokens = (next.usage.cacheWrite1hTokens ?? 0) + (ev.cache_write_1h_tokens ?? 0);
        next.usage.reasoningTokens = (next.usage.reasoningTokens ?? 0) + (ev.reasoning_tokens ?? 0);
        // Summed per response: a continued task's `total_cost_usd` counts from its continuation.
        // An unpriced response (`cost_usd` null) adds nothing and makes the sum a lower bound.
        next.usage.costUsd += ev.cost_usd ?? 0;
        next.usage.priced = next.usage.priced && ev.priced && ev.cost_usd !== null;
        next.usage.responses += 1;
        break;
      case "model_retry":
        next.items.push({
          ...base,
          kind: "retry",
          attempt: ev.attempt,
          maxAttempts: ev.max_attempts,
          reason: ev.reason,
        });
        break;
      case "provider_fallback":
        next.items.push({ ...base, kind: "fallback", from: ev.from, to: ev.to, model: ev.model, reason: ev.reason });
        break;
      case "error":
        next.items.push({ ...base, kind: "error", code: ev.code, message: ev.message });
        break;
      case "task_resumed":
        // A follow-up or a resume: the task runs again in the same timeline.
        next.status = "running";
        next.finishedAt = null;
        break;
      case "review": {
        const { seq: _seq, task_id: _task, ts: _ts, type: _type, ...review } = ev;
        next.items.push({ ...base, kind: "review", action: review.action, text: reviewText(review) });
        break;
      }
      case "subagent_started": {
        const node = next.subagents.nodes[ev.child_task_id];
        if (node?.seq !== ev.seq) break; // the same child started twice: one line
        next.items.push({ ...base, kind: "subagent", phase: "started", childTaskId: ev.child_task_id, text: subagentStartedLine(ev), status: null });
        break;
      }
      case "subagent_finished":
        if (!next.items.some((i) => i.kind === "subagent" && i.phase === "started" && i.childTaskId === ev.child_task_id)) break;
        if (next.items.some((i) => i.kind === "subagent" && i.phase === "finished" && i.childTaskId === ev.child_task_id)) break;
        next.items.push({ ...base, kind: "subagent", phase: "finished", childTaskId: ev.child_task_id, text: subagentFinishedLine(ev), status: ev.status });
        break;
      case "task_finished":
        next.status = ev.status;
        next.pending = [];
        next.finishedAt = ev.ts;
        for (let i = 0; i < next.items.length; i++) {
          const item = next.items[i];
          if (item.kind === "assistant" && item.streaming) next.items[i] = { ...item, streaming: false };
          if (item.kind === "tool" && (item.status === "running" || item.approval?.decision === null)) {
            next.items[i] = {
              ...item,
              status: item.status === "running" ? "interrupted" : item.status,
              approval: settle(item.approval),
              network: settleNetwork(item.network),
            };
          }
        }
        for (const batch of next.checks.batches) {
          const i = checksIndex.get(batch.key);
          const item = i === undefined ? undefined : next.items[i];
          if (item?.kind === "checks" && item.runs.some((r, j) => r.status !== batch.runs[j]?.status)) showBatch(batch);
        }
        next.items.push({ ...base, kind: "finished", status: ev.status, summary: ev.summary });
        break;
    }
  }
  return next;
}

/** `Sub-agent (worker, mock-model, parallel) started: write notes.txt — scope notes.txt`. */
export function subagentStartedLine(s: { brief: string; role: string; model: string; parallel: boolean; scope: string[]; plan_node?: string }): string {
  const how = [s.role, s.model, s.parallel ? "parallel" : null].filter(Boolean).join(", ");
  const brief = firstLine(s.brief);
  const node = s.plan_node ? ` for plan node ${s.plan_node}` : "";
  const scope = s.scope.length > 0 ? ` — scope ${s.scope.join(", ")}` : "";
  return `Sub-agent (${how}) started${node}: ${brief}${scope}`;
}

/** How a finished sub-agent's work reached its parent, in words. */
export const mergeText: Record<string, string> = {
  applied: "applied to this worktree",
  merged: "merged",
  conflict: "not merged: conflict",
  none: "changed nothing",
  reverted: "its changes were dropped",
};

/** `Sub-agent completed: 1 file, checks passed, merged, $0.0123 — summary`. */
export function subagentFinishedLine(f: {
  status: TaskStatus;
  summary: string;
  files: string[];
  checks: CheckFinished[];
  cost_usd: number;
  merge: string;
  conflicts?: string[];
  reverted?: string[];
}): string {
  const parts: string[] = [f.files.length === 1 ? "1 file" : `${f.files.length} files`];
  const checks = checksResult(f.checks);
  if (checks) parts.push(`checks ${checks}`);
  const merge = mergeText[f.merge] ?? f.merge;
  parts.push(f.merge === "conflict" && f.conflicts?.length ? `${merge} in ${f.conflicts.join(", ")}` : merge);
  if (f.reverted?.length) parts.push(`put back outside its scope: ${f.reverted.join(", ")}`);
  parts.push(formatUsd(f.cost_usd));
  const summary = firstLine(f.summary);
  return `Sub-agent ${f.status.replace(/_/g, " ")}: ${parts.join(", ")}${summary ? ` — ${summary}` : ""}`;
}

function firstLine(text: string): string {
  const line = text.split("\n").find((l) => l.trim() !== "") ?? "";
  return line.length > 120 ? `${line.slice(0, 120)}…` : line;
}

/** An approval still waiting when its call ended or its task finished: nobody will answer it now. */
function settle(approval: Approval | null): Approval | null {
  return approval && approval.decision === null ? { ...approval, unanswered: true } : approval;
}

/** Hosts still waiting when their call ended: the command got no answer. */
function settleNetwork(network: NetworkEntry[]): NetworkEntry[] {
  if (!network.some((n) => n.decision === "waiting")) return network;
  return network.map((n) => (n.decision === "waiting" ? { ...n, decision: "denied", reason: "not answered" } : n));
}

/** A one-line description of a tool call's arguments, as a developer would write it. */
export function argsSummary(tool: string, args: unknown): string {
  if (typeof args === "string") return args;
  if (args === null || typeof args !== "object") return "";
  const a = args as Record<string, unknown>;
  // An MCP tool's arguments are the server's own: every one of them, in order.
  if (mcpName(tool)) {
    const shown = Object.entries(a).map(([k, v]) => `${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`);
    return shown.length > 0 ? shown.join(", ") : "no arguments";
  }
  const str = (k: string) => (typeof a[k] === "string" ? (a[k] as string) : undefined);
  switch (tool) {
    case "run_command":
      return str("command") ?? "";
    case "read_file":
    case "write_file":
    case "edit_file":
      return str("path") ?? "";
    case "list_dir":
      return str("path") ?? ".";
    case "search":
      return [str("pattern"), str("path") ?? str("glob")].filter(Boolean).join("  in ");
    case "apply_patch": {
      const files = (str("patch") ?? "").match(/^\+\+\+ (?:b\/)?(.+)$/gm) ?? [];
      return files.map((f) => f.replace(/^\+\+\+ (?:b\/)?/, "")).join(", ");
    }
    case "update_plan":
      return Array.isArray(a.items) ? `${a.items.length} steps` : "";
  }
  const first = Object.entries(a).find(([, v]) => typeof v === "string");
  return first ? `${first[0]}: ${first[1] as string}` : JSON.stringify(args);
}

/** The server and tool of an MCP tool's model name (`mcp__<server>__<tool>`); null for any other tool. */
export function mcpName(tool: string): { server: string; tool: string } | null {
  const m = /^mcp__(.+?)__(.+)$/.exec(tool);
  return m ? { server: m[1], tool: m[2] } : null;
}

/** The approval requests of an event log (in seq order) that no `approval_resolved` answered yet. */
export function pendingApprovals(events: readonly Event[]): ApprovalRequested[] {
  return applyEvents(emptyTimeline(), events).pending;
}

const hunks = (n: number) => (n === 1 ? "1 hunk" : `${n} hunks`);

/** A review event in words, as the timeline shows it. */
export function reviewText(r: ReviewEvent): string {
  switch (r.action) {
    case "accept":
      return `You accepted ${hunks(r.hunks.length)}${r.path ? ` of ${r.path}` : ""}`;
    case "reject":
      return `You rejected ${hunks(r.hunks.length)} of ${r.path}: taken out of the worktree${r.checkpoint ? ` (checkpoint ${r.checkpoint})` : ""}`;
    case "reset":
      return `${r.undoes ? "Undone: " : ""}${hunks(r.hunks.length)} of ${r.path} back to unreviewed`;
    case "unreject":
      return `${r.undoes ? "Undone: " : ""}${hunks(r.hunks.length)} of ${r.path} put back into the worktree`;
    case "comment":
      return `You commented on ${r.comment.path}:${r.comment.start_line}${r.comment.end_line !== r.comment.start_line ? `-${r.comment.end_line}` : ""}: ${r.comment.body}`;
    case "uncomment":
      return r.undoes ? "Undone: a comment" : "A comment was deleted";
    case "request_changes":
      return `You requested changes (${r.comments.length} ${r.comments.length === 1 ? "comment" : "comments"} sent to the agent)`;
    case "merge": {
      const o = r.outcome;
      return `Merged ${hunks(o.hunks)} into ${o.branch}${o.created ? " (new branch)" : ""} as ${o.commits.length === 1 ? "1 commit" : `${o.commits.length} commits`}`;
    }
    case "rebase":
      return `Rebased onto ${r.new_base.slice(0, 10)}${r.conflicts.length ? `; conflicts in ${r.conflicts.join(", ")}` : ""}`;
    case "remove_worktree":
      return "The worktree was removed (the history stays)";
    case "recreate_worktree":
      return r.checkpoint === 0 ? "The worktree was made again at the base" : `The worktree was made again at checkpoint ${r.checkpoint}`;
  }
}

/** `950`, `1.2k`, `12k` (as the CLI prints them). */
export function shortCount(n: number): string {
  if (n < 1000) return String(n);
  if (n < 10000) return `${(n / 1000).toFixed(1)}k`;
  return `${Math.round(n / 1000)}k`;
}

const contextKinds: [ContextKind, string, string][] = [
  ["file", "file", "files"],
  ["file_list", "file list", "file lists"],
  ["test", "test", "tests"],
  ["sibling", "nearby file", "nearby files"],
  ["symbols", "symbol list", "symbol lists"],
  ["recent_changes", "recent change", "recent changes"],
  ["instructions", "instruction file", "instruction files"],
  ["memory", "memory", "memories"],
];

/** A compaction in one line: `Context compacted: 52k → 18k tokens of a 32k window — 14 tool outputs masked, 12 messages summarised`. */
export function compactedLine(c: { tokensBefore: number; tokensAfter: number; windowTokens: number; reason: string; masked: string[]; summarised: string[] }): string {
  const parts: string[] = [];
  if (c.masked.length > 0) parts.push(`${c.masked.length} tool ${c.masked.length === 1 ? "output" : "outputs"} masked`);
  if (c.summarised.length > 0) parts.push(`${c.summarised.length} ${c.summarised.length === 1 ? "message" : "messages"} summarised`);
  const why = c.reason === "provider_said_too_long" ? " (the provider said the request was too long)" : "";
  return `Context compacted${why}: ${shortCount(c.tokensBefore)} → ${shortCount(c.tokensAfter)} tokens of a ${shortCount(c.windowTokens)} window — ${parts.join(", ")}`;
}

/** What a context item without a path is, in words. */
export const contextKindText: Record<ContextKind, string> = {
  map: "map",
  file: "file",
  file_list: "file list",
  test: "test",
  sibling: "nearby file",
  symbols: "symbols",
  recent_changes: "recent changes",
  instructions: "instructions",
  memory: "memory",
};

/** A request's context in one line: `Context: map of 5 files, 1.2k tokens`. */
export function contextLine(items: ContextItem[], totalTokens: number): string {
  const count = (k: ContextKind) => items.filter((i) => i.kind === k).length;
  const parts: string[] = [];
  const map = count("map");
  if (map > 0) parts.push(`map of ${map} ${map === 1 ? "file" : "files"}`);
  for (const [k, one, many] of contextKinds) {
    const n = count(k);
    if (n > 0) parts.push(`${n} ${n === 1 ? one : many}`);
  }
  if (parts.length === 0) parts.push("nothing");
  return `Context: ${parts.join(", ")}, ${shortCount(totalTokens)} tokens`;
}

/** Why Bosun nudged the model, in words. */
export const nudgeReasonText: Record<NudgeReason, string> = {
  prose_plan: "it described a plan instead of doing it",
  promise: "it said what it would do and stopped",
  question: "it asked something it can find out itself",
  unknown_tool: "it called a tool that does not exist",
  schema_error: "its call had invalid arguments",
  no_op_edit: "its edit changed nothing",
  repeated_call: "it repeated a call that had failed",
};

/** A nudge as one line: why, and the first line of what the model was told. */
export function nudgeLine(reason: NudgeReason, message: string): string {
  const first = message.split("\n").find((l) => l.trim() !== "") ?? "";
  return `Nudged the model: ${nudgeReasonText[reason]} — ${first}`;
}

/** A pin's identity: `file:src/a.py`, `call:c3`, `message:<text>`. */
export function pinKey(target: PinTarget): string {
  switch (target.kind) {
    case "file":
      return `file:${target.path}`;
    case "call":
      return `call:${target.call_id}`;
    case "message":
      return `message:${target.text}`;
  }
}

/** One line for a pin event: "Pinned src/a.py: compaction never drops it". */
export function pinLine(target: PinTarget, pinned: boolean): string {
  const what =
    target.kind === "file"
      ? target.path
      : target.kind === "call"
        ? `the output of call ${target.call_id}`
        : `your message “${target.text.length > 60 ? `${target.text.slice(0, 60)}…` : target.text}”`;
  return pinned ? `Pinned ${what}: compaction never drops it` : `Unpinned ${what}`;
}

/** The timeline's line for a fallback: "claude failed (503: overloaded); local (qwen) takes over". */
export function fallbackLine(item: { from: string; to: string; model: string; reason: string }): string {
  const first = item.reason.split("\n")[0].trim();
  // "claude returned 503 after 3 attempts: overloaded" is said as "503: overloaded".
  const status = /returned (\d{3}) after [^:]*: (.*)$/.exec(first);
  const why = status ? `${status[1]}: ${status[2]}` : first;
  const short = why.length > 120 ? `${why.slice(0, 119)}…` : why;
  const model = item.model ? ` (${item.model})` : "";
  return `${item.from} failed (${short}); ${item.to}${model} takes over`;
}
