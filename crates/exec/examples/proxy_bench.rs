//! The egress proxy benchmark on its own, for an optimised build without the whole CLI:
//! `cargo run --release -p bosun-exec --example proxy_bench -- [MB] [CONNECTIONS]`
//! (`bosun bench proxy` prints the same figures).

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let mb = args.next().and_then(|a| a.parse().ok()).unwrap_or(256);
    let connections = args.next().and_then(|a| a.parse().ok()).unwrap_or(200);
    bosun_exec::sandbox::proxy::bench::run(mb, connections, &mut std::io::stdout()).await
}
