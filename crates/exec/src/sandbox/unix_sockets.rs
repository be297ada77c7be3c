//! Unix socket files a command must not reach (a `docker.sock`, the session bus, the X
//! server, Bosun's own proxy socket): those the kernel lists as bound in this network
//! namespace, outside the command's write paths.
//!
//! Read before the trampoline leaves the host's network namespace (`/proc/net/unix` lists
//! the sockets of the reader's namespace); the mount step then binds `/dev/null` over each,
//! so `connect` finds a character device and is refused. A socket bound after the command
//! started is not in the list: on Landlock ABI 9 and later, `LANDLOCK_ACCESS_FS_RESOLVE_UNIX`
//! (granted only beneath the write paths) refuses those too.

use std::path::{Path, PathBuf};

/// The socket paths in a `/proc/net/unix` listing (`Num RefCount Protocol Flags Type St
/// Inode Path`): absolute paths only, deduplicated, in order. Abstract sockets (`@name`) and
/// unnamed ones are skipped: a new network namespace has none of the host's abstract
/// sockets, and Landlock's scoping (ABI 6) refuses them otherwise.
pub(crate) fn parse(listing: &str) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = Vec::new();
    for line in listing.lines().skip(1) {
        // Seven fixed fields, then the path (which may contain spaces) after one space.
        let mut rest = line.trim_start();
        for _ in 0..7 {
            rest = match rest.split_once(' ') {
                Some((_, r)) => r.trim_start_matches(' '),
                None => "",
            };
        }
        if rest.starts_with('/') {
            let path = PathBuf::from(rest);
            if !found.contains(&path) {
                found.push(path);
            }
        }
    }
    found
}

/// The bound socket files of this network namespace that lie outside every one of
/// `writable` (resolved paths), resolved and still present.
pub(crate) fn outside(writable: &[PathBuf]) -> Vec<PathBuf> {
    let listing = std::fs::read_to_string("/proc/net/unix").unwrap_or_default();
    let mut paths: Vec<PathBuf> = parse(&listing)
        .into_iter()
        .filter_map(|p| p.canonicalize().ok())
        .filter(|p| is_socket(p) && !writable.iter().any(|w| p.starts_with(w)))
        .collect();
    paths.sort();
    paths.dedup();
    paths
}

fn is_socket(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_socket())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn named_sockets_are_listed_once_and_abstract_ones_skipped() {
        let listing = "\
Num       RefCount Protocol Flags    Type St Inode Path
0000000000000000: 00000002 00000000 00010000 0001 01 21371 /run/docker.sock
0000000000000000: 00000003 00000000 00000000 0001 03 21999 /run/docker.sock
0000000000000000: 00000002 00000000 00010000 0001 01 18000 @/tmp/.X11-unix/X0
0000000000000000: 00000003 00000000 00000000 0001 03 18001
0000000000000000: 00000002 00000000 00010000 0001 01 18002 /tmp/with space.sock
0000000000000000: 00000002 00000000 00010000 0001 01 18003 relative.sock
";
        assert_eq!(
            parse(listing),
            vec![
                PathBuf::from("/run/docker.sock"),
                PathBuf::from("/tmp/with space.sock")
            ]
        );
    }

    #[test]
    fn a_listening_socket_outside_is_found_and_one_inside_a_write_path_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(base.join("wt")).unwrap();
        let _out = std::os::unix::net::UnixListener::bind(base.join("out.sock")).unwrap();
        let _in = std::os::unix::net::UnixListener::bind(base.join("wt/in.sock")).unwrap();
        let found = outside(&[base.join("wt")]);
        assert!(found.contains(&base.join("out.sock")), "{found:?}");
        assert!(!found.contains(&base.join("wt/in.sock")), "{found:?}");
    }
}
