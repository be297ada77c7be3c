//! The journal against real SQLite files in temporary directories, real processes and real
//! `kill -9`s.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod budgets;
mod concurrency;
mod costs;
mod crash;
mod events;
mod metrics;
mod migration5;
mod reconcile;
mod schema;
mod search;
mod support;
mod tasks;
