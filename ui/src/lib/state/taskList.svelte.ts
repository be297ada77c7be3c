import type { IpcError } from "../bindings/IpcError";
import type { TaskRow } from "../bindings/TaskRow";
import type { Owned } from "../ipc/journal";

/** The sidebar's tasks (newest first, as the journal lists them) and which one is selected. */
export class TaskList {
  tasks: TaskRow[] = $state.raw([]);
  selectedId: string | null = $state(null);
  /** True once the user picked a task; until then the newest task is shown as it appears. */
  chosen = $state(false);
  error: IpcError | null = $state(null);
  loaded = $state(false);
  /** The tasks this app runs, and how many approvals each waits for. */
  owned: Owned = $state.raw({});
  /** True while the "New task" form is open. */
  composing = $state(false);
  /** True while Settings is open (choosing a task closes it). */
  settingsOpen = $state(false);
  /** True while the History view is open (choosing a task closes it). */
  historyOpen = $state(false);
  /** True while the Costs view is open (choosing a task closes it). */
  costsOpen = $state(false);
  /** True while the Memory view is open (choosing a task closes it). */
  memoryOpen = $state(false);
  /** True while the Batch view is open (choosing a task closes it). */
  batchOpen = $state(false);
  /** True while the Compare view is open (choosing a task closes it). */
  compareOpen = $state(false);
  /** The repository the Memory view shows (kept while it is closed), or null for the default. */
  memoryRepo: string | null = $state(null);
  /** The event to show when the chosen task opens (from a history search), or null. */
  focusSeq: number | null = $state(null);
  /** The row of a task opened from the history, shown until the live list carries it. */
  opened: TaskRow | null = $state.raw(null);
  /**
   * The tasks a sub-agent was opened from, outermost first: the way back from a child's timeline
   * (children are not in the list, which holds the user's own tasks).
   */
  trail: TaskRow[] = $state.raw([]);

  readonly selected = $derived(
    this.tasks.find((t) => t.id === this.selectedId) ?? (this.opened?.id === this.selectedId ? this.opened : null),
  );
  /** Where "Back" goes from a sub-agent's timeline: the task it was opened from, else its parent when the list has it. */
  readonly parent = $derived(
    this.trail[this.trail.length - 1] ??
      (this.selected?.parent_task_id ? (this.tasks.find((t) => t.id === this.selected?.parent_task_id) ?? null) : null),
  );
  /** How many tasks wait for an approval. */
  readonly waitingTasks = $derived(Object.values(this.owned).filter((n) => n > 0).length);
  /** Repositories of past tasks, most recent first, each once. */
  readonly recentRepos = $derived([...new Set(this.tasks.map((t) => t.repo))]);

  replace(tasks: TaskRow[], owned: Owned = {}) {
    this.tasks = tasks;
    this.owned = owned;
    this.loaded = true;
    this.error = null;
    if (!this.chosen && tasks.length > 0) this.selectedId = tasks[0].id;
  }

  /** Rows that changed (new ones included): each replaces the row of its id; newest first. */
  merge(changed: TaskRow[], owned: Owned = {}) {
    if (changed.length > 0) {
      const byId = new Map(this.tasks.map((t) => [t.id, t]));
      for (const t of changed) byId.set(t.id, t);
      this.tasks = [...byId.values()].sort((a, b) =>
        a.created_at === b.created_at ? (a.id < b.id ? 1 : a.id > b.id ? -1 : 0) : a.created_at < b.created_at ? 1 : -1,
      );
    }
    this.owned = owned;
    this.loaded = true;
    this.error = null;
    if (!this.chosen && this.tasks.length > 0) this.selectedId = this.tasks[0].id;
  }

  /**
   * The user picked a task: keep it selected while new tasks arrive. From the history, `row` is
   * the task as found (it may not be in the live list) and `focusSeq` the event to show.
   */
  choose(id: string, focusSeq: number | null = null, row: TaskRow | null = null) {
    this.selectedId = id;
    this.chosen = true;
    this.composing = false;
    this.settingsOpen = false;
    this.historyOpen = false;
    this.costsOpen = false;
    this.memoryOpen = false;
    this.batchOpen = false;
    this.compareOpen = false;
    this.focusSeq = focusSeq;
    this.trail = [];
    if (row) this.opened = row;
  }

  /** Opens a sub-agent's own timeline from the task shown now, which becomes the way back. */
  openChild(child: TaskRow) {
    const from = this.selected;
    const trail = from && from.id !== child.id ? [...this.trail, from] : this.trail;
    this.choose(child.id, null, child);
    this.trail = trail;
  }

  /** Back from a sub-agent's timeline to the task it was opened from. */
  back() {
    const parent = this.parent;
    if (!parent) return;
    const trail = this.trail.slice(0, -1);
    this.choose(parent.id, null, parent);
    this.trail = trail;
  }

  /** Opens the History view. */
  openHistory() {
    this.historyOpen = true;
    this.costsOpen = false;
    this.memoryOpen = false;
    this.batchOpen = false;
    this.compareOpen = false;
    this.composing = false;
    this.settingsOpen = false;
  }

  /** Opens the Costs view. */
  openCosts() {
    this.costsOpen = true;
    this.historyOpen = false;
    this.memoryOpen = false;
    this.batchOpen = false;
    this.compareOpen = false;
    this.composing = false;
    this.settingsOpen = false;
  }

  /** Opens Settings. */
  openSettings() {
    this.settingsOpen = true;
    this.historyOpen = false;
    this.costsOpen = false;
    this.memoryOpen = false;
    this.batchOpen = false;
    this.compareOpen = false;
    this.composing = false;
  }

  /**
   * Opens the Memory view on `repo`; without one, on the repository it showed last, else the
   * selected task's, else the most recent task's (none: the view offers the ones with memories).
   */
  openMemory(repo: string | null = null) {
    this.memoryRepo = repo ?? this.memoryRepo ?? this.selected?.repo ?? this.recentRepos[0] ?? null;
    this.memoryOpen = true;
    this.batchOpen = false;
    this.compareOpen = false;
    this.historyOpen = false;
    this.costsOpen = false;
    this.composing = false;
    this.settingsOpen = false;
  }

  /** Opens the Batch view. */
  openBatch() {
    this.historyOpen = false;
    this.costsOpen = false;
    this.memoryOpen = false;
    this.compareOpen = false;
    this.composing = false;
    this.settingsOpen = false;
    this.batchOpen = true;
  }

  /** Opens the Compare view. */
  openCompare() {
    this.historyOpen = false;
    this.costsOpen = false;
    this.memoryOpen = false;
    this.batchOpen = false;
    this.composing = false;
    this.settingsOpen = false;
    this.compareOpen = true;
  }

  fail(error: IpcError) {
    this.error = error;
    this.loaded = true;
  }
}
