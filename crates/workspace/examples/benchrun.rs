#![allow(clippy::unwrap_used, clippy::expect_used)]
//! TEMPORARY: `bosun bench checkpoint` without the CLI (to be removed).
fn main() {
    let files: usize = std::env::args().nth(1).unwrap().parse().unwrap();
    bosun_workspace::bench::run_checkpoint_bench(
        files,
        std::path::Path::new("/var/tmp/bosun-bench"),
        &mut std::io::stdout(),
    )
    .unwrap();
}
