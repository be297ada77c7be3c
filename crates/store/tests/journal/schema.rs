use crate::support::{journal, new_task};
use bosun_store::{SCHEMA_VERSION, Store, StoreError};
use rusqlite::Connection;

fn user_version(path: &std::path::Path) -> u32 {
    Connection::open(path)
        .unwrap()
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap()
}

#[test]
fn a_new_journal_is_created_with_its_directories_in_wal_mode_at_the_latest_schema() {
    let (_dir, path, store) = journal();
    assert!(path.exists());
    assert_eq!(store.path(), path);
    assert_eq!(user_version(&path), SCHEMA_VERSION);
    let mode: String = Connection::open(&path)
        .unwrap()
        .pragma_query_value(None, "journal_mode", |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    assert!(store.tasks().unwrap().is_empty());
}

#[test]
fn reopening_keeps_the_data_and_applies_nothing_twice() {
    let (_dir, path, store) = journal();
    store
        .create_task(&new_task("01kept", "2026-11-30T03:00:00.000Z"))
        .unwrap();
    drop(store);
    for _ in 0..3 {
        let store = Store::open(&path).unwrap();
        assert_eq!(store.tasks().unwrap().len(), 1);
    }
    assert_eq!(user_version(&path), SCHEMA_VERSION);
}

#[test]
fn a_journal_from_a_newer_bosun_is_refused_and_left_alone() {
    let (_dir, path, store) = journal();
    drop(store);
    Connection::open(&path)
        .unwrap()
        .pragma_update(None, "user_version", SCHEMA_VERSION + 6)
        .unwrap();
    let err = Store::open(&path)
        .err()
        .expect("a newer schema must be refused");
    assert!(
        matches!(err, StoreError::NewerSchema { found, supported, .. } if found == SCHEMA_VERSION + 6 && supported == SCHEMA_VERSION),
        "{err:?}"
    );
    let msg = err.to_string();
    assert!(msg.contains("newer Bosun"), "{msg}");
    assert!(msg.contains("upgrade Bosun"), "{msg}");
    assert!(msg.contains(&path.display().to_string()), "{msg}");
    assert_eq!(user_version(&path), SCHEMA_VERSION + 6);
}

#[test]
fn a_file_that_is_not_a_journal_gets_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bosun.db");
    std::fs::write(
        &path,
        "this is not a database, it is a note to self\n".repeat(100),
    )
    .unwrap();
    let err = Store::open(&path).err().expect("garbage must be refused");
    let msg = err.to_string();
    assert!(msg.contains(&path.display().to_string()), "{msg}");
    assert!(msg.contains("not a database"), "{msg}");
}
