//! The Landlock ruleset: read everywhere but the denied paths, write only where allowed.
//!
//! On ABI 9 and later the ruleset also handles `LANDLOCK_ACCESS_FS_RESOLVE_UNIX`
//! ([`AccessFs::ResolveUnix`], part of the write rights): connecting to a Unix socket file is
//! then allowed only beneath the write paths, wherever the socket was bound and whenever.

use super::{SandboxError, SandboxPolicy};
use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd,
    Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope,
};
use std::path::{Path, PathBuf};

/// The newest ABI this code knows; older kernels get the subset they support (best effort),
/// which `probe` reports.
const TARGET: ABI = ABI::V10;

/// Device files every command may write (and `ioctl`, for terminals).
const DEVICE_FILES: &[&str] = &["/dev/null", "/dev/zero", "/dev/full", "/dev/tty"];
const DEVICE_DIRS: &[&str] = &["/dev/pts"];

/// The highest Landlock ABI whose access rights the kernel enforces, 0 without Landlock.
pub(crate) fn kernel_abi() -> i32 {
    let known = [
        (9, ABI::V9),
        (8, ABI::V8),
        (7, ABI::V7),
        (6, ABI::V6),
        (5, ABI::V5),
        (4, ABI::V4),
        (3, ABI::V3),
        (2, ABI::V2),
        (1, ABI::V1),
    ];
    known
        .into_iter()
        .find(|(_, abi)| enforces(*abi))
        .map_or(0, |(n, _)| n)
}

/// Creating (not applying) a ruleset that demands every right of `abi` succeeds only when
/// the kernel supports them all.
fn enforces(abi: ABI) -> bool {
    let attempt = || -> Result<(), landlock::RulesetError> {
        let mut ruleset = Ruleset::default()
            .set_compatibility(CompatLevel::HardRequirement)
            .handle_access(AccessFs::from_all(abi))?;
        if !AccessNet::from_all(abi).is_empty() {
            ruleset = ruleset.handle_access(AccessNet::from_all(abi))?;
        }
        if !Scope::from_all(abi).is_empty() {
            ruleset = ruleset.scope(Scope::from_all(abi))?;
        }
        ruleset.create().map(drop)
    };
    attempt().is_ok()
}

/// A path to grant read access on, and whether it is a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ReadGrant {
    /// The whole tree below.
    Tree(PathBuf),
    /// A single file.
    File(PathBuf),
    /// Listing only: a directory on the way to a denied path.
    ListOnly(PathBuf),
}

/// The grants that make everything under `root` readable except the `deny` paths (already
/// resolved). Symlinks met on the way are not followed: what they point to is governed by its
/// own path.
pub(crate) fn read_grants(root: &Path, deny: &[PathBuf]) -> Vec<ReadGrant> {
    let mut grants = Vec::new();
    carve(root, deny, &mut grants);
    grants
}

fn carve(dir: &Path, deny: &[PathBuf], grants: &mut Vec<ReadGrant>) {
    if deny.iter().any(|d| d == dir) {
        return;
    }
    if !deny.iter().any(|d| d.starts_with(dir)) {
        grants.push(ReadGrant::Tree(dir.to_path_buf()));
        return;
    }
    grants.push(ReadGrant::ListOnly(dir.to_path_buf()));
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut children: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    children.sort();
    for child in children {
        let Ok(meta) = std::fs::symlink_metadata(&child) else {
            continue;
        };
        if meta.file_type().is_symlink() || deny.iter().any(|d| d == &child) {
            continue;
        }
        if meta.is_dir() {
            carve(&child, deny, grants);
        } else {
            grants.push(ReadGrant::File(child));
        }
    }
}

/// Resolves paths, dropping those that do not exist.
pub(crate) fn resolve(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = paths.iter().filter_map(|p| p.canonicalize().ok()).collect();
    out.sort();
    out.dedup();
    out
}

