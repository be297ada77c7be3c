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
