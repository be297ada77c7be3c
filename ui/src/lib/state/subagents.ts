import type { CheckFinished } from "../bindings/CheckFinished";
import type { Event } from "../bindings/Event";
import type { TaskStatus } from "../bindings/TaskStatus";

/**
 * One sub-agent as its parent's stream tells it: `subagent_started` opens it, each
 * `subagent_progress` replaces its running figures, `subagent_finished` settles it.
 */
export interface SubagentNode {
  /** The child's task id (its own timeline is in the journal under it). */
  id: string;
  /** The task that delegated to it. */
  parentId: string;
  brief: string;
  scope: string[];
  role: string;
  provider: string;
  model: string;
  callId: string | null;
  planNode: string | null;
  /** Ran in a worktree of its own beside other children, merged back after. */
  parallel: boolean;
  depth: number;
  caps: { maxSteps: number; maxTokens: number; maxCostUsd: number | null; maxWallSecs: number };
  /** `running` until it finished; `interrupted` when its parent finished without saying how it ended. */
  status: TaskStatus;
  /** What it is doing now (the tool it runs, or `thinking`); null once it finished. */
  activity: string | null;
  steps: number;
  tokens: number;
  costUsd: number;
  toolCalls: number;
  files: string[];
  /** Its checks' last results, once it finished (empty when none ran). */
  checks: CheckFinished[];
  summary: string | null;
  /** How its work reached the parent (`applied`, `merged`, `conflict`, `none`, `reverted`); null while it runs. */
  merge: string | null;
  conflicts: string[];
  reverted: string[];
  startedAt: string;
  finishedAt: string | null;
  /** The seq of its `subagent_started` on the parent's stream (the timeline's line for it). */
  seq: number;
}

/** The direct children of one task, in the order they started. */
export interface SubagentTree {
  /** The task whose stream this is. */
  taskId: string | null;
  order: string[];
  nodes: Record<string, SubagentNode>;
}

export function emptySubagents(): SubagentTree {
  return { taskId: null, order: [], nodes: {} };
}

/**
 * Folds one of a task's events (in seq order) into its sub-agents. Progress or an end for a child
 * that never started on this stream, events of another task, and progress after the end are
 * ignored; the same start twice keeps the first. Returns the same tree when nothing changed.
 */
export function applySubagentEvent(tree: SubagentTree, ev: Event): SubagentTree {
  if (tree.taskId !== null && ev.task_id !== tree.taskId) return tree;
  switch (ev.type) {
    case "subagent_started": {
      if (ev.child_task_id in tree.nodes) return tree;
      const node: SubagentNode = {
        id: ev.child_task_id,
        parentId: ev.task_id,
        brief: ev.brief,
        scope: ev.scope,
        role: ev.role,
        provider: ev.provider,
        model: ev.model,
        callId: ev.call_id ?? null,
        planNode: ev.plan_node ?? null,
        parallel: ev.parallel,
        depth: ev.depth,
        caps: { maxSteps: ev.max_steps, maxTokens: ev.max_tokens, maxCostUsd: ev.max_cost_usd ?? null, maxWallSecs: ev.max_wall_secs },
        status: "running",
        activity: "starting",
        steps: 0,
        tokens: 0,
        costUsd: 0,
        toolCalls: 0,
        files: [],
        checks: [],
        summary: null,
        merge: null,
        conflicts: [],
        reverted: [],
        startedAt: ev.ts,
        finishedAt: null,
        seq: ev.seq,
      };
      return { taskId: ev.task_id, order: [...tree.order, node.id], nodes: { ...tree.nodes, [node.id]: node } };
    }
    case "subagent_progress": {
      const node = tree.nodes[ev.child_task_id];
      if (!node || node.status !== "running") return tree;
      return replace(tree, {
        ...node,
        steps: ev.steps,
        tokens: ev.tokens,
        costUsd: ev.cost_usd,
        toolCalls: ev.tool_calls,
        files: ev.files,
        activity: ev.activity,
      });
    }
    case "subagent_finished": {
      const node = tree.nodes[ev.child_task_id];
      if (!node || node.finishedAt !== null) return tree;
      return replace(tree, {
        ...node,
        status: ev.status,
        activity: null,
        summary: ev.summary,
        files: ev.files,
        checks: ev.checks,
        costUsd: ev.cost_usd,
        tokens: ev.tokens,
        steps: ev.steps,
        merge: ev.merge,
        conflicts: ev.conflicts ?? [],
        reverted: ev.reverted ?? [],
        finishedAt: ev.ts,
      });
    }
    case "task_finished": {
      // The parent ended: a child it never reported on was stopped with it (a crash, a kill).
      const running = tree.order.filter((id) => tree.nodes[id].status === "running");
      if (running.length === 0) return tree;
      const nodes = { ...tree.nodes };
      for (const id of running) nodes[id] = { ...nodes[id], status: "interrupted", activity: null };
      return { ...tree, nodes };
    }
    default:
      return tree;
  }
}

export function applySubagentEvents(tree: SubagentTree, events: readonly Event[]): SubagentTree {
  let next = tree;
  for (const ev of events) next = applySubagentEvent(next, ev);
  return next;
}

function replace(tree: SubagentTree, node: SubagentNode): SubagentTree {
  return { ...tree, nodes: { ...tree.nodes, [node.id]: node } };
}

/** The deepest agents get no `delegate` tool: only children above it can have children of their own. */
export const MAX_DEPTH = 2;

/** Whether a child can have children of its own (its stream is worth following for them). */
export function canDelegate(node: SubagentNode): boolean {
  return node.depth < MAX_DEPTH;
}

/** The checks' result in a word: `passed`, `failed` (a required one failed), or null when none ran. */
export function checksResult(checks: CheckFinished[]): "passed" | "failed" | null {
  if (checks.length === 0) return null;
  return checks.some((c) => c.required && c.status !== "passed" && !c.only_before_task) ? "failed" : "passed";
}

/** One row of the tree as it is drawn: the node, how deep, and whether it has children shown. */
export interface TreeLine {
  node: SubagentNode;
  level: number;
  hasChildren: boolean;
}

/**
 * The tree flattened in drawing order: each child, then (unless folded) its own children from
 * `nested` (the trees of the children's streams). A child id met twice is drawn once.
 */
export function treeLines(tree: SubagentTree, nested: Record<string, SubagentTree>, folded: ReadonlySet<string> = new Set()): TreeLine[] {
  const lines: TreeLine[] = [];
  const seen = new Set<string>();
  const walk = (t: SubagentTree, level: number) => {
    for (const id of t.order) {
      if (seen.has(id)) continue;
      seen.add(id);
      const node = t.nodes[id];
      const sub = nested[id];
      const hasChildren = !!sub && sub.order.length > 0;
      lines.push({ node, level, hasChildren });
      if (hasChildren && !folded.has(id)) walk(sub, level + 1);
    }
  };
  walk(tree, 0);
  return lines;
}

/**
 * Counts for the panel's head: how many run, completed, and ended otherwise (failed, stopped, at
 * a cap), and what they spent together (each node's cost is its own requests', so nothing is
 * counted twice).
 */
export function treeCounts(lines: readonly TreeLine[]): { total: number; running: number; completed: number; failed: number; costUsd: number } {
  let running = 0;
  let completed = 0;
  let failed = 0;
  let costUsd = 0;
  for (const { node } of lines) {
    if (node.status === "running") running++;
    else if (node.status === "completed") completed++;
    else failed++;
    costUsd += node.costUsd;
  }
  return { total: lines.length, running, completed, failed, costUsd };
}
