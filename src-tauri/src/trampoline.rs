//! The sandbox trampoline for commands the agent runs. The core starts them as
//! `<this binary> __sandbox <policy-json> -- bash -c <command>`, and the trampoline must be a
//! single-threaded process. This one is not: WebKit's JavaScriptCore starts a thread from a shared
//! library constructor, before `main`. So the app hands the call over, with `exec` (which leaves
//! no thread behind), to a sibling binary that is only the trampoline: `bosun-sandbox`, or the
//! `bosun` CLI. The .deb (`scripts/app deb`) installs the CLI as `/usr/bin/bosun`, beside
//! `/usr/bin/bosun-app`; a development build finds it in the same cargo target directory.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The trampoline's exit code when it could not start the command (as `bosun_exec`'s own).
pub const SANDBOX_FAILED_EXIT: i32 = 125;

/// The binaries, next to the app's own, that can serve as the trampoline, in order of preference.
pub const TRAMPOLINES: &[&str] = &["bosun-sandbox", "bosun"];

/// Where the trampoline is: the first of [`TRAMPOLINES`] found in `dir`.
pub fn find(dir: &Path) -> Option<PathBuf> {
    TRAMPOLINES
        .iter()
        .map(|name| dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX)))
        .find(|p| p.is_file())
}

/// Call first thing in `main`: when the process was started as the trampoline, becomes the
/// sibling trampoline (never returns); otherwise does nothing. When no sibling exists it says so
/// and exits with [`SANDBOX_FAILED_EXIT`], so the command is not run unconfined.
pub fn forward() {
    let args: Vec<OsString> = std::env::args_os().collect();
    if args.get(1).is_none_or(|a| a != bosun_exec::SANDBOX_ARG) {
        return;
    }
    let dir = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(Path::to_path_buf));
    let Some(target) = dir.as_deref().and_then(find) else {
        eprintln!(
            "bosun sandbox: none of {} was found next to the app; install it beside the app to run commands in the sandbox",
            TRAMPOLINES.join(", ")
        );
        std::process::exit(SANDBOX_FAILED_EXIT);
    };
    exec(&target, &args[1..]);
}

#[cfg(unix)]
fn exec(target: &Path, args: &[OsString]) -> ! {
    use std::os::unix::process::CommandExt;
    let err = std::process::Command::new(target).args(args).exec();
    eprintln!("bosun sandbox: could not start {}: {err}", target.display());
    std::process::exit(SANDBOX_FAILED_EXIT)
}

#[cfg(not(unix))]
fn exec(target: &Path, args: &[OsString]) -> ! {
    // No exec on this platform: run it and pass its exit code on.
    match std::process::Command::new(target).args(args).status() {
        Ok(status) => std::process::exit(status.code().unwrap_or(SANDBOX_FAILED_EXIT)),
        Err(err) => {
            eprintln!("bosun sandbox: could not start {}: {err}", target.display());
            std::process::exit(SANDBOX_FAILED_EXIT)
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn the_dedicated_trampoline_is_preferred_over_the_cli() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(find(dir.path()), None);
        let exe = |name: &str| {
            dir.path()
                .join(format!("{name}{}", std::env::consts::EXE_SUFFIX))
        };
        std::fs::write(exe("bosun"), "").unwrap();
        assert_eq!(find(dir.path()), Some(exe("bosun")));
        std::fs::write(exe("bosun-sandbox"), "").unwrap();
        assert_eq!(find(dir.path()), Some(exe("bosun-sandbox")));
    }
}
