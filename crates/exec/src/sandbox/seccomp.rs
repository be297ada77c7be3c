//! The seccomp filters the command runs under (compiled with `seccompiler`, installed last,
//! just before `exec`). They refuse what Landlock and the namespaces cannot:
//!
//! - **Set-id bits** (`EPERM`): `chmod`, `fchmod`, `fchmodat`, `fchmodat2` with `S_ISUID` or
//!   `S_ISGID` in the mode, and creating a file, directory or node with them (`open`/`openat`
//!   with `O_CREAT` or `O_TMPFILE`, `creat`, `mkdir(at)`, `mknod(at)`). A file the command
//!   makes in the worktree therefore never becomes setuid on the host (the worktree is also
//!   mounted `nosuid` inside the sandbox, so a set-id file found there does not work either).
//!   Extended attributes cannot be set (`EOPNOTSUPP`, which tools treat as "no xattrs here"):
//!   `security.capability` is setuid by another name.
//! - **Calls whose arguments a filter cannot see** (`ENOSYS`, so libc and runtimes fall back
//!   to the plain calls): `openat2` (its mode is behind a pointer), `io_uring_setup`/`enter`/
//!   `register` (a ring would run `openat` and `socket` past the filter); on x86_64 also every
//!   x32 system call. A 32-bit (i386) program is killed by seccompiler's architecture check.
//! - **Host administration** (`EPERM`): loading kernel modules, `kexec`, `reboot`, swap,
//!   `iopl`/`ioperm`, setting the clock, `acct`, `quotactl`. Only a command that runs as real
//!   root without a user namespace could make them, and then nothing else would stop it.
//! - **Network sockets, without a network namespace** (`EACCES`): `socket()` of every family
//!   but `AF_NETLINK` — `AF_INET`, `AF_INET6`, `AF_PACKET`, `AF_VSOCK` and `AF_UNIX` included.
//!   Refusing `AF_UNIX` outright is stricter than "no connects outside the worktree" (a
//!   command cannot even serve a socket in its worktree), because seccomp cannot read the
//!   path `connect` is given; `socketpair` stays allowed. On Landlock ABI 9 and later
//!   `AF_UNIX` is allowed again, since `LANDLOCK_ACCESS_FS_RESOLVE_UNIX` then limits which
//!   socket files can be reached.

use super::SandboxError;
use nix::libc;
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};
use std::collections::BTreeMap;

/// `fchmodat2` (Linux 6.6), the same number on every architecture; not yet in every libc.
const SYS_FCHMODAT2: i64 = 452;
/// `setxattrat` (Linux 6.13), likewise.
const SYS_SETXATTRAT: i64 = 463;
/// `__O_TMPFILE` alone (`O_TMPFILE` also includes `O_DIRECTORY`).
const O_TMPFILE_BIT: u64 = (libc::O_TMPFILE & !libc::O_DIRECTORY) as u64;

/// What the filters refuse beyond the set-id bits and the blind calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Options {
    /// Refuse network sockets (there is no network namespace and no network grant).
    pub cut_network: bool,
    /// With `cut_network`: still allow `AF_UNIX` (Landlock resolves Unix sockets, ABI 9+).
    pub allow_unix: bool,
}

/// Compiles and installs the filters on this thread (and what it execs). Sets
/// `no_new_privs`, which Landlock has already set.
pub(crate) fn apply(options: Options) -> Result<(), SandboxError> {
    for program in programs(options)? {
        seccompiler::apply_filter(&program).map_err(|e| SandboxError::Seccomp(e.to_string()))?;
    }
    Ok(())
}

fn arch() -> Result<TargetArch, SandboxError> {
    TargetArch::try_from(std::env::consts::ARCH).map_err(|e| SandboxError::Seccomp(e.to_string()))
}

/// One BPF program per errno (a seccompiler filter has a single "match" action).
fn programs(options: Options) -> Result<Vec<BpfProgram>, SandboxError> {
    let err = |e: seccompiler::BackendError| SandboxError::Seccomp(e.to_string());
    let compile = |rules: BTreeMap<i64, Vec<SeccompRule>>, errno: i32| {
        let filter = SeccompFilter::new(
            rules,
            SeccompAction::Allow,
            SeccompAction::Errno(errno as u32),
            arch()?,
        )
        .map_err(err)?;
        BpfProgram::try_from(filter).map_err(err)
    };
    let mut out = vec![
        compile(set_id_rules().map_err(err)?, libc::EPERM)?,
        compile(admin_rules(), libc::EPERM)?,
        compile(xattr_rules(), libc::EOPNOTSUPP)?,
    ];
    let mut blind = compile(blind_rules(), libc::ENOSYS)?;
    if std::env::consts::ARCH == "x86_64" {
        blind.splice(0..0, x32_guard());
    }
    out.push(blind);
    if options.cut_network {
        out.push(compile(
            socket_rules(options.allow_unix).map_err(err)?,
            libc::EACCES,
        )?);
    }
    Ok(out)
}

/// `(arg & mask) == value` on the low 32 bits of argument `index`.
fn masked(index: u8, mask: u64, value: u64) -> Result<SeccompCondition, seccompiler::BackendError> {
    SeccompCondition::new(
        index,
        SeccompCmpArgLen::Dword,
        SeccompCmpOp::MaskedEq(mask),
        value,
    )
}

