import { describe, expect, it } from "vitest";
import { libDiff, libHunks } from "../../features/review/fixtures";
import { diffRows, hideWhitespace, withComments, type DiffRow } from "./rows";
import { segments } from "./segments";
import { wordChanges } from "./wordDiff";

const unified = { split: false, hideWhitespace: false, expanded: {} };

/** A row as a reviewer reads it: `@@` headers, `+`/`-`/` ` lines with numbers, `⋯ N` gaps. */
function show(rows: DiffRow[]): string[] {
  return rows.map((r) => {
    switch (r.kind) {
      case "hunk":
        return r.hunk.header + (r.whitespaceOnly ? " (whitespace only)" : "");
      case "line":
        return `${{ added: "+", removed: "-", context: " " }[r.line.kind]}${r.line.old_line ?? ""}|${r.line.new_line ?? ""} ${r.line.text}`;
      case "pair":
        return `${r.left ? `${r.left.old_line} ${r.left.text}` : "·"} ‖ ${r.right ? `${r.right.new_line} ${r.right.text}` : "·"}`;
      case "gap":
        return `⋯ ${r.hidden}`;
      case "comment":
        return `comment ${r.comment.id}${r.hidden ? " (not shown)" : ""}`;
      case "composer":
        return `composer ${r.start}-${r.end}`;
    }
  });
}

describe("the diff's rows", () => {
  it("shows hunks in unified form with the unchanged lines between them folded", () => {
    const d = libDiff();
    const rows = show(diffRows(d.file.hunks, d.new_text ?? null, unified));
    expect(rows).toEqual([
      "⋯ 1",
      "@@ -2,8 +2,8 @@",
      " 2|2 line 2",
      " 3|3 line 3",
      " 4|4 line 4",
      "-5| fn total(xs: &[u32]) -> u32 {",
      "-6|     xs.iter().sum()",
      "+|5 fn sum_all(xs: &[u32]) -> u32 {",
      "+|6   xs.iter().sum()",
      " 7|7 }",
      " 8|8 line 8",
      " 9|9 line 9",
      "⋯ 28",
      "@@ -38,3 +38,5 @@",
      " 38|38 line 38",
      " 39|39 line 39",
      " 40|40 line 40",
      "+|41 // added one",
      "+|42 // added two",
    ]);
  });

  it("puts removed and added lines side by side in split form", () => {
    const d = libDiff();
    const rows = show(diffRows(d.file.hunks, null, { ...unified, split: true })).slice(5, 9);
    expect(rows).toEqual([
      "5 fn total(xs: &[u32]) -> u32 { ‖ 5 fn sum_all(xs: &[u32]) -> u32 {",
      "6     xs.iter().sum() ‖ 6   xs.iter().sum()",
      "7 } ‖ 7 }",
      "8 line 8 ‖ 8 line 8",
    ]);
    const tail = show(diffRows(d.file.hunks, null, { ...unified, split: true })).slice(-2);
    expect(tail).toEqual(["· ‖ 41 // added one", "· ‖ 42 // added two"]);
  });

  it("opens folded context from the file's text, 20 lines at a time or all at once", () => {
    const d = libDiff();
    const some = show(diffRows(d.file.hunks, d.new_text ?? null, { ...unified, expanded: { "gap:10": { top: 20, bottom: 0 } } }));
    expect(some.slice(12, 14)).toEqual([" 10|10 line 10", " 11|11 line 11"]);
    expect(some).toContain("⋯ 8");
    const all = show(diffRows(d.file.hunks, d.new_text ?? null, { ...unified, expanded: { "gap:10": { top: 28, bottom: 0 } } }));
    expect(all.filter((r) => r.startsWith("⋯"))).toEqual(["⋯ 1"]);
    expect(all).toContain(" 37|37 line 37");
  });

  it("does not offer to open context when the file's text did not come with the diff", () => {
    const rows = diffRows(libHunks(), null, unified).filter((r) => r.kind === "gap");
    expect(rows.every((r) => r.kind === "gap" && !r.gap.expandable)).toBe(true);
  });

  it("hides a change of indentation when whitespace is hidden", () => {
    const lines = hideWhitespace(libHunks()[0].lines).map((l) => `${l.kind[0]} ${l.text}`);
    expect(lines).toEqual([
      "c line 2",
      "c line 3",
      "c line 4",
      "r fn total(xs: &[u32]) -> u32 {",
      "a fn sum_all(xs: &[u32]) -> u32 {",
      "c   xs.iter().sum()",
      "c }",
      "c line 8",
      "c line 9",
    ]);
    const [indentOnly] = libHunks();
    indentOnly.lines = indentOnly.lines.filter((l) => !l.text.includes("total") && !l.text.includes("sum_all"));
    const rows = show(diffRows([indentOnly], null, { ...unified, hideWhitespace: true }));
    expect(rows[1]).toBe("@@ -2,8 +2,8 @@ (whitespace only)");
  });

  it("marks the changed words of a replaced line", () => {
    const c = wordChanges("fn total(xs: &[u32]) -> u32 {", "fn sum_all(xs: &[u32]) -> u32 {");
    expect(c.removed).toEqual([{ from: 3, to: 8 }]);
    expect(c.added).toEqual([{ from: 3, to: 10 }]);
    const d = libDiff();
    const row = diffRows(d.file.hunks, null, unified).find((r) => r.kind === "line" && r.line.new_line === 5);
    expect(row?.kind === "line" && row.changes).toEqual([{ from: 3, to: 10 }]);
  });

  it("cuts a line into syntax spans and word changes", () => {
    const parts = segments("let total = 1;", [{ from: 0, to: 3, cls: "tok-keyword" }], [{ from: 4, to: 9 }]);
    expect(parts).toEqual([
      { text: "let", cls: "tok-keyword", changed: false },
      { text: " ", cls: "", changed: false },
      { text: "total", cls: "", changed: true },
      { text: " = 1;", cls: "", changed: false },
    ]);
  });

  it("puts comments under their last line, and the ones on folded lines first", () => {
    const d = libDiff();
    const comment = (id: number, line: number) => ({
      id,
      path: "src/lib.rs",
      start_line: line,
      end_line: line,
      quote: "",
      body: "why?",
      created_at: "",
      resolved: false,
    });
    const rows = show(withComments(diffRows(d.file.hunks, d.new_text ?? null, unified), [comment(7, 6), comment(8, 20)], { start: 41, end: 42 }));
    expect(rows[0]).toBe("comment 8 (not shown)");
    expect(rows[rows.indexOf("+|6   xs.iter().sum()") + 1]).toBe("comment 7");
    expect(rows[rows.length - 1]).toBe("composer 41-42");
  });
});
