//! `bosun bench guard`: the edit guard's cost on generated files of realistic code, per language.
//! A benchmark prints figures; nothing here asserts a time.

use crate::{Language, guard};
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
    },
];

/// Generates each sample at about `lines` lines, runs the guard on a valid edit (one parse) and on
/// an edit that breaks it (two parses) `runs` times each, and prints a table of the figures
/// against [`BUDGET`].
pub fn run(lines: usize, runs: usize, out: &mut dyn Write) -> io::Result<()> {
    let runs = runs.max(1);
    writeln!(
        out,
        "edit guard: generated files of ~{lines} lines, {runs} runs each; budget {} ms per edit",
        BUDGET.as_millis()
    )?;
    writeln!(
        out,
        "{:<11} {:>6} {:>8} | {:>13} {:>9} {:>6} | {:>14} {:>9} {:>6}",
        "language",
        "lines",
        "bytes",
        "valid median",
        "p95",
        "budget",
        "broken median",
        "p95",
        "budget"
    )?;
    for sample in &SAMPLES {
        let (valid, broken) = generate(sample, lines);
        let lang = Language::for_path(sample.path).map_or("?", Language::name);
        if guard(sample.path, Some(&valid), &valid).is_some() {
            return Err(io::Error::other(format!(
                "the generated {lang} file does not parse"
            )));
        }
        if guard(sample.path, Some(&valid), &broken).is_none() {
            return Err(io::Error::other(format!("the broken {lang} file parses")));
        }
        let ok = time(runs, || guard(sample.path, Some(&valid), &valid));
        let bad = time(runs, || guard(sample.path, Some(&valid), &broken));
        let under = |d: Duration| if d < BUDGET { "under" } else { "OVER" };
        writeln!(
            out,
            "{:<11} {:>6} {:>8} | {:>10.3} ms {:>6.3} ms {:>6} | {:>11.3} ms {:>6.3} ms {:>6}",
            lang,
            valid.iter().filter(|&&b| b == b'\n').count(),
            valid.len(),
            ms(ok.0),
            ms(ok.1),
            under(ok.1),
            ms(bad.0),
            ms(bad.1),
            under(bad.1),
        )?;
    }
    writeln!(
        out,
        "(valid: the edit keeps the file parsing, one parse; broken: it breaks a parsing file, two parses; \
         budget is judged on p95)"
    )?;
    Ok(())
}

/// The valid file, and the same file with `broken` inserted between two units in the middle.
fn generate(sample: &Sample, lines: usize) -> (Vec<u8>, Vec<u8>) {
    let mut units = Vec::new();
    let mut count = sample.header.lines().count() + sample.footer.lines().count();
    while count < lines || units.is_empty() {
        let unit = (sample.unit)(units.len());
        count += unit.lines().count();
        units.push(unit);
    }
    let middle = units.len() / 2;
    let mut valid = String::from(sample.header);
    let mut broken = String::from(sample.header);
    for (i, unit) in units.iter().enumerate() {
        if i > 0 {
            valid.push_str(sample.separator);
            broken.push_str(sample.separator);
        }
        if i == middle {
            broken.push_str(sample.broken);
        }
        valid.push_str(unit);
        broken.push_str(unit);
    }
    valid.push_str(sample.footer);
    broken.push_str(sample.footer);
    (valid.into_bytes(), broken.into_bytes())
}

/// Median and 95th percentile of `runs` calls.
fn time<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, Duration) {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let started = Instant::now();
            std::hint::black_box(f());
            started.elapsed()
        })
        .collect();
    times.sort();
    let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.95))
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
