//! search: what the model sees — matches grouped by file, context, caps and what was left out,
//! and the files it never looks in.
use super::common::Worktree;
use bosun_protocol::ToolAction;
use pretty_assertions::assert_eq;
use serde_json::json;

#[tokio::test]
async fn matches_are_grouped_under_each_file_in_path_order() {
    let wt = Worktree::new(&[
        ("src/b.py", "def beta():\n    alpha()\n"),
        (
            "src/a.py",
            "def alpha():\n    pass\n\ndef gamma():\n    alpha()\n",
        ),
        ("README.md", "no match here\n"),
    ]);
    let out = wt.ok("search", json!({"pattern": "alpha"})).await;
    assert_eq!(
        out.content,
        "src/a.py\n  1: def alpha():\n  5:     alpha()\nsrc/b.py\n  2:     alpha()\n"
    );
    let out = wt
        .ok("search", json!({"pattern": "alpha", "path": "src/b.py"}))
        .await;
    assert_eq!(out.content, "src/b.py\n  2:     alpha()\n");
    assert_eq!(
        wt.action("search", json!({"pattern": "x", "path": "./src/"}))
            .unwrap(),
        ToolAction::Read {
            paths: vec!["src".into()]
        }
    );
}

#[tokio::test]
async fn literal_finds_regex_metacharacters_as_written() {
    let wt = Worktree::new(&[("calls.txt", "axb(\na.b(1)\n")]);
    let err = wt.model_error("search", json!({"pattern": "a.b("})).await;
    assert!(err.starts_with("invalid regex `a.b(`"), "{err}");
    assert!(err.contains("pass literal: true"), "{err}");
    assert!(err.contains("backslash"), "{err}");

    let out = wt
        .ok("search", json!({"pattern": "a.b(", "literal": true}))
        .await;
    assert_eq!(out.content, "calls.txt\n  2: a.b(1)\n");
    // As a regex, `.` is any character.
    let out = wt.ok("search", json!({"pattern": "a.b\\("})).await;
    assert_eq!(out.content, "calls.txt\n  1: axb(\n  2: a.b(1)\n");
}

#[tokio::test]
async fn context_lines_surround_matches_and_separate_distant_groups() {
    let text: String = (1..=12)
        .map(|i| {
            if [3, 5, 11].contains(&i) {
                format!("hit {i}\n")
            } else {
                format!("line {i}\n")
            }
        })
        .collect();
    let wt = Worktree::new(&[("f.txt", &text)]);
    let out = wt
        .ok("search", json!({"pattern": "hit", "context_lines": 1}))
        .await;
    assert_eq!(
        out.content,
        "f.txt\n  2- line 2\n  3: hit 3\n  4- line 4\n  5: hit 5\n  6- line 6\n  --\n  10- line 10\n  11: hit 11\n  12- line 12\n"
    );
    // A match past max_results brings none of its context.
    let out = wt
        .ok(
            "search",
            json!({"pattern": "hit", "context_lines": 1, "max_results": 2}),
        )
        .await;
    assert_eq!(
        out.content,
        "f.txt\n  2- line 2\n  3: hit 3\n  4- line 4\n  5: hit 5\n  6- line 6\n\
         … 1 more match in 1 file not shown; narrow with path or glob, or raise max_results (up to 200)\n"
    );
    let err = wt
        .model_error("search", json!({"pattern": "hit", "context_lines": -1}))
        .await;
    assert!(err.contains("context_lines must be 0 or more"), "{err}");
}

#[tokio::test]
async fn max_results_caps_the_lines_and_counts_exactly_what_was_left_out() {
    let hits = |n: usize| -> String { (1..=n).map(|i| format!("hit {i}\n")).collect() };
    let wt = Worktree::new(&[
        ("a.txt", &hits(5)),
        ("b.txt", &hits(4)),
        ("c.txt", &hits(3)),
    ]);
    let out = wt
        .ok("search", json!({"pattern": "hit", "max_results": 6}))
        .await;
    assert_eq!(
        out.content,
        "a.txt\n  1: hit 1\n  2: hit 2\n  3: hit 3\n  4: hit 4\n  5: hit 5\nb.txt\n  1: hit 1\n\
         … 6 more matches in 2 files not shown; narrow with path or glob, or raise max_results (up to 200)\n"
    );
    let err = wt
        .model_error("search", json!({"pattern": "hit", "max_results": 0}))
        .await;
    assert!(err.contains("max_results must be at least 1"), "{err}");
}

