//! What the running kernel offers the sandbox, probed once per process.

use std::sync::OnceLock;

/// Whether commands can be sandboxed here, and how strongly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SandboxSupport {
    /// Landlock works. `landlock_abi` is the highest Landlock ABI whose rights the kernel
    /// enforces (1–9).
    /// - `netns`: user, mount and network namespaces can be created. Network is then cut
    ///   entirely (only the proxy forwarder is reachable, when the policy names a proxy), Unix
    ///   sockets outside the write paths are covered, and denied paths inside writable ones
    ///   can be hidden. Without it, network is cut by Landlock's TCP rules and by `seccomp`.
    /// - `pidns`: each command also gets its own PID namespace, so everything it starts dies
    ///   with it. Without it, the trampoline is a child subreaper and kills every descendant
    ///   it can find when the command ends (a process that outlives a `kill -9` of both Bosun
    ///   and the trampoline is swept at the next task start: [`crate::sweep_leftovers`]).
    /// - `seccomp`: a seccomp filter refuses set-id mode bits, `openat2` and io_uring, and,
    ///   without a network namespace, network sockets.
    Full {
        landlock_abi: i32,
        netns: bool,
        pidns: bool,
        seccomp: bool,
    },
    /// macOS: `/usr/bin/sandbox-exec` applies a Seatbelt profile rendered from the policy
    /// (see [`crate::sandbox::seatbelt_profile`]). Network off also cuts loopback.
    Seatbelt,
    /// Commands cannot be sandboxed; `reason` says what the kernel lacks. The caller must fall
    /// back to asking for every command, never run them unsandboxed silently.
    Unavailable { reason: String },
}

impl SandboxSupport {
    pub fn is_available(&self) -> bool {
        matches!(self, SandboxSupport::Full { .. } | SandboxSupport::Seatbelt)
    }

    /// Whether a command without a network grant is really cut off: by a network namespace,
    /// or by seccomp refusing network sockets. When false (Landlock's TCP rules alone leave
    /// UDP open), every command must ask.
    pub fn network_contained(&self) -> bool {
        match self {
            SandboxSupport::Full { netns, seccomp, .. } => *netns || *seccomp,
            SandboxSupport::Seatbelt => true,
            SandboxSupport::Unavailable { .. } => false,
        }
    }

    /// One line for the user: what is enforced, or what is missing.
    pub fn describe(&self) -> String {
        match self {
            SandboxSupport::Full {
                landlock_abi,
                netns,
                pidns,
                seccomp,
            } => {
                let mut parts = vec![format!("Landlock ABI {landlock_abi}")];
                parts.push(if *netns {
                    "user/mount/network namespaces (no network unless granted)".to_string()
                } else if *seccomp {
                    "no namespaces: network cut by seccomp and Landlock".to_string()
                } else {
                    "no namespaces and no seccomp: network NOT contained (TCP cut, UDP open)"
                        .to_string()
                });
                parts.push(if *pidns {
                    "a PID namespace per command".to_string()
                } else {
                    "no PID namespace: leftover processes are hunted down".to_string()
                });
                parts.push(if *seccomp {
                    "seccomp".to_string()
                } else {
                    "no seccomp (set-id bits not refused)".to_string()
                });
                format!("sandbox: {}", parts.join(", "))
            }
            SandboxSupport::Seatbelt => {
                "sandbox: macOS Seatbelt via sandbox-exec (no network, loopback included, unless granted)".into()
            }
            SandboxSupport::Unavailable { reason } => format!("no sandbox: {reason}"),
        }
    }
}

/// Debug builds only: a comma-separated subset of `netns,pidns,seccomp` that the sandbox acts
/// as if the kernel lacked, so tests cover each fallback. `netns` turns off every namespace
/// (user, mount, network and so PID: what a kernel without user namespaces gives). Release
/// builds ignore it.
pub const DISABLE_ENV: &str = "BOSUN_SANDBOX_DISABLE";

/// The parts of the sandbox forced off by [`DISABLE_ENV`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Disabled {
    pub netns: bool,
    pub pidns: bool,
    pub seccomp: bool,
}

impl Disabled {
    pub(crate) fn parse(value: &str) -> Disabled {
        let mut d = Disabled::default();
        for part in value.split(',').map(str::trim) {
            match part {
                "netns" => d.netns = true,
                "pidns" => d.pidns = true,
                "seccomp" => d.seccomp = true,
                _ => {}
            }
        }
        d
    }

    #[cfg(debug_assertions)]
    fn from_env() -> Disabled {
        std::env::var(DISABLE_ENV)
            .map(|v| Disabled::parse(&v))
            .unwrap_or_default()
    }

    #[cfg(not(debug_assertions))]
    fn from_env() -> Disabled {
        Disabled::default()
    }
}

