//! `cargo run -p bosun-workspace --example checkpoint_bench -- <files> <dir>`: the same figures
//! `bosun bench checkpoint` prints.

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let files: usize = args.next().as_deref().unwrap_or("100000").parse()?;
    let dir =
        std::path::PathBuf::from(args.next().unwrap_or_else(|| "/var/tmp/bosun-bench".into()));
    bosun_workspace::bench::run_checkpoint_bench(files, &dir, &mut std::io::stdout())?;
    Ok(())
}
