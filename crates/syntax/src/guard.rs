//! The edit guard: after an edit, tell the model if it broke a file that parsed before.
//!
//! [`GuardCache`] keeps the last tree of each recently edited file, so the next edit of it is
//! parsed incrementally (tree-sitter reuses what the edit did not touch) and the file's state
//! before that edit is already known: a later edit costs a fraction of a full parse.

use crate::Language;
use crate::parse::{Checked, MAX_BYTES, PARSE_BUDGET, check, parse, parser, verdict};
use std::fmt;
use std::hash::{DefaultHasher, Hasher};
use std::time::Duration;
use tree_sitter::{InputEdit, Point, Tree};

/// The most trees a [`GuardCache`] keeps; the least recently used goes first.
const MAX_TREES: usize = 32;

/// What to tell the model after an edit left `path` with the contents `after` (`before` is the
/// contents it replaced, `None` for a new file), or `None` when there is nothing to say: the
/// language is not one Bosun parses, `after` parses (or could not be checked), or `before` did
/// not parse either (the edit did not break a parsing file, and saying nothing avoids crying wolf
/// on files that were already broken or that the grammar does not read).
///
/// `src/calc.py: syntax error at line 12, column 5 (unexpected `)`); the file parsed before this edit`
///
/// `after` is parsed first and `before` only when `after` does not parse, so an edit that keeps
/// the file valid costs one parse. A caller that guards many edits should keep a [`GuardCache`],
/// which answers the same, mostly from incremental parses.
pub fn guard(path: &str, before: Option<&[u8]>, after: &[u8]) -> Option<String> {
    let lang = Language::for_path(path)?;
    let Checked::Broken(error) = check(lang, after, PARSE_BUDGET) else {
        return None;
    };
    let why = match before {
        None => "the file is new",
        Some(before) => match check(lang, before, PARSE_BUDGET) {
            Checked::Parses => "the file parsed before this edit",
            Checked::Broken(_) | Checked::Unchecked => return None,
        },
    };
    Some(format!("{path}: {error}; {why}"))
}

/// The edit guard with a memory: [`GuardCache::guard`] gives [`guard`]'s verdict, but keeps the
/// tree it parsed for each path (with a hash of the bytes it parsed), so when the next edit of
/// that path starts from those same bytes, `after` is parsed incrementally from the old tree and
/// whether `before` parsed is already known. When the file changed in between (a command wrote
/// it, so `before` is not what was parsed), it falls back to full parses, as [`guard`] does.
///
/// An edit then costs one incremental parse, and never a parse of `before`. Starting from a tree
/// that was broken, an incremental tree with an error is not trusted (it can be wrong) and
/// `after` is parsed again in full; starting from one that parsed, the error is real, and where
/// error recovery places it differs from a full parse in a few edits in a thousand (the
/// guard's message then names another place of the same break).
///
/// Memory is bounded: at most 32 trees (the least recently used is dropped), none for a file over
/// [`MAX_BYTES`](crate::MAX_BYTES).
#[derive(Default)]
pub struct GuardCache {
    /// Least recently used first.
    entries: Vec<Entry>,
}

/// The tree last parsed for a path.
struct Entry {
    path: String,
    lang: Language,
    /// Of the bytes `tree` was parsed from.
    hash: u64,
    len: usize,
    tree: Tree,
    parses: bool,
}

/// How an answer was reached (for the tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum How {
    /// From the cached tree of `before`.
    Incremental,
    /// Full parses, as [`guard`].
    Full,
}

