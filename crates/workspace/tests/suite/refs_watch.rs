//! The watcher of the user's branches: a commit to a branch wakes it, in a directory of branches
//! that appeared after it started too, and through packed refs; what moves no branch (the index,
//! new objects) does not; dropping it stops it.

use super::fixture::*;
use bosun_workspace::RefsWatcher;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

const QUIET: Duration = Duration::from_millis(50);
/// How long a change may take to be seen on a loaded machine.
const SEEN_WITHIN: Duration = Duration::from_secs(10);
/// How long nothing must come when nothing moved.
const NOTHING_FOR: Duration = Duration::from_millis(800);

fn watching(repo: &std::path::Path) -> (RefsWatcher, mpsc::Receiver<()>) {
    let (tx, rx) = mpsc::channel();
    let watcher = RefsWatcher::start(repo, QUIET, move || {
        let _ = tx.send(());
    })
    .unwrap();
    (watcher, rx)
}

/// Waits for a wake-up, then for the burst to be over (a later one would be another change).
fn woken(rx: &mpsc::Receiver<()>, what: &str) {
    rx.recv_timeout(SEEN_WITHIN)
        .unwrap_or_else(|e| panic!("{what} was not seen: {e:?}"));
    while rx.recv_timeout(NOTHING_FOR).is_ok() {}
}

fn quiet(rx: &mpsc::Receiver<()>, what: &str) {
    assert_eq!(
        rx.recv_timeout(NOTHING_FOR),
        Err(RecvTimeoutError::Timeout),
        "{what} woke the watcher"
    );
}

#[test]
fn a_commit_to_main_wakes_it_and_the_index_or_new_objects_do_not() {
    let f = fixture();
    let (_watcher, rx) = watching(&f.repo);
    git(&f.repo, &["add", "notes.txt"]);
    git(&f.repo, &["hash-object", "-w", "notes.txt"]);
    git(&f.repo, &["status", "--porcelain"]);
    quiet(&rx, "git add, hash-object and status");
    git(&f.repo, &["commit", "-q", "-m", "user"]);
    woken(&rx, "a commit to main");
    git(&f.repo, &["reset", "-q", "--hard", &f.base]);
    woken(&rx, "a reset of main");
}

#[test]
fn branches_in_a_new_directory_and_packed_refs_are_watched() {
    let f = fixture();
    let (_watcher, rx) = watching(&f.repo);
    git(&f.repo, &["branch", "feature/x"]);
    woken(&rx, "a branch in a new directory");
    let first = git(&f.repo, &["rev-parse", "HEAD~1"]);
    git(
        &f.repo,
        &["update-ref", "refs/heads/feature/x", first.trim()],
    );
    woken(&rx, "moving that branch");
    git(&f.repo, &["pack-refs", "--all"]);
    woken(&rx, "packing the refs");
    git(&f.repo, &["branch", "-f", "feature/x", &f.base]);
    woken(&rx, "moving a packed branch");
}

#[test]
fn a_dropped_watcher_stops_with_its_thread() {
    let f = fixture();
    let (watcher, rx) = watching(&f.repo);
    drop(watcher);
    git(&f.repo, &["commit", "-q", "-m", "user"]);
    // The thread ended and took the callback (and its sender) with it.
    assert_eq!(
        rx.recv_timeout(SEEN_WITHIN),
        Err(RecvTimeoutError::Disconnected)
    );
}
