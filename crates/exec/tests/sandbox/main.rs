//! The command sandbox against real processes: escape attempts that must fail, one test per
//! escape and named by it, and ordinary work (files, git, toolchains, pipes) that must keep
//! working inside it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod checkout;
mod confinement;
mod fallbacks;
mod fixture;
mod processes;
mod proxy;
mod setuid;
mod sockets;
