import type { BatchRow } from "../bindings/BatchRow";
import type { Comparison } from "../bindings/Comparison";
import type { IpcError } from "../bindings/IpcError";
import type { MergeOutcome } from "../bindings/MergeOutcome";
import { compareStatus, listComparisons, listSetups, mergeRun, startCompare, type CompareStart } from "../ipc/batch";
import { toIpcError } from "../ipc/journal";

/**
 * The Compare view's state: the comparisons, the chosen one with its figures and diffs, the
 * setups config.toml names, and what "Merge this run" did. Reads collapse like the Batch view's.
 */
export class CompareViewState {
  comparisons: BatchRow[] = $state.raw([]);
  selectedId: string | null = $state(null);
  comparison: Comparison | null = $state.raw(null);
  setups: string[] = $state.raw([]);
  error: IpcError | null = $state(null);
  loaded = $state(false);
  busy = $state(false);
  /** Merges done from this view, by run label. */
  merged: Record<string, MergeOutcome> = $state({});
  mergeError: string | null = $state(null);
  private reading: Promise<void> | null = null;
  private again = false;

  async loadSetups() {
    this.setups = await listSetups().catch(() => []);
  }

  refresh(): Promise<void> {
    if (this.reading) {
      this.again = true;
      return this.reading;
    }
    this.reading = (async () => {
      try {
        do {
          this.again = false;
          await this.read();
        } while (this.again);
      } finally {
        this.reading = null;
      }
    })();
    return this.reading;
  }

  private async read() {
    try {
      const list = await listComparisons();
      this.comparisons = list;
      if (!this.selectedId && list.length > 0) this.selectedId = list[0].id;
      const id = this.selectedId;
      if (id) {
        const c = await compareStatus(id);
        if (this.selectedId === id) this.comparison = c;
      }
      this.error = null;
    } catch (err) {
      this.error = toIpcError(err);
    } finally {
      this.loaded = true;
    }
  }

  choose(id: string) {
    if (this.selectedId === id) return;
    this.selectedId = id;
    this.comparison = null;
    this.merged = {};
    this.mergeError = null;
    void this.refresh();
  }

  async start(request: CompareStart): Promise<string> {
    this.busy = true;
    try {
      const id = await startCompare(request);
      this.selectedId = id;
      this.comparison = null;
      this.merged = {};
      await this.refresh();
      return id;
    } finally {
      this.busy = false;
    }
  }

  /** Accepts all of run `label` and merges it; the other runs stay as they are. */
  async merge(label: string, into?: string) {
    const id = this.selectedId;
    if (!id) return;
    this.busy = true;
    this.mergeError = null;
    try {
      const outcome = await mergeRun(id, label, into);
      this.merged = { ...this.merged, [label]: outcome };
    } catch (err) {
      this.mergeError = `${label}: ${toIpcError(err).message}`;
    } finally {
      this.busy = false;
      await this.refresh();
    }
  }
}
