import type { Event } from "../../bindings/Event";
import { subscribeTask, toIpcError, type Subscription } from "../../ipc/journal";

/** Events after which the review is stale: a new checkpoint, a verdict, the task stopping or going on. */
const STALE = new Set(["review", "checkpoint_created", "task_finished", "task_resumed"]);

/**
 * Calls `onstale` (at most every `quietMs`) when the task's new events change its review. The
 * stream ends when the task finishes; `ended` turns true then.
 */
export function watchReview(
  taskId: string,
  afterSeq: number,
  onstale: () => void,
  onended: () => void,
  quietMs = 250,
  /** Every batch of new events (the merge gate follows its checks' output with them). */
  onevents?: (events: Event[]) => void,
): { close(): void } {
  let sub: Subscription | null = null;
  let closed = false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  const stale = () => {
    if (timer !== null || closed) return;
    timer = setTimeout(() => {
      timer = null;
      if (!closed) onstale();
    }, quietMs);
  };
  subscribeTask(taskId, afterSeq, {
    onEvents: (events) => {
      onevents?.(events);
      if (events.some((e) => STALE.has(e.type))) stale();
    },
    onEnd: () => onended(),
  })
    .then((s) => {
      if (closed) void s.close();
      else sub = s;
    })
    .catch((err) => {
      void toIpcError(err);
      onended();
    });
  return {
    close() {
      closed = true;
      if (timer !== null) clearTimeout(timer);
      void sub?.close();
    },
  };
}
