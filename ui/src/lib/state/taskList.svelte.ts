import type { IpcError } from "../bindings/IpcError";
import type { TaskRow } from "../bindings/TaskRow";

/** The sidebar's tasks (newest first, as the journal lists them) and which one is selected. */
export class TaskList {
  tasks: TaskRow[] = $state.raw([]);
  selectedId: string | null = $state(null);
  /** True once the user picked a task; until then the newest task is shown as it appears. */
  chosen = $state(false);
  error: IpcError | null = $state(null);
  loaded = $state(false);

  readonly selected = $derived(this.tasks.find((t) => t.id === this.selectedId) ?? null);

  replace(tasks: TaskRow[]) {
    this.tasks = tasks;
    this.loaded = true;
    this.error = null;
    if (!this.chosen && tasks.length > 0) this.selectedId = tasks[0].id;
  }

  /** The user picked a task: keep it selected while new tasks arrive. */
  choose(id: string) {
    this.selectedId = id;
    this.chosen = true;
  }

  fail(error: IpcError) {
    this.error = error;
    this.loaded = true;
  }
}
