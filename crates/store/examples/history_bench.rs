//! `bosun bench history` without the rest of Bosun, to run it optimised cheaply:
//! `cargo run --release -p bosun-store --example history_bench -- [TASKS] [EVENTS] [DIR]`.

fn main() -> Result<(), bosun_store::StoreError> {
    let mut args = std::env::args().skip(1);
    let tasks = args.next().and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let events = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let dir = args.next().unwrap_or_else(|| "/var/tmp/bosun-bench".into());
    bosun_store::search::bench::run(
        tasks,
        events,
        std::path::Path::new(&dir),
        &mut std::io::stdout(),
    )
}
