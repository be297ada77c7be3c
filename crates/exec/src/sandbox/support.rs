//! What the running kernel offers the sandbox, probed once per process.

use std::sync::OnceLock;

/// Whether commands can be sandboxed here, and how strongly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SandboxSupport {
    /// Landlock works. `landlock_abi` is the highest Landlock ABI whose rights the kernel
    /// enforces (1–9). `netns` is true when user, mount and network namespaces can be created:
    /// network is then cut entirely and denied paths inside writable ones can be hidden; when
    /// false, network is cut by Landlock's TCP rules only (UDP stays open).
    Full { landlock_abi: i32, netns: bool },
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

    /// One line for the user: what is enforced, or what is missing.
    pub fn describe(&self) -> String {
        match self {
            SandboxSupport::Full {
                landlock_abi,
                netns: true,
            } => format!(
                "sandbox: Landlock ABI {landlock_abi}, user/mount/network namespaces (no network unless granted)"
            ),
            SandboxSupport::Full {
                landlock_abi,
                netns: false,
            } => format!(
                "sandbox: Landlock ABI {landlock_abi}; no namespaces, so network is cut for TCP only"
            ),
            SandboxSupport::Seatbelt => {
                "sandbox: macOS Seatbelt via sandbox-exec (no network, loopback included, unless granted)".into()
            }
            SandboxSupport::Unavailable { reason } => format!("no sandbox: {reason}"),
        }
    }
}

/// Set to `0` to use Landlock alone, without namespaces (for systems where user namespaces
/// misbehave, and for tests of that mode).
pub const NAMESPACES_ENV: &str = "BOSUN_SANDBOX_NAMESPACES";

/// Probes the kernel once (later calls return the cached answer).
pub fn probe() -> SandboxSupport {
    static SUPPORT: OnceLock<SandboxSupport> = OnceLock::new();
    SUPPORT.get_or_init(probe_now).clone()
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn probe_now() -> SandboxSupport {
    SandboxSupport::Unavailable {
        reason: "command sandboxing is only implemented on Linux (Landlock) and macOS (Seatbelt)"
            .into(),
    }
}

/// Seatbelt works when the system's `sandbox-exec` runs a trivial command under the base
/// profile: that also proves this macOS version accepts the profile's rules, and fails when
/// Bosun itself already runs inside a sandbox that forbids nesting.
#[cfg(target_os = "macos")]
fn probe_now() -> SandboxSupport {
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
fn probe_now() -> SandboxSupport {
    let landlock_abi = crate::sandbox::landlock_rules::kernel_abi();
    if landlock_abi < 1 {
        return SandboxSupport::Unavailable {
            reason: "the kernel has no Landlock (Linux 5.13+ with `landlock` in the `lsm=` boot list is needed)".into(),
        };
    }
    let netns = namespaces_usable() && !std::env::var(NAMESPACES_ENV).is_ok_and(|v| v == "0");
    if !netns && landlock_abi < 4 {
        return SandboxSupport::Unavailable {
            reason: format!(
                "network cannot be cut: user namespaces are disabled and Landlock ABI {landlock_abi} has no network rules (Linux 6.7+ needed)"
            ),
        };
    }
    SandboxSupport::Full {
        landlock_abi,
        netns,
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
