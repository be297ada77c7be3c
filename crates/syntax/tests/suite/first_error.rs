//! The first syntax error of real broken code, per language, at its exact line and column.

use bosun_syntax::{Language, Problem, SyntaxError, first_error};
use pretty_assertions::assert_eq;

fn error(lang: Language, source: &str) -> String {
    match first_error(lang, source.as_bytes()) {
        Some(e) => e.to_string(),
        None => "parses".to_string(),
    }
}

#[test]
fn python() {
    use Language::Python;
    assert_eq!(error(Python, "def f(x):\n    return x + 1\n"), "parses");
    assert_eq!(
        error(Python, "def f(:\n    pass\n"),
        "syntax error at line 1, column 7 (missing `)`)"
    );
    assert_eq!(
        error(Python, "x = 1\nprint(x\n"),
        "syntax error at line 2, column 1 (unexpected end of file)"
    );
    assert_eq!(
        error(Python, "def g():\n    return (1 +\n"),
        "syntax error at line 2, column 5 (unexpected end of file)"
    );
}

#[test]
fn columns_count_characters_not_bytes() {
    assert_eq!(
        first_error(Language::Python, "s = 'héllo' + )\nt = 1\n".as_bytes()),
        Some(SyntaxError {
            line: 1,
            column: 15,
            problem: Problem::Unexpected(")".into())
        })
    );
    assert_eq!(
        error(Language::Rust, "fn main() {\n    let é = \"ü\"\n}\n"),
        "syntax error at line 2, column 16 (missing `;`)"
    );
}

#[test]
fn rust() {
    use Language::Rust;
    assert_eq!(error(Rust, "fn main() {\n    let x = 1;\n}\n"), "parses");
    assert_eq!(
        error(Rust, "fn main() {\n    let x = 1;\n"),
        "syntax error at line 1, column 1 (unexpected end of file)"
    );
    assert_eq!(
        error(Rust, "fn main() {\n    let x = 1\n    let y = 2;\n}\n"),
        "syntax error at line 2, column 14 (missing `;`)"
    );
    assert_eq!(
        error(Rust, "fn main() {\n    foo(1, 2;\n}\n"),
        "syntax error at line 2, column 13 (missing `)`)"
    );
}

#[test]
fn json() {
    use Language::Json;
    assert_eq!(
        error(Json, "{\n  \"a\": [1, 2],\n  \"b\": null\n}\n"),
        "parses"
    );
    assert_eq!(
        error(Json, "{\n  \"a\": 1,\n}\n"),
        "syntax error at line 2, column 9 (unexpected `,`)"
    );
}

#[test]
fn toml() {
    use Language::Toml;
    assert_eq!(error(Toml, "[package]\nname = \"x\"\n"), "parses");
    assert_eq!(
        error(Toml, "[package]\nname = \n"),
        "syntax error at line 2, column 1 (unexpected end of file)"
    );
    assert_eq!(
        error(Toml, "[package]\nname = \"x\"\nversion = \n[deps]\n"),
        "syntax error at line 3, column 1 (unexpected `version`)"
    );
}

#[test]
fn go() {
    use Language::Go;
    assert_eq!(
        error(
            Go,
            "package main\n\nfunc main() {\n\tfmt.Println(\"hi\")\n}\n"
        ),
        "parses"
    );
    assert_eq!(
        error(
            Go,
            "package main\n\nfunc main() {\n\tfmt.Println(\"hi\"\n}\n"
        ),
        "syntax error at line 4, column 18 (missing `)`)"
    );
}

#[test]
fn java() {
    use Language::Java;
    assert_eq!(
        error(Java, "class A {\n  void f() {\n    int x = 1;\n  }\n}\n"),
        "parses"
    );
    assert_eq!(
        error(Java, "class A {\n  void f() {\n    int x = 1\n  }\n}\n"),
        "syntax error at line 3, column 14 (missing `;`)"
    );
}

#[test]
fn c() {
    use Language::C;
    assert_eq!(error(C, "int main(void) {\n  return 0;\n}\n"), "parses");
    assert_eq!(
        error(C, "int main(void) {\n  return 0\n}\n"),
        "syntax error at line 2, column 11 (missing `;`)"
    );
}

#[test]
fn cpp() {
    use Language::Cpp;
    assert_eq!(
        error(Cpp, "template <class T>\nclass A {\n public:\n  T x;\n};\n"),
        "parses"
    );
    assert_eq!(
        error(Cpp, "class A {\n public:\n  int x\n};\n"),
        "syntax error at line 3, column 8 (missing `;`)"
    );
}

#[test]
fn ruby() {
    use Language::Ruby;
    assert_eq!(error(Ruby, "def x\n  1\nend\n"), "parses");
    assert_eq!(
        error(Ruby, "def x\n  1\n"),
        "syntax error at line 1, column 1 (unexpected end of file)"
    );
    assert_eq!(
        error(Ruby, "class A\n  def x\n    1\n  end\n"),
        "syntax error at line 1, column 1 (unexpected end of file)"
    );
}

#[test]
fn typescript() {
    use Language::TypeScript;
    assert_eq!(
        error(
            TypeScript,
            "function f(a: number): number {\n  return a;\n}\n"
        ),
        "parses"
    );
    assert_eq!(
        error(TypeScript, "function f(a: number {\n  return a;\n}\n"),
        "syntax error at line 1, column 21 (missing `)`)"
    );
    assert_eq!(
        error(TypeScript, "const x: number = ;\nexport {};\n"),
        "syntax error at line 1, column 17 (unexpected `=`)"
    );
}

#[test]
fn tsx() {
    use Language::Tsx;
    assert_eq!(error(Tsx, "const A = () => <div>{x}</div>;\n"), "parses");
    assert_eq!(
        error(Tsx, "const A = () => <div>{x</div>;\n"),
        "syntax error at line 1, column 1 (unexpected end of file)"
    );
}

#[test]
fn javascript() {
    use Language::JavaScript;
    assert_eq!(
        error(JavaScript, "const A = () => <b>{x}</b>;\n"),
        "parses",
        "JSX is JavaScript"
    );
    assert_eq!(
        error(JavaScript, "const a = [1, 2;\n"),
        "syntax error at line 1, column 16 (missing `]`)"
    );
    assert_eq!(
        error(JavaScript, "function f() {\n  if (x) {\n    y();\n}\n"),
        "syntax error at line 4, column 2 (missing `}`)"
    );
}

#[test]
fn bytes_that_are_not_utf8_are_parsed_without_panicking() {
    let source = b"def f():\n    return '\xff\xfe'\n";
    assert_eq!(first_error(Language::Python, source), None);
    let broken = b"\xff\xfe = (\n";
    for lang in Language::ALL {
        let _ = first_error(lang, broken);
    }
    assert_eq!(
        first_error(Language::Rust, b"fn \xc3\xa9\xff() {\n  let x = 1\n}\n")
            .map(|e| (e.line, e.column)),
        Some((1, 5))
    );
}

#[test]
fn a_file_over_the_limit_is_not_parsed() {
    let mut huge = "x = (\n"
        .repeat(bosun_syntax::MAX_BYTES / 6 + 1)
        .into_bytes();
    huge.truncate(bosun_syntax::MAX_BYTES + 1);
    let started = std::time::Instant::now();
    assert_eq!(first_error(Language::Python, &huge), None);
    assert!(started.elapsed() < std::time::Duration::from_millis(50));
}