#[tokio::test]
async fn long_context_stops_at_100_kb_and_leaves_no_context_without_its_match() {
    // 600 lines of 288 characters, a match every 30 lines: each match with 10 lines of context
    // either side is about 6 KB, so the 17th no longer fits, while its context is being taken.
    let text: String = (1..=600)
        .map(|i| {
            let head = if i % 30 == 15 { "hit" } else { "ctx" };
            format!("{head} {i:05} {}\n", "c".repeat(278))
        })
        .collect();
    let wt = Worktree::new(&[("wide.txt", &text)]);
    let out = wt
        .ok("search", json!({"pattern": "^hit", "context_lines": 10}))
        .await;
    let lines: Vec<&str> = out.content.lines().collect();
    assert_eq!(lines.iter().filter(|l| l.contains(": hit ")).count(), 16);
    assert!(
        lines[lines.len() - 2].starts_with("  475- ctx 00475 "),
        "{}",
        lines[lines.len() - 2]
    );
    assert_eq!(
        lines[lines.len() - 1],
        "… 4 more matches in 1 file not shown; narrow with path or glob, or use fewer context_lines"
    );
}

#[tokio::test]
async fn the_default_cap_is_200_lines_and_counting_stops_at_a_bound() {
    let wt = Worktree::new(&[
        (
            "many.txt",
            &(0..300).map(|i| format!("hit {i}\n")).collect::<String>(),
        ),
        ("sub/other.txt", "hit\n"),
    ]);
    let out = wt.ok("search", json!({"pattern": "hit"})).await;
    assert_eq!(out.content.lines().count(), 1 + 200 + 1);
    assert!(
        out.content
            .ends_with("  199: hit 198\n  200: hit 199\n… 101 more matches in 2 files not shown; narrow with path or glob\n"),
        "{}",
        out.content
    );
    // A larger max_results counts as 200.
    let wider = wt
        .ok("search", json!({"pattern": "hit", "max_results": 5000}))
        .await;
    assert_eq!(wider.content, out.content);

    let huge: String = (0..12_000).map(|i| format!("hit {i}\n")).collect();
    std::fs::write(wt.path().join("huge.txt"), huge).unwrap();
    let out = wt.ok("search", json!({"pattern": "hit"})).await;
    assert!(
        out.content.ends_with(
            "… at least 10,000 more matches in at least 1 file not shown; narrow with path or glob\n"
        ),
        "{}",
        out.content.lines().last().unwrap()
    );
}

#[tokio::test]
async fn binary_files_are_skipped_and_latin1_text_is_found() {
    let wt = Worktree::new(&[]);
    std::fs::write(wt.path().join("bin.dat"), b"alpha\0\x01\x02").unwrap();
    // The NUL comes long after the match, past the searcher's first buffer: still binary.
    let mut late = b"alpha\n".to_vec();
    late.extend(std::iter::repeat_n(b'x', 300_000));
    late.extend(b"\0\n");
    std::fs::write(wt.path().join("late.bin"), late).unwrap();
    std::fs::write(wt.path().join("latin1.txt"), b"caf\xe9 alpha\n").unwrap();
    let out = wt.ok("search", json!({"pattern": "alpha"})).await;
    assert_eq!(out.content, "latin1.txt\n  1: caf\u{FFFD} alpha\n");
    let out = wt
        .ok("search", json!({"pattern": "alpha", "glob": "*.{dat,bin}"}))
        .await;
    assert_eq!(
        out.content,
        "No matches for `alpha` in `.` (the glob `*.{dat,bin}` matched 2 files there). \
         Skipped: 2 binary files."
    );
}

#[tokio::test]
async fn a_huge_single_line_is_cut_around_its_match() {
    let line = format!("{}needle{}\n", "x".repeat(1_000_000), "y".repeat(1_000_000));
    let wt = Worktree::new(&[("min.js", &line)]);
    let out = wt.ok("search", json!({"pattern": "needle"})).await;
    assert!(out.content.len() < 1000, "{} bytes", out.content.len());
    let shown = out.content.lines().nth(1).unwrap();
    assert!(
        shown.starts_with("  1: [999,900 characters cut] …xxx"),
        "{shown}"
    );
    assert!(shown.contains("needle"), "{shown}");
    assert!(
        shown.ends_with("yyy… [999,806 more characters cut]"),
        "{shown}"
    );
}

