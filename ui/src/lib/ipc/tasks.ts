import type { ApprovalAnswer } from "../bindings/ApprovalAnswer";
import type { CheckSpec } from "../bindings/CheckSpec";
import type { PinOp } from "../bindings/PinOp";
import { call } from "./journal";

/** Which model serves a task: described in full, or a provider of config.toml by name. */
export type ProviderChoice =
  | { api: "openai-chat" | "openai-responses" | "anthropic"; base_url?: string; model: string; api_key_env?: string }
  | { name: string; model?: string };

export type PolicyMode = "read-only" | "ask" | "auto-edit" | "full-auto";

/** What the "New task" form sends (src-tauri/src/engine.rs `LaunchRequest`). */
export interface LaunchRequest {
  repo: string;
  prompt: string;
  base?: string;
  provider: ProviderChoice;
  mode?: PolicyMode;
  max_steps?: number;
  max_cost_usd?: number;
  /** Absent: the repository's checks; `[]`: none for this task; a list: exactly these. */
  checks?: CheckSpec[];
  /** The planner role writes a task graph first; its nodes run as sub-agents. */
  plan?: boolean;
}

/** Starts a task in the app's engine; resolves with its id once it is in the journal. */
export function startTask(request: LaunchRequest): Promise<string> {
  return call("start_task", { request });
}

/**
 * The New task form picked a repository (or another base): the app prepares a worktree for the
 * task now, so Start does not wait for a checkout. Rejects with `not_a_repo` for other folders.
 */
export function prepareWorktree(repo: string, base: string | null): Promise<void> {
  return call("prepare_worktree", { repo, base });
}

/** The New task form closed without starting: the worktree it prepared is removed. */
export function releasePreparedWorktree(): Promise<void> {
  return call("release_prepared_worktree", {});
}

/** Asks a running task to stop; it ends as interrupted. */
export function stopTask(taskId: string): Promise<void> {
  return call("stop_task", { taskId });
}

/** Answers one of a running task's approval requests. */
export function answerApproval(taskId: string, answer: ApprovalAnswer): Promise<void> {
  return call("answer_approval", { taskId, answer });
}

/** Pins (or unpins) a file, a tool call's output or a message of a running task: compaction never drops it. */
export function pinContext(taskId: string, pin: PinOp): Promise<void> {
  return call("pin_context", { taskId, pin });
}

/** Sends a follow-up to a finished or stopped task, or (`message` null) resumes an interrupted one. */
export function continueTask(taskId: string, message: string | null): Promise<string> {
  return call("continue_task", { taskId, message });
}

/** A repository's local branches and the one checked out (src-tauri/src/branches.rs). */
export interface RepoBranches {
  current: string | null;
  names: string[];
}

/** Lists the local branches of the repository at `repo`; rejects with `not_a_repo` for other folders. */
export function listBranches(repo: string): Promise<RepoBranches> {
  return call("list_branches", { repo });
}

/** Runs a stopped or finished task's checks again on its latest checkpoint (events on its stream: round 0). */
export function rerunChecks(taskId: string): Promise<void> {
  return call("rerun_checks", { taskId });
}
