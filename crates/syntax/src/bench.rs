//! `bosun bench guard`: the edit guard's cost on generated files of realistic code, per language.
//! A benchmark prints figures; nothing here asserts a time.

use crate::{GuardCache, Language, guard};
use std::io::{self, Write};
use std::time::{Duration, Instant};

/// What the guard may add to an edit of a 2,000-line file.
pub const BUDGET: Duration = Duration::from_millis(5);

/// A generated file: a header, numbered units of code (functions, classes, strings, comments,
/// nesting) until there are enough lines, a footer; `broken` is a unit that does not parse,
/// placed in the middle for the broken case.
struct Sample {
    path: &'static str,
    header: &'static str,
    unit: fn(usize) -> String,
    separator: &'static str,
    footer: &'static str,
    broken: &'static str,
    /// A one-line change of the middle unit that keeps the file parsing: (text, replacement).
    valid_edit: (&'static str, &'static str),
    /// A one-line change of the middle unit that breaks the file.
    breaking_edit: (&'static str, &'static str),
}

const SAMPLES: [Sample; 11] = [
    Sample {
        path: "src/calc.py",
        header: "\"\"\"Generated module.\"\"\"\nimport os\nfrom typing import Optional\n\n",
        unit: |i| {
            format!(
                "# Shape number {i}\nclass Shape{i}:\n    \"\"\"A shape with an area.\"\"\"\n\n    \
                 def __init__(self, w: float, h: float) -> None:\n        self.w = w\n        \
                 self.h = h\n\n    def area(self) -> float:\n        if self.w < 0 or self.h < 0:\n            \
                 raise ValueError(f\"negative side in {{self!r}}\")\n        return self.w * self.h\n\n    \
                 def describe(self, label: Optional[str] = None) -> str:\n        parts = [str(x) for x in (self.w, self.h) if x]\n        \
                 return (label or 'shape-{i}') + ': ' + ', '.join(parts)\n\n\n"
            )
        },
        separator: "",
        footer: "",
        broken: "def broken(:\n    pass\n\n",
        valid_edit: ("return self.w * self.h", "return self.h * self.w"),
        breaking_edit: ("return self.w * self.h", "return (self.w * self.h"),
    },
    Sample {
        path: "src/calc.rs",
        header: "//! Generated module.\nuse std::collections::HashMap;\n\n",
        unit: |i| {
            format!(
                "/// Shape number {i}.\n#[derive(Debug, Clone)]\npub struct Shape{i} {{\n    w: f64,\n    h: f64,\n}}\n\n\
                 impl Shape{i} {{\n    pub fn area(&self) -> Result<f64, String> {{\n        if self.w < 0.0 || self.h < 0.0 {{\n            \
                 return Err(format!(\"negative side in {{:?}}\", self));\n        }}\n        Ok(self.w * self.h)\n    }}\n\n    \
                 pub fn index(&self, names: &[&str]) -> HashMap<String, usize> {{\n        // Count each name.\n        \
                 let mut map = HashMap::new();\n        for n in names {{\n            *map.entry(n.to_string()).or_insert(0) += {i};\n        }}\n        map\n    }}\n}}\n\n"
            )
        },
        separator: "",
        footer: "",
        broken: "fn broken( {}\n\n",
        valid_edit: ("Ok(self.w * self.h)", "Ok(self.h * self.w)"),
        breaking_edit: ("Ok(self.w * self.h)", "Ok(self.w * self.h"),
    },
    Sample {
        path: "src/calc.ts",
        header: "// Generated module.\nimport { readFileSync } from \"fs\";\n\n",
        unit: |i| {
            format!(
                "/** Shape number {i}. */\nexport interface Sized{i} {{\n  w: number;\n  h: number;\n}}\n\n\
                 export class Shape{i} implements Sized{i} {{\n  constructor(public w: number, public h: number) {{}}\n\n  \
                 area(): number {{\n    if (this.w < 0 || this.h < 0) {{\n      throw new Error(`negative side in ${{this.w}}x${{this.h}}`);\n    }}\n    \
                 return this.w * this.h;\n  }}\n\n  describe(label?: string): string {{\n    // Join the sides.\n    \
                 const parts = [this.w, this.h].filter((x) => x > 0).map(String);\n    return (label ?? 'shape-{i}') + ': ' + parts.join(', ');\n  }}\n}}\n\n"
            )
        },
        separator: "",
        footer: "",
        broken: "function broken( {}\n\n",
        valid_edit: ("return this.w * this.h;", "return this.h * this.w;"),
        breaking_edit: ("return this.w * this.h;", "return (this.w * this.h;"),
    },
    Sample {
        path: "src/calc.js",
        header: "// Generated module.\n'use strict';\nconst fs = require('fs');\n\n",
        unit: |i| {
            format!(
                "/** Shape number {i}. */\nclass Shape{i} {{\n  constructor(w, h) {{\n    this.w = w;\n    this.h = h;\n  }}\n\n  \
                 area() {{\n    if (this.w < 0 || this.h < 0) {{\n      throw new Error(`negative side in ${{this.w}}x${{this.h}}`);\n    }}\n    \
                 return this.w * this.h;\n  }}\n\n  describe(label) {{\n    // Join the sides.\n    \
                 const parts = [this.w, this.h].filter((x) => x > 0).map(String);\n    return (label || 'shape-{i}') + ': ' + parts.join(', ');\n  }}\n}}\n\
                 module.exports.Shape{i} = Shape{i};\n\n"
            )
        },
        separator: "",
        footer: "",
        broken: "function broken( {}\n\n",
        valid_edit: ("return this.w * this.h;", "return this.h * this.w;"),
        breaking_edit: ("return this.w * this.h;", "return (this.w * this.h;"),
    },
    Sample {
        path: "pkg/calc.go",
        header: "// Package calc is generated.\npackage calc\n\nimport (\n\t\"errors\"\n\t\"fmt\"\n\t\"strings\"\n)\n\n",
        unit: |i| {
            format!(
                "// Shape{i} is shape number {i}.\ntype Shape{i} struct {{\n\tW, H float64\n}}\n\n\
                 func (s *Shape{i}) Area() (float64, error) {{\n\tif s.W < 0 || s.H < 0 {{\n\t\t\
                 return 0, errors.New(\"negative side\")\n\t}}\n\treturn s.W * s.H, nil\n}}\n\n\
                 func (s *Shape{i}) Describe(label string) string {{\n\t// Join the sides.\n\tparts := []string{{}}\n\t\
                 for _, x := range []float64{{s.W, s.H}} {{\n\t\tif x > 0 {{\n\t\t\tparts = append(parts, fmt.Sprint(x))\n\t\t}}\n\t}}\n\t\
                 return label + \"-{i}: \" + strings.Join(parts, \", \")\n}}\n\n"
            )
        },
        separator: "",
        footer: "",
        broken: "func broken( {}\n\n",
        valid_edit: ("return s.W * s.H, nil", "return s.H * s.W, nil"),
        breaking_edit: ("return s.W * s.H, nil", "return (s.W * s.H, nil"),
    },
    Sample {
        path: "src/main/java/Calc.java",
        header: "package bench;\n\nimport java.util.*;\n\n/** Generated. */\npublic class Calc {\n",
        unit: |i| {
            format!(
                "    /** Shape number {i}. */\n    static final class Shape{i} {{\n        private final double w, h;\n\n        \
                 Shape{i}(double w, double h) {{\n            this.w = w;\n            this.h = h;\n        }}\n\n        \
                 double area() {{\n            if (w < 0 || h < 0) {{\n                throw new IllegalArgumentException(\"negative side \" + w);\n            }}\n            \
                 return w * h;\n        }}\n\n        String describe(String label) {{\n            // Join the sides.\n            \
                 List<String> parts = new ArrayList<>();\n            for (double x : new double[] {{w, h}}) {{\n                if (x > 0) parts.add(String.valueOf(x));\n            }}\n            \
                 return label + \"-{i}: \" + String.join(\", \", parts);\n        }}\n    }}\n\n"
            )
        },
        separator: "",
        footer: "}\n",
        broken: "    void broken( {}\n\n",
        valid_edit: ("return w * h;", "return h * w;"),
        breaking_edit: ("return w * h;", "return (w * h;"),
    },
    Sample {
        path: "src/calc.c",
        header: "/* Generated module. */\n#include <stdio.h>\n#include <string.h>\n\n",
        unit: |i| {
            format!(
                "/* Shape number {i}. */\ntypedef struct {{\n    double w, h;\n}} shape{i};\n\n\
                 static double shape{i}_area(const shape{i} *s) {{\n    if (s->w < 0 || s->h < 0) {{\n        \
                 fprintf(stderr, \"negative side in shape {i}\\n\");\n        return -1;\n    }}\n    return s->w * s->h;\n}}\n\n\
                 static int shape{i}_describe(const shape{i} *s, char *out, size_t n) {{\n    // Print the sides.\n    \
                 int written = 0;\n    for (int k = 0; k < 2; k++) {{\n        double x = k ? s->h : s->w;\n        \
                 written += snprintf(out + written, n - written, \"%g \", x);\n    }}\n    return written;\n}}\n\n"
            )
        },
        separator: "",
        footer: "",
        broken: "int broken( {}\n\n",
        valid_edit: ("return s->w * s->h;", "return s->h * s->w;"),
        breaking_edit: ("return s->w * s->h;", "return (s->w * s->h;"),
    },
    Sample {
        path: "src/calc.cpp",
        header: "// Generated module.\n#include <string>\n#include <vector>\n#include <stdexcept>\n\nnamespace calc {\n\n",
        unit: |i| {
            format!(
                "/// Shape number {i}.\ntemplate <typename T>\nclass Shape{i} {{\n public:\n  Shape{i}(T w, T h) : w_(w), h_(h) {{}}\n\n  \
                 T area() const {{\n    if (w_ < 0 || h_ < 0) {{\n      throw std::invalid_argument(\"negative side {i}\");\n    }}\n    \
                 return w_ * h_;\n  }}\n\n  std::string describe(const std::string& label) const {{\n    // Join the sides.\n    \
                 std::vector<std::string> parts;\n    for (T x : {{w_, h_}}) {{\n      if (x > 0) parts.push_back(std::to_string(x));\n    }}\n    \
                 return label + \"-{i}\";\n  }}\n\n private:\n  T w_, h_;\n}};\n\n"
            )
        },
        separator: "",
        footer: "}  // namespace calc\n",
        broken: "int broken( {}\n\n",
        valid_edit: ("return w_ * h_;", "return h_ * w_;"),
        breaking_edit: ("return w_ * h_;", "return (w_ * h_;"),
    },
    Sample {
        path: "lib/calc.rb",
        header: "# frozen_string_literal: true\n\nrequire 'json'\n\nmodule Calc\n",
        unit: |i| {
            format!(
                "  # Shape number {i}.\n  class Shape{i}\n    attr_reader :w, :h\n\n    def initialize(w, h)\n      @w = w\n      @h = h\n    end\n\n    \
                 def area\n      raise ArgumentError, \"negative side in #{{inspect}}\" if w.negative? || h.negative?\n\n      w * h\n    end\n\n    \
                 def describe(label = 'shape-{i}')\n      # Join the sides.\n      parts = [w, h].select {{ |x| x.positive? }}.map(&:to_s)\n      \
                 \"#{{label}}: #{{parts.join(', ')}}\"\n    end\n  end\n\n"
            )
        },
        separator: "",
        footer: "end\n",
        broken: "  end end\n\n",
        valid_edit: ("      w * h\n", "      h * w\n"),
        breaking_edit: ("      w * h\n", "      (w * h\n"),
    },
    Sample {
        path: "data/shapes.json",
        header: "[\n",
        unit: |i| {
            format!(
                "  {{\n    \"id\": {i},\n    \"name\": \"shape-{i}\",\n    \"sides\": [{i}.5, 2, 3],\n    \"tags\": {{\"kind\": \"box\", \"ok\": true, \"note\": null}}\n  }}"
            )
        },
        separator: ",\n",
        footer: "\n]\n",
        broken: "  {\"broken\": },\n",
        valid_edit: ("\"ok\": true", "\"ok\": false"),
        breaking_edit: ("\"ok\": true,", "\"ok\": true,,"),
    },
    Sample {
        path: "config/shapes.toml",
        header: "# Generated configuration.\ntitle = \"shapes\"\n\n",
        unit: |i| {
            format!(
                "# Shape number {i}.\n[shape{i}]\nname = \"shape-{i}\"\nsides = [{i}.5, 2, 3]\nenabled = true\n\
                 created = 1979-05-27T07:32:00Z\n\n[shape{i}.tags]\nkind = 'box'\nnote = \"\"\"\nA shape.\"\"\"\n\n"
            )
        },
        separator: "",
        footer: "",
        broken: "broken = \n",
        valid_edit: ("enabled = true", "enabled = false"),
        breaking_edit: ("enabled = true", "enabled = "),
    },
];

