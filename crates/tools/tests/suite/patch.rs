//! apply_patch.
use super::common::Worktree;
use bosun_protocol::ToolAction;
use bosun_tools::Touched;
use pretty_assertions::assert_eq;
use serde_json::json;

const A: &str = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n";

#[tokio::test]
async fn patch_adds_modifies_and_deletes_across_files() {
    let wt = Worktree::new(&[("src/a.txt", A), ("old.txt", "bye\n")]);
    let patch = "\
diff --git a/src/a.txt b/src/a.txt
index 111..222 100644
--- a/src/a.txt
+++ b/src/a.txt
@@ -1,3 +1,3 @@
 one
-two
+TWO
 three
@@ -8,3 +8,4 @@
 eight
 nine
+nine and a half
 ten
--- /dev/null
+++ b/docs/new.md
@@ -0,0 +1,2 @@
+# New
+text
diff --git a/old.txt b/old.txt
deleted file mode 100644
--- a/old.txt
+++ /dev/null
@@ -1 +0,0 @@
-bye
";
    let out = wt.ok("apply_patch", json!({"patch": patch})).await;
    assert_eq!(
        out.touched,
        Touched::Paths(vec![
            "docs/new.md".into(),
            "old.txt".into(),
            "src/a.txt".into()
        ])
    );
    assert_eq!(
        out.content,
        "Applied the patch to 3 file(s):\nA docs/new.md\nD old.txt\nM src/a.txt\n"
    );
    assert_eq!(
        wt.read("src/a.txt"),
        "one\nTWO\nthree\nfour\nfive\nsix\nseven\neight\nnine\nnine and a half\nten\n"
    );
    assert_eq!(wt.read("docs/new.md"), "# New\ntext\n");
    assert!(!wt.exists("old.txt"));
    assert_eq!(
        wt.action("apply_patch", json!({"patch": patch})).unwrap(),
        ToolAction::Write {
            paths: vec!["src/a.txt".into(), "docs/new.md".into(), "old.txt".into()]
        }
    );
}

#[tokio::test]
async fn a_failing_second_hunk_leaves_every_file_untouched() {
    let wt = Worktree::new(&[("a.txt", A), ("b.txt", "x\ny\n")]);
    let patch = "\
--- a/b.txt
+++ b/b.txt
@@ -1,2 +1,2 @@
 x
-y
+Y
--- /dev/null
+++ b/c.txt
@@ -0,0 +1 @@
+new
--- a/a.txt
+++ b/a.txt
@@ -1,2 +1,2 @@
-one
+ONE
 two
@@ -6,3 +6,3 @@
 six
-SEVEN
+7
 eight
";
    let err = wt.model_error("apply_patch", json!({"patch": patch})).await;
    assert!(
        err.contains("hunk 2 of 2 for `a.txt` did not apply"),
        "{err}"
    );
    assert!(
        err.contains("  six\n  SEVEN\n  eight\n"),
        "shows the expected context: {err}"
    );
    assert!(err.contains("No file was changed"), "{err}");
    assert_eq!(wt.read("a.txt"), A);
    assert_eq!(wt.read("b.txt"), "x\ny\n");
    assert!(!wt.exists("c.txt"));
}

#[tokio::test]
async fn hunks_apply_when_line_numbers_are_off_and_keep_crlf() {
    let wt = Worktree::new(&[("a.txt", A)]);
    std::fs::write(wt.path().join("win.txt"), "a\r\nb\r\nc\r\n").unwrap();
    let patch = "\
--- a/a.txt
+++ b/a.txt
@@ -40,3 +40,3 @@
 four
-five
+5
 six
--- a/win.txt
+++ b/win.txt
@@ -1,3 +1,3 @@
 a
-b
+B
 c
";
    wt.ok("apply_patch", json!({"patch": patch})).await;
    assert!(wt.read("a.txt").contains("four\n5\nsix\n"));
    assert_eq!(wt.read("win.txt"), "a\r\nB\r\nc\r\n");
}

#[tokio::test]
async fn bad_patches_are_explained() {
    let wt = Worktree::new(&[("a.txt", A)]);
    let err = wt
        .model_error("apply_patch", json!({"patch": "just some text"}))
        .await;
    assert!(err.contains("no file headers found"), "{err}");
    let add_existing = "--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1 @@\n+x\n";
    let err = wt
        .model_error("apply_patch", json!({"patch": add_existing}))
        .await;
    assert!(err.contains("`a.txt` already exists"), "{err}");
    let missing = "--- a/nope.txt\n+++ b/nope.txt\n@@ -1 +1 @@\n-a\n+b\n";
    let err = wt
        .model_error("apply_patch", json!({"patch": missing}))
        .await;
    assert!(err.contains("`nope.txt` does not exist"), "{err}");
    let escape = "--- /dev/null\n+++ b/../evil.txt\n@@ -0,0 +1 @@\n+x\n";
    let err = wt
        .model_error("apply_patch", json!({"patch": escape}))
        .await;
    assert!(
        err.contains("must stay inside the task's worktree"),
        "{err}"
    );
    assert!(!wt.path().parent().unwrap().join("evil.txt").exists());
}

#[tokio::test]
async fn the_begin_patch_format_is_understood_too() {
    let wt = Worktree::new(&[
        (
            "src/main.rs",
            "fn helper() {\n    old();\n}\n\nfn main() {\n    old();\n}\n",
        ),
        ("gone.txt", "x\n"),
    ]);
    let patch = "\
*** Begin Patch
*** Update File: src/main.rs
@@ fn main() {
-    old();
+    new();
*** Add File: notes.md
+hello
+world
*** Delete File: gone.txt
*** End Patch
";
    let out = wt.ok("apply_patch", json!({"patch": patch})).await;
    assert_eq!(
        out.touched,
        Touched::Paths(vec![
            "gone.txt".into(),
            "notes.md".into(),
            "src/main.rs".into()
        ])
    );
    assert_eq!(
        wt.read("src/main.rs"),
        "fn helper() {\n    old();\n}\n\nfn main() {\n    new();\n}\n",
        "the @@ anchor places the hunk in main, not helper"
    );
    assert_eq!(wt.read("notes.md"), "hello\nworld\n");
    assert!(!wt.exists("gone.txt"));
}
