//! read_file, list_dir, write_file and confinement (search: search.rs).
use super::common::Worktree;
use bosun_protocol::ToolAction;
use bosun_tools::{Touched, resolve_in_worktree};
use pretty_assertions::assert_eq;
use serde_json::json;

#[tokio::test]
async fn read_file_numbers_lines_and_pages() {
    let long: String = (1..=2500).map(|i| format!("line {i}\n")).collect();
    let wt = Worktree::new(&[("a.txt", "one\ntwo\nthree\n"), ("long.txt", &long)]);
    let out = wt.ok("read_file", json!({"path": "a.txt"})).await;
    assert_eq!(out.content, "     1\tone\n     2\ttwo\n     3\tthree\n");
    assert_eq!(out.touched, Touched::Nothing);

    let out = wt
        .ok(
            "read_file",
            json!({"path": "a.txt", "offset": 2, "limit": 1}),
        )
        .await;
    assert_eq!(
        out.content,
        "     2\ttwo\n[Showing lines 2-2 of 3. To read on, call read_file with offset=3.]\n"
    );

    let out = wt
        .ok("read_file", json!({"path": "long.txt", "offset": 1}))
        .await;
    assert!(out.content.contains("  2000\tline 2000\n"));
    assert!(!out.content.contains("line 2001\n"));
    assert!(out.content.ends_with(
        "[Showing lines 1-2000 of 2500. To read on, call read_file with offset=2001.]\n"
    ));

    let err = wt
        .model_error("read_file", json!({"path": "a.txt", "offset": 9}))
        .await;
    assert!(err.contains("has 3 lines"), "{err}");
}

/// A file over 400 lines or 32 KB, read without a range, comes as its outline and first lines.
#[tokio::test]
async fn a_big_file_read_without_a_range_is_its_outline_and_first_lines() {
    let mut big = String::from("import os\n\n\nclass Store:\n");
    for i in 0..150 {
        big.push_str(&format!("    def get_{i}(self):\n        return {i}\n\n"));
    }
    big.push_str("\ndef main():\n    return Store()\n");
    let short: String = (1..=400).map(|i| format!("x{i} = {i}\n")).collect();
    let notes: String = (1..=401).map(|i| format!("note {i}\n")).collect();
    let wt = Worktree::new(&[
        ("store.py", &big),
        ("short.py", &short),
        ("notes.txt", &notes),
    ]);
    let out = wt.ok("read_file", json!({"path": "store.py"})).await;
    let c = &out.content;
    assert!(c.starts_with("`store.py` has 457 lines ("), "{c}");
    assert!(
        c.contains("Its outline (152 definitions, as `line│ signature`):\n"),
        "{c}"
    );
    assert!(
        c.contains("    4│ class Store:\n    5│     def get_0(self):\n"),
        "{c}"
    );
    assert!(c.contains("  456│ def main():\n"), "{c}");
    assert!(c.contains("    60\t"), "{c}");
    assert!(!c.contains("    61\t"), "{c}");
    assert!(
        c.contains("call read_file with offset and limit: offset=61 limit=200"),
        "{c}"
    );
    // A range is read as asked.
    let out = wt
        .ok(
            "read_file",
            json!({"path": "store.py", "offset": 456, "limit": 1}),
        )
        .await;
    assert!(
        out.content.starts_with("   456\tdef main():\n"),
        "{}",
        out.content
    );
    // 400 lines is not over the line limit; a text file without definitions has no outline.
    let out = wt.ok("read_file", json!({"path": "short.py"})).await;
    assert!(
        out.content.starts_with("     1\tx1 = 1\n"),
        "{}",
        out.content
    );
    let out = wt.ok("read_file", json!({"path": "notes.txt"})).await;
    assert!(out.content.contains("It has no outline"), "{}", out.content);
    assert!(out.content.contains("    60\tnote 60\n"), "{}", out.content);
}

