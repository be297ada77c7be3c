use bosun_workspace::bench::run_checkpoint_bench;

#[test]
fn the_checkpoint_benchmark_runs_and_prints_its_figures() {
    let tmp = tempfile::tempdir().unwrap();
    let mut out = Vec::new();
    run_checkpoint_bench(200, tmp.path(), &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    for needle in [
        "generated 200 files",
        "edit tool, 1 file",
        "edit tool, 100 files",
        "command, 10 files",
        "watcher setup",
        "command, 10 files (watcher)",
        "(from events, ",
        "command, 10 files (stat walk)",
        "git worktree add",
        "later task",
    ] {
        assert!(text.contains(needle), "{needle} missing from:\n{text}");
    }
    // A second run reuses the repository.
    let mut out = Vec::new();
    run_checkpoint_bench(200, tmp.path(), &mut out).unwrap();
    assert!(
        String::from_utf8(out)
            .unwrap()
            .contains("reusing the 200-file repository")
    );
}
