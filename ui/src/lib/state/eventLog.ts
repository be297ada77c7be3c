import type { Event } from "../bindings/Event";

/** What a batch of incoming events produced. */
export interface Accepted {
  /** Events now in order, each exactly once, ready to be folded into the timeline. */
  ready: Event[];
  /**
   * Set when events arrived beyond a hole in `seq`: ask the journal for history after this seq
   * (the last contiguous one) and feed it back through `accept`.
   */
  resyncFrom: number | null;
}

/**
 * Puts one task's events in `seq` order, exactly once. Live batches and history replays may overlap,
 * repeat or arrive with holes; duplicates are dropped, early arrivals wait until the hole before them
 * is filled, and a hole asks for a resync.
 */
export class EventLog {
  #lastSeq: number;
  #waiting = new Map<number, Event>();

  constructor(afterSeq = 0) {
    this.#lastSeq = afterSeq;
  }

  /** The highest seq delivered with nothing missing before it. */
  get lastSeq(): number {
    return this.#lastSeq;
  }

  /** How many events wait for a hole before them to be filled. */
  get waiting(): number {
    return this.#waiting.size;
  }

  accept(events: readonly Event[]): Accepted {
    for (const event of events) {
      if (event.seq > this.#lastSeq && !this.#waiting.has(event.seq)) {
        this.#waiting.set(event.seq, event);
      }
    }
    const ready: Event[] = [];
    for (;;) {
      const next = this.#waiting.get(this.#lastSeq + 1);
      if (!next) break;
      this.#waiting.delete(next.seq);
      ready.push(next);
      this.#lastSeq = next.seq;
    }
    return { ready, resyncFrom: this.#waiting.size > 0 ? this.#lastSeq : null };
  }
}