#[tokio::test]
async fn read_file_caps_bytes_and_reports_binary_non_utf8_and_missing() {
    let wide: String = (1..=400).map(|i| format!("{i:0>500}\n")).collect();
    let wt = Worktree::new(&[("wide.txt", &wide)]);
    std::fs::write(wt.path().join("blob.bin"), [0u8, 1, 2, 3, 255, 0, 7]).unwrap();
    std::fs::write(wt.path().join("latin1.txt"), b"caf\xe9\n").unwrap();

    let out = wt
        .ok("read_file", json!({"path": "wide.txt", "limit": 2000}))
        .await;
    assert!(
        out.content.len() < 110 * 1024,
        "{} bytes",
        out.content.len()
    );
    assert!(
        out.content
            .contains("To read on, call read_file with offset=")
    );

    let out = wt.ok("read_file", json!({"path": "blob.bin"})).await;
    assert_eq!(
        out.content,
        "`blob.bin` is a binary file (7 bytes); its contents are not shown."
    );

    let out = wt.ok("read_file", json!({"path": "latin1.txt"})).await;
    assert!(
        out.content.starts_with("     1\tcaf\u{fffd}\n"),
        "{}",
        out.content
    );
    assert!(out.content.contains("not valid UTF-8"));

    let err = wt
        .model_error("read_file", json!({"path": "nope/missing.rs"}))
        .await;
    assert!(err.contains("`nope/missing.rs` does not exist"), "{err}");
    let err = wt
        .model_error("read_file", json!({"path": "wide.txt", "bogus": 1}))
        .await;
    assert!(err.contains("invalid arguments for read_file"), "{err}");
}

#[tokio::test]
async fn paths_outside_the_worktree_are_refused() {
    let wt = Worktree::new(&[("inside.txt", "ok\n")]);
    std::os::unix::fs::symlink("/etc", wt.path().join("etc_link")).unwrap();
    std::os::unix::fs::symlink("/etc/hostname", wt.path().join("host")).unwrap();
    std::os::unix::fs::symlink("inside.txt", wt.path().join("alias.txt")).unwrap();

    for path in [
        "../outside.txt",
        "sub/../../x",
        "/etc/passwd",
        "etc_link/passwd",
        "host",
    ] {
        let err = wt.model_error("read_file", json!({"path": path})).await;
        assert!(
            err.contains("must stay inside the task's worktree"),
            "{path}: {err}"
        );
    }
    for path in ["etc_link/new.txt", "host", "../x"] {
        let err = wt
            .model_error("write_file", json!({"path": path, "content": "x"}))
            .await;
        assert!(
            err.contains("must stay inside the task's worktree"),
            "{path}: {err}"
        );
    }
    assert!(wt.action("read_file", json!({"path": "../x"})).is_err());
    // A dangling symlink pointing outside cannot be used to create a file there.
    let target = tempfile::tempdir().unwrap();
    let evil = target.path().join("evil.txt");
    std::os::unix::fs::symlink(&evil, wt.path().join("dangling")).unwrap();
    let err = wt
        .model_error("write_file", json!({"path": "dangling", "content": "x"}))
        .await;
    assert!(
        err.contains("must stay inside the task's worktree"),
        "{err}"
    );
    assert!(!evil.exists());
    // Writing through a symlink that stays inside reports the file that really changed.
    let out = wt
        .ok(
            "write_file",
            json!({"path": "alias.txt", "content": "ok\n"}),
        )
        .await;
    assert_eq!(out.touched, Touched::Paths(vec!["inside.txt".into()]));
    // A symlink that stays inside is fine.
    assert_eq!(
        wt.ok("read_file", json!({"path": "alias.txt"}))
            .await
            .content,
        "     1\tok\n"
    );
    let canonical = wt.path().canonicalize().unwrap();
    assert_eq!(
        resolve_in_worktree(wt.path(), "./a/../inside.txt").unwrap(),
        canonical.join("inside.txt")
    );
}

