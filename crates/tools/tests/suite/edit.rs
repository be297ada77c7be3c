//! edit_file.
use super::common::Worktree;
use bosun_tools::Touched;
use pretty_assertions::assert_eq;
use serde_json::json;

#[tokio::test]
async fn edit_replaces_a_unique_string() {
    let wt = Worktree::new(&[("src/lib.rs", "fn a() {\n    1\n}\n")]);
    let out = wt
        .ok(
            "edit_file",
            json!({"path": "src/lib.rs", "old_string": "    1\n", "new_string": "    2\n"}),
        )
        .await;
    assert_eq!(out.content, "Edited `src/lib.rs`: replaced 1 occurrence.");
    assert_eq!(out.touched, Touched::Paths(vec!["src/lib.rs".into()]));
    assert_eq!(wt.read("src/lib.rs"), "fn a() {\n    2\n}\n");
}

#[tokio::test]
async fn edit_refuses_missing_and_ambiguous_strings() {
    let wt = Worktree::new(&[("f.rs", "let x = 1;\nlet y = 1;\nlet z = 1;\n")]);
    let err = wt
        .model_error(
            "edit_file",
            json!({"path": "f.rs", "old_string": "= 1;", "new_string": "= 2;"}),
        )
        .await;
    assert_eq!(
        err,
        "old_string was found 3 times in `f.rs`; add surrounding context to make it unique, or set replace_all"
    );
    let err = wt
        .model_error(
            "edit_file",
            json!({"path": "f.rs", "old_string": "let y = 10;", "new_string": "let y = 2;"}),
        )
        .await;
    assert!(
        err.starts_with("old_string was not found in `f.rs`"),
        "{err}"
    );
    assert!(
        err.contains("     2\tlet y = 1;"),
        "closest lines shown: {err}"
    );
    assert_eq!(
        wt.read("f.rs"),
        "let x = 1;\nlet y = 1;\nlet z = 1;\n",
        "file untouched"
    );

    let out = wt
        .ok("edit_file", json!({"path": "f.rs", "old_string": "= 1;", "new_string": "= 2;", "replace_all": true}))
        .await;
    assert_eq!(out.content, "Edited `f.rs`: replaced 3 occurrences.");
    assert_eq!(wt.read("f.rs"), "let x = 2;\nlet y = 2;\nlet z = 2;\n");
}

#[tokio::test]
async fn edit_keeps_crlf_line_endings() {
    let wt = Worktree::new(&[("win.txt", "alpha\r\nbeta\r\ngamma\r\n")]);
    wt.ok(
        "edit_file",
        json!({"path": "win.txt", "old_string": "alpha\nbeta\n", "new_string": "alpha\nBETA\nextra\n"}),
    )
    .await;
    assert_eq!(wt.read("win.txt"), "alpha\r\nBETA\r\nextra\r\ngamma\r\n");
}

#[tokio::test]
async fn edit_refuses_binary_non_utf8_and_missing_files() {
    let wt = Worktree::new(&[]);
    std::fs::write(wt.path().join("latin1.txt"), b"caf\xe9\n").unwrap();
    std::fs::write(wt.path().join("blob.bin"), b"ab\0cd").unwrap();
    let args = |p: &str| json!({"path": p, "old_string": "caf", "new_string": "tea"});
    let err = wt.model_error("edit_file", args("latin1.txt")).await;
    assert!(err.contains("not valid UTF-8"), "{err}");
    assert_eq!(
        std::fs::read(wt.path().join("latin1.txt")).unwrap(),
        b"caf\xe9\n"
    );
    let err = wt.model_error("edit_file", args("blob.bin")).await;
    assert!(err.contains("binary"), "{err}");
    let err = wt.model_error("edit_file", args("missing.txt")).await;
    assert!(err.contains("`missing.txt` does not exist"), "{err}");
}

