//! The trampoline: `<exe> __sandbox <policy-json> -- <program> [args…]` restricts itself to the
//! policy, then becomes `<program>`.

use super::{SandboxError, SandboxPolicy};
use std::ffi::OsString;

/// The hidden first argument that makes a Bosun binary act as the sandbox trampoline.
pub const SANDBOX_ARG: &str = "__sandbox";

/// The trampoline's exit code when it could not set the sandbox up (the reason is on stderr,
/// prefixed `bosun sandbox:`); the command did not run.
pub const SANDBOX_FAILED_EXIT: i32 = 125;

/// Call first thing in `main` of every binary that may serve as `CommandSpec::sandbox_exe`:
/// when the process was started as `<exe> __sandbox …` this never returns, otherwise it does
/// nothing.
pub fn dispatch_sandbox() {
    let mut args = std::env::args_os();
    if args.nth(1).is_some_and(|a| a == SANDBOX_ARG) {
        sandbox_main(args.collect());
    }
}

/// Runs the trampoline with the arguments after `__sandbox`: `<policy-json> -- <program>
/// [args…]`. Never returns: it becomes `<program>`, or exits with [`SANDBOX_FAILED_EXIT`]
/// after printing why on stderr. Must be called while the process has a single thread.
pub fn sandbox_main(args: Vec<OsString>) -> ! {
    let err = match enter(args) {
        Err(e) => e,
        Ok(never) => match never {},
    };
    eprintln!("bosun sandbox: {err}");
    std::process::exit(SANDBOX_FAILED_EXIT)
}

fn enter(args: Vec<OsString>) -> Result<std::convert::Infallible, SandboxError> {
    let mut args = args.into_iter();
    let json = args.next().ok_or(SandboxError::Usage)?;
    if args.next().is_none_or(|sep| sep != "--") {
        return Err(SandboxError::Usage);
    }
    let program = args.next().ok_or(SandboxError::Usage)?;
    let policy: SandboxPolicy = serde_json::from_str(json.to_str().ok_or(SandboxError::Usage)?)?;
    confine(&policy)?;
    let source = exec(&program, args);
    Err(SandboxError::Exec {
        program: program.to_string_lossy().into_owned(),
        source,
    })
}

fn exec(program: &OsString, args: impl Iterator<Item = OsString>) -> std::io::Error {
    use std::os::unix::process::CommandExt;
    std::process::Command::new(program).args(args).exec()
}

#[cfg(not(target_os = "linux"))]
fn confine(_policy: &SandboxPolicy) -> Result<(), SandboxError> {
    match super::probe() {
        super::SandboxSupport::Unavailable { reason } => Err(SandboxError::Unavailable(reason)),
        // macOS confines through `sandbox-exec` (see `run_command`), never through this
        // trampoline, so it refuses rather than run the program unconfined.
        _ => Err(SandboxError::Unavailable(
            "this system's sandbox is not entered through the trampoline".into(),
        )),
    }
}

#[cfg(target_os = "linux")]
fn confine(policy: &SandboxPolicy) -> Result<(), SandboxError> {
    use super::landlock_rules::{resolve, restrict};
    use super::{SandboxSupport, namespaces};

    // unshare(CLONE_NEWUSER) refuses threaded processes and Landlock would bind only this
    // thread: another thread means the entry point was called too late.
    if std::fs::read_dir("/proc/self/task").is_ok_and(|tasks| tasks.count() > 1) {
        return Err(SandboxError::Threaded);
    }
    let netns = match super::probe() {
        SandboxSupport::Unavailable { reason } => return Err(SandboxError::Unavailable(reason)),
        SandboxSupport::Full { netns, .. } => netns,
        SandboxSupport::Seatbelt => {
            return Err(SandboxError::Unavailable("Seatbelt is macOS-only".into()));
        }
    };
    let hide = resolve(&policy.read_deny);
    if netns {
        namespaces::enter(policy.network, &hide)?;
    } else {
        let writable = resolve(&policy.write_paths);
        if let Some(inside) = hide
            .iter()
            .find(|d| writable.iter().any(|w| d.starts_with(w)))
        {
            return Err(SandboxError::DenyInsideWritable(inside.clone()));
        }
    }
    restrict(policy, !netns && !policy.network)
}
