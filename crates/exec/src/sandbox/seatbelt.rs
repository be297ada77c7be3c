//! The macOS backend: a [`SandboxPolicy`] as a Seatbelt profile for `sandbox-exec -p`.
//!
//! On macOS `run_command` spawns `/usr/bin/sandbox-exec -p <profile> -- bash -c <command>`
//! (scrubbed environment, own process group, as on Linux); the kernel applies the profile to
//! bash and everything it starts. Rendering is pure and platform-independent, so the rules are
//! unit-tested on every system.
//!
//! The profile mirrors the Linux sandbox (see the [`super`] module docs):
//! - `(deny default)`, then what commands need to run: exec and fork, signals and process info
//!   only within the sandbox (`same-sandbox`, like Landlock's signal scope), sysctl reads, the
//!   user-database and power-management services, ptys and the standard devices (`/dev/null`,
//!   `/dev/zero`, `/dev/tty`, `/dev/fd/*`, which `/dev/stdout` and `/dev/stderr` lead to).
//! - Reading everywhere, except the `read_deny` paths, which can be neither read nor written
//!   (rules last, so they win over everything above: in Seatbelt the last matching rule wins).
//!   `subpath` is used for files too: a file has nothing beneath it, and a denied file replaced
//!   by a directory stays denied.
//! - Writing only under `write_paths`. A write path that is or contains a `read_only_paths`
//!   entry is dropped (exactly like Landlock); one inside it (the worktree's git admin dir, the
//!   object store, its branch ref dirs) stays writable. No other rule is needed for read-only
//!   paths: with `(deny default)` nothing else is writable.
//! - What Landlock forbids by construction is stated explicitly, because `subpath` also matches
//!   the directory itself: a write root cannot be removed or renamed (unless its parent is
//!   writable too, as on Linux), and neither can a directory on the way to a denied path
//!   inside a write path (`mv secrets s; cat s/key`). Hard links and clones are not granted at
//!   all: Seatbelt checks only their destination, so a link into the worktree would make a
//!   denied or read-only file readable or writable under a new name. Tools fall back to
//!   copying (git renames).
//! - Network: with `network`, everything (`network*`, sockets, the DNS, TLS trust and network
//!   configuration services). Without it, no IP networking at all, loopback included, and unix
//!   sockets only under the write paths. Linux gives a command a network namespace of its own,
//!   whose loopback reaches only servers the command started; Seatbelt cannot tell those from
//!   the host's (databases, Docker, the user's dev servers on 127.0.0.1), so loopback is cut
//!   too: a test suite that serves on 127.0.0.1 needs the network grant on macOS.
//!
//! Seatbelt matches resolved paths, and `/tmp`, `/var` and `/etc` are symlinks into `/private`
//! on macOS: every path is written in both forms, and [`seatbelt_args`] adds each path's
//! resolved form (symlinks followed) before rendering.

use super::{SandboxError, SandboxPolicy};
use std::path::{Path, PathBuf};

/// Only the system's own `sandbox-exec` is used, never one found on `PATH`.
pub const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// The rules every profile starts with (closed by default, then what any command needs).
const BASE: &str = r#"(version 1)
(deny default)
(allow process-exec)
(allow process-fork)
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))
(allow sysctl-read)
(allow sysctl-write (sysctl-name "kern.grade_cputype"))
(allow mach-host*)
(allow user-preference-read)
(allow ipc-posix-sem)
(allow iokit-open (iokit-registry-entry-class "RootDomainUserClient"))
(allow mach-lookup
  (global-name "com.apple.system.opendirectoryd.libinfo")
  (global-name "com.apple.system.opendirectoryd.membership")
  (global-name "com.apple.PowerManagement.control"))