/// Restricts this process (and what it will exec) to `policy`. `cut_tcp`: handle Landlock's
/// TCP rights with no port allowed (used when there is no network namespace; needs ABI 4).
pub(crate) fn restrict(policy: &SandboxPolicy, cut_tcp: bool) -> Result<(), SandboxError> {
    let err = |e: landlock::RulesetError| SandboxError::Landlock(e.to_string());
    let fs_all = AccessFs::from_all(TARGET);
    let read = AccessFs::from_read(TARGET);
    let device = AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Truncate | AccessFs::IoctlDev;

    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(fs_all)
        .map_err(err)?;
    if cut_tcp {
        ruleset = ruleset
            .set_compatibility(CompatLevel::HardRequirement)
            .handle_access(AccessNet::from_all(TARGET) & AccessNet::from_all(ABI::V4))
            .map_err(err)?
            .set_compatibility(CompatLevel::BestEffort);
    }
    ruleset = ruleset.scope(Scope::from_all(TARGET)).map_err(err)?;
    let mut created = ruleset.create().map_err(err)?;

    let deny = resolve(&policy.read_deny);
    let mut rules: Vec<(PathBuf, BitFlags<AccessFs>)> = Vec::new();
    for grant in read_grants(Path::new("/"), &deny) {
        match grant {
            ReadGrant::Tree(p) => rules.push((p, read)),
            ReadGrant::File(p) => rules.push((p, read & AccessFs::from_file(TARGET))),
            ReadGrant::ListOnly(p) => rules.push((p, AccessFs::ReadDir.into())),
        }
    }
    let read_only = resolve(&policy.read_only_paths);
    // No FIFOs or device nodes in writable places: Bosun reads files there between commands
    // (`.gitignore`, `AGENTS.md`, checkpointed files), and a FIFO would hang it. Sockets stay
    // (servers inside the worktree are ordinary), and so does everything else.
    let writable = fs_all & !(AccessFs::MakeFifo | AccessFs::MakeChar | AccessFs::MakeBlock);
    for path in resolve(&policy.write_paths) {
        if read_only.iter().any(|r| r == &path || r.starts_with(&path)) {
            // A write path that contains (or is) a read-only path: granting it would make the
            // read-only path writable, so it is only readable.
            continue;
        }
        rules.push((path, writable));
    }
    for dev in DEVICE_FILES {
        rules.push((PathBuf::from(dev), device & AccessFs::from_file(TARGET)));
    }
    for dir in DEVICE_DIRS {
        rules.push((PathBuf::from(dir), device | AccessFs::ReadDir));
    }
    for (path, access) in rules {
        // A path that vanished since it was listed simply gets no rule (it stays inaccessible).
        let Ok(fd) = PathFd::new(&path) else {
            continue;
        };
        created = created
            .add_rule(PathBeneath::new(fd, access))
            .map_err(err)?;
    }
    let status = created.restrict_self().map_err(err)?;
    if status.ruleset == RulesetStatus::NotEnforced || !status.no_new_privs {
        return Err(SandboxError::NotEnforced);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn grants_go_around_a_denied_directory_and_a_denied_file() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path().canonicalize().unwrap();
        for dir in ["home/.ssh", "home/code", "etc"] {
            std::fs::create_dir_all(r.join(dir)).unwrap();
        }
        std::fs::write(r.join("home/.ssh/id_rsa"), "secret").unwrap();
        std::fs::write(r.join("home/.netrc"), "secret").unwrap();
        std::fs::write(r.join("home/.bashrc"), "fine").unwrap();
        std::os::unix::fs::symlink(r.join("home/.ssh"), r.join("home/link")).unwrap();
        let deny = vec![r.join("home/.ssh"), r.join("home/.netrc")];
        assert_eq!(
            read_grants(&r, &deny),
            vec![
                ReadGrant::ListOnly(r.clone()),
                ReadGrant::Tree(r.join("etc")),
                ReadGrant::ListOnly(r.join("home")),
                ReadGrant::File(r.join("home/.bashrc")),
                ReadGrant::Tree(r.join("home/code")),
            ],
            "the symlink to .ssh is not followed and neither denied path is granted"
        );
    }

    #[test]
    fn nothing_denied_is_one_grant_for_the_root() {
        let root = tempfile::tempdir().unwrap();
        assert_eq!(
            read_grants(root.path(), &[]),
            vec![ReadGrant::Tree(root.path().to_path_buf())]
        );
    }
}
