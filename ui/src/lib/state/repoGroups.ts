import type { TaskRow } from "../bindings/TaskRow";

/** The tasks of one repository, newest first. */
export interface RepoGroup {
  repo: string;
  tasks: TaskRow[];
}

const newestFirst = (a: TaskRow, b: TaskRow) =>
  a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : 0;

/**
 * Groups the sidebar's tasks by repository: the repository with the newest task first, and
 * inside each group the newest task first.
 */
export function groupByRepo(tasks: readonly TaskRow[]): RepoGroup[] {
  const groups = new Map<string, TaskRow[]>();
  for (const task of [...tasks].sort(newestFirst)) {
    const group = groups.get(task.repo);
    if (group) group.push(task);
    else groups.set(task.repo, [task]);
  }
  return [...groups].map(([repo, rows]) => ({ repo, tasks: rows }));
}

/** The tasks in the order the sidebar shows them, which is the order up and down move through. */
export function displayOrder(groups: readonly RepoGroup[]): TaskRow[] {
  return groups.flatMap((g) => g.tasks);
}

/** The task up or down moves to from `selectedId`, or null at either end. */
export function neighbour(
  order: readonly TaskRow[],
  selectedId: string | null,
  key: "ArrowUp" | "ArrowDown",
): TaskRow | null {
  const i = order.findIndex((t) => t.id === selectedId);
  if (i < 0) return order[0] ?? null;
  return order[key === "ArrowDown" ? i + 1 : i - 1] ?? null;
}
