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
