//! `kill -9` of a process in the middle of appending: the journal still opens, and every task's
//! events are contiguous and agree with its row. The test binary re-executes itself as the
//! appender (the `appender` test below, which does nothing unless the variable is set).

use crate::support::{append_messages, assert_contiguous, new_task};
use bosun_protocol::TaskId;
use bosun_store::Store;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const DB_VAR: &str = "BOSUN_STORE_TEST_APPENDER_DB";
const TASK: &str = "01crash";

#[test]
fn appender() {
    let Some(path) = std::env::var_os(DB_VAR) else {
        return;
    };
    let store = Store::open(std::path::Path::new(&path)).unwrap();
    loop {
        append_messages(&store, TASK, 1);
    }
}

#[test]
fn kill_9_while_appending_leaves_a_consistent_journal() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bosun.db");
    let store = Store::open(&path).unwrap();
    store
        .create_task(&new_task(TASK, "2026-11-30T03:00:00.000Z"))
        .unwrap();
    let id = TaskId::from(TASK);
    let exe = std::env::current_exe().unwrap();

    let mut last = 0;
    for round in 1..=4 {
        let mut child = Command::new(&exe)
            .args([
                "crash::appender",
                "--exact",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(DB_VAR, &path)
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        // Wait for the child to get going (the deadline only stops a broken child hanging CI).
        let deadline = Instant::now() + Duration::from_secs(120);
        while store.last_seq(&id).unwrap() < last + 50 {
            assert!(
                Instant::now() < deadline,
                "round {round}: the appender made no progress"
            );
            assert!(
                child.try_wait().unwrap().is_none(),
                "round {round}: the appender exited"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        child.kill().unwrap(); // SIGKILL, mid-append
        child.wait().unwrap();

        let reopened = Store::open(&path).unwrap();
        let ok: String = rusqlite::Connection::open(&path)
            .unwrap()
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(ok, "ok", "round {round}");
        let now = assert_contiguous(&reopened, TASK);
        assert!(now >= last + 50, "round {round}: {now} events");
        eprintln!(
            "round {round}: {} events appended before kill -9",
            now - last
        );
        last = now;
    }
}