/// Probes the kernel once (later calls return the cached answer).
pub fn probe() -> SandboxSupport {
    static SUPPORT: OnceLock<SandboxSupport> = OnceLock::new();
    SUPPORT
        .get_or_init(|| probe_now(Disabled::from_env()))
        .clone()
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn probe_now(_disabled: Disabled) -> SandboxSupport {
    SandboxSupport::Unavailable {
        reason: "command sandboxing is only implemented on Linux (Landlock) and macOS (Seatbelt)"
            .into(),
    }
}

/// Seatbelt works when the system's `sandbox-exec` runs a trivial command under the base
/// profile: that also proves this macOS version accepts the profile's rules, and fails when
/// Bosun itself already runs inside a sandbox that forbids nesting.
#[cfg(target_os = "macos")]
fn probe_now(_disabled: Disabled) -> SandboxSupport {
    use crate::sandbox::{SANDBOX_EXEC, SandboxPolicy, seatbelt_profile};
    if !std::path::Path::new(SANDBOX_EXEC).is_file() {
        return SandboxSupport::Unavailable {
            reason: format!("{SANDBOX_EXEC} is missing, so Seatbelt cannot confine commands"),
        };
    }
    // Every kind of rule the profiles use: write roots, unix sockets, denials, network.
    let temp = std::env::temp_dir();
    let mut policy = SandboxPolicy {
        write_paths: vec![temp.join("bosun-probe")],
        read_deny: vec![temp.join("bosun-probe/denied")],
        ..SandboxPolicy::default()
    };
    for network in [false, true] {
        policy.network = network;
        let tried = std::process::Command::new(SANDBOX_EXEC)
            .arg("-p")
            .arg(seatbelt_profile(&policy))
            .args(["--", "/usr/bin/true"])
            .stdin(std::process::Stdio::null())
            .output();
        let reason = match tried {
            Ok(out) if out.status.success() => continue,
            Ok(out) => format!(
                "{SANDBOX_EXEC} refused Bosun's profile ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ),
            Err(e) => format!("{SANDBOX_EXEC} could not be started: {e}"),
        };
        return SandboxSupport::Unavailable { reason };
    }
    SandboxSupport::Seatbelt
}

#[cfg(target_os = "linux")]
fn probe_now(disabled: Disabled) -> SandboxSupport {
    let landlock_abi = crate::sandbox::landlock_rules::kernel_abi();
    if landlock_abi < 1 {
        return SandboxSupport::Unavailable {
            reason: "the kernel has no Landlock (Linux 5.13+ with `landlock` in the `lsm=` boot list is needed)".into(),
        };
    }
    let netns = !disabled.netns && namespaces_usable();
    let seccomp = !disabled.seccomp && seccomp_usable();
    if !netns && !seccomp && landlock_abi < 4 {
        return SandboxSupport::Unavailable {
            reason: format!(
                "network cannot be cut: user namespaces are disabled, seccomp filters are missing and Landlock ABI {landlock_abi} has no network rules (Linux 6.7+ needed)"
            ),
        };
    }
    SandboxSupport::Full {
        landlock_abi,
        netns,
        // A PID namespace is made inside the user namespace, so it needs one.
        pidns: netns && !disabled.pidns,
        seccomp,
    }
}

/// Whether this user may create user namespaces, judged from the kernel's knobs (the
/// trampoline reports a clear error if creating them still fails).
#[cfg(target_os = "linux")]
fn namespaces_usable() -> bool {
    let knob = |path: &str| {
        std::fs::read_to_string(path)
            .ok()
            .and_then(|s| s.trim().parse::<i64>().ok())
    };
    if !std::path::Path::new("/proc/self/ns/user").exists() {
        return false;
    }
    if knob("/proc/sys/user/max_user_namespaces") == Some(0) {
        return false;
    }
    if nix::unistd::geteuid().is_root() {
        return true;
    }
    knob("/proc/sys/kernel/unprivileged_userns_clone") != Some(0)
        && knob("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") != Some(1)
}

/// Whether seccomp filters that return an errno can be installed.
#[cfg(target_os = "linux")]
fn seccomp_usable() -> bool {
    std::fs::read_to_string("/proc/sys/kernel/seccomp/actions_avail")
        .is_ok_and(|actions| actions.split_whitespace().any(|a| a == "errno"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_disable_list_names_each_fallback_and_ignores_the_rest() {
        assert_eq!(Disabled::parse(""), Disabled::default());
        assert_eq!(
            Disabled::parse("netns, seccomp,bogus"),
            Disabled {
                netns: true,
                pidns: false,
                seccomp: true
            }
        );
        assert!(Disabled::parse("pidns").pidns);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn without_namespaces_and_seccomp_the_network_is_not_contained() {
        let support = probe_now(Disabled::parse("netns,seccomp"));
        if let SandboxSupport::Full {
            netns,
            pidns,
            seccomp,
            ..
        } = support
        {
            assert!(!netns && !pidns && !seccomp);
            assert!(!support.network_contained());
            assert!(support.describe().contains("NOT contained"));
        }
        let support = probe_now(Disabled::parse("netns"));
        if let SandboxSupport::Full { pidns, .. } = support {
            assert!(!pidns, "no PID namespace without a user namespace");
        }
    }
}