/// Rules that match when argument `mode` has a set-id bit (and, for opens, the `flags`
/// argument creates a file).
fn mode_rules(
    mode: u8,
    creating: Option<u8>,
) -> Result<Vec<SeccompRule>, seccompiler::BackendError> {
    let mut rules = Vec::new();
    for bit in [libc::S_ISUID as u64, libc::S_ISGID as u64] {
        match creating {
            None => rules.push(SeccompRule::new(vec![masked(mode, bit, bit)?])?),
            Some(flags) => {
                for create in [libc::O_CREAT as u64, O_TMPFILE_BIT] {
                    rules.push(SeccompRule::new(vec![
                        masked(flags, create, create)?,
                        masked(mode, bit, bit)?,
                    ])?);
                }
            }
        }
    }
    Ok(rules)
}

fn set_id_rules() -> Result<BTreeMap<i64, Vec<SeccompRule>>, seccompiler::BackendError> {
    let mut rules = BTreeMap::new();
    rules.insert(libc::SYS_fchmod, mode_rules(1, None)?);
    rules.insert(libc::SYS_fchmodat, mode_rules(2, None)?);
    rules.insert(SYS_FCHMODAT2, mode_rules(2, None)?);
    rules.insert(libc::SYS_openat, mode_rules(3, Some(2))?);
    rules.insert(libc::SYS_mkdirat, mode_rules(2, None)?);
    rules.insert(libc::SYS_mknodat, mode_rules(2, None)?);
    #[cfg(target_arch = "x86_64")]
    {
        rules.insert(libc::SYS_chmod, mode_rules(1, None)?);
        rules.insert(libc::SYS_open, mode_rules(2, Some(1))?);
        rules.insert(libc::SYS_creat, mode_rules(1, None)?);
        rules.insert(libc::SYS_mkdir, mode_rules(1, None)?);
        rules.insert(libc::SYS_mknod, mode_rules(1, None)?);
    }
    Ok(rules)
}

fn always(numbers: &[i64]) -> BTreeMap<i64, Vec<SeccompRule>> {
    numbers.iter().map(|n| (*n, Vec::new())).collect()
}

fn blind_rules() -> BTreeMap<i64, Vec<SeccompRule>> {
    always(&[
        libc::SYS_openat2,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
    ])
}

fn xattr_rules() -> BTreeMap<i64, Vec<SeccompRule>> {
    always(&[
        libc::SYS_setxattr,
        libc::SYS_lsetxattr,
        libc::SYS_fsetxattr,
        SYS_SETXATTRAT,
    ])
}

fn admin_rules() -> BTreeMap<i64, Vec<SeccompRule>> {
    let mut numbers = vec![
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_kexec_load,
        libc::SYS_kexec_file_load,
        libc::SYS_reboot,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_settimeofday,
        libc::SYS_clock_settime,
        libc::SYS_clock_adjtime,
        libc::SYS_adjtimex,
        libc::SYS_acct,
        libc::SYS_quotactl,
    ];
    #[cfg(target_arch = "x86_64")]
    numbers.extend([libc::SYS_iopl, libc::SYS_ioperm]);
    always(&numbers)
}

/// `socket()` of any family but `AF_NETLINK` (and `AF_UNIX` when `allow_unix`).
fn socket_rules(
    allow_unix: bool,
) -> Result<BTreeMap<i64, Vec<SeccompRule>>, seccompiler::BackendError> {
    let ne = |family: i32| {
        SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, family as u64)
    };
    let mut conditions = vec![ne(libc::AF_NETLINK)?];
    if allow_unix {
        conditions.push(ne(libc::AF_UNIX)?);
    }
    let mut rules = BTreeMap::new();
    rules.insert(libc::SYS_socket, vec![SeccompRule::new(conditions)?]);
    Ok(rules)
}

/// x86_64's x32 ABI reaches the same kernel calls with `nr | 0x4000_0000`, which the rules
/// above (keyed by plain numbers) would not see: refuse them all before they are looked up.
fn x32_guard() -> Vec<seccompiler::sock_filter> {
    use seccompiler::sock_filter;
    const BPF_LD_W_ABS: u16 = 0x20;
    const BPF_JMP_JGE_K: u16 = 0x35;
    const BPF_RET_K: u16 = 0x06;
    const X32_SYSCALL_BIT: u32 = 0x4000_0000;
    vec![
        // A = seccomp_data.nr
        sock_filter {
            code: BPF_LD_W_ABS,
            jt: 0,
            jf: 0,
            k: 0,
        },
        // if A >= X32_SYSCALL_BIT: return ERRNO(ENOSYS), else go on.
        sock_filter {
            code: BPF_JMP_JGE_K,
            jt: 0,
            jf: 1,
            k: X32_SYSCALL_BIT,
        },
        sock_filter {
            code: BPF_RET_K,
            jt: 0,
            jf: 0,
            k: libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32,
        },
    ]
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn every_filter_compiles_for_this_architecture() {
        for (cut_network, allow_unix) in [(false, false), (true, false), (true, true)] {
            let programs = programs(Options {
                cut_network,
                allow_unix,
            })
            .unwrap();
            assert_eq!(programs.len(), if cut_network { 5 } else { 4 });
            assert!(programs.iter().all(|p| !p.is_empty() && p.len() < 4096));
        }
    }
}
