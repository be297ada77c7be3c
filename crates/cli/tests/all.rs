//! The integration suite: the real `bosun` binary, a real fixture git repository, a real SQLite
//! journal, and the scripted mock model server speaking the real wire formats.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
