//! The start benchmark runs and prints its figures (the figures themselves are not asserted:
//! a benchmark is a command that prints, never a timed test).

use super::support::*;

#[test]
fn the_start_benchmark_prints_first_later_and_prepared_tasks_next_to_git() {
    let env = Env::new();
    let dir = env.dir.path().join("bench");
    let (ok, out, err) = env.text(&[
        "bench",
        "start",
        "--files",
        "40",
        "--dir",
        dir.to_str().unwrap(),
        "--prepared",
    ]);
    assert!(ok, "{err}");
    for row in [
        "git worktree add:",
        "first model request, first task:",
        "first model request, later task:",
        "prepared beforehand",
        "first model request, first task, prepared:",
    ] {
        assert!(out.contains(row), "{row} missing:\n{out}");
    }
}

#[test]
fn the_guard_benchmark_prints_a_row_per_language_against_the_budget() {
    let env = Env::new();
    let (ok, out, err) = env.text(&["bench", "guard", "--lines", "100", "--runs", "2"]);
    assert!(ok, "{err}");
    assert!(out.contains("budget 5 ms per edit"), "{out}");
    for lang in [
        "python",
        "rust",
        "typescript",
        "javascript",
        "go",
        "java",
        "c",
        "cpp",
        "ruby",
        "json",
        "toml",
    ] {
        assert!(
            out.contains(&format!("\n{lang:<11} ")),
            "{lang} missing:\n{out}"
        );
    }
}
