//! What the sandbox costs per command: `run_command` of a trivial command plain, sandboxed in
//! full (namespaces incl. a PID namespace + Landlock + seccomp), without the PID namespace
//! (the subreaper fallback), and without namespaces (Landlock + seccomp). The variants are
//! interleaved run by run, so a busy machine slows them alike. Prints medians and the
//! overhead; asserts nothing.
//!
//! `cargo build -p bosun-exec --release --bins --examples && target/release/examples/sandbox_bench [runs]`
//! (the trampoline is the `bosun-sandbox` binary built beside this example). The fallbacks are
//! forced with `BOSUN_SANDBOX_DISABLE`, which only debug builds read: a release build measures
//! plain and full only.

use bosun_exec::sandbox::DISABLE_ENV;
use bosun_exec::{CommandSpec, SandboxPolicy, probe, run_command};
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v.get(v.len() / 2).copied().unwrap_or_default()
}

async fn once(spec: &CommandSpec) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let outcome = run_command(spec, &CancellationToken::new(), &|_, _| {}).await?;
    if !outcome.success() {
        anyhow::bail!(
            "`{}` failed: {}",
            spec.command,
            String::from_utf8_lossy(&outcome.head)
        );
    }
    Ok(started.elapsed())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(50);
    println!("{}", probe().describe());
    let dir = std::env::temp_dir().join(format!("bosun-sandbox-bench-{}", std::process::id()));
    let (worktree, temp) = (dir.join("wt"), dir.join("tmp"));
    std::fs::create_dir_all(&worktree)?;
    std::fs::create_dir_all(&temp)?;
    let exe = std::env::current_exe()?
        .parent()
        .and_then(|examples| examples.parent())
        .map(|profile| profile.join("bosun-sandbox"))
        .unwrap_or_else(|| PathBuf::from("bosun-sandbox"));
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let policy = SandboxPolicy::for_task(&worktree, &temp, home.as_deref(), None)?;
    println!("read_deny: {:?}", policy.read_deny);

    for command in ["true", "git --version", "python3 -c pass"] {
        let plain = CommandSpec::new(command, &worktree);
        let mut full = plain.clone();
        full.sandbox = Some(policy.clone());
        full.sandbox_exe = exe.clone();
        let without = |disabled: &str| {
            let mut spec = full.clone();
            spec.env.push((DISABLE_ENV.into(), disabled.into()));
            spec
        };
        let mut variants = vec![("plain", plain.clone()), ("full", full.clone())];
        if cfg!(debug_assertions) {
            variants.push(("no pidns", without("pidns")));
            variants.push(("no namespaces", without("netns")));
        }
        let mut times: Vec<Vec<Duration>> = vec![Vec::with_capacity(runs); variants.len()];
        for _ in 0..runs {
            for (i, (_, spec)) in variants.iter().enumerate() {
                times[i].push(once(spec).await?);
            }
        }
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        let medians: Vec<f64> = times.into_iter().map(|t| ms(median(t))).collect();
        let base = medians[0];
        let cells: Vec<String> = variants
            .iter()
            .zip(&medians)
            .map(|((name, _), m)| format!("{name} {m:7.2} ms (+{:.2})", m - base))
            .collect();
        println!(
            "{command:<16} {}   median of {runs}, interleaved",
            cells.join(" | ")
        );
    }
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