(allow pseudo-tty)
(allow file-read* file-write* file-ioctl (literal "/dev/ptmx"))
(allow file-read* file-write* (require-all (regex #"^/dev/ttys[0-9]+$") (extension "com.apple.sandbox.pty")))
(allow file-ioctl (regex #"^/dev/ttys[0-9]+$"))
(allow file-write* file-ioctl (literal "/dev/null") (literal "/dev/zero") (literal "/dev/tty"))
(allow file-write* (subpath "/dev/fd"))
(allow file-read*)
"#;

/// With the network granted: all of it, plus the services name resolution and TLS use.
const NETWORK: &str = r#"(allow network*)
(allow system-socket)
(allow mach-lookup
  (global-name "com.apple.bsd.dirhelper")
  (global-name "com.apple.SecurityServer")
  (global-name "com.apple.networkd")
  (global-name "com.apple.ocspd")
  (global-name "com.apple.trustd.agent")
  (global-name "com.apple.SystemConfiguration.DNSConfiguration")
  (global-name "com.apple.SystemConfiguration.configd"))
"#;

/// The Seatbelt profile (SBPL, for `sandbox-exec -p`) that enforces `policy`. Paths are used
/// as given (plus their `/private` forms); [`seatbelt_args`] resolves them first.
pub fn seatbelt_profile(policy: &SandboxPolicy) -> String {
    let deny = expand(&policy.read_deny);
    let read_only = expand(&policy.read_only_paths);
    let mut writable = expand(&policy.write_paths);
    // As on Linux: a write path that is or contains a read-only path is not granted.
    writable.retain(|w| !read_only.iter().any(|r| r.starts_with(w)));

    let mut out = String::from(BASE);
    for path in &writable {
        out.push_str(&format!("(allow file-write* (subpath {}))\n", quote(path)));
    }
    if policy.network {
        out.push_str(NETWORK);
    } else if !writable.is_empty() {
        out.push_str("(allow system-socket (socket-domain AF_UNIX))\n");
        for path in &writable {
            let path = quote(path);
            out.push_str(&format!(
                "(allow network-bind (local unix-socket (subpath {path})))\n"
            ));
            out.push_str(&format!(
                "(allow network-outbound (remote unix-socket (subpath {path})))\n"
            ));
        }
    }
    for path in &deny {
        out.push_str(&format!(
            "(deny file-read* file-write* (subpath {}))\n",
            quote(path)
        ));
    }
    for path in fixed_dirs(&writable, &deny) {
        out.push_str(&format!(
            "(deny file-write-unlink (literal {}))\n",
            quote(&path)
        ));
    }
    out
}

/// The arguments for [`SANDBOX_EXEC`] that run `bash -c <command>` under `policy`: every path
/// also in its resolved form (symlinks followed) when it exists, since that is the form
/// Seatbelt compares. Fails when a path cannot be named in a profile (relative, not UTF-8, or
/// with control characters).
pub fn seatbelt_args(policy: &SandboxPolicy, command: &str) -> Result<Vec<String>, SandboxError> {
    let mut resolved = policy.clone();
    for list in [
        &mut resolved.write_paths,
        &mut resolved.read_deny,
        &mut resolved.read_only_paths,
    ] {
        let mut all = Vec::with_capacity(list.len() * 2);
        for path in list.iter() {
            nameable(path)?;
            all.push(path.clone());
            if let Ok(real) = path.canonicalize()
                && &real != path
            {
                nameable(&real)?;
                all.push(real);
            }
        }
        *list = all;
    }
    Ok(vec![
        "-p".into(),
        seatbelt_profile(&resolved),
        "--".into(),
        "bash".into(),
        "-c".into(),
        command.into(),
    ])
}

fn nameable(path: &Path) -> Result<(), SandboxError> {
    let fine = path.is_absolute()
        && path
            .to_str()
            .is_some_and(|s| !s.chars().any(char::is_control));
    if fine {
        Ok(())
    } else {
        Err(SandboxError::SeatbeltPath(path.to_path_buf()))
    }
}

/// Each path cleaned (no trailing `/`, no `.`), followed by its other form when it lies under
/// `/tmp`, `/var` or `/etc` (or their `/private` originals); duplicates dropped.
fn expand(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for path in paths {
        let clean: PathBuf = path.components().collect();
        let other = ["tmp", "var", "etc"].iter().find_map(|top| {
            let plain = Path::new("/").join(top);
            let private = Path::new("/private").join(top);
            let swap = |from: &Path, to: PathBuf| {
                clean.strip_prefix(from).ok().map(|rest| {
                    if rest.as_os_str().is_empty() {
                        to.clone()
                    } else {
                        to.join(rest)
                    }
                })
            };
            swap(&plain, private.clone()).or_else(|| swap(&private, plain.clone()))
        });
        for form in std::iter::once(clean).chain(other) {
            if !out.contains(&form) {
                out.push(form);
            }
        }
    }
    out
}

/// Directories whose removal or renaming must be refused although a write rule covers them:
/// each write root whose parent is not writable, and each directory inside a write root on the
/// way to a denied path.
fn fixed_dirs(writable: &[PathBuf], deny: &[PathBuf]) -> Vec<PathBuf> {
    let inside = |p: &Path| writable.iter().any(|w| p.starts_with(w));
    let mut out: Vec<PathBuf> = Vec::new();
    let mut add = |p: &Path| {
        if !out.iter().any(|o| o == p) {
            out.push(p.to_path_buf());
        }
    };
    for root in writable {
        if !root.parent().is_some_and(inside) {
            add(root);
        }
    }
    for denied in deny {
        for dir in denied.ancestors().skip(1).filter(|a| inside(a)) {
            add(dir);
        }
    }
    out
}

/// `path` as an SBPL string literal: in double quotes, with `\` and `"` escaped (nothing else
/// is special inside a string: spaces, parentheses and semicolons are literal).
fn quote(path: &Path) -> String {
    let text = path.to_string_lossy();
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        if c == '\\' || c == '"' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

#[cfg(test)]
#[path = "seatbelt_tests.rs"]
mod tests;
