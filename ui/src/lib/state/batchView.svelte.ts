import type { BatchRow } from "../bindings/BatchRow";
import type { IpcError } from "../bindings/IpcError";
import { batchStatus, listBatches, resumeBatch, startBatch, stopBatch, type BatchRequest, type BatchView } from "../ipc/batch";
import { toIpcError } from "../ipc/journal";

/**
 * The Batch view's state: the batches, the chosen one with its items and approvals. `refresh`
 * reads them again; calls while one is under way collapse into one more read after it, so a
 * burst of live changes costs two reads, not one each.
 */
export class BatchViewState {
  batches: BatchRow[] = $state.raw([]);
  selectedId: string | null = $state(null);
  view: BatchView | null = $state.raw(null);
  error: IpcError | null = $state(null);
  loaded = $state(false);
  /** A Stop, Resume or Start under way. */
  busy = $state(false);
  private reading: Promise<void> | null = null;
  private again = false;

  readonly selected = $derived(this.batches.find((b) => b.id === this.selectedId) ?? null);

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
      const batches = await listBatches();
      this.batches = batches;
      if (!this.selectedId && batches.length > 0) this.selectedId = batches[0].id;
      const id = this.selectedId;
      if (id) {
        const view = await batchStatus(id);
        if (this.selectedId === id) this.view = view;
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
    this.view = null;
    void this.refresh();
  }

  /** Starts a batch and shows it; rejects with the command's error (a bad line, a missing repository). */
  async start(request: BatchRequest): Promise<string> {
    this.busy = true;
    try {
      const id = await startBatch(request);
      this.selectedId = id;
      this.view = null;
      await this.refresh();
      return id;
    } finally {
      this.busy = false;
    }
  }

  async stop(id: string) {
    await this.act(() => stopBatch(id));
  }

  async resume(id: string) {
    await this.act(() => resumeBatch(id));
  }

  private async act(f: () => Promise<void>) {
    this.busy = true;
    try {
      await f();
      this.error = null;
    } catch (err) {
      this.error = toIpcError(err);
    } finally {
      this.busy = false;
      await this.refresh();
    }
  }
}