#[tokio::test]
async fn ignored_files_and_git_internals_are_not_searched_but_hidden_files_are() {
    let wt = Worktree::new(&[
        (".gitignore", "build/\n*.log\n"),
        ("build/out.py", "token\n"),
        ("debug.log", "token\n"),
        (".git/config", "token\n"),
        (".env.example", "token\n"),
        ("src/app.py", "token\n"),
    ]);
    let out = wt.ok("search", json!({"pattern": "token"})).await;
    assert_eq!(
        out.content,
        ".env.example\n  1: token\nsrc/app.py\n  1: token\n"
    );
    // Outside a git repository, .gitignore still counts.
    std::fs::remove_dir_all(wt.path().join(".git")).unwrap();
    let again = wt.ok("search", json!({"pattern": "token"})).await;
    assert_eq!(again.content, out.content);
    // A glob does not bring ignored files back.
    let out = wt
        .ok("search", json!({"pattern": "token", "glob": "*.log"}))
        .await;
    assert_eq!(
        out.content,
        "No matches for `token` in `.` (the glob `*.log` matched 0 files there). A glob is matched \
         against paths from the worktree's root: `tests/**` is everything under tests, \
         `*.<extension>` a name at any depth."
    );
}

#[tokio::test]
async fn a_name_glob_matches_at_any_depth_and_a_bad_glob_is_explained() {
    let wt = Worktree::new(&[
        ("top.py", "alpha\n"),
        ("pkg/deep/mod.py", "alpha\n"),
        ("pkg/deep/mod.txt", "alpha\n"),
        ("tests/test_a.txt", "alpha\n"),
    ]);
    let out = wt
        .ok("search", json!({"pattern": "alpha", "glob": "*.py"}))
        .await;
    assert_eq!(
        out.content,
        "pkg/deep/mod.py\n  1: alpha\ntop.py\n  1: alpha\n"
    );
    let out = wt
        .ok("search", json!({"pattern": "alpha", "glob": "tests/**"}))
        .await;
    assert_eq!(out.content, "tests/test_a.txt\n  1: alpha\n");
    // The glob is read from the worktree's root, whatever the path.
    let out = wt
        .ok(
            "search",
            json!({"pattern": "alpha", "path": "pkg", "glob": "pkg/**/*.txt"}),
        )
        .await;
    assert_eq!(out.content, "pkg/deep/mod.txt\n  1: alpha\n");
    let err = wt
        .model_error("search", json!({"pattern": "alpha", "glob": "src/[a"}))
        .await;
    assert!(err.starts_with("invalid glob `src/[a`"), "{err}");
}

#[tokio::test]
async fn paths_outside_the_worktree_are_refused_and_missing_ones_named() {
    let wt = Worktree::new(&[("inside.txt", "secret\n")]);
    std::os::unix::fs::symlink("/etc", wt.path().join("etc_link")).unwrap();
    for path in ["..", "../x", "/etc", "etc_link"] {
        let err = wt
            .model_error("search", json!({"pattern": "root", "path": path}))
            .await;
        assert!(
            err.contains("must stay inside the task's worktree"),
            "{path}: {err}"
        );
    }
    let err = wt
        .model_error("search", json!({"pattern": "x", "path": "nope"}))
        .await;
    assert_eq!(
        err,
        "`nope` does not exist; use list_dir or search to find the right path"
    );
}

#[tokio::test]
async fn no_match_says_so_and_suggests_literal_for_regex_syntax() {
    let wt = Worktree::new(&[("a.txt", "plain\n")]);
    let out = wt.ok("search", json!({"pattern": "gamma"})).await;
    assert_eq!(out.content, "No matches for `gamma` in `.`.");
    let out = wt.ok("search", json!({"pattern": "foo.bar()"})).await;
    assert_eq!(
        out.content,
        "No matches for `foo.bar()` in `.`. The pattern is a regex, where `.` `(` `)` are \
         special; to find the text as written, pass literal: true."
    );
    let out = wt
        .ok("search", json!({"pattern": "foo.bar()", "literal": true}))
        .await;
    assert_eq!(out.content, "No matches for `foo.bar()` in `.`.");
    let err = wt.model_error("search", json!({"pattern": "a\nb"})).await;
    assert!(err.contains("one line at a time"), "{err}");
}