#[tokio::test]
async fn write_file_creates_parents_and_refuses_git_internals() {
    let wt = Worktree::new(&[(".git/HEAD", "ref: refs/heads/main\n")]);
    let out = wt
        .ok(
            "write_file",
            json!({"path": "src/deep/new.rs", "content": "fn x() {}\n"}),
        )
        .await;
    assert_eq!(out.touched, Touched::Paths(vec!["src/deep/new.rs".into()]));
    assert_eq!(out.content, "Created `src/deep/new.rs` (10 bytes).");
    assert_eq!(wt.read("src/deep/new.rs"), "fn x() {}\n");
    let out = wt
        .ok(
            "write_file",
            json!({"path": "./src/deep/new.rs", "content": ""}),
        )
        .await;
    assert!(out.content.starts_with("Overwrote"));

    let err = wt
        .model_error("write_file", json!({"path": ".git/HEAD", "content": "x"}))
        .await;
    assert!(err.contains("inside `.git`"), "{err}");
    assert_eq!(wt.read(".git/HEAD"), "ref: refs/heads/main\n");
    assert_eq!(
        wt.action("write_file", json!({"path": "a/./b.txt", "content": ""}))
            .unwrap(),
        ToolAction::Write {
            paths: vec!["a/b.txt".into()]
        }
    );
}

#[tokio::test]
async fn list_dir_respects_gitignore_and_depth() {
    let wt = Worktree::new(&[
        (".gitignore", "target/\n*.log\n"),
        ("src/lib.rs", ""),
        ("src/tools/read.rs", ""),
        ("target/debug/x", ""),
        ("run.log", ""),
        (".git/config", ""),
        ("README.md", ""),
    ]);
    let out = wt.ok("list_dir", json!({})).await;
    assert_eq!(
        out.content,
        "./\n  .gitignore\n  README.md\n  src/\n    lib.rs\n    tools/\n"
    );
    assert_eq!(
        wt.ok("list_dir", serde_json::Value::Null).await.content,
        out.content
    );
    let out = wt.ok("list_dir", json!({"path": "src", "depth": 5})).await;
    assert_eq!(out.content, "src/\n  lib.rs\n  tools/\n    read.rs\n");
    let err = wt
        .model_error("list_dir", json!({"path": "README.md"}))
        .await;
    assert!(err.contains("use read_file"), "{err}");
}

#[tokio::test]
async fn list_dir_caps_huge_directories() {
    let wt = Worktree::new(&[]);
    for i in 0..600 {
        std::fs::write(wt.path().join(format!("f{i:03}")), "").unwrap();
    }
    let out = wt.ok("list_dir", json!({"path": "."})).await;
    assert_eq!(out.content.lines().count(), 1 + 500 + 1);
    assert!(out.content.contains("[Listing stopped at 500 entries"));
}

#[tokio::test]
async fn a_missing_path_names_the_files_of_that_name_the_model_probably_meant() {
    let wt = Worktree::new(&[
        ("collections_util.py", "x = 1\n"),
        ("pkg/deep/stats.py", "y = 2\n"),
        (".secret/stats.py", "z\n"),
    ]);
    let err = wt
        .model_error("read_file", json!({"path": "src/collections_util.py"}))
        .await;
    assert_eq!(
        err,
        "`src/collections_util.py` does not exist; did you mean `collections_util.py`?"
    );
    let err = wt
        .model_error("read_file", json!({"path": "stats.py"}))
        .await;
    assert_eq!(
        err,
        "`stats.py` does not exist; did you mean `pkg/deep/stats.py`?"
    );
    let err = wt
        .model_error(
            "edit_file",
            json!({"path": "lib/collections_util.py", "old_string": "x", "new_string": "y"}),
        )
        .await;
    assert!(err.contains("did you mean `collections_util.py`?"), "{err}");
    // No file of that name: the plain message, and hidden directories are never offered.
    let err = wt
        .model_error("read_file", json!({"path": "nope.py"}))
        .await;
    assert!(
        err.ends_with("use list_dir or search to find the right path"),
        "{err}"
    );
}