#[tokio::test]
async fn edit_matches_ignoring_trailing_whitespace_when_the_match_is_unique() {
    let wt = Worktree::new(&[("a.py", "def f():   \n    return 1\t\n\nprint(f())")]);
    let out = wt
        .ok(
            "edit_file",
            json!({"path": "a.py", "old_string": "def f():\n    return 1\n", "new_string": "def f():\n    return 2\n"}),
        )
        .await;
    assert_eq!(
        out.content,
        "Edited `a.py`: replaced 1 occurrence at line 1 (matched ignoring trailing whitespace)."
    );
    assert_eq!(wt.read("a.py"), "def f():\n    return 2\n\nprint(f())");

    // The last line of a file without its newline.
    wt.ok(
        "edit_file",
        json!({"path": "a.py", "old_string": "print(f())\n", "new_string": "print(f() + 1)\n"}),
    )
    .await;
    assert_eq!(wt.read("a.py"), "def f():\n    return 2\n\nprint(f() + 1)");
}

#[tokio::test]
async fn edit_matches_a_uniform_indentation_shift_and_reindents_the_replacement() {
    let file =
        "class A:\n    def f(self):\n        if x:\n            return 1\n\n        return 0\n";
    let wt = Worktree::new(&[("a.py", file), ("win.py", &file.replace('\n', "\r\n"))]);
    let args = |path: &str| {
        json!({
            "path": path,
            "old_string": "def f(self):\n    if x:\n        return 1\n\n    return 0\n",
            "new_string": "def f(self):\n    if x:\n        return 2\n    return 0\n",
        })
    };
    let out = wt.ok("edit_file", args("a.py")).await;
    assert_eq!(
        out.content,
        "Edited `a.py`: replaced 1 occurrence at line 2 (matched with the indentation shifted; the new text was re-indented the same way)."
    );
    assert_eq!(
        wt.read("a.py"),
        "class A:\n    def f(self):\n        if x:\n            return 2\n        return 0\n"
    );
    // CRLF files keep their endings.
    wt.ok("edit_file", args("win.py")).await;
    assert_eq!(
        wt.read("win.py"),
        "class A:\r\n    def f(self):\r\n        if x:\r\n            return 2\r\n        return 0\r\n"
    );
}

#[tokio::test]
async fn a_loose_match_in_several_places_is_refused_with_the_count() {
    let file = "def a():\n    x = 1  \n    y = 2\n\ndef b():\n    x = 1\n    y = 2 \n";
    let wt = Worktree::new(&[("a.py", file), ("b.py", "if a:\n  go()\nif b:\n  go()\n")]);
    let err = wt
        .model_error(
            "edit_file",
            json!({"path": "a.py", "old_string": "    x = 1\n    y = 2\n", "new_string": "    x = 3\n"}),
        )
        .await;
    assert_eq!(
        err,
        "old_string was not found exactly in `a.py`; ignoring trailing whitespace, it matches 2 places (lines 2, 6); add surrounding lines to make it unique, copied exactly"
    );
    assert_eq!(wt.read("a.py"), file, "file untouched");

    let err = wt
        .model_error(
            "edit_file",
            json!({"path": "b.py", "old_string": "    go()\n", "new_string": "    stop()\n"}),
        )
        .await;
    assert!(
        err.contains("with the indentation shifted, it matches 2 places (lines 2, 4)"),
        "{err}"
    );
    assert_eq!(wt.read("b.py"), "if a:\n  go()\nif b:\n  go()\n");
}

#[tokio::test]
async fn a_different_text_or_a_partial_line_is_never_matched_loosely() {
    let wt = Worktree::new(&[("a.py", "    total = compute(1, 2)\n")]);
    // Other words: not found, with the closest lines.
    let err = wt
        .model_error(
            "edit_file",
            json!({"path": "a.py", "old_string": "total = compute(1, 3)\n", "new_string": "x\n"}),
        )
        .await;
    assert!(
        err.starts_with("old_string was not found in `a.py`"),
        "{err}"
    );
    assert!(err.contains("     1\t    total = compute(1, 2)"), "{err}");
    // Part of a line with its spacing wrong: not a whole line, so not found.
    let err = wt
        .model_error(
            "edit_file",
            json!({"path": "a.py", "old_string": "compute(1,  2)", "new_string": "compute(2, 2)"}),
        )
        .await;
    assert!(
        err.starts_with("old_string was not found in `a.py`"),
        "{err}"
    );
    assert_eq!(wt.read("a.py"), "    total = compute(1, 2)\n");
}
