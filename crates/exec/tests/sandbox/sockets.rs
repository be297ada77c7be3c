//! Unix sockets: one outside the worktree (a `docker.sock`) cannot be reached; one inside
//! still can.

use super::fixture::*;
use std::io::Write;
use std::os::unix::net::UnixListener;
use std::path::Path;

/// A listener on `path` that answers `pong` to every connection, in a thread of its own.
pub fn serve_pong(path: &Path) {
    let listener = UnixListener::bind(path).unwrap();
    std::thread::spawn(move || {
        for mut conn in listener.incoming().flatten() {
            let _ = conn.write_all(b"pong\n");
        }
    });
}

/// A Python script in the worktree that connects to the socket given as its argument and
/// prints `reached <reply>` or `refused <error>`.
pub fn write_probe(fx: &Fixture) {
    std::fs::write(
        fx.worktree.join("probe.py"),
        "import socket, sys\n\
         try:\n    s = socket.socket(socket.AF_UNIX)\n    s.connect(sys.argv[1])\n    print('reached', s.recv(5))\n\
         except OSError as e:\n    print('refused', e)\n",
    )
    .unwrap();
}

#[tokio::test]
async fn a_unix_socket_outside_the_worktree_cannot_be_reached() {
    let Some(fx) = Fixture::new() else { return };
    if !tool_exists("python3") {
        eprintln!("SKIPPED: python3 is not installed");
        return;
    }
    let docker = fx.outside.join("docker.sock");
    serve_pong(&docker);
    write_probe(&fx);
    let (_, text) = fx
        .run(&format!("python3 probe.py '{}'", docker.display()))
        .await;
    assert!(text.starts_with("refused"), "{text}");
    // However the path is spelled.
    let (_, text) = fx
        .run("python3 probe.py ../outside/docker.sock; python3 probe.py escape/docker.sock")
        .await;
    assert!(!text.contains("reached"), "{text}");
}

#[tokio::test]
async fn a_unix_socket_inside_the_worktree_still_works() {
    let Some(fx) = Fixture::new() else { return };
    if !tool_exists("python3") {
        eprintln!("SKIPPED: python3 is not installed");
        return;
    }
    serve_pong(&fx.worktree.join("dev.sock"));
    write_probe(&fx);
    let (outcome, text) = fx.run("python3 probe.py dev.sock").await;
    assert!(outcome.success(), "{text}");
    assert_eq!(text, "reached b'pong\\n'\n");
}
