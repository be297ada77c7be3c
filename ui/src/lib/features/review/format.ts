/** Bytes as a person reads them: `512 B`, `12.3 KB`, `4.1 MB`. */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let v = n / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[u]}`;
}

/** A git file mode as git prints it (`100644`). */
export function formatMode(mode: number | undefined): string {
  return mode === undefined ? "" : mode.toString(8).padStart(6, "0");
}
