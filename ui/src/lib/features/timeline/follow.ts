import type { IpcError } from "../../bindings/IpcError";
import { subscribeTask, taskEvents, toIpcError, type Subscription } from "../../ipc/journal";
import type { FeedEnd } from "../../bindings/FeedEnd";
import type { Event } from "../../bindings/Event";

/** What a followed stream feeds: a task's timeline, or one child's sub-agent tree. */
export interface FollowedTask {
  readonly taskId: string;
  readonly lastSeq: number;
  /** Takes a batch; returns the seq to read history after when a hole showed up, else null. */
  receive(events: readonly Event[]): number | null;
  finish(end: FeedEnd): void;
}

/** A live subscription feeding one `TaskTimeline`, with history reads to fill holes. */
export interface TaskFollow {
  /** Reads the journal after the last contiguous seq (a hole, or a stream that went quiet while the
   * task list says there is more). */
  catchUp(): Promise<void>;
  close(): void;
}

export function followTask(timeline: FollowedTask, onError: (err: IpcError) => void): TaskFollow {
  const id = timeline.taskId;
  let sub: Subscription | null = null;
  let closed = false;
  let filling = false;

  const fill = async (after: number) => {
    if (filling || closed) return;
    filling = true;
    try {
      let from: number | null = after;
      while (from !== null && !closed) {
        const events = await taskEvents(id, from);
        if (events.length === 0) break;
        const before = from;
        from = timeline.receive(events) ?? timeline.lastSeq;
        if (from <= before) break; // nothing new became contiguous: stop rather than spin
      }
    } catch (err) {
      onError(toIpcError(err));
    } finally {
      filling = false;
    }
  };

  subscribeTask(id, 0, {
    onEvents: (events) => {
      const hole = timeline.receive(events);
      if (hole !== null) void fill(hole);
    },
    onEnd: (end) => {
      timeline.finish(end);
      if (end.reason === "failed") onError({ code: "journal", message: end.message });
    },
  })
    .then((s) => {
      if (closed) void s.close();
      else sub = s;
    })
    .catch((err) => onError(toIpcError(err)));

  return {
    catchUp: () => fill(timeline.lastSeq),
    close: () => {
      closed = true;
      void sub?.close();
    },
  };
}