/// Generates each sample at about `lines` lines and times the guard `runs` times on each case:
/// the first edit of a file (full parses, as [`guard`]) that keeps it parsing and one that breaks
/// it, and a later one-line edit of a file a [`GuardCache`] already holds that keeps it parsing
/// and one that breaks it; prints a table of the figures against [`BUDGET`].
pub fn run(lines: usize, runs: usize, out: &mut dyn Write) -> io::Result<()> {
    let runs = runs.max(1);
    writeln!(
        out,
        "edit guard: generated files of ~{lines} lines, {runs} runs each; budget {} ms per edit, \
         judged on p95; times in ms",
        BUDGET.as_millis()
    )?;
    let case = |name: &str| format!("{name:>8} {:>7} {:>6}", "p95", "budget");
    writeln!(
        out,
        "{:<28}| {:<49} | later edit: the file is in the GuardCache",
        "", "first edit of a file: full parses"
    )?;
    writeln!(
        out,
        "{:<11} {:>6} {:>8} | {} | {} | {} | {}",
        "language",
        "lines",
        "bytes",
        case("valid"),
        case("broken"),
        case("valid"),
        case("broken"),
    )?;
    for sample in &SAMPLES {
        let files = generate(sample, lines)?;
        let lang = Language::for_path(sample.path).map_or("?", Language::name);
        let path = sample.path;
        let Files {
            valid,
            broken,
            edited,
            broken_edit,
        } = &files;
        if guard(path, Some(valid), valid).is_some() || guard(path, Some(valid), edited).is_some() {
            return Err(io::Error::other(format!(
                "the generated {lang} file does not parse"
            )));
        }
        if guard(path, Some(valid), broken).is_none()
            || guard(path, Some(valid), broken_edit).is_none()
        {
            return Err(io::Error::other(format!("the broken {lang} file parses")));
        }
        let first_ok = time(runs, || guard(path, Some(valid), valid));
        let first_bad = time(runs, || guard(path, Some(valid), broken));

        let mut cache = GuardCache::default();
        cache.guard(path, None, valid);
        // Back and forth between the file and its edited twin: each call edits one line.
        let mut from_valid = true;
        let later_ok = time_each(runs, || {
            let (before, after) = if from_valid {
                (valid, edited)
            } else {
                (edited, valid)
            };
            from_valid = !from_valid;
            let started = Instant::now();
            let message = cache.guard(path, Some(before), after);
            (message, started.elapsed())
        });
        if later_ok.2.iter().any(Option::is_some) {
            return Err(io::Error::other(format!(
                "the cache reported a valid edit of the {lang} file"
            )));
        }
        if from_valid {
            cache.guard(path, Some(valid), edited);
        }
        cache.guard(path, Some(edited), valid);
        let later_bad = time_each(runs, || {
            let started = Instant::now();
            let message = cache.guard(path, Some(valid), broken_edit);
            let took = started.elapsed();
            // Fixed again (not timed), so the next run breaks a parsing file too.
            cache.guard(path, Some(broken_edit), valid);
            (message, took)
        });
        let expected = guard(path, Some(valid), broken_edit);
        // The same verdict (and file, and reason); where the first error is placed may differ.
        let file_of = |m: &Option<String>| {
            m.as_ref()
                .map(|m| m.split(": syntax error").next().map(str::to_string))
        };
        if later_bad
            .2
            .iter()
            .any(|message| message.is_none() || file_of(message) != file_of(&expected))
        {
            return Err(io::Error::other(format!(
                "the cache did not answer as the guard on the breaking edit of the {lang} file"
            )));
        }
        let cell = |(median, p95): (Duration, Duration)| {
            let verdict = if p95 < BUDGET { "under" } else { "OVER" };
            format!("{:>8.3} {:>7.3} {verdict:>6}", ms(median), ms(p95))
        };
        writeln!(
            out,
            "{:<11} {:>6} {:>8} | {} | {} | {} | {}",
            lang,
            valid.iter().filter(|&&b| b == b'\n').count(),
            valid.len(),
            cell(first_ok),
            cell(first_bad),
            cell((later_ok.0, later_ok.1)),
            cell((later_bad.0, later_bad.1)),
        )?;
    }
    for note in [
        "first valid:  the first edit of a file the task never read nor edited (nothing cached; Bosun",
        "              keeps a file's tree when the model reads it), leaving it parsing: one full parse.",
        "first broken: the first edit, breaking a parsing file: two full parses (after, then before).",
        "later valid:  a one-line change in the middle of a file the GuardCache holds (read or",
        "              edited before), still parsing: one incremental parse from the cached tree.",
        "later broken: the same, breaking it: one incremental parse (the cached tree parsed, so",
        "              the error is real; a tree that was broken already is parsed again in full);",
        "              whether it parsed before is remembered, not parsed again.",
        "median and p95 per case; under/OVER judge the p95 against the budget.",
    ] {
        writeln!(out, "{note}")?;
    }
    Ok(())
}