impl fmt::Debug for GuardCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GuardCache")
            .field(
                "paths",
                &self.entries.iter().map(|e| &e.path).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl GuardCache {
    /// What to tell the model after an edit: the same answer as [`guard`] for the same arguments.
    pub fn guard(&mut self, path: &str, before: Option<&[u8]>, after: &[u8]) -> Option<String> {
        let lang = Language::for_path(path)?;
        let (after_checked, before_parses, _) = self.check(lang, path, before, after, PARSE_BUDGET);
        let Checked::Broken(error) = after_checked else {
            return None;
        };
        let why = match (before, before_parses) {
            (None, _) => "the file is new",
            (Some(_), Some(true)) => "the file parsed before this edit",
            (Some(_), Some(false) | None) => return None,
        };
        Some(format!("{path}: {error}; {why}"))
    }

    /// Parses `bytes` as the file at `path` holds them now and keeps the tree, so that the next
    /// edit of it is checked incrementally (a caller does this when the model reads a file it
    /// is likely to edit). Nothing happens for a language the table does not know, or when the
    /// tree of these very bytes is kept already.
    pub fn remember(&mut self, path: &str, bytes: &[u8]) {
        let Some(lang) = Language::for_path(path) else {
            return;
        };
        if let Some(i) = self
            .entries
            .iter()
            .position(|e| e.path == path && e.len == bytes.len() && e.hash == hash(bytes))
        {
            let entry = self.entries.remove(i);
            self.entries.push(entry);
            return;
        }
        let _ = self.check(lang, path, None, bytes, PARSE_BUDGET);
    }

    /// The paths whose trees are kept, least recently used first.
    #[cfg(test)]
    pub(crate) fn paths(&self) -> Vec<&str> {
        self.entries.iter().map(|e| e.path.as_str()).collect()
    }

    /// Checks `after` and, when it is broken and `before` is given, whether `before` parsed
    /// (`None`: unknown, or not asked); then keeps `after`'s tree for `path`.
    pub(crate) fn check(
        &mut self,
        lang: Language,
        path: &str,
        before: Option<&[u8]>,
        after: &[u8],
        budget: Duration,
    ) -> (Checked, Option<bool>, How) {
        let cached = self
            .entries
            .iter()
            .position(|e| e.path == path)
            .map(|i| self.entries.remove(i));
        let usable = match (cached, before) {
            (Some(entry), Some(before))
                if entry.lang == lang
                    && entry.len == before.len()
                    && entry.hash == hash(before) =>
            {
                Some((entry, before))
            }
            _ => None,
        };
        if after.len() > MAX_BYTES {
            return (Checked::Unchecked, None, How::Full);
        }
        // A parser is not kept: making one costs well under a microsecond, and a kept one parsed
        // no measurably faster.
        let Some(mut parser) = parser(lang) else {
            return (Checked::Unchecked, None, How::Full);
        };
        let parser = &mut parser;
        let (tree, before_parses, how) = match usable {
            Some((mut entry, before)) => {
                let tree = match input_edit(before, after) {
                    // The same bytes: the same tree.
                    None => Some(entry.tree),
                    Some(edit) => {
                        entry.tree.edit(&edit);
                        let parsed = entry.parses;
                        match parse(parser, after, Some(&entry.tree), budget) {
                            // An incremental parse from a broken tree need not be the full
                            // parse's (reused broken subtrees steer error recovery; a file that
                            // parses can even come out broken): it is parsed again, in full.
                            // From a tree that parsed, an error is real; where recovery puts the
                            // first one can differ from a full parse now and then (a few edits in
                            // a thousand), which is worth the full parse it saves — the guard's
                            // time budget is for exactly this case, an edit breaking a file.
                            Some(tree) if tree.root_node().has_error() && !parsed => {
                                parse(parser, after, None, budget)
                            }
                            tree => tree,
                        }
                    }
                };
                (tree, Some(entry.parses), How::Incremental)
            }
            None => {
                let tree = parse(parser, after, None, budget);
                let broken = tree.as_ref().is_some_and(|t| t.root_node().has_error());
                let before_parses = match before {
                    Some(before) if broken => {
                        parse(parser, before, None, budget).map(|t| !t.root_node().has_error())
                    }
                    _ => None,
                };
                (tree, before_parses, How::Full)
            }
        };
        let Some(tree) = tree else {
            return (Checked::Unchecked, None, how);
        };
        let checked = verdict(&tree, after);
        self.entries.push(Entry {
            path: path.to_string(),
            lang,
            hash: hash(after),
            len: after.len(),
            parses: checked == Checked::Parses,
            tree,
        });
        if self.entries.len() > MAX_TREES {
            self.entries.remove(0);
        }
        (checked, before_parses, how)
    }
}

fn hash(bytes: &[u8]) -> u64 {
    let mut hasher = DefaultHasher::new();
    hasher.write(bytes);
    hasher.finish()
}

/// The one edit that turns `before` into `after`: what lies between their common prefix and their
/// common suffix (both ending on UTF-8 character boundaries), or `None` when they are equal.
pub(crate) fn input_edit(before: &[u8], after: &[u8]) -> Option<InputEdit> {
    if before == after {
        return None;
    }
    let shorter = before.len().min(after.len());
    let mut prefix = before
        .iter()
        .zip(after)
        .position(|(a, b)| a != b)
        .unwrap_or(shorter);
    let continues = |bytes: &[u8], i: usize| bytes.get(i).is_some_and(|b| b & 0xC0 == 0x80);
    while prefix > 0 && (continues(before, prefix) || continues(after, prefix)) {
        prefix -= 1;
    }
    let mut suffix = before[prefix..]
        .iter()
        .rev()
        .zip(after[prefix..].iter().rev())
        .position(|(a, b)| a != b)
        .unwrap_or(shorter - prefix);
    while suffix > 0 && continues(before, before.len() - suffix) {
        suffix -= 1;
    }
    let start_position = point_after(Point::new(0, 0), &before[..prefix]);
    let old_end_byte = before.len() - suffix;
    let new_end_byte = after.len() - suffix;
    Some(InputEdit {
        start_byte: prefix,
        old_end_byte,
        new_end_byte,
        start_position,
        old_end_position: point_after(start_position, &before[prefix..old_end_byte]),
        new_end_position: point_after(start_position, &after[prefix..new_end_byte]),
    })
}

/// Where `text` ends when it starts at `start`: rows advance at each `\n` (only: a `\r` is a byte
/// of its line, as tree-sitter counts), columns are in bytes.
fn point_after(start: Point, text: &[u8]) -> Point {
    match text.iter().rposition(|&b| b == b'\n') {
        None => Point::new(start.row, start.column + text.len()),
        Some(last) => Point::new(
            start.row + text.iter().filter(|&&b| b == b'\n').count(),
            text.len() - last - 1,
        ),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use pretty_assertions::assert_eq;

    const PY: &str = "\"\"\"Shapes: ünïcode — 日本.\"\"\"\nimport os\n\n\nclass Shape:\n    def __init__(self, w, h):\n        self.w = w  # wïdth\n        self.h = h\n\n    def area(self):\n        if self.w < 0:\n            raise ValueError(f\"négative {self.w!r}\")\n        return self.w * self.h\n\n\ndef main():\n    s = Shape(1, 2)\n    print([x for x in (s.w, s.h) if x], 'é🦀')\n";
    const RS: &str = "//! Shapes — ünïcode.\nuse std::collections::HashMap;\n\npub struct Shape {\n    w: f64,\n    h: f64,\n}\n\nimpl Shape {\n    pub fn area(&self) -> Result<f64, String> {\n        if self.w < 0.0 {\n            return Err(format!(\"négative {:?}\", self.w));\n        }\n        Ok(self.w * self.h)\n    }\n}\n\nfn main() {\n    let mut m: HashMap<&str, u8> = HashMap::new();\n    m.insert(\"日本\", 1);\n}\n";
    const TS: &str = "// Shapes — ünïcode.\nimport { readFileSync } from \"fs\";\n\nexport interface Sized {\n  w: number;\n  h: number;\n}\n\nexport class Shape implements Sized {\n  constructor(public w: number, public h: number) {}\n\n  area(): number {\n    if (this.w < 0) {\n      throw new Error(`négative ${this.w}`);\n    }\n    return this.w * this.h;\n  }\n}\n\nconst parts = [1, 2].filter((x) => x > 0).map(String);\n";
    const JS: &str = "// Shapes — ünïcode.\n'use strict';\nconst fs = require('fs');\n\nclass Shape {\n  constructor(w, h) {\n    this.w = w;\n    this.h = h;\n  }\n\n  area() {\n    if (this.w < 0) {\n      throw new Error(`négative ${this.w}`);\n    }\n    return this.w * this.h;\n  }\n}\n\nconst parts = [1, 2].filter((x) => x > 0).map(String);\nmodule.exports = { Shape, parts, el: <b>日本</b> };\n";
    const TSX: &str = "import React from 'react';\n\nexport function Card({ title }: { title: string }) {\n  const n: number = 1;\n  return (\n    <div className=\"card\">\n      <h1>{title} — é</h1>\n      <p>{n + 1}</p>\n    </div>\n  );\n}\n";
    const GO: &str = "// Package calc — ünïcode.\npackage calc\n\nimport (\n\t\"errors\"\n\t\"fmt\"\n)\n\ntype Shape struct {\n\tW, H float64\n}\n\nfunc (s *Shape) Area() (float64, error) {\n\tif s.W < 0 {\n\t\treturn 0, errors.New(\"négative\")\n\t}\n\treturn s.W * s.H, nil\n}\n\nfunc Describe() string {\n\treturn fmt.Sprint(\"日本\", []int{1, 2})\n}\n";
    const JAVA: &str = "package bench;\n\nimport java.util.*;\n\n/** Shapes — ünïcode. */\npublic class Calc {\n    static final class Shape {\n        private final double w, h;\n\n        Shape(double w, double h) {\n            this.w = w;\n            this.h = h;\n        }\n\n        double area() {\n            if (w < 0) {\n                throw new IllegalArgumentException(\"négative \" + w);\n            }\n            return w * h;\n        }\n    }\n}\n";
    const C: &str = "/* Shapes — ünïcode. */\n#include <stdio.h>\n\ntypedef struct {\n    double w, h;\n} shape;\n\nstatic double area(const shape *s) {\n    if (s->w < 0) {\n        fprintf(stderr, \"négative\\n\");\n        return -1;\n    }\n    return s->w * s->h;\n}\n\nint main(void) {\n    shape s = {1, 2};\n    return (int)area(&s);\n}\n";
    const CPP: &str = "// Shapes — ünïcode.\n#include <string>\n#include <vector>\n\nnamespace calc {\n\ntemplate <typename T>\nclass Shape {\n public:\n  Shape(T w, T h) : w_(w), h_(h) {}\n  T area() const { return w_ * h_; }\n\n private:\n  T w_, h_;\n};\n\nstd::vector<std::string> names() { return {\"日本\", \"é\"}; }\n\n}  // namespace calc\n";
    const RB: &str = "# frozen_string_literal: true\n\nmodule Calc\n  # Shapes — ünïcode.\n  class Shape\n    attr_reader :w, :h\n\n    def initialize(w, h)\n      @w = w\n      @h = h\n    end\n\n    def area\n      raise ArgumentError, \"négative #{w}\" if w.negative?\n\n      w * h\n    end\n\n    def parts = [w, h].select { |x| x.positive? }\n  end\nend\n";
    const JSON: &str = "[\n  {\n    \"id\": 1,\n    \"name\": \"shape-é\",\n    \"sides\": [1.5, 2, 3],\n    \"tags\": {\"kind\": \"日本\", \"ok\": true, \"note\": null}\n  },\n  {\"id\": 2, \"name\": \"🦀\"}\n]\n";
    const TOML: &str = "# Configuration — ünïcode.\ntitle = \"shapes\"\n\n[shape]\nname = \"shape-é\"\nsides = [1.5, 2, 3]\nenabled = true\ncreated = 1979-05-27T07:32:00Z\n\n[shape.tags]\nkind = '日本'\nnote = \"\"\"\nA shape.\"\"\"\n";

    /// Pieces an edit inserts: brackets, quotes, line ends (CRLF too), multi-byte characters,
    /// keywords and comment markers of the languages.
    const PIECES: &[&str] = &[
        "(",
        ")",
        "{",
        "}",
        "[",
        "]",
        "\"",
        "'",
        "`",
        "\n",
        "\r\n",
        " ",
        "    ",
        "\t",
        "x",
        "é",
        "日本",
        "🦀",
        ";",
        ",",
        ":",
        "=",
        " = ",
        "end",
        "def f():",
        "fn ",
        "return ",
        "/*",
        "*/",
        "#",
        "//",
        "${",
        "<div>",
        "</div>",
        "1.5",
        "\"\"\"",
        "if x {\n",
        "}\n",
        "\r\n    y\r\n",
    ];

    /// A small deterministic generator (xorshift).
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 >> 11) as usize
        }

        fn below(&mut self, n: usize) -> usize {
            if n == 0 { 0 } else { self.next() % n }
        }
    }

    fn boundary(text: &str, mut i: usize) -> usize {
        i = i.min(text.len());
        while !text.is_char_boundary(i) {
            i -= 1;
        }
        i
    }

    /// A random edit of `text`: an insertion, deletion or replacement at its start, its end, a
    /// line start or anywhere.
    fn random_edit(rng: &mut Rng, text: &str) -> String {
        let at = match rng.below(5) {
            0 => 0,
            1 => text.len(),
            2 => {
                let starts: Vec<usize> = std::iter::once(0)
                    .chain(text.match_indices('\n').map(|(i, _)| i + 1))
                    .collect();
                starts[rng.below(starts.len())]
            }
            _ => boundary(text, rng.below(text.len() + 1)),
        };
        let deleted = match rng.below(3) {
            0 => 0,
            _ => boundary(text, at + 1 + rng.below(12)).max(at),
        };
        let deleted = if deleted == at && at < text.len() && rng.below(2) == 0 {
            boundary(text, at + 4).max(at)
        } else {
            deleted
        };
        let inserted = match rng.below(3) {
            0 if deleted > at => "",
            _ => PIECES[rng.below(PIECES.len())],
        };
        format!("{}{}{}", &text[..at], inserted, &text[deleted..])
    }

    fn samples() -> Vec<(&'static str, String)> {
        vec![
            ("calc.py", PY.to_string()),
            ("calc_crlf.py", PY.replace('\n', "\r\n")),
            ("calc.rs", RS.to_string()),
            ("calc.ts", TS.to_string()),
            ("card.tsx", TSX.to_string()),
            ("calc_crlf.js", JS.replace('\n', "\r\n")),
            ("calc.go", GO.to_string()),
            ("Calc.java", JAVA.to_string()),
            ("calc.c", C.to_string()),
            ("calc.cpp", CPP.to_string()),
            ("calc.rb", RB.to_string()),
            ("shapes.json", JSON.to_string()),
            ("shapes.toml", TOML.to_string()),
        ]
    }

    /// The full parse's answers: `after` checked, and whether `before` parses.
    fn full(lang: Language, before: &str, after: &str) -> (Checked, bool) {
        (
            check(lang, after.as_bytes(), PARSE_BUDGET),
            check(lang, before.as_bytes(), PARSE_BUDGET) == Checked::Parses,
        )
    }

    #[test]
    fn an_incremental_reparse_gives_the_full_parses_verdict_and_nearly_always_its_place() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let (mut breaks, mut fixes, mut broken_edits, mut valid_edits) = (0, 0, 0, 0);
        let mut moved = 0;
        for (path, base) in samples() {
            let lang = Language::for_path(path).unwrap();
            assert_eq!(
                check(lang, base.as_bytes(), PARSE_BUDGET),
                Checked::Parses,
                "{path}"
            );
            let mut cache = GuardCache::default();
            let mut guards = GuardCache::default();
            cache.check(lang, path, None, base.as_bytes(), PARSE_BUDGET);
            guards.guard(path, None, base.as_bytes());
            let mut text = base.clone();
            let mut last = base.clone();
            for step in 0..400 {
                let next = match step % 10 {
                    // Back to the parsing original: an edit that mostly fixes a broken file.
                    9 => base.clone(),
                    // Undo the last edit.
                    4 => last.clone(),
                    _ => random_edit(&mut rng, &text),
                };
                let (checked, before_parses, how) = cache.check(
                    lang,
                    path,
                    Some(text.as_bytes()),
                    next.as_bytes(),
                    PARSE_BUDGET,
                );
                let (want, want_before) = full(lang, &text, &next);
                let context =
                    format!("{path}, step {step}:\n--- before\n{text}\n--- after\n{next}");
                assert_eq!(how, How::Incremental, "{context}");
                // The verdict is always the full parse's; the first error's place nearly always.
                let same_verdict = |a: &Checked, b: &Checked| {
                    matches!(
                        (a, b),
                        (Checked::Parses, Checked::Parses)
                            | (Checked::Broken(_), Checked::Broken(_))
                            | (Checked::Unchecked, Checked::Unchecked)
                    )
                };
                assert!(
                    same_verdict(&checked, &want),
                    "{context}\n{checked:?} vs {want:?}"
                );
                if checked != want {
                    moved += 1;
                }
                assert_eq!(before_parses, Some(want_before), "{context}");
                let (cached, fresh) = (
                    guards.guard(path, Some(text.as_bytes()), next.as_bytes()),
                    guard(path, Some(text.as_bytes()), next.as_bytes()),
                );
                assert_eq!(cached.is_some(), fresh.is_some(), "{context}");
                if let (Some(c), Some(f)) = (&cached, &fresh) {
                    // The same file, the same reason; only the place may differ.
                    assert_eq!(
                        c.split(": syntax error").next(),
                        f.split(": syntax error").next(),
                        "{context}"
                    );
                    assert_eq!(c.rsplit(';').next(), f.rsplit(';').next(), "{context}");
                }
                match (want_before, &want) {
                    (true, Checked::Broken(_)) => breaks += 1,
                    (false, Checked::Parses) => fixes += 1,
                    _ => {}
                }
                match want {
                    Checked::Broken(_) => broken_edits += 1,
                    _ => valid_edits += 1,
                }
                last = std::mem::replace(&mut text, next);
            }
        }
        // Where recovery put the first error differed from a full parse in a few edits only.
        let total = broken_edits + valid_edits;
        assert!(
            moved * 100 <= total,
            "{moved} of {total} edits placed the error elsewhere"
        );
        // The edits covered every transition, many times.
        assert!(
            breaks > 100 && fixes > 100,
            "{breaks} breaks, {fixes} fixes"
        );
        assert!(
            broken_edits > 500 && valid_edits > 300,
            "{broken_edits} broken, {valid_edits} valid"
        );
    }

    #[test]
    fn edits_are_cut_on_characters_and_placed_in_rows_and_byte_columns() {
        let p = Point::new;
        let edit = |before: &str, after: &str| input_edit(before.as_bytes(), after.as_bytes());
        assert_eq!(edit("same", "same"), None);
        // "é" and "è" share their first byte: the edit starts on the character.
        let e = edit("a\r\nxé = 1\n", "a\r\nxè = 1\n").unwrap();
        assert_eq!((e.start_byte, e.old_end_byte, e.new_end_byte), (4, 6, 6));
        assert_eq!(
            (e.start_position, e.old_end_position, e.new_end_position),
            (p(1, 1), p(1, 3), p(1, 3))
        );
        // An insertion of lines in the middle; `\r` is a byte of its line.
        let e = edit("ab\r\ncd\n", "ab\r\nc日\nx\r\nyd\n").unwrap();
        assert_eq!((e.start_byte, e.old_end_byte, e.new_end_byte), (5, 5, 13));
        assert_eq!(
            (e.start_position, e.old_end_position, e.new_end_position),
            (p(1, 1), p(1, 1), p(3, 1))
        );
        // A deletion at the end, and one at the start.
        let e = edit("ab\ncd\n", "ab\n").unwrap();
        assert_eq!((e.start_byte, e.old_end_byte, e.new_end_byte), (3, 6, 3));
        assert_eq!(
            (e.start_position, e.old_end_position, e.new_end_position),
            (p(1, 0), p(2, 0), p(1, 0))
        );
        let e = edit("ab\ncd\n", "cd\n").unwrap();
        assert_eq!((e.start_byte, e.old_end_byte, e.new_end_byte), (0, 3, 0));
        assert_eq!(
            (e.start_position, e.old_end_position, e.new_end_position),
            (p(0, 0), p(1, 0), p(0, 0))
        );
        // A repeated byte: prefix and suffix do not overlap.
        let e = edit("aaa", "aaaa").unwrap();
        assert_eq!((e.start_byte, e.old_end_byte, e.new_end_byte), (3, 3, 4));
        let e = edit("aaaa", "aa").unwrap();
        assert_eq!((e.start_byte, e.old_end_byte, e.new_end_byte), (2, 4, 2));
    }

    const GOOD: &[u8] = b"def area(w, h):\n    return w * h\n";
    const BAD: &[u8] = b"def area(w, h):\n    return (w * h))\n";

    #[test]
    fn a_tree_of_other_bytes_is_not_used() {
        let mut cache = GuardCache::default();
        let lang = Language::Python;
        cache.check(lang, "a.py", None, GOOD, PARSE_BUDGET);
        // A command rewrote the file in between: `before` is not what was parsed.
        let changed = b"def area(w, h):\n    return h * w\n";
        let (checked, before_parses, how) =
            cache.check(lang, "a.py", Some(changed), BAD, PARSE_BUDGET);
        assert_eq!(how, How::Full);
        assert_eq!(checked, check(lang, BAD, PARSE_BUDGET));
        assert_eq!(before_parses, Some(true));
        // Nor a tree of another path with the same bytes.
        cache.check(lang, "b.py", None, GOOD, PARSE_BUDGET);
        let (_, _, how) = cache.check(lang, "c.py", Some(GOOD), BAD, PARSE_BUDGET);
        assert_eq!(how, How::Full);
        // Its answer is then kept: the next edit is incremental, from the broken tree.
        let (checked, before_parses, how) =
            cache.check(lang, "a.py", Some(BAD), GOOD, PARSE_BUDGET);
        assert_eq!(
            (checked, before_parses, how),
            (Checked::Parses, Some(false), How::Incremental)
        );
    }

    #[test]
    fn a_file_deleted_and_created_again_is_new() {
        let mut cache = GuardCache::default();
        assert_eq!(cache.guard("a.py", None, GOOD), None);
        assert_eq!(
            cache.guard("a.py", None, BAD).as_deref(),
            Some("a.py: syntax error at line 2, column 19 (unexpected `)`); the file is new")
        );
        assert_eq!(cache.guard("a.py", None, GOOD), None);
        assert_eq!(
            cache.guard("a.py", Some(GOOD), BAD).as_deref(),
            Some(
                "a.py: syntax error at line 2, column 19 (unexpected `)`); \
                 the file parsed before this edit"
            )
        );
        assert_eq!(cache.guard("a.py", Some(BAD), BAD), None);
    }

    #[test]
    fn the_least_recently_used_tree_goes_first() {
        let mut cache = GuardCache::default();
        let lang = Language::Python;
        let path = |i: usize| format!("m{i}.py");
        for i in 0..MAX_TREES {
            cache.check(lang, &path(i), None, GOOD, PARSE_BUDGET);
        }
        // Using m0 makes m1 the oldest.
        let (_, _, how) = cache.check(lang, &path(0), Some(GOOD), GOOD, PARSE_BUDGET);
        assert_eq!(how, How::Incremental);
        cache.check(lang, &path(MAX_TREES), None, GOOD, PARSE_BUDGET);
        assert_eq!(cache.paths().len(), MAX_TREES);
        assert!(!cache.paths().contains(&"m1.py"), "{:?}", cache.paths());
        let (_, _, how) = cache.check(lang, &path(1), Some(GOOD), BAD, PARSE_BUDGET);
        assert_eq!(how, How::Full);
        for i in [0, 3, MAX_TREES] {
            let (_, _, how) = cache.check(lang, &path(i), Some(GOOD), GOOD, PARSE_BUDGET);
            assert_eq!(how, How::Incremental, "{i}");
        }
        // m2 was the oldest after m1 came back.
        assert!(!cache.paths().contains(&"m2.py"), "{:?}", cache.paths());
    }

    #[test]
    fn a_file_over_the_limit_is_not_kept() {
        let mut cache = GuardCache::default();
        let big = "x = 1\n".repeat(MAX_BYTES / 6 + 1);
        assert!(big.len() > MAX_BYTES);
        cache.check(Language::Python, "a.py", None, GOOD, PARSE_BUDGET);
        let (checked, _, _) = cache.check(
            Language::Python,
            "a.py",
            Some(GOOD),
            big.as_bytes(),
            PARSE_BUDGET,
        );
        assert_eq!(checked, Checked::Unchecked);
        assert!(cache.paths().is_empty());
    }

    #[test]
    fn an_incremental_parse_out_of_time_is_unchecked_and_forgotten() {
        let lang = Language::Python;
        let valid = "x = [1, 2]\n".repeat(5_000);
        // An opening bracket at the start changes how everything after it reads.
        let broken = format!("y = (\n{valid}");
        let mut cache = GuardCache::default();
        cache.check(lang, "a.py", None, valid.as_bytes(), PARSE_BUDGET);
        let (checked, _, how) = cache.check(
            lang,
            "a.py",
            Some(valid.as_bytes()),
            broken.as_bytes(),
            Duration::ZERO,
        );
        assert_eq!((checked, how), (Checked::Unchecked, How::Incremental));
        assert!(cache.paths().is_empty());
        // The parser starts afresh: the next answer is a full parse's (given all the time it
        // needs: the tests run side by side).
        let ample = Duration::from_secs(60);
        let (checked, before_parses, how) = cache.check(
            lang,
            "a.py",
            Some(valid.as_bytes()),
            broken.as_bytes(),
            ample,
        );
        assert_eq!(how, How::Full);
        assert_eq!(checked, check(lang, broken.as_bytes(), ample));
        assert!(matches!(checked, Checked::Broken(_)));
        assert_eq!(before_parses, Some(true));
    }

    #[test]
    fn a_file_remembered_when_read_is_checked_incrementally_at_its_first_edit() {
        let mut cache = GuardCache::default();
        let before = "def add(a, b):\n    return a + b\n";
        cache.remember("calc.py", before.as_bytes());
        cache.remember("calc.py", before.as_bytes());
        assert_eq!(cache.paths(), vec!["calc.py"]);
        let after = "def add(a, b):\n    return (a + b\n";
        let lang = Language::Python;
        let (checked, parsed_before, how) = cache.check(
            lang,
            "calc.py",
            Some(before.as_bytes()),
            after.as_bytes(),
            PARSE_BUDGET,
        );
        assert_eq!(how, How::Incremental);
        assert_eq!(parsed_before, Some(true));
        assert!(matches!(checked, Checked::Broken(_)));
        cache.remember("notes.txt", b"text");
        assert_eq!(cache.paths(), vec!["calc.py"]);
    }

    #[test]
    fn the_cache_can_move_between_threads() {
        fn send<T: Send>() {}
        send::<GuardCache>();
    }
}
