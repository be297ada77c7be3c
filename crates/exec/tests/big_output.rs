//! 100 MB of output through `run_command` keeps memory bounded. Its own binary, so the peak
//! resident size measured here is this test's alone.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bosun_exec::{CommandSpec, run_command};
use tokio_util::sync::CancellationToken;

/// Peak resident set size of this process in KiB (Linux).
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[tokio::test]
async fn hundred_megabytes_of_output_is_counted_with_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let spec = CommandSpec::new("yes | head -c 100000000", dir.path());
    let before = peak_rss_kib();
    let streamed = std::sync::atomic::AtomicUsize::new(0);
    let outcome = run_command(&spec, &CancellationToken::new(), &|_, b| {
        streamed.fetch_add(b.len(), std::sync::atomic::Ordering::Relaxed);
    })
    .await
    .unwrap();
    let after = peak_rss_kib();
    assert_eq!(outcome.exit_code, Some(0));
    assert_eq!(outcome.total_bytes, 100_000_000);
    assert_eq!(outcome.head.len(), spec.keep_head_bytes);
    assert_eq!(outcome.tail.len(), spec.keep_tail_bytes);
    assert_eq!(outcome.omitted_bytes, 100_000_000 - 16 * 1024);
    assert!(outcome.tail.ends_with(b"y\ny\n"));
    assert_eq!(
        streamed.load(std::sync::atomic::Ordering::Relaxed),
        spec.stream_cap_bytes
    );
    if let (Some(before), Some(after)) = (before, after) {
        println!(
            "100 MB in {:?}; peak RSS {before} KiB -> {after} KiB",
            outcome.duration
        );
        assert!(
            after - before < 32 * 1024,
            "peak RSS grew by {} KiB for 100 MB of output",
            after - before
        );
    }
}
