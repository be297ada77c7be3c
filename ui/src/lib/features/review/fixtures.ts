// Test data for the review screen's tests: a small task that changed two files.
import type { DiffLine } from "../../bindings/DiffLine";
import type { FileDiff } from "../../bindings/FileDiff";
import type { Review } from "../../bindings/Review";
import type { ReviewFile } from "../../bindings/ReviewFile";
import type { ReviewHunk } from "../../bindings/ReviewHunk";

const ctx = (o: number, n: number, text: string): DiffLine => ({ kind: "context", old_line: o, new_line: n, text, no_newline: false });
const del = (o: number, text: string): DiffLine => ({ kind: "removed", old_line: o, text, no_newline: false });
const add = (n: number, text: string): DiffLine => ({ kind: "added", new_line: n, text, no_newline: false });

/** 40 lines: `line 1` … `line 40`, with a function on lines 5–7. */
function oldLines(): string[] {
  const lines = Array.from({ length: 40 }, (_, i) => `line ${i + 1}`);
  lines[4] = "fn total(xs: &[u32]) -> u32 {";
  lines[5] = "    xs.iter().sum()";
  lines[6] = "}";
  return lines;
}

/** The agent renamed `total` to `sum_all`, re-indented line 6, and appended two lines at the end. */
function newLines(): string[] {
  const lines = oldLines();
  lines[4] = "fn sum_all(xs: &[u32]) -> u32 {";
  lines[5] = "  xs.iter().sum()";
  lines.push("// added one", "// added two");
  return lines;
}

export function hunk(number: number, partial: Partial<ReviewHunk>): ReviewHunk {
  return {
    number,
    id: `h${number}`,
    kind: "text",
    state: "unreviewed",
    old_start: 0,
    old_lines: 0,
    new_start: 0,
    new_lines: 0,
    header: "",
    added: 0,
    removed: 0,
    lines: [],
    provenance: [],
    ...partial,
  };
}

export function libHunks(withLines = true): ReviewHunk[] {
  const o = oldLines();
  const n = newLines();
  return [
    hunk(1, {
      id: "lib-1",
      old_start: 2,
      old_lines: 8,
      new_start: 2,
      new_lines: 8,
      header: "@@ -2,8 +2,8 @@",
      added: 2,
      removed: 2,
      lines: withLines
        ? [ctx(2, 2, o[1]), ctx(3, 3, o[2]), ctx(4, 4, o[3]), del(5, o[4]), del(6, o[5]), add(5, n[4]), add(6, n[5]), ctx(7, 7, o[6]), ctx(8, 8, o[7]), ctx(9, 9, o[8])]
        : [],
      provenance: [
        {
          checkpoint: 1,
          call_id: "call_1",
          tool: "edit_file",
          summary: "edit_file src/lib.rs",
          assistant_text: "I will rename total to sum_all.",
          approval: "you: approved once",
          seq: 6,
        },
      ],
    }),
    hunk(2, {
      id: "lib-2",
      old_start: 38,
      old_lines: 3,
      new_start: 38,
      new_lines: 5,
      header: "@@ -38,3 +38,5 @@",
      added: 2,
      removed: 0,
      lines: withLines ? [ctx(38, 38, o[37]), ctx(39, 39, o[38]), ctx(40, 40, o[39]), add(41, n[40]), add(42, n[41])] : [],
      provenance: [{ checkpoint: 2, call_id: "call_2", tool: "write_file", summary: "write_file src/lib.rs", seq: 12 }],
    }),
  ];
}

export function libFile(withLines = true): ReviewFile {
  return {
    path: "src/lib.rs",
    status: "modified",
    binary: false,
    non_utf8: false,
    old_mode: 0o100644,
    new_mode: 0o100644,
    added: 4,
    removed: 2,
    state: "unreviewed",
    large: false,
    hunks: libHunks(withLines),
  };
}

export function readmeFile(withLines = true): ReviewFile {
  return {
    path: "README.md",
    status: "added",
    binary: false,
    non_utf8: false,
    new_mode: 0o100644,
    added: 2,
    removed: 0,
    state: "unreviewed",
    large: false,
    hunks: [
      hunk(1, {
        id: "readme-1",
        new_start: 1,
        new_lines: 2,
        header: "@@ -0,0 +1,2 @@",
        added: 2,
        lines: withLines ? [add(1, "# Acme"), add(2, "Sums numbers.")] : [],
      }),
    ],
  };
}

export function libDiff(): FileDiff {
  return { file: libFile(), old_text: oldLines().join("\n") + "\n", new_text: newLines().join("\n") + "\n" };
}

export function sampleReview(partial: Partial<Review> = {}): Review {
  const files = [readmeFile(false), libFile(false)];
  return {
    task_id: "t1",
    base_commit: "abc123",
    base_ref: "main",
    latest_checkpoint: 2,
    files,
    comments: [],
    counts: { files: 2, hunks: 3, accepted: 0, rejected: 0, unreviewed: 3, added: 6, removed: 2 },
    running: false,
    worktree_removed: false,
    ...partial,
  };
}
