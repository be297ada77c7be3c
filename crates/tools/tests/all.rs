//! bosun-tools against real files, real directories and real processes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
