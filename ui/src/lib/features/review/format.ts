export { formatBytes } from "../../components/format";

/** A git file mode as git prints it (`100644`). */
export function formatMode(mode: number | undefined): string {
  return mode === undefined ? "" : mode.toString(8).padStart(6, "0");
}
