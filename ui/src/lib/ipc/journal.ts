import { Channel, invoke } from "@tauri-apps/api/core";
import type { Event } from "../bindings/Event";
import type { FeedEnd } from "../bindings/FeedEnd";
import type { IpcError } from "../bindings/IpcError";
import type { TaskRow } from "../bindings/TaskRow";

/** A task stream's message (src-tauri/src/feed.rs `TaskFeed`). */
export type TaskFeed = { kind: "events"; events: Event[] } | { kind: "end"; end: FeedEnd };

/** The tasks this app runs: task id → how many approvals it waits for. */
export type Owned = Record<string, number>;

/** The task list stream's message (src-tauri/src/feed.rs `TaskListFeed`). */
export type TaskListFeed =
  /** `replace`: the newest tasks, replacing the list; else the rows that changed, merged by id. */
  | { kind: "tasks"; tasks: TaskRow[]; owned: Owned; replace?: boolean }
  | { kind: "end"; end: FeedEnd };

/** A live stream from the journal; `close` ends it (the stream then ends with `unsubscribed`). */
export interface Subscription {
  close(): Promise<void>;
}

/** Any failure of a command, as `{code, message}` (the Rust side sends exactly that). */
export function toIpcError(err: unknown): IpcError {
  if (err && typeof err === "object" && "message" in err) {
    const e = err as { code?: unknown; message: unknown };
    return { code: typeof e.code === "string" ? e.code : "ipc", message: String(e.message) };
  }
  return { code: "ipc", message: String(err) };
}

export async function call<T>(cmd: string, args?: Record<string, unknown>): Promise<T> {
  try {
    return await invoke<T>(cmd, args);
  } catch (err) {
    throw toIpcError(err);
  }
}

export function listTasks(): Promise<TaskRow[]> {
  return call("list_tasks");
}

/** One task's row (code `not_found` when the journal has no such task). */
export function getTask(taskId: string): Promise<TaskRow> {
  return call("get_task", { taskId });
}

/** A task's sub-agents (its direct children), oldest first: each is a task of its own in the journal. */
export function taskChildren(taskId: string): Promise<TaskRow[]> {
  return call("task_children", { taskId });
}

/** Up to `limit` events of a task with `seq > afterSeq`, in order (used to fill a gap). */
export function taskEvents(taskId: string, afterSeq: number, limit = 2000): Promise<Event[]> {
  return call("task_events", { taskId, afterSeq, limit });
}

function subscription(id: number): Subscription {
  return {
    close: async () => {
      await call<boolean>("unsubscribe", { subscription: id });
    },
  };
}

/** The newest tasks now, then the rows that change (`replace` false: merge them by id). */
export async function subscribeTasks(handlers: {
  onTasks: (tasks: TaskRow[], owned: Owned, replace: boolean) => void;
  onEnd?: (end: FeedEnd) => void;
}): Promise<Subscription> {
  const channel = new Channel<TaskListFeed>();
  channel.onmessage = (msg) => {
    if (msg.kind === "tasks") handlers.onTasks(msg.tasks, msg.owned ?? {}, msg.replace ?? true);
    else handlers.onEnd?.(msg.end);
  };
  return subscription(await call<number>("subscribe_tasks", { channel }));
}

/** A task's events after `afterSeq` (history first, then live), batched, until the stream ends. */
export async function subscribeTask(
  taskId: string,
  afterSeq: number,
  handlers: { onEvents: (events: Event[]) => void; onEnd?: (end: FeedEnd) => void },
): Promise<Subscription> {
  const channel = new Channel<TaskFeed>();
  channel.onmessage = (msg) => {
    if (msg.kind === "events") handlers.onEvents(msg.events);
    else handlers.onEnd?.(msg.end);
  };
  return subscription(await call<number>("subscribe_task", { taskId, afterSeq, channel }));
}
