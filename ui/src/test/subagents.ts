import type { EventMsg } from "../lib/bindings/EventMsg";
import type { SubagentFinished } from "../lib/bindings/SubagentFinished";
import type { SubagentStarted } from "../lib/bindings/SubagentStarted";

/** A child `child` starting on its parent's stream: a worker writing `<child>.txt`. */
export function started(child: string, over: Partial<SubagentStarted> = {}): EventMsg {
  return {
    type: "subagent_started",
    child_task_id: child,
    brief: `write ${child}.txt`,
    scope: [`${child}.txt`],
    role: "worker",
    provider: "local",
    model: "small-model",
    call_id: `call_${child}`,
    parallel: false,
    depth: 1,
    max_steps: 20,
    max_tokens: 200000,
    max_wall_secs: 600,
    ...over,
  };
}

/** The child after `steps` model requests, doing `activity`. */
export function progress(child: string, steps: number, activity = "thinking"): EventMsg {
  return { type: "subagent_progress", child_task_id: child, steps, tokens: steps * 1000, cost_usd: steps * 0.01, tool_calls: steps - 1, files: steps > 1 ? [`${child}.txt`] : [], activity };
}

/** The child done: it wrote its file, which was applied to the parent. */
export function finished(child: string, over: Partial<SubagentFinished> = {}): EventMsg {
  return {
    type: "subagent_finished",
    child_task_id: child,
    status: "completed",
    summary: `Wrote ${child}.txt`,
    files: [`${child}.txt`],
    checks: [],
    cost_usd: 0.03,
    tokens: 3000,
    steps: 3,
    merge: "applied",
    ...over,
  };
}
