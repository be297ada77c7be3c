//! Test support for Bosun.
//!
//! - [`MockModelServer`]: a scripted model server speaking OpenAI Chat Completions, OpenAI
//!   Responses and Anthropic Messages (streaming, tool-call arguments split across chunks,
//!   reasoning items, usage with cache and reasoning tokens) that
//!   records every request. Also as the `bosun-mock-model` binary.
//! - [`fixture_repo`]: a small real git repository.
//! - [`Trap`]: a program that leaves a mark when run.

pub mod checks_fixtures;
mod fixture;
mod render;
mod script;
mod server;
mod trap;

pub use fixture::fixture_repo;
pub use script::{MockReply, MockToolCall, MockUsage};
pub use server::{MockModelServer, MockOptions, RecordedRequest};
pub use trap::Trap;
