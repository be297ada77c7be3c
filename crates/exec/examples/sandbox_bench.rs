//! What the sandbox costs per command: `run_command("true")` plain, sandboxed with namespaces +
//! Landlock, and sandboxed with Landlock alone. Prints medians and the overhead; asserts nothing.
//!
//! `cargo build -p bosun-exec --release --bins --examples && target/release/examples/sandbox_bench [runs]`
//! (the trampoline is the `bosun-sandbox` binary built beside this example).

use bosun_exec::sandbox::NAMESPACES_ENV;
use bosun_exec::{CommandSpec, SandboxPolicy, probe, run_command};
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v.get(v.len() / 2).copied().unwrap_or_default()
}

async fn measure(spec: &CommandSpec, runs: usize) -> anyhow::Result<Duration> {
    let cancel = CancellationToken::new();
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let started = Instant::now();
        let outcome = run_command(spec, &cancel, &|_, _| {}).await?;
        if !outcome.success() {
            anyhow::bail!(
                "`{}` failed: {}",
                spec.command,
                String::from_utf8_lossy(&outcome.head)
            );
        }
        times.push(started.elapsed());
    }
    Ok(median(times))
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
    let policy = SandboxPolicy::for_task(&worktree, &temp, home.as_deref())?;
    println!("read_deny: {:?}", policy.read_deny);

    for command in ["true", "git --version", "python3 -c pass"] {
        let plain = CommandSpec::new(command, &worktree);
        let mut sandboxed = plain.clone();
        sandboxed.sandbox = Some(policy.clone());
        sandboxed.sandbox_exe = exe.clone();
        let mut landlock_only = sandboxed.clone();
        landlock_only.env.push((NAMESPACES_ENV.into(), "0".into()));

        let base = measure(&plain, runs).await?;
        let full = measure(&sandboxed, runs).await?;
        let lone = measure(&landlock_only, runs).await?;
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        println!(
            "{command:<18} plain {:7.2} ms | namespaces+landlock {:7.2} ms (+{:.2} ms, x{:.2}) | landlock only {:7.2} ms (+{:.2} ms)   median of {runs}",
            ms(base),
            ms(full),
            ms(full) - ms(base),
            ms(full) / ms(base),
            ms(lone),
            ms(lone) - ms(base),
        );
    }
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
