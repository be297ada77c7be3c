#![allow(clippy::unwrap_used, clippy::expect_used)]
//! bosun-workspace against real git repositories built with the git CLI.

mod suite;
