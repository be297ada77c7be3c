import { describe, expect, it } from "vitest";
import { ev } from "../../test/events";
import { EventLog } from "./eventLog";

const note = (seq: number) => ev(seq, { type: "assistant_delta", text: `#${seq}` });
const seqs = (events: { seq: number }[]) => events.map((e) => e.seq);

describe("EventLog", () => {
  it("delivers a batch that arrives out of order in seq order", () => {
    const log = new EventLog();
    const { ready, resyncFrom } = log.accept([note(2), note(1), note(3)]);
    expect(seqs(ready)).toEqual([1, 2, 3]);
    expect(resyncFrom).toBeNull();
    expect(log.lastSeq).toBe(3);
  });

  it("drops events it already delivered, and repeats inside one batch", () => {
    const log = new EventLog();
    log.accept([note(1), note(2)]);
    const { ready } = log.accept([note(2), note(3), note(3), note(1), note(4)]);
    expect(seqs(ready)).toEqual([3, 4]);
  });

  it("holds events after a hole, asks for history from the last contiguous seq, then fills it", () => {
    const log = new EventLog();
    log.accept([note(1), note(2)]);

    const early = log.accept([note(5), note(6)]);
    expect(early.ready).toEqual([]);
    expect(early.resyncFrom).toBe(2);
    expect(log.waiting).toBe(2);

    // History from seq 2 overlaps what is waiting: nothing is delivered twice.
    const filled = log.accept([note(3), note(4), note(5), note(6)]);
    expect(seqs(filled.ready)).toEqual([3, 4, 5, 6]);
    expect(filled.resyncFrom).toBeNull();
    expect(log.waiting).toBe(0);
  });

  it("keeps asking while the hole is only partly filled", () => {
    const log = new EventLog();
    log.accept([note(1), note(4)]);
    const partly = log.accept([note(2)]);
    expect(seqs(partly.ready)).toEqual([2]);
    expect(partly.resyncFrom).toBe(2);
  });

  it("starts after the seq it was subscribed from", () => {
    const log = new EventLog(10);
    expect(seqs(log.accept([note(10), note(11)]).ready)).toEqual([11]);
  });
});
