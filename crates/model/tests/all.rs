//! bosun-model against the scripted mock model server, over real HTTP on 127.0.0.1.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
