import { describe, expect, it } from "vitest";
import { libDiff, readmeFile, sampleReview } from "../features/review/fixtures";
import { ReviewSession } from "./review.svelte";
import { filterFiles, keyCommand, nextUnreviewed, selectLine } from "./reviewKeys";

const key = (k: string, target: EventTarget | null = document.body, mods: Partial<KeyboardEvent> = {}) =>
  keyCommand({ key: k, ctrlKey: false, metaKey: false, altKey: false, target, ...mods });

function opened(): ReviewSession {
  const s = new ReviewSession("t1");
  s.setReview(sampleReview());
  s.selectFile("src/lib.rs");
  s.setDiff(libDiff());
  return s;
}

describe("review keys", () => {
  it("maps j k n p a r c u, and nothing while typing or with a modifier", () => {
    expect(["j", "k", "n", "p", "a", "r", "c", "u"].map((k) => key(k))).toEqual([
      "next-file",
      "prev-file",
      "next-hunk",
      "prev-hunk",
      "accept",
      "reject",
      "comment",
      "undo",
    ]);
    const box = document.createElement("textarea");
    const field = document.createElement("input");
    document.body.append(box, field);
    expect(key("a", box)).toBeNull();
    expect(key("j", field)).toBeNull();
    expect(key("a", document.body, { ctrlKey: true })).toBeNull();
    expect(key("x")).toBeNull();
    box.remove();
    field.remove();
  });
});

describe("the review session", () => {
  it("opens the first file and keeps the selection when the review refreshes", () => {
    const s = new ReviewSession("t1");
    s.setReview(sampleReview());
    expect(s.selectedPath).toBe("README.md");
    s.selectFile("src/lib.rs");
    s.setReview(sampleReview());
    expect(s.selectedPath).toBe("src/lib.rs");
    s.setReview(sampleReview({ files: [readmeFile(false)] }));
    expect(s.selectedPath).toBe("README.md");
  });

  it("walks files with j/k within the filter, clamped at the ends", () => {
    const s = new ReviewSession("t1");
    s.setReview(sampleReview());
    s.stepFile(1);
    expect(s.selectedPath).toBe("src/lib.rs");
    s.stepFile(1);
    expect(s.selectedPath).toBe("src/lib.rs");
    s.stepFile(-1);
    expect(s.selectedPath).toBe("README.md");
    s.filter = "lib";
    expect(s.files.map((f) => f.path)).toEqual(["src/lib.rs"]);
    expect(filterFiles(sampleReview().files, "SRC rs").map((f) => f.path)).toEqual(["src/lib.rs"]);
  });

  it("walks hunks with n/p and goes on to the next file past the last one", () => {
    const s = opened();
    expect(s.currentHunk).toBe("lib-1");
    expect(s.stepHunk(1)).toBe("moved");
    expect(s.currentHunk).toBe("lib-2");
    expect(s.stepHunk(-1)).toBe("moved");
    expect(s.currentHunk).toBe("lib-1");
    expect(s.stepHunk(-1)).toBe("file");
    expect(s.selectedPath).toBe("README.md");
  });

  it("shows the review's verdicts on the open file's hunks", () => {
    const s = opened();
    const review = sampleReview();
    review.files[1].hunks[0].state = "accepted";
    s.setReview(review);
    expect(s.hunks.map((h) => [h.id, h.state])).toEqual([
      ["lib-1", "accepted"],
      ["lib-2", "unreviewed"],
    ]);
    expect(nextUnreviewed(s.hunks, "lib-2")).toBeNull();
    expect(nextUnreviewed(s.hunks, "lib-1")).toBe("lib-2");
  });

  it("comments on the selected range, or on the current hunk's first added line", () => {
    expect(selectLine(selectLine(null, 9, false), 3, true)).toEqual({ anchor: 9, start: 3, end: 9 });
    expect(selectLine(selectLine(null, 9, false), 12, false)).toEqual({ anchor: 12, start: 12, end: 12 });
    const s = opened();
    expect(s.startComment()).toBe(true);
    expect(s.selection).toEqual({ anchor: 5, start: 5, end: 5 });
    expect(s.composing).toBe(true);
    s.commentSaved();
    s.selectLine(40, false);
    s.selectLine(42, true);
    s.startComment();
    expect(s.selection).toEqual({ anchor: 40, start: 40, end: 42 });
  });

  it("counts the comments not yet sent as what Request changes sends", () => {
    const s = new ReviewSession("t1");
    const c = (id: number, extra = {}) => ({ id, path: "src/lib.rs", start_line: 1, end_line: 1, quote: "", body: "b", created_at: "", resolved: false, ...extra });
    s.setReview(sampleReview({ comments: [c(1), c(2, { sent_at: "x" }), c(3, { sent_at: "x", resolved: true }), c(4)] }));
    expect(s.openComments).toBe(2);
  });

  it("holds a large file until it is opened anyway", () => {
    const s = new ReviewSession("t1");
    const review = sampleReview();
    review.files[0].large = true;
    s.setReview(review);
    expect(s.held).toBe(true);
    s.openAnyway("README.md");
    expect(s.held).toBe(false);
  });
});
