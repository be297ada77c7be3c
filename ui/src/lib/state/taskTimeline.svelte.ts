import type { Event } from "../bindings/Event";
import type { FeedEnd } from "../bindings/FeedEnd";
import { EventLog } from "./eventLog";
import { applyEvents, emptyTimeline, type Timeline } from "./timeline";

/**
 * One task's timeline as a rune store: events go in through `receive` (live batches and history
 * alike, in any order, repeated or with holes); `timeline` is what has arrived in order.
 */
export class TaskTimeline {
  readonly taskId: string;
  timeline: Timeline = $state.raw(emptyTimeline());
  /** The highest seq applied with nothing missing before it. */
  lastSeq = $state(0);
  /** Set when the stream ended (finished, unsubscribed, or the journal failed). */
  end: FeedEnd | null = $state(null);
  /** Set while a hole in `seq` waits to be filled from history. */
  resyncing = $state(false);
  #log = new EventLog();

  constructor(taskId: string) {
    this.taskId = taskId;
  }

  /** Takes a batch; returns the seq to fetch history after if a hole showed up, else null. */
  receive(events: readonly Event[]): number | null {
    const { ready, resyncFrom } = this.#log.accept(events.filter((e) => e.task_id === this.taskId));
    if (ready.length > 0) {
      this.timeline = applyEvents(this.timeline, ready);
      this.lastSeq = this.#log.lastSeq;
    }
    this.resyncing = resyncFrom !== null;
    return resyncFrom;
  }

  finish(end: FeedEnd) {
    this.end = end;
  }
}
