//! The benchmarks run and print their figures (the figures themselves are not asserted:
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

#[test]
fn the_localise_benchmark_offline_with_an_empty_cache_fails_saying_which_download() {
    let env = Env::new();
    let cache = env.dir.path().join("localise-cache");
    // A proxy nobody listens on: no request leaves the test.
    let out = env
        .bosun()
        .env("HTTPS_PROXY", "http://127.0.0.1:9")
        .env("https_proxy", "http://127.0.0.1:9")
        .args(["bench", "localise", "--cache", cache.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("could not download https://static.crates.io/crates/")
            && err.contains("is the network up?"),
        "{err}"
    );
    // A task list that does not parse is the user's to fix: exit 2.
    let bad = env.dir.path().join("tasks.toml");
    std::fs::write(&bad, "[[task]]\nname = 1\n").unwrap();
    let out = env
        .bosun()
        .args(["bench", "localise", "--tasks", bad.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("the task list"), "{err}");
}

#[test]
fn the_batch_benchmark_runs_the_queue_at_each_concurrency_and_never_exceeds_it() {
    let env = Env::new();
    let dir = env.dir.path().join("bench");
    let (ok, out, err) = env.text(&[
        "bench",
        "batch",
        "--tasks",
        "3",
        "--concurrency",
        "1,2",
        "--delay-ms",
        "0",
        "--dir",
        dir.to_str().unwrap(),
    ]);
    assert!(ok, "{err}\n{out}");
    let rows: Vec<Vec<&str>> = out
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|w| w.len() == 10 && w[0].parse::<u32>().is_ok())
        .collect();
    assert_eq!(rows.len(), 2, "a row per concurrency:\n{out}");
    for (row, c) in rows.iter().zip(["1", "2"]) {
        assert_eq!(row[0], c, "{out}");
        assert_eq!(row[9], "3/3", "every task completed:\n{out}");
        let peak: u32 = row[8].parse().unwrap();
        assert!(
            (1..=c.parse().unwrap()).contains(&peak),
            "in flight within the concurrency:\n{out}"
        );
        // Each task wrote its events: at least a start, a tool call and an end.
        let events: u32 = row[6].parse().unwrap();
        assert!(events >= 3 * 3, "{out}");
    }
    assert_eq!(rows[0][2], "1.00x", "{out}");

    // What was typed and is wrong is named, exit 2.
    for (args, says) in [
        (vec!["--concurrency", "1,x"], "\"x\" is not a number"),
        (vec!["--concurrency", "0"], "out of range"),
        (vec!["--tasks", "0"], "--tasks must be between"),
    ] {
        let out = env
            .bosun()
            .args(["bench", "batch", "--dir", dir.to_str().unwrap()])
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}