/// A generated file and its edited twins.
struct Files {
    valid: Vec<u8>,
    /// With `broken` inserted between two units in the middle.
    broken: Vec<u8>,
    /// With `valid_edit` made in the middle unit.
    edited: Vec<u8>,
    /// With `breaking_edit` made in the middle unit.
    broken_edit: Vec<u8>,
}

fn generate(sample: &Sample, lines: usize) -> io::Result<Files> {
    let mut units = Vec::new();
    let mut count = sample.header.lines().count() + sample.footer.lines().count();
    while count < lines || units.is_empty() {
        let unit = (sample.unit)(units.len());
        count += unit.lines().count();
        units.push(unit);
    }
    let middle = units.len() / 2;
    let replace = |(from, to): (&str, &str)| {
        let unit = &units[middle];
        match unit.find(from) {
            Some(at) => Ok(format!("{}{to}{}", &unit[..at], &unit[at + from.len()..])),
            None => Err(io::Error::other(format!(
                "{}: the edit's text {from:?} is not in its unit",
                sample.path
            ))),
        }
    };
    let edited_unit = replace(sample.valid_edit)?;
    let broken_unit = replace(sample.breaking_edit)?;
    let mut files = [(); 4].map(|()| String::from(sample.header));
    for (i, unit) in units.iter().enumerate() {
        if i > 0 {
            for file in &mut files {
                file.push_str(sample.separator);
            }
        }
        if i == middle {
            files[1].push_str(sample.broken);
            files[0].push_str(unit);
            files[1].push_str(unit);
            files[2].push_str(&edited_unit);
            files[3].push_str(&broken_unit);
        } else {
            for file in &mut files {
                file.push_str(unit);
            }
        }
    }
    let [valid, broken, edited, broken_edit] = files.map(|mut file| {
        file.push_str(sample.footer);
        file.into_bytes()
    });
    Ok(Files {
        valid,
        broken,
        edited,
        broken_edit,
    })
}

/// Median and 95th percentile of `runs` calls.
fn time<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, Duration) {
    let (median, p95, _) = time_each(runs, || {
        let started = Instant::now();
        let value = std::hint::black_box(f());
        (value, started.elapsed())
    });
    (median, p95)
}

/// Median and 95th percentile of the times `runs` calls report, and what they answered.
fn time_each<T>(runs: usize, mut f: impl FnMut() -> (T, Duration)) -> (Duration, Duration, Vec<T>) {
    let (values, mut times): (Vec<T>, Vec<Duration>) = (0..runs).map(|_| f()).unzip();
    times.sort();
    let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.95), values)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_sample_parses_and_its_broken_twin_does_not() {
        let mut out = Vec::new();
        assert!(
            run(60, 1, &mut out).is_ok(),
            "{}",
            String::from_utf8_lossy(&out)
        );
        let text = String::from_utf8_lossy(&out);
        for lang in Language::ALL {
            if lang != Language::Tsx {
                assert!(
                    text.contains(&format!("\n{:<11} ", lang.name())),
                    "{lang}:\n{text}"
                );
            }
        }
    }
}
