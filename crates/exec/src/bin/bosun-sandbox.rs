//! The sandbox trampoline on its own: `bosun-sandbox __sandbox <policy-json> -- <program> [args…]`.
//! The `bosun` binary offers the same entry point; this one serves the crate's tests and benchmark.

fn main() {
    bosun_exec::dispatch_sandbox();
    eprintln!(
        "usage: bosun-sandbox {} <policy-json> -- <program> [args…]",
        bosun_exec::SANDBOX_ARG
    );
    std::process::exit(2);
}
