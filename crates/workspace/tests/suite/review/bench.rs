use bosun_workspace::bench::run_review_bench;

#[test]
fn the_review_benchmark_runs_and_prints_its_figures() {
    let tmp = tempfile::tempdir().unwrap();
    let mut out = Vec::new();
    run_review_bench(300, 40, tmp.path(), &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    for needle in [
        "task changed 40 files",
        "file list (review_files without lines)",
        "git diff --stat",
        "all per-file diffs with lines",
        "first file opened",
    ] {
        assert!(text.contains(needle), "{needle} missing from:\n{text}");
    }
    // Nothing of the task is left behind but the generated repository.
    let left: Vec<String> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("review-home"))
        .collect();
    assert_eq!(left, Vec::<String>::new());
}
