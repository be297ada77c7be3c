import type { Event } from "../bindings/Event";
import type { FeedEnd } from "../bindings/FeedEnd";
import { EventLog } from "./eventLog";
import { applySubagentEvents, emptySubagents, type SubagentTree } from "./subagents";

/**
 * The sub-agent trees of a task's children, each from the child's own stream (a child's children
 * are on its stream, not the parent's): `trees[childId]` is what has arrived in order.
 */
export class ChildTrees {
  trees: Record<string, SubagentTree> = $state.raw({});
  #logs = new Map<string, EventLog>();

  /** The feed of one child's stream, for `followTask`. */
  stream(childId: string) {
    const log = this.#log(childId);
    return {
      taskId: childId,
      get lastSeq() {
        return log.lastSeq;
      },
      receive: (events: readonly Event[]) => this.receive(childId, events),
      finish: (_end: FeedEnd) => {},
    };
  }

  /** Takes a batch of the child's events; returns the seq to fetch history after if a hole showed up. */
  receive(childId: string, events: readonly Event[]): number | null {
    const log = this.#log(childId);
    const { ready, resyncFrom } = log.accept(events.filter((e) => e.task_id === childId));
    if (ready.length > 0) {
      const before = this.trees[childId] ?? emptySubagents();
      const after = applySubagentEvents(before, ready);
      if (after !== before) this.trees = { ...this.trees, [childId]: after };
    }
    return resyncFrom;
  }

  #log(childId: string): EventLog {
    let log = this.#logs.get(childId);
    if (!log) {
      log = new EventLog();
      this.#logs.set(childId, log);
    }
    return log;
  }
}
