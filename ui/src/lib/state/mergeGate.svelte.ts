import type { ChecksReport } from "../bindings/ChecksReport";
import type { Event } from "../bindings/Event";
import type { IpcError } from "../bindings/IpcError";
import { applyCheckEvents, blocks, emptyChecks, latestBatch, runFromFinished, type CheckRun, type ChecksState } from "./checks";
import { EventLog } from "./eventLog";

/** What the gate asks the backend; the review pane hands in the IPC calls. */
export interface GateCalls {
  /** The last report of the accepted tree, or null when never checked. */
  load: () => Promise<ChecksReport | null>;
  /** Runs the checks on the accepted tree now. */
  run: () => Promise<ChecksReport>;
  /** The task's events after a seq (to follow a run's output when the stream is quiet). */
  events?: (afterSeq: number) => Promise<Event[]>;
}

const asError = (err: unknown): IpcError =>
  err && typeof err === "object" && "message" in err
    ? { code: String((err as { code?: unknown }).code ?? "ipc"), message: String((err as { message: unknown }).message) }
    : { code: "ipc", message: String(err) };

/**
 * The checks of the tree a merge would write (the accepted hunks): the last report, a run on its
 * way (debounced; never two at once: a change meanwhile queues one more), and the run's output as
 * its events arrive.
 */
export class MergeGate {
  report: ChecksReport | null = $state.raw(null);
  /** True once the first report (or its absence) is known. */
  loaded = $state(false);
  running = $state(false);
  /** Another run waits for this one: the accepted hunks changed meanwhile. */
  queued = $state(false);
  /** A run is due (the debounce is counting). */
  due = $state(false);
  error: IpcError | null = $state(null);
  /** The runs seen on the task's stream (the `accepted` ones are this gate's). */
  checks: ChecksState = $state.raw(emptyChecks());
  readonly #calls: GateCalls;
  readonly #delayMs: number;
  readonly #log: EventLog;
  #timer: ReturnType<typeof setTimeout> | null = null;
  #poll: ReturnType<typeof setInterval> | null = null;
  #closed = false;
  #loads = 0;

  constructor(calls: GateCalls, afterSeq = 0, delayMs = 800) {
    this.#calls = calls;
    this.#delayMs = delayMs;
    this.#log = new EventLog(afterSeq);
  }

  /** The newest run on the merged tree, as streamed (its output grows while it runs). */
  readonly live = $derived(latestBatch(this.checks, ["accepted"]));
  readonly blocked = $derived(!!this.report?.blocked);
  /** The report's checks, with the streamed output of the same runs when it was seen. */
  readonly runs: CheckRun[] = $derived.by(() => {
    const streamed = new Map<string, CheckRun>();
    for (const b of this.checks.batches) if (b.kind === "accepted") for (const r of b.runs) streamed.set(r.checkId, r);
    return (this.report?.checks ?? []).map((f) => {
      const seen = streamed.get(f.check_id);
      return seen ? { ...runFromFinished(f), command: seen.command, output: seen.output } : runFromFinished(f);
    });
  });
  /** The runs that block the merge. */
  readonly failing: CheckRun[] = $derived(this.runs.filter(blocks));

  /** The review opened, or its accepted hunks changed: run the checks when the last report is missing or stale. */
  async refresh(): Promise<void> {
    if (this.#closed) return;
    if (this.running) {
      this.queued = true;
      return;
    }
    const load = ++this.#loads;
    try {
      const report = await this.#calls.load();
      if (this.#closed || load !== this.#loads || this.running) return;
      this.report = report;
      this.error = null;
      if (!report || report.stale) this.schedule();
    } catch (err) {
      if (load === this.#loads) this.error = asError(err);
    } finally {
      if (load === this.#loads) this.loaded = true;
    }
  }

  /** A run in `delayMs` (a later call moves it back). */
  schedule() {
    if (this.#closed) return;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.due = true;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.due = false;
      void this.run();
    }, this.#delayMs);
  }

  /** Runs the checks now, or after the run in progress. */
  async run(): Promise<void> {
    if (this.#closed) return;
    if (this.running) {
      this.queued = true;
      return;
    }
    this.running = true;
    this.error = null;
    this.#loads++; // a load answered after this run began is older than it
    const events = this.#calls.events;
    if (events) this.#poll = setInterval(() => void this.#follow(events), 600);
    try {
      const report = await this.#calls.run();
      if (!this.#closed) this.report = report;
    } catch (err) {
      if (!this.#closed) this.error = asError(err);
    } finally {
      if (this.#poll !== null) clearInterval(this.#poll);
      this.#poll = null;
      this.running = false;
      this.loaded = true;
      if (events && !this.#closed) void this.#follow(events);
      if (this.queued && !this.#closed) {
        this.queued = false;
        void this.run();
      }
    }
  }

  /** Events from the task's stream (live or read from the journal), in any order, repeated or not. */
  receive(events: readonly Event[]) {
    const { ready } = this.#log.accept(events);
    if (ready.length > 0) this.checks = applyCheckEvents(this.checks, ready);
  }

  async #follow(events: (afterSeq: number) => Promise<Event[]>) {
    try {
      this.receive(await events(this.#log.lastSeq));
    } catch {
      // The stream still carries them; the next read tries again.
    }
  }

  close() {
    this.#closed = true;
    if (this.#timer !== null) clearTimeout(this.#timer);
    if (this.#poll !== null) clearInterval(this.#poll);
  }
}
