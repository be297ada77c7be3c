//! The edit guard's messages: it speaks only when an edit broke a file that parsed, or a new file
//! does not parse.

use bosun_syntax::{GuardCache, guard};
use pretty_assertions::assert_eq;

const GOOD_PY: &[u8] = b"def area(w, h):\n    return w * h\n";
const BAD_PY: &[u8] = b"def area(w, h):\n    return (w * h))\n";

#[test]
fn an_edit_that_breaks_a_parsing_file_is_reported() {
    assert_eq!(
        guard("src/calc.py", Some(GOOD_PY), BAD_PY).as_deref(),
        Some(
            "src/calc.py: syntax error at line 2, column 19 (unexpected `)`); \
             the file parsed before this edit"
        )
    );
}

#[test]
fn a_valid_edit_says_nothing() {
    assert_eq!(guard("src/calc.py", Some(GOOD_PY), GOOD_PY), None);
    assert_eq!(guard("src/calc.py", Some(BAD_PY), GOOD_PY), None);
    assert_eq!(guard("src/calc.py", None, GOOD_PY), None);
}

#[test]
fn an_already_broken_file_says_nothing() {
    let other_break = b"def area(w, h:\n    return w * h\n";
    assert_eq!(guard("src/calc.py", Some(other_break), BAD_PY), None);
}

#[test]
fn a_new_file_that_does_not_parse_is_reported_as_new() {
    assert_eq!(
        guard("lib/a.rb", None, b"class A\n  def x\n    1\n  end\n").as_deref(),
        Some(
            "lib/a.rb: syntax error at line 1, column 1 (unexpected end of file); the file is new"
        )
    );
}

#[test]
fn each_language_is_guarded_by_its_path() {
    let cases: [(&str, &str, &str, &str); 11] = [
        (
            "src/main.rs",
            "fn f() {}\n",
            "fn f() {\n",
            "line 1, column 1 (unexpected end of file)",
        ),
        (
            "web/a.ts",
            "let x: number = 1;\n",
            "let x: number = ;\n",
            "line 1, column 15 (unexpected `=`)",
        ),
        (
            "web/A.tsx",
            "const A = <div>{x}</div>;\n",
            "const A = <div>{x</div>;\n",
            "line 1, column 1 (unexpected end of file)",
        ),
        (
            "web/a.js",
            "f(1, 2);\n",
            "f(1, 2;\n",
            "line 1, column 7 (missing `)`)",
        ),
        (
            "cmd/main.go",
            "package main\n",
            "package main\nfunc f( {}\n",
            "line 2, column 8 (missing `)`)",
        ),
        (
            "A.java",
            "class A {}\n",
            "class A { int x }\n",
            "line 1, column 16 (missing `;`)",
        ),
        (
            "a.c",
            "int x;\n",
            "int x\n",
            "line 1, column 6 (missing `;`)",
        ),
        (
            "a.hpp",
            "struct A {};\n",
            "struct A {}\n",
            "line 1, column 12 (missing `;`)",
        ),
        (
            "package.json",
            "{\"a\": 1}\n",
            "{\"a\": 1,}\n",
            "line 1, column 8 (unexpected `,`)",
        ),
        (
            "Cargo.toml",
            "[a]\nb = 1\n",
            "[a]\nb = \n",
            "line 2, column 1 (unexpected end of file)",
        ),
        (
            "Gemfile",
            "gem 'x'\n",
            "group :test do\n  gem 'x'\n",
            "line 1, column 13 (unexpected end of file)",
        ),
    ];
    let mut cache = GuardCache::default();
    for (path, before, after, at) in cases {
        let (before, after) = (before.as_bytes(), after.as_bytes());
        let message = Some(format!(
            "{path}: syntax error at {at}; the file parsed before this edit"
        ));
        assert_eq!(guard(path, Some(before), after), message, "{path}");
        // The cache answers the same: first from full parses, then from the tree it kept.
        assert_eq!(cache.guard(path, Some(before), after), message, "{path}");
        assert_eq!(cache.guard(path, Some(after), before), None, "{path}");
        assert_eq!(cache.guard(path, Some(before), after), message, "{path}");
    }
}

#[test]
fn a_language_bosun_does_not_parse_says_nothing() {
    assert_eq!(guard("README.md", Some(b"# hi\n"), b"# hi (\n"), None);
    assert_eq!(guard("Makefile", None, b"all: (\n"), None);
}

#[test]
fn json_with_comments_is_not_held_to_strict_json() {
    let before = b"{\n  // strict mode\n  \"strict\": true\n}\n";
    let after = b"{\n  // strict mode\n  \"strict\": true,\n}\n";
    assert_eq!(guard("tsconfig.json", Some(before), after), None);
    assert_eq!(guard(".vscode/settings.json", Some(before), after), None);
    assert!(guard("data.json", Some(before), after).is_some());
}
