import type { IpcError } from "../bindings/IpcError";
import type { Facets, HistoryHit, HistoryPage } from "../ipc/history";

/** Reads one page of a search: `limit` hits from `offset`. */
export type PageFetch = (offset: number, limit: number) => Promise<HistoryPage>;

const noFacets: Facets = { repos: [], statuses: [], models: [], sources: [] };

function asError(err: unknown): IpcError {
  if (err && typeof err === "object" && "message" in err) {
    const e = err as { code?: unknown; message: unknown };
    return { code: typeof e.code === "string" ? e.code : "ipc", message: String(e.message) };
  }
  return { code: "ipc", message: String(err) };
}

/**
 * One search's results, read a page at a time as the list scrolls: pages stay once loaded, `total`
 * sizes the list, a row not loaded yet is null. A new search replaces the results once its first
 * page is there (until then the old ones stay, and a bad query leaves them with `error`).
 */
export class HistoryResults {
  total = $state(0);
  facets: Facets = $state.raw(noFacets);
  /** Page number → its hits. */
  pages: ReadonlyMap<number, HistoryHit[]> = $state.raw(new Map());
  error: IpcError | null = $state(null);
  loaded = $state(false);
  searching = $state(false);
  /** Bumped by every search that lands (the list scrolls back to the top). */
  generation = $state(0);

  #fetch: PageFetch | null = null;
  #ticket = 0;
  #inflight = new Set<number>();

  constructor(readonly pageSize = 100) {}

  /** The hit at `index`, or null while its page loads. */
  hit(index: number): HistoryHit | null {
    return this.pages.get(Math.floor(index / this.pageSize))?.[index % this.pageSize] ?? null;
  }

  /** Starts a search; resolves when its first page landed or failed. */
  async search(fetch: PageFetch): Promise<void> {
    const ticket = ++this.#ticket;
    this.searching = true;
    try {
      const page = await fetch(0, this.pageSize);
      if (ticket !== this.#ticket) return;
      this.#fetch = fetch;
      this.#inflight = new Set();
      this.total = page.total;
      this.facets = page.facets ?? noFacets;
      this.pages = new Map([[0, page.hits]]);
      this.error = null;
      this.loaded = true;
      this.generation += 1;
    } catch (err) {
      if (ticket === this.#ticket) this.error = asError(err);
    } finally {
      if (ticket === this.#ticket) this.searching = false;
    }
  }

  /** Loads the pages rows `first` to `last` (exclusive) fall in, if not there or on the way. */
  ensure(first: number, last: number) {
    const fetch = this.#fetch;
    if (!fetch || last <= first) return;
    const ticket = this.#ticket;
    const from = Math.floor(first / this.pageSize);
    const to = Math.floor((Math.min(last, this.total) - 1) / this.pageSize);
    for (let p = from; p <= to; p++) {
      if (this.pages.has(p) || this.#inflight.has(p)) continue;
      this.#inflight.add(p);
      const inflight = this.#inflight;
      fetch(p * this.pageSize, this.pageSize)
        .then((page) => {
          if (ticket !== this.#ticket) return;
          const next = new Map(this.pages);
          next.set(p, page.hits);
          this.pages = next;
        })
        .catch((err) => {
          if (ticket === this.#ticket) this.error = asError(err);
        })
        .finally(() => inflight.delete(p));
    }
  }
}
